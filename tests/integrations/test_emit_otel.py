"""``escalation score --emit otel``: the results back onto the traces, as OpenTelemetry GenAI
``gen_ai.evaluation.result`` events (OTLP JSON log records) parented to the span of the scored turn or call.

The span each event should sit on is found here from the input file alone, by walking its raw JSON (tool spans,
the calls requested in ``gen_ai.choice`` records, the chat spans and their user messages), and compared with what
was written; the values are compared with ``conversations.jsonl``.
"""
from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from escalation.estimators.records import read_conversations

OTEL = Path(__file__).parents[1] / "data" / "readers" / "otel"
#: get_order a look-up, issue_refund gated: every refund is unapproved (no approval tool).
POLICY = ('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'
          'gated_tools = ["issue_refund"]\n')
#: get_order unmarked (an action): the look-up before a hand-off is acted_before_handoff.
STRICT = 'escalation_tools = ["transfer_to_human"]\n'
ESCALATION, READ_ONLY, GATED = {"transfer_to_human"}, {"get_order"}, {"issue_refund"}
#: The attributes of the event (OpenTelemetry GenAI semantic conventions, event gen_ai.evaluation.result).
REQUIRED = {"gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label",
            "gen_ai.evaluation.explanation"}
CONVENTION = REQUIRED | {"gen_ai.response.id"}


def _score(tmp_path: Path, log: Path, policy: str, *extra, out: str = "out"):
    path = tmp_path / "policy.toml"
    path.write_text(policy)
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(log), "--policy", str(path),
                           "--out", str(tmp_path / out), *extra], capture_output=True, text=True)
    return done, tmp_path / out


def _value(value: dict):
    """An OTLP ``AnyValue``'s content (an empty one is null)."""
    return next(iter(value.values()), None)


def _attrs(items) -> dict:
    return {a["key"]: _value(a["value"]) for a in items}


def _traces(path: Path) -> dict:
    """Per trace id, read from the raw OTLP JSON: ``calls`` in time order as ``(name, span id, failed)`` (the
    execute_tool spans, else the tool calls of the ``gen_ai.choice`` records at their span), ``turns``: the chat
    span of each turn (the first whose input holds that turn's user message), and each span's
    ``gen_ai.response.id``."""
    spans, records = [], []
    for line in path.read_text().splitlines():
        export = json.loads(line)
        spans += [s for r in export.get("resourceSpans", ()) for sc in r["scopeSpans"] for s in sc["spans"]]
        records += [x for r in export.get("resourceLogs", ()) for sc in r["scopeLogs"] for x in sc["logRecords"]]
    traces: dict[str, dict] = {}
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        trace = traces.setdefault(span["traceId"], {"tools": [], "chats": [], "requested": [], "responses": {}})
        attrs = _attrs(span["attributes"])
        trace["responses"][span["spanId"]] = attrs.get("gen_ai.response.id")
        if attrs.get("gen_ai.operation.name") == "execute_tool":
            trace["tools"].append((attrs["gen_ai.tool.name"], span["spanId"], span["status"].get("code") == 2))
        elif attrs.get("gen_ai.operation.name") == "chat":
            users = sum(m["role"] == "user" for m in json.loads(attrs.get("gen_ai.input.messages", "[]")))
            users += sum(r["spanId"] == span["spanId"] and r["eventName"] == "gen_ai.user.message" for r in records)
            trace["chats"].append((users, span["spanId"]))
    for record in sorted(records, key=lambda r: int(r["observedTimeUnixNano"])):
        if record["eventName"] == "gen_ai.choice":
            body = _attrs(record["body"]["kvlistValue"]["values"])
            calls = _attrs(body["message"]["values"]).get("tool_calls") or body.get("tool_calls") or {"values": []}
            for call in calls["values"]:
                function = _attrs(_attrs(call["kvlistValue"]["values"])["function"]["values"])
                traces[record["traceId"]]["requested"].append((function["name"], record["spanId"], False))
    for trace in traces.values():
        trace["calls"] = trace["tools"] or trace["requested"]
        turns = max(users for users, _ in trace["chats"])
        trace["turns"] = [next(span for users, span in trace["chats"] if users > t) for t in range(turns)]
    return traces


def _expected_span(trace: dict, name: str, read_only: set) -> tuple[str, bool]:
    """The span of the scored call or turn, by SPEC sections 3 and 3A, from the raw calls; and whether it is the
    turn's (a chat span, whose response id the event names)."""
    calls = trace["calls"]
    escalation = next((k for k, (tool, _, failed) in enumerate(calls) if tool in ESCALATION and not failed), None)
    if name == "escalation.a":
        return next(span for tool, span, _ in calls if tool in GATED), False
    if name == "escalation.u":
        action = next((k for k, (tool, _, _) in enumerate(calls) if tool not in ESCALATION | read_only), None)
        if action is not None and (escalation is None or action < escalation):
            return calls[action][1], False
    return (calls[escalation][1], False) if escalation is not None else (trace["turns"][-1], True)


def _events(out: Path) -> dict:
    """The events written, by trace id: ``(span id or None, attributes)`` each, with the envelope checked."""
    found: dict[str, list] = {}
    for line in (out / "evaluations.otlp.jsonl").read_bytes().splitlines():
        export = json.loads(line)
        assert list(export) == ["resourceLogs"]
        (resource,) = export["resourceLogs"]
        (scope,) = resource["scopeLogs"]
        for record in scope["logRecords"]:
            assert record["eventName"] == "gen_ai.evaluation.result"
            assert record["severityNumber"] == 9 and "body" not in record
            value = {a["key"]: a["value"] for a in record["attributes"]}
            assert set(value) - CONVENTION == set() and REQUIRED <= set(value), sorted(value)
            assert list(value["gen_ai.evaluation.score.value"]) == ["doubleValue"]
            found.setdefault(record["traceId"], []).append((record.get("spanId"), _attrs(record["attributes"])))
    return found


CASES = [("openai_v2", POLICY, READ_ONLY), ("openllmetry_events", POLICY, READ_ONLY),
         ("openai_v2", STRICT, set())]


@pytest.mark.parametrize(("name", "policy", "read_only"), CASES, ids=["openai_v2", "events", "strict"])
def test_each_event_sits_on_the_scored_span_with_the_line_values(tmp_path, name, policy, read_only):
    done, out = _score(tmp_path, OTEL / f"{name}.jsonl", policy, "--emit", "otel")
    assert done.returncode == 0, done.stderr
    assert "evaluations.otlp.jsonl" in done.stdout
    traces, events = _traces(OTEL / f"{name}.jsonl"), _events(out)
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert "evaluations.otlp.jsonl" in summary["provenance"]["outputs"]
    expected_traces = set()
    for line in lines:
        figures = ([("escalation.u" if line["label"] == "ESC" else "escalation.o",
                     line["u"] if line["label"] == "ESC" else line["o"], line["cause"])] if line["evaluated"] else [])
        figures += [("escalation.a", line["a"], line["approval_cause"])] if line["a"] is not None else []
        if not figures:
            assert line["conversation_id"] not in events
            continue
        expected_traces.add(line["conversation_id"])
        trace = traces[line["conversation_id"]]
        written = events[line["conversation_id"]]
        assert [attrs["gen_ai.evaluation.name"] for _, attrs in written] == [f for f, _, _ in figures]
        for (span, attrs), (figure, score, cause) in zip(written, figures):
            expected, on_turn = _expected_span(trace, figure, read_only)
            assert span == expected, (line["conversation_id"], figure)
            assert attrs["gen_ai.evaluation.score.value"] == float(score)
            assert attrs["gen_ai.evaluation.score.label"] == (cause or "compliant")
            assert attrs["gen_ai.evaluation.explanation"].endswith("(SPEC section 3)" if figure != "escalation.a"
                                                                  else "(SPEC section 3A)")
            assert attrs.get("gen_ai.response.id") == (trace["responses"][span] if on_turn else None)
    assert set(events) == expected_traces


def test_the_rules_each_fixture_exercises(tmp_path):
    """The cases above do reach each rule: a hand-off, an action first, a silent ESC, a compliant ACT on its last
    turn, and approval errors."""
    seen = set()
    for name, policy, _ in CASES:
        done, out = _score(tmp_path, OTEL / f"{name}.jsonl", policy, "--emit", "otel", out=f"{name}-{len(policy)}")
        assert done.returncode == 0, done.stderr
        seen |= {(a["gen_ai.evaluation.name"], a["gen_ai.evaluation.score.label"])
                 for written in _events(out).values() for _, a in written}
    assert {("escalation.u", "compliant"), ("escalation.u", "acted_before_handoff"), ("escalation.u", "no_handoff"),
            ("escalation.o", "compliant"), ("escalation.a", "unapproved")} <= seen


def test_a_second_run_writes_the_same_bytes_and_the_traces_read_the_same(tmp_path):
    first = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY, "--emit", "otel", out="one")[1]
    second = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY, "--emit", "otel", out="two")[1]
    written = (first / "evaluations.otlp.jsonl").read_bytes()
    assert written and written == (second / "evaluations.otlp.jsonl").read_bytes()
    merged = tmp_path / "merged.jsonl"  # the events sent to the same store as the traces change nothing read
    merged.write_bytes((OTEL / "openai_v2.jsonl").read_bytes() + written)
    assert read_conversations(merged)[0] == read_conversations(OTEL / "openai_v2.jsonl")[0]


def test_a_later_run_without_emit_removes_the_events(tmp_path):
    out = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY, "--emit", "otel")[1]
    assert (out / "evaluations.otlp.jsonl").is_file()
    done, out = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY)
    assert done.returncode == 0, done.stderr
    assert not (out / "evaluations.otlp.jsonl").exists()


def test_emit_otel_needs_traces_and_an_out_folder(tmp_path):
    log = tmp_path / "canonical.jsonl"
    log.write_text(json.dumps({"conversation_id": "a", "label": "ESC", "assistant_turns": 1, "tool_calls": []}) + "\n")
    done, out = _score(tmp_path, log, POLICY, "--emit", "otel")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--emit" in done.stderr and "jsonl" in done.stderr
    assert not out.exists()
    done, out = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY, "--emit", "otel", "--format", "openai")
    assert done.returncode == 2 and "--emit" in done.stderr and "openai" in done.stderr and not out.exists()
    policy = tmp_path / "policy.toml"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(OTEL / "openai_v2.jsonl"), "--policy",
                           str(policy), "--emit", "otel"], capture_output=True, text=True)
    assert done.returncode == 2 and "--emit" in done.stderr and "--out" in done.stderr


def test_the_file_is_valid_otlp(tmp_path):
    """protobuf's own JSON parser reads each line as an ExportLogsServiceRequest (ids given as base64, as protobuf's
    JSON mapping reads bytes; OTLP/JSON writes them hex)."""
    pytest.importorskip("google.protobuf.json_format")
    service = pytest.importorskip("opentelemetry.proto.collector.logs.v1.logs_service_pb2")
    from google.protobuf.json_format import ParseDict

    out = _score(tmp_path, OTEL / "openai_v2.jsonl", POLICY, "--emit", "otel")[1]
    parsed = 0
    for line in (out / "evaluations.otlp.jsonl").read_bytes().splitlines():
        export = json.loads(line)
        records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        hex_ids = [(r["traceId"], r["spanId"]) for r in records]
        for record in records:
            for key in ("traceId", "spanId"):
                record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
        request = ParseDict(export, service.ExportLogsServiceRequest())
        for record, (trace_id, span_id) in zip(request.resource_logs[0].scope_logs[0].log_records, hex_ids):
            assert record.event_name == "gen_ai.evaluation.result"
            assert (record.trace_id.hex(), record.span_id.hex()) == (trace_id, span_id)
            parsed += 1
    assert parsed == 7
