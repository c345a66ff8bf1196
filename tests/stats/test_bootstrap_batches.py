"""The faster cluster bootstrap (issue 18.3): data sets of a batch that differ in their clusters and smallest
size are sorted by groups; each keeps the exact resampling distribution of its own clusters."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import escalation.estimators.stats._bootstrap as bootstrap_module


def _enumerated(totals, sizes):
    """Every one of the k^k equally likely resamples of the k present clusters: {ratio: probability}."""
    present = [(y, n) for y, n in zip(totals, sizes) if n > 0]
    k = len(present)
    values = {}
    for draw in itertools.product(present, repeat=k):
        value = sum(y for y, _ in draw) / sum(n for _, n in draw)
        values[value] = values.get(value, 0.0) + 1.0 / k**k
    return values


def test_each_data_set_of_a_mixed_batch_has_its_own_distribution():
    totals = np.array([[1, 0, 2, 4, 1], [0, 2, 1, 0, 3], [1, 0, 0, 1, 0], [2, 0, 1, 3, 1]])
    sizes = np.array([[2, 1, 3, 5, 4], [3, 3, 2, 0, 4], [1, 1, 1, 1, 1], [2, 1, 3, 5, 4]])
    present = sizes > 0
    clusters = present.sum(axis=-1)  # 5, 4, 5, 5 clusters; smallest sizes 1, 2, 1, 1: three groups
    smallest = np.where(present, sizes, sizes.max()).min(axis=-1)
    support, pmf = bootstrap_module._ratio_distribution(totals, sizes, present, clusters, smallest)
    assert np.all(np.diff(support, axis=-1) >= 0)
    np.testing.assert_allclose(pmf.sum(axis=-1), 1.0, rtol=1e-12)
    for row in range(len(totals)):
        got = {}
        for value, prob in zip(support[row], pmf[row]):
            if prob > 0:
                got[value] = got.get(value, 0.0) + prob
        expected = _enumerated(totals[row], sizes[row])
        assert set(got) == set(expected)
        for value, prob in expected.items():
            assert got[value] == pytest.approx(prob, rel=1e-9)


def test_a_power_by_squaring_equals_numpys():
    rng = np.random.default_rng(7)
    transform = rng.standard_normal((3, 40)) + 1j * rng.standard_normal((3, 40))
    for exponent in (1, 2, 5, 10, 64):
        expected = transform.copy()
        for _ in range(exponent - 1):
            expected = expected * transform
        got = bootstrap_module._power(transform.copy(), np.full(3, exponent))
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.array_equal(bootstrap_module._power(transform.copy(), np.zeros(3, int)), np.ones_like(transform))
