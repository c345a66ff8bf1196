"""OpenAI chat completions transcripts (``--format openai``).

One conversation per JSONL line, or a JSON list of them::

    {"conversation_id": "c1", "label": "ESC", "case_id": "refund-a", "replica": 0,
     "messages": [{"role": "system", "content": "..."},
                  {"role": "user", "content": "Refund my order 7"},
                  {"role": "assistant", "content": null,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "get_order", "arguments": "{\\"order_id\\": 7}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "..."},
                  {"role": "assistant", "content": "I have passed this to a supervisor."}]}

Read from each message:

- ``tool_calls`` of type ``function`` (name and JSON-string ``arguments``; malformed JSON is
  kept as text) and of type ``custom`` (name in ``custom.name``, the free-text ``input``
  kept as it is); the legacy ``function_call``; also the flat ``{"name", "arguments"}`` and
  inspect_ai's ``{"function": name, "arguments": {...}}`` shapes;
- tool results: a ``tool`` message and a ``function`` message; they open no turn, and
  neither does a ``user`` message that carries a ``tool_call_id`` (inspect_ai: a tool's
  payload, such as a screenshot, sent after the tool's result);
- ``system`` and ``developer`` messages belong to no turn; other roles are ignored;
- text: a string ``content`` or the ``text`` / ``refusal`` parts of a list, plus the
  ``refusal`` field. Turns are numbered by :class:`~estimators.records.readers._chat.Transcript`.

Every key of the record other than ``messages`` is passed to the canonical record
(``conversation_id``, ``case_id``, ``label``, ``replica``, ...; unknown keys go to
``metadata``). A record may leave out ``conversation_id``: in a JSONL file it is then
``line-N``, N its line (SPEC section 7, :func:`~estimators.records.readers._chat_records.chat_records`).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from .._errors import InputError
from ._chat import Transcript, join_texts, parse_arguments
from ._chat_records import chat_record, chat_records, normalised, where
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read", "add_messages", "content_text", "add_call"]

NAME = "openai"
EXPECTS = "JSONL (or a JSON list) of {conversation_id, label, messages} with OpenAI chat messages"


def content_text(content) -> str:
    """The visible text of a message ``content``: a string, or its text and refusal parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts: list[str | None] = []  # join_texts keeps the strings
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("type") in ("text", "input_text", "output_text", None) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "refusal":
                texts.append(part.get("refusal"))
    return join_texts(texts)


def add_call(transcript: Transcript, call) -> None:
    """One entry of ``tool_calls`` in any of the shapes of the module docstring."""
    if not isinstance(call, dict):
        transcript.unreadable()
        return
    call_id = call.get("id")
    if isinstance(call.get("function"), str):  # inspect_ai, whatever its type (a custom tool keeps its name here)
        transcript.call(call["function"], parse_arguments(call.get("arguments")), call_id)
    elif call.get("type") == "custom" or isinstance(call.get("custom"), dict):
        custom = cast(dict, call.get("custom")) if isinstance(call.get("custom"), dict) else {}
        transcript.call(custom.get("name"), custom.get("input"), call_id)
    elif isinstance(call.get("function"), dict):
        function = call["function"]
        transcript.call(function.get("name"), parse_arguments(function.get("arguments")), call_id)
    else:  # flat {"name", "arguments"} (tau2-bench)
        transcript.call(call.get("name"), parse_arguments(call.get("arguments")), call_id)


def _refuse_call_parts(content) -> None:
    """Refuse an assistant content part of type ``tool_call`` (LLaMA-Factory's shape: the call in the message's
    content): read as OpenAI chat its call would be lost, and the conversation scored as silent (issue 33)."""
    if isinstance(content, list) and any(isinstance(part, dict) and part.get("type") == "tool_call"
                                         for part in content):
        raise InputError("holds a content part of type 'tool_call' (LLaMA-Factory's shape, a call inside the "
                         "message's content), which OpenAI chat does not have: read it with --format sharegpt, "
                         "or leave --format out", field="messages")


def add_messages(transcript: Transcript, messages, *, call_filter=None) -> None:
    """Feed OpenAI-shaped chat messages to ``transcript`` in order.

    ``call_filter(call) -> bool``, if given, keeps only the calls it accepts (tau2-bench
    keeps the calls whose requestor is the assistant).
    """
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(role, str):
            transcript.unreadable()
            continue
        if role == "user":
            if message.get("tool_call_id") is None:  # else: a tool's payload (inspect_ai), not the user
                transcript.user(content_text(message.get("content")))
        elif role == "assistant":
            _refuse_call_parts(message.get("content"))
            refusal = message.get("refusal")
            transcript.assistant(join_texts([content_text(message.get("content")),
                                             refusal if isinstance(refusal, str) else ""]))
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                for call in calls:
                    if call_filter is None or call_filter(call):
                        add_call(transcript, call)
            elif calls is not None:
                transcript.unreadable()
            if isinstance(message.get("function_call"), dict):
                legacy = message["function_call"]
                transcript.call(legacy.get("name"), parse_arguments(legacy.get("arguments")))
        elif role == "tool":
            name = message.get("name", message.get("function"))
            transcript.result(message.get("tool_call_id"), name if isinstance(name, str) else None,
                              failed=message.get("error") is not None,  # inspect_ai's ToolCallError
                              text=content_text(message.get("content")))
        elif role == "function":
            transcript.result(None, message.get("name"))


def conversation(record: dict, messages_key: str = "messages") -> dict:
    """The canonical record of one chat record; no messages at all is no record."""
    messages = record.get(messages_key)
    if messages is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=(messages_key,))
    transcript = Transcript()
    if isinstance(messages, list):
        add_messages(transcript, messages)
    else:
        transcript.unreadable()
    return chat_record(record, transcript.record(), content_keys=(messages_key,))


def sniff(doc: Document) -> bool:
    """OpenAI chat records; also an empty JSON list, which holds no conversation (as an empty
    file holds none, read as canonical JSONL)."""
    markers = record_markers(doc)
    return ((markers is not None and bool(markers) and markers <= {"chat", "openai"})
            or (doc.kind == "json" and doc.data == []))


def _conversation_at(record: dict, doc: Document, location) -> dict:
    """:func:`conversation` of a record, its errors placed at the record's line or JSON path."""
    try:
        return conversation(record)
    except InputError as err:
        raise InputError(err.detail, source=doc.source, **where(location, err.field)) from None


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    return ((location[1], normalised(_conversation_at(record, doc, location) if isinstance(record, dict) else record,
                                     doc, location))
            for location, record in chat_records(doc, EXPECTS))
