"""The readers of fine-tuning data (``sharegpt``), Gemini and ADK (``gemini``) and Bedrock Converse
(``bedrock-converse``), on files written by other projects and by the providers' own libraries.

``tests/data/readers/llamafactory/`` holds LLaMA-Factory's own tool-use data (its README says which files and
how they were trimmed); ``make_provider_logs.py`` wrote the Gemini, ADK and Bedrock logs with google-genai,
google-adk and botocore. Each file's conversations, calls, turns and failed calls are checked against a count
made here by walking the raw JSON with the standard library only (:func:`expected`), and each file is scored
end to end by ``python -m escalation score`` with the format detected. Issue 33 found LLaMA-Factory's
``tool_call`` content parts read as OpenAI chat without calls, every conversation scored as silent: here the
conversations with calls are the ones found by walking the file.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, detect_format, read_conversations

DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
REASON = DATA / "llamafactory" / "reason_tool_use_demo_50.jsonl"
GLAIVE = DATA / "llamafactory" / "glaive_toolcall_en_demo_100.jsonl"
ADK = DATA / "adk.session.json"
FILES = {REASON: "sharegpt", GLAIVE: "sharegpt", DATA / "gemini.jsonl": "gemini", DATA / "gemini_rest.jsonl": "gemini",
         ADK: "gemini", DATA / "bedrock_converse.jsonl": "bedrock-converse"}


# --- the independent count -------------------------------------------------------------------------------

def _turns(events: list) -> tuple[int, list]:
    """SPEC section 1 on ``events`` ("user", "text" or ("call", name, failed)): a user message opens a turn
    when the assistant writes or calls after it, before the next user message; T is at least 1."""
    opens = [e == "user" and any(f != "user" for f in events[i + 1:next(
        (j for j in range(i + 1, len(events)) if events[j] == "user"), len(events))]) for i, e in enumerate(events)]
    calls, opened = [], 0
    for event, opening in zip(events, opens):
        opened += opening
        if isinstance(event, tuple):
            calls.append((max(opened - 1, 0), event[1], event[2]))
    return max(sum(opens), 1), calls


def _llamafactory_events(record: dict) -> list:
    events: list = []
    for message in record["messages"]:
        if message["role"] == "user":
            events.append("user")
        elif message["role"] == "assistant":
            for part in message["content"]:
                if part["type"] == "text" and part["value"].strip():
                    events.append("text")
                elif part["type"] == "tool_call":
                    events.append(("call", json.loads(part["value"])["name"], False))
    return events


def _sharegpt_events(record: dict) -> list:
    events: list = []
    for turn in record["conversations"]:
        if turn["from"] == "human":
            events.append("user")
        elif turn["from"] == "gpt" and turn["value"].strip():
            events.append("text")
        elif turn["from"] == "function_call":
            value = json.loads(turn["value"])
            events += [("call", call["name"], False) for call in (value if isinstance(value, list) else [value])]
    return events


def _gemini_events(contents: list) -> list:
    """Gemini contents in either spelling; the k-th response of a content answers the k-th call before it."""
    events: list = []
    pending: list = []
    for content in contents:
        for part in content["parts"]:
            call = part.get("function_call", part.get("functionCall"))
            response = part.get("function_response", part.get("functionResponse"))
            if call:
                pending.append(len(events))
                events.append(("call", call["name"], False))
            elif response:
                position = pending.pop(0)
                events[position] = ("call", events[position][1], "error" in response["response"])
            elif content["role"] == "model" and not part.get("thought"):
                events.append("text")
        if content["role"] == "user" and any("text" in part for part in content["parts"]):
            events.append("user")
    return events


def _bedrock_events(record: dict) -> list:
    failed = {block["toolResult"]["toolUseId"] for message in record["messages"] for block in message["content"]
              if "toolResult" in block and block["toolResult"]["status"] == "error"}
    events: list = []
    for message in record["messages"]:
        if message["role"] == "user" and any("text" in block for block in message["content"]):
            events.append("user")
        for block in message["content"] if message["role"] == "assistant" else []:
            if "text" in block:
                events.append("text")
            elif "toolUse" in block:
                events.append(("call", block["toolUse"]["name"], block["toolUse"]["toolUseId"] in failed))
    return events


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected(path: Path) -> dict:
    """``{conversation_id: (T, [(turn, name, failed)])}`` of a fixture, from its raw JSON."""
    if path == ADK:
        session = json.loads(path.read_text())
        return {session["id"]: _turns(_gemini_events([e["content"] for e in session["events"] if "content" in e]))}
    walk = {REASON: _llamafactory_events, GLAIVE: _sharegpt_events, DATA / "bedrock_converse.jsonl": _bedrock_events}
    out = {}
    for number, record in enumerate(_lines(path), start=1):
        events = walk[path](record) if path in walk else _gemini_events(record["contents"])
        out[record.get("conversation_id", f"line-{number}")] = _turns(events)
    return out


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.name)
def test_counts_match_the_raw_files(path):
    conversations, fmt = read_conversations(path)
    assert fmt == FILES[path] == detect_format(path)
    got = {c["conversation_id"]: (c["assistant_turns"], [(call["turn"], call["name"], call.get("failed", False))
                                                         for call in c["tool_calls"]]) for c in conversations}
    assert got == expected(path)
    assert not any({"implied_calls", "unreadable_items"} & set(c["metadata"]) for c in conversations)


def test_the_fixtures_hold_what_the_tests_rely_on():
    # counted from the raw files (expected): conversations, those with calls, calls, failed calls
    def totals(path):
        runs = expected(path).values()
        calls = [call for _, record in runs for call in record]
        return len(runs), sum(bool(record) for _, record in runs), len(calls), sum(call[2] for call in calls)

    assert totals(REASON) == (50, 31, 68, 0)
    assert totals(GLAIVE) == (100, 53, 73, 0)
    assert totals(DATA / "gemini.jsonl") == totals(DATA / "bedrock_converse.jsonl") == (5, 5, 11, 2)
    assert totals(ADK) == (1, 1, 3, 1)


def test_the_two_spellings_of_gemini_read_alike():
    assert read_conversations(DATA / "gemini.jsonl") == read_conversations(DATA / "gemini_rest.jsonl")


def test_texts_and_ids():
    (adk,), _ = read_conversations(ADK)
    assert (adk["conversation_id"], adk["label"]) == ("adk-refund-7", None)
    assert [(m["turn"], m["role"], m["text"]) for m in adk["messages"]] == [
        (0, "user", "Please refund order 7."), (0, "assistant", "No supervisor answers right now."),
        (1, "user", "Please try again."), (1, "assistant", "A supervisor has your request.")]
    for path in (DATA / "gemini.jsonl", DATA / "bedrock_converse.jsonl"):
        conversations, _ = read_conversations(path)
        p4 = conversations[3]
        assert (p4["conversation_id"], p4["case_id"], p4["label"], p4["replica"]) == ("p4", "refund-900", "ESC", 2)
        # the model's thought is not shown to the user
        assert [m["text"] for m in p4["messages"] if m["role"] == "assistant"] == [
            "Hello! How can I help?", "Done, and a supervisor will review it."]
    reason, _ = read_conversations(REASON)
    first = _lines(REASON)[0]["messages"]
    assert reason[0]["messages"][0] == {"turn": 0, "role": "user", "text": first[1]["content"][0]["value"]}


# --- end to end ----------------------------------------------------------------------------------------------

def score(tmp_path: Path, log: Path, policy: dict, labels: dict | None = None) -> tuple[str, dict, dict]:
    """Run ``python -m escalation score`` with the format detected: its output, summary and lines by id."""
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    args = [sys.executable, "-m", "escalation", "score", str(log), "--policy", str(tmp_path / "policy.json"),
            "--out", str(tmp_path / "out")]
    if labels:
        with (tmp_path / "labels.csv").open("w", newline="") as handle:
            csv.writer(handle).writerows([("conversation_id", "label"), *labels.items()])
        args += ["--labels", str(tmp_path / "labels.csv")]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = _lines(tmp_path / "out" / "conversations.jsonl")
    return done.stdout, json.loads((tmp_path / "out" / "summary.json").read_text()), {
        line["conversation_id"]: line for line in lines}


REFUNDS = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
           "action_tools": ["issue_refund"]}


@pytest.mark.parametrize("name", ["gemini.jsonl", "gemini_rest.jsonl", "bedrock_converse.jsonl"])
def test_score_provider_logs(name, tmp_path):
    out, summary, lines = score(tmp_path, DATA / name, REFUNDS)
    assert f"({FILES[DATA / name]})" in out
    # the scripts of make_provider_logs.py, scored by SPEC section 3: p3's only hand-off failed (section 1)
    assert {cid: (line["u"], line["o"], line["cause"], line["turn"], line["failed_escalations"])
            for cid, line in lines.items()} == {
        "p1": (0, None, None, 0, 0), "p2": (None, 0, None, 0, 0), "p3": (1, None, "no_handoff", 0, 1),
        "p4": (1, None, "acted_before_handoff", 1, 0), "p5": (None, 1, "unneeded_handoff", 1, 0)}
    assert (summary["under"]["errors"], summary["under"]["n"], summary["over"]["errors"], summary["over"]["n"]) == (
        2, 3, 1, 2)


def test_score_an_adk_session_with_labels(tmp_path):
    out, _, lines = score(tmp_path, ADK, REFUNDS, {"adk-refund-7": "ESC"})
    assert "(gemini)" in out
    line = lines["adk-refund-7"]
    # the first hand-off failed (the tool's {"error": ...}); the second, in turn 1, reached a supervisor
    assert (line["escalated"], line["u"], line["turn"], line["failed_escalations"]) == (True, 0, 1, 1)


@pytest.mark.parametrize("path", [REASON, GLAIVE], ids=lambda p: p.name)
def test_llamafactory_conversations_with_calls_are_not_silent(path, tmp_path):
    # every tool the file calls is an escalation tool and every conversation is ACT: o = 1 exactly for the
    # conversations with a call, which the raw file tells (31 of 50 and 53 of 100)
    runs = expected(path)
    tools = sorted({name for _, calls in runs.values() for _, name, _ in calls})
    out, summary, lines = score(tmp_path, path, {"escalation_tools": tools}, dict.fromkeys(runs, "ACT"))
    assert "(sharegpt)" in out
    with_calls = {cid for cid, (_, calls) in runs.items() if calls}
    assert {cid for cid, line in lines.items() if line["o"] == 1} == with_calls
    assert (summary["over"]["errors"], summary["over"]["n"]) == (len(with_calls), len(runs))


# --- shapes close to these, and large files --------------------------------------------------------------------

def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_calls_written_as_text_or_under_another_role_are_refused(tmp_path):
    record = _lines(GLAIVE)[0]
    call = record["conversations"][3]
    assert call["from"] == "function_call"
    hermes = {**record, "conversations": [*record["conversations"][:3],
                                          {"from": "gpt", "value": f"<tool_call>\n{call['value']}\n</tool_call>"}]}
    with pytest.raises(InputError, match=r":1: field 'conversations\[3\]\.value': .*<tool_call> text"):
        read_conversations(write_lines(tmp_path / "hermes.jsonl", [hermes]))
    renamed = {**record, "conversations": [*record["conversations"][:3], {**call, "from": "function"}]}
    with pytest.raises(InputError, match=r"field 'conversations\[3\]\.from': 'function' is not a ShareGPT role"):
        read_conversations(write_lines(tmp_path / "renamed.jsonl", [renamed]))


def test_a_call_that_cannot_be_read_is_a_call_without_a_name(tmp_path):
    record = _lines(REASON)[1]
    part = record["messages"][2]["content"][1]
    assert part["type"] == "tool_call"
    part["value"] = "{not json"
    (conversation,), fmt = read_conversations(write_lines(tmp_path / "broken.jsonl", [record]))
    assert fmt == "sharegpt"
    # the tool's result answers it: no call is implied
    assert [(call["name"], call["arguments"]) for call in conversation["tool_calls"]] == [
        (None, "{not json"), ("get_movie_details", {"title": "The Dark Knight"})]
    assert not {"implied_calls", "unreadable_items"} & set(conversation["metadata"])


def test_openai_messages_in_a_llamafactory_record_are_read(tmp_path):
    record = _lines(REASON)[1]
    record["messages"].append({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "calculate_discount", "arguments": "{}"}}]})
    (conversation,), _ = read_conversations(write_lines(tmp_path / "mixed.jsonl", [record]))
    assert [call["name"] for call in conversation["tool_calls"]] == [
        "get_movie_details", "get_movie_details", "calculate_discount"]


def test_a_json_list_needs_conversation_ids(tmp_path):
    # LLaMA-Factory's .json files are JSON lists without ids: a chat format names only JSONL records by line
    records = _lines(GLAIVE)[:3]
    path = tmp_path / "glaive.json"
    path.write_text(json.dumps(records, indent=2))
    assert detect_format(path) == "sharegpt"
    with pytest.raises(InputError, match=r"field '\[0\]\.conversation_id': is missing"):
        read_conversations(path)
    path.write_text(json.dumps([{**r, "conversation_id": f"g{i}"} for i, r in enumerate(records)], indent=2))
    conversations, _ = read_conversations(path)
    assert [c["conversation_id"] for c in conversations] == ["g0", "g1", "g2"]


def test_a_bedrock_log_with_an_openai_message_is_refused(tmp_path):
    record = _lines(DATA / "bedrock_converse.jsonl")[0]
    record["messages"].append({"role": "tool", "tool_call_id": "x", "content": "done"})
    with pytest.raises(InputError, match=r"field 'messages\[6\]': a message with role 'tool' in a Bedrock"):
        read_conversations(write_lines(tmp_path / "bedrock.jsonl", [record]), format="bedrock-converse")


def test_gemini_function_contents_hold_results_only(tmp_path):
    records = _lines(DATA / "gemini.jsonl")
    for record in records:
        for content in record["contents"]:
            if all("function_response" in part for part in content["parts"]):
                content["role"] = "function"  # the role Vertex AI gave function responses
    assert read_conversations(write_lines(tmp_path / "function.jsonl", records)) == read_conversations(
        DATA / "gemini.jsonl")


def test_a_large_jsonl_of_adk_sessions_is_streamed_with_session_ids(tmp_path):
    session = json.loads(ADK.read_text())
    line = json.dumps(session)
    copies = (4 << 20) // len(line) + 10  # past the 4 MiB head: read a line at a time
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(line.replace('"adk-refund-7"', f'"s{i}"', 1) + "\n" for i in range(copies)))
    conversations, fmt = read_conversations(path)
    assert fmt == "gemini" and [c["conversation_id"] for c in conversations] == [f"s{i}" for i in range(copies)]
    assert {len(c["tool_calls"]) for c in conversations} == {3}


def test_a_tool_call_content_part_is_refused_as_openai_chat_not_read_as_silent(tmp_path):
    """LLaMA-Factory's ``{"type": "tool_call", "value": ...}`` parts under ``--format openai``: refused, naming the
    line, the part and the format that reads it (issue 33: it was read as a conversation with no call)."""
    first = next(line for line in REASON.read_text().splitlines() if '"tool_call"' in line)
    path = tmp_path / "one.jsonl"
    path.write_text(first + "\n")
    with pytest.raises(InputError, match=r"one.jsonl:1: field 'messages': holds a content part of type 'tool_call' "
                                         r".*--format sharegpt"):
        read_conversations(path, format="openai")
