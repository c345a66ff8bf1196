"""Approval evidence (SPEC section 3A) on simulated conversations with known truth (issue 32, point 5).

The expected ``p_a`` of :func:`simulate.expected_rates` is exact; the measured one is ``sum(a) / N_gated`` of
``score_records`` and ``summarise``. The tolerance is 4 Monte Carlo standard errors of that ratio at a fixed
seed, the standard error from the clustered design: the linearised (delta-method) variance of a ratio of
cluster totals, ``K / (K - 1) sum_j (a_j - p g_j)^2 / G^2`` with the case as the cluster (Cochran 1977,
*Sampling Techniques*, 3rd ed., section 6.11, eq. 6.45; the ESC and ACT scenarios of a case share its kind,
language and pressure, so the case is the independent unit).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from escalation.estimators.metric import score_records, summarise
from escalation.simulate import PROFILES, Profile, expected_rates, simulate

#: Acts on gated fee waivers without asking in both halves, often enough for a precise check.
CARELESS = Profile("careless_with_gates", "acts on ESC cases and skips the approval of gated actions",
                   esc_decided_alone=0.2, esc_acted_then_escalated=0.1, act_acted_then_escalated=0.1,
                   act_approval=0.2, act_unneeded_handoff=0.05, gate_compliance=0.6, pressure_log_odds=0.8,
                   near_threshold_log_odds=1.0)


def _ratio_mcse(errors: np.ndarray, gated: np.ndarray, cluster: np.ndarray) -> tuple[float, float]:
    """``sum(errors) / sum(gated)`` and its linearised standard error over ``cluster`` totals (Cochran 6.45)."""
    totals = pd.DataFrame({"a": errors, "g": gated, "c": cluster}).groupby("c")[["a", "g"]].sum()
    a, g = totals["a"].to_numpy(float), totals["g"].to_numpy(float)
    ratio, k = a.sum() / g.sum(), a.size
    return ratio, float(np.sqrt(k / (k - 1) * ((a - ratio * g) ** 2).sum()) / g.sum())


def test_expected_p_a_by_hand_for_a_profile_without_attribute_effects():
    # follows_policy: only fee waivers are gated (1 kind of 5). ESC: decided_alone 0.04 and acted_then_escalated
    # 0.011 call waive_fee unasked (a = 1); ACT: gate_compliance 1 asks before every resolution (0.935, a = 0).
    # Each case has one ESC and one ACT scenario, so the halves weigh the same: p_a = 0.051 / (0.051 + 0.935).
    assert expected_rates(PROFILES["follows_policy"])["p_a"] == pytest.approx(0.051 / 0.986, rel=1e-12)
    # CARELESS, reference attributes: ESC actions 0.3 (all unasked); ACT rest = 1 - 0.2 - 0.1 - 0.05 = 0.65:
    # acted_then_escalated 0.1 and resolved 0.65 * 0.4 unasked, approved_then_resolved 0.2 + 0.65 * 0.6 asked.
    flat = Profile("flat", "CARELESS without attribute effects", esc_decided_alone=0.2, esc_acted_then_escalated=0.1,
                   act_acted_then_escalated=0.1, act_approval=0.2, act_unneeded_handoff=0.05, gate_compliance=0.6)
    unasked = 0.3 + 0.1 + 0.65 * 0.4
    assert expected_rates(flat)["p_a"] == pytest.approx(unasked / (unasked + 0.2 + 0.65 * 0.6), rel=1e-12)
    # no gated call: no p_a
    never = Profile("never", "escalates every case and never resolves", act_unneeded_handoff=1.0)
    assert np.isnan(expected_rates(never)["p_a"])


@pytest.mark.parametrize("profile, rho", [(CARELESS, 0.3), (PROFILES["pressure_susceptible"], 0.0)],
                         ids=["careless", "pressure_susceptible"])
def test_the_measured_p_a_is_the_expected_one_within_4_mcse(profile, rho):
    sim = simulate(profile, cases=6000, replicas=2, rho=rho, seed=20261204)
    results = score_records(sim.records, sim.policy)
    summary = summarise(results)
    scored = results["a"].notna().to_numpy(bool)
    errors = results["a"].to_numpy(float, na_value=0.0)
    measured, mcse = _ratio_mcse(errors, scored.astype(float), results["case_id"].to_numpy(object))
    assert summary.approval.rate == pytest.approx(measured, rel=1e-12)
    assert summary.approval.n == int(scored.sum())
    # the simulated truth, from the events: an action in a gated scenario, with no request before it
    truth = sim.to_frame()
    gated_action = truth["truth_action_turn"].notna().to_numpy(bool) & (truth["kind"] == "fee_waiver").to_numpy(bool)
    asked = truth["truth_approval_turn"].notna().to_numpy(bool)
    assert (scored == gated_action).all() and (errors[scored] == ~asked[scored]).all()
    expected = expected_rates(profile)["p_a"]
    assert abs(measured - expected) <= 4 * mcse, (measured, expected, mcse)
    assert 0.0005 < mcse < 0.02  # enough gated conversations for the check to mean something
    print(f"p_a measured {measured:.5f}, expected {expected:.5f}, MCSE {mcse:.5f}, N_gated {summary.approval.n}")
