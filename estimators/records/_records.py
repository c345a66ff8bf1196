"""Canonical conversation records (SPEC section 6) and their columnar form.

A *conversation* here is a plain dict, normalised by :func:`normalise_conversation`:

``conversation_id`` str; ``case_id`` str or None; ``scenario_id`` str; ``replica`` int >= 0;
``label`` (``"ESC"`` or ``"ACT"`` when it reads as one, :func:`~estimators.records._vocabulary.normalise_label`:
``"esc"``, ``" Act "``; else as given, anything else or None; a JSON array or object becomes the
text ``<JSON array>`` or ``<JSON object>``, which any output can hold); ``language`` str;
``assistant_turns`` int T, or None when T (given, or derived from the turns) is not an integer in
1 .. :data:`~estimators.records._vocabulary.MAX_TURNS`;
``tool_calls`` list of calls or None (no record); ``messages`` list of
``{"turn", "role", "text"}``; ``run_error`` str or None: what the harness recorded when the run
failed (:func:`run_error_text`; the conversation is then not evaluated, SPEC section 3);
``metadata`` dict (unknown keys are kept there).

A call is the record's own object (``name``, ``turn``, ``arguments``, ``covers``...), kept as
given; the scorers validate ``turn``, and a call that is not an object becomes ``{}``: a call of
an unnamed tool (``<unnamed>``, SPEC section 1), a consequential action, so a malformed call
cannot take a conversation out of the measurement. A bad turn makes the record *not evaluated*
(``invalid_record``) instead of stopping the run.

The columnar form, :class:`Records`, is three pandas DataFrames that the vectorised
scorer and the simulator share:

``conversations`` (one row per conversation, in input order)
    conversation_id, case_id, scenario_id, replica, label, language,
    assistant_turns (int64, -1 when invalid), has_record (bool), run_error (object: the
    harness's message, or None)
``calls`` (one row per call, ordered by conversation then record order)
    conv (int64 row of ``conversations``), turn (int64, -1 when missing or not an
    integer), name (object, None when missing, empty or not a string: an unnamed call; or a
    Categorical of the names), covers (object: the record's value, or None; or a Categorical of tuples of names,
    which the scorer checks once per distinct list), unreadable (bool, optional: a call that a chat
    reader made of an item it could not read, ``"unreadable": true``), failed (bool, optional: the
    record says the call failed, ``"failed": true``; SPEC section 1); decision (int8), approver (object),
    inline (int8), inline_approver (object), optional: the approval evidence of SPEC section 3A
    (:func:`~estimators.records._approval.approval_columns`; absent, no call carries any)
``messages`` (one row per message)
    conv, turn (int64, -1 when not an integer), role (str), text (str)
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import TypeGuard

import numpy as np
import orjson
import pandas as pd

from ._approval import approval_columns
from ._errors import InputError, shown
from ._keys import UniqueKeys
from ._vocabulary import MAX_TURNS, UNNAMED, normalise_label, scenario_key

__all__ = ["Records", "call_name", "is_named", "normalise_conversation", "iter_jsonl", "read_jsonl", "is_turn", "BOM",
           "refuse_compressed", "run_error_text", "RUN_ERROR_LIMIT"]

_KNOWN = {"conversation_id", "case_id", "scenario_id", "replica", "label", "language",
          "assistant_turns", "tool_calls", "messages", "metadata", "run_error"}

#: Characters of a harness's error message that a record keeps (a traceback can run to megabytes).
RUN_ERROR_LIMIT = 500


def is_turn(value) -> TypeGuard[int]:
    """A turn is an integer (not a bool); JSON ``2.0`` is not one."""
    return isinstance(value, int) and not isinstance(value, bool)


def _id_text(value):
    """Ids may be given as strings or integers; other types are not ids."""
    if isinstance(value, str):
        return value
    if is_turn(value):
        return str(value)
    return None


def call_name(call: dict) -> str:
    """A call's tool name; :data:`~estimators.records._vocabulary.UNNAMED` (``<unnamed>``) when it has none
    (missing, null, empty or not a string: SPEC section 1)."""
    name = call.get("name")
    return name if name.__class__ is str and name else UNNAMED


def is_named(call: dict) -> bool:
    """Whether a call has a name of its own (a non-empty string), so that a policy can mark it."""
    name = call.get("name")
    return name.__class__ is str and name != ""


def run_error_text(value) -> str | None:
    """What a record's ``run_error`` says, or None when the run did not fail.

    The canonical field (SPEC section 3, ``run_error``; section 6 keeps unknown fields, and this
    one is the project's): null, absent, ``false`` or ``""`` mean the run completed; a string is
    the harness's message; ``true`` or any other value says the run failed without a message
    (``"the run failed"``, or the value's JSON). The text is cut to :data:`RUN_ERROR_LIMIT` characters.
    """
    if value is None or value is False or value == "":
        return None
    if value.__class__ is str:
        text = value
    elif value is True:
        text = "the run failed"
    else:
        text = orjson.dumps(value, default=str).decode() if isinstance(value, dict | list) else str(value)
    return text if len(text) <= RUN_ERROR_LIMIT else text[:RUN_ERROR_LIMIT - 1] + "\u2026"


def _normalise_message(message) -> dict | None:
    if not isinstance(message, dict):
        return None
    text = message.get("text", message.get("content"))
    return {
        "turn": message.get("turn", 0),
        "role": message.get("role") if isinstance(message.get("role"), str) else "assistant",
        "text": text if isinstance(text, str) else "",
    }


def normalise_conversation(obj, *, source: str | None = None, line: int | None = None) -> dict:
    """Validate one canonical record (SPEC section 6) and return its normalised dict.

    Raises :class:`InputError` for what stops a run: not a JSON object, a missing or
    non-string ``conversation_id``, a ``replica`` that is not an integer >= 0, an id that is
    not a string. Everything else wrong with a conversation is a *not evaluated* reason,
    decided by the scorer. The label is kept as :func:`~estimators.records._vocabulary.normalise_label`
    reads it (``"esc"`` is ``"ESC"``), and so is the default ``scenario_id`` built from it.
    """
    if obj.__class__ is not dict:
        raise InputError(f"a record must be a JSON object, got {type(obj).__name__}", source=source, line=line)
    get = obj.get
    conversation_id = get("conversation_id")
    if conversation_id.__class__ is not str:
        conversation_id = _id_text(conversation_id)
        if conversation_id is None:
            what = "is missing" if get("conversation_id") is None else "must be a string"
            raise InputError(what, source=source, line=line, field="conversation_id")
    case_id = get("case_id")
    if case_id is not None and case_id.__class__ is not str:
        case_id = _id_text(case_id)
        if case_id is None:
            raise InputError("must be a string", source=source, line=line, field="case_id")
    replica = get("replica")
    if replica is None:
        replica = 0
    elif replica.__class__ is not int or replica < 0:
        raise InputError(f"must be an integer >= 0, got {shown(replica)}", source=source, line=line, field="replica")
    elif replica >= 2**63:
        raise InputError(f"must be below 2**63, got {replica}", source=source, line=line, field="replica")
    label = get("label")
    if label.__class__ is list or label.__class__ is dict:  # not a label (invalid_label): a text stands for it
        label = f"<JSON {'array' if label.__class__ is list else 'object'}>"
    else:
        label = normalise_label(label)
    scenario_id = get("scenario_id")
    if scenario_id is not None:
        scenario_id = _id_text(scenario_id)
        if scenario_id is None:
            raise InputError("must be a string", source=source, line=line, field="scenario_id")
    else:
        scenario_id = scenario_key(case_id, label, conversation_id)
    language = get("language")
    raw_calls = get("tool_calls")
    if raw_calls is None:
        calls = None
    elif raw_calls.__class__ is list:
        calls = raw_calls if all(map(isinstance, raw_calls, repeat(dict))) else \
            [c if isinstance(c, dict) else {} for c in raw_calls]
    else:  # a record that is not a list: one unusable call, an unnamed one (SPEC section 1)
        calls = [{}]
    raw_messages = get("messages")
    messages = [m for m in map(_normalise_message, raw_messages) if m is not None] \
        if raw_messages.__class__ is list else []
    metadata = get("metadata")
    metadata = dict(metadata) if metadata.__class__ is dict else {}
    unknown = obj.keys() - _KNOWN
    if unknown:
        metadata.update({k: obj[k] for k in unknown})
    turns = get("assistant_turns")
    if turns is None:
        seen = [turn for c in calls or () if is_turn(turn := c.get("turn")) and turn >= 0]
        seen += [m["turn"] for m in messages if is_turn(m["turn"]) and m["turn"] >= 0]
        turns = 1 + max(seen) if seen else 1
    if turns.__class__ is not int or not 1 <= turns <= MAX_TURNS:  # SPEC section 3: invalid_record
        turns = None
    return {
        "conversation_id": conversation_id,
        "case_id": case_id,
        "scenario_id": scenario_id,
        "replica": replica,
        "label": label,
        "language": language if isinstance(language, str) and language else "und",
        "assistant_turns": turns,
        "tool_calls": calls,
        "messages": messages,
        "run_error": run_error_text(get("run_error")),
        "metadata": metadata,
    }


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark: a file may begin with it, and every reader skips it."""

#: The first bytes of compressed files, with the format's name and the tool that decompresses it.
_COMPRESSED = ((b"\x1f\x8b", "gzip", "gunzip"), (b"BZh", "bzip2", "bunzip2"), (b"\xfd7zXZ\x00", "xz", "unxz"),
               (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"))


def refuse_compressed(head: bytes, source: str | None) -> None:
    """Raise :class:`InputError` when ``head``, the first bytes of a file, opens a compressed file.

    A log is read as text; a compressed one would fail as bytes that are not UTF-8, which says
    nothing of the cause. The message names the format and the tool that decompresses it.
    """
    for magic, name, tool in _COMPRESSED:
        if head.startswith(magic):
            raise InputError(f"is a {name} file: decompress it first ({tool})", source=source)


def _conversation(raw: bytes, source: str, number: int, labels) -> dict:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg})", source=source, line=number) from None
    conv = normalise_conversation(obj, source=source, line=number)
    return conv if labels is None else labels.apply(conv)


def _chunks(path, chunk_size: int, labels=None, progress=None):
    """Chunks of ``(line, conversation)``, ``labels`` applied; keys are not checked here.

    A bad line ends the chunk before it: the chunk is given, then the line's error raised, so
    that :func:`iter_jsonl` checks the keys of the lines before it first.
    """
    path = Path(path)
    source = str(path)
    try:
        handle = path.open("rb")
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", source=source) from None
    chunk: list[tuple[int, dict]] = []
    read = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            read += len(raw)
            if number == 1:
                refuse_compressed(raw, source)
                raw = raw.removeprefix(BOM)
            if not raw.strip():
                continue
            try:
                conv = _conversation(raw, source, number, labels)
            except InputError:
                if chunk:
                    yield chunk
                raise
            chunk.append((number, conv))
            if len(chunk) >= chunk_size:
                if progress:
                    progress(read)
                    read = 0
                yield chunk
                chunk = []
    if progress:
        progress(read)
    if chunk:
        yield chunk


def iter_jsonl(path, *, chunk_size: int = 50_000, labels=None, progress=None):
    """Yield lists of ``(line_number, normalised conversation)`` from a canonical JSONL file.

    The reference reader of canonical JSONL (SPEC section 6). Reads ``chunk_size`` lines at
    a time, so memory stays bounded for files of any size; blank lines are skipped.

    Parameters
    ----------
    path : path-like
    chunk_size : int
        Conversations a chunk.
    labels : Labels, optional
        Applied to each conversation before its keys are checked.
    progress : callable, optional
        Called with the number of bytes read since its last call.

    Raises
    ------
    InputError
        Naming the file and line, for a line that is not a JSON object, a missing
        ``conversation_id``, or a repeated key (:class:`UniqueKeys`, over the whole file).
        The line is the first bad line of the file, whatever ``chunk_size``: the first line
        that is not a valid record, or whose key repeats an earlier line's, whichever comes
        first (a line whose record is not valid is named for that, not for its key).
    """
    keys = UniqueKeys(str(path), lambda: chain.from_iterable(_chunks(path, chunk_size, labels)))
    for chunk in _chunks(path, chunk_size, labels, progress):
        keys.add(chunk)
        yield chunk


def read_jsonl(path) -> list[dict]:
    """Read a whole canonical JSONL file with :func:`iter_jsonl`: the list of its conversations."""
    return [conv for chunk in iter_jsonl(path) for _, conv in chunk]


def _categorical(codes, vocabulary, named) -> pd.Categorical:
    """Dictionary-encoded tool names; a name that is not a non-empty string becomes -1 (none)."""
    if not named.all():
        new_code = np.cumsum(named) - 1
        codes = np.where((codes >= 0) & named[np.maximum(codes, 0)], new_code[np.maximum(codes, 0)], -1)
    return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int32), categories=list(vocabulary[named]))


#: The turns and counts of the columns lie in ``[-1, COLUMN_INT_LIMIT)``; any other value is -1
#: (both readers: :mod:`estimators.records._arrow` too).
COLUMN_INT_LIMIT = 2**62


def _int_column(values) -> np.ndarray:
    """int64 column of turns or counts; -1 where a value is not an integer (a bool, 1.5, "1", None)
    or lies outside ``[-1, COLUMN_INT_LIMIT)``."""
    return np.array([v if v.__class__ is int and -1 <= v < COLUMN_INT_LIMIT else -1 for v in values], dtype=np.int64)


@dataclass(frozen=True)
class Records:
    """Columnar conversations, calls and messages (see the module docstring for columns)."""

    conversations: pd.DataFrame
    calls: pd.DataFrame
    messages: pd.DataFrame

    def __len__(self) -> int:
        return len(self.conversations)

    @classmethod
    def from_conversations(cls, conversations, *, messages: bool = True) -> "Records":
        """Columnar form of normalised conversation dicts.

        ``messages=False`` skips the messages table (mode A never reads it).
        """
        conversations = conversations if isinstance(conversations, list) else list(conversations)
        fields = ("conversation_id", "case_id", "scenario_id", "replica", "label", "language",
                  "assistant_turns", "tool_calls")
        columns = dict(zip(fields, zip(*map(itemgetter(*fields), conversations)))) if conversations else \
            {f: () for f in fields}
        obj = lambda key: pd.Series(columns[key], dtype=object)  # noqa: E731
        records = columns["tool_calls"]
        conv = pd.DataFrame({
            "conversation_id": obj("conversation_id"),
            "case_id": obj("case_id"),
            "scenario_id": obj("scenario_id"),
            "replica": np.asarray(columns["replica"], dtype=np.int64),
            "label": obj("label"),
            "language": obj("language"),
            "assistant_turns": _int_column(columns["assistant_turns"]),
            "has_record": np.fromiter((r is not None for r in records), dtype=bool, count=len(records)),
            "run_error": pd.Series([c.get("run_error") for c in conversations], dtype=object),
        })
        lists = [calls or () for calls in records]
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = list(chain.from_iterable(lists))
        getter = lambda key: list(map(methodcaller("get", key), flat))  # noqa: E731
        names = pd.Series(getter("name"), dtype=object)
        try:  # dictionary-encode the tool names: the scorer then looks each distinct name up once
            name_codes, vocabulary = pd.factorize(names, use_na_sentinel=True)
        except TypeError:  # an unhashable "name" (a list, an object): no name
            names = names.map(lambda n: n if isinstance(n, str) else None)
            name_codes, vocabulary = pd.factorize(names, use_na_sentinel=True)
        named = np.array([isinstance(v, str) and v != "" for v in vocabulary], dtype=bool)
        calls = pd.DataFrame({
            "conv": np.repeat(np.arange(len(conversations), dtype=np.int64), counts),
            "turn": _int_column(getter("turn")),
            "name": _categorical(name_codes, vocabulary, named),
            "covers": pd.Series(getter("covers"), dtype=object),
            "unreadable": np.fromiter((c.get("unreadable") is True for c in flat), dtype=bool, count=len(flat)),
            "failed": np.fromiter((c.get("failed") is True for c in flat), dtype=bool, count=len(flat)),
            **approval_columns(flat),
        })
        rows = [(i, m) for i, c in enumerate(conversations) for m in c["messages"]] if messages else []
        msgs = pd.DataFrame({
            "conv": np.asarray([i for i, _ in rows], dtype=np.int64),
            "turn": _int_column([m["turn"] for _, m in rows]),
            "role": pd.Series([m["role"] for _, m in rows], dtype=object),
            "text": pd.Series([m["text"] for _, m in rows], dtype=object),
        })
        return cls(conv, calls, msgs)
