"""Exact coverage of the Wilson and Wilson-Kish intervals: known results and brute-force enumeration."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import betainc

from escalation.estimators.stats import (
    SUMS_METHODS,
    clustered_interval,
    exact_coverage,
    wilson_interval,
    wilson_kish_interval,
)

from .._reference import values

EXACT = values("exact_coverage")  # tests/reference/exact_coverage.csv


def _bernoulli(p):
    return np.array([1.0 - p, p])


def _wilson_coverage(p, n):
    return exact_coverage(_bernoulli(p), n, rho=0.0).coverage


@pytest.mark.slow
def test_wilson_n10_mean_coverage_over_uniform_p():
    # Brown, Cai & DasGupta (2001): for n = 10 the mean coverage of the 95% Wilson interval over
    # p ~ U(0, 1) is about 0.954. Reference value by an independent route: integrating the binomial
    # pmf over p gives, per outcome y, (I_U(y + 1, n - y + 1) - I_L(y + 1, n - y + 1)) / (n + 1).
    n = 10
    y = np.arange(n + 1)
    low, high = wilson_interval(y / n, n)
    integral = float((betainc(y + 1, n - y + 1, high) - betainc(y + 1, n - y + 1, low)).sum() / (n + 1))
    assert integral == pytest.approx(EXACT["wilson_n10_mean_coverage_uniform_p"], abs=5e-4)
    grid = (np.arange(4000) + 0.5) / 4000  # midpoint rule; 22 jumps of <= 0.2 give an error < 1e-3
    mean = np.mean([_wilson_coverage(p, n) for p in grid])
    assert mean == pytest.approx(integral, abs=1e-3)


def test_wilson_n10_dip_near_p_0175():
    # Brown, Cai & DasGupta (2001): coverage about 0.838 near p = 0.0175 for n = 10. Below the lower
    # bound of y = 1, L_1 = 0.017876, only y = 0 covers, so the coverage is (1 - p)^10 (closed form):
    # 0.83816 at p = 0.0175, and the infimum (1 - L_1)^10 = 0.8350 is approached as p rises to L_1.
    low_1 = wilson_interval(0.1, 10)[0]
    assert low_1 == pytest.approx(EXACT["wilson_n10_lower_bound_y1"], abs=1e-6)
    assert _wilson_coverage(0.0175, 10) == pytest.approx((1 - 0.0175) ** 10, rel=1e-12)
    assert _wilson_coverage(0.0175, 10) == pytest.approx(EXACT["wilson_n10_coverage_p00175"], abs=5e-4)
    grid = np.linspace(0.010, 0.030, 2001)
    coverage = np.array([_wilson_coverage(p, 10) for p in grid])
    assert grid[coverage.argmin()] == pytest.approx(low_1, abs=1e-5)
    assert coverage.min() == pytest.approx((1 - low_1) ** 10, abs=2e-4)


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_wilson_poisson_limit_at_p_0176_over_n(n):
    # Brown, Cai & DasGupta (2001): at p = 0.176 / n the coverage tends to exp(-0.176) = 0.8386 (Poisson
    # limit). n L_1(n) -> 0.1765 > 0.176, so only y = 0 covers and the coverage is (1 - 0.176 / n)^n.
    coverage = _wilson_coverage(0.176 / n, n)
    assert coverage == pytest.approx((1 - 0.176 / n) ** n, rel=1e-9)
    assert coverage == pytest.approx(math.exp(-0.176), abs=2e-5)


@pytest.mark.parametrize("n, p", [(7, 0.3), (25, 0.04), (60, 0.5)])
def test_binomial_case_equals_direct_sum(n, p):
    # Independent route: sum the scipy binomial pmf over the outcomes whose Wilson interval covers p.
    y = np.arange(n + 1)
    low, high = wilson_interval(y / n, n)
    pmf = stats.binom.pmf(y, n, p)
    got = exact_coverage(_bernoulli(p), n, rho=0.0)
    assert got.coverage == pytest.approx(pmf[(low <= p) & (p <= high)].sum(), rel=1e-10)
    assert got.miss_low == pytest.approx(pmf[high < p].sum(), abs=1e-12)
    assert got.miss_high == pytest.approx(pmf[low > p].sum(), abs=1e-12)
    assert got.mean_width == pytest.approx((pmf * (high - low)).sum(), rel=1e-10)


def _beta_binomial(m, p, rho):
    return stats.betabinom.pmf(np.arange(m + 1), m, p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho)


@pytest.mark.parametrize("K, m, p, rho, fixed", [(12, 4, 0.1, 0.3, 0.3), (7, 8, 0.5, 0.05, 0.2),
                                                 (20, 3, 0.02, 0.5, 0.0)])
def test_known_rho_equals_convolution_by_hand(K, m, p, rho, fixed):
    # Reference: the distribution of the total by K repeated numpy convolutions of the beta-binomial pmf.
    pmf = _beta_binomial(m, p, rho)
    total = np.array([1.0])
    for _ in range(K):
        total = np.convolve(total, pmf)
    low, high = wilson_kish_interval(np.arange(K * m + 1), K * m, m, fixed).interval
    got = exact_coverage(pmf, K, rho=fixed)
    assert got.coverage == pytest.approx(total[(low <= p) & (p <= high)].sum(), rel=1e-10)
    assert got.coverage + got.miss_low + got.miss_high == pytest.approx(1.0, abs=1e-12)


def _enumerate_multisets(pmf, K, method="wilson-kish"):
    """Reference: every multiset of K cluster totals, with the interval computed from the totals themselves."""
    m = len(pmf) - 1
    truth = np.arange(m + 1) @ pmf / m
    coverage = miss_low = miss_high = width = 0.0
    for combo in itertools.combinations_with_replacement(range(m + 1), K):
        counts = np.bincount(combo, minlength=m + 1)
        prob = math.factorial(K) / np.prod([math.factorial(c) for c in counts]) * np.prod(pmf**counts)
        low, high = clustered_interval(np.array(combo), m, method)
        coverage += prob * (low <= truth <= high)
        miss_low += prob * (high < truth)
        miss_high += prob * (low > truth)
        width += prob * (high - low)
    return coverage, miss_low, miss_high, width


@pytest.mark.parametrize("method", SUMS_METHODS)
@pytest.mark.parametrize("K, m, p, rho", [(4, 3, 0.2, 0.3), (6, 2, 0.05, 0.5), (5, 4, 0.5, 0.1), (3, 8, 0.1, 0.2),
                                          (8, 1, 0.3, 0.2)])
def test_estimated_rho_equals_enumeration_of_multisets(K, m, p, rho, method):
    # The (Y, S) enumeration must reproduce the enumeration of all C(K + m, m) multisets of cluster totals,
    # each interval computed by clustered_interval from the totals (not from the sums).
    pmf = _beta_binomial(m, p, rho)
    got = exact_coverage(pmf, K, method=method)
    expected = _enumerate_multisets(pmf, K, method)
    np.testing.assert_allclose([got.coverage, got.miss_low, got.miss_high, got.mean_width], expected,
                               rtol=1e-9, atol=1e-12)


def test_estimated_rho_beyond_the_limit_is_nan():
    pmf = _beta_binomial(8, 0.1, 0.2)
    assert math.isfinite(exact_coverage(pmf, 30).coverage)  # 241 x 841 values: within the limit
    beyond = exact_coverage(pmf, 30, max_states=241 * 841 - 1)
    assert math.isnan(beyond.coverage) and math.isnan(beyond.mean_width)
    assert beyond.truth == pytest.approx(0.1)


def test_single_replica_estimated_rho_is_plain_wilson():
    # With m = 1 the ANOVA rho is undefined and rho_used = 1, but m_bar = 1 (SPEC section 5): deff = 1, Wilson.
    pmf = _bernoulli(0.07)
    assert exact_coverage(pmf, 40).coverage == pytest.approx(
        exact_coverage(pmf, 40, rho=0.0).coverage, abs=1e-12)


@pytest.mark.parametrize("pmf, clusters, match", [
    ([0.5, 0.6], 3, "probability vector"),
    ([1.0], 3, "probability vector"),
    ([0.5, 0.5], 0, "`clusters` must be a whole number >= 1; got 0"),
])
def test_input_errors(pmf, clusters, match):
    with pytest.raises(ValueError, match=match):
        exact_coverage(pmf, clusters)


def test_unequal_sizes_with_a_fixed_rho_equals_product_of_distributions():
    # Reference: the total's distribution by repeated numpy convolutions of clusters of sizes 1, 3 and 8;
    # the interval at m_bar = (1 + 9 + 64) / 12 (SPEC section 5) with the fixed rho.
    pmfs = [_bernoulli(0.2), _beta_binomial(3, 0.2, 0.3), _beta_binomial(8, 0.2, 0.3)]
    total = np.array([1.0])
    for pmf in pmfs:
        total = np.convolve(total, pmf)
    low, high = wilson_kish_interval(np.arange(13), 12, 74 / 12, 0.3).interval
    got = exact_coverage(pmfs, 3, rho=0.3)
    assert got.truth == pytest.approx(0.2)
    assert got.coverage == pytest.approx(total[(low <= 0.2) & (0.2 <= high)].sum(), rel=1e-10)
    assert got.mean_width == pytest.approx((total * (high - low)).sum(), rel=1e-10)
