"""The OpenAI Agents SDK's approvals read as inline decisions and scored (SPEC section 3A), on files the SDK wrote.

``tests/data/readers/make_openai_agents_logs.py`` ran a scripted assistant with openai-agents 0.24.0 whose tool
``issue_refund`` needs approval, approved and rejected its interruptions, and saved each run's ``RunState``
(``openai_agents/NAME.json``, format ``openai-agents``) and its ``to_input_list()`` (``openai_agents_items.jsonl``,
format ``openai-responses``). The tests read the files without the SDK; where it is installed, the decisions are
also read with the SDK's own API (``RunState.from_string``, ``is_tool_approved``, ``get_interruptions``) and
compared call by call.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from escalation.estimators.metric import score_conversation, score_records
from escalation.estimators.records import InputError, Policy, Records, detect_format, read_conversations

DATA = Path(__file__).parents[1] / "data" / "readers"
STATES = DATA / "openai_agents"
ITEMS = DATA / "openai_agents_items.jsonl"
RUNS = ("refund-split", "refund-always", "refund-custom-reject", "refund-pending", "refund-followup")
POLICY_DATA = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
               "action_tools": ["issue_refund"], "gated_tools": ["issue_refund"]}
#: SPEC 3A's statuses of each run's gated calls, in record order. The state records every decision of its run
#: (an undecided interruption is ``unknown``, read as granted; ``refund-followup``'s refund was rejected in an
#: earlier run: its output, the SDK's rejection message, says so). The input list records only a rejection
#: with the SDK's own message: an approved call, and a rejection with the deployment's message, leave no trace
#: (so ``refund-split``'s granted refund, after the denied one, reads as ``defied``).
STATE_STATUSES = {"refund-split": ["denied", "approved"], "refund-always": ["approved", "approved"],
                  "refund-custom-reject": ["denied"], "refund-pending": ["approved"], "refund-followup": ["denied"]}
ITEM_STATUSES = {"refund-split": ["denied", "defied"], "refund-always": ["unapproved", "unapproved"],
                 "refund-custom-reject": ["unapproved"], "refund-pending": ["unapproved"],
                 "refund-followup": ["denied"]}


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    path = tmp_path_factory.mktemp("policy") / "policy.json"
    path.write_text(json.dumps(POLICY_DATA))
    return path


def read_states() -> dict:
    out = {}
    for run in RUNS:
        conversations, fmt = read_conversations(STATES / f"{run}.json")
        assert fmt == "openai-agents" and len(conversations) == 1
        out[run] = conversations[0]
    return out


def decisions(conversation: dict) -> list:
    """``(name, decision, failed)`` of each call; the decision is None without an inline decision, ``"?"`` for
    an inline decision with none recorded."""
    return [(call["name"], (call["approval"]["decision"] or "?") if "approval" in call else None,
             call.get("failed", False)) for call in conversation["tool_calls"]]


def test_the_state_gives_each_call_the_decision_of_its_run():
    states = read_states()
    assert {run: c["conversation_id"] for run, c in states.items()} == {run: run for run in RUNS}
    assert decisions(states["refund-split"]) == [
        ("get_order", None, False), ("get_order", None, False), ("issue_refund", "denied", True),
        ("issue_refund", "granted", False), ("transfer_to_human", None, False)]
    # always_approve: one sticky grant covers the later call that never stopped
    assert decisions(states["refund-always"]) == [("issue_refund", "granted", False)] * 2
    assert decisions(states["refund-custom-reject"])[0] == ("issue_refund", "denied", True)
    assert decisions(states["refund-pending"]) == [("issue_refund", "?", False)]
    assert decisions(states["refund-followup"]) == [("issue_refund", "denied", True), ("transfer_to_human", None,
                                                                                         False)]
    assert [c["assistant_turns"] for c in states.values()] == [1, 1, 1, 1, 2]
    assert all(call.get("approval", {}).get("approver") is None for c in states.values() for call in c["tool_calls"])
    assert states["refund-split"]["metadata"]["schema_version"] == "1.21"


def test_the_input_list_gives_only_the_sdk_rejection_message():
    conversations, fmt = read_conversations(ITEMS)
    assert fmt == "openai-responses"
    read = {c["conversation_id"]: decisions(c) for c in conversations}
    assert read["refund-split"][2:4] == [("issue_refund", "denied", True), ("issue_refund", None, False)]
    assert read["refund-custom-reject"][0] == ("issue_refund", None, False)
    assert read["refund-followup"][0] == ("issue_refund", "denied", True)
    # the same calls in the same turns as the state's
    states = read_states()
    for c in conversations:
        state = states[c["conversation_id"]]
        assert [(k["turn"], k["name"]) for k in c["tool_calls"]] == [(k["turn"], k["name"]) for k in
                                                                      state["tool_calls"]]


def _plain(value):
    if isinstance(value, tuple | list):
        return list(value)
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else value


@pytest.mark.parametrize("source", ["state", "items"])
def test_both_scorers_give_spec_3a_statuses(source):
    policy = Policy.from_dict(POLICY_DATA)
    if source == "state":
        conversations, expected = list(read_states().values()), STATE_STATUSES
    else:
        conversations, expected = read_conversations(ITEMS)[0], ITEM_STATUSES
    frame = score_records(Records.from_conversations(conversations), policy).set_index("conversation_id")
    for conversation in conversations:
        conversation_id = conversation["conversation_id"]
        want = expected[conversation_id]
        errors = [status for status in want if status not in ("approved", "denied")]
        for scored in (score_conversation(conversation, policy), frame.loc[conversation_id]):
            assert _plain(scored["approval"]) == want, conversation_id
            assert _plain(scored["a"]) == int(bool(errors)), conversation_id
            assert _plain(scored["approval_cause"]) == (errors[0] if errors else None), conversation_id


def test_score_reads_a_folder_of_states(policy, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(STATES), "--policy", str(policy),
                           "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(openai-agents)" in done.stdout
    summary = json.loads((out / "summary.json").read_text())["approval"]
    assert summary["statuses"]["approved"] == 4 and summary["statuses"]["denied"] == 3
    assert summary["errors"] == 0 and summary["n"] == 5 and summary["unknown_decisions"] == 1


def _state(tmp_path, run: str, change) -> Path:
    state = json.loads((STATES / f"{run}.json").read_text())
    change(state)
    path = tmp_path / f"{run}.json"
    path.write_text(json.dumps(state))
    return path


@pytest.mark.parametrize("version", ["1.22", "2.0", 1.21, None])
def test_an_unknown_schema_version_is_refused(tmp_path, policy, version):
    path = _state(tmp_path, "refund-split", lambda state: state.update({"$schemaVersion": version}))
    with pytest.raises(InputError, match=r"\$schemaVersion.*not one this reader knows"):
        read_conversations(path, format="openai-agents")
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(path), "--format", "openai-agents",
                           "--policy", str(policy)], capture_output=True, text=True)
    assert done.returncode == 2
    error = done.stderr.strip()
    assert "\n" not in error and str(path) in error and "$schemaVersion" in error


def test_a_sticky_decision_binds_to_its_agent(tmp_path):
    def other_agent(state):
        state["context"]["function_tool_approvals"][0]["agent"] = {"name": "billing"}
    conversations, _ = read_conversations(_state(tmp_path, "refund-always", other_agent))
    assert decisions(conversations[0]) == [("issue_refund", None, False)] * 2


def test_a_state_file_is_recognised_only_by_its_keys(tmp_path):
    assert detect_format(STATES / "refund-split.json") == "openai-agents"
    path = _state(tmp_path, "refund-split", lambda state: state.pop("generated_items"))
    with pytest.raises(InputError, match="is missing"):  # read as another format, which finds no conversation id
        read_conversations(path)
    with pytest.raises(InputError, match=r"expected an OpenAI Agents SDK RunState.*generated_items"):
        read_conversations(path, format="openai-agents")


def _responses(tmp_path, *items) -> list:
    record = {"conversation_id": "c", "items": [{"role": "user", "content": "Refund order 7."}, *items]}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return read_conversations(path, format="openai-responses")[0][0]


def _call(call_id, name="issue_refund"):
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def _output(call_id, output):
    return {"type": "function_call_output", "call_id": call_id, "output": output}


@pytest.mark.parametrize("output", ["Tool execution was not approved", "Tool execution was not approved. ",
                                    "tool execution was not approved.", "Error: Tool execution was not approved.",
                                    ["Tool execution was not approved."]])
def test_only_the_exact_rejection_message_is_a_denial(tmp_path, output):
    assert decisions(_responses(tmp_path, _call("a"), _output("a", output))) == [("issue_refund", None, False)]


def test_a_rejected_handoff_is_not_an_escalation(tmp_path):
    conversation = _responses(tmp_path, _call("a", "transfer_to_human"),
                              _output("a", "Tool execution was not approved."),
                              _output("b", "Tool execution was not approved."))
    # the rejection of a call missing from the log implies that call (SPEC section 1), denied too
    assert decisions(conversation) == [("transfer_to_human", "denied", True), (None, "denied", True)]
    scored = score_conversation({**conversation, "label": "ESC"}, Policy.from_dict(POLICY_DATA))
    assert scored["escalated"] is False and scored["failed_escalations"] == 1


def test_the_sdk_reads_the_same_decisions():
    pytest.importorskip("agents")
    from agents import Agent, function_tool
    from agents.items import ToolCallItem
    from agents.run_state import RunState
    from agents.tool import DEFAULT_APPROVAL_REJECTION_MESSAGE

    @function_tool
    def get_order(order_id: int) -> str:
        """Look an order up."""

    @function_tool(needs_approval=True)
    def issue_refund(order_id: int, amount: float) -> str:
        """Refund an amount on an order."""

    @function_tool
    def transfer_to_human(reason: str) -> str:
        """Pass the case to a person."""

    agent = Agent(name="support", tools=[get_order, issue_refund, transfer_to_human])
    answers = {True: "granted", False: "denied"}
    for run, conversation in read_states().items():
        state = asyncio.run(RunState.from_string(agent, (STATES / f"{run}.json").read_text()))
        pending = {item.raw_item.call_id for item in state.get_interruptions()}
        rejected = {item["call_id"] for item in state._original_input if item.get("type") == "function_call_output"
                    and item["output"] == DEFAULT_APPROVAL_REJECTION_MESSAGE}
        want = [(item["name"], "denied" if item["call_id"] in rejected else None, item["call_id"] in rejected)
                for item in state._original_input if item.get("type") == "function_call"]
        for item in state._generated_items:
            if isinstance(item, ToolCallItem):
                raw = item.raw_item
                answer = answers.get(state._context.is_tool_approved(raw.name, raw.call_id))
                want.append((raw.name, answer or ("?" if raw.call_id in pending else None), answer == "denied"))
        assert decisions(conversation) == want, run
