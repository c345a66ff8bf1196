"""Cluster bootstrap: exact resampling distribution, agreement with scipy, BCa degeneracy, inputs."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

import escalation.estimators.stats._bootstrap as bootstrap_module
from escalation.estimators.stats import (
    ConfidenceInterval,
    DegenerateIntervalWarning,
    cluster_bootstrap,
    cluster_bootstrap_pi,
    paired_cluster_bootstrap,
)


def _ratio(a, b, axis=-1):
    return a.sum(axis=axis) / b.sum(axis=axis)


def _enumerated_distribution(totals, sizes):
    """Reference: every one of the K^K equally likely index resamples, written out."""
    totals, sizes = np.asarray(totals), np.asarray(sizes)
    K = totals.size
    values = {}
    for draw in itertools.product(range(K), repeat=K):
        index = list(draw)
        value = totals[index].sum() / sizes[index].sum()
        values[value] = values.get(value, 0) + 1
    return values, K**K


@pytest.mark.parametrize("totals, sizes", [
    ([0, 1, 3, 2, 0], [3, 3, 3, 3, 3]),   # equal sizes: 1-d convolution
    ([1, 0, 2, 4, 1], [2, 1, 3, 5, 4]),   # unequal sizes: 2-d convolution of (y, n)
])
def test_resampling_distribution_equals_enumeration(totals, sizes):
    # The sampler draws from the exact distribution of Y*/N*; compare it with the enumeration of all
    # 5^5 index resamples (the textbook definition of the cluster bootstrap).
    y, n = np.array([totals]), np.array([sizes])
    support, pmf = bootstrap_module._ratio_distribution(y, n, n > 0, np.array([5]), n.min(axis=-1))
    expected, total = _enumerated_distribution(totals, sizes)
    got = {}
    for value, prob in zip(support[0], pmf[0]):
        if prob > 0:
            got[value] = got.get(value, 0.0) + prob
    assert set(got) == set(expected)
    for value, count in expected.items():
        assert got[value] == pytest.approx(count / total, rel=1e-9)
    assert np.all(np.diff(support[0]) >= 0)


def _scipy_ends(totals, sizes, method, copies, seed):
    rng = np.random.default_rng(seed)
    ends = np.empty((copies, 2))
    for c in range(copies):
        res = stats.bootstrap((np.asarray(totals), np.asarray(sizes)), _ratio, paired=True, vectorized=True,
                              n_resamples=999, method=method, rng=rng)
        ends[c] = res.confidence_interval
    return ends


@pytest.mark.slow
@pytest.mark.parametrize("method, scipy_method", [("percentile", "percentile"), ("basic", "basic"), ("bca", "BCa")])
@pytest.mark.parametrize("totals, sizes", [
    ([0, 2, 1, 5, 0, 3, 1, 0, 2, 1, 4, 0], 5),
    ([1, 0, 2, 4, 1, 0, 3, 1], [2, 1, 3, 5, 4, 2, 4, 3]),
])
def test_agrees_with_scipy_within_monte_carlo_error(method, scipy_method, totals, sizes):
    # Both bootstraps estimate the same interval from 999 resamples; the mean of each end over
    # independent repetitions must agree within 4 standard errors of the difference (fixed seeds).
    copies = 300
    sizes_full = np.broadcast_to(sizes, np.shape(totals))
    res = cluster_bootstrap(np.tile(totals, (copies, 1)), np.tile(sizes_full, (copies, 1)),
                            rng=np.random.default_rng(11))
    ours = np.column_stack(res.confidence_interval(method))
    theirs = _scipy_ends(totals, sizes_full, scipy_method, copies, seed=12)
    se = np.sqrt(ours.var(axis=0, ddof=1) / copies + theirs.var(axis=0, ddof=1) / copies)
    assert np.all(np.abs(ours.mean(axis=0) - theirs.mean(axis=0)) <= 4 * se + 1e-12)


def test_standard_error_agrees_with_scipy():
    totals, sizes = np.array([0, 2, 1, 5, 0, 3, 1, 0, 2, 1, 4, 0]), np.full(12, 5)
    ours = cluster_bootstrap(totals, sizes, n_resamples=20000, rng=np.random.default_rng(1)).standard_error
    theirs = stats.bootstrap((totals, sizes), _ratio, paired=True, vectorized=True, n_resamples=20000,
                             method="percentile", rng=np.random.default_rng(2)).standard_error
    # the standard error of a standard deviation from B draws is about sd / sqrt(2 B); allow 4 of them
    assert ours == pytest.approx(theirs, rel=4 * np.sqrt(2 / 20000))


def test_direct_cluster_resampling_path_matches_the_exact_path(monkeypatch):
    # Data too large for the exact-distribution grid are resampled cluster by cluster; both samplers
    # draw from the same distribution, so interval ends agree within Monte Carlo error.
    totals, sizes = np.array([1, 0, 2, 4, 1, 0, 3, 1]), np.array([2, 1, 3, 5, 4, 2, 4, 3])
    copies = 400
    exact = cluster_bootstrap(np.tile(totals, (copies, 1)), np.tile(sizes, (copies, 1)), rng=np.random.default_rng(3))
    monkeypatch.setattr(bootstrap_module, "_MAX_GRID_CELLS", 0)
    direct = cluster_bootstrap(np.tile(totals, (copies, 1)), np.tile(sizes, (copies, 1)), rng=np.random.default_rng(4))
    assert direct.support.shape[-1] == 999
    for method in ("percentile", "bca"):
        a = np.column_stack(exact.confidence_interval(method))
        b = np.column_stack(direct.confidence_interval(method))
        se = np.sqrt(a.var(axis=0, ddof=1) / copies + b.var(axis=0, ddof=1) / copies)
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) <= 4 * se + 1e-12)


def test_counts_add_up_and_estimate_is_the_ratio():
    totals = np.array([[0, 1, 3, 0, 2], [2, 2, 0, 1, 1]])
    res = cluster_bootstrap(totals, 4, n_resamples=499, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(res.counts.sum(axis=-1), [499, 499])
    np.testing.assert_allclose(res.estimate, totals.sum(axis=-1) / 20)
    low, high = res.confidence_interval("percentile")
    assert np.all(low <= res.estimate) and np.all(res.estimate <= high)


def test_bca_undefined_when_all_clusters_equal_warns_and_is_nan():
    totals = np.array([[1, 1, 1, 1], [0, 2, 1, 3]])
    res = cluster_bootstrap(totals, 3, rng=np.random.default_rng(5))
    with pytest.warns(DegenerateIntervalWarning, match=r"BCa interval undefined for 1 of 2 data set\(s\)"):
        low, high = res.confidence_interval("bca")
    assert np.isnan(low[0]) and np.isnan(high[0])
    assert np.isfinite(low[1]) and np.isfinite(high[1])
    # the percentile interval of identical clusters is the estimate itself
    low, high = res.confidence_interval("percentile")
    assert low[0] == high[0] == pytest.approx(1 / 3)


def test_equal_rates_with_unequal_sizes_make_bca_undefined():
    res = cluster_bootstrap([1, 2, 3], [2, 4, 6], rng=np.random.default_rng(6))
    with pytest.warns(DegenerateIntervalWarning):
        low, high = res.confidence_interval("bca")
    assert np.isnan(low) and np.isnan(high)


def test_no_warning_when_bca_is_defined():
    res = cluster_bootstrap([0, 2, 1, 3, 1], 3, rng=np.random.default_rng(7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = res.confidence_interval("bca")
    assert low < high


def test_absent_clusters_are_not_resampled():
    # A size of 0 pads a data set with fewer clusters: the padded data set bootstraps like the short one.
    padded = cluster_bootstrap([[0, 2, 1, 3, 0, 0]], [[3, 3, 3, 3, 0, 0]], n_resamples=5000,
                               rng=np.random.default_rng(8))
    short = cluster_bootstrap([[0, 2, 1, 3]], [[3, 3, 3, 3]], n_resamples=5000, rng=np.random.default_rng(9))
    assert padded.estimate[0] == short.estimate[0] == 0.5
    values = lambda r: set(r.support[0][r.counts[0] > 0])  # noqa: E731
    assert values(padded) == values(short)


def test_data_set_without_clusters_is_nan():
    res = cluster_bootstrap([[0, 0], [1, 2]], [[0, 0], [3, 3]], rng=np.random.default_rng(10))
    assert np.isnan(res.estimate[0])
    low, high = res.confidence_interval("percentile")
    assert np.isnan(low[0]) and np.isnan(high[0]) and np.isfinite(low[1])


def test_same_generator_state_gives_identical_results():
    totals = np.random.default_rng(1).binomial(8, 0.2, size=(50, 30))
    a = cluster_bootstrap(totals, 8, rng=np.random.default_rng(42)).confidence_interval("bca")
    b = cluster_bootstrap(totals, 8, rng=np.random.default_rng(42)).confidence_interval("bca")
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)


def test_pi_bootstrap_forms_complete_pairs_by_case():
    # case 0: pairs (u, o) = (0, 0) correct, (1, 0) not -> 1 of 2; case 1: (0, 1) not, replica 1 has no
    # ESC outcome -> 0 of 1; case 2: nothing complete -> not a cluster. pi = 1 / 3 (SPEC section 5).
    u = np.array([[0, 1], [0, np.nan], [np.nan, np.nan]])
    o = np.array([[0, 0], [1, 0], [0, 1]])
    res = cluster_bootstrap_pi(u, o, n_resamples=2000, rng=np.random.default_rng(0))
    assert res.estimate == pytest.approx(1 / 3)
    assert set(res.support[res.counts > 0]) == {0.0, 1 / 3, 0.5}  # resamples of {case 0, case 1}


@pytest.mark.parametrize("kwargs, error, match", [
    ({"rng": None}, TypeError, "rng must be a numpy.random.Generator"),
    ({"n_resamples": 0}, ValueError, "`n_resamples` must be a whole number >= 1; got 0"),
    ({"totals": [1, 5], "sizes": 3}, ValueError, "totals must not exceed sizes"),
    ({"totals": [1, -1], "sizes": 3}, ValueError, "totals must be non-negative integers"),
    ({"totals": [1, 0.5], "sizes": 3}, ValueError, "totals must be non-negative integers"),
    ({"totals": [1, 2, 0], "sizes": [3, 3]}, ValueError, "do not broadcast"),
])
def test_input_errors_name_the_parameter(kwargs, error, match):
    args = {"totals": [1, 2], "sizes": 3, "rng": np.random.default_rng(0), "n_resamples": 99, **kwargs}
    with pytest.raises(error, match=match):
        cluster_bootstrap(args.pop("totals"), args.pop("sizes"), **args)


def test_unknown_interval_method_is_an_error():
    res = cluster_bootstrap([0, 1, 2], 3, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="`method` must be one of percentile, basic, bca; got"):
        res.confidence_interval("studentized")
    with pytest.raises(ValueError, match="`confidence` must lie strictly between 0 and 1; got"):
        res.confidence_interval("percentile", confidence=95)


# ------------------------------------------------------------------ the paired bootstrap

def test_paired_bootstrap_resamples_as_the_direct_path_does(monkeypatch):
    """Against an assistant A that never errs, each paired resample is B's resampled rate: the
    draws and the jackknife acceleration are those of the direct path of ``cluster_bootstrap``
    fed the same generator state, to the last bit (one resampling, one jackknife)."""
    totals, sizes = np.array([1, 0, 2, 4, 1, 0, 3, 1]), np.array([2, 1, 3, 5, 4, 2, 4, 3])
    monkeypatch.setattr(bootstrap_module, "_MAX_GRID_CELLS", 0)
    direct = cluster_bootstrap(totals, sizes, n_resamples=700, rng=np.random.default_rng(5))
    (paired,) = paired_cluster_bootstrap(np.zeros(8), sizes, totals, sizes, n_resamples=700,
                                         rng=np.random.default_rng(5))
    np.testing.assert_array_equal(paired.support, direct.support)
    assert paired.acceleration == direct.acceleration and paired.estimate == direct.estimate
    assert isinstance(paired.confidence_interval("bca"), ConfidenceInterval)


def test_paired_bootstrap_of_identical_assistants_is_zero():
    totals, sizes = np.array([[1, 0, 2], [0, 1, 1]]), np.array([[2, 1, 3], [1, 1, 2]])
    boots = paired_cluster_bootstrap(totals, sizes, totals, sizes, n_resamples=300, rng=np.random.default_rng(1))
    for boot in boots:
        assert boot.estimate == 0.0 and np.all(boot.support == 0.0) and boot.n_resamples == 300
        assert np.isnan(boot.acceleration)  # the jackknife does not vary


@pytest.mark.parametrize("change, error, match", [
    ({"rng": None}, TypeError, "rng must be a numpy.random.Generator"),
    ({"n_resamples": 0}, ValueError, "`n_resamples` must be a whole number >= 1; got 0"),
    ({"totals_b": [3, 1]}, ValueError, "totals must not exceed sizes"),
    ({"totals_a": [-1, 1]}, ValueError, "totals must be non-negative integers"),
    ({"totals_b": [1, 0, 1], "sizes_b": [2, 2, 2]}, ValueError, "clusters of A .* and B .* do not match"),
    ({"totals_a": np.zeros((2, 2, 2)), "sizes_a": 2}, ValueError, r"shape \(figures, clusters\)"),
])
def test_paired_bootstrap_checks_its_input(change, error, match):
    args = {"totals_a": [1, 0], "sizes_a": [2, 2], "totals_b": [0, 1], "sizes_b": [2, 2],
            "rng": np.random.default_rng(0), "n_resamples": 99, **change}
    with pytest.raises(error, match=match):
        paired_cluster_bootstrap(args.pop("totals_a"), args.pop("sizes_a"), args.pop("totals_b"),
                                 args.pop("sizes_b"), **args)
