"""AWS Bedrock Converse transcripts (``--format bedrock-converse``).

One conversation per JSONL line, or a JSON list of them: the ``messages`` of a Converse request followed by
the ``output.message`` of each response, as botocore's ``bedrock-runtime`` client sends and returns them (the
``Message`` and ``ContentBlock`` shapes of botocore's service model)::

    {"conversation_id": "c1", "label": "ESC", "system": [{"text": "..."}],
     "messages": [{"role": "user", "content": [{"text": "Refund order 7"}]},
                  {"role": "assistant", "content": [
                      {"text": "Let me look."},
                      {"toolUse": {"toolUseId": "tu_1", "name": "get_order", "input": {"order_id": 7}}}]},
                  {"role": "user", "content": [
                      {"toolResult": {"toolUseId": "tu_1", "status": "error", "content": [{"text": "..."}]}}]},
                  {"role": "assistant", "content": [{"text": "..."}]}]}

Read from each message, block by block in order: an assistant's ``text`` blocks are its text, its ``toolUse``
blocks are calls (``input`` as given); ``reasoningContent`` is not shown to the user and is skipped; a
``toolResult`` is a tool result, and one with ``"status": "error"`` makes its call ``"failed": true`` (SPEC
section 1). A user message made only of ``toolResult`` blocks opens no turn; any other does (its ``text``
blocks are its text). The top-level ``system`` prompt and ``system`` messages belong to no turn. A message of
another role, or one carrying OpenAI's ``tool_calls``, is refused with a message that names it: its calls
would otherwise be lost. Turns follow SPEC section 1 (:class:`~estimators.records.readers._chat.Transcript`);
every other key of the record goes to the canonical record as in the other chat formats (``modelId`` and other
unknown keys to ``metadata``), and a JSONL record without ``conversation_id`` is ``line-N``.
"""
from __future__ import annotations

from collections.abc import Iterator

import orjson

from .._errors import InputError
from ._chat import Transcript, join_texts, parse_arguments
from ._chat_records import chat_record, chat_records, normalised, records_of, where
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "bedrock-converse"
EXPECTS = "JSONL (or a JSON list) of {conversation_id, label, messages} with Bedrock Converse content blocks"

#: Content blocks only Converse writes (OpenAI's and Anthropic's blocks have a ``type``).
_BLOCKS = frozenset({"toolUse", "toolResult", "reasoningContent", "guardContent", "cachePoint", "citationsContent"})


def _is_block(block) -> bool:
    return isinstance(block, dict) and "type" not in block and not _BLOCKS.isdisjoint(block)


def _shape(record) -> bool:
    messages = record.get("messages") if isinstance(record, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("content"), list) and any(map(_is_block, m["content"]))
        for m in messages)


def sniff(doc: Document) -> bool:
    """Chat records with a Converse content block, and no record of a format that is not chat (canonical,
    tau-bench) or of another provider."""
    if NAME not in doc.cache:
        markers = record_markers(doc)
        doc.cache[NAME] = (markers is not None and markers <= {"chat", "openai"}
                           and any(_shape(value) for _, value in records_of(doc, EXPECTS)))
    return doc.cache[NAME]


class _Refused(Exception):
    """A message of another shape: ``(field, detail)``."""


def _result(transcript: Transcript, result) -> None:
    if not isinstance(result, dict):
        transcript.unreadable()
        return
    content = result.get("content")
    items = content if isinstance(content, list) else []
    text = join_texts(item.get("text") if "text" in item else orjson.dumps(item.get("json")).decode()
                      for item in items if isinstance(item, dict) and ("text" in item or "json" in item))
    transcript.result(result.get("toolUseId"), failed=result.get("status") == "error", text=text)


def _add_message(transcript: Transcript, message, i: int) -> None:
    role = message.get("role") if isinstance(message, dict) else None
    if not isinstance(role, str):
        transcript.unreadable()
        return
    if role not in ("user", "assistant", "system") or "tool_calls" in message:
        found = f"role {role!r}" if role not in ("user", "assistant", "system") else "OpenAI's tool_calls"
        raise _Refused(f"messages[{i}]", f"a message with {found} in a Bedrock Converse log (roles user and "
                       "assistant, calls in toolUse blocks): name the log's format with --format")
    content = message.get("content")
    blocks = [{"text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
    if role == "assistant":
        for block in blocks:
            if not isinstance(block, dict):
                transcript.unreadable()
            elif "toolUse" in block:
                use = block["toolUse"] if isinstance(block["toolUse"], dict) else None
                if use is None:
                    transcript.unreadable()
                else:
                    transcript.call(use.get("name"), parse_arguments(use.get("input")), use.get("toolUseId"))
            elif "toolResult" in block:
                _result(transcript, block["toolResult"])
            else:
                transcript.assistant(join_texts([block.get("text")]))
    elif role == "user":
        spoken, texts = False, []
        for block in blocks:
            if isinstance(block, dict) and "toolResult" in block:
                _result(transcript, block["toolResult"])
            else:
                spoken = True
                if isinstance(block, dict):
                    texts.append(block.get("text"))
        if spoken or not blocks:
            transcript.user(join_texts(texts))


def conversation(record: dict) -> dict:
    """The canonical record of one Converse record; :class:`_Refused` for a message of another shape."""
    messages = record.get("messages")
    if messages is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=("messages", "system"))
    transcript = Transcript()
    if isinstance(messages, list):
        for i, message in enumerate(messages):
            _add_message(transcript, message, i)
    else:
        transcript.unreadable()
    return chat_record(record, transcript.record(), content_keys=("messages", "system"))


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    for location, record in chat_records(doc, EXPECTS):
        try:
            canonical = conversation(record) if isinstance(record, dict) else record
        except _Refused as refused:
            field, detail = refused.args
            raise InputError(detail, source=doc.source, **where(location, field)) from None
        yield location[1], normalised(canonical, doc, location)
