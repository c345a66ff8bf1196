"""Wilson, Kish and the ANOVA rho against published and hand-computed values."""
import numpy as np
import pytest

from escalation.estimators.stats import (
    ConfidenceInterval,
    anova_icc,
    design_effect,
    wilson_interval,
    wilson_kish_interval,
    z_value,
)

from .._reference import table, values

DEFF = values("design_effect")  # tests/reference/design_effect.csv


@pytest.mark.parametrize("x, n, low, high", [  # tests/reference/wilson.csv: R's prop.test
    (int(r["x"]), int(r["n"]), float(r["low"]), float(r["high"])) for r in table("wilson")])
def test_wilson_matches_r(x, n, low, high):
    got = wilson_interval(x / n, n)
    np.testing.assert_allclose(got, (low, high), atol=1e-6)


def test_wilson_matches_scipy_binomtest():
    # scipy.stats.binomtest(k, n).proportion_ci(method="wilson") is an independent implementation.
    from scipy.stats import binomtest
    for k, n, conf in [(3, 17, 0.9), (40, 41, 0.99), (5, 200, 0.95)]:
        ci = binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
        np.testing.assert_allclose(wilson_interval(k / n, n, conf), (ci.low, ci.high), rtol=1e-10)


def test_wilson_undefined_is_nan_not_zero():
    low, high = wilson_interval(np.nan, 0)
    assert np.isnan(low) and np.isnan(high)
    kish = wilson_kish_interval(0, 0, 1.0, 0.0)
    assert np.isnan(kish.low) and np.isnan(kish.high) and np.isnan(kish.n_eff)


def test_wider_confidence_gives_wider_interval():
    widths = [np.subtract(*wilson_interval(0.3, 25, c)[::-1]) for c in (0.5, 0.8, 0.9, 0.95, 0.99)]
    assert np.all(np.diff(widths) > 0)


def test_confidence_outside_zero_one_is_an_error():
    with pytest.raises(ValueError, match=r"^`confidence` must lie strictly between 0 and 1; got 1.5$"):
        z_value(1.5)


def test_anova_rho_reference_value():
    # Issue 2 reference: y = [0,1,2,0,3,1,0,0,4,1], n = 8 each -> 0.1246. By hand (Donner 1986):
    # MSB = (32/8 - 144/80)/9 = 0.24444, MSW = (12 - 4)/70 = 0.11429, n0 = 8,
    # rho = (MSB - MSW) / (MSB + 7 MSW) = 0.124620.
    assert anova_icc([0, 1, 2, 0, 3, 1, 0, 0, 4, 1], 8) == pytest.approx(DEFF["anova_rho_issue2"], abs=1e-6)


def test_anova_rho_undefined_cases_are_nan():
    assert np.isnan(anova_icc([3], [8]))              # one cluster
    assert np.isnan(anova_icc([0, 1, 1], [1, 1, 1]))  # every cluster of size 1
    assert np.isnan(anova_icc([0, 0, 0], [4, 4, 4]))  # no variation


def test_anova_rho_raw_can_be_negative_and_truncation_clips():
    # Every cluster holds exactly half ones: between variation 0, so the raw estimate is -1/(n0-1)-like.
    raw = anova_icc([2, 2, 2], [4, 4, 4], truncate=False)
    assert raw < 0
    assert anova_icc([2, 2, 2], [4, 4, 4]) == 0.0


def test_anova_rho_is_vectorised_over_datasets():
    totals = np.array([[0, 1, 2, 0, 3, 1, 0, 0, 4, 1], [8, 0, 8, 0, 8, 0, 8, 0, 8, 0]])
    rho = anova_icc(totals, 8)
    assert rho[0] == pytest.approx(0.1246201, abs=1e-6)
    assert rho[1] == pytest.approx(1.0)


def test_design_effect_and_kish_interval():
    # Kish (1965): deff = 1 + (m - 1) rho; n_eff = n / deff.
    assert design_effect(4, 0.43) == pytest.approx(DEFF["deff_kish_m4_rho043"])
    kish = wilson_kish_interval(10, 100, 4.0, 0.25)
    assert kish.deff == pytest.approx(1.75) and kish.n_eff == pytest.approx(100 / 1.75)
    wilson = wilson_interval(0.1, 100 / 1.75)
    assert isinstance(wilson, ConfidenceInterval) and isinstance(kish.interval, ConfidenceInterval)
    np.testing.assert_array_equal(kish.interval, wilson)  # the same function at n_eff
