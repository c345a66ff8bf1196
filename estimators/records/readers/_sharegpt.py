"""Fine-tuning data with tool calls: ShareGPT and LLaMA-Factory's content parts (``--format sharegpt``).

One conversation per JSONL line, or a JSON list of them, in either shape of LLaMA-Factory
(``hiyouga/LLaMA-Factory``):

- ShareGPT (``data/README.md``, ``data/glaive_toolcall_en_demo.json``)::

    {"conversations": [{"from": "human", "value": "Refund order 7"},
                       {"from": "function_call", "value": "{\\"name\\": \\"get_order\\", \\"arguments\\": {...}}"},
                       {"from": "observation", "value": "{...}"},
                       {"from": "gpt", "value": "..."}],
     "system": "...", "tools": "[...]"}

  ``human`` (or ``user``) speaks to the assistant, ``gpt`` (or ``assistant``) is its text, a ``function_call``
  value is the JSON of one ``{"name", "arguments"}`` object or of a list of them (parallel calls), an
  ``observation`` (or ``tool``) is a tool result, ``system`` belongs to no turn; a turn with ``role`` and
  ``content`` instead (LLaMA-Factory's tags for OpenAI-style data) is read as ``--format openai`` reads it.
  Another ``from``, or calls written as ``<tool_call>`` tags in a ``gpt`` text (Hermes function calling), is
  refused with a message that names it: its calls would otherwise be lost.
- LLaMA-Factory's messages (``src/llamafactory/v1/utils/types.py``, ``data/reason_tool_use_demo_50.jsonl``)::

    {"messages": [{"role": "user", "content": [{"type": "text", "value": "Refund order 7"}]},
                  {"role": "assistant", "content": [
                      {"type": "reasoning", "value": "..."},
                      {"type": "tool_call", "value": "{\\"name\\": \\"get_order\\", \\"arguments\\": {...}}"}]},
                  {"role": "tool", "content": [{"type": "text", "value": "..."}]}],
     "tools": "[...]"}

  ``text`` parts are the text; a ``tool_call`` part is a call, its value the JSON of ``{"name", "arguments"}``
  (or a list of them); ``reasoning`` is not shown to the user; a ``tool`` message is a tool result and
  ``system`` belongs to no turn. A message in OpenAI's own shape (string content, ``tool_calls``) is read as
  ``--format openai`` reads it. OpenAI's reader takes these records for plain chat and drops the parts it does
  not know, calls included, so this format is detected before it.

A call that cannot be read (a value that is no JSON object) is a call without a name (``<unnamed>``, SPEC
section 1: an attempted call is a call), the value kept as its arguments. Turns follow SPEC section 1
(:class:`~estimators.records.readers._chat.Transcript`). Every other key of the record (``conversation_id``,
``case_id``, ``label``, ``replica``, ...) goes to the canonical record as in the other chat formats; a JSONL
record without ``conversation_id`` is ``line-N``.
"""
from __future__ import annotations

from collections.abc import Iterator

from .._errors import InputError
from ._chat import Transcript, join_texts, parse_arguments
from ._chat_records import chat_record, chat_records, normalised, records_of, where
from ._markers import record_markers
from ._openai import add_messages
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "sharegpt"
EXPECTS = ("JSONL (or a JSON list) of {conversation_id, label, conversations} with ShareGPT turns, or of "
           "{conversation_id, label, messages} with LLaMA-Factory content parts")

_PART_TYPES = frozenset({"text", "reasoning", "tool_call", "image_url", "video_url", "audio_url"})
_USER, _ASSISTANT, _RESULT = frozenset({"human", "user"}), frozenset({"gpt", "assistant"}), frozenset(
    {"observation", "tool"})


def _is_part(part) -> bool:
    """A LLaMA-Factory content part: ``{"type", "value"}`` (OpenAI's parts hold ``text`` instead)."""
    return isinstance(part, dict) and part.get("type") in _PART_TYPES and "value" in part and "text" not in part


def _has_parts(message) -> bool:
    return isinstance(message, dict) and isinstance(message.get("content"), list) and any(
        map(_is_part, message["content"]))


def _shape(record) -> str | None:
    """``"sharegpt"``, ``"parts"`` (LLaMA-Factory's messages) or None."""
    if not isinstance(record, dict):
        return None
    turns = record.get("conversations")
    if isinstance(turns, list) and any(isinstance(t, dict) and "from" in t for t in turns):
        return "sharegpt"
    messages = record.get("messages")
    if isinstance(messages, list) and any(map(_has_parts, messages)):
        return "parts"
    return None


def sniff(doc: Document) -> bool:
    """A record of either shape, and no record of a format that is not chat (canonical, tau-bench) or of
    another provider."""
    if NAME not in doc.cache:
        markers = record_markers(doc)
        doc.cache[NAME] = (markers is not None and markers <= {"chat", "openai"}
                           and any(_shape(value) for _, value in records_of(doc, EXPECTS)))
    return doc.cache[NAME]


def _add_calls(transcript: Transcript, value) -> None:
    """The calls of a ``function_call`` value or a ``tool_call`` part: ``{"name", "arguments"}`` or a list."""
    calls = parse_arguments(value)
    for call in calls if isinstance(calls, list) else [calls]:
        if isinstance(call, dict):
            transcript.call(call.get("name"), parse_arguments(call.get("arguments")), call.get("id"))
        else:  # a call, whose tool cannot be told
            transcript.call(None, call)


class _Refused(Exception):
    """A record close to a shape but not it: ``(field, detail)``."""


def _sharegpt(transcript: Transcript, turns) -> None:
    for i, turn in enumerate(turns):
        if isinstance(turn, dict) and "from" not in turn and "role" in turn:
            add_messages(transcript, [turn])  # LLaMA-Factory's role and content tags on the conversations
            continue
        tag = turn.get("from") if isinstance(turn, dict) else None
        if not isinstance(tag, str):
            transcript.unreadable()
            continue
        value = turn.get("value")
        text = value if isinstance(value, str) else ""
        if tag in _USER:
            transcript.user(text)
        elif tag in _ASSISTANT:
            if "<tool_call>" in text:
                raise _Refused(f"conversations[{i}].value", "a gpt message holds a call written as <tool_call> text "
                       "(Hermes function calling); this format reads calls from function_call messages: "
                       "write each call as one")
            transcript.assistant(text)
        elif tag == "function_call":
            _add_calls(transcript, value)
        elif tag in _RESULT:
            transcript.result(text=text)
        elif tag != "system":
            raise _Refused(f"conversations[{i}].from", f"{tag!r} is not a ShareGPT role this format reads (human, gpt, "
                   "function_call, observation, system): a call under it would be lost")


def _texts(parts) -> str:
    return join_texts(p.get("value") for p in parts if isinstance(p, dict) and p.get("type") == "text")


def _parts(transcript: Transcript, messages) -> None:
    for message in messages:
        if not _has_parts(message):
            add_messages(transcript, [message])  # OpenAI's own shape (or not a message: unreadable)
            continue
        role, parts = message.get("role"), message["content"]
        if role == "user":
            transcript.user(_texts(parts))
        elif role == "assistant":
            for part in parts:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text":
                    transcript.assistant(part.get("value"))
                elif kind == "tool_call":
                    _add_calls(transcript, part.get("value"))
        elif role == "tool":
            transcript.result(text=_texts(parts))
        elif role != "system":
            transcript.unreadable()


def conversation(record: dict) -> dict:
    """The canonical record of one record of either shape; :class:`_Refused` for one close to a shape."""
    shape = _shape(record)
    key = "conversations" if shape == "sharegpt" or "messages" not in record else "messages"
    items = record.get(key)
    content_keys = (key, "system", "tools")
    if items is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=content_keys)
    transcript = Transcript()
    if not isinstance(items, list):
        transcript.unreadable()
    elif key == "conversations":
        _sharegpt(transcript, items)
    else:
        _parts(transcript, items)
    return chat_record(record, transcript.record(), content_keys=content_keys)


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    for location, record in chat_records(doc, EXPECTS):
        try:
            canonical = conversation(record) if isinstance(record, dict) else record
        except _Refused as refused:
            field, detail = refused.args
            raise InputError(detail, source=doc.source, **where(location, field)) from None
        yield location[1], normalised(canonical, doc, location)
