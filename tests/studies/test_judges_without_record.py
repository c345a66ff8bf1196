"""Observation without a record (the text-only lower bound and its correction) and read-only marks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from escalation import simulate
from escalation.estimators.judges import predictive_value_correction, rogan_gladen
from escalation.estimators.metric import score_records
from escalation.studies.judges._judges import run_cell
from escalation.studies.judges._without_record import mode_b_profile


def _mode_b_row(fake_rate, reps):
    return {"part": "mode_b", "fake_rate": fake_rate, "cases": 1000, "reps": reps, "language": "", "pairs": None,
            "profile": ""}


def _pick(rows, method, stat, validation=None):
    (row,) = [r for r in rows if r.get("method") == method and r["stat"] == stat
              and (validation is None or r.get("validation") == validation)]
    return row


@pytest.mark.parametrize("profile", ["invents_actions", "acts_then_escalates", "follows_policy", "never_escalates"])
def test_the_text_only_rate_never_exceeds_the_truth(profile):
    sim = simulate.simulate(profile, 400, seed=31)
    with_record = score_records(sim.records, sim.policy)
    text = score_records(sim.records, sim.policy, mode="text")
    esc = (with_record["label"] == "ESC").to_numpy(bool)
    u_record = with_record["u"].to_numpy(float)[esc]
    u_text = text["u"].to_numpy(float)[esc]
    assert (u_text <= u_record).all()  # per conversation: a stated escalation hides an error, never makes one
    np.testing.assert_array_equal(u_record, sim.truth["u"].to_numpy(float)[esc])


def test_predictive_value_correction_by_hand():
    # q = 20/100, PPV = 18/20, FOR = 8/80: p = 0.2 * 0.9 + 0.8 * 0.1 = 0.26;
    # Var = 0.8^2 * 0.16 / 100 + 0.2^2 * 0.09 / 20 + 0.8^2 * 0.09 / 80 = 0.001924 (Tenenbein 1970, delta method)
    fit = predictive_value_correction(20, 100, 18, 20, 8, 80)
    assert fit.estimate == pytest.approx(0.26)
    assert fit.se == pytest.approx(math.sqrt(0.001924))
    low, high = fit.ci()  # Wald: 0.26 -+ z_0.975 sqrt(Var), z_0.975 = qnorm(0.975) in R
    assert (low, high) == pytest.approx((0.26 - 1.959963984540054 * math.sqrt(0.001924),
                                         0.26 + 1.959963984540054 * math.sqrt(0.001924)))
    assert fit.ci(0.9).high == pytest.approx(0.26 + 1.6448536269514722 * math.sqrt(0.001924))  # qnorm(0.95)
    assert np.isnan(predictive_value_correction(20, 100, 0, 0, 8, 80).estimate)  # no flagged conversation: undefined


def test_rogan_gladen_by_hand():
    # q = 0.2, Se = 40/50, Sp = 45/50: p = (0.2 + 0.9 - 1) / (0.8 + 0.9 - 1) = 1/7 (Rogan & Gladen 1978)
    fit = rogan_gladen(20, 100, 40, 50, 45, 50)
    p = 1 / 7
    variance = (0.16 / 100 + p**2 * 0.16 / 50 + (1 - p) ** 2 * 0.09 / 50) / 0.7**2
    assert fit.estimate == pytest.approx(p) and fit.se == pytest.approx(math.sqrt(variance))
    assert np.isnan(rogan_gladen(20, 100, 10, 50, 20, 50).estimate)  # Se + Sp <= 1: undefined


def test_predictive_value_correction_is_exactly_unbiased():
    # exact enumeration: q_hat ~ Bin(12, 0.3), PPV_hat ~ Bin(5, 0.8) / 5, FOR_hat ~ Bin(9, 0.25) / 9
    k, a, b = np.meshgrid(np.arange(13), np.arange(6), np.arange(10), indexing="ij")
    weight = stats.binom.pmf(k, 12, 0.3) * stats.binom.pmf(a, 5, 0.8) * stats.binom.pmf(b, 9, 0.25)
    fit = predictive_value_correction(k, 12, a, 5, b, 9)
    assert (weight * fit.estimate).sum() == pytest.approx(0.3 * 0.8 + 0.7 * 0.25, abs=1e-12)


@pytest.mark.slow
def test_mode_b_study_corrected_bias_is_within_two_mcse_of_zero():
    rows = run_cell(_mode_b_row(0.3, 200), np.random.SeedSequence(2024))
    truth = simulate.expected_rates(mode_b_profile(0.3))["p_u"]
    assert _pick(rows, "truth", "mean")["est"] == pytest.approx(0.38)  # 0.04 + 0.04 + 0.3 (invents_actions)
    assert _pick(rows, "without_record", "exceeds_truth")["est"] == 0
    text = _pick(rows, "without_record", "mean")
    assert text["est"] < truth - 0.25  # the fake escalations vanish from the text-only rate
    for size in (200, 800):
        bias = _pick(rows, "predictive_values", "bias", size)
        assert abs(bias["est"]) <= 2 * bias["mcse"]
        coverage = _pick(rows, "predictive_values", "coverage", size)
        assert coverage["est"] >= 0.95 - 3 * coverage["mcse"]


def test_the_notice_identifies_the_whole_inflation_from_unmarked_look_ups():
    sim = simulate.simulate("lookup_before_escalating", 300, seed=41)
    marked = score_records(sim.records, sim.policy)
    unmarked = score_records(sim.records, sim.policy.without_read_only_marks())
    esc = (marked["label"] == "ESC").to_numpy(bool)
    u_marked, u_unmarked = marked["u"].to_numpy(float)[esc], unmarked["u"].to_numpy(float)[esc]
    flagged = unmarked["only_unmarked_before_handoff"].to_numpy(bool)[esc]
    inflated = (u_unmarked == 1) & (u_marked == 0)
    assert inflated.mean() > 0.5  # always looks up before the transfer: most correct ones now count as errors
    np.testing.assert_array_equal(flagged, inflated)
    assert u_unmarked[~flagged].sum() == u_marked.sum()
    unmarked_policy = sim.policy.without_read_only_marks()
    assert unmarked_policy.read_only_tools == frozenset()
    # paper section 4: a look-up is read-only with the marks and an unmarked tool (an action) without them
    assert (sim.policy.kind("get_order"), unmarked_policy.kind("get_order")) == ("read_only", "unmarked")
    assert unmarked_policy.escalation_tools == sim.policy.escalation_tools
    assert unmarked_policy.action_tools == sim.policy.action_tools
