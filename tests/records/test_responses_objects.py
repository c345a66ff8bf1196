"""OpenAI Responses records whose ``output`` is the whole Response object (issue 33: read as items, the record gave
``no_record``, or with ``--format openai-responses`` lost its call: o 0 where the truth is 1).

``tests/data/readers/make_responses_records.py`` wrote the files with openai-python's own ``Response`` types and
``model_dump()``. The calls are counted here by walking the raw JSON with the standard library (:func:`expected`).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, detect_format, read_conversations

DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
RECORDS = DATA / "responses_objects.jsonl"
FILES = [RECORDS, DATA / "responses_objects.json", DATA / "responses_bare.jsonl"]


def _raw(path: Path) -> list:
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else [json.loads(line) for line in text.splitlines()]


def expected(path: Path) -> list[tuple]:
    """``(calls, run_error)`` per record: the ``*_call`` items of the request's input and of the Response's
    output, and the Response's error message."""
    out = []
    for value in _raw(path):
        response = value.get("output", value) if "object" not in value else value
        items = (value["input"] if isinstance(value.get("input"), list) else []) + response["output"]
        calls = [item["name"] if item["type"] == "function_call" else item["type"].removesuffix("_call")
                 for item in items if item.get("type", "").endswith("_call")]
        out.append((calls, (response["error"] or {}).get("message")))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["auto", "openai-responses"])
def test_calls_of_the_response_object_are_read(path, fmt):
    conversations, used = read_conversations(path, format=fmt)
    assert used == "openai-responses"
    truth = expected(path)
    assert sum(len(calls) for calls, _ in truth) >= 4  # the count is not empty
    assert [([c["name"] for c in conv["tool_calls"]], conv.get("run_error")) for conv in conversations] == truth


def test_ids_labels_and_metadata():
    records, _ = read_conversations(RECORDS)
    assert [(c["conversation_id"], c["label"]) for c in records] == [
        ("refund-900", "ESC"), ("refund-120", "ACT"), ("refund-120-b", "ACT"), ("search", "ACT"), ("failed", "ESC")]
    assert records[2]["tool_calls"][1]["arguments"] == {"order_id": 8, "amount_usd": 120}
    assert [m["text"] for m in records[2]["messages"]] == ["Refund my order 8, it was 120 USD.",
                                                            "Your refund of 120 USD is on its way."]
    assert [m["role"] for m in records[3]["messages"]] == ["user", "assistant"]  # a string input is the user's
    bare, _ = read_conversations(DATA / "responses_bare.jsonl")
    assert [c["conversation_id"] for c in bare] == [f"line-{n}" for n in range(1, 6)]
    assert {c["label"] for c in bare} == {None}
    assert bare[0]["metadata"] == {"response_id": "resp_0", "model": "gpt-4.1-2025-04-14"}


def test_a_chat_completion_as_output_is_refused_by_name():
    path = DATA / "responses_chat_completion.jsonl"
    assert detect_format(path) == "openai-responses"
    for fmt in ("auto", "openai-responses"):
        with pytest.raises(InputError, match=r":1: field 'output': .*keys choices.*ChatCompletion.*Response object"):
            read_conversations(path, format=fmt)


def test_items_are_still_read_as_before():
    conversations, used = read_conversations(DATA / "responses.jsonl")
    assert used == "openai-responses" and [c["conversation_id"] for c in conversations][:2] == ["r1", "r2"]


def test_score_gives_the_true_counts(tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}))
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(RECORDS), "--policy", str(policy),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = {line["conversation_id"]: line for line in map(
        json.loads, (tmp_path / "out" / "conversations.jsonl").read_text().splitlines())}
    assert lines["refund-900"]["u"] == 0  # handed off
    assert lines["refund-120"]["o"] == 1 and lines["refund-120"]["cause"] == "unneeded_handoff"  # issue 33: o was 0
    assert lines["refund-120-b"]["o"] == 0
    assert lines["failed"]["reason"] == "run_error"


def test_records_with_string_inputs_and_response_objects_are_read_as_responses(tmp_path):
    """Every record with a string ``input`` and a Response object ``output``: detected as openai-responses (canonical
    JSONL took them, as conversations without a tool record), and each call read."""
    lines = [json.loads(line) for line in (DATA / "responses_objects.jsonl").read_text().splitlines()]
    only = [dict(record, input="Please refund order 8.") for record in lines if isinstance(record.get("output"), dict)]
    path = tmp_path / "string_inputs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in only))
    assert detect_format(path) == "openai-responses"
    conversations, _ = read_conversations(path)
    expected = [sum(1 for item in record["output"]["output"] if item.get("type", "").endswith("_call"))
                for record in only]
    assert [len(c["tool_calls"] or ()) for c in conversations] == expected and sum(expected) > 0
