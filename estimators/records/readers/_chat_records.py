"""The records of a read :class:`~._source.Document`, and the steps every reader shares to make conversations of
them: each record with its location (:func:`records_of`, :func:`chat_records`), errors placed at the record's
line or JSON path (:func:`where`, :func:`normalised`), and a chat record's messages (:func:`chat_record`).
"""
from __future__ import annotations

from pathlib import Path

from .._errors import InputError
from .._records import normalise_conversation
from ._source import Document, JsonLines

__all__ = ["records_of", "chat_records", "where", "normalised", "chat_record"]


def records_of(doc: Document, what: str):
    """``(location, value)`` of the conversations of a JSONL file, a JSON list or one object.

    ``location`` is ``("line", n)`` for JSONL and ``("path", "[i]")`` for a JSON list; its
    second item is the record's place that a reader gives with its conversation (the messages
    of a repeated key name it: :class:`~estimators.records._keys.UniqueKeys`).
    """
    if doc.kind == "jsonl":
        return ((("line", n), v) for n, v in doc.data)
    if doc.kind == "json" and isinstance(doc.data, list):
        return [(("path", f"[{i}]"), v) for i, v in enumerate(doc.data)]
    if doc.kind == "json" and isinstance(doc.data, dict):
        return [(("line", 1) if doc.single_line else ("path", ""), doc.data)]
    raise InputError(f"expected {what}", source=doc.source)


def _without_id(record) -> bool:
    """Whether a chat record leaves out ``conversation_id`` (no key, or null)."""
    return isinstance(record, dict) and record.get("conversation_id") is None


def chat_records(doc: Document, what: str):
    """:func:`records_of` for the chat formats, whose records may leave out ``conversation_id``.

    SPEC section 7: a record of a JSON Lines file without one is the conversation ``line-N``,
    N its 1-based line in the file. Records are given one at a time, in order, so an error
    of an earlier record is still found first.

    Parameters
    ----------
    doc : Document
    what : str
        What the format expects, for the message of a document that holds no records.

    Yields
    ------
    tuple
        ``(location, record)`` as :func:`records_of` gives them, the record with its
        ``conversation_id`` filled in where it had none.

    Raises
    ------
    InputError
        At a record of a JSON list (or of a JSON object written on several lines) without
        ``conversation_id``: it has no line of its own to name it; and at a record whose
        ``conversation_id`` is the ``line-N`` of another line that has none, naming both lines.
    """
    line_ids = _line_ids(doc, what)
    for location, record in records_of(doc, what):
        if _without_id(record):
            if location[0] != "line":
                raise InputError("is missing (only a JSON Lines file may leave it out: the conversation is then "
                                 "line-N, N its line)", source=doc.source, **where(location, "conversation_id"))
            record = {**record, "conversation_id": f"line-{location[1]}"}
        elif isinstance(record, dict) and record["conversation_id"].__class__ is str \
                and record["conversation_id"] in line_ids:
            conversation_id = record["conversation_id"]
            raise InputError(f"{conversation_id!r} is also the id of line {line_ids[conversation_id]}, which has no "
                             "conversation_id (it is then line-N, N its line): ids must be unique",
                             source=doc.source, **where(location, "conversation_id"))
        yield location, record


def _line_ids(doc: Document, what: str) -> dict:
    """The ``line-N`` id of each JSON Lines record without ``conversation_id`` (N its line), mapped
    to N; a file streamed (:class:`JsonLines`) is read for them only when its text holds ``line-``."""
    if isinstance(doc.data, JsonLines) and not _holds(doc.path, b"line-"):
        return {}
    return {f"line-{line}": line for (kind, line), record in records_of(doc, what)
            if kind == "line" and _without_id(record)}


def _holds(path: Path, text: bytes, block: int = 1 << 24) -> bool:
    """Whether the file at ``path`` holds ``text``, read in blocks."""
    with path.open("rb") as handle:
        tail = b""
        while data := handle.read(block):
            if text in tail + data[:len(text)] or text in data:
                return True
            tail = data[-len(text):]
    return False


def where(location, field: str | None = None) -> dict:
    """Keyword arguments of :class:`InputError` for a location of :func:`records_of`."""
    kind, value = location
    if kind == "line":
        return {"line": value, "field": field}
    path = value + (f".{field}" if field and value else field or "")
    return {"line": None, "field": path or None}


def refuse_nested_id(value, doc: Document, location, field: str) -> None:
    """Refuse a list or object where an id (or a part of one) belongs, naming the log's ``field``:
    the ids are written into text, and a value nested a thousand deep has no text."""
    if isinstance(value, list | dict):
        kind = "a list" if isinstance(value, list) else "an object"
        raise InputError(f"must be an integer or a string, got {kind}", source=doc.source, **where(location, field))


def normalised(canonical: dict, doc: Document, location, fields: dict | None = None) -> dict:
    """:func:`normalise_conversation` with errors placed at the record's line or JSON path.

    ``fields`` maps a canonical field to the field of the log it is read from (tau-bench's
    ``trial`` is the ``replica``): an error names the field that the log holds.
    """
    try:
        return normalise_conversation(canonical, source=doc.source)
    except InputError as err:
        field = (fields or {}).get(err.field, err.field)
        raise InputError(err.detail, source=doc.source, **where(location, field)) from None


def chat_record(record: dict, chat: dict, *, content_keys=("messages",)) -> dict:
    """A canonical record: the record's own keys (ids, label, metadata, unknown keys) plus
    the ``assistant_turns``, ``tool_calls`` and ``messages`` numbered from its chat (a
    record's own ``assistant_turns`` or ``tool_calls`` are replaced: the chat decides)."""
    out = {k: v for k, v in record.items()
           if k not in content_keys and k not in ("tool_calls", "assistant_turns", "messages")}
    implied = chat.pop("implied_calls", None)
    unreadable = chat.pop("unreadable", None)
    out.update(chat)
    notes = {k: v for k, v in (("implied_calls", implied), ("unreadable_items", unreadable)) if v}
    if notes:
        meta = record.get("metadata")
        out["metadata"] = {**(meta if isinstance(meta, dict) else {}), **notes}
    return out


def trace_groups(traces: dict, group_by: str, session_of, start_of):
    """``(conversation_id, [(trace id, trace), ...])`` of a file's traces (by id, in the order they came): a trace
    a conversation, or with ``group_by="session"`` the traces that ``session_of(trace)`` gives one id together, in
    the order ``start_of(trace)`` gives (a trace with no session id alone): the trace readers' ``--group-by``."""
    if group_by != "session":
        yield from ((trace_id, [(trace_id, trace)]) for trace_id, trace in traces.items())
        return
    sessions: dict[str, list] = {}
    for trace_id, trace in traces.items():
        sessions.setdefault(session_of(trace) or trace_id, []).append((trace_id, trace))
    for session, parts in sessions.items():
        yield session, sorted(parts, key=lambda part: start_of(part[1]))


def trace_records(doc: Document, groups, build):
    """``(place, normalised conversation)`` of each group of :func:`trace_groups` that ``build(conversation_id,
    parts)`` makes a conversation of (None: no model or tool record in it), at the place of its first trace (each
    trace carries ``place``)."""
    for conversation_id, parts in groups:
        conversation = build(conversation_id, parts)
        if conversation is not None:
            place = parts[0][1].place
            yield place[1], normalised(conversation, doc, place)
