"""OTLP JSON traces with the OpenTelemetry GenAI semantic conventions (``--format otel``).

The same span model is read in three envelopes, one export a line or one such object as the whole file:

- **OTLP JSON**, what the OpenTelemetry Collector's file exporter writes
  (``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``, and
  ``{"resourceLogs": ...}`` for log records). Attribute values are OTLP's typed values
  (``{"stringValue": ...}``, ``intValue`` as a string, ``arrayValue``, ``kvlistValue``); ids are hex (base64
  ids, as protobuf's own JSON mapping writes them, are read too).
- **Grafana Tempo** (``GET /api/traces/<traceID>`` of the Tempo HTTP API): ``{"batches": [...]}`` of the same
  resource spans, often with OTLP's older field names (``instrumentationLibrarySpans``, and
  ``instrumentationLibraryLogs`` with ``logs`` or ``logRecords`` in an OTLP export of that age).
- **Jaeger JSON** (the query API and the UI's download, Jaeger's ``model/json``):
  ``{"data": [{"traceID", "spans": [...], "processes"}]}``, or one such trace object. A span's ``tags``
  (``[{"key", "type", "value"}]``, plain values) are its attributes, its ``CHILD_OF`` reference its parent,
  its ``logs`` (``{"timestamp", "fields"}``, the ``event`` field naming them) its events; ``startTime`` and
  ``duration`` are microseconds; the status is the ``otel.status_code`` tag (``ERROR``, with
  ``otel.status_description``) or the ``error`` tag, as OpenTelemetry's Jaeger translation writes them.

**One trace is one conversation**: ``conversation_id`` is the trace id. What is read of it:

- **Tool spans** (``gen_ai.operation.name`` ``execute_tool``, or OpenLLMetry's ``traceloop.span.kind``
  ``tool``): one call each, named by ``gen_ai.tool.name`` (else ``tool.name``, ``traceloop.entity.name``,
  else the span name less its ``execute_tool`` prefix: the span name is not always the tool), with
  ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.id``; a span whose status is ERROR (or that has
  ``error.type``) is ``"failed": true`` (SPEC section 1).
- **Calls the model requested**: ``tool_call`` parts of ``gen_ai.output.messages`` (``parts`` with
  ``name``, ``id``, ``arguments``), ``tool_calls`` of a ``gen_ai.choice`` event, and OpenLLMetry's older
  flattened ``gen_ai.completion.N.tool_calls.M.*`` attributes. The record comes from the tool spans where
  they exist and from these requests where they do not, never counting one call twice: a tool span is the
  request with its ``gen_ai.tool.call.id``, or, without ids, the earliest unmatched request of the same
  tool that ended before the span started. A request no tool span executed is still a call (an attempted
  call is a call); a tool span no request names is a call at the span's start.
- **Turns** (SPEC section 1, in time order): the user messages of the model calls' inputs
  (``gen_ai.input.messages``, ``gen_ai.user.message`` events, ``gen_ai.prompt.N.*``). Each model call
  repeats the history, so a call's input opens only the user messages past those of the calls before it.
  The assistant's text is that of the outputs. Agent spans (``invoke_agent``, ``invoke_workflow``,
  ``create_agent``) are read for messages only in a trace whose model calls carry none.
- **Messages as events**: span events (Jaeger's span logs) and log records (``resourceLogs``, tied to their span by
  ``traceId`` / ``spanId``) named ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and ``gen_ai.choice``, with the message as the
  body (or as the ``gen_ai.event.content`` attribute, JSON), and
  ``gen_ai.client.inference.operation.details`` events carrying ``gen_ai.input.messages`` /
  ``gen_ai.output.messages``.
- **Labels** from the attributes ``escalation.case_id``, ``escalation.label``, ``escalation.replica``
  and ``escalation.scenario_id`` on any span of the trace, the root's first (an operator tags traffic at
  the source); ``--labels`` replaces them. ``metadata`` keeps the root span's name and a session id
  (``gen_ai.conversation.id`` or ``session.id``) when there is one.
- A trace whose root span has status ERROR is ``run_error`` (SPEC section 3), with the status message.
- **Where each result goes back** (``escalation score --emit otel``): ``metadata["otel"]`` is
  ``{"trace_id", "turn_spans", "call_spans"}`` (hex ids), and ``"response_ids"`` when a turn's span has
  ``gen_ai.response.id``. ``turn_spans[t]`` is the span whose output first answers turn ``t`` (the model span; the
  tool span for a call that no model output requested; null for a turn with no output), ``response_ids[t]`` its
  ``gen_ai.response.id``; ``call_spans[k]`` is the tool span that executed call ``k`` (``tool_calls[k]``), else the
  model span that requested it. They come from the time line the record is made of (2% of the reading time).
- **Sessions** (``--group-by session``, ``ReadOptions.group_by``): the traces of a file that share a session id
  are one conversation, whose ``conversation_id`` is the session id: their time lines joined in the order the
  traces started, each trace's calls matched within it, a user message that a later trace's model input repeats
  (the application sent the history) counted once (:class:`~._chat.UserMessages`); labels from the roots first;
  ``run_error`` when any trace's root has status ERROR (the session did not run to its end). ``metadata`` adds
  ``traces`` (their ids) and ``otel["span_traces"]`` (the trace of each span a result goes back to). A session
  whose traces are in several files is a conversation in each, and their repeated ``conversation_id`` is refused
  (SPEC section 6): put a session's traces in one file.

A trace with no GenAI span (``gen_ai.*`` attribute or event) is not a conversation and is left out; a
file with no GenAI span at all, or with spans outside these envelopes, is refused with what was found.

**Memory**: JSON Lines are read a line at a time, but the spans of one trace may come in any line, so
each file's spans are kept, reduced to what is read above, until the file ends; the traces are given
then, in the order of their first span. A trace spread over several files is read as one conversation
per file (give the files' lines as one file). A single JSON document is parsed whole (within
``--max-document-bytes``).
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

import orjson

from .._errors import InputError
from ._chat import UserMessages, executed_request, join_texts, parse_arguments, timeline_transcript
from ._chat_records import chat_record, trace_groups, trace_records
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "otel"
EXPECTS = ("OTLP JSON traces ({resourceSpans: [...]} a line, or one such object; Tempo's {batches: [...]}; Jaeger's "
           "{data: [{traceID, spans}]}) with GenAI semantic conventions")

_LABEL_KEYS = {"case_id": "escalation.case_id", "label": "escalation.label", "replica": "escalation.replica",
               "scenario_id": "escalation.scenario_id"}
_SESSION_KEYS = ("gen_ai.conversation.id", "session.id")
#: The attributes a span keeps for reading; the others are dropped as the file is read.
_KEPT = re.compile(r"gen_ai\.|escalation\.|traceloop\.(span\.kind|entity\.name|entity\.input)$|tool\.name$"
                   r"|session\.id$|error\.type$")
_AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
_MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_FLAT = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
_FLAT_CALL = re.compile(r"tool_calls\.(\d+)\.(name|arguments|id)")


def _value(value):
    """The Python value of an OTLP ``AnyValue``."""
    if not isinstance(value, dict) or not value:
        return None
    kind, raw = next(iter(value.items()))
    if kind == "intValue":
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    if kind == "arrayValue":
        return [_value(v) for v in _items(raw.get("values"))] if isinstance(raw, dict) else None
    if kind == "kvlistValue":
        return _attributes((raw or {}).get("values")) if isinstance(raw, dict) else None
    return raw


def _attributes(items, kept=None) -> dict:
    """OTLP ``[{"key", "value"}]`` as a dict, only the keys ``kept`` matches when it is given."""
    out = {}
    for item in items if isinstance(items, list) else ():
        key = item.get("key") if isinstance(item, dict) else None
        if isinstance(key, str) and (kept is None or kept.match(key)):
            out[key] = _value(item.get("value"))
    return out


def _id(raw) -> str | None:
    """A trace or span id as hex: OTLP/JSON writes hex, protobuf's JSON mapping base64."""
    if not isinstance(raw, str) or not raw:
        return None
    if re.fullmatch(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}", raw):
        return raw.lower()
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


def _hex(raw) -> str | None:
    """A Jaeger id: always hex, though the leading zeros of a 128-bit trace id's high half may be left out."""
    return raw.lower() if isinstance(raw, str) and raw else None


def _time(raw) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def _is_error(status) -> bool:
    """OTLP ``Status.code`` ERROR (2), as a number or by its enum name."""
    code = status.get("code") if isinstance(status, dict) else None
    return code == 2 or (isinstance(code, str) and code.upper() in ("2", "STATUS_CODE_ERROR", "ERROR"))


class _Span:
    """One span, reduced to what the reader uses; :func:`_otlp_span` and :func:`_jaeger_span` make it."""

    __slots__ = ("span", "parent", "name", "start", "end", "error", "attrs", "events")

    def __init__(self, span, parent, name, start, end, error, attrs, events):
        self.span, self.parent, self.start, self.end, self.error = span, parent, start, end, error
        self.name = name if isinstance(name, str) else ""
        self.attrs = attrs
        self.events = [e for e in events if isinstance(e.name, str) and e.name.startswith("gen_ai.")]

    def text(self, key: str) -> str | None:
        """The attribute ``key`` when it is a non-empty string."""
        value = self.attrs.get(key)
        return value if isinstance(value, str) and value else None

    @property
    def operation(self) -> str | None:
        return self.text("gen_ai.operation.name")

    @property
    def is_tool(self) -> bool:
        return self.operation == "execute_tool" or self.text("traceloop.span.kind") == "tool"

    @property
    def genai(self) -> bool:
        return bool(self.events) or any(key.startswith("gen_ai.") for key in self.attrs)


class _Event:
    """A GenAI event: a span event, or a log record with its span."""

    __slots__ = ("name", "time", "body", "attrs")

    def __init__(self, name, time, body, attrs):
        self.name, self.time, self.body, self.attrs = name, time, body, attrs


def _otlp_span(raw: dict) -> _Span:
    """A span of OTLP JSON (of any of its field-name generations)."""
    start = _time(raw.get("startTimeUnixNano"))
    status = raw.get("status")
    error = None
    if isinstance(status, dict) and _is_error(status):
        message = status.get("message")
        error = message if isinstance(message, str) and message.strip() else "status ERROR"
    events = [_Event(event.get("name"), _time(event.get("timeUnixNano")) or start, None,
                     _attributes(event.get("attributes")))
              for event in _items(raw.get("events")) if isinstance(event, dict)]
    return _Span(_id(raw.get("spanId")), _id(raw.get("parentSpanId")), raw.get("name"), start,
                 _time(raw.get("endTimeUnixNano")) or start, error, _attributes(raw.get("attributes"), _KEPT), events)


def _tags(items) -> dict:
    """Jaeger's ``[{"key", "type", "value"}]`` (plain values: the ``type`` says which) as a dict."""
    return {item["key"]: item.get("value") for item in _list(items) if isinstance(item.get("key"), str)}


def _jaeger_span(raw: dict) -> _Span:
    """A span of Jaeger JSON: microseconds, tags, the ``CHILD_OF`` reference as the parent, logs as events."""
    start = _time(raw.get("startTime")) * 1000
    tags = _tags(raw.get("tags"))
    parent = next((_hex(ref.get("spanID")) for ref in _list(raw.get("references")) if ref.get("refType") == "CHILD_OF"),
                  None)
    error = None
    if str(tags.get("otel.status_code")).upper() == "ERROR" or tags.get("error") in (True, "true"):
        message = tags.get("otel.status_description")
        error = message if isinstance(message, str) and message.strip() else "status ERROR"
    events = []
    for log in _list(raw.get("logs")):
        fields = _tags(log.get("fields"))
        events.append(_Event(fields.pop("event", None), _time(log.get("timestamp")) * 1000 or start, None, fields))
    return _Span(_hex(raw.get("spanID")), parent, raw.get("operationName"), start,
                 start + _time(raw.get("duration")) * 1000, error, {k: v for k, v in tags.items() if _KEPT.match(k)},
                 events)


class _Trace:
    __slots__ = ("place", "spans", "logs")

    def __init__(self, place):
        self.place, self.spans, self.logs = place, [], {}


def _values(doc: Document):
    """``(location, value)`` of each export of the file."""
    if doc.kind == "jsonl":
        return ((("line", n), v) for n, v in doc.data)
    if doc.kind == "json" and isinstance(doc.data, list):
        return ((("path", f"[{i}]"), v) for i, v in enumerate(doc.data))
    if doc.kind == "json":
        return iter([(("line", 1) if doc.single_line else ("path", ""), doc.data)])
    raise InputError(f"expected {EXPECTS}", source=doc.source)


def _is_span(value) -> bool:
    return isinstance(value, dict) and any(k in value for k in ("traceId", "trace_id", "traceID")) and any(
        k in value for k in ("spanId", "span_id", "spanID"))


def _envelope(value) -> str | None:
    """Which envelope a value of the file is: ``"OTLP"``, ``"Tempo"`` or ``"Jaeger JSON"`` (else None)."""
    if not isinstance(value, dict):
        return None
    if "resourceSpans" in value or "resourceLogs" in value:
        return "OTLP"
    batches = value.get("batches")
    if isinstance(batches, list) and batches and isinstance(batches[0], dict) and (
            "scopeSpans" in batches[0] or "instrumentationLibrarySpans" in batches[0]):
        return "Tempo"
    data = value.get("data")
    trace = data[0] if isinstance(data, list) and data else value
    if isinstance(trace, dict) and "traceID" in trace and isinstance(trace.get("spans"), list):
        return "Jaeger JSON"
    return None


def _first(doc: Document):
    for _, value in _values(doc):
        return value
    return None


def sniff(doc: Document) -> bool:
    """An OTLP export (``resourceSpans`` or ``resourceLogs``), a Tempo trace (``batches``), a Jaeger JSON trace
    (``data``), or spans without an envelope (refused with a message by :func:`read`)."""
    if doc.kind not in ("json", "jsonl"):
        return False
    value = _first(doc)
    if isinstance(value, list) and doc.kind == "json":
        value = value[0] if value else None
    return _envelope(value) is not None or _is_span(value)


def _collect(doc: Document) -> tuple[dict[str, _Trace], set[str]]:
    """The traces of the file by id, in the order of their first span or record, and the envelopes found."""
    traces: dict[str, _Trace] = {}
    envelopes: set[str] = set()
    for location, value in _values(doc):
        kind = _envelope(value)
        if kind is None and (_is_span(value) or (isinstance(value, list) and value and _is_span(value[0]))):
            raise InputError("holds spans without an envelope; expected {resourceSpans: [{resource, scopeSpans: "
                             "[{scope, spans: [...]}]}]}, as the OpenTelemetry Collector's file exporter (or an "
                             "OTLP/HTTP JSON request) writes them, or Jaeger's {data: [{traceID, spans, processes}]}",
                             source=doc.source, **_where(location))
        if kind is None:
            found = (f"keys {', '.join(sorted(map(str, value))[:8])}" if isinstance(value, dict)
                     else type(value).__name__)
            raise InputError(f"expected an OTLP export with resourceSpans, a Tempo trace with batches or a Jaeger "
                             f"JSON trace (found {found})", source=doc.source, **_where(location))
        envelopes.add(kind)
        if kind == "Jaeger JSON":
            data = value.get("data")
            for trace in _list(data) if isinstance(data, list) else [value]:
                for raw in _list(trace.get("spans")):
                    trace_id = _hex(raw.get("traceID") or trace.get("traceID"))
                    if trace_id is not None:
                        traces.setdefault(trace_id, _Trace(location)).spans.append(_jaeger_span(raw))
            continue
        for resource in _list(value.get("resourceSpans") or value.get("batches")):
            for scope in _list(resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans")):
                for raw in _list(scope.get("spans")):
                    trace = _id(raw.get("traceId"))
                    if trace is not None:
                        traces.setdefault(trace, _Trace(location)).spans.append(_otlp_span(raw))
        for resource in _list(value.get("resourceLogs")):
            for scope in _list(resource.get("scopeLogs") or resource.get("instrumentationLibraryLogs")):
                for raw in _list(scope.get("logRecords") or scope.get("logs")):
                    name = raw.get("eventName") or _attributes(raw.get("attributes")).get("event.name")
                    trace = _id(raw.get("traceId"))
                    if trace is None or not isinstance(name, str) or not name.startswith("gen_ai."):
                        continue
                    event = _Event(name, _time(raw.get("timeUnixNano")) or _time(raw.get("observedTimeUnixNano")),
                                   _value(raw.get("body")), _attributes(raw.get("attributes")))
                    traces.setdefault(trace, _Trace(location)).logs.setdefault(_id(raw.get("spanId")), []).append(
                        event)
    return traces, envelopes


def _list(value) -> list:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _where(location) -> dict:
    kind, value = location
    return {"line": value} if kind == "line" else {"line": None, "field": value or None}


def _json(value):
    """A message list or object that an attribute holds as JSON text."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _items(value) -> list:
    return value if isinstance(value, list) else []


def _call_of(item) -> tuple | None:
    """``(name, arguments, id)`` of a tool call in the OpenAI shape (``function``) or a flat one."""
    if not isinstance(item, dict):
        return None
    nested = item.get("function")
    function: dict = nested if isinstance(nested, dict) else item
    return function.get("name"), parse_arguments(function.get("arguments")), item.get("id")


def _message(raw, role=None) -> tuple[str | None, list, list]:
    """``(role, texts, calls)`` of one message: GenAI ``parts``, or an OpenAI-like ``content`` /
    ``tool_calls``."""
    if not isinstance(raw, dict):
        return role, [], []
    role = raw.get("role") if isinstance(raw.get("role"), str) else role
    texts, calls = [], []
    parts = raw.get("parts")
    if isinstance(parts, list):
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(part.get("content"))
            elif kind == "tool_call":
                calls.append((part.get("name"), parse_arguments(part.get("arguments")), part.get("id")))
    content = raw.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        texts.extend(p.get("text") for p in content if isinstance(p, dict) and p.get("type") in ("text", None))
    calls.extend(c for c in map(_call_of, _items(raw.get("tool_calls"))) if c is not None)
    return role, texts, calls


def _flat_messages(attrs: dict, kind: str) -> list:
    """OpenLLMetry's flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes as messages."""
    messages: dict[int, dict] = {}
    for key, value in attrs.items():
        found = _FLAT.fullmatch(key)
        if not found or found.group(1) != kind:
            continue
        message = messages.setdefault(int(found.group(2)), {})
        call = _FLAT_CALL.fullmatch(found.group(3))
        if call:
            calls = message.setdefault("tool_calls", {})
            calls.setdefault(int(call.group(1)), {})[call.group(2)] = value
        elif found.group(3) in ("role", "content"):
            message[found.group(3)] = value
    out = []
    for _, message in sorted(messages.items()):
        calls = message.pop("tool_calls", {})
        out.append({**message, "tool_calls": [c for _, c in sorted(calls.items())]})
    return out


def _event_message(event: _Event) -> tuple[str, tuple] | None:
    """``("input" | "output", (role, texts, calls))`` of a message event."""
    body = event.body if event.body is not None else _json(event.attrs.get("gen_ai.event.content"))
    if not isinstance(body, dict):
        body = event.attrs
    if event.name in _MESSAGE_EVENTS:
        return "input", _message(body, body.get("role") or _MESSAGE_EVENTS[event.name])
    if event.name == "gen_ai.choice":
        role, texts, calls = _message(body.get("message"), "assistant")
        calls += [c for c in map(_call_of, _items(body.get("tool_calls"))) if c is not None]  # OpenLLMetry's place
        return "output", (role, texts, calls)
    return None


def _span_messages(span: _Span, logs: list) -> tuple[list, list]:
    """The input and output messages of a span, ``(role, texts, calls)`` each, from its attributes and
    events."""
    inputs: list = []
    outputs: list = []
    for attrs in [span.attrs] + [e.attrs for e in span.events + logs if e.name == _DETAILS_EVENT]:
        for key, out in (("gen_ai.input.messages", inputs), ("gen_ai.output.messages", outputs)):
            value = _json(attrs.get(key))
            out.extend(_message(m) for m in (value if isinstance(value, list) else ()))
    inputs.extend(_message(m) for m in _flat_messages(span.attrs, "prompt"))
    outputs.extend(_message(m, "assistant") for m in _flat_messages(span.attrs, "completion"))
    for event in sorted(span.events + logs, key=lambda e: e.time):
        read = _event_message(event)
        if read is not None:
            (inputs if read[0] == "input" else outputs).append(read[1])
    return inputs, outputs


def _tool_name(span: _Span):
    for key in ("gen_ai.tool.name", "tool.name", "traceloop.entity.name"):
        if span.text(key):
            return span.text(key)
    name = span.name.removeprefix("execute_tool").strip()
    return name or None


def _label(spans: list[_Span], key: str):
    for span in spans:
        if span.attrs.get(key) is not None:
            return span.attrs[key]
    return None


def _conversation(trace_id: str, trace: _Trace) -> dict | None:
    """One trace as a conversation (module docstring); None for a trace with no GenAI span."""
    return _session(trace_id, [(trace_id, trace)])


def _session_of(trace: _Trace) -> str | None:
    """A trace's session id: on its root span first, else on the first span that has one."""
    spans = sorted(trace.spans, key=lambda s: (s.start, -s.end))
    known = {s.span for s in spans}
    ordered = [s for s in spans if s.parent is None or s.parent not in known] + spans
    return next((s.text(key) for key in _SESSION_KEYS for s in ordered if s.text(key)), None)


def _session(conversation_id: str, parts: list[tuple[str, _Trace]]) -> dict | None:
    """The traces of ``parts`` (``(trace id, trace)`` in the order they started; one, or a session's) as one
    conversation: labels from their spans, the roots' first; ``run_error`` from the first root with status ERROR;
    the time lines of the traces joined (each trace's calls matched within it, the user messages counted once
    across them: :class:`UserMessages`); None when no trace has a GenAI span."""
    parts = [(trace_id, trace) for trace_id, trace in parts if any(s.genai for s in trace.spans) or trace.logs]
    if not parts:
        return None
    roots: list[_Span] = []
    others: list[_Span] = []
    timeline: list = []
    owners: list = []
    traces_of: dict = {}
    users = UserMessages()
    for trace_id, trace in parts:
        spans = sorted(trace.spans, key=lambda s: (s.start, -s.end))
        known = {s.span for s in spans}
        its_roots = [s for s in spans if s.parent is None or s.parent not in known]
        roots += its_roots[:1]
        others += [s for s in spans if not its_roots or s is not its_roots[0]]
        users.trace()
        entries, its_owners = _timeline(spans, trace.logs, users)
        timeline += [(time, order + len(owners), kind, payload) for time, order, kind, payload in entries]
        owners += its_owners
        traces_of.update((s.span, trace_id) for s in spans)
    record: dict[str, Any] = {"conversation_id": conversation_id}
    ordered = roots + others
    for field, key in _LABEL_KEYS.items():
        if (value := _label(ordered, key)) is not None:
            record[field] = value
    metadata: dict = {"root_span": roots[0].name if roots else None}
    if (session := next((s.text(key) for key in _SESSION_KEYS for s in ordered if s.text(key)), None)):
        metadata["session_id"] = session
    if len(parts) > 1:
        metadata["traces"] = [trace_id for trace_id, _ in parts]
    record["metadata"] = metadata
    if (failed := next((s for s in roots if s.error is not None), None)) is not None:
        record["run_error"] = failed.error
    timeline.sort(key=lambda item: item[:2])  # in time order once: timeline_transcript's own sort is then linear
    chat = timeline_transcript(timeline).record()
    metadata["otel"] = _span_ids(parts[0][0], timeline, owners, chat, [*roots, *others])
    if len(parts) > 1:  # the trace of each span an event goes back to
        placed = {span for span in (*metadata["otel"]["turn_spans"], *metadata["otel"]["call_spans"]) if span}
        metadata["otel"]["span_traces"] = {span: traces_of[span] for span in sorted(placed)}
    return chat_record(record, chat)


def _span_ids(trace_id: str, timeline: list, owners: list, chat: dict, spans: list[_Span]) -> dict:
    """``metadata["otel"]`` (module docstring): the span of each turn and call of ``chat``, the record made of
    ``timeline`` (sorted; :func:`timeline_transcript` keeps every call and the assistant's non-blank texts, in
    order); ``owners[order]``: the span that the entry of that ``order`` was read from."""
    call_turns = iter([c["turn"] for c in chat["tool_calls"]])
    text_turns = iter([m["turn"] for m in chat["messages"] if m["role"] == "assistant"])
    turn_spans: list[str | None] = [None] * chat["assistant_turns"]
    call_spans = []
    for _, order, kind, payload in timeline:
        if kind == "call":
            turn = next(call_turns)
            call_spans.append(payload["span"])
        elif kind == "text" and isinstance(payload, str) and payload.strip():
            turn = next(text_turns)
        else:
            continue
        if turn_spans[turn] is None:
            turn_spans[turn] = owners[order]
    out: dict[str, Any] = {"trace_id": trace_id, "turn_spans": turn_spans, "call_spans": call_spans}
    responses = {s.span: s.text("gen_ai.response.id") for s in spans}
    if any(responses.get(span) for span in turn_spans):
        out["response_ids"] = [responses.get(span) for span in turn_spans]
    return out


def _timeline(spans: list[_Span], logs: dict, users: UserMessages) -> tuple[list, list]:
    """The trace's user messages (those ``users`` has not read), assistant text and calls, as read: the entries
    ``(time, order, kind, payload)`` of :func:`timeline_transcript`, and the span each was read from (by
    ``order``); a call's payload names its span as ``span`` (the tool span that executed it, else the model span
    that requested it)."""
    timeline: list[tuple[int, int, str, Any]] = []  # (time, order, kind, payload: a text or a call)
    owners: list[str | None] = []
    model_spans = [s for s in spans if not s.is_tool and s.operation not in _AGENT_OPERATIONS]
    read = [(s, *_span_messages(s, logs.get(s.span, []))) for s in model_spans]
    if not any(inputs or outputs for _, inputs, outputs in read):
        agents = [s for s in spans if s.operation in _AGENT_OPERATIONS]
        read = [(s, *_span_messages(s, logs.get(s.span, []))) for s in agents]
    requested: list[dict] = []
    for span, inputs, outputs in read:
        for text in users.new([join_texts(texts) for role, texts, _ in inputs if role == "user"]):
            timeline.append((span.start, len(timeline), "user", text))
            owners.append(span.span)
        for _, texts, calls in outputs:
            timeline.append((span.end, len(timeline), "text", join_texts(texts)))
            owners.append(span.span)
            for name, arguments, call_id in calls:
                call: dict[str, Any] = {"name": name, "arguments": arguments, "id": call_id, "time": span.end,
                                        "span": span.span}
                requested.append(call)
                timeline.append((span.end, len(timeline), "call", call))
                owners.append(span.span)
    for span in (s for s in spans if s.is_tool):
        matched = executed_request(requested, span.text("gen_ai.tool.call.id"), _tool_name(span), span.start)
        if matched is not None:
            call = matched
        else:
            call = {"name": _tool_name(span), "id": span.text("gen_ai.tool.call.id"),
                    "arguments": parse_arguments(span.attrs.get("gen_ai.tool.call.arguments"))}
            timeline.append((span.start, len(timeline), "call", call))
            owners.append(span.span)
        call["failed"] = span.error is not None or span.attrs.get("error.type") is not None
        call["span"] = span.span
    return timeline, owners


def conversations_of(traces: dict, group_by: str):
    """The conversations of a file's traces (:func:`~._chat_records.trace_groups`), a session by its id."""
    return trace_groups(traces, group_by, _session_of, lambda trace: min((s.start for s in trace.spans), default=0))


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    traces, envelopes = _collect(doc)
    found = 0
    for item in trace_records(doc, conversations_of(traces, options.group_by), _session):
        found += 1
        yield item
    if traces and not found:
        names = sorted({s.name for t in traces.values() for s in t.spans})
        raise InputError(f"holds {sum(len(t.spans) for t in traces.values())} spans ({', '.join(sorted(envelopes))}) "
                         f"in {len(traces)} traces, "
                         "none with a gen_ai.* attribute or event (the OpenTelemetry GenAI semantic conventions); "
                         f"span names found: {', '.join(names[:8])}: instrument the model and tool calls (or turn on "
                         "the instrumentation's GenAI attributes)", source=doc.source)
