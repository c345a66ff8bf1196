"""A fast reader of well-formed canonical JSONL: Arrow's JSON parser straight to columns.

Most logs are well formed: every id a string, every turn an integer, every call an object.
For those, Arrow's multithreaded C++ JSON reader builds the columnar :class:`Records` with
no Python object per conversation or per call. Anything it cannot take exactly as the
Python path would (a value of another type, a missing ``conversation_id``, a repeated id, a
negative replica, a line that is not an object) raises :class:`FastPathUnavailable`, and the
caller reads the file again with :func:`estimators._records.iter_jsonl`, the reference
reader, which also gives the exact line of an error. Both paths give the same records (tested).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._records import Records

__all__ = ["FastPathUnavailable", "arrow_available", "iter_records_arrow"]


class FastPathUnavailable(Exception):
    """The file needs the reference reader (malformed, unusual, or pyarrow is not installed)."""


def arrow_available() -> bool:
    try:
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return True


def _schema():
    import pyarrow as pa
    call = pa.struct([("turn", pa.int64()), ("name", pa.string()), ("covers", pa.list_(pa.string()))])
    return pa.schema([("conversation_id", pa.string()), ("case_id", pa.string()), ("scenario_id", pa.string()),
                      ("replica", pa.int64()), ("label", pa.string()), ("language", pa.string()),
                      ("assistant_turns", pa.int64()), ("tool_calls", pa.list_(call)),
                      ("messages", pa.list_(pa.struct([("turn", pa.int64())])))])


def _strings(array) -> np.ndarray:
    """Arrow strings as an object array with None for null."""
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=object)


def _ints(array, fill: int) -> np.ndarray:
    return array.fill_null(fill).to_numpy(zero_copy_only=False).astype(np.int64)


def _max_turn_per_row(lists, n: int) -> np.ndarray:
    """Largest non-negative turn in each row's list (-1 where there is none)."""
    import pyarrow.compute as pc
    turns = _ints(pc.list_flatten(lists).field("turn"), -1)
    parents = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    out = np.full(n, -1, dtype=np.int64)
    np.maximum.at(out, parents, turns)
    return out


def _records_of(batch, seen_ids: set, seen_cells: set) -> Records:
    import pyarrow.compute as pc
    n = batch.num_rows
    col = batch.column
    conversation_id = _strings(col("conversation_id"))
    if col("conversation_id").null_count:
        raise FastPathUnavailable("a conversation without conversation_id")
    replica_arr = col("replica")
    replica = _ints(replica_arr, 0)
    if (replica < 0).any():
        raise FastPathUnavailable("a negative replica")
    case_id, label = _strings(col("case_id")), _strings(col("label"))
    ids = pd.Series(conversation_id, dtype=object)
    if ids.duplicated().any() or not seen_ids.isdisjoint(conversation_id.tolist()):
        raise FastPathUnavailable("a repeated conversation_id")
    seen_ids.update(conversation_id.tolist())
    keyed = (case_id != None) & (label != None)  # noqa: E711
    cells = list(zip(case_id[keyed].tolist(), label[keyed].tolist(), replica[keyed].tolist()))
    if len(set(cells)) != len(cells) or not seen_cells.isdisjoint(cells):
        raise FastPathUnavailable("a repeated (case, label, replica)")
    seen_cells.update(cells)

    scenario_id = _strings(col("scenario_id"))
    missing = scenario_id == None  # noqa: E711
    if missing.any():  # SPEC section 5: case_id + label, else the conversation itself
        with_case = missing & (case_id != None)  # noqa: E711
        label_text = np.where(label == None, "None", label).astype(object)  # noqa: E711
        scenario_id[with_case] = case_id[with_case] + ":" + label_text[with_case]
        without = missing & ~with_case
        scenario_id[without] = "conversation:" + conversation_id[without]
    language = _strings(col("language"))
    language[(language == None) | (language == "")] = "und"  # noqa: E711

    calls = col("tool_calls")
    has_record = calls.is_valid().to_numpy(zero_copy_only=False)
    turns_given = col("assistant_turns")
    turns = _ints(turns_given, 0)
    derived = 1 + np.maximum(np.maximum(_max_turn_per_row(calls, n), _max_turn_per_row(col("messages"), n)), 0)
    turns = np.where(turns_given.is_null().to_numpy(zero_copy_only=False), derived, turns)
    turns = np.where((turns < 1) | (turns >= 2**62), -1, turns)

    flat = pc.list_flatten(calls)
    call_conv = pc.list_parent_indices(calls).to_numpy().astype(np.int64)
    call_turn = _ints(flat.field("turn"), -1)
    call_turn[call_turn < -1] = -1
    names = pc.dictionary_encode(flat.field("name"))
    codes = names.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    vocabulary = np.asarray(names.dictionary.to_pylist(), dtype=object)
    named = vocabulary != ""
    if not named.all():  # "" is no name
        new_code = np.cumsum(named) - 1
        codes = np.where((codes >= 0) & named[np.maximum(codes, 0)], new_code[np.maximum(codes, 0)], -1)
        vocabulary = vocabulary[named]
    covers_field = flat.field("covers")
    covers = np.full(len(flat), None, dtype=object)
    given = np.flatnonzero(covers_field.is_valid().to_numpy(zero_copy_only=False))
    if given.size:
        values = pd.Series(covers_field.take(given).to_pylist(), dtype=object).to_numpy()
        covers[given] = values
    conversations = pd.DataFrame({
        "conversation_id": pd.Series(conversation_id, dtype=object),
        "case_id": pd.Series(case_id, dtype=object),
        "scenario_id": pd.Series(scenario_id, dtype=object),
        "replica": replica,
        "label": pd.Series(label, dtype=object),
        "language": pd.Series(language, dtype=object),
        "assistant_turns": turns.astype(np.int64),
        "has_record": has_record.astype(bool),
    })
    call_frame = pd.DataFrame({
        "conv": call_conv,
        "turn": call_turn,
        "name": pd.Categorical.from_codes(codes.astype(np.int32), categories=list(vocabulary)),
        "covers": pd.Series(covers, dtype=object),
    })
    messages = pd.DataFrame({"conv": np.array([], np.int64), "turn": np.array([], np.int64),
                             "role": pd.Series([], dtype=object), "text": pd.Series([], dtype=object)})
    return Records(conversations, call_frame, messages)


# a line that does not open a JSON object: at the start of a read, and after a newline
_LINE_START = re.compile(rb"[ \t\r]*[^{ \t\r\n]")
_NEXT_LINE = re.compile(rb"\n[ \t\r]*[^{ \t\r\n]")


class _CountingFile:
    """A binary file that counts the bytes read from it (for the progress bar).

    It stops (:class:`FastPathUnavailable`) at a line that does not start with ``{``, before
    Arrow sees it: pyarrow's JSON reader (26.0) crashes the process on a top-level ``null`` line.
    """

    def __init__(self, path):
        self.handle, self.read_so_far, self.closed = open(path, "rb"), 0, False
        self.mid_line = False  # the last read ended inside a line that has more than blanks

    def read(self, size=-1):
        data = self.handle.read(size)
        self.read_so_far += len(data)
        start = 0
        if self.mid_line:  # that line was checked where it began
            start = data.find(b"\n")
            if start < 0:
                return data
        elif _LINE_START.match(data):
            raise FastPathUnavailable("a line that is not a JSON object")
        if _NEXT_LINE.search(data, start):
            raise FastPathUnavailable("a line that is not a JSON object")
        self.mid_line = bool(data[data.rfind(b"\n") + 1:].strip(b" \t\r"))
        return data

    def close(self):
        self.handle.close()
        self.closed = True


def iter_records_arrow(path, *, block_bytes: int = 1 << 24):
    """Yield ``(bytes read since the last block, Records)`` for each block of a well-formed
    canonical JSONL file (mode A).

    Raises :class:`FastPathUnavailable` as soon as something needs the reference reader.
    """
    try:
        import pyarrow as pa
        import pyarrow.json as pj
    except ImportError as err:
        raise FastPathUnavailable("pyarrow is not installed") from err
    options = pj.ParseOptions(explicit_schema=_schema(), unexpected_field_behavior="ignore")
    seen_ids: set = set()
    seen_cells: set = set()
    source = _CountingFile(path)
    reported = 0
    try:
        reader = pj.open_json(pa.PythonFile(source, mode="r"), read_options=pj.ReadOptions(block_size=block_bytes),
                              parse_options=options)
        for batch in reader:
            records = _records_of(batch, seen_ids, seen_cells)
            yield source.read_so_far - reported, records
            reported = source.read_so_far
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as err:
        raise FastPathUnavailable(str(err)) from err
    finally:
        source.close()
