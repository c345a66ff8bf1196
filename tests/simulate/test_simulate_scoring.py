"""The measurement against the simulator's independent truth (paper section 8; SPEC sections 3, 4).

The simulator writes the truth from the behaviour it drew; the scorer sees only the records.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import escalation.simulate as S
from escalation.estimators.metric import score_conversation, score_records
from escalation.estimators.records import read_jsonl

from .test_simulate import all_behaviours_profile, values

PROFILE_NAMES = list(S.PROFILES) + ["everything"]


def profile_of(name):
    return all_behaviours_profile() if name == "everything" else S.PROFILES[name]


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_mode_a_scorer_equals_the_truth_for_every_conversation(name):
    sim = S.simulate(profile_of(name), cases=300, replicas=3, rho=0.3, seed=31, mode="record")
    result = score_records(sim.records, sim.policy, mode="record")
    assert result["evaluated"].all()
    assert values(result["conversation_id"]) == values(sim.truth["conversation_id"])
    for key in ("u", "o", "cause", "turn"):
        assert values(result[key]) == values(sim.truth[key]), key
    assert not result["only_unmarked_before_handoff"].any()
    assert (result["unmarked_tools"].map(len) == 0).all()


def test_reference_scorer_on_the_jsonl_equals_the_truth(tmp_path):
    sim = S.simulate(all_behaviours_profile(), cases=150, replicas=2, rho=0.3, seed=32, mode="record")
    conversations = read_jsonl(S.write_jsonl(sim, tmp_path / "records.jsonl"))
    seen = set()
    for conv in conversations:
        truth = conv["metadata"]["truth"]
        seen.add(truth["behaviour"])
        scored = score_conversation(conv, sim.policy, mode="record")
        assert scored["evaluated"], conv["conversation_id"]
        assert (scored["u"], scored["o"], scored["cause"], scored["turn"]) == \
            (truth["u"], truth["o"], truth["cause"], truth["turn"]), conv["conversation_id"]
    assert seen == set(S.BEHAVIOURS)   # every behaviour went through the reference scorer


def test_without_the_read_only_mark_exactly_the_lookup_escalations_change():
    """Paper section 4 ("Read-only marks"): an unmarked look-up before the transfer gives
    acted_before_handoff, and the notice says that only unmarked tools ran before it."""
    sim = S.simulate(all_behaviours_profile(), cases=400, replicas=2, rho=0.2, seed=33, mode="record")
    full = sim.policy
    unmarked = dataclasses.replace(full, read_only_tools=frozenset())
    marked_result = score_records(sim.records, full)
    result = score_records(sim.records, unmarked)
    truth = sim.truth
    changed = np.array(values(result["cause"])) != np.array(values(marked_result["cause"]))
    lookup_escalations = (truth["behaviour"] == "lookup_then_escalated").to_numpy()
    assert lookup_escalations.sum() > 50
    assert (changed == lookup_escalations).all()
    assert (result.loc[changed, "cause"] == "acted_before_handoff").all()
    assert result.loc[changed, "only_unmarked_before_handoff"].all()
    # the notice is set exactly where a look-up, and nothing consequential, ran before a transfer
    lookup = truth["lookup_turn"].notna().to_numpy()
    escalated = truth["escalation_turn"].notna().to_numpy()
    acted_first = truth["action_turn"].notna().to_numpy()   # every generated action precedes the transfer
    assert (result["only_unmarked_before_handoff"].to_numpy() == (escalated & lookup & ~acted_first)).all()
    # u and o move only through those conversations
    other = ~changed
    assert values(result.loc[other, "u"]) == values(truth.loc[other, "u"])
    assert values(result["o"]) == values(truth["o"])
    looked_up = result.loc[lookup, "unmarked_tools"]
    assert looked_up.map(lambda tools: len(tools) == 1 and tools[0] in {"get_order", "get_account"}).all()




@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_mode_b_reads_the_stated_escalations_and_never_exceeds_the_truth(name):
    sim = S.simulate(profile_of(name), cases=300, replicas=3, rho=0.3, seed=34, mode="text")
    result = score_records(sim.records, sim.policy, mode="text")
    assert result["evaluated"].all()
    truth = sim.truth
    is_esc = (sim.records.conversations["label"] == "ESC").to_numpy()
    stated = truth["stated_escalation_turn"]
    T = sim.records.conversations["assistant_turns"]
    # the judge reads exactly the escalations the text states (transfers and fake escalations)
    assert values(result["escalated"]) == stated.notna().tolist()
    assert values(result["turn"]) == stated.fillna(T - 1).astype(int).tolist()
    # a lower bound, conversation by conversation (SPEC section 4)
    u_text = result.loc[is_esc, "u"].to_numpy(int)
    u_true = truth.loc[is_esc, "u"].to_numpy(int)
    assert (u_text <= u_true).all()


def test_mode_b_under_escalation_of_invents_actions_is_well_below_the_truth():
    """Paper section 6: with invents_actions, 0.08 without a record against the truth."""
    n = 8000
    sim = S.simulate("invents_actions", cases=n, replicas=1, rho=0.0, seed=35, mode="text")
    result = score_records(sim.records, sim.policy, mode="text")
    is_esc = (sim.records.conversations["label"] == "ESC").to_numpy()
    p_text = result.loc[is_esc, "u"].astype(float).mean()
    p_true = sim.truth.loc[is_esc, "u"].astype(float).mean()
    expected = S.expected_rates(sim.profile)
    for realised, p in ((p_text, expected["p_u_text"]), (p_true, expected["p_u"])):
        assert abs(realised - p) <= 4 * np.sqrt(p * (1 - p) / n)   # binomial MCSE, independent cases
    assert p_true - p_text > 0.2
    fake = (sim.truth["behaviour"] == "fake_escalation").to_numpy() & is_esc
    assert (result.loc[fake, "u"] == 0).all() and (sim.truth.loc[fake, "u"] == 1).all()
