"""Exact coverage of the intervals of the cluster sums with clusters of unequal sizes or laws (issue 36).

References independent of the sparse enumeration: every vector of cluster totals ``(y_1, ..., y_K)``
(``itertools.product``) with the product of the clusters' pmfs as its probability, each interval computed
by ``clustered_interval`` from the totals and sizes; and a simulation at a fixed seed. The pmfs are
beta-binomial with mean ``p`` and intra-cluster correlation ``rho``: ``alpha = p (1 - rho) / rho``,
``beta = (1 - p) (1 - rho) / rho`` (Skellam 1948; Griffiths 1973), the coverage study's law
(``studies._beta_binomial.cluster_pmf``, which a test of ``stats`` may not import), from scipy.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from escalation.estimators.stats import SUMS_METHODS, clustered_interval, exact_coverage, exact_coverages
from escalation.estimators.stats._exact import _sparse_coverages


def _beta_binomial(n: int, p: float, rho: float) -> np.ndarray:
    t = np.arange(n + 1)
    if rho == 0:
        return stats.binom.pmf(t, n, p)
    return stats.betabinom.pmf(t, n, p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho)


def _every_vector(pmfs, rho=None) -> dict[str, np.ndarray]:
    """Coverage, misses below and above and mean width of each method over every vector of cluster totals."""
    sizes = np.array([pmf.size - 1 for pmf in pmfs])
    totals = np.array(list(itertools.product(*(range(n + 1) for n in sizes))))
    prob = np.prod([pmf[totals[:, j]] for j, pmf in enumerate(pmfs)], axis=0)
    truth = sum(np.arange(pmf.size) @ pmf for pmf in pmfs) / sizes.sum()
    out = {}
    for method in SUMS_METHODS:
        low, high = clustered_interval(totals, sizes, method, rho=rho)
        out[method] = np.array([prob[(low <= truth) & (truth <= high)].sum(), prob[high < truth].sum(),
                                prob[low > truth].sum(), (prob * (high - low)).sum()])
    return out


def _fields(result) -> np.ndarray:
    return np.array([result.coverage, result.miss_low, result.miss_high, result.mean_width])


@pytest.mark.parametrize("pmfs, rho", [
    ([_beta_binomial(n, 0.2, 0.3) for n in (1, 2, 5)], None),  # sizes 1, 2, 5 (the SPEC 5 example)
    ([_beta_binomial(n, 0.1, 0.2) for n in (2, 3, 3, 6)], None),  # two clusters alike among four
    ([_beta_binomial(n, 0.5, 0.0) for n in (1, 2, 5)], None),  # binomial
    ([_beta_binomial(n, 0.05, 0.5) for n in (4, 1, 7, 2)], None),  # rare errors, strong clustering, unsorted
    ([_beta_binomial(3, p, 0.2) for p in (0.1, 0.2, 0.4)], None),  # equal sizes, unequal laws
    ([_beta_binomial(n, 0.2, 0.3) for n in (1, 2, 5)], 0.1),  # a fixed rho for every method
])
def test_every_method_equals_every_vector_of_totals(pmfs, rho):
    expected = _every_vector(pmfs, rho)
    got = exact_coverages(pmfs, len(pmfs), rho=rho)
    for method in SUMS_METHODS:
        np.testing.assert_allclose(_fields(got[method]), expected[method], rtol=0, atol=1e-12, err_msg=method)
    assert got["wilson-kish"].truth == pytest.approx(sum(np.arange(p.size) @ p for p in pmfs) / sum(
        p.size - 1 for p in pmfs), rel=1e-12)


@pytest.mark.parametrize("m, K, p, rho", [(4, 6, 0.2, 0.3), (8, 5, 0.05, 0.5), (1, 12, 0.3, 0.0)])
def test_equal_sizes_through_the_sparse_enumeration_equal_the_fourier_transform(m, K, p, rho):
    pmf = _beta_binomial(m, p, rho)
    fourier = exact_coverages(pmf, K)
    sparse = _sparse_coverages([pmf] * K, SUMS_METHODS, fourier["wilson-kish"].truth, rho=None, confidence=0.95,
                               max_states=10**7)
    for method in SUMS_METHODS:
        np.testing.assert_allclose(_fields(sparse[method]), _fields(fourier[method]), rtol=0, atol=1e-12,
                                   err_msg=method)


def test_monte_carlo_coverage_lies_within_4_mcse():
    # 20,000 data sets of the coverage study's K = 5, m = 8, cv 1 sizes, p = 0.1, rho = 0.2 (seed 36): the
    # simulated coverage of each method within 4 MCSE (from the exact value) of the exact coverage
    sizes, p, rho, nsim = np.array([1, 3, 6, 10, 18]), 0.1, 0.2, 20_000
    rng = np.random.default_rng(36)
    totals = rng.binomial(sizes, rng.beta(p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho, (nsim, sizes.size)))
    exact = exact_coverages([_beta_binomial(n, p, rho) for n in sizes], sizes.size)
    for method in SUMS_METHODS:
        low, high = clustered_interval(totals, sizes, method)
        covered = np.mean((low <= p) & (p <= high))
        c = exact[method].coverage
        assert abs(covered - c) <= 4 * math.sqrt(c * (1 - c) / nsim), method


def test_beyond_the_budget_is_nan():
    # sizes 9, 5, 2, 1, added in that order: 10 x 6 x 3 = 180 values of (Y, S, T) before the last cluster, so
    # 360 candidates; (Y, Q) has 165 values there (15 of the 180 vectors repeat one), so 330
    pmfs = [_beta_binomial(n, 0.2, 0.3) for n in (1, 2, 5, 9)]
    within = exact_coverages(pmfs, 4, max_unequal_states=360)
    beyond = exact_coverages(pmfs, 4, max_unequal_states=359)
    assert all(math.isfinite(r.coverage) for r in within.values())
    for method in SUMS_METHODS:  # each statistic has the budget on its own: only its methods are NaN
        variance = method in ("wilson-cluster-t", "korn-graubard")
        assert math.isnan(beyond[method].coverage) == variance and math.isnan(beyond[method].mean_width) == variance
        assert beyond[method].truth == pytest.approx(0.2)
    assert math.isnan(exact_coverage(pmfs, 4, method="wilson-kish", max_unequal_states=329).coverage)


def test_a_statistic_beyond_64_bits_is_nan():
    # sizes of least common multiple 64 * 81 * 25 * 49 * 11 * ... * 37 (58 bits) and N = 399: Q times it needs
    # more than 63 bits, so the Wilson-Kish methods are NaN; (Y, S, T) fits, and rare errors keep it small
    sizes = (64, 81, 25, 49, 11, 13, 17, 19, 23, 29, 31, 37)
    got = exact_coverages([_beta_binomial(n, 0.002, 0.0) for n in sizes], len(sizes))
    for method in SUMS_METHODS:
        assert math.isnan(got[method].coverage) == (method not in ("wilson-cluster-t", "korn-graubard")), method
