"""The Fleiss-Cuzick intra-cluster correlation estimator."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.stats._icc import fleiss_cuzick_icc


def test_fleiss_cuzick_equal_sizes_hand_value():
    # Hand computation from Fleiss & Cuzick (1979) / Zou & Donner (2004):
    # y = (0, 1, 2, 3), n = 3: Y = 6, N = 12, k = 4, p = 1/2,
    # sum y (n - y) / n = 0 + 2/3 + 2/3 + 0 = 4/3, (N - k) p (1 - p) = 8 / 4 = 2, rho = 1 - (4/3) / 2 = 1/3.
    assert fleiss_cuzick_icc([0, 1, 2, 3], 3) == pytest.approx(1 / 3, rel=1e-12)


def test_fleiss_cuzick_unequal_sizes_hand_value_and_truncation():
    # Hand computation: y = (1, 0, 3, 2), n = (2, 3, 4, 5): Y = 6, N = 14, k = 4, p = 3/7,
    # sum y (n - y) / n = 1/2 + 0 + 3/4 + 6/5 = 2.45, (N - k) p (1 - p) = 10 * 12/49,
    # rho = 1 - 2.45 * 49 / 120 = -0.05 / 120 (negative: less variation between clusters than binomial).
    raw = fleiss_cuzick_icc([1, 0, 3, 2], [2, 3, 4, 5], truncate=False)
    assert raw == pytest.approx(-0.05 / 120, rel=1e-9)
    assert fleiss_cuzick_icc([1, 0, 3, 2], [2, 3, 4, 5]) == 0.0


def _fleiss_kappa_two_categories(totals, size):
    """Fleiss (1971) kappa written out for two categories (subjects = clusters, raters = members)."""
    counts = np.stack([totals, size - totals], axis=-1).astype(float)
    agreement = ((counts**2).sum(axis=-1) - size) / (size * (size - 1))
    shares = counts.sum(axis=0) / counts.sum()
    chance = (shares**2).sum()
    return (agreement.mean() - chance) / (1 - chance)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.lists(st.integers(0, 6), min_size=2, max_size=12))
def test_fleiss_cuzick_equals_fleiss_kappa_with_equal_sizes(size, raw):
    # With equal cluster sizes the Fleiss-Cuzick estimator is Fleiss' (1971) kappa (Fleiss & Cuzick 1979).
    totals = np.minimum(np.array(raw), size)
    if totals.sum() in (0, size * totals.size):
        assert np.isnan(fleiss_cuzick_icc(totals, size))
        return
    expected = _fleiss_kappa_two_categories(totals, size)
    assert fleiss_cuzick_icc(totals, size, truncate=False) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("totals, sizes", [
    ([2], [5]),               # one cluster
    ([0, 1, 1], [1, 1, 1]),   # every cluster of size 1: N - k = 0
    ([0, 0, 0], [4, 4, 4]),   # no variation: p = 0
    ([4, 4, 2], [4, 4, 2]),   # p = 1
])
def test_fleiss_cuzick_undefined_is_nan(totals, sizes):
    assert np.isnan(fleiss_cuzick_icc(totals, sizes))
    assert np.isnan(fleiss_cuzick_icc(totals, sizes, truncate=False))


def test_fleiss_cuzick_vectorised_over_leading_axes_and_absent_clusters():
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 6, size=(4, 3, 7))
    totals = rng.binomial(sizes, 0.4)
    batch = fleiss_cuzick_icc(totals, sizes, truncate=False)
    for index in np.ndindex(4, 3):
        keep = sizes[index] > 0
        one = fleiss_cuzick_icc(totals[index][keep], sizes[index][keep], truncate=False)
        np.testing.assert_equal(batch[index], one)
