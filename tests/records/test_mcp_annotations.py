"""``escalation policy init`` reads MCP tool annotations from traces (issue 33, point 5).

``tests/data/readers/make_mcp_annotated_traces.py`` gave an MCP server (the MCP Python SDK's ``MCPServer``) the
annotations of its :data:`TOOLS`, listed and called its tools with a real MCP client, and wrote what three producers
log of the runs: OpenAI Responses records with an ``mcp_list_tools`` item (openai-python's types), an OpenAI Agents
SDK ``RunState`` of the first run, and pydantic-ai's OTLP spans (``model_request_parameters``). The expectations
come from that table and from the raw JSON read with the standard library, not from the code under test.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from escalation.estimators.records import Policy, check_policy, draft_policy, place_tool, tool_usage

DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
RESPONSES = DATA / "mcp" / "responses_mcp.jsonl"
OTLP = DATA / "mcp" / "pydantic_ai_otel.jsonl"
STATE = DATA / "mcp" / "openai_agents_state.json"
FILES = [RESPONSES, OTLP, STATE]

_spec = importlib.util.spec_from_file_location("make_mcp_annotated_traces", DATA / "make_mcp_annotated_traces.py")
_generator = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_generator)
TOOLS, CONVERSATIONS = _generator.TOOLS, _generator.CONVERSATIONS
ANNOTATED = {name: hints for name, hints in TOOLS.items() if hints}
CALLS = Counter(name for _, _, calls, _ in CONVERSATIONS for name, _ in calls)
FILE_CALLS = {RESPONSES: CALLS, OTLP: CALLS, STATE: Counter(name for name, _ in CONVERSATIONS[0][2])}

#: Where the draft puts each tool, from the annotations TOOLS gives it: readOnlyHint true to read_only_tools,
#: readOnlyHint false or destructiveHint true to action_tools; a hand-off name to escalation_tools whatever its
#: annotation. ``list_refund_rules``, never called and not annotated, is not in the log.
EXPECTED = {
    "escalation_tools": ["transfer_to_human"],
    "read_only_tools": ["get_order", "fetch_invoice", "search_kb"],
    "action_tools": ["cancel_order", "get_or_create_ticket", "issue_refund", "delete_account"],
}
DESTRUCTIVE = ["cancel_order", "issue_refund", "delete_account"]  # destructiveHint true, in the OTLP draft's order


def _listings(value):
    """Every ``mcp_list_tools`` item in ``value``."""
    if isinstance(value, dict):
        if value.get("type") == "mcp_list_tools":
            yield value
        for inner in value.values():
            yield from _listings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _listings(inner)


def _listed_annotations(path: Path) -> dict:
    """Tool name to the non-null annotations of every definition in the file, read with ``json`` alone: the
    ``mcp_list_tools`` items' ``tools[].annotations``, and pydantic-ai's ``model_request_parameters`` span
    attribute's ``function_tools[].metadata.annotations``."""
    found: dict = {}
    for line in path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]:
        record = json.loads(line)
        if path != OTLP:
            for item in _listings(record):
                for tool in item["tools"]:
                    found.setdefault(tool["name"], []).append(tool["annotations"])
            continue
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for attribute in span["attributes"]:
                        if attribute["key"] == "model_request_parameters":
                            for tool in json.loads(attribute["value"]["stringValue"])["function_tools"]:
                                metadata = tool["metadata"] or {}
                                found.setdefault(tool["name"], []).append(metadata.get("annotations"))
    return {name: [{k: v for k, v in (a or {}).items() if v is not None} or None for a in listed]
            for name, listed in found.items()}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_traces_hold_the_annotations_the_server_gave(path):
    listed = _listed_annotations(path)
    assert set(listed) == set(TOOLS)
    assert all(annotations == [TOOLS[name]] * len(annotations) for name, annotations in listed.items())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_tool_usage_reads_each_tool_s_hints_and_lists_the_annotated_tools_never_called(path):
    usage = tool_usage(path)
    assert {t.name: (t.mcp.hints, t.mcp.source) for t in usage.tools if t.mcp} == {
        name: (hints, path.name) for name, hints in ANNOTATED.items()}
    assert {t.name: t.calls for t in usage.tools} == {name: FILE_CALLS[path][name] for name in ANNOTATED}
    assert usage.mcp_annotated and not usage.annotated
    dumped = {tool["tool"]: tool["mcp_annotations"] for tool in usage.to_dict()["tools"]}
    assert dumped["get_order"] == {**ANNOTATED["get_order"], "source": path.name}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_draft_places_by_the_annotations_and_suggests_gating_destructive_tools(path):
    assert all(ANNOTATED[name].get("readOnlyHint") is True for name in EXPECTED["read_only_tools"])
    assert all(ANNOTATED[name].get("readOnlyHint") is False or ANNOTATED[name].get("destructiveHint") is True
               for name in EXPECTED["action_tools"])
    draft = draft_policy(tool_usage(path))
    lists = draft.lists()
    assert {key: sorted(lists[key]) for key in EXPECTED} == {key: sorted(v) for key, v in EXPECTED.items()}
    assert lists["gated_tools"] == [] and sorted(draft.destructive()) == sorted(DESTRUCTIVE)
    by = {p.name: p for p in draft.placements}
    assert by["transfer_to_human"].by == "name" and "MCP annotation" in by["transfer_to_human"].why
    assert by["fetch_invoice"].why.startswith(f"MCP annotation readOnlyHint=true in {path.name}: ")
    assert "not a guarantee" in by["fetch_invoice"].why
    assert "it outranks the name (begins with 'get'" in by["get_or_create_ticket"].why
    notes = draft.to_dict()["notes"]
    assert notes["tools"]["search_kb"].endswith(f"never called: its MCP server lists it in {path.name}")
    assert all(name in notes["gated_tools"] for name in DESTRUCTIVE)
    assert "or an MCP annotation (a hint of the tool's server, not a guarantee)" in draft.to_dict()["description"]


def test_an_annotation_outranks_a_look_up_name_but_not_a_hand_off():
    read = {t.name: t.mcp for t in tool_usage(RESPONSES).tools}
    assert place_tool("get_or_create_ticket").list == "read_only_tools"
    assert place_tool("get_or_create_ticket", mcp=read["get_or_create_ticket"]).list == "action_tools"
    assert place_tool("fetch_invoice").list == "action_tools"
    assert place_tool("fetch_invoice", mcp=read["fetch_invoice"]).list == "read_only_tools"
    handoff = place_tool("transfer_to_human", mcp=dataclasses.replace(read["fetch_invoice"], hints={
        "readOnlyHint": True}))
    assert (handoff.list, handoff.by) == ("escalation_tools", "name")
    quiet = place_tool("fetch_invoice", mcp=dataclasses.replace(read["fetch_invoice"], hints={
        "destructiveHint": False, "openWorldHint": True}))
    assert (quiet.list, quiet.by) == ("action_tools", "default")  # no hint that says read-only or writes


def _rewrite(path: Path, out: Path, change) -> Path:
    """A copy of a fixture with ``change(record)`` applied to each line's JSON."""
    out.write_text("".join(json.dumps(change(json.loads(line))) + "\n" for line in path.read_text().splitlines()))
    return out


def test_listings_that_disagree_drop_the_hint(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(RESPONSES, folder / "a.jsonl")

    def flip(record):  # the same server, later listing fetch_invoice as not read-only
        for item in record["output"]["output"]:
            for tool in item.get("tools") or ():
                if tool["name"] == "fetch_invoice":
                    tool["annotations"]["readOnlyHint"] = False
        return record

    _rewrite(RESPONSES, folder / "b.jsonl", flip)
    usage = tool_usage(folder)
    assert usage.tool("fetch_invoice").mcp.hints == {"openWorldHint": False}
    assert (usage.tool("get_order").mcp.hints, usage.tool("get_order").mcp.source) == (ANNOTATED["get_order"],
                                                                                        "a.jsonl")
    assert usage.tool("get_order").calls == 2 * CALLS["get_order"]
    placed = {p.name: p for p in draft_policy(usage).placements}["fetch_invoice"]
    assert (placed.list, placed.by) == ("action_tools", "default")  # no sign left: an action


def test_gen_ai_tool_definitions_carry_no_annotations(tmp_path):
    def without_parameters(record):
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["attributes"] = [a for a in span["attributes"] if a["key"] != "model_request_parameters"]
        return record

    usage = tool_usage(_rewrite(OTLP, tmp_path / "spans.jsonl", without_parameters))
    assert "gen_ai.tool.definitions" in (tmp_path / "spans.jsonl").read_text()
    assert not usage.mcp_annotated and {t.name for t in usage.tools} == set(CALLS)


def test_tools_without_mcp_annotations_get_none():
    usage = tool_usage(DATA / "langfuse" / "pydantic-ai-tools-2025-12-04.json")  # function_tools, metadata null
    assert usage.tools and not usage.mcp_annotated


def test_check_doubts_a_policy_that_an_annotation_contradicts():
    usage = tool_usage(RESPONSES)
    policy = Policy(escalation_tools=["transfer_to_human"], read_only_tools=["get_order", "get_or_create_ticket"],
                    action_tools=["fetch_invoice", "cancel_order", "issue_refund"])
    doubts = {name: (listed, placed.list) for name, listed, placed in check_policy(usage, policy).doubts}
    assert doubts == {"fetch_invoice": ("action_tools", "read_only_tools"),
                      "get_or_create_ticket": ("read_only_tools", "action_tools")}


def test_policy_init_writes_the_draft_with_the_gating_suggestion(tmp_path):
    out = tmp_path / "draft.toml"
    done = subprocess.run([sys.executable, "-m", "escalation", "policy", "init", str(OTLP), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    drafted = tomllib.loads(text)
    assert {key: sorted(drafted[key]) for key in EXPECTED} == {key: sorted(v) for key, v in EXPECTED.items()}
    assert drafted["gated_tools"] == []
    assert f"# gated_tools = {json.dumps(DESTRUCTIVE)}" in text
    assert "by an annotation (tau2-bench, MCP): 7" in done.stdout.replace("\n", " ")
