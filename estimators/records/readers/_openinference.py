"""OpenInference spans (Arize Phoenix) as conversations: ``escalation score --phoenix`` and Phoenix's span exports
(``--format openinference``).

OpenInference (``spec/semantic_conventions.md`` of Arize-ai/openinference; the ``openinference-semantic-conventions``
package) puts an AI application's calls on OpenTelemetry spans under its own attribute names, lists flattened with
zero-based indices. What is read of a span, by its ``openinference.span.kind``:

- ``LLM``: the messages ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*`` (``role``,
  ``content`` or ``contents.M.message_content.text``, ``tool_calls.M.tool_call.id`` / ``.function.name`` /
  ``.function.arguments``, the older ``function_call_name`` / ``function_call_arguments_json``): the calls the
  model requested are in the output messages ("Tool and Function Calling", ``spec/tool_calling.md``).
- ``TOOL``: one execution of a tool, named by ``tool.name`` (else ``tool_call.function.name``, else the span's
  name), with ``tool_call.id`` and the arguments ``tool_call.function.arguments`` (else ``input.value``).
- ``AGENT``: read for its messages only in a trace whose LLM spans carry none. Other kinds (``CHAIN``...) carry
  the labels and the session only.
- On any span: ``escalation.case_id``, ``escalation.label``, ``escalation.replica`` and ``escalation.scenario_id``
  (an operator tags traffic at the source), and ``session.id``; a span whose status is ``ERROR`` failed.

Each span is translated to the OpenTelemetry GenAI conventions (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``execute_tool`` with ``gen_ai.tool.name`` / ``gen_ai.tool.call.id`` /
``gen_ai.tool.call.arguments``) and the trace is read by the ``otel`` reader's rules (:mod:`._otel`): one trace
is one conversation, the record comes from the tool spans where they exist and from the calls requested in the
model outputs where they do not (never counted twice), turns follow SPEC section 1 in time order, a root span with
status ERROR is ``run_error``, and ``metadata["otel"]`` names the span of each turn and call. ``metadata`` adds
``root_span_id``, the id of the trace's root span.

A span is given as Phoenix's REST API (``GET /v1/projects/{project}/spans``, ``phoenix.client``'s
``spans.get_spans``) returns it: ``{"name", "context": {"trace_id", "span_id"}, "parent_id", "span_kind",
"start_time", "end_time", "status_code", "status_message", "attributes"}``, times in ISO 8601, the attributes
flattened (``llm.input_messages.0.message.role``) or nested (``{"llm": {"input_messages": [...]}}``), the span kind
there or as ``openinference.span.kind``.

**Phoenix exports as a file** (``--format openinference``): the spans of a project, in any of the shapes Phoenix's
API and client give them (arize-phoenix 20.26, arize-phoenix-client 3.5):

- the REST API's answer ``{"data": [span, ...], "next_cursor": ...}`` (a page; pages one a line too);
- ``spans.get_spans``' list of spans, as a JSON list or one span a line;
- the spans dataframe (``spans.get_spans_dataframe``) written by pandas' ``to_json(orient="records")``, as a JSON
  list or one row a line (``lines=True``): the columns ``context.trace_id``, ``context.span_id``, ``name``,
  ``span_kind``, ``parent_id``, ``start_time``, ``end_time``, ``status_code``, ``status_message`` and
  ``attributes.*`` (``attributes.llm.input_messages`` a list of messages, ``attributes.escalation`` an object),
  times in ISO 8601 or (pandas' default) a number since the epoch, whose unit (s, ms, us, ns) its size tells.

Spans of one trace may be anywhere in the file: they are grouped by ``context.trace_id``, one trace one
conversation in the order of its first span (with ``--group-by session``, the traces that share ``session.id`` one
conversation, as the ``otel`` reader groups them), a trace with no LLM, AGENT or TOOL span left out, and a file with
none refused with the span kinds and names found. **Memory**: a JSON Lines file is read a line at a time, each span
reduced to what is read as it comes, as the ``otel`` reader does; a JSON document is parsed whole (within
``--max-document-bytes``). Not read: Parquet (``DataFrame.to_parquet``,
``TraceDataset.save``), pandas' default ``to_json`` orient (columns), and the OTLP-shaped
``GET /v1/projects/{project}/spans/otlpv1``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from .._errors import InputError
from .._records import normalise_conversation
from ._chat_records import records_of, trace_records, where
from ._otel import _session, _Span, _Trace, conversations_of
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read", "KIND", "genai_attributes", "openinference_conversation"]

NAME = "openinference"
EXPECTS = ("Arize Phoenix span exports with OpenInference attributes: the REST API's {data: [span, ...]}, "
           "spans.get_spans' spans as a JSON list or one a line, or get_spans_dataframe() written by "
           "to_json(orient=\"records\", lines=True)")

#: The attribute that names a span's OpenInference kind.
KIND = "openinference.span.kind"
_LABELS = ("escalation.case_id", "escalation.label", "escalation.replica", "escalation.scenario_id", "session.id")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _flat(value, prefix: str, out: dict) -> dict:
    """Nested attributes (Phoenix stores them unflattened) as OpenInference's flattened keys, in order; without
    recursion, so that no nesting is too deep."""
    pending = [(prefix, value)]
    while pending:
        key, item = pending.pop()
        if isinstance(item, dict):
            pending.extend((f"{key}.{name}" if key else str(name), inner) for name, inner in reversed(item.items()))
        elif isinstance(item, list) and any(isinstance(inner, (dict, list)) for inner in item):
            pending.extend((f"{key}.{index}", item[index]) for index in reversed(range(len(item))))
        else:
            out[key] = item
    return out


def _indexed(attrs: dict, prefix: str) -> dict[int, dict]:
    """``{N: {rest: value}}`` of the keys ``prefix.N.rest``."""
    found: dict[int, dict] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix):].partition(".")
        if index.isdigit() and rest:
            found.setdefault(int(index), {})[rest] = value
    return found


def _message(fields: dict) -> dict:
    """One flattened ``message.*`` object as an OpenAI-like message: ``role``, ``content``, ``tool_calls``."""
    contents = _indexed(fields, "message.contents.")
    texts = [part.get("message_content.text") for _, part in sorted(contents.items())
             if part.get("message_content.type") in ("text", None)]
    content = fields.get("message.content")
    calls = [{"id": call.get("tool_call.id"),
              "function": {"name": call.get("tool_call.function.name"),
                           "arguments": call.get("tool_call.function.arguments")}}
             for _, call in sorted(_indexed(fields, "message.tool_calls.").items())]
    if fields.get("message.function_call_name") is not None:  # the older single function call
        calls.append({"id": None, "function": {"name": fields["message.function_call_name"],
                                               "arguments": fields.get("message.function_call_arguments_json")}})
    return {"role": fields.get("message.role"),
            "content": [{"type": "text", "text": text} for text in texts] if content is None else content,
            "tool_calls": calls}


def genai_attributes(attributes: dict, kind: str | None = None) -> dict:
    """The GenAI semantic-convention attributes of an OpenInference span that the ``otel`` reader reads.

    Parameters
    ----------
    attributes : dict
        The span's attributes, flattened or nested.
    kind : str, optional
        Its ``openinference.span.kind`` when the attributes do not carry it (Phoenix's ``span_kind``).

    Returns
    -------
    dict
        ``gen_ai.operation.name`` with the messages (LLM, AGENT) or the tool call (TOOL), and the ``escalation.*``
        labels and ``session.id``; empty for a span that is none of these.
    """
    attrs = _flat(attributes, "", {})
    kind = str(attrs.get(KIND) or kind or "").upper()
    out = {key: attrs[key] for key in _LABELS if attrs.get(key) is not None}
    if kind in ("LLM", "AGENT"):
        inputs = [_message(m) for _, m in sorted(_indexed(attrs, "llm.input_messages.").items())]
        outputs = [_message(m) for _, m in sorted(_indexed(attrs, "llm.output_messages.").items())]
        if inputs or outputs or kind == "LLM":
            out.update({"gen_ai.operation.name": "chat" if kind == "LLM" else "invoke_agent",
                        "gen_ai.input.messages": inputs, "gen_ai.output.messages": outputs})
    elif kind == "TOOL":
        name = attrs.get("tool.name") or attrs.get("tool_call.function.name")
        arguments = attrs.get("tool_call.function.arguments")
        out.update({"gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.call.arguments": arguments if arguments is not None else attrs.get("input.value")})
        out.update({key: value for key, value in (("gen_ai.tool.name", name),
                                                  ("gen_ai.tool.call.id", attrs.get("tool_call.id")))
                    if value is not None})
    return out


#: Below each bound, a number since the epoch is in that unit (as nanoseconds per unit): the bounds are the year 5138
#: in seconds, milliseconds and microseconds, so any time after 1973 is told by its size.
_EPOCH_UNITS = ((10**11, 10**9), (10**14, 10**6), (10**17, 10**3))


def _nanoseconds(raw) -> int:
    """An ISO 8601 time (UTC when it names no zone), or a number since the epoch (pandas' ``to_json`` writes
    milliseconds unless told ``date_unit``; the unit is told by its size), as nanoseconds since the epoch; 0 when it
    is neither."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        if not math.isfinite(raw):
            return 0
        scale = next((scale for bound, scale in _EPOCH_UNITS if abs(raw) < bound), 1)
        return raw * scale if isinstance(raw, int) else round(raw * scale)
    try:
        when = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return 0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _span(raw: dict) -> _Span:
    """One span of Phoenix's REST shape, its attributes translated (:func:`genai_attributes`)."""
    context = raw.get("context")
    context = context if isinstance(context, dict) else {}
    start = _nanoseconds(raw.get("start_time"))
    error = None
    if str(raw.get("status_code") or "").upper() == "ERROR":
        message = raw.get("status_message")
        error = message if isinstance(message, str) and message.strip() else "status ERROR"
    attributes = raw.get("attributes")
    attributes = attributes if isinstance(attributes, dict) else {}
    return _Span(context.get("span_id"), raw.get("parent_id") or None, raw.get("name"), start,
                 _nanoseconds(raw.get("end_time")) or start, error,
                 genai_attributes(attributes, raw.get("span_kind")), [])


def _trace_conversation(conversation_id: str, parts: list[tuple[str, _Trace]]) -> dict | None:
    """The reduced spans of one trace, or of a session's traces (``parts``: ``(trace id, trace)`` in the order they
    started), as a canonical conversation with ``metadata["root_span_id"]`` (of the first trace), not yet
    normalised; None when no trace has an LLM, AGENT or TOOL span."""
    conversation = _session(conversation_id, parts)
    if conversation is None:
        return None
    first = parts[0][1]
    known = {s.span for s in first.spans}
    roots = sorted((s for s in first.spans if s.parent is None or s.parent not in known),
                   key=lambda s: (s.start, -s.end))
    metadata: dict[str, Any] = conversation.setdefault("metadata", {})
    metadata["root_span_id"] = roots[0].span if roots else None
    return conversation


def openinference_conversation(trace_id: str, spans: Iterable[dict]) -> dict | None:
    """One trace's OpenInference spans as a normalised canonical conversation (module docstring).

    Parameters
    ----------
    trace_id : str
        The trace's id: the ``conversation_id``.
    spans : iterable of dict
        Its spans in Phoenix's REST shape, in any order.

    Returns
    -------
    dict or None
        The conversation, with ``metadata["otel"]`` (the span of each turn and call) and
        ``metadata["root_span_id"]``; None for a trace with no LLM, AGENT or TOOL span (not a conversation).
    """
    trace = _Trace(("path", trace_id))
    trace.spans = [_span(raw) for raw in spans if isinstance(raw, dict)]
    conversation = _trace_conversation(trace_id, [(trace_id, trace)])
    return None if conversation is None else normalise_conversation(conversation, source=f"trace {trace_id}")


# --- Phoenix exports as files (--format openinference) ---------------------------------------------------------------

_ATTRIBUTE = "attributes."
#: The columns of the spans dataframe read as they are (the others are ``context.*`` and ``attributes.*``).
_FRAME_COLUMNS = ("name", "span_kind", "parent_id", "start_time", "end_time", "status_code", "status_message")


def _is_rest_span(value) -> bool:
    """A span of Phoenix's REST shape: ``context`` with ``trace_id`` and ``span_id``, and ``span_kind``."""
    context = value.get("context") if isinstance(value, dict) else None
    return isinstance(context, dict) and "trace_id" in context and "span_id" in context and "span_kind" in value


def _is_frame_row(value) -> bool:
    """A row of Phoenix's spans dataframe: the columns ``context.trace_id`` and ``context.span_id``."""
    return isinstance(value, dict) and "context.trace_id" in value and "context.span_id" in value


def _is_page(value) -> bool:
    """A page of the REST API: ``{"data": [span, ...]}``."""
    data = value.get("data") if isinstance(value, dict) else None
    return isinstance(data, list) and bool(data) and _is_rest_span(data[0])


def _rest_span(row: dict) -> dict:
    """A row of the spans dataframe in the REST shape: ``context.*`` into ``context``, ``attributes.*`` into
    ``attributes`` (an absent attribute is a null cell)."""
    span = {key: row.get(key) for key in _FRAME_COLUMNS}
    span["context"] = {"trace_id": row.get("context.trace_id"), "span_id": row.get("context.span_id")}
    span["attributes"] = {key[len(_ATTRIBUTE):]: value for key, value in row.items()
                          if key.startswith(_ATTRIBUTE) and value is not None}
    return span


def _spans(doc: Document) -> Iterator[tuple[tuple, dict]]:
    """``(location, span in the REST shape)`` of each span of the file, in file order; an :class:`InputError` at
    the first value that is no span, page or dataframe row."""
    for location, value in records_of(doc, EXPECTS):
        if isinstance(value, dict) and isinstance(value.get("data"), list):  # a page, maybe empty
            spans = [(location if location[0] == "line" else ("path", f"{location[1]}.data[{index}]".lstrip(".")),
                      span) for index, span in enumerate(value["data"])]
        else:
            spans = [(location, value)]
        for place, span in spans:
            if _is_frame_row(span):
                yield place, _rest_span(span)
            elif _is_rest_span(span):
                yield place, span
            else:
                found = (f"keys {', '.join(sorted(map(str, span))[:8])}" if isinstance(span, dict)
                         else type(span).__name__)
                raise InputError(f"expected a Phoenix span ({{name, context: {{trace_id, span_id}}, span_kind, ...}}), "
                                 f"a page {{data: [spans]}} or a spans dataframe row (context.trace_id, "
                                 f"context.span_id, ...) (found {found})", source=doc.source, **where(place))


def sniff(doc: Document) -> bool:
    """The first value of the file (or of its JSON list) is a Phoenix span, a page of them, or a dataframe row."""
    if doc.kind not in ("json", "jsonl"):
        return False
    if NAME not in doc.cache:
        first = next((value for _, value in records_of(doc, EXPECTS)), None)
        doc.cache[NAME] = _is_page(first) or _is_frame_row(first) or _is_rest_span(first)
    return doc.cache[NAME]


def _collect(doc: Document) -> tuple[dict[str, _Trace], set[str], set[str]]:
    """The file's traces by id, in the order of their first span, their spans reduced (:func:`_span`); and the
    span kinds and names found."""
    traces: dict[str, _Trace] = {}
    kinds: set[str] = set()
    names: set[str] = set()
    for location, raw in _spans(doc):
        context = raw["context"]
        ids = [("context.trace_id", context.get("trace_id")), ("context.span_id", context.get("span_id"))]
        if raw.get("parent_id"):  # null or empty: a root
            ids.append(("parent_id", raw["parent_id"]))
        for field, value in ids:
            if not isinstance(value, str) or not value:
                raise InputError("must be a non-empty string", source=doc.source, **where(location, field))
        trace_id = context["trace_id"]
        span = _span(raw)
        kinds.add(str(raw.get("span_kind")))
        names.add(span.name)
        traces.setdefault(trace_id, _Trace(location)).spans.append(span)
    return traces, kinds, names


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    """The conversations of a Phoenix export (module docstring), one a trace, in the order of their first span."""
    traces, kinds, names = _collect(doc)
    found = 0
    for item in trace_records(doc, conversations_of(traces, options.group_by), _trace_conversation):
        found += 1
        yield item
    if traces and not found:
        raise InputError(f"holds {sum(len(t.spans) for t in traces.values())} spans in {len(traces)} traces, and no "
                         "model or tool call (an OpenInference LLM or TOOL span, or an AGENT span with messages); "
                         f"span kinds found: {', '.join(sorted(kinds))}; span names found: "
                         f"{', '.join(sorted(names)[:8])}: instrument the model and tool calls", source=doc.source)
