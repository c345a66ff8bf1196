"""Langfuse trace exports (``--format langfuse``).

Three envelopes, one a line, as a JSON list, or one as the whole file:

- **the UI's download** of a trace (the download button of a trace's page; ``packages/shared/scripts/seeder/utils/
  framework-traces`` of the Langfuse repository keeps such files): ``{"trace": {...}, "observations": [...]}``;
- **the public API's trace** (``GET /api/public/traces/{traceId}``, ``TraceWithFullDetails``): the trace's fields
  with its ``observations`` inline, ``{"id", "name", "sessionId", "tags", "metadata", ..., "observations": [...]}``;
- **a page of observations** (``GET /api/public/observations``, and ``/api/public/v2/observations`` with the ``io``
  field group): ``{"data": [...], "meta": {...}}``, grouped into traces by their ``traceId``; a page of traces
  (``{"data": [{..., "observations": [...]}]}``) is read as traces.

An observation is ``{"id", "traceId", "type", "name", "startTime", "endTime", "input", "output", "level",
"statusMessage", "parentObservationId", "metadata"}``; ``type`` is ``GENERATION``, ``SPAN``, ``EVENT``, ``TOOL``,
``AGENT``, ``CHAIN``... (``ObservationType`` of the API), ``level`` ``DEBUG``, ``DEFAULT``, ``WARNING`` or ``ERROR``.
Input and output are JSON, or JSON text (the v2 API returns them as strings).

**One trace is one conversation**: ``conversation_id`` is the trace id. What is read of it:

- **Tool observations** (``type`` ``TOOL``, or a span whose ``metadata.attributes`` say ``gen_ai.operation.name``
  ``execute_tool`` or ``openinference.span.kind`` ``TOOL``): one call each, named by the attribute
  ``gen_ai.tool.name`` (else ``tool.name``, ``ai.toolCall.name``, else the name less an ``execute_tool`` or
  ``running tool:`` prefix), with the observation's ``input`` as arguments; ``level`` ``ERROR`` makes it
  ``"failed": true`` (SPEC section 1).
- **Calls the model requested**, in the ``output`` of ``GENERATION`` observations, in the shapes the
  instrumentations write there: an OpenAI ``ChatCompletion`` (``choices``) or chat message (``tool_calls``, also
  LangChain's ``{name, args}`` and ``additional_kwargs.tool_calls``), a Responses API ``Response`` or items
  (:mod:`._openai_responses`), Anthropic ``tool_use`` blocks, Gemini ``function_call`` parts (a
  ``GenerateContentResponse``'s ``candidates``, an ADK ``LlmResponse``'s ``content``), GenAI semantic-convention
  messages (``parts`` of type ``tool_call``), Vercel AI ``tool_calls`` / ``toolCalls`` (``toolName``), and content
  parts of type ``function`` (Koog). A call id that two generations hold (a framework's generation around the
  client's) is one call. As in :mod:`._otel`, the record comes from the tool observations where they
  exist and from these requests where they do not, never counting one call twice: a tool observation is the request
  with its ``gen_ai.tool.call.id``, or, without ids, the earliest unmatched request of the same tool whose generation
  started before it (Google ADK starts the tool before its generation ends). A request no tool observation executed
  is still a call.
- **Turns** (SPEC section 1, in time order): the user messages of the generations' inputs (a list of messages, a
  ``{"messages"}`` or Gemini ``{"contents"}`` object, or a string); each input repeats the history, so a
  generation's input opens only the user messages past those of the generations before it.
- **Labels** from the keys ``escalation.case_id``, ``escalation.label``, ``escalation.replica`` and
  ``escalation.scenario_id`` of the trace's ``metadata`` (or its ``attributes``), of its ``tags``
  (``"escalation.label:ESC"`` or ``"escalation.label=ESC"``), else of an observation's metadata, in time order;
  ``--labels`` replaces them. ``metadata`` keeps the trace's name and ``sessionId``.
- A trace whose root observation has ``level`` ``ERROR`` is ``run_error`` (SPEC section 3), with its
  ``statusMessage``.
- **Sessions** (``--group-by session``): the traces of a file that share a ``sessionId`` are one conversation
  whose ``conversation_id`` is the session id, read as the ``otel`` reader reads a session (:mod:`._otel`): the
  traces in the order they started, a user message a later trace repeats counted once, ``run_error`` when a
  trace's root is at level ERROR, ``metadata["traces"]`` their ids.

A trace with no generation or tool observation is not a conversation and is left out; a file with none at all, or
whose observations are ids only (the traces list), is refused with what was found. A single JSON document is parsed
whole (within ``--max-document-bytes``); the observations of a JSON Lines file are kept until the file ends.
"""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson

from .._errors import InputError
from ._chat import UserMessages, executed_request, join_texts, parse_arguments, timeline_transcript
from ._chat_records import chat_record, records_of, trace_groups, trace_records, where
from ._gemini import _call as gemini_call
from ._markers import RESPONSES_ITEM_TYPES
from ._openai import add_call, content_text
from ._openai_responses import ApprovalTranscript, add_item, is_response
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "langfuse"
EXPECTS = ("Langfuse trace exports: the UI's {trace, observations}, the API's trace {id, ..., observations: [...]} "
           "or a page {data: [...]} of observations, one a line or a JSON list of them")

_TYPES = frozenset({"GENERATION", "SPAN", "EVENT", "TOOL", "AGENT", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING",
                    "GUARDRAIL"})
_LABEL_KEYS = {"case_id": "escalation.case_id", "label": "escalation.label", "replica": "escalation.replica",
               "scenario_id": "escalation.scenario_id"}
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use", "tool_call"})
_ASSISTANT = frozenset({"assistant", "model", "ai", "AIMessage", "AIMessageChunk"})
_TOOL_PREFIXES = ("execute_tool", "running tool:")


def _json(value):
    """A value that the export holds as JSON text, parsed; other text stays text."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "[", '"'):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _is_observation(value) -> bool:
    return isinstance(value, dict) and value.get("type") in _TYPES and ("startTime" in value or "traceId" in value)


def _shape(value) -> str | None:
    """Which envelope a value of the file is (None for none)."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("trace"), dict) and isinstance(value.get("observations"), list):
        return "download"
    if "id" in value and isinstance(value.get("observations"), list):
        return "trace"
    data = value.get("data")
    if isinstance(data, list) and data and (_is_observation(data[0]) or _shape(data[0]) == "trace"):
        return "page"
    return None


def sniff(doc: Document) -> bool:
    """The first value of the file (or of its JSON list) is a trace export or a page of observations."""
    if doc.kind not in ("json", "jsonl"):
        return False
    if NAME not in doc.cache:
        first = next((value for _, value in records_of(doc, EXPECTS)), None) if doc.kind == "jsonl" or isinstance(
            doc.data, list) else doc.data
        doc.cache[NAME] = _shape(first) is not None
    return doc.cache[NAME]


class _Trace:
    __slots__ = ("place", "fields", "observations")

    def __init__(self, place, fields: dict):
        self.place, self.fields = place, fields
        self.observations: list[dict] = []


def _collect(doc: Document) -> dict[str, _Trace]:
    """The traces of the file by id, in the order they come."""
    traces: dict[str, _Trace] = {}
    for location, value in records_of(doc, EXPECTS):
        shape = _shape(value)
        if shape is None:
            found = (f"keys {', '.join(sorted(map(str, value))[:8])}" if isinstance(value, dict)
                     else type(value).__name__)
            raise InputError(f"expected a Langfuse trace export ({{trace, observations}}, a trace with its "
                             f"observations, or a page {{data: [...]}} of observations) (found {found})",
                             source=doc.source, **where(location))
        if shape == "page" and _is_observation(value["data"][0]):
            for obs in value["data"]:
                if isinstance(obs, dict):
                    trace_id = str(obs.get("traceId"))
                    traces.setdefault(trace_id, _Trace(location, {"id": trace_id})).observations.append(obs)
            continue
        for trace in value["data"] if shape == "page" else [value]:
            fields = trace["trace"] if shape == "download" else trace
            observations = trace.get("observations") if isinstance(trace, dict) else None
            if not isinstance(observations, list) or any(not isinstance(o, dict) for o in observations):
                raise InputError("holds observations that are not objects (the traces list gives their ids only): "
                                 "export each trace with GET /api/public/traces/{traceId}, or download it from the UI",
                                 source=doc.source, **where(location, "observations"))
            trace_id = str(fields.get("id"))
            traces.setdefault(trace_id, _Trace(location, fields)).observations.extend(observations)
    return traces


def _time(raw) -> float:
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def _attributes(obs: dict) -> dict:
    """An observation's OpenTelemetry attributes, which Langfuse keeps under ``metadata.attributes``."""
    metadata = _json(obs.get("metadata"))
    attributes = metadata.get("attributes") if isinstance(metadata, dict) else None
    return attributes if isinstance(attributes, dict) else {}


def _is_tool(obs: dict) -> bool:
    attributes = _attributes(obs)
    return obs.get("type") == "TOOL" or attributes.get("gen_ai.operation.name") == "execute_tool" or attributes.get(
        "openinference.span.kind") == "TOOL"


def _tool_name(obs: dict):
    attributes = _attributes(obs)
    for key in ("gen_ai.tool.name", "tool.name", "ai.toolCall.name"):
        if isinstance(attributes.get(key), str) and attributes[key]:
            return attributes[key]
    name: str = obs["name"] if isinstance(obs.get("name"), str) else ""
    for prefix in _TOOL_PREFIXES:
        name = name.removeprefix(prefix)
    return name.strip() or None


def _call_id(raw) -> str | None:
    """A call id as text (Microsoft Agent Framework writes a list)."""
    if raw is None or isinstance(raw, str):
        return raw
    return orjson.dumps(raw).decode()


class _Output(ApprovalTranscript):
    """What one model output holds: the assistant's texts and the calls it requested, with their ids."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.calls: list[dict] = []

    def assistant(self, text) -> None:
        if isinstance(text, str) and text.strip():
            self.texts.append(text)

    def call(self, name, arguments=None, call_id=None, covers=None) -> None:
        super().call(name, arguments, call_id, covers)
        self.calls.append({"name": name if isinstance(name, str) and name else None, "arguments": arguments,
                           "id": _call_id(call_id)})


def _tool_calls(out: _Output, calls) -> None:
    """``tool_calls`` of a message: OpenAI's (``function``), LangChain's (``args``) or Vercel AI's (``toolName``)."""
    for call in _json(calls) if isinstance(_json(calls), list) else ():
        if isinstance(call, dict) and "toolName" in call:
            out.call(call["toolName"], parse_arguments(call.get("args", call.get("input"))), call.get("toolCallId"))
        elif isinstance(call, dict) and "args" in call and "function" not in call:
            out.call(call.get("name"), parse_arguments(call["args"]), call.get("id"))
        else:
            add_call(out, call)


def _message(out: _Output, message: dict) -> None:
    """One assistant message in any of the module docstring's shapes."""
    role = message.get("role", message.get("type"))
    if role is not None and role not in _ASSISTANT:
        return
    parts = message.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "tool_call":  # GenAI semantic conventions
            out.call(part.get("name"), parse_arguments(part.get("arguments")), part.get("id"))
        elif part.get("type") == "text":
            out.assistant(part.get("content"))
        elif not gemini_call(out, part) and not part.get("thought"):
            out.assistant(part.get("text"))
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in _CALL_BLOCKS:
                out.call(block.get("name"), parse_arguments(block.get("input", block.get("arguments"))),
                         block.get("id"))
            elif kind == "function" and isinstance(block.get("function"), dict):  # Koog
                add_call(out, block)
    out.assistant(content_text(content))
    calls = message.get("tool_calls", message.get("toolCalls"))
    extra = message.get("additional_kwargs")
    if not _json(calls) and isinstance(extra, dict):  # LangChain: the provider's calls, when it parsed none
        calls = extra.get("tool_calls")
    _tool_calls(out, calls)
    if isinstance(message.get("function_call"), dict):
        legacy = message["function_call"]
        out.call(legacy.get("name"), parse_arguments(legacy.get("arguments")))
    if "toolName" in message:  # a Vercel AI tool call alone
        _tool_calls(out, [message])


def _output(out: _Output, value) -> None:
    """Feed one generation's output to ``out``."""
    value = _json(value)
    if isinstance(value, str):
        out.assistant(value)
    elif isinstance(value, list):
        for item in value:
            _output(out, item)
    elif not isinstance(value, dict):
        return
    elif is_response(value):
        for item in value["output"]:
            _output(out, item)
    elif value.get("type") in RESPONSES_ITEM_TYPES and value.get("type") != "message":
        add_item(out, value)
    elif isinstance(value.get("choices"), list):  # ChatCompletion
        for choice in value["choices"]:
            _output(out, choice.get("message") if isinstance(choice, dict) else None)
    elif isinstance(value.get("candidates"), list):  # Gemini GenerateContentResponse
        for candidate in value["candidates"]:
            _output(out, candidate.get("content") if isinstance(candidate, dict) else None)
    elif isinstance(value.get("content"), dict) or isinstance(value.get("message"), dict):  # ADK LlmResponse
        _output(out, value.get("content", value.get("message")))
    else:
        _message(out, value)


def _is_user(message) -> bool:
    if not isinstance(message, dict) or message.get("role", message.get("type")) not in ("user", "human"):
        return False
    if message.get("tool_call_id") is not None:
        return False
    parts = message.get("content") if isinstance(message.get("content"), list) else message.get("parts")
    results = ("tool_result", "function_response", "functionResponse", "tool_call_response")
    return not (isinstance(parts, list) and parts and all(
        isinstance(p, dict) and (p.get("type") in results or any(k in p for k in results)) for p in parts))


def _user_text(message: dict) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        return join_texts(p.get("text", p.get("content")) for p in parts if isinstance(p, dict))
    return content_text(message.get("content"))


def _users(value) -> list[str]:
    """The user messages of a generation's input."""
    value = _json(value)
    if isinstance(value, dict):
        value = value.get("messages", value.get("contents"))
    if isinstance(value, str):
        return [value]
    return [_user_text(m) for m in value if _is_user(m)] if isinstance(value, list) else []


def _tags(tags) -> dict:
    """Tags ``"key:value"`` or ``"key=value"`` as a dict (a tag is a string; Langfuse gives them no values)."""
    if not isinstance(tags, list):
        return {}
    pairs = (tag.replace("=", ":", 1).split(":", 1) for tag in tags if isinstance(tag, str))
    return {pair[0].strip(): pair[1].strip() for pair in pairs if len(pair) == 2}


def _labels(trace: _Trace, observations: list[dict]) -> dict:
    metadata = _json(trace.fields.get("metadata"))
    sources: list[dict] = [metadata, _attributes(trace.fields)] if isinstance(metadata, dict) else []
    sources.append(_tags(trace.fields.get("tags")))
    for obs in observations:
        obs_metadata = _json(obs.get("metadata"))
        sources += [obs_metadata if isinstance(obs_metadata, dict) else {}, _attributes(obs)]
    labels = {}
    for field, key in _LABEL_KEYS.items():
        value = next((source[key] for source in sources if source.get(key) is not None), None)
        if field == "replica" and isinstance(value, str) and value.strip().isdigit():  # a tag's value is text
            value = int(value)
        if value is not None:
            labels[field] = value
    return labels


def _sorted(trace: _Trace) -> list[dict]:
    return sorted(trace.observations, key=lambda o: (_time(o.get("startTime")), -_time(o.get("endTime"))))


def _conversation(conversation_id: str, parts: list[tuple[str, _Trace]]) -> dict | None:
    """The traces of ``parts`` (``(trace id, trace)``: one, or a session's in the order they started) as one
    conversation: labels from the first trace that has them; ``run_error`` from the first root at level ERROR;
    the traces' time lines joined (:class:`UserMessages` counts a repeated user message once); None when no trace
    has a GENERATION or TOOL observation."""
    record: dict[str, Any] = {"conversation_id": conversation_id}
    metadata: dict = {}
    timeline: list = []
    users = UserMessages()
    read = []
    for trace_id, trace in parts:
        observations = _sorted(trace)
        generations = [o for o in observations if o.get("type") == "GENERATION" and not _is_tool(o)]
        tools = [o for o in observations if _is_tool(o)]
        if not generations and not tools:
            continue
        read.append(trace_id)
        for field, value in _labels(trace, observations).items():
            record.setdefault(field, value)
        for key, field in (("trace_name", "name"), ("session_id", "sessionId")):
            if trace.fields.get(field) is not None:
                metadata.setdefault(key, trace.fields[field])
        known = {o.get("id") for o in observations}
        root = next((o for o in observations if o.get("parentObservationId") not in known), None)
        if root is not None and root.get("level") == "ERROR" and "run_error" not in record:
            message = root.get("statusMessage")
            record["run_error"] = message if isinstance(message, str) and message.strip() else "level ERROR"
        users.trace()
        timeline += [(time, order + len(timeline), kind, payload)
                     for time, order, kind, payload in _timeline(generations, tools, users)]
    if not read:
        return None
    if len(read) > 1:
        metadata["traces"] = read
    record["metadata"] = metadata
    return chat_record(record, timeline_transcript(timeline).record())


def _timeline(generations: list[dict], tools: list[dict], users: UserMessages) -> list:
    """One trace's entries ``(time, order, kind, payload)`` of :func:`timeline_transcript`: the user messages
    ``users`` has not read, each generation's text and requested calls, and the tool observations (matched to the
    requests they executed)."""
    timeline: list[tuple[float, int, str, Any]] = []  # (time, order, kind, payload: a text or a call)
    requested: list[dict] = []
    ids: set[str] = set()  # a call that a generation and the generation around it both hold is one call
    for gen in generations:
        start = _time(gen.get("startTime"))
        end = _time(gen.get("endTime")) or start
        for text in users.new(_users(gen.get("input"))):
            timeline.append((start, len(timeline), "user", text))
        out = _Output()
        _output(out, gen.get("output"))
        timeline.append((end, len(timeline), "text", join_texts(out.texts)))
        for call in out.calls:
            if call["id"] is not None and call["id"] in ids:
                continue
            ids.add(call["id"])
            call["time"] = start
            requested.append(call)
            timeline.append((end, len(timeline), "call", call))
    for tool in tools:
        start = _time(tool.get("startTime"))
        matched = executed_request(requested, _call_id(_attributes(tool).get("gen_ai.tool.call.id")),
                                   _tool_name(tool), start)
        if matched is not None:
            call = matched
        else:
            call = {"name": _tool_name(tool), "arguments": _json(tool.get("input")),
                    "id": _call_id(_attributes(tool).get("gen_ai.tool.call.id"))}
            timeline.append((start, len(timeline), "call", call))
        call["failed"] = tool.get("level") == "ERROR"
    return timeline


def _session_of(trace: _Trace) -> str | None:
    session = trace.fields.get("sessionId")
    return None if session is None else str(session)


def _started(trace: _Trace) -> float:
    return min((_time(o.get("startTime")) for o in trace.observations), default=0.0)


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    traces = _collect(doc)
    found = 0
    groups = trace_groups(traces, options.group_by, _session_of, _started)
    for item in trace_records(doc, groups, _conversation):
        found += 1
        yield item
    if traces and not found:
        types = sorted({str(o.get("type")) for t in traces.values() for o in t.observations})
        raise InputError(f"holds {len(traces)} traces with no GENERATION or TOOL observation (types found: "
                         f"{', '.join(types) or 'none'}): nothing records the model's turns or its tool calls",
                         source=doc.source)
