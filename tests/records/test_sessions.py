"""``--group-by session``: the traces of a session as one conversation (``estimators.records.readers._otel`` and
``_langfuse``).

``otel/sessions.jsonl`` was written by the real instrumentation (``make_otel_traces.py``): chat sessions whose every
user message is a request of its own (an agent run, a trace), the traces of a session sharing
``gen_ai.conversation.id``. The truth is counted here from what the SDK held (``sessions.sdk.json``): per session,
its traces in the order they started, the ``execute_tool`` spans in time order, one user message a trace; and the
scores follow from SPEC section 3 with the policy below, written out in ``TRUTH``.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, read_conversations

DATA = Path(__file__).parents[1] / "data" / "readers"
SESSIONS = DATA / "otel" / "sessions.jsonl"
POLICY = ('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'
          'gated_tools = ["issue_refund"]\n')
#: session: (u, o, cause, scored turn, a, approval cause). sess-handoff hands off at its second request after a
#: look-up; sess-refund-late refunds at the first and hands off at the second (acted_before_handoff, unapproved);
#: sess-no-history (its application sends only the new message) is an ACT session that refunds at its second.
TRUTH = {"sess-handoff": (0, None, None, 1, None, None),
         "sess-refund-late": (1, None, "acted_before_handoff", 0, 1, "unapproved"),
         "sess-no-history": (None, 0, None, 2, 1, "unapproved")}


def _sdk_sessions() -> dict:
    """Per session id, from the SDK's spans: the trace ids in the order they started, the tool spans' names in
    time order, and each trace's user message (its agent span's first chat span's last user message)."""
    spans = json.loads((DATA / "otel" / "sessions.sdk.json").read_text())["spans"]
    by_trace: dict[str, list] = {}
    for span in spans:
        by_trace.setdefault(span["context"]["trace_id"][2:], []).append(span)
    sessions: dict[str, dict] = {}
    for trace_id, its in sorted(by_trace.items(), key=lambda item: min(s["start_time"] for s in item[1])):
        agent = next(s for s in its if s["name"].startswith("invoke_agent"))
        session = sessions.setdefault(agent["attributes"]["gen_ai.conversation.id"],
                                      {"traces": [], "tools": [], "users": []})
        session["traces"].append(trace_id)
        session["tools"] += [s["attributes"]["gen_ai.tool.name"] for s in sorted(its, key=lambda s: s["start_time"])
                             if s["name"].startswith("execute_tool")]
        chat = min((s for s in its if s["name"].startswith("chat")), key=lambda s: s["start_time"])
        users = [m for m in json.loads(chat["attributes"]["gen_ai.input.messages"]) if m["role"] == "user"]
        session["users"].append(users[-1]["parts"][0]["content"])
    return sessions


def test_each_session_is_one_conversation_with_its_traces_in_order():
    truth = _sdk_sessions()
    assert len(truth) == 3 and sum(len(s["traces"]) for s in truth.values()) == 7
    conversations, fmt = read_conversations(SESSIONS, group_by="session")
    assert fmt == "otel"
    read = {c["conversation_id"]: c for c in conversations}
    assert list(read) == list(truth)
    for session, expected in truth.items():
        conv = read[session]
        assert conv["metadata"]["traces"] == expected["traces"]
        assert [c["name"] for c in conv["tool_calls"]] == expected["tools"]
        assert [m["text"] for m in conv["messages"] if m["role"] == "user"] == expected["users"]
        assert conv["assistant_turns"] == len(expected["traces"])  # one request, one turn
        assert conv["metadata"]["session_id"] == session
        spans = conv["metadata"]["otel"]["span_traces"]
        assert set(spans.values()) <= set(expected["traces"])


def test_by_trace_the_tagged_requests_repeat_a_key():
    """Without grouping each request is a conversation: the operator's (case, label, replica) repeats."""
    with pytest.raises(InputError, match="repeats"):
        read_conversations(SESSIONS)


def test_session_scores_and_events(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(SESSIONS), "--policy", str(policy),
                           "--group-by", "session", "--out", str(out), "--emit", "otel"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = {d["conversation_id"]: d for d in map(json.loads, (out / "conversations.jsonl").read_text().splitlines())}
    assert {k: (d["u"], d["o"], d["cause"], d["turn"], d["a"], d["approval_cause"]) for k, d in lines.items()} == TRUTH
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["command"]["group_by"] == "session"
    truth = _sdk_sessions()
    tool_spans = {}
    for span in json.loads((DATA / "otel" / "sessions.sdk.json").read_text())["spans"]:
        if span["name"].startswith("execute_tool"):
            tool_spans[span["context"]["span_id"][2:]] = (span["context"]["trace_id"][2:],
                                                          span["attributes"]["gen_ai.tool.name"])
    events = [r for line in (out / "evaluations.otlp.jsonl").read_text().splitlines()
              for r in json.loads(line)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]]
    placed = {}
    for record in events:
        attrs = {a["key"]: next(iter(a["value"].values())) for a in record["attributes"]}
        placed[attrs["gen_ai.evaluation.name"], attrs["gen_ai.evaluation.score.label"]] = (
            record["traceId"], tool_spans.get(record.get("spanId")))
    # the hand-off of sess-handoff is in its second trace; the refund of sess-refund-late in its first
    assert placed["escalation.u", "compliant"] == (truth["sess-handoff"]["traces"][1],
                                                   (truth["sess-handoff"]["traces"][1], "transfer_to_human"))
    assert placed["escalation.u", "acted_before_handoff"] == (
        truth["sess-refund-late"]["traces"][0], (truth["sess-refund-late"]["traces"][0], "issue_refund"))


def test_langfuse_session(tmp_path):
    """Two real Langfuse exports that share ``sessionId`` "session_abc" (autogen and llamaindex), one file."""
    exports = [json.loads((DATA / "langfuse" / name).read_text())
               for name in ("autogen-2025-06-06.json", "llamaindex-2025-06-05.json")]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in exports))
    by_trace, _ = read_conversations(path)
    grouped, fmt = read_conversations(path, group_by="session")
    assert fmt == "langfuse" and len(by_trace) == 2 and len(grouped) == 1
    order = sorted(exports, key=lambda e: min(o["startTime"] for o in e["observations"]))
    session = grouped[0]
    assert session["conversation_id"] == "session_abc"
    assert session["metadata"]["traces"] == [e["trace"]["id"] for e in order]
    ordered = sorted(by_trace, key=lambda c: session["metadata"]["traces"].index(c["conversation_id"]))
    # the traces' texts in the order they started (the llamaindex one first: an assistant text with no user
    # message, so the session has one turn, as SPEC section 1 numbers them)
    assert [(m["role"], m["text"]) for m in session["messages"]] == \
        [(m["role"], m["text"]) for c in ordered for m in c["messages"]]


def test_other_formats_refuse_sessions():
    with pytest.raises(InputError, match="--group-by session groups the traces"):
        read_conversations(DATA / "openai.jsonl", group_by="session")
