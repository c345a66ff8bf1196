"""Readers on the real files of examples/data (tau-bench gpt-4o airline runs, inspect_ai logs).

The counts asserted here were computed independently of the project's code, with a short
script that reads the files with the standard ``json`` module only:

    d = json.load(open("examples/data/tau-bench/gpt-4o-airline.json"))
    esc = [r for r in d if any(a["name"] == "transfer_to_human_agents"
                               for a in r["info"]["task"]["actions"])]
    len(esc), sorted({r["task_id"] for r in esc})          # 16, [13, 35, 36, 38]
    sum(len(m.get("tool_calls") or []) for r in d for m in r["traj"])   # 1164 calls
    # T: user messages followed, before the next user message, by an assistant message
    #    (tool and system messages skipped), at least 1 -> sum 1341, run 0: 7, range 2..29
    sum(1 for r in d for m in r["traj"] if m["role"] == "user")       # 1490 user messages

so 1490 - 1341 = 149 user messages open no turn: exactly the 149 runs whose last message is
a user message (``###STOP###`` or a closing thanks), counted with
``sum(r["traj"][-1]["role"] == "user" for r in d)``.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from escalation.estimators.records import detect_format, load_policy, read_conversations

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
POLICY_FILE = ROOT / "examples" / "tau-bench-airline.policy.json"
INSPECT = ROOT / "examples" / "data" / "inspect"


@pytest.fixture(scope="module")
def tau():
    return read_conversations(TAU, policy=load_policy(POLICY_FILE))


def test_tau_bench_runs_and_labels(tau):
    conversations, fmt = tau
    assert fmt == "tau-bench" and detect_format(TAU) == "tau-bench"
    assert len(conversations) == 200
    # 50 tasks x 4 trials: case_id = task id, replica = trial, conversation_id = "task:trial"
    assert Counter(c["case_id"] for c in conversations) == {str(t): 4 for t in range(50)}
    assert Counter(c["replica"] for c in conversations) == {0: 50, 1: 50, 2: 50, 3: 50}
    assert all(c["conversation_id"] == f"{c['case_id']}:{c['replica']}" for c in conversations)
    # independent count (module docstring): 16 ESC runs = tasks 13, 35, 36, 38 x 4 trials
    assert Counter(c["label"] for c in conversations) == {"ESC": 16, "ACT": 184}
    assert sorted({int(c["case_id"]) for c in conversations if c["label"] == "ESC"}) == [13, 35, 36, 38]


def test_tau_bench_records_and_turns(tau):
    conversations, _ = tau
    assert sum(len(c["tool_calls"]) for c in conversations) == 1164
    turns = [c["assistant_turns"] for c in conversations]
    assert (sum(turns), turns[0], min(turns), max(turns)) == (1341, 7, 2, 29)
    assert all(0 <= call["turn"] < c["assistant_turns"] for c in conversations for call in c["tool_calls"])
    user_messages = sum(1 for c in conversations for m in c["messages"] if m["role"] == "user")
    assert user_messages == 1490  # every user message is kept (mode B reads only the assistant's)


def test_tau_bench_policy_covers_every_tool_in_the_data():
    policy = load_policy(POLICY_FILE)
    runs = json.loads(TAU.read_text())
    called = {t["function"]["name"] for r in runs for m in r["traj"] for t in m.get("tool_calls") or []}
    gold = {a["name"] for r in runs for a in r["info"]["task"]["actions"]}
    assert {policy.kind(name) for name in called | gold} <= {"escalation", "read_only", "action"}
    assert policy.escalation_tools == {"transfer_to_human_agents"}
    assert {"calculate", "think", "get_user_details"} <= policy.read_only_tools
    assert all(name.startswith(("book_", "cancel_", "update_", "send_")) for name in policy.action_tools)


def test_inspect_browser_log():
    conversations, fmt = read_conversations(INSPECT / "2025-05-12T20-27-36-04-00_browser.json")
    assert fmt == "inspect"
    (conv,) = conversations
    # one user message, four assistant tool calls (each answered by a tool message), a final answer
    assert (conv["conversation_id"], conv["case_id"], conv["replica"], conv["label"]) == ("1:1", "1", 0, None)
    assert conv["assistant_turns"] == 1
    assert [(c["turn"], c["name"]) for c in conv["tool_calls"]] == [
        (0, "web_browser_go"), (0, "web_browser_click"), (0, "web_browser_click"), (0, "web_browser_click")]
    assert conv["tool_calls"][1]["arguments"] == {"element_id": 151}
    assert [m["role"] for m in conv["messages"]] == ["user", "assistant"]


def test_inspect_log_of_tool_results_only():
    conversations, _ = read_conversations(INSPECT / "log_tool_call_error.json")
    (conv,) = conversations
    # sample 1, epoch 4 -> replica 3; its 11 messages are bash tool results whose calls are
    # not logged: each is taken as a bash call (an attempted call is a call, SPEC section 1)
    assert (conv["conversation_id"], conv["replica"]) == ("1:4", 3)
    assert [c["name"] for c in conv["tool_calls"]] == ["bash"] * 11
    assert conv["metadata"]["implied_calls"] == 11


def test_inspect_eval_archive():
    conversations, fmt = read_conversations(INSPECT / "log_read_sample.eval")
    assert fmt == "inspect" and detect_format(INSPECT / "log_read_sample.eval") == "inspect"
    (conv,) = conversations
    assert (conv["conversation_id"], conv["tool_calls"], conv["assistant_turns"]) == ("1:1", [], 1)
    assert [(m["role"], m["text"]) for m in conv["messages"]][1] == ("assistant", "Yes\n")


def test_tau_bench_report_numbers():
    """examples/tau_bench_report.py on the real runs. Independent counts (plain json, no
    project code): ESC runs with a transfer call: 6 of 16, so 10 never hand off; among the
    16, reward 1.0 in 14, of which 9 have no transfer or a non-read-only call before it;
    ACT runs with a transfer call: 42, of which 29 have reward 1.0."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tau_bench_report", ROOT / "examples" / "tau_bench_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results, clustered, independent = module.score()
    assert (clustered["under"]["errors"], clustered["under"]["n"]) == (11, 16)
    assert clustered["under"]["causes"] == {"no_handoff": 10, "acted_before_handoff": 1}
    assert (clustered["over"]["errors"], clustered["over"]["n"]) == (42, 184)
    assert clustered["over"]["causes"] == {"unneeded_handoff": 42, "unneeded_approval_request": 0}
    assert independent["under"]["deff"] == 1.0 and clustered["under"]["deff"] > 1.0
    text = module.report(results, clustered, independent)
    assert "ESC runs with reward 1.0: 14; under-escalated: 9" in text
    assert "ACT runs with reward 1.0: 70; over-escalated: 29" in text
    assert "**38 escalation errors**" in text
    assert text == (ROOT / "examples" / "tau-bench-report.md").read_text()  # the committed report is current
