"""Property tests (hypothesis) of the measurement on random records and policies."""
import copy

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import conversation_lines, score_conversation, score_records, summarise
from escalation.estimators.records import Policy, Records, normalise_conversation

NAMES = ["esc1", "esc2", "ro1", "ro2", "act1", "act2", "app1", "gate1", "unk1", None]
TEXTS = ["I have transferred you to a human agent.", "Please call customer service.", "Done.",
         "He pasado tu caso a un supervisor.", "I cannot transfer you to a human.", ""]


@st.composite
def policies(draw):
    pool = ["esc1", "esc2", "ro1", "ro2", "act1", "act2", "app1", "gate1", "<unnamed>"]  # a policy may name it
    escalation = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
    rest = [n for n in pool if n not in escalation]
    read_only = draw(st.lists(st.sampled_from(rest), max_size=2, unique=True))
    rest = [n for n in rest if n not in read_only]
    approval = draw(st.lists(st.sampled_from(rest), max_size=1, unique=True))
    rest = [n for n in rest if n not in approval]
    action = draw(st.lists(st.sampled_from(rest), max_size=3, unique=True))
    gated = draw(st.lists(st.sampled_from(rest), max_size=2, unique=True))
    approvers = draw(st.one_of(st.none(), st.sets(st.sampled_from(["sup", "bot", "7"]), min_size=1)))
    return Policy(frozenset(escalation), frozenset(read_only), frozenset(action), frozenset(approval), frozenset(gated),
                  approvers=approvers, approval_scope=draw(st.sampled_from(["call", "conversation"])))


DECISIONS = st.one_of(st.none(), st.sampled_from(["granted", "denied", "Denied", "maybe"]), st.just(1))
APPROVERS = st.one_of(st.none(), st.sampled_from(["sup", "bot", ""]), st.just(7), st.just(["sup"]))


calls = st.fixed_dictionaries({
    # None, "", 5 and a list are no name (SPEC section 1: <unnamed>); "<unnamed>" is a tool named so
    "name": st.one_of(st.sampled_from(NAMES), st.sampled_from(["", 5, ["esc1"], "<unnamed>"])),
    "turn": st.one_of(st.integers(-1, 4), st.sampled_from([1.5, "1", None])),
}, optional={"covers": st.one_of(st.none(), st.lists(st.sampled_from(NAMES[:-1]), max_size=2),
                                 st.just(["gate1", ["gate1"]])),
             "decision": DECISIONS, "approver": APPROVERS,  # SPEC 3A: on requests, and inline on gated calls
             "approval": st.one_of(st.none(), st.just("granted"), st.fixed_dictionaries(
                 {}, optional={"decision": DECISIONS, "approver": APPROVERS}))})


@st.composite
def conversations(draw, i):
    obj = {"conversation_id": f"c{i}", "case_id": draw(st.sampled_from([None, "k1", "k2", "k3"])),
           "replica": draw(st.integers(0, 1)),
           "label": draw(st.sampled_from(["ESC", "ACT", "ESC", "ACT", None, "esc", " Act ", "E S C"]))}
    if draw(st.booleans()):
        obj["assistant_turns"] = draw(st.integers(0, 5))
    if draw(st.integers(0, 5)):
        obj["tool_calls"] = draw(st.lists(calls, max_size=6))
    if not draw(st.integers(0, 6)):  # a run the harness recorded as failed: run_error (SPEC section 3)
        obj["run_error"] = draw(st.sampled_from(["the model's service failed", True, {"message": "x"}]))
    obj["messages"] = [{"turn": draw(st.integers(0, 4)), "role": draw(st.sampled_from(["assistant", "user"])),
                        "text": draw(st.sampled_from(TEXTS))} for _ in range(draw(st.integers(0, 3)))]
    return normalise_conversation(obj)


@st.composite
def record_sets(draw):
    n = draw(st.integers(1, 12))
    convs = [draw(conversations(i)) for i in range(n)]
    seen, unique = set(), []
    for c in convs:  # drop repeated (case, label, replica): that is an input error, tested elsewhere
        key = (c["case_id"], c["label"], c["replica"])
        if c["case_id"] is None or key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def vectorised_rows(convs, policy, mode):
    import json
    return [json.loads(line)
            for line in conversation_lines(score_records(Records.from_conversations(convs), policy, mode=mode))]


FIELDS = ("conversation_id", "evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells",
          "unmarked_tools", "only_unmarked_before_handoff", "failed_escalations", "gated_calls", "approval", "a",
          "approval_cause", "approval_turn", "approval_requests", "inline_decisions", "unknown_decisions")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_sets(), policies(), st.sampled_from(["record", "text"]))
def test_reference_and_vectorised_scorers_agree(convs, policy, mode):
    ref = [score_conversation(c, policy, mode=mode) for c in convs]
    vec = vectorised_rows(convs, policy, mode)
    for r, v in zip(ref, vec, strict=True):
        assert {k: r[k] for k in FIELDS} == {k: v[k] for k in FIELDS}


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_sets(), policies(), st.randoms(use_true_random=False))
def test_reordering_conversations_changes_nothing(convs, policy, rnd):
    shuffled = list(convs)
    rnd.shuffle(shuffled)
    a = score_records(Records.from_conversations(convs), policy)
    b = score_records(Records.from_conversations(shuffled), policy)
    key = "conversation_id"
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True))
    sa, sb = summarise(a).to_dict(), summarise(b).to_dict()
    assert sa == sb


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_sets(), policies(), st.integers(0, 10))
def test_adding_a_read_only_call_changes_no_result(convs, policy, where):
    if not policy.read_only_tools:
        return
    read_only = sorted(policy.read_only_tools)[0]
    for conv in convs:
        before = score_conversation(conv, policy)
        if not before["evaluated"]:
            continue
        more = copy.deepcopy(conv)
        calls = more["tool_calls"]
        i = where % (len(calls) + 1)
        turn = calls[i - 1]["turn"] if i > 0 else (calls[0]["turn"] if calls else 0)
        calls.insert(i, {"name": read_only, "turn": turn, "arguments": None, "covers": None})
        after = score_conversation(more, policy)
        assert after["evaluated"]
        assert (after["u"], after["o"], after["cause"]) == (before["u"], before["o"], before["cause"])


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 50), st.integers(1, 50), st.floats(0.5, 0.98), st.floats(0.001, 0.019))
def test_higher_confidence_gives_wider_interval(errors, extra, confidence, step):
    n = errors + extra
    frame = pd.DataFrame({"conversation_id": [f"c{i}" for i in range(n)], "case_id": None,
                          "scenario_id": [f"s{i % 7}" for i in range(n)], "replica": 0, "label": "ESC",
                          "evaluated": True, "reason": None, "u": pd.array([1] * errors + [0] * extra, dtype="Int8"),
                          "o": pd.array([None] * n, dtype="Int8"), "cause": None, "unmarked_tools": [[]] * n})
    under = summarise(frame, confidence=confidence).under
    lo, hi = under.ci(), under.ci(confidence_level=confidence + step)
    # recomputed from what the summary kept: the interval a summary made at that level reports
    assert hi == summarise(frame, confidence=confidence + step).under.ci()
    assert hi[0] <= lo[0] + 1e-12 and hi[1] >= lo[1] - 1e-12
    assert (hi[1] - hi[0]) > (lo[1] - lo[0]) or np.isclose(lo[1] - lo[0], 1.0)


def test_many_unmarked_tools_are_listed_sorted_and_distinct():
    """More distinct unmarked names than the scorer's bit-mask shortcut takes (52)."""
    policy = Policy(frozenset({"esc"}))
    names = [f"tool{i:02d}" for i in range(60)]
    convs = [normalise_conversation({"conversation_id": f"c{j}", "label": "ESC",
                                     "tool_calls": [{"turn": 0, "name": n} for n in reversed(names[j:])] * 2})
             for j in range(3)]
    ref = [score_conversation(c, policy) for c in convs]
    vec = vectorised_rows(convs, policy, "record")
    assert [r["unmarked_tools"] for r in ref] == [v["unmarked_tools"] for v in vec] == [names[j:] for j in range(3)]
