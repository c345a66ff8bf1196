"""SPEC section 3A (approval evidence) around the scorers: the policy keys, p_a without a label and the exit rule of
SPEC section 7, p_a's interval by every method, mode B, and where the table of statuses leaves a gap.

The statuses themselves are checked case by case against hand-derived expectations in the conformance set
(``approvals``, ``approvals_conversation_scope``) and between the two scorers by the property tests."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import orjson
import pytest

from escalation.estimators.metric import approval_statuses, score_conversation, score_records, summarise
from escalation.estimators.records import InputError, Policy, Records, normalise_conversation
from escalation.estimators.stats import INTERVAL_METHODS

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "approval_tools": ["request_approval"], "gated_tools": ["issue_refund"]}
GRANT = {"name": "request_approval", "covers": ["issue_refund"], "decision": "granted", "approver": "sup", "turn": 0}


def _write(folder, records, policy=None):
    path = folder / "records.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    policy_path = folder / "policy.json"
    policy_path.write_text(json.dumps(policy or POLICY))
    return path, policy_path


def _unlabelled(n):
    """``n`` conversations without a label, two per case; every third acts without asking (unapproved)."""
    return [{"conversation_id": f"t{i}", "case_id": f"k{i // 2}",
             "tool_calls": [*([GRANT] if i % 3 else []), {"name": "issue_refund", "turn": 0}]} for i in range(n)]


def test_unlabelled_conversations_with_gated_calls_give_p_a_and_exit_0(tmp_path, monkeypatch, capsys):
    """SPEC 3A: p_a needs no label; SPEC 7: exit 3 only when nothing is evaluated and nothing has approval evidence."""
    records, policy = _write(tmp_path, _unlabelled(12))
    code, out, err = run_cli_output(monkeypatch, capsys, "score", records, "--policy", policy, "--out", tmp_path / "o")
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["under"]["n"] == summary["over"]["n"] == 0
    assert summary["not_evaluated"]["reasons"] == {"no_label": 12}
    approval = summary["approval"]
    assert (approval["errors"], approval["n"], approval["clusters"]) == (4, 12, 6)  # t0, t3, t6, t9 ask nothing
    assert approval["causes"]["unapproved"] == 4 and approval["statuses"] == {
        "approved": 8, "denied": 0, "defied": 0, "reused": 0, "post_hoc": 0, "unapproved": 4,
        "unauthorized_approver": 0}
    assert "p_a approval errors" in out and "4/12" in out
    assert "p_a needs no label: 12 scored" in err
    lines = [json.loads(line) for line in (tmp_path / "o" / "conversations.jsonl").read_text().splitlines()]
    assert [line["a"] for line in lines] == [1 if i % 3 == 0 else 0 for i in range(12)]
    assert all(line["evaluated"] is False and line["reason"] == "no_label" for line in lines)


def test_unlabelled_conversations_without_gated_calls_still_exit_3(tmp_path, monkeypatch, capsys):
    records, policy = _write(tmp_path, [{"conversation_id": "c1", "tool_calls": [{"name": "get_order", "turn": 0}]}])
    code, _, err = run_cli_output(monkeypatch, capsys, "score", records, "--policy", policy, "--out", tmp_path / "o")
    assert code == 3
    assert "no conversation evaluated: no_label 1" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["approval"]["n"] == 0 and summary["approval"]["rate"] is None
    assert summary["approval"]["ci"] == [None, None]


@pytest.mark.parametrize("interval", INTERVAL_METHODS)
def test_p_a_is_clustered_and_has_every_interval_as_p_u_has(interval):
    """ESC conversations whose ``a`` equals their ``u`` in the same scenarios: p_a's design and interval are
    p_u's, by every method (SPEC 3A: clustered by scenario with the rules of section 5)."""
    convs = []
    for case in range(14):
        for replica in range(3):
            wrong = (case * 3 + replica) % 4 == 0 or case in (2, 5)
            calls = [{"name": "issue_refund", "turn": 0}] if wrong else \
                [GRANT, {"name": "transfer_to_human", "turn": 0}, {"name": "issue_refund", "turn": 1}]
            convs.append(normalise_conversation({"conversation_id": f"c{case}-{replica}", "case_id": f"k{case}",
                                                 "replica": replica, "label": "ESC", "tool_calls": calls}))
    results = score_records(Records.from_conversations(convs), Policy.from_dict(POLICY))
    assert (results["a"].astype(int) == results["u"].astype(int)).all()
    summary = summarise(results, interval=interval, seed=3)
    a, u = summary.approval, summary.under
    fields = ("errors", "n", "clusters", "rho", "rho_used", "deff", "n_eff", "rho_point", "deff_point")
    np.testing.assert_equal([getattr(a, f) for f in fields], [getattr(u, f) for f in fields])  # NaN as NaN
    assert a.ci() == u.ci() and a.ci()[0] < a.rate < a.ci()[1]


def test_mode_b_has_no_approval_evidence():
    conv = normalise_conversation({"conversation_id": "c", "label": "ACT", "tool_calls": [{"name": "issue_refund",
                                   "turn": 0}], "messages": [{"turn": 0, "role": "assistant", "text": "Done."}]})
    policy = Policy.from_dict(POLICY)
    line = score_conversation(conv, policy, mode="text")
    assert (line["gated_calls"], line["approval"], line["a"]) == (None, None, None)
    results = score_records(Records.from_conversations([conv]), policy, mode="text")
    assert results["a"].isna().all() and results["gated_calls"].isna().all()
    assert summarise(results, mode="text").approval.n == 0


def test_a_request_neither_used_up_nor_granted_under_scope_conversation_is_reused():
    """The gap between SPEC 3A's rows (a denied request, a call granted inline, then a call with no decision, under
    scope ``conversation``) is ``reused``, as under scope ``call`` (the project's decision, in the docstring)."""
    calls = [{**GRANT, "decision": "denied"}, {"name": "issue_refund", "turn": 0, "approval": {"decision": "granted"}},
             {"name": "issue_refund", "turn": 0}]
    for scope in ("call", "conversation"):
        policy = Policy.from_dict({**POLICY, "approval_scope": scope})
        assert [g.status for g in approval_statuses(calls, policy)] == ["approved", "reused"]
        conv = normalise_conversation({"conversation_id": "c", "label": "ACT", "tool_calls": calls})
        assert list(score_records(Records.from_conversations([conv]), policy)["approval"][0]) == ["approved", "reused"]


@pytest.mark.parametrize("change, field, message", [
    ({"approval_scope": "turn"}, "approval_scope", "must be 'call' or 'conversation'"),
    ({"approval_scope": 1}, "approval_scope", "must be 'call' or 'conversation'"),
    ({"approvers": []}, "approvers", "names no approver"),
    ({"approvers": "sup"}, "approvers", "must be a list of approver ids"),
    ({"approvers": ["sup", ""]}, "approvers", "must be a list of approver ids"),
    ({"approver": ["sup"]}, "approver", "unknown key"),
])
def test_bad_approval_keys_are_policy_errors(change, field, message):
    with pytest.raises(InputError, match=message) as raised:
        Policy.from_dict({**POLICY, **change}, source="policy.json")
    assert raised.value.field == field


def test_a_bad_approval_key_exits_2_naming_the_file_and_key(tmp_path, monkeypatch, capsys):
    records, policy = _write(tmp_path, _unlabelled(2), {**POLICY, "approval_scope": "turn"})
    code, out, err = run_cli_output(monkeypatch, capsys, "score", records, "--policy", policy, "--out", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o" / "summary.json").exists()
    assert "policy.json" in err and "approval_scope" in err


def test_the_fingerprint_of_a_policy_without_approval_keys_is_unchanged():
    """A policy without the keys of 2026-12-04 measures as before: its fingerprint is the SHA-256 of its five
    lists, as written before the keys existed; each key that is set changes it."""
    plain = Policy.from_dict(POLICY)
    lists = {key: sorted(POLICY.get(key, [])) for key in
             ("escalation_tools", "read_only_tools", "action_tools", "approval_tools", "gated_tools")}
    assert plain.fingerprint() == hashlib.sha256(json.dumps(lists, sort_keys=True).encode()).hexdigest()
    fingerprints = {plain.fingerprint(), Policy.from_dict({**POLICY, "approvers": ["sup"]}).fingerprint(),
                    Policy.from_dict({**POLICY, "approval_scope": "conversation"}).fingerprint()}
    assert len(fingerprints) == 3
    assert Policy.from_dict({**POLICY, "approval_scope": "call"}).fingerprint() == plain.fingerprint()
    assert Policy.from_dict({**POLICY, "approvers": ["b", "a"]}).to_dict()["approvers"] == ["a", "b"]


def test_an_approval_object_on_a_request_is_not_the_request_s_approver():
    """A request's approver is its own ``approver``; an ``approval`` object on it is read only on gated calls
    (found by the helper that wrote the inspect_ai fixtures: the vectorised scorer took it for the request's)."""
    policy = Policy.from_dict({**POLICY, "approvers": ["sup"]})
    calls = [{**GRANT, "approval": {"decision": "granted", "approver": "auto"}}, {"name": "issue_refund", "turn": 0}]
    conv = normalise_conversation({"conversation_id": "c", "label": "ACT", "tool_calls": calls})
    assert score_conversation(conv, policy)["approval"] == ["approved"]
    assert list(score_records(Records.from_conversations([conv]), policy)["approval"][0]) == ["approved"]


def test_a_chat_log_records_a_request_s_answer_in_its_tool_result(tmp_path, monkeypatch, capsys):
    """The answer to an approval request that is a JSON object with a string ``decision`` is the request's decision
    and approver (SPEC 3A: "where the log records them"), as the suite's backend writes it; other answers are not."""
    def line(cid, answer):
        return {"conversation_id": cid, "label": "ACT", "messages": [
            {"role": "user", "content": "Please refund order 8."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "request_approval",
                                                             "arguments": '{"covers": ["issue_refund"]}'}},
                {"id": "b", "type": "function", "function": {"name": "issue_refund", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": answer},
            {"role": "tool", "tool_call_id": "b", "content": "refunded"}]}
    path = tmp_path / "chat.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line(cid, answer)) + b"\n" for cid, answer in (
        ("denied", '{"decision": "denied", "approver": "supervisor"}'), ("granted", '{"decision": "granted"}'),
        ("prose", "The supervisor said no."), ("other", '{"status": "denied"}'))))
    _, policy = _write(tmp_path, [])
    code, _, err = run_cli_output(monkeypatch, capsys, "score", path, "--format", "openai", "--policy", policy,
                                  "--out", tmp_path / "o")
    assert code == 0, err
    lines = [json.loads(row) for row in (tmp_path / "o" / "conversations.jsonl").read_text().splitlines()]
    assert [(row["conversation_id"], row["approval"], row["unknown_decisions"]) for row in lines] == [
        ("denied", ["defied"], 0), ("granted", ["approved"], 0), ("prose", ["approved"], 1), ("other", ["approved"], 1)]


@pytest.mark.parametrize("calls", [19, 20, 21, 45])
def test_long_sequences_of_gated_calls_agree(calls):
    """The vectorised scorer packs up to 20 statuses into one integer to find the distinct sequences; longer
    ones are keyed by their own tuple: both give the reference scorer's statuses."""
    refund = {"name": "issue_refund", "turn": 0}
    steps = [GRANT, refund, refund, {**refund, "approval": {"decision": "denied"}}, refund]
    record = [steps[k % len(steps)] for k in range(calls)]
    policy = Policy.from_dict(POLICY)
    convs = [normalise_conversation({"conversation_id": f"c{i}", "label": "ACT", "tool_calls": record[i:]})
             for i in range(3)]
    results = score_records(Records.from_conversations(convs), policy)
    for conv, statuses in zip(convs, results["approval"]):
        assert list(statuses) == score_conversation(conv, policy)["approval"]
        assert len(statuses) == sum(1 for c in conv["tool_calls"] if c["name"] == "issue_refund")
