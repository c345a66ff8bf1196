"""``escalation policy init`` on traces (issue 33, point 5): a folder of trace exports is read log by log, as
``escalation score`` reads it, and its tools are counted across the logs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, read_conversations, tool_usage

DATA = Path(__file__).resolve().parents[1] / "data" / "readers"


def test_a_folder_of_langfuse_exports_counts_every_log_s_calls():
    folder = DATA / "langfuse"
    usage = tool_usage(folder)
    expected: dict[str, int] = {}
    for path in sorted(folder.glob("*.json")):  # each export read alone: the folder's counts are their sums
        conversations, _ = read_conversations(path)
        for conversation in conversations:
            for call in conversation["tool_calls"] or ():
                expected[call["name"]] = expected.get(call["name"], 0) + 1
    assert usage.format == "langfuse"
    assert {use.name: use.calls for use in usage.tools} == expected and sum(expected.values()) >= 10


def test_a_folder_of_logs_of_two_formats_is_refused(tmp_path):
    shutil.copy(DATA / "otel" / "openai_v2.jsonl", tmp_path / "a.jsonl")
    shutil.copy(next((DATA / "langfuse").glob("*.json")), tmp_path / "b.json")
    with pytest.raises(InputError, match=r"the logs are of different formats: a.jsonl is otel, b.json is langfuse"):
        tool_usage(tmp_path)


def test_policy_init_writes_a_draft_from_a_folder_of_traces(tmp_path, monkeypatch, capsys):
    from .._helpers import run_cli_output

    code, out, err = run_cli_output(monkeypatch, capsys, "policy", "init", DATA / "langfuse", "--out",
                                    tmp_path / "draft.json")
    assert code == 0, err
    draft = json.loads((tmp_path / "draft.json").read_text())
    assert "get_dad_joke_suggestion" in draft["read_only_tools"] and "say_hello" in draft["action_tools"]
