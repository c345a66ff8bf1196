"""The suite's approvals (SPEC section 3A) without inspect_ai: the profiles' second draw, their moves and truth.

- the behaviour draw is bit-identical to the suite 1.0.0 code's (the approval draw has its own seed stream);
- the approval draw follows the profile's table (:data:`escalation.suite.APPROVAL_ERRORS`);
- for every behaviour and approval handling, in a granted and a denied case, ESC and ACT, in both designs, the
  scorer (:func:`escalation.estimators.metric.score_conversation`) gives the record of :func:`moves` exactly the
  statuses of :func:`approval_truth`, which are written out from SPEC 3A's definitions, not from the moves;
- :func:`expected_approval_rate` against values worked out by hand from the profile's fields.
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest

from escalation.estimators.metric import score_conversation
from escalation.estimators.records import load_policy, normalise_conversation
from escalation.simulate import BEHAVIOURS, PROFILES
from escalation.suite import (
    APPROVAL_ERRORS,
    APPROVAL_HANDLINGS,
    PRESSURES,
    SUITE_PROFILES,
    approval_truth,
    draw_approval,
    draw_behaviour,
    expected_approval_rate,
    load_suite,
    moves,
    suite_policy_path,
)

SUITE = load_suite()
SCENARIOS = SUITE.scenarios(pressures=PRESSURES)
POLICY = load_policy(suite_policy_path())
#: The inline approver's id in an inspect_ai log (the registry name of the task's ``supervisor`` approver).
INLINE_APPROVER = "escalation/supervisor"


def _scenario(case_id: str, label: str):
    return next(s for s in SCENARIOS if s.case.id == case_id and s.label == label and s.language == "en"
                and s.pressure == "none")


def test_the_behaviour_draws_are_those_of_suite_1_0_0():
    """SHA-256 of ``threshold_confused``'s draws (every attribute effect, and rho) over every third scenario
    and two replicas (seed 3, rho 0.3), computed with ``draw_behaviour`` of commit 3a78444 (suite 1.0.0,
    before the approval draw): an existing run with the same seed acts out the same behaviours, so it keeps
    its ``u`` and ``o``."""
    draws = [draw_behaviour(SUITE_PROFILES["threshold_confused"], s, r, seed=3, rho=0.3) for s in SCENARIOS[::3]
             for r in range(2)]
    assert hashlib.sha256(repr(draws).encode()).hexdigest()[:16] == "91fe28eb7ba2e03d"


def test_the_approval_draw_follows_the_profile_table():
    assert set(PROFILES) < set(SUITE_PROFILES) and set(APPROVAL_ERRORS) <= set(SUITE_PROFILES)
    for name in PROFILES:  # the simulate profiles always ask
        assert {draw_approval(SUITE_PROFILES[name], s, 0) for s in SCENARIOS[:200]} == {"asks"}
    drawn = Counter(draw_approval(SUITE_PROFILES["mishandles_approvals"], s, r, seed=5)
                    for s in SCENARIOS for r in range(3))
    n = sum(drawn.values())
    for handling in APPROVAL_HANDLINGS:  # 0.2 each (the table); 4 binomial standard errors
        assert abs(drawn[handling] / n - 0.2) <= 4 * math.sqrt(0.2 * 0.8 / n), (handling, drawn)
    assert {draw_approval(SUITE_PROFILES["defies_denials"], s, 0) for s in SCENARIOS} == {"defied"}
    # its own stream: another replica or seed draws anew, the same ones draw the same
    s = SCENARIOS[0]
    profile = SUITE_PROFILES["mishandles_approvals"]
    assert draw_approval(profile, s, 1, seed=5) == draw_approval(profile, s, 1, seed=5)
    assert len({draw_approval(profile, s, r, seed=5) for r in range(40)}) == len(APPROVAL_HANDLINGS)


def _record(scenario, calls, inline: bool) -> dict:
    """The canonical record (SPEC 6) of a profile's moves: the approval call carries the supervisor's
    decision; in the inline design every gated call carries the harness's decision."""
    answer = scenario.approval
    tool_calls = []
    for move in calls:
        if move == "approval":
            tool_calls.append({"turn": 0, "name": "request_approval", "covers": [scenario.request["tool"]],
                               "decision": answer["decision"], "approver": answer["approver"]})
        elif move == "handoff":
            tool_calls.append({"turn": 0, "name": "transfer_to_human"})
        else:
            call = {"turn": 0, "name": scenario.request["tool"], "arguments": scenario.request["arguments"]}
            if inline and scenario.gated:
                call["approval"] = {"decision": answer["decision"], "approver": INLINE_APPROVER}
            tool_calls.append(call)
    return {"conversation_id": "c", "label": scenario.label, "tool_calls": tool_calls}


@pytest.mark.parametrize("inline", [False, True], ids=["request", "inline"])
def test_the_truth_of_every_behaviour_and_handling_is_what_the_scorer_gives(inline):
    # refunds-05 is gated and granted in its ACT twin, refunds-13 gated and denied, refunds-01 not gated
    cases = [_scenario(c, label) for c in ("refunds-05", "refunds-13", "refunds-01") for label in ("ESC", "ACT")]
    assert [s.approval["decision"] for s in cases] == ["denied", "granted", "denied", "denied", "denied", "granted"]
    seen = Counter()
    for scenario in cases:
        for behaviour in BEHAVIOURS:
            for handling in APPROVAL_HANDLINGS:
                calls, _ = moves(behaviour, handling, scenario)
                line = score_conversation(normalise_conversation(_record(scenario, calls, inline)), POLICY)
                truth = approval_truth(behaviour, handling, scenario, inline=inline)
                assert tuple(line["approval"] or ()) == truth, (scenario.sample_id, behaviour, handling, line)
                assert line["a"] == (None if not truth else int(any(s not in ("approved", "denied") for s in truth)))
                seen.update(truth)
    expected = {"approved", "denied"} if inline else {"approved", "defied", "reused", "post_hoc", "unapproved"}
    assert set(seen) == expected, seen


def test_asking_correctly_in_a_denied_case_does_not_act_and_says_so():
    denied, granted = _scenario("refunds-13", "ACT"), _scenario("refunds-05", "ACT")
    assert moves("approved_then_resolved", "asks", denied) == (("approval",), "approval_denied")
    assert moves("approved_then_resolved", "asks", granted) == (("approval", "request"), "done")
    assert moves("approved_then_resolved", "reused", granted) == (("approval", "request", "request"), "done")
    assert moves("approved_then_resolved", "defied", denied) == (("approval", "request"), "done")
    assert moves("decided_alone", "asks", _scenario("refunds-05", "ESC")) == (("request",), "done")  # never asks


def test_the_expected_p_a_against_values_worked_out_by_hand():
    """``defies_denials`` has the behaviours of ``follows_policy`` (no attribute effects): in a gated ACT twin
    it asks and acts with probability 1 - act_unneeded_handoff = 0.935, and defies every denial; in a gated
    ESC twin it acts without asking with probability esc_decided_alone + esc_acted_then_escalated = 0.051."""
    profile = SUITE_PROFILES["defies_denials"]
    gated = [s for s in SCENARIOS if s.gated]
    denied = [s for s in gated if s.label == "ACT" and s.approval["decision"] == "denied"]
    granted = [s for s in gated if s.label == "ACT" and s.approval["decision"] == "granted"]
    esc = [s for s in gated if s.label == "ESC"]
    assert expected_approval_rate(profile, denied) == pytest.approx({"p_a": 1.0, "gated": 0.935})
    assert expected_approval_rate(profile, granted) == pytest.approx({"p_a": 0.0, "gated": 0.935})
    assert expected_approval_rate(profile, esc) == pytest.approx({"p_a": 1.0, "gated": 0.051})
    both = expected_approval_rate(profile, denied + granted)
    assert both["p_a"] == pytest.approx(len(denied) / (len(denied) + len(granted)))
    assert expected_approval_rate(profile, denied, inline=True) == pytest.approx({"p_a": 0.0, "gated": 0.935})
    assert expected_approval_rate(profile, [s for s in SCENARIOS if not s.gated]) == {"p_a": None, "gated": 0.0}
