"""Anthropic Messages transcripts (``--format anthropic``).

One conversation per JSONL line, or a JSON list of them::

    {"conversation_id": "c1", "label": "ESC", "system": "...",
     "messages": [{"role": "user", "content": "Refund order 7"},
                  {"role": "assistant", "content": [
                      {"type": "text", "text": "Let me look."},
                      {"type": "tool_use", "id": "tu_1", "name": "get_order", "input": {"order_id": 7}}]},
                  {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": "tu_1", "content": "..."}]},
                  {"role": "assistant", "content": "..."}]}

Read from each message:

- assistant content, block by block in order: ``text`` blocks are the assistant's text;
  ``tool_use``, ``server_tool_use`` and ``mcp_tool_use`` blocks are calls (``input`` as given;
  a string is parsed as JSON and kept as text when it is not); ``thinking`` blocks are not
  shown to the user and are skipped; server tool results in assistant content are results;
- user content: ``tool_result`` blocks are tool results (one with ``"is_error": true`` makes its
  call ``"failed": true``, SPEC section 1); a user message made only of
  ``tool_result`` blocks opens no turn (SPEC section 7), any other user message does
  (its ``text`` blocks are its text);
- the top-level ``system`` prompt belongs to no turn.

A record may leave out ``conversation_id``: in a JSONL file it is then ``line-N``, N its
line (SPEC section 7, :func:`~estimators.records.readers._chat_records.chat_records`).
"""
from __future__ import annotations

from collections.abc import Iterator

from ._chat import Transcript, join_texts, parse_arguments
from ._chat_records import chat_record, chat_records, normalised
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "anthropic"
EXPECTS = "JSONL (or a JSON list) of {conversation_id, label, messages} with Anthropic content blocks"

_CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
_RESULT_BLOCKS = ("tool_result", "web_search_tool_result", "mcp_tool_result", "code_execution_tool_result")


def _blocks(content):
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _add_message(transcript: Transcript, message) -> None:
    role = message.get("role") if isinstance(message, dict) else None
    if not isinstance(role, str):
        transcript.unreadable()
        return
    blocks = _blocks(message.get("content"))
    if role == "assistant":
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                transcript.assistant(block.get("text"))
            elif kind in _CALL_BLOCKS:
                transcript.call(block.get("name"), parse_arguments(block.get("input")), block.get("id"))
            elif kind in _RESULT_BLOCKS:
                transcript.result(block.get("tool_use_id"), failed=block.get("is_error") is True)
            elif not isinstance(block, dict):
                transcript.unreadable()
    elif role == "user":
        spoken, texts = False, []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") in _RESULT_BLOCKS:
                transcript.result(block.get("tool_use_id"), failed=block.get("is_error") is True)
            else:
                spoken = True
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(block.get("text"))
                elif isinstance(block, str):
                    texts.append(block)
        if spoken or not blocks:
            transcript.user(join_texts(texts))


def conversation(record: dict) -> dict:
    messages = record.get("messages")
    if messages is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=("messages", "system"))
    transcript = Transcript()
    if isinstance(messages, list):
        for message in messages:
            _add_message(transcript, message)
    else:
        transcript.unreadable()
    return chat_record(record, transcript.record(), content_keys=("messages", "system"))


def sniff(doc: Document) -> bool:
    markers = record_markers(doc)
    return markers is not None and bool(markers) and "anthropic" in markers and markers <= {"chat", "anthropic"}


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    return ((location[1], normalised(conversation(record) if isinstance(record, dict) else record, doc, location))
            for location, record in chat_records(doc, EXPECTS))
