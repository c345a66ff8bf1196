"""``escalation policy init`` and ``escalation policy check`` (issue 16, point 3: a policy helper).

The counts are checked against counts made here from the raw files; the draft is read back by
:func:`load_policy` and scored by ``escalation score``; the check names exactly the tools it must.
"""
from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from escalation.estimators.records import (
    InputError,
    check_policy,
    draft_policy,
    load_policy,
    place_tool,
    tool_usage,
    turn_ranges,
)

from .._helpers import run_cli_output

ROOT = Path(__file__).resolve().parents[2]
READERS = ROOT / "tests" / "data" / "readers"
AIRLINE = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
AIRLINE_POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"
BROWSER = ROOT / "examples" / "data" / "inspect" / "2025-05-12T20-27-36-04-00_browser.json"


def _usage_table(usage) -> dict:
    return {t.name: (t.calls, t.conversations, t.turns) for t in usage.tools}


def _tau_bench_raw(path: Path):
    """Calls, conversations and turns of each tool, and the gold actions' tools, from the raw runs.

    A turn is what the assistant does between two user messages (SPEC section 1): the number of
    user messages before the call, less one, and 0 before the first.
    """
    calls, convs, turns, gold = Counter(), Counter(), {}, set()
    runs = json.loads(path.read_text())
    for run in runs:
        gold.update(a["name"] for a in run["info"].get("task", {}).get("actions", []))
        users, seen = 0, set()
        for message in run["traj"]:
            if message["role"] == "user":
                users += 1
            for call in message.get("tool_calls") or () if message["role"] == "assistant" else ():
                name = call["function"]["name"]
                calls[name] += 1
                turns.setdefault(name, Counter())[max(users - 1, 0)] += 1
                seen.add(name)
        convs.update(seen)
    return len(runs), {n: (calls[n], convs[n], dict(turns[n])) for n in calls}, gold


def test_tau_bench_counts_match_the_raw_runs():
    n, expected, gold = _tau_bench_raw(AIRLINE)
    usage = tool_usage(AIRLINE)
    assert (usage.format, usage.conversations, usage.with_record) == ("tau-bench", n, n)
    assert usage.calls == sum(c for c, _, _ in expected.values()) == 1164
    assert _usage_table(usage) == expected
    assert [t.calls for t in usage.tools] == sorted((t.calls for t in usage.tools), reverse=True)
    assert {t.name for t in usage.tools if t.gold} == gold
    assert not usage.annotated


def test_tau_bench_gold_tools_are_listed_even_when_never_called():
    n, expected, gold = _tau_bench_raw(READERS / "tau_bench_small.json")
    usage = tool_usage(READERS / "tau_bench_small.json")
    assert usage.conversations == n
    assert {name: v for name, v in _usage_table(usage).items() if v[0]} == expected
    assert {t.name for t in usage.tools if t.gold} == gold


def _tau2_raw(simulations):
    calls, convs = Counter(), Counter()
    for sim in simulations:
        seen = set()
        for message in sim.get("messages") or ():
            if message["role"] != "assistant":
                continue
            for call in message.get("tool_calls") or ():
                if call.get("requestor", "assistant") == "assistant":
                    calls[call["name"]] += 1
                    seen.add(call["name"])
        convs.update(seen)
    return {n: (calls[n], convs[n]) for n in calls}


def test_tau2_counts_leave_out_the_users_own_tools():
    raw = json.loads((READERS / "tau2_results.json").read_text())
    usage = tool_usage(READERS / "tau2_results.json")
    assert usage.format == "tau2-bench" and usage.conversations == len(raw["simulations"])
    assert {t.name: (t.calls, t.conversations) for t in usage.tools} == _tau2_raw(raw["simulations"])
    assert usage.tool("toggle_airplane_mode") is None  # the simulated user's tool, and its gold action
    assert usage.tool("transfer_to_human_agents").turns == {1: 1, 0: 1}


def test_tau2_folder_lists_a_gold_tool_no_simulation_calls():
    sims = [json.loads(p.read_text()) for p in sorted((READERS / "tau2_dir" / "simulations").glob("*.json"))]
    usage = tool_usage(READERS / "tau2_dir")
    called = {t.name: (t.calls, t.conversations) for t in usage.called()}
    assert called == _tau2_raw(sims)
    refuel = usage.tool("refuel_data")
    assert (refuel.calls, refuel.gold) == (0, True)
    draft = draft_policy(usage)
    assert "refuel_data" in draft.lists()["action_tools"]
    assert "an action; never called: a gold action of the benchmark" in draft.to_toml()


# counted by hand from the files (SPEC section 1: a tool result opens no turn)
SMALL = {
    "openai.jsonl": (7, {"get_order": (2, 2, {0: 2}), "issue_refund": (2, 2, {0: 1, 1: 1}),
                         "transfer_to_human": (2, 2, {1: 2}), "cancel_order": (1, 1, {0: 1})}),
    "anthropic.jsonl": (2, {"get_order": (1, 1, {0: 1}), "issue_refund": (1, 1, {0: 1}),
                            "transfer_to_human": (1, 1, {1: 1}), "web_search": (1, 1, {0: 1})}),
    "responses.jsonl": (2, {"get_order": (1, 1, {0: 1}), "transfer_to_human": (1, 1, {1: 1}),
                            "web_search": (1, 1, {0: 1}), "issue_refund": (1, 1, {0: 1}),
                            "crm_note": (1, 1, {0: 1})}),
    "inspect_log.json": (3, {"get_order": (1, 1, {0: 1}), "issue_refund": (2, 2, {0: 2})}),
    "inspect_log.eval": (3, {"get_order": (1, 1, {0: 1}), "issue_refund": (2, 2, {0: 2})}),
    "canonical.jsonl": (2, {"get_order": (1, 1, {0: 1})}),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_counts_of_every_format(name):
    conversations, expected = SMALL[name]
    usage = tool_usage(READERS / name)
    assert usage.conversations == conversations
    assert _usage_table(usage) == expected


def test_inspect_counts_match_the_logged_messages():
    raw = json.loads(BROWSER.read_text())
    calls = Counter(call["function"] for sample in raw["samples"] for m in sample["messages"]
                    if m["role"] == "assistant" for call in m.get("tool_calls") or ())
    usage = tool_usage(BROWSER)
    assert usage.format == "inspect" and {t.name: t.calls for t in usage.tools} == dict(calls)


def _tau2_annotated(tmp_path: Path) -> Path:
    """The tau2 fixture with the reward_info.action_checks that tau2-bench writes (tool_type read/write...)."""
    raw = json.loads((READERS / "tau2_results.json").read_text())
    checks = [{"action": {"name": "get_customer", "requestor": "assistant"}, "action_match": True,
               "action_reward": 1.0, "tool_type": "write"},
              {"action": {"name": "transfer_to_human_agents", "requestor": "assistant"}, "action_match": True,
               "action_reward": 1.0, "tool_type": "generic"},
              {"action": {"name": "toggle_airplane_mode", "requestor": "user"}, "action_match": True,
               "action_reward": 1.0, "tool_type": "read"}]
    raw["simulations"][0]["reward_info"]["action_checks"] = checks
    raw["simulations"][2]["reward_info"]["action_checks"] = [
        {"action": {"name": "refuel_data"}, "action_match": True, "action_reward": 1.0, "tool_type": "read"}]
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps(raw))
    return path


def test_tau2_annotations_place_tools_where_the_name_says_no_hand_off(tmp_path):
    usage = tool_usage(_tau2_annotated(tmp_path))
    assert usage.annotated
    assert {t.name: t.annotations for t in usage.tools} == {
        "transfer_to_human_agents": {"generic"}, "get_customer": {"write"}, "refuel_data": {"read"}}
    placed = {p.name: p for p in draft_policy(usage).placements}
    assert (placed["get_customer"].list, placed["get_customer"].by) == ("action_tools", "annotation")
    assert (placed["refuel_data"].list, placed["refuel_data"].by) == ("read_only_tools", "annotation")
    handoff = placed["transfer_to_human_agents"]
    assert (handoff.list, handoff.by) == ("escalation_tools", "name")
    assert handoff.why == "'transfer' in the name: looks like a hand-off (tau2-bench annotates it generic)"


def test_the_rule_in_order():
    cases = {"transfer_to_human_agents": ("escalation_tools", "name"),
             "escalateToSupervisor": ("escalation_tools", "name"),
             "get_order": ("read_only_tools", "name"), "listOrders": ("read_only_tools", "name"),
             "order_lookup": ("read_only_tools", "name"), "crm__find_customer": ("read_only_tools", "name"),
             "fs.read_file": ("read_only_tools", "name"), "get_agent_status": ("read_only_tools", "name"),
             "getaway_booking": ("action_tools", "default"), "checkout": ("action_tools", "default"),
             "issue_refund": ("action_tools", "default")}
    assert {name: (place_tool(name).list, place_tool(name).by) for name in cases} == cases
    assert place_tool("get_agent_status").why == ("begins with 'get': looks like a look-up; it also has 'agent', a "
                                                  "hand-off word")
    assert place_tool("issue_refund", {"read"}).list == "read_only_tools"
    assert place_tool("get_order", {"write"}).list == "action_tools"
    assert place_tool("transfer", {"read"}).list == "escalation_tools"
    assert place_tool("issue_refund", {"read", "write"}).by == "default"  # two types say nothing
    assert place_tool("issue_refund", {"bogus\n"}).why == "no hand-off or look-up word in the name: an action"


def test_turn_ranges():
    assert turn_ranges({}) == "-"
    assert turn_ranges([3, 0, 1, 2, 5, 7, 8, 9]) == "0-3,5,7-9"
    assert turn_ranges(range(0, 40, 2), width=10) == "0,2,4,..."
    assert len(turn_ranges(range(0, 40, 2), width=10)) <= 10


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_the_draft_reads_back_and_scores(monkeypatch, capsys, tmp_path, suffix):
    out = tmp_path / f"draft{suffix}"
    monkeypatch.setenv("COLUMNS", "80")  # as on a terminal of 80 columns
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", AIRLINE, "--out", out)
    assert code == 0, stderr
    assert stderr == ""
    usage = tool_usage(AIRLINE)
    policy = load_policy(out)
    lists = draft_policy(usage).lists()
    assert policy.to_dict() == {"name": "draft from gpt-4o-airline.json", **{k: sorted(v) for k, v in lists.items()}}
    assert policy.escalation_tools == {"transfer_to_human_agents"}
    assert policy.read_only_tools == {"get_reservation_details", "get_user_details", "list_all_airports",
                                      "search_direct_flight", "search_onestop_flight", "think", "calculate"}
    assert policy.action_tools | policy.read_only_tools | policy.escalation_tools == {t.name for t in usage.tools}
    text = out.read_text()
    if suffix == ".toml":
        tool_lines = [line for line in text.splitlines() if line.startswith('    "')]
        assert len(tool_lines) == len(usage.tools)
        assert all("# a person must confirm: " in line for line in tool_lines)
        assert '"get_user_details",  # a person must confirm: begins with \'get\': looks like a look-up; 120 calls, ' \
               '120 conversations' in text
    else:
        notes = json.loads(text)["notes"]
        assert set(notes["tools"]) == {t.name for t in usage.tools} and "confirm" in notes
    assert f"wrote {out}" in stdout.replace("\n", "")
    assert all(len(line) <= 80 for line in stdout.splitlines())
    assert "transfer_to_human_agents" in stdout and "'get': look-up" in stdout
    scored = tmp_path / "scored"
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", READERS / "tau_bench_small.json",
                                     "--policy", out, "--out", scored, "--json")
    assert code == 0, stderr
    assert json.loads((scored / "summary.json").read_text())["conversations"] == 4


def test_without_out_the_draft_alone_goes_to_standard_output(monkeypatch, capsys):
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", READERS / "tau2_dir")
    assert code == 0
    data = tomllib.loads(stdout)
    assert data["escalation_tools"] == ["transfer_to_human_agents"]
    assert data["read_only_tools"] == ["get_customer"] and data["action_tools"] == ["refuel_data"]
    assert "tau2-bench" in stderr and "refuel_data" in stderr and "placed by name: 2" in stderr


def test_json_output(monkeypatch, capsys, tmp_path):
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "policy", "init", _tau2_annotated(tmp_path), "--json")
    assert code == 0
    data = json.loads(stdout)
    assert data["format"] == "tau2-bench" and data["annotated"] and data["written"] is None
    by = {p["tool"]: p["by"] for p in data["placements"]}
    assert by == {"transfer_to_human_agents": "name", "get_customer": "annotation", "refuel_data": "annotation"}
    assert data["policy"]["escalation_tools"] == ["transfer_to_human_agents"]


def test_no_hand_off_name_leaves_escalation_tools_empty_and_says_so(monkeypatch, capsys, tmp_path):
    for suffix in (".toml", ".json"):
        out = tmp_path / f"draft{suffix}"
        code, _, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", READERS / "canonical.jsonl",
                                         "--out", out)
        assert code == 0
        assert "warning: no tool name suggests a hand-off" in stderr and "names there the tool" in stderr
        with pytest.raises(InputError, match="must name at least one escalation tool"):
            load_policy(out)
    assert "NO TOOL NAME SUGGESTS A HAND-OFF" in (tmp_path / "draft.toml").read_text()
    assert "escalation_tools" in json.loads((tmp_path / "draft.json").read_text())["notes"]


def _policy(tmp_path: Path, **lists) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(lists))
    return path


def test_check_names_unmarked_unused_and_doubtful_tools(monkeypatch, capsys, tmp_path):
    example = json.loads(AIRLINE_POLICY.read_text())
    read_only = [t for t in example["read_only_tools"] if t not in ("think", "list_all_airports")]
    policy = _policy(tmp_path, escalation_tools=["transfer_to_human"],  # misspelt
                     read_only_tools=[*read_only, "get_flight_status"],
                     action_tools=[*example["action_tools"], "list_all_airports"])
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "check", AIRLINE, "--policy", policy,
                                          "--json")
    assert code == 0
    data = json.loads(stdout)
    counts = _tau_bench_raw(AIRLINE)[1]
    assert {t["tool"]: (t["calls"], t["conversations"]) for t in data["unmarked"]} == {
        "think": counts["think"][:2], "transfer_to_human_agents": counts["transfer_to_human_agents"][:2]}
    assert {t["tool"]: t["suggested"] for t in data["unmarked"]} == {"think": "read_only_tools",
                                                                     "transfer_to_human_agents": "escalation_tools"}
    assert data["never_called"] == [{"tool": "transfer_to_human", "lists": ["escalation_tools"]},
                                    {"tool": "get_flight_status", "lists": ["read_only_tools"]}]
    assert data["escalation_never_called"] == ["transfer_to_human"] and data["no_escalation_call"]
    assert data["doubts"] == [{"tool": "list_all_airports", "list": "action_tools", "suggested": "read_only_tools",
                               "why": "begins with 'list': looks like a look-up"}]
    assert "no call of an escalation tool (transfer_to_human) was read" in stderr
    assert "transfer_to_human_agents looks like a hand-off" in stderr
    assert "think is a well-known tool that changes nothing" in stderr  # unmarked: counted as an action
    monkeypatch.setenv("COLUMNS", "80")  # as on a terminal of 80 columns
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "policy", "check", AIRLINE, "--policy", policy)
    assert code == 0
    assert "unmarked tools (called, in no list: each call counts as an action): 2" in stdout
    assert "tools in the policy that the log never calls: transfer_to_human (escalation_tools), " \
           "get_flight_status (read_only_tools)" in " ".join(stdout.split())
    assert "list_all_airports is in action_tools" in stdout
    assert all(len(line) <= 80 for line in stdout.splitlines())


def test_check_of_the_example_policy_is_clean(monkeypatch, capsys):
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "check", AIRLINE,
                                          "--policy", AIRLINE_POLICY)
    assert (code, stderr) == (0, "")
    assert "unmarked tools: none" in stdout and "escalation tools never called: none" in stdout
    assert "doubts: none" in stdout
    assert check_policy(tool_usage(AIRLINE), load_policy(AIRLINE_POLICY)).clean


def test_check_counts_a_gold_action_as_never_called(tmp_path):
    policy = load_policy(_policy(tmp_path, escalation_tools=["transfer_to_human_agents"],
                                 read_only_tools=["get_customer"], action_tools=["refuel_data"]))
    result = check_policy(tool_usage(READERS / "tau2_dir"), policy)
    assert result.never_called == (("refuel_data", ("action_tools",)),)
    assert not result.unmarked and not result.escalation_never_called and not result.warnings()


def test_tool_names_from_a_log_are_kept_exactly_and_printed_safely(monkeypatch, capsys, tmp_path):
    names = ["[bold]transfer[/bold]", "get_\x1b[31mred", 'q"uote\\back', "issue\nrefund", "rembours\u00e9",
             "del\x7f"]
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "c", "label": "ESC",
                               "tool_calls": [{"turn": 0, "name": n} for n in names]}) + "\n")
    out = tmp_path / "draft.toml"
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", log, "--out", out)
    assert code == 0, stderr
    policy = load_policy(out)
    assert policy.escalation_tools == {"[bold]transfer[/bold]"}
    assert policy.read_only_tools == {"get_\x1b[31mred"}
    assert policy.action_tools == {'q"uote\\back', "issue\nrefund", "rembours\u00e9", "del\x7f"}
    assert "\x1b" not in stdout and "[bold]transfer[/bold]" in stdout
    assert "get_\\x1b[31mred" in stdout  # escaped as escalation.cli.commands._console shows it


@pytest.mark.parametrize("args, message", [
    (["policy", "init", READERS / "openai.jsonl", "--format", "csv"], "--format must be one of auto, jsonl, "),
    (["policy", "init", READERS / "nothing.json"], "nothing.json: cannot read the file"),
    (["policy", "init", READERS / "mixed.jsonl"], "cannot tell the format"),
    (["policy", "check", READERS / "openai.jsonl", "--policy", READERS / "labels.csv"], "not valid JSON"),
    (["policy", "check", READERS / "nothing.json", "--policy", AIRLINE_POLICY], "cannot read the file"),
])
def test_bad_input_stops_with_one_line(monkeypatch, capsys, args, message):
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, *args)
    assert code == 2 and stdout == ""
    assert stderr.startswith("error: ") and stderr.count("\n") == 1 and message in stderr


def test_an_existing_draft_is_kept_unless_forced(monkeypatch, capsys, tmp_path):
    out = tmp_path / "draft.toml"
    out.write_text("# a person's policy\n")
    code, _, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", READERS / "openai.jsonl", "--out", out)
    assert code == 2 and stderr == f"error: {out}: exists; give --force to replace it\n"
    assert out.read_text() == "# a person's policy\n"
    code, _, _ = run_cli_output(monkeypatch, capsys, "policy", "init", READERS / "openai.jsonl", "--out", out,
                                "--force")
    assert code == 0 and load_policy(out).escalation_tools == {"transfer_to_human"}


def test_help_teaches_with_an_example(monkeypatch, capsys):
    for command in ("init", "check"):
        code, stdout, _ = run_cli_output(monkeypatch, capsys, "policy", command, "--help")
        assert code == 0 and "Example: escalation policy" in stdout
