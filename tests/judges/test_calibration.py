"""Calibration maps, cross-fitting by case, ECE, reliability tables and AUROC."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit

from escalation.estimators.judges import (
    auroc,
    calibration_bias,
    case_folds,
    cross_fit,
    expected_calibration_error,
    fit_calibration,
    isotonic_fit,
    platt_fit,
    reliability_table,
)


def _platt_reference(p, y):
    """Platt (1999) by direct numerical minimisation of the same smoothed-target log loss."""
    x = logit(np.clip(p, 1e-6, 1 - 1e-6))
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(theta):
        z = theta[0] + theta[1] * x
        return np.sum(t * np.logaddexp(0, -z) + (1 - t) * np.logaddexp(0, z))
    return minimize(loss, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12,
                                                                      "maxiter": 20000}).x


def test_platt_matches_direct_minimisation_and_fits_in_batches():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, (3, 400))
    y = (rng.random((3, 400)) < expit(0.7 + 0.5 * logit(p))).astype(float)
    batch = platt_fit(p, y)
    for i in range(3):
        np.testing.assert_allclose(batch[i], _platt_reference(p[i], y[i]), atol=1e-6)
        np.testing.assert_allclose(platt_fit(p[i], y[i]), batch[i], rtol=1e-12)
    # weights 0/1 select a sample: the same as fitting that sample alone
    keep = rng.random(400) < 0.6
    np.testing.assert_allclose(platt_fit(p[0], y[0], keep.astype(float)), platt_fit(p[0][keep], y[0][keep]),
                               atol=1e-9)


def test_platt_recovers_a_known_miscalibration():
    # y ~ Bernoulli(expit(a + b logit p)) with a = -0.8, b = 0.6; tolerance: 4 standard errors from the
    # observed information of the fit (the smoothed targets shift the fit by O(1/n), far less)
    rng = np.random.default_rng(7)
    p = rng.uniform(0.01, 0.99, 20000)
    y = (rng.random(p.size) < expit(-0.8 + 0.6 * logit(p))).astype(float)
    a, b = platt_fit(p, y)
    x = logit(p)
    mu = expit(a + b * x)
    info = np.array([[np.sum(mu * (1 - mu)), np.sum(mu * (1 - mu) * x)],
                     [np.sum(mu * (1 - mu) * x), np.sum(mu * (1 - mu) * x * x)]])
    se = np.sqrt(np.diag(np.linalg.inv(info)))
    assert abs(a + 0.8) < 4 * se[0] and abs(b - 0.6) < 4 * se[1]


def test_platt_stays_finite_on_separable_and_constant_samples():
    coef = platt_fit(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0.0, 0.0, 1.0, 1.0]))
    assert np.isfinite(coef).all() and coef[1] > 0
    flat = platt_fit(np.full(4, 0.3), np.array([0.0, 1.0, 1.0, 1.0]))
    # all p equal: the map is the constant smoothed rate (3 + 1) / (3 + 2) * 3/4 + 1 / (1 + 2) * 1/4
    assert expit(flat[0] + flat[1] * logit(0.3)) == pytest.approx(0.75 * 0.8 + 0.25 / 3, abs=1e-8)


def test_isotonic_is_pool_adjacent_violators():
    # by hand: y = 1, 0, 0, 1 pools the first three blocks to 1/3 (Barlow et al. 1972)
    knots, values = isotonic_fit([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1])
    np.testing.assert_allclose(knots, [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(values, [1 / 3, 1 / 3, 1 / 3, 1.0])
    # ties are one block: p = 0.2 twice (y 1, 0) has weight 2 and rate 1/2, then p = 0.5 with y = 0 pools
    knots, values = isotonic_fit([0.2, 0.5, 0.2], [1, 0, 0])
    np.testing.assert_allclose(knots, [0.2, 0.5])
    np.testing.assert_allclose(values, [1 / 3, 1 / 3])
    iso = fit_calibration(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.0, 0.0, 1.0, 1.0]), "isotonic")
    # linear between knots, constant beyond them
    np.testing.assert_allclose(iso(np.array([0.0, 0.25, 0.35, 1.0])), [0.0, 0.5, 1.0, 1.0])


def test_expected_calibration_error_by_hand():
    # bins of width 0.1: [0.05] -> |0.05 - 0|, [0.15] -> |0.15 - 1|, [0.95, 0.95] -> |0.95 - 0.5| twice
    # ECE = (0.05 + 0.85 + 2 * 0.45) / 4 = 0.45 (Naeini et al. 2015)
    p, y = np.array([0.05, 0.15, 0.95, 0.95]), np.array([0.0, 1.0, 1.0, 0.0])
    assert expected_calibration_error(p, y) == pytest.approx(0.45)
    assert expected_calibration_error(np.array([1.0]), np.array([1.0])) == 0.0  # p = 1 falls in the last bin
    assert calibration_bias(p, y) == pytest.approx(0.525 - 0.5)
    table = reliability_table(p, y)
    assert table["count"].tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert np.isnan(table.loc[2, "label_rate"]) and table.loc[9, "label_rate"] == 0.5
    with pytest.raises(ValueError, match="y must hold 0/1 labels"):
        expected_calibration_error(p, np.array([0.0, 1.0, 2.0, 0.0]))


def test_cross_fitting_keeps_each_case_in_one_fold_and_fits_without_it():
    rng = np.random.default_rng(5)
    case = np.repeat(np.arange(30), 2)  # the ESC and ACT conversation of each pair
    p = rng.uniform(0.05, 0.95, case.size)
    y = np.tile([1.0, 0.0], 30)
    fold = case_folds(case, 5, rng=np.random.default_rng(1))
    assert (fold[0::2] == fold[1::2]).all() and np.bincount(fold).tolist() == [12] * 5
    fit = cross_fit(p, y, case, "platt", folds=5, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(fit.fold, fold)
    for k, calibration in enumerate(fit.maps):
        refit = fit_calibration(p[fold != k], y[fold != k], "platt")
        np.testing.assert_allclose(calibration.coef, refit.coef)
        np.testing.assert_allclose(fit.calibrated[fold == k], refit(p[fold == k]))
    # other probabilities of the same cases take their case's map
    np.testing.assert_allclose(fit.apply(p[::-1], case[::-1]), fit.calibrated[::-1])
    with pytest.raises(ValueError, match="group 99 was not in the calibration sample"):
        fit.apply(np.array([0.5]), [99])
    with pytest.raises(ValueError, match=r"`folds` must be at most \d+ \(the number of groups\); got"):
        case_folds(case, 31, rng=np.random.default_rng(1))


def test_auroc_is_the_mann_whitney_probability_with_the_hanley_mcneil_error():
    score = np.array([0.9, 0.8, 0.4, 0.35, 0.7, 0.3, 0.2, 0.25])
    positive = np.array([True, True, True, False, False, False, False, True])
    # brute force: P(positive scores above negative) + half the ties
    pairs = [(s1 > s0) + 0.5 * (s1 == s0) for s1 in score[positive] for s0 in score[~positive]]
    area, se = auroc(score, positive)
    assert area == pytest.approx(np.mean(pairs)) == pytest.approx(0.75)
    # Hanley & McNeil (1982) by hand for A = 0.75, n1 = n0 = 4: Q1 = 0.6, Q2 = 0.642857
    assert se == pytest.approx(math.sqrt((0.75 * 0.25 + 3 * (0.6 - 0.5625) + 3 * (2 * 0.5625 / 1.75 - 0.5625)) / 16))
    assert np.isnan(auroc(score, np.ones(8, bool))[0])
