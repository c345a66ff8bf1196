"""The faster exact coverage (issue 18.3): the sheared (Y, V) lattice and powers of 100 and more.

References independent of the Fourier transform: every multiset of cluster totals with its
multinomial probability, each interval computed by ``clustered_interval`` from the totals.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from escalation.estimators.stats import SUMS_METHODS, clustered_interval, exact_coverages
from escalation.estimators.stats._exact import _integer_power


def _by_multisets(pmf, K):
    """Coverage, misses and width of each method of the cluster sums over every multiset of K cluster totals."""
    m = pmf.size - 1
    totals = np.array(list(itertools.combinations_with_replacement(range(m + 1), K)))
    counts = np.stack([(totals == t).sum(axis=1) for t in range(m + 1)], axis=1)
    with np.errstate(divide="ignore"):
        log_prob = gammaln(K + 1) - gammaln(counts + 1).sum(axis=1) + (counts * np.log(pmf)).sum(axis=1)
    prob = np.exp(log_prob)
    truth = float(np.arange(m + 1) @ pmf) / m
    out = {}
    for method in SUMS_METHODS:
        low, high = clustered_interval(totals, m, method)
        out[method] = [prob[(low <= truth) & (truth <= high)].sum(), prob[high < truth].sum(),
                       prob[low > truth].sum(), (prob * (high - low)).sum()]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("K, m, p, rho", [(101, 2, 0.05, 0.3),  # power 101: halved to 50, squared, times z
                                          (40, 3, 0.2, 0.2),  # shear c = 1
                                          (12, 8, 0.1, 0.5)])  # shear c = 3
def test_sheared_enumeration_equals_every_multiset(K, m, p, rho):
    pmf = stats.betabinom.pmf(np.arange(m + 1), m, p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho)
    got = exact_coverages(pmf, K, SUMS_METHODS)
    for method, expected in _by_multisets(pmf, K).items():
        e = got[method]
        np.testing.assert_allclose([e.coverage, e.miss_low, e.miss_high, e.mean_width], expected, rtol=0,
                                   atol=1e-12)


@pytest.mark.parametrize("power", [1, 2, 3, 50, 99, 100, 101, 200, 257])
def test_integer_power_multiplies(power):
    rng = np.random.default_rng(power)
    z = np.exp(1j * rng.uniform(0, 2 * np.pi, 1000)) * rng.uniform(0.5, 1.0, 1000)
    expected = z**power
    got = _integer_power(z.copy(), power)
    if power < 100:  # numpy's ** itself, bit for bit
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
