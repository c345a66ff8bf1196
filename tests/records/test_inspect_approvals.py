"""inspect_ai's approvals read as inline decisions and scored (SPEC section 3A), on logs that inspect_ai wrote.

The fixtures ``tests/data/readers/inspect_approvals_{auto,limit,chain}.eval`` were written by
``tests/data/readers/make_approval_logs.py``: the same scripted assistant under inspect_ai's ``auto_approver``,
a custom approver that modifies, rejects and terminates, and a chain whose approvers escalate. Every expected
value here is read from the log with inspect_ai's own API (``read_eval_log``, the samples' messages and
``ApprovalEvent``s) and SPEC 3A's table, then compared with what the project reads and scores, call by call.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.event import ApprovalEvent
from inspect_ai.log import read_eval_log, write_eval_log

from escalation.estimators.metric import score_conversation, score_records
from escalation.estimators.records import Records, load_policy, read_conversations

DATA = Path(__file__).parents[1] / "data" / "readers"
RUNS = ("auto", "limit", "chain")
LOGS = {run: DATA / f"inspect_approvals_{run}.eval" for run in RUNS}
POLICY_FILE = DATA / "inspect_approvals_policy.json"
POLICY = load_policy(POLICY_FILE)
#: SPEC section 3A, as the spec writes it: inspect_ai's decisions as inline decisions.
SPEC_DECISIONS = {"approve": "granted", "modify": "granted", "reject": "denied", "terminate": "denied"}
#: SPEC section 3A's statuses that are not errors.
NOT_ERRORS = ("approved", "denied")


def inspect_calls(sample) -> list[dict]:
    """The tool calls of a sample's assistant messages, in order, as inspect_ai's API gives them.

    Each call: its id, turn (the user messages before it, less one: every user message of these logs is
    answered), name, the error type of its tool message (None when it has none or ran clean) and its inline
    decision by SPEC 3A: the last ApprovalEvent on it that is not ``escalate``; when every event escalates,
    inspect_ai's policy rejects the call (``denied`` by ``policy``).
    """
    approvals = [event for event in sample.events if isinstance(event, ApprovalEvent)]
    results = {m.tool_call_id: m for m in sample.messages if m.role == "tool"}
    calls, users = [], 0
    for message in sample.messages:
        users += message.role == "user"
        for call in (message.tool_calls or []) if message.role == "assistant" else []:
            seen = [event for event in approvals if event.call.id == call.id]
            decided = [event for event in seen if event.decision != "escalate"]
            approval = None
            if decided:
                approval = {"decision": SPEC_DECISIONS[decided[-1].decision], "approver": decided[-1].approver}
            elif seen:
                approval = {"decision": "denied", "approver": "policy"}
            result = results.get(call.id)
            calls.append({"id": call.id, "turn": max(users - 1, 0), "name": call.function, "approval": approval,
                          "tool_error": result.error.type if result is not None and result.error else None})
    return calls


def expected_scores(calls: list[dict], approvers) -> dict:
    """SPEC 3A's scores of one conversation whose every gated call carries an inline decision."""
    gated = [call for call in calls if call["name"] in POLICY.gated_tools]
    statuses = []
    for call in gated:
        approval = call["approval"]
        assert approval is not None, "inspect_ai asks an approver about every call once a policy is set"
        if approval["decision"] == "denied":
            statuses.append("denied")
        elif approvers is not None and approval["approver"] not in approvers:
            statuses.append("unauthorized_approver")
        else:
            statuses.append("approved")
    errors = [(status, call["turn"]) for status, call in zip(statuses, gated) if status not in NOT_ERRORS]
    return {"gated_calls": len(gated), "approval": statuses, "a": int(bool(errors)) if gated else None,
            "approval_cause": errors[0][0] if errors else None, "approval_turn": errors[0][1] if errors else None}


def expected_run(run: str, approvers=POLICY.approvers) -> dict:
    """Conversation id -> ``(calls, scores)`` of a fixture, read with inspect_ai's API."""
    log = read_eval_log(str(LOGS[run]))
    out = {}
    for sample in log.samples:
        calls = inspect_calls(sample)
        out[f"{sample.id}:{sample.epoch}"] = calls, expected_scores(calls, approvers)
    return out


def _plain(value):
    """A scorer's value as JSON gives it: a tuple is a list, a missing value None."""
    if isinstance(value, tuple | list):
        return list(value)
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else value


@pytest.mark.parametrize("run", RUNS)
def test_each_call_carries_the_decision_of_its_approval_events(run):
    expected = expected_run(run)
    conversations, fmt = read_conversations(LOGS[run])
    assert fmt == "inspect" and {c["conversation_id"] for c in conversations} == set(expected)
    for conversation in conversations:
        calls, _ = expected[conversation["conversation_id"]]
        read = conversation["tool_calls"]
        # an attempted call is a call (SPEC section 1): a denied or terminated call stays in the record
        assert [(c["turn"], c["name"]) for c in read] == [(c["turn"], c["name"]) for c in calls]
        for got, want in zip(read, calls):
            assert got.get("approval") == want["approval"], want["id"]
            # a call that did not run is failed: inspect_ai's approval error, or a denial without a tool message
            did_not_run = want["tool_error"] is not None or (want["approval"] or {}).get("decision") == "denied"
            assert got.get("failed", False) is did_not_run, want["id"]


@pytest.mark.parametrize("run", RUNS)
def test_both_scorers_give_spec_3a_statuses(run):
    expected = expected_run(run)
    conversations, _ = read_conversations(LOGS[run])
    frame = score_records(Records.from_conversations(conversations), POLICY).set_index("conversation_id")
    fields = ("gated_calls", "approval", "a", "approval_cause", "approval_turn")
    for conversation in conversations:
        conversation_id = conversation["conversation_id"]
        _, want = expected[conversation_id]
        reference = score_conversation(conversation, POLICY)
        vectorised = frame.loc[conversation_id]
        for field in fields:
            assert _plain(reference[field]) == want[field], (conversation_id, field)
            assert _plain(vectorised[field]) == want[field], (conversation_id, field)


def test_without_approvers_every_inline_grant_is_approved():
    # the auto run: with no approvers listed, inspect_ai's auto approver is not checked (SPEC 3A)
    open_policy = replace(POLICY, approvers=None)
    expected = expected_run("auto", approvers=None)
    conversations, _ = read_conversations(LOGS["auto"])
    frame = score_records(Records.from_conversations(conversations), open_policy).set_index("conversation_id")
    for conversation_id, (_, want) in expected.items():
        assert _plain(frame.loc[conversation_id, "approval"]) == want["approval"]
        assert _plain(frame.loc[conversation_id, "a"]) == want["a"]
    assert {want["a"] for _, want in expected.values()} == {0, None}


def test_a_hand_off_that_an_approver_denied_is_no_escalation():
    # SPEC section 1: the denied transfer did not run, so the case did not reach a person
    for run in RUNS:
        expected = expected_run(run)
        conversations, _ = read_conversations(LOGS[run])
        for conversation in conversations:
            calls, _ = expected[conversation["conversation_id"]]
            handoffs = [c for c in calls if c["name"] in POLICY.escalation_tools]
            ran = [c for c in handoffs if c["tool_error"] is None and (c["approval"] or {}).get("decision") != "denied"]
            scores = score_conversation(conversation, POLICY)
            assert scores["escalated"] is bool(ran)
            assert scores["failed_escalations"] == len(handoffs) - len(ran)


def test_the_fixtures_hold_every_inspect_decision():
    """The logs are what make_approval_logs.py says: every decision of inspect_ai, escalations that the next
    approver decides and one that no approver decides, a modified call and a terminated sample."""
    decisions, chains = set(), []
    for run in RUNS:
        log = read_eval_log(str(LOGS[run]))
        assert log.status == "success" and all(sample.error is None for sample in log.samples)
        for sample in log.samples:
            events = [event for event in sample.events if isinstance(event, ApprovalEvent)]
            decisions |= {event.decision for event in events}
            for call_id in dict.fromkeys(event.call.id for event in events):
                chain = [(e.approver, e.decision) for e in events if e.call.id == call_id]
                if len(chain) > 1:
                    chains.append(chain)
            if any(event.decision == "terminate" for event in events):
                assert sample.limit is not None and sample.limit.type == "operator"  # scored, not a run error
    assert decisions == {"approve", "modify", "reject", "terminate", "escalate"}
    assert [("supervisor", "escalate"), ("human_desk", "approve")] in chains
    assert [("supervisor", "escalate"), ("human_desk", "reject")] in chains
    assert [("supervisor", "escalate"), ("human_desk", "escalate"), ("policy", "reject")] in chains


def test_the_script_names_the_inspect_ai_version_that_wrote_the_logs():
    script = (DATA / "make_approval_logs.py").read_text()
    for run in RUNS:
        version = read_eval_log(str(LOGS[run]), header_only=True).eval.packages["inspect_ai"]
        assert f"with inspect_ai {version}" in re.sub(r"\s+", " ", script)


def test_a_call_that_every_approver_escalated_is_denied(tmp_path):
    # inspect_ai records the policy's rejection of such a call; a log that lost that event still says
    # what happened: the call was rejected (inspect_ai/approval/_policy.py, policy_approver)
    log = read_eval_log(str(LOGS["chain"]))
    sample = next(s for s in log.samples if s.id == "refund-9000")
    assert [e.approver for e in sample.events if isinstance(e, ApprovalEvent)] == ["supervisor", "human_desk",
                                                                                  "policy"]
    sample.events = [e for e in sample.events if not (isinstance(e, ApprovalEvent) and e.approver == "policy")]
    log.samples = [sample]
    path = tmp_path / "escalated.eval"
    write_eval_log(log, str(path))
    (conversation,), _ = read_conversations(path)
    (call,) = conversation["tool_calls"]
    assert call["approval"] == {"decision": "denied", "approver": "policy"} and call["failed"] is True


def test_approval_escalations_keep_the_inline_decisions():
    # with approval_escalation, each escalated call gets an escalation call before it; the inline decisions
    # stay on the calls they are about
    expected = expected_run("chain")
    samples = {f"{s.id}:{s.epoch}": s for s in read_eval_log(str(LOGS["chain"])).samples}
    conversations, _ = read_conversations(LOGS["chain"], policy=POLICY, approval_escalation=True)
    for conversation in conversations:
        calls, _ = expected[conversation["conversation_id"]]
        sample = samples[conversation["conversation_id"]]
        escalated = {e.call.id for e in sample.events if isinstance(e, ApprovalEvent) and e.decision == "escalate"}
        want = []
        for call in calls:
            if call["id"] in escalated:
                want.append(("transfer_to_human", None))
            want.append((call["name"], call["approval"]))
        assert [(c["name"], c.get("approval")) for c in conversation["tool_calls"]] == want
        assert conversation["metadata"]["approval_escalations"] == len(escalated)


@pytest.mark.parametrize("run", RUNS)
def test_score_command_counts_the_approval_statuses(run, tmp_path):
    expected = expected_run(run)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(LOGS[run]), "--policy", str(POLICY_FILE),
                           "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    approval = json.loads((out / "summary.json").read_text())["approval"]
    scored = [want for _, want in expected.values() if want["a"] is not None]
    statuses = [status for want in scored for status in want["approval"]]
    assert approval["n"] == len(scored) and approval["errors"] == sum(want["a"] for want in scored)
    assert approval["gated_calls"] == len(statuses)
    assert {k: v for k, v in approval["statuses"].items() if v} == {s: statuses.count(s) for s in set(statuses)}
    causes = [want["approval_cause"] for want in scored if want["approval_cause"]]
    assert {k: v for k, v in approval["causes"].items() if v} == {c: causes.count(c) for c in set(causes)}
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    for line in lines:
        _, want = expected[line["conversation_id"]]
        assert {k: line[k] for k in want} == want


def test_calls_that_share_an_id_get_their_own_decisions(tmp_path):
    # a model may repeat a tool call id (some providers name a call by its function): the n-th call with an id
    # gets the n-th decision on it. The log is the limit run's, with both refunds of one sample given one id.
    log = read_eval_log(str(LOGS["limit"]))
    sample = next(s for s in log.samples if s.id == "refund-800-split")
    want = [call["approval"] for call in inspect_calls(sample)]
    assert [approval["decision"] for approval in want] == ["denied", "granted"]
    for message in sample.messages:
        for call in (message.tool_calls or []) if message.role == "assistant" else []:
            call.id = "issue_refund"
        if message.role == "tool":
            message.tool_call_id = "issue_refund"
    for event in sample.events:
        if isinstance(event, ApprovalEvent):
            event.call.id = "issue_refund"
    log.samples = [sample]
    path = tmp_path / "repeated_ids.eval"
    write_eval_log(log, str(path))
    (conversation,), _ = read_conversations(path)
    assert [call["approval"] for call in conversation["tool_calls"]] == want
    assert [call.get("failed", False) for call in conversation["tool_calls"]] == [True, False]
