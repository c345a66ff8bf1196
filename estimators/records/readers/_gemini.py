"""Gemini and Vertex AI ``contents``, and Google ADK sessions (``--format gemini``).

One conversation per JSONL line, or a JSON list of them, or one object:

- ``{"conversation_id", "label", "contents": [...]}``: the contents of a ``generateContent`` request
  followed by the model's answers, each a ``google.genai`` ``types.Content`` as ``model_dump(mode="json",
  exclude_none=True)`` writes it (``function_call``, ``function_response``) or as the REST API writes it
  (``functionCall``, ``functionResponse``)::

    {"conversation_id": "c1", "label": "ESC", "contents": [
        {"role": "user", "parts": [{"text": "Refund order 7"}]},
        {"role": "model", "parts": [{"function_call": {"name": "get_order", "args": {"order_id": 7}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "get_order", "response": {"output": {...}}}}]},
        {"role": "model", "parts": [{"text": "..."}]}]}

- a Google ADK session as ``adk run --save_session`` writes it (``Session.model_dump_json(by_alias=True)``):
  ``{"id", "appName", "userId", "state", "events": [{"author", "content": {"role", "parts"}, ...}]}``; the
  session's ``id`` is the ``conversation_id`` unless the record has one, and an event marked ``partial`` (a
  streamed piece of a later whole event) is skipped.

Read from each content, part by part in order: a ``model`` content's ``text`` is the assistant's text (a part
marked ``thought`` is not shown to the user), its ``function_call`` a call (``args``, with its ``id`` when
given), its server-side ``tool_call`` a call of the tool ``tool_type`` names and its ``executable_code`` a call
of ``code_execution`` (the built-in tool that runs it). A ``function_response`` is a tool result; one whose
``response`` has an ``error`` (the key ``FunctionResponse`` documents for errors) makes its call
``"failed": true`` (SPEC section 1), as does a ``code_execution_result`` whose outcome is not ``OUTCOME_OK``.
A ``user`` content (a content without a role is the user's, as the API reads it) made only of results
opens no turn; a ``function`` or ``tool`` content holds results only; a ``system`` content belongs to no turn,
and a content of another role is an unreadable item (``<unnamed>``, SPEC section 1). Turns follow SPEC section 1
(:class:`~estimators.records.readers._chat.Transcript`); every other key of the record goes to the
canonical record as in the other chat formats, and a JSONL record without ``conversation_id`` is ``line-N``.
"""
from __future__ import annotations

from collections.abc import Iterator

import orjson

from ._chat import Transcript, join_texts, parse_arguments
from ._chat_records import chat_record, chat_records, normalised, records_of
from ._markers import record_markers
from ._source import Document, JsonLines, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "gemini"
EXPECTS = ("JSONL (or a JSON list) of {conversation_id, label, contents} with Gemini parts, or Google ADK "
           "sessions {id, events}")

_RESULT_ROLES = frozenset({"function", "tool"})
_ROLES = frozenset({"user", "model"}) | _RESULT_ROLES


def _get(value: dict, snake: str, camel: str):
    """A field in either spelling: the Python SDK's (``function_call``) or the REST API's (``functionCall``)."""
    return value[snake] if snake in value else value.get(camel)


def _is_session(record) -> bool:
    return isinstance(record, dict) and isinstance(record.get("events"), list) and any(
        isinstance(e, dict) and isinstance(e.get("content"), dict) for e in record["events"])


def _shape(record) -> bool:
    if not isinstance(record, dict):
        return False
    contents = record.get("contents")
    return (isinstance(contents, list) and any(isinstance(c, dict) and isinstance(c.get("parts"), list)
                                               for c in contents)) or _is_session(record)


def sniff(doc: Document) -> bool:
    """Records with ``contents`` of parts, or ADK sessions, and no record of another format."""
    if NAME not in doc.cache:
        markers = record_markers(doc)
        doc.cache[NAME] = (markers is not None and not markers
                           and any(_shape(value) for _, value in records_of(doc, EXPECTS)))
    return doc.cache[NAME]


def _result_text(response) -> str | None:
    """A function response's output as JSON text (an approval request's answer, SPEC section 3A)."""
    if isinstance(response, dict):
        return orjson.dumps(response.get("output", response)).decode()
    return None


def _result(transcript: Transcript, part: dict) -> bool:
    """Add the result a part holds; False when it holds none."""
    response = _get(part, "function_response", "functionResponse")
    if isinstance(response, dict):
        body = response.get("response")
        failed = isinstance(body, dict) and body.get("error") is not None
        transcript.result(response.get("id"), response.get("name"), failed=failed, text=_result_text(body))
        return True
    response = _get(part, "tool_response", "toolResponse")
    if isinstance(response, dict):
        transcript.result(response.get("id"))
        return True
    outcome = _get(part, "code_execution_result", "codeExecutionResult")
    if isinstance(outcome, dict):
        transcript.result(outcome.get("id"), "code_execution", failed=outcome.get("outcome") != "OUTCOME_OK")
        return True
    return False


def _call(transcript: Transcript, part: dict) -> bool:
    """Add the call a part holds; False when it holds none."""
    call = _get(part, "function_call", "functionCall")
    if isinstance(call, dict):
        transcript.call(call.get("name"), parse_arguments(call.get("args")), call.get("id"))
        return True
    call = _get(part, "tool_call", "toolCall")
    if isinstance(call, dict):
        transcript.call(_get(call, "tool_type", "toolType"), parse_arguments(call.get("args")), call.get("id"))
        return True
    code = _get(part, "executable_code", "executableCode")
    if isinstance(code, dict):
        transcript.call("code_execution", {k: v for k, v in code.items() if k != "id"}, code.get("id"))
        return True
    return False


def _add_content(transcript: Transcript, content) -> None:
    parts = content.get("parts") if isinstance(content, dict) else None
    role = (content.get("role") or "user") if isinstance(content, dict) else None
    if role == "system":
        return
    if not isinstance(parts, list) or role not in _ROLES:
        transcript.unreadable()
        return
    if role == "model":
        for part in parts:
            if not isinstance(part, dict):
                transcript.unreadable()
            elif not (_call(transcript, part) or _result(transcript, part)) and not part.get("thought"):
                transcript.assistant(join_texts([part.get("text")]))
        return
    spoken, texts = False, []
    for part in parts:
        if isinstance(part, dict) and _result(transcript, part):
            continue
        spoken = True
        if isinstance(part, dict):
            texts.append(part.get("text"))
    if role not in _RESULT_ROLES and (spoken or not parts):
        transcript.user(join_texts(texts))


def conversation(record: dict) -> dict:
    """The canonical record of a ``contents`` record or an ADK session."""
    key = "events" if _is_session(record) else "contents"
    items = record.get(key)
    content_keys = (key, "system_instruction", "systemInstruction", "tools")
    if items is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=content_keys)
    transcript = Transcript()
    if not isinstance(items, list):
        transcript.unreadable()
    elif key == "events":
        for event in items:
            if not isinstance(event, dict):
                transcript.unreadable()
            elif event.get("content") is not None and not event.get("partial"):
                _add_content(transcript, event["content"])
    else:
        for content in items:
            _add_content(transcript, content)
    return chat_record(record, transcript.record(), content_keys=content_keys)


def _named(value):
    """An ADK session with its ``id`` as its ``conversation_id`` (unless it has one)."""
    if _is_session(value) and value.get("conversation_id") is None and value.get("id") is not None:
        return {**value, "conversation_id": value["id"]}
    return value


class _NamedLines(JsonLines):
    """The lines of a streamed JSONL file, each session named by :func:`_named`."""

    def __iter__(self):
        return ((number, _named(value)) for number, value in super().__iter__())


def _sessions_named(doc: Document) -> Document:
    """``doc`` with each ADK session named by its ``id``, for :func:`chat_records`."""
    if doc.kind == "json":
        data = [_named(v) for v in doc.data] if isinstance(doc.data, list) else _named(doc.data)
    elif doc.kind != "jsonl":  # an archive or a folder: no records
        return doc
    elif isinstance(doc.data, JsonLines):
        data = _NamedLines(doc.data.path)
    else:
        data = [(number, _named(value)) for number, value in doc.data]
    return Document(doc.path, doc.kind, data, single_line=doc.single_line)


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    return ((location[1], normalised(conversation(record) if isinstance(record, dict) else record, doc, location))
            for location, record in chat_records(_sessions_named(doc), EXPECTS))
