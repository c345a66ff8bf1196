"""The mode-B correction with replicas: the cluster-robust interval of ``per_cluster=True``."""
from __future__ import annotations

import math

import numpy as np
import pytest

from escalation.estimators.judges import predictive_value_correction, rogan_gladen
from escalation.estimators.judges._misclassification import CorrectedRate

# Three scenarios. Main sample (text only): t = (2, 0, 1) flagged of n = (4, 4, 2). Validation
# subsample: flagged a = (1, 1, 0) errors of f = (1, 1, 1); unflagged b = (0, 1, 0) errors of g = (2, 2, 1);
# errors E = (2, 2, 1) of which c = (2, 1, 0) flagged; non-errors F = (4, 4, 2) of which d = (3, 4, 2) cleared.
MAIN = ([2, 0, 1], [4, 4, 2])
PV_VALIDATION = ([1, 1, 0], [1, 1, 1], [0, 1, 0], [2, 2, 1])
RG_VALIDATION = ([2, 1, 0], [2, 2, 1], [3, 4, 2], [4, 4, 2])
T_2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)  # t quantile on 2 df in closed form: (2P - 1) / sqrt(2 P (1 - P))


def test_predictive_values_by_hand():
    # q = 3/10, PPV = 2/3, FOR = 1/5: p = 0.3 * 2/3 + 0.7 * 0.2 = 17/50.
    # e_j = (PPV - FOR)(t_j - q n_j)/10 + q (a_j - PPV f_j)/3 + (1 - q)(b_j - FOR g_j)/5
    #     = (11, 46, -57) / 750 (they add up to 0); Var = 3/2 * (121 + 2116 + 3249) / 750^2 = 2743/187500
    fit = predictive_value_correction(*MAIN, *PV_VALIDATION, per_cluster=True)
    assert fit.estimate == pytest.approx(17 / 50)
    assert fit.se == pytest.approx(math.sqrt(2743 / 187500))
    assert fit.variance == "cluster-robust" and int(fit.clusters) == 3 and int(fit.df) == 2
    low, high = fit.ci()
    assert (low, high) == pytest.approx((max(0.34 - T_2 * math.sqrt(2743 / 187500), 0.0),
                                         0.34 + T_2 * math.sqrt(2743 / 187500)))
    assert fit.observed == pytest.approx(0.3)


def test_rogan_gladen_by_hand():
    # Se = 3/5, Sp = 9/10, J = 1/2, p = (0.3 + 0.9 - 1) / 0.5 = 0.4.
    # e_j = [(t_j - q n_j)/10 - p (c_j - Se E_j)/5 + (1 - p)(d_j - Sp F_j)/10] / J = (-1, -4, 5) / 25
    # Var = 3/2 * 42 / 625 = 63/625
    fit = rogan_gladen(*MAIN, *RG_VALIDATION, per_cluster=True)
    assert fit.estimate == pytest.approx(0.4)
    assert fit.se == pytest.approx(math.sqrt(63 / 625))
    assert 0.4 - T_2 * math.sqrt(63 / 625) < 0 and 0.4 + T_2 * math.sqrt(63 / 625) > 1
    assert fit.ci(0.95) == pytest.approx((0.0, 1.0))  # clipped to [0, 1]
    assert fit.ci(0.5) == pytest.approx((0.4 - 0.8164965809277260 * math.sqrt(63 / 625),  # t_0.75 on 2 df
                                         0.4 + 0.8164965809277260 * math.sqrt(63 / 625)))


def _weighted(correction, counts, w):
    """The correction of cluster-weighted sums: its derivative in w_j at w = 1 is the cluster's influence."""
    return float(correction(*(np.sum(w * np.asarray(c, dtype=float)) for c in counts)).estimate)


@pytest.mark.parametrize("correction", [predictive_value_correction, rogan_gladen])
def test_variance_is_the_infinitesimal_jackknife(correction):
    # An independent route: differentiate the estimate numerically in each cluster's weight
    # (Jaeckel's infinitesimal jackknife); k/(k-1) times the sum of squared derivatives is the
    # linearised (sandwich) variance.
    rng = np.random.default_rng(5)
    k = 7
    sizes = rng.integers(3, 9, size=(3, k))
    # main sample; then PPV and FOR, or Se and Sp, of a judge better than chance
    shares = (0.3, 0.7, 0.1) if correction is predictive_value_correction else (0.3, 0.8, 0.9)
    counts = []
    for n, share in zip(sizes, shares):
        counts += [rng.binomial(n, share), n]
    fit = correction(*counts, per_cluster=True)
    h = 1e-6
    step = h * np.eye(k)
    slopes = [(_weighted(correction, counts, 1 + step[j]) - _weighted(correction, counts, 1 - step[j])) / (2 * h)
              for j in range(k)]
    assert float(fit.se) == pytest.approx(math.sqrt(k / (k - 1) * np.sum(np.square(slopes))), rel=1e-6)
    assert float(fit.estimate) == pytest.approx(_weighted(correction, counts, np.ones(k)))


@pytest.mark.parametrize("correction", [predictive_value_correction, rogan_gladen])
def test_one_conversation_per_cluster_is_the_delta_method_times_k_over_k_minus_1(correction):
    # each conversation its own cluster: the six per-cluster counts are 0/1 indicators
    main = np.array([1] * 20 + [0] * 80 + [0] * 50)
    main_n = np.array([1] * 100 + [0] * 50)
    first = np.array([0] * 100 + [1] * 18 + [0] * 7 + [0] * 25)
    first_n = np.array([0] * 100 + [1] * 25 + [0] * 25)
    cleared = 5 if correction is predictive_value_correction else 22  # FOR = 5/25, or Sp = 22/25
    second = np.array([0] * 125 + [1] * cleared + [0] * (25 - cleared))
    second_n = np.array([0] * 125 + [1] * 25)
    clustered = correction(main, main_n, first, first_n, second, second_n, per_cluster=True)
    plain = correction(20, 100, 18, 25, cleared, 25)
    assert math.isfinite(plain.estimate)
    assert clustered.estimate == pytest.approx(plain.estimate)
    assert clustered.se**2 == pytest.approx(plain.se**2 * 150 / 149)
    assert plain.variance == "independent" and plain.df is None and plain.clusters is None


def test_the_old_call_is_unchanged():
    fit = predictive_value_correction(20, 100, 18, 20, 8, 80)
    assert fit.se == pytest.approx(math.sqrt(0.001924)) and fit.df is None
    assert fit.ci().low == pytest.approx(0.26 - 1.959963984540054 * math.sqrt(0.001924))
    assert CorrectedRate("x", np.array(0.5), np.array(0.1), np.array(0.5), 0.95).ci() == pytest.approx(
        (0.5 - 1.959963984540054 * 0.1, 0.5 + 1.959963984540054 * 0.1))


def test_vectorised_over_data_sets_and_undefined_cases():
    rng = np.random.default_rng(2)
    n = rng.integers(1, 6, size=(4, 5))
    t = rng.binomial(n, 0.3)
    f = rng.integers(1, 4, size=(4, 5))
    a = rng.binomial(f, 0.7)
    g = rng.integers(1, 4, size=(4, 5))
    b = rng.binomial(g, 0.1)
    together = predictive_value_correction(t, n, a, f, b, g, per_cluster=True)
    for i in range(4):
        alone = predictive_value_correction(t[i], n[i], a[i], f[i], b[i], g[i], per_cluster=True)
        assert together.se[i] == pytest.approx(float(alone.se)) and together.estimate[i] == pytest.approx(
            float(alone.estimate))
    # one scenario: the estimate exists, the interval (t on 0 df) does not
    single = predictive_value_correction([3], [10], [2], [3], [1], [7], per_cluster=True)
    assert math.isfinite(float(single.estimate)) and np.isnan(single.ci().low)
    # no flagged conversation in the subsample while the main sample has some: undefined throughout
    empty = predictive_value_correction([1, 2], [5, 5], [0, 0], [0, 0], [1, 0], [3, 3], per_cluster=True)
    assert np.isnan(empty.estimate) and np.isnan(empty.se) and np.isnan(empty.ci().high)
    with pytest.raises(ValueError, match="last axis"):
        rogan_gladen(3, 10, 2, 3, 4, 7, per_cluster=True)
    with pytest.raises(ValueError, match="0 <= events"):
        rogan_gladen([3, 11], [10, 10], [2, 1], [3, 3], [4, 4], [7, 7], per_cluster=True)


def _replicated_data_sets(rng, size, k, m, p, rho, sensitivity=0.8, specificity=0.95, share=0.3):
    """Per-scenario counts of ``size`` data sets of k scenarios with m replicas (beta-binomial errors)."""
    q = rng.beta(p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho, size=(size, k))
    error = rng.random((size, k, m)) < q[..., None]
    flag = np.where(error, rng.random(error.shape) < sensitivity, rng.random(error.shape) > specificity)
    val = rng.random((size, k * m)).argsort(axis=1).argsort(axis=1).reshape(size, k, m) < round(share * k * m)
    main = ~val
    return [x.sum(axis=-1) for x in (flag & main, main, flag & error & val, flag & val, ~flag & error & val,
                                     ~flag & val)]


@pytest.mark.slow
def test_the_cluster_robust_variance_matches_the_spread_of_the_estimate():
    # With replicas the cluster-robust variance estimates the Monte Carlo variance of the estimate
    # (mean of se^2 within 10% of the variance over 2000 data sets), the Wald one falls well short.
    rng = np.random.default_rng(11)
    counts = _replicated_data_sets(rng, 2000, 200, 8, 0.2, 0.4)
    clustered = predictive_value_correction(*counts, per_cluster=True)
    wald = predictive_value_correction(*(c.sum(axis=-1) for c in counts))
    spread = np.var(clustered.estimate, ddof=1)
    assert np.mean(clustered.se**2) == pytest.approx(spread, rel=0.1)
    assert np.mean(wald.se**2) < 0.6 * spread
    coverage = clustered.covers(0.2).mean()
    assert abs(coverage - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / 2000)
