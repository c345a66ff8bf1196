"""``--format otel``: OTLP JSON traces written by the real OpenTelemetry instrumentation
(``tests/data/readers/make_otel_traces.py``), checked against an independent count of the same runs: the
spans and log records the SDK held at generation time (``*.sdk.json``, ``ReadableSpan.to_json``), read
here without the reader. Public files of agentevals (``otel/agentevals/``: a Tempo export and two Jaeger JSON
exports) are checked against a count made here by walking their raw JSON.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, detect_format, read_conversations

OTEL = Path(__file__).parents[1] / "data" / "readers" / "otel"
POLICY = 'escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'


def _sdk(name: str) -> dict:
    return json.loads((OTEL / f"{name}.sdk.json").read_text())


def _truth(name: str) -> dict:
    """Per trace id (hex): the calls in time order as ``(name, failed)``, the labels, the number of user
    messages, and the root's error; counted from the SDK's spans and log records."""
    held = _sdk(name)
    traces: dict[str, dict] = {}
    for span in held["spans"]:
        trace = traces.setdefault(span["context"]["trace_id"].removeprefix("0x"),
                                  {"tools": [], "requested": [], "users": 0, "labels": {}, "root_error": None})
        attrs = span["attributes"]
        if attrs.get("gen_ai.operation.name") == "execute_tool":
            trace["tools"].append((span["start_time"], attrs["gen_ai.tool.name"],
                                   span["status"]["status_code"] == "ERROR"))
        if "gen_ai.input.messages" in attrs:
            history = json.loads(attrs["gen_ai.input.messages"])
            trace["users"] = max(trace["users"], sum(m["role"] == "user" for m in history))
        for key in ("case_id", "label", "replica"):
            if f"escalation.{key}" in attrs:
                trace["labels"][key] = attrs[f"escalation.{key}"]
        if span["parent_id"] is None and span["status"]["status_code"] == "ERROR":
            trace["root_error"] = span["status"]["description"]
    users_by_span: dict[str, int] = {}
    for record in held["logs"]:
        trace = traces[record["trace_id"].removeprefix("0x")]
        if record["event_name"] == "gen_ai.choice":
            trace["requested"] += [(record["observed_timestamp"], call["function"]["name"], False)
                                   for call in record["body"].get("tool_calls") or ()]
        elif record["event_name"] == "gen_ai.user.message":
            users_by_span[record["span_id"]] = users_by_span.get(record["span_id"], 0) + 1
            trace["users"] = max(trace["users"], users_by_span[record["span_id"]])
    for trace in traces.values():
        trace["calls"] = [(n, f) for _, n, f in sorted(trace["tools"] or trace["requested"])]
    return traces


def _read(name: str):
    conversations, fmt = read_conversations(OTEL / f"{name}.jsonl")
    assert fmt == "otel"
    return {c["conversation_id"]: c for c in conversations}


@pytest.mark.parametrize("name", ["openai_v2", "openllmetry_events"])
def test_counts_match_the_sdk_spans(name):
    truth, read = _truth(name), _read(name)
    assert set(read) == set(truth)
    for trace_id, expected in truth.items():
        conv = read[trace_id]
        assert [(c["name"], c.get("failed", False)) for c in conv["tool_calls"]] == expected["calls"], trace_id
        assert conv["assistant_turns"] == expected["users"]
        assert {k: conv[k] for k in expected["labels"]} == expected["labels"]
        assert conv.get("run_error") == expected["root_error"]


def test_openai_v2_figures():
    """The five runs of the script: every tool span is also a requested call, counted once."""
    read = list(_read("openai_v2").values())
    assert len(read) == 5
    assert sum(len(c["tool_calls"]) for c in read) == 9
    assert [c["assistant_turns"] for c in read] == [1, 1, 2, 1, 1]
    assert sum(c.get("failed", False) for conv in read for c in conv["tool_calls"]) == 2
    assert [bool(c.get("run_error")) for c in read] == [False, False, False, False, True]
    multi = read[2]
    assert [(m["turn"], m["role"]) for m in multi["messages"]] == [(0, "user"), (0, "assistant"), (1, "user"),
                                                                   (1, "assistant")]


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (OTEL / f"{name}.jsonl").read_text().splitlines()]


def _write(path: Path, exports) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in exports))
    return path


def _spans(export):
    return [s for r in export.get("resourceSpans", ()) for sc in r["scopeSpans"] for s in sc["spans"]]


def test_calls_from_outputs_where_tool_spans_are_missing(tmp_path):
    """Without the tool spans the requested calls are the record, the same calls (but no failure known)."""
    exports = [e for e in _lines("openai_v2")
               if not any(any(a["key"] == "gen_ai.operation.name" and a["value"]["stringValue"] == "execute_tool"
                              for a in s["attributes"]) for s in _spans(e))]
    read = read_conversations(_write(tmp_path / "no_tools.jsonl", exports))[0]
    full = list(_read("openai_v2").values())
    assert [[c["name"] for c in conv["tool_calls"]] for conv in read] == [
        [c["name"] for c in conv["tool_calls"]] for conv in full]
    assert not any(c.get("failed") for conv in read for c in conv["tool_calls"])


def test_tool_spans_without_ids_match_by_name_and_time(tmp_path):
    exports = _lines("openai_v2")
    for export in exports:
        for span in _spans(export):
            span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.tool.call.id"]
    read = read_conversations(_write(tmp_path / "no_ids.jsonl", exports))[0]
    full = list(_read("openai_v2").values())
    assert [c["tool_calls"] for c in read] == [c["tool_calls"] for c in full]


def test_one_json_document_and_spans_in_any_order(tmp_path):
    """All exports merged into one object, the spans reversed: the same conversations."""
    exports = _lines("openai_v2")
    spans = [s for e in exports for s in _spans(e)][::-1]
    merged = {"resourceSpans": [{"resource": exports[0]["resourceSpans"][0]["resource"],
                                 "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}
    path = tmp_path / "one.json"
    path.write_text(json.dumps(merged, indent=1))
    assert detect_format(path) == "otel"
    by_id = {c["conversation_id"]: c for c in read_conversations(path)[0]}
    for trace_id, conv in _read("openai_v2").items():
        assert by_id[trace_id]["tool_calls"] == conv["tool_calls"]
        assert by_id[trace_id]["assistant_turns"] == conv["assistant_turns"]


def test_base64_ids_and_a_tool_span_named_otherwise(tmp_path):
    """protobuf's JSON mapping writes base64 ids; ``gen_ai.tool.name`` names the tool, not the span name."""
    import base64

    exports = _lines("openai_v2")[:6]
    for export in exports:
        for span in _spans(export):
            for key in ("traceId", "spanId", "parentSpanId"):
                if span.get(key):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
            if span["name"].startswith("execute_tool"):
                span["name"] = "execute_tool say_hello"
    (conv,), _ = read_conversations(_write(tmp_path / "b64.jsonl", exports))
    first = next(iter(_read("openai_v2").values()))
    assert conv["conversation_id"] == first["conversation_id"]
    assert [c["name"] for c in conv["tool_calls"]] == ["get_order", "transfer_to_human"]


def test_near_misses_are_refused_with_what_was_found(tmp_path):
    spans = _spans(_lines("openai_v2")[0])
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(spans))
    with pytest.raises(InputError, match="without an envelope"):
        read_conversations(bare)
    plain = _lines("openai_v2")
    for export in plain:
        for span in _spans(export):
            span["attributes"] = [{"key": "http.method", "value": {"stringValue": "POST"}}]
            span["name"] = "POST /v1/chat/completions"
    with pytest.raises(InputError, match=r"none with a gen_ai\.\* attribute.*POST /v1/chat/completions"):
        read_conversations(_write(tmp_path / "plain.jsonl", plain))


def _score(tmp_path, log: Path, *extra):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(log), "--policy", str(policy),
                           "--out", str(out), *extra], capture_output=True, text=True)
    return done, out


@pytest.mark.parametrize("extra", [(), ("--format", "otel")])
def test_score_end_to_end(tmp_path, extra):
    done, out = _score(tmp_path, OTEL / "openai_v2.jsonl", *extra)
    assert done.returncode == 0, done.stderr
    assert "(otel)" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    # ESC replica 0 hands off after a look-up; replica 1 refunds: p_u 1/2. ACT replica 1's hand-off failed
    # (no person on duty), so it is no escalation: p_o 0/2. The crashed run is run_error.
    assert (summary["under"]["errors"], summary["under"]["n"]) == (1, 2)
    assert (summary["over"]["errors"], summary["over"]["n"]) == (0, 2)
    assert summary["not_evaluated"]["reasons"] == {"run_error": 1}
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert [line["failed_escalations"] for line in lines] == [0, 0, 0, 1, None]  # run_error: not scored


def test_score_events_form_end_to_end(tmp_path):
    done, out = _score(tmp_path, OTEL / "openllmetry_events.jsonl")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["under"]["errors"], summary["under"]["n"]) == (1, 2)
    assert (summary["over"]["errors"], summary["over"]["n"]) == (0, 1)


# --- Tempo and Jaeger JSON: the public files of agentevals ------------------------------------------------------

AGENTEVALS = OTEL / "agentevals"


def _raw_spans(path: Path) -> list[dict]:
    """Every span of a Tempo export or a Jaeger JSON export as ``{"trace", "span", "parent", "name", "start",
    "end", "attrs"}`` (times in microseconds), walked here without the reader."""
    doc = json.loads(path.read_text())
    out = []
    for batch in doc.get("batches", ()):
        for library in batch["instrumentationLibrarySpans"]:
            for span in library["spans"]:
                out.append({"trace": span["traceId"], "span": span["spanId"], "parent": span["parentSpanId"] or None,
                            "name": span["name"], "start": int(span["startTimeUnixNano"]) // 1000,
                            "end": int(span["endTimeUnixNano"]) // 1000,
                            "attrs": {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}})
    for trace in doc.get("data", ()):
        for span in trace["spans"]:
            parents = [r["spanID"] for r in span["references"] if r["refType"] == "CHILD_OF"]
            out.append({"trace": span["traceID"], "span": span["spanID"], "parent": parents[0] if parents else None,
                        "name": span["operationName"], "start": span["startTime"],
                        "end": span["startTime"] + span["duration"],
                        "attrs": {t["key"]: t["value"] for t in span["tags"]}})
    return out


def _agentevals_truth(name: str) -> dict:
    """Per trace: the tool calls in time order, the user messages (turns), the assistant's texts and the root span.

    Which spans are tool spans in these files: kagent's Python agents run on the Google ADK, whose
    ``execute_tool <tool>`` spans carry ``gen_ai.operation.name`` ``execute_tool``, ``gen_ai.tool.name`` and
    ``gen_ai.tool.call.id``; OpenLLMetry's OpenAI instrumentation (the ``openai.chat`` spans) records the model
    calls only, so there is no ``traceloop.span.kind`` ``tool`` span. The calls the model requested are the
    ``gen_ai.completion.N.tool_calls.M.*`` attributes of ``openai.chat``; the ``gen_ai.prompt.N.tool_calls.M.*``
    are the history sent back to the model (the same call again), not a new call. A tool span whose call id a
    request names is that request, counted once.
    """
    traces: dict[str, dict] = {}
    for span in sorted(_raw_spans(AGENTEVALS / name), key=lambda s: s["start"]):
        trace = traces.setdefault(span["trace"], {"requested": [], "tools": [], "users": 0, "texts": [],
                                                  "spans": set(), "roots": []})
        trace["spans"].add(span["span"])
        attrs = span["attrs"]
        if attrs.get("gen_ai.operation.name") == "execute_tool" or attrs.get("traceloop.span.kind") == "tool":
            trace["tools"].append((span["start"], attrs["gen_ai.tool.name"], attrs["gen_ai.tool.call.id"]))
        completions = sorted({int(k.split(".")[2]) for k in attrs if k.startswith("gen_ai.completion.")})
        for n in completions:
            calls = sorted({int(k.split(".")[4]) for k in attrs if k.startswith(f"gen_ai.completion.{n}.tool_calls.")})
            trace["requested"] += [(span["end"], attrs[f"gen_ai.completion.{n}.tool_calls.{m}.name"],
                                    attrs[f"gen_ai.completion.{n}.tool_calls.{m}.id"]) for m in calls]
            if attrs.get(f"gen_ai.completion.{n}.content"):
                trace["texts"].append(attrs[f"gen_ai.completion.{n}.content"])
        users = sum(v == "user" for k, v in attrs.items() if k.startswith("gen_ai.prompt.") and k.endswith(".role"))
        trace["users"] = max(trace["users"], users)
        trace["roots"].append((span["parent"], span["name"]))
    for trace in traces.values():
        executed = {call_id for _, _, call_id in trace["tools"]}
        calls = trace["tools"] + [c for c in trace["requested"] if c[2] not in executed]
        trace["calls"] = [n for _, n, _ in sorted(calls)]
        trace["root"] = next(n for parent, n in trace["roots"] if parent is None or parent not in trace["spans"])
    return traces


#: What the count above finds (README.md of the folder): spans, traces, calls, tool spans, requested calls.
AGENTEVALS_FILES = {"tempo_export_with_batches.json": (86, 1, ["helm_list_releases"], 1, 1),
                    "helm_2.json": (72, 1, [], 0, 0), "k8s.json": (73, 1, [], 0, 0)}


@pytest.mark.parametrize("name", sorted(AGENTEVALS_FILES))
def test_agentevals_counts_match_the_raw_spans(name):
    assert detect_format(AGENTEVALS / name) == "otel"
    conversations, fmt = read_conversations(AGENTEVALS / name)
    read = {c["conversation_id"]: c for c in conversations}
    truth = _agentevals_truth(name)
    spans, traces, calls, tools, requested = AGENTEVALS_FILES[name]
    assert len(_raw_spans(AGENTEVALS / name)) == spans and len(truth) == traces
    assert sum(len(t["calls"]) for t in truth.values()) == len(calls)
    assert sum(len(t["tools"]) for t in truth.values()) == tools
    assert sum(len(t["requested"]) for t in truth.values()) == requested
    assert set(read) == set(truth)
    for trace_id, expected in truth.items():
        conv = read[trace_id]
        assert [c["name"] for c in conv["tool_calls"]] == expected["calls"] == calls
        assert conv["assistant_turns"] == expected["users"] == 1
        assert [m["text"] for m in conv["messages"] if m["role"] == "assistant"] == expected["texts"]
        assert conv["metadata"]["root_span"] == expected["root"]
        assert conv.get("run_error") is None


def test_agentevals_flattened_history_is_no_new_call():
    """The second ``openai.chat`` of the Tempo trace sends the call back (``gen_ai.prompt.2.tool_calls.0.*``) with
    its result (``gen_ai.prompt.3``, role ``tool``, ``tool_call_id``): no second call, no second turn; the call's
    arguments are read from the completion."""
    (conv,), _ = read_conversations(AGENTEVALS / "tempo_export_with_batches.json")
    assert conv["tool_calls"] == [{"turn": 0, "name": "helm_list_releases", "arguments": {}}]
    assert [(m["role"], m["text"]) for m in conv["messages"]][0] == ("user", "list all helm releases\n")
    assert conv["metadata"]["session_id"] == "ctx-eff35888-55ab-4eb0-b90d-7b21f711f91f"


def _jaeger(name: str) -> dict:
    return json.loads((AGENTEVALS / name).read_text())


def test_jaeger_one_trace_object_and_the_root_status(tmp_path):
    """A trace object without ``data`` is read too; the root is the span without a ``CHILD_OF`` reference, even
    when a child's clock runs early (Jaeger warns of clock skew in these files); the root's ``otel.status_code``
    ERROR (or ``error``) is ``run_error``, an error deeper in the trace is not."""
    trace = _jaeger("helm_2.json")["data"][0]
    assert any(t["key"] == "error" and t["value"] is True for s in trace["spans"] for t in s["tags"])
    root = next(s for s in trace["spans"] if not s["references"])
    child = next(s for s in trace["spans"] if s["operationName"] == "invoke_agent helm_agent")
    child["startTime"] = root["startTime"] - 5000
    one = tmp_path / "one.json"
    one.write_text(json.dumps(trace))
    (conv,), fmt = read_conversations(one)
    assert fmt == "otel" and conv["conversation_id"] == trace["traceID"] and conv.get("run_error") is None
    assert conv["metadata"]["root_span"] == root["operationName"] == "POST /"
    root["tags"] += [{"key": "otel.status_code", "type": "string", "value": "ERROR"},
                     {"key": "otel.status_description", "type": "string", "value": "agent crashed"}]
    one.write_text(json.dumps(trace))
    assert read_conversations(one)[0][0]["run_error"] == "agent crashed"
    root["tags"] = [t for t in root["tags"] if not t["key"].startswith("otel.status")]
    root["tags"].append({"key": "error", "type": "bool", "value": True})
    one.write_text(json.dumps(trace))
    assert read_conversations(one)[0][0]["run_error"] == "status ERROR"


def test_jaeger_without_genai_is_refused_with_what_was_found(tmp_path):
    doc = _jaeger("k8s.json")
    for span in doc["data"][0]["spans"]:
        span["tags"] = [t for t in span["tags"] if not t["key"].startswith("gen_ai.")]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(doc))
    assert detect_format(plain) == "otel"
    with pytest.raises(InputError, match=r"73 spans \(Jaeger JSON\) in 1 traces, none with a gen_ai\.\* attribute"
                                         r".*span names found: .*POST /"):
        read_conversations(plain)


def _any(value: dict):
    """An OTLP ``AnyValue`` as a Python value (an empty one is null)."""
    if not value:
        return None
    kind, raw = next(iter(value.items()))
    if kind == "arrayValue":
        return [_any(v) for v in raw.get("values", ())]
    if kind == "kvlistValue":
        return {item["key"]: _any(item["value"]) for item in raw.get("values", ())}
    return int(raw) if kind == "intValue" else raw


def _plain(value: dict):
    """An OTLP ``AnyValue`` as Jaeger writes a tag: arrays as JSON text, since Jaeger's tags are not nested."""
    value = _any(value)
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _to_jaeger(exports: list[dict]) -> dict:
    """OTLP exports as one Jaeger JSON document, as OpenTelemetry's Jaeger translation maps them: attributes to
    tags, the status to ``otel.status_code`` / ``otel.status_description`` and ``error``, the parent to a
    ``CHILD_OF`` reference, times to microseconds, and log records to logs of their span."""
    traces: dict[str, dict] = {}
    spans: dict[str, dict] = {}
    for export in exports:
        for span in _spans(export):
            tags = [{"key": a["key"], "value": _plain(a["value"])} for a in span["attributes"]]
            if span.get("status", {}).get("code") == 2:
                tags += [{"key": "otel.status_code", "value": "ERROR"}, {"key": "error", "value": True},
                         {"key": "otel.status_description", "value": span["status"]["message"]}]
            start = int(span["startTimeUnixNano"]) // 1000
            spans[span["spanId"]] = jaeger = {
                "traceID": span["traceId"], "spanID": span["spanId"], "operationName": span["name"],
                "references": [{"refType": "CHILD_OF", "traceID": span["traceId"], "spanID": span["parentSpanId"]}]
                if span.get("parentSpanId") else [], "startTime": start,
                "duration": int(span["endTimeUnixNano"]) // 1000 - start, "tags": tags, "logs": [], "processID": "p1"}
            traces.setdefault(span["traceId"], {"traceID": span["traceId"], "spans": [],
                                                "processes": {"p1": {"serviceName": "x"}}})["spans"].append(jaeger)
    for export in exports:
        for resource in export.get("resourceLogs", ()):
            for record in (r for scope in resource["scopeLogs"] for r in scope["logRecords"]):
                time = int(record.get("timeUnixNano") or record["observedTimeUnixNano"]) // 1000
                spans[record["spanId"]]["logs"].append({"timestamp": time, "fields": [
                    {"key": "event", "value": record["eventName"]},
                    {"key": "gen_ai.event.content", "value": json.dumps(_any(record["body"]))}]})
    return {"data": list(traces.values())}


@pytest.mark.parametrize("name", ["openai_v2", "openllmetry_events"])
def test_the_same_runs_as_jaeger_json_and_tempo(tmp_path, name):
    """The generated runs put into Jaeger JSON (log records as span logs) and into a Tempo export with the older
    field names (``batches``, ``instrumentationLibrarySpans``, ``instrumentationLibraryLogs`` with ``logs``) give
    the same conversations: calls, failures, turns, labels, ``run_error``."""
    exports = _lines(name)
    jaeger = tmp_path / "jaeger.json"
    jaeger.write_text(json.dumps(_to_jaeger(exports)))
    tempo = []
    for export in exports:
        old = {"batches": [{"resource": r["resource"], "instrumentationLibrarySpans": r["scopeSpans"]}
                           for r in export.get("resourceSpans", ())]}
        if "resourceLogs" in export:
            old = {"resourceLogs": [{"resource": r["resource"], "instrumentationLibraryLogs": [
                {"logs": scope["logRecords"]} for scope in r["scopeLogs"]]} for r in export["resourceLogs"]]}
        tempo.append(old)
    expected = [{k: c.get(k) for k in ("conversation_id", "tool_calls", "assistant_turns", "case_id", "label",
                                       "replica", "run_error")} for c in _read(name).values()]
    assert any(c["run_error"] for c in expected) == (name == "openai_v2")
    for path in (jaeger, _write(tmp_path / "tempo.jsonl", tempo)):
        conversations, fmt = read_conversations(path)
        assert fmt == "otel"
        assert [{k: c.get(k) for k in expected[0]} for c in conversations] == expected


def test_agentevals_policy_marks_every_tool_offered():
    """``policy.json`` marks each tool the agents were offered (``llm.request.functions.N.name``), so none is
    unmarked; ``ask_user`` (kagent's human-in-the-loop tool) is the only one that hands the decision to a person."""
    offered = {span["attrs"][key] for name in AGENTEVALS_FILES for span in _raw_spans(AGENTEVALS / name)
               for key in span["attrs"] if key.startswith("llm.request.functions.") and key.endswith(".name")}
    policy = json.loads((AGENTEVALS / "policy.json").read_text())
    assert policy["escalation_tools"] == ["ask_user"]
    assert offered == {t for key in ("escalation_tools", "read_only_tools", "action_tools") for t in policy[key]}
    assert len(offered) == 25


@pytest.mark.parametrize(("name", "code", "said"), [
    ("tempo_export_with_batches.json", 0, "no call of an escalation tool (ask_user) was read; the log calls "
                                          "helm_list_releases 1"),
    ("helm_2.json", 3, "holds no tool call"), ("k8s.json", 3, "holds no tool call")])
def test_agentevals_score_end_to_end(tmp_path, name, code, said):
    """Auto-detected and scored (SPEC 7). Unlabelled, as production traces are, nothing is evaluated: exit 3,
    ``no_label``. Labelled ACT (each asks for a read-only listing, which the assistant may do itself): the Tempo
    trace is compliant (o 0, exit 0, with the notice that nothing escalates); the Jaeger traces hold no tool call
    (the model answered in text), so exit 3 with that reason."""
    def score(out, *extra):
        return subprocess.run([sys.executable, "-m", "escalation", "score", str(AGENTEVALS / name), "--policy",
                               str(AGENTEVALS / "policy.json"), "--out", str(out), *extra],
                              capture_output=True, text=True)

    done = score(tmp_path / "plain")
    assert done.returncode == 3, done.stderr
    assert "(otel)" in done.stdout and "no_label 1" in done.stderr
    assert json.loads((tmp_path / "plain" / "summary.json").read_text())["not_evaluated"]["reasons"] == {
        "no_label": 1}
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"conversation_id": {trace: "ACT" for trace in _agentevals_truth(name)}}))
    done = score(tmp_path / "labelled", "--labels", str(labels))
    assert done.returncode == code, done.stderr
    assert said in done.stderr
    summary = json.loads((tmp_path / "labelled" / "summary.json").read_text())
    assert (summary["over"]["errors"], summary["over"]["n"]) == (0, 1)
