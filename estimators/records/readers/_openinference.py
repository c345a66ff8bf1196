"""OpenInference spans (Arize Phoenix) as conversations: the span model of ``escalation score --phoenix``.

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
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from .._records import normalise_conversation
from ._otel import _conversation, _Span, _Trace

__all__ = ["KIND", "genai_attributes", "openinference_conversation"]

#: The attribute that names a span's OpenInference kind.
KIND = "openinference.span.kind"
_LABELS = ("escalation.case_id", "escalation.label", "escalation.replica", "escalation.scenario_id", "session.id")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _flat(value, prefix: str, out: dict) -> dict:
    """Nested attributes (Phoenix stores them unflattened) as OpenInference's flattened keys."""
    if isinstance(value, dict):
        for key, item in value.items():
            _flat(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        for index, item in enumerate(value):
            _flat(item, f"{prefix}.{index}", out)
    else:
        out[prefix] = value
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


def _nanoseconds(raw) -> int:
    """An ISO 8601 time (UTC when it names no zone) as nanoseconds since the epoch; 0 when it is not one."""
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
    conversation = _conversation(trace_id, trace)
    if conversation is None:
        return None
    known = {s.span for s in trace.spans}
    roots = sorted((s for s in trace.spans if s.parent is None or s.parent not in known),
                   key=lambda s: (s.start, -s.end))
    metadata: dict[str, Any] = conversation.setdefault("metadata", {})
    metadata["root_span_id"] = roots[0].span if roots else None
    return normalise_conversation(conversation, source=f"trace {trace_id}")
