"""Canonical JSONL in chunks of :class:`Records`: Arrow's JSON parser first, the reference reader else.

:func:`iter_records` is the one reader of canonical JSONL in columns. Most logs are well
formed: every id a string, every turn an integer, every call an object. For those, Arrow's
multithreaded C++ JSON reader builds the columnar :class:`Records` with no Python object per
conversation or per call. Anything it cannot take exactly as the reference reader
(:func:`estimators.records._records.iter_jsonl`) would (a value of another type, a missing
``conversation_id``, a repeated key, a negative replica, a line that is not one object, and what
Arrow's parser takes but JSON Lines does not: ``NaN``, ``Infinity``, bytes that are not UTF-8,
nesting deeper than the reference reader's parser goes) raises
:class:`FastPathUnavailable` inside, and the reference reader reads the file from its first
line, checking every line and naming the line of an error; it gives the conversations the fast
path had not given yet. Both give the same records (tested).
"""
from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ._approval import NO_DECISION, approver_text, decision_code
from ._keys import coded_key_hashes
from ._records import BOM, COLUMN_INT_LIMIT, Records, iter_jsonl, run_error_text
from ._vocabulary import MAX_TURNS, normalise_labels

__all__ = ["FastPathUnavailable", "iter_records"]

CHUNK_BYTES = 1 << 24
"""Bytes of a chunk of the fast path (Arrow parses the next one while the caller works)."""


class FastPathUnavailable(Exception):
    """The file needs the reference reader (malformed or unusual)."""


def _schema():
    approval = pa.struct([("decision", pa.string()), ("approver", pa.string())])  # SPEC section 3A
    call = pa.struct([("turn", pa.int64()), ("name", pa.string()), ("covers", pa.list_(pa.string())),
                      ("unreadable", pa.bool_()), ("failed", pa.bool_()), ("decision", pa.string()),
                      ("approver", pa.string()), ("approval", approval)])
    return pa.schema([("conversation_id", pa.string()), ("case_id", pa.string()), ("scenario_id", pa.string()),
                      ("replica", pa.int64()), ("label", pa.string()), ("language", pa.string()),
                      ("assistant_turns", pa.int64()), ("tool_calls", pa.list_(call)),
                      ("messages", pa.list_(pa.struct([("turn", pa.int64())]))),
                      ("run_error", pa.string())])


def _strings(array) -> np.ndarray:
    """Arrow strings as an object array with None for null."""
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=object)


def _run_errors(array) -> np.ndarray:
    """The ``run_error`` column as the reference reader keeps it (:func:`~estimators.records._records.run_error_text`):
    None where the run completed (null or ``""``), else the message, cut to its limit: one look-up a
    distinct value."""
    values, codes = _coded_strings(array)
    return np.array([run_error_text(v) for v in values], dtype=object)[codes]


def _approval_columns(flat) -> dict[str, np.ndarray]:
    """The approval columns of the calls (:func:`~estimators.records._approval.approval_columns`), one look-up a
    distinct decision and approver."""
    def mapped(array, read, dtype):
        values, codes = _coded_strings(array)
        return np.array([read(v) for v in values], dtype=dtype)[codes]

    approval = flat.field("approval")
    has_inline = approval.is_valid().to_numpy(zero_copy_only=False).astype(bool)
    inline = mapped(approval.field("decision"), decision_code, np.int8)
    inline[~has_inline] = NO_DECISION
    inline_approver = mapped(approval.field("approver"), approver_text, object)
    inline_approver[~has_inline] = None
    return {"decision": mapped(flat.field("decision"), decision_code, np.int8),
            "approver": mapped(flat.field("approver"), approver_text, object),
            "inline": inline, "inline_approver": inline_approver}


def _coded_strings(array, read=None) -> tuple[np.ndarray, np.ndarray]:
    """Arrow strings as ``(values, codes)``: the distinct values as Python strings, then None,
    and the code of each row into them (None is -1, the last).

    ``read``, if given, maps the object array of the distinct values (and None) to what the
    rows hold (:func:`~estimators.records._vocabulary.normalise_labels` for labels): one look-up a value.
    """
    encoded = pc.dictionary_encode(array)
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    values = np.array(encoded.dictionary.to_pylist() + [None], dtype=object)
    if read is not None:
        values = read(values)
    return values, codes


def _shared_strings(array, read=None) -> tuple[np.ndarray, np.ndarray]:
    """Arrow strings as ``(object array, codes)``: one Python string per distinct value, shared
    by its rows (no string object a row, so a long file does not fragment the heap); None is -1.
    ``read`` as :func:`_coded_strings`.
    """
    values, codes = _coded_strings(array, read)
    return values[codes], codes


def _list_codes(lists, longest: int = 8) -> tuple[np.ndarray, pd.Index]:
    """Arrow lists of strings, dictionary-encoded: ``(codes, distinct lists as tuples)``, so
    the scorer checks each distinct list once. Rows are grouped exactly, by their length and
    the codes of their values (lists longer than ``longest``: by their tuples)."""
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if lengths.max(initial=0) > longest:
        codes, distinct = pd.factorize(pd.Series([tuple(x) for x in lists.to_pylist()], dtype=object))
        return codes, pd.Index(distinct, dtype=object, tupleize_cols=False)
    values = pc.dictionary_encode(pc.list_flatten(lists))
    value_codes = values.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    parents = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    position = np.arange(value_codes.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    key = np.full((len(lists), lengths.max(initial=0) + 1), -2, dtype=np.int64)
    key[:, 0] = lengths
    key[parents, 1 + position] = value_codes
    _, first, inverse = np.unique(_packed_rows(key), axis=0, return_index=True, return_inverse=True)
    distinct = [tuple(x) for x in lists.take(first).to_pylist()]
    return inverse.ravel(), pd.Index(distinct, dtype=object, tupleize_cols=False)


def _packed_rows(key: np.ndarray) -> np.ndarray:
    """The rows of a matrix of integers >= -2 as one integer each when they fit in 64 bits, in the
    same order (the digits of a number in base one more than the largest value, after adding 2);
    else the matrix itself. :func:`numpy.unique` then gives the same ``first`` and ``inverse``."""
    digits = key + 2
    base = int(digits.max(initial=0)) + 1
    if base ** key.shape[1] > np.iinfo(np.int64).max:
        return key
    packed = np.zeros(len(key), np.int64)
    for column in digits.T:
        packed = packed * base + column
    return packed


def _ints(array, fill: int) -> np.ndarray:
    return array.fill_null(fill).to_numpy(zero_copy_only=False).astype(np.int64)


def _max_turn_per_row(lists, n: int) -> np.ndarray:
    """Largest non-negative turn in each row's list (-1 where there is none)."""
    turns = _ints(pc.list_flatten(lists).field("turn"), -1)
    parents = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    out = np.full(n, -1, dtype=np.int64)
    if not turns.size:
        return out
    if (parents[1:] < parents[:-1]).any():  # not grouped by row (never, from Arrow's lists)
        np.maximum.at(out, parents, turns)
        return out
    starts = np.flatnonzero(np.r_[True, parents[1:] != parents[:-1]])  # the first value of each row that has any
    out[parents[starts]] = np.maximum(np.maximum.reduceat(turns, starts), -1)
    return out


def _default_scenarios(cases, labels, conversation_id, rows) -> np.ndarray:
    """:func:`~estimators.records._vocabulary.scenario_ids` of the conversations at ``rows``, their
    cases and labels given as ``(values, codes)`` (:func:`_coded_strings`, labels normalised):
    ``case:label`` made once per distinct (case, label) and shared by its rows,
    ``conversation:<id>`` for a conversation without a case."""
    (case_values, case_codes), (label_values, label_codes) = cases, labels
    case_codes, label_codes = case_codes[rows], label_codes[rows]
    out = np.empty(rows.size, dtype=object)
    with_case = case_codes >= 0  # -1 is None, no case
    if with_case.any():
        width = len(label_values)
        pairs, inverse = np.unique(case_codes[with_case] * width + label_codes[with_case] % width,
                                   return_inverse=True)  # a label code of -1 is the last value, None
        text = np.fromiter(map("{}:{}".format, case_values[pairs // width], label_values[pairs % width]), object,
                           pairs.size)
        out[with_case] = text[inverse.ravel()]
    if not with_case.all():
        ids = conversation_id[rows[~with_case]]
        out[~with_case] = np.fromiter(map("conversation:{}".format, ids), object, ids.size)
    return out


class _SeenKeys:
    """The key hashes (:func:`estimators.records._keys.key_hashes`) of every chunk read so far.

    Eight bytes a key: a repeated hash (a repeated key, or, very rarely, two keys with one
    hash) sends the file to the reference reader, which checks the keys themselves and names
    the line.
    """

    def __init__(self) -> None:
        self.hashes: dict[str, list[np.ndarray]] = {}

    def add(self, conversation_id, case_id, label, replica) -> None:
        """Keep the key hashes of a chunk: ``case_id`` and ``label`` as ``(values, codes)``
        (:func:`_coded_strings`), hashed by :func:`estimators.records._keys.coded_key_hashes`."""
        for field, (_, hashes) in coded_key_hashes(conversation_id, case_id, label, replica).items():
            self.hashes.setdefault(field, []).append(hashes)

    def check(self) -> None:
        for field, parts in self.hashes.items():
            keys = np.sort(np.concatenate(parts))
            if (keys[1:] == keys[:-1]).any():
                raise FastPathUnavailable(f"a repeated key ({field})")


def _records_of(batch, seen: _SeenKeys) -> Records:
    n = batch.num_rows
    col = batch.column
    conversation_id = _strings(col("conversation_id"))
    if col("conversation_id").null_count:
        raise FastPathUnavailable("a conversation without conversation_id")
    replica_arr = col("replica")
    replica = _ints(replica_arr, 0)
    if (replica < 0).any():
        raise FastPathUnavailable("a negative replica")
    cases, labels = _coded_strings(col("case_id")), _coded_strings(col("label"), normalise_labels)
    seen.add(conversation_id, cases, labels, replica)
    case_id, label = (values[codes] for values, codes in (cases, labels))

    scenario_id, scenario_code = _shared_strings(col("scenario_id"))
    missing = np.flatnonzero(scenario_code < 0)
    if missing.size:
        scenario_id[missing] = _default_scenarios(cases, labels, conversation_id, missing)
    language, _ = _shared_strings(col("language"))
    language[(language == None) | (language == "")] = "und"  # noqa: E711

    calls = col("tool_calls")
    has_record = calls.is_valid().to_numpy(zero_copy_only=False)
    turns_given = col("assistant_turns")
    turns = _ints(turns_given, 0)
    derived = 1 + np.maximum(np.maximum(_max_turn_per_row(calls, n), _max_turn_per_row(col("messages"), n)), 0)
    turns = np.where(turns_given.is_null().to_numpy(zero_copy_only=False), derived, turns)
    turns = np.where((turns < 1) | (turns > MAX_TURNS), -1, turns)  # SPEC section 3: invalid_record

    flat = pc.list_flatten(calls)
    call_conv = pc.list_parent_indices(calls).to_numpy().astype(np.int64)
    call_turn = _ints(flat.field("turn"), -1)
    call_turn[(call_turn < -1) | (call_turn >= COLUMN_INT_LIMIT)] = -1  # as the reference reader's columns
    names = pc.dictionary_encode(flat.field("name"))
    codes = names.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    vocabulary = np.asarray(names.dictionary.to_pylist(), dtype=object)
    named = vocabulary != ""
    if not named.all():  # "" is no name
        new_code = np.cumsum(named) - 1
        codes = np.where((codes >= 0) & named[np.maximum(codes, 0)], new_code[np.maximum(codes, 0)], -1)
        vocabulary = vocabulary[named]
    covers_field = flat.field("covers")
    covers_code = np.full(len(flat), -1, dtype=np.int64)
    distinct_covers = pd.Index([], dtype=object)
    given = np.flatnonzero(covers_field.is_valid().to_numpy(zero_copy_only=False))
    if given.size:
        covers_code[given], distinct_covers = _list_codes(covers_field.take(given))
    conversations = pd.DataFrame({
        "conversation_id": pd.Series(conversation_id, dtype=object),
        "case_id": pd.Series(case_id, dtype=object),
        "scenario_id": pd.Series(scenario_id, dtype=object),
        "replica": replica,
        "label": pd.Series(label, dtype=object),
        "language": pd.Series(language, dtype=object),
        "assistant_turns": turns.astype(np.int64),
        "has_record": has_record.astype(bool),
        "run_error": pd.Series(_run_errors(col("run_error")), dtype=object),
    })
    call_frame = pd.DataFrame({
        "conv": call_conv,
        "turn": call_turn,
        "name": pd.Categorical.from_codes(codes.astype(np.int32), categories=list(vocabulary)),
        "covers": pd.Categorical.from_codes(covers_code, categories=distinct_covers),
        "unreadable": flat.field("unreadable").fill_null(False).to_numpy(zero_copy_only=False).astype(bool),
        "failed": flat.field("failed").fill_null(False).to_numpy(zero_copy_only=False).astype(bool),
        **_approval_columns(flat),
    })
    messages = pd.DataFrame({"conv": np.array([], np.int64), "turn": np.array([], np.int64),
                             "role": pd.Series([], dtype=object), "text": pd.Series([], dtype=object)})
    return Records(conversations, call_frame, messages)


# a line that does not open a JSON object: at the start of a chunk, and after a newline
_LINE_START = re.compile(rb"[ \t\r]*[^{ \t\r\n]")
_NEXT_LINE = re.compile(rb"\n[ \t\r]*[^{ \t\r\n]")


_NOT_BLANK = re.compile(rb"[^ \t\r\n]")


def _line_chunks(path, chunk_bytes: int):
    """``(bytes read, text)`` of a file, cut after a newline every ``chunk_bytes`` or so.

    Each read starts at the start of a line: the part of a line at the end of a read is read
    again with the next (no copy of the chunk). A UTF-8 byte order mark at the start is
    skipped, as the reference reader skips it.
    """
    with open(path, "rb") as handle:
        unreported = len(BOM) if handle.read(len(BOM)) == BOM else 0
        handle.seek(unreported)
        while data := handle.read(chunk_bytes):
            cut = data.rfind(b"\n") + 1
            while not cut:  # a line longer than chunk_bytes
                more = handle.read(chunk_bytes)
                data += more
                cut = data.rfind(b"\n") + 1 if more else len(data)
            handle.seek(cut - len(data), os.SEEK_CUR)
            yield cut + unreported, memoryview(data)[:cut]
            unreported = 0


def _lines_starting_objects(text, newlines) -> int:
    """The number of lines of ``text`` whose first byte is ``{``.

    Raises :class:`FastPathUnavailable` at a line that does not start with ``{`` after blanks,
    before Arrow sees it: pyarrow's JSON reader (26.0) crashes the process on a top-level
    ``null`` line. ``newlines``: :func:`_newlines` of ``text``.
    """
    chars = np.frombuffer(text, np.uint8)
    after = newlines[newlines < chars.size - 1] + 1  # the first byte of each line after the first
    at_start = int(np.count_nonzero(chars[after] == ord("{"))) + int(chars[0] == ord("{"))
    if at_start != after.size + 1 and (_LINE_START.match(text) or _NEXT_LINE.search(text)):
        raise FastPathUnavailable("a line that is not a JSON object")
    return at_start


# a value that Arrow's parser takes and JSON (and the reference reader) does not: NaN, Inf, Infinity
_NOT_A_JSON_NUMBER = r"[:\[,][ \t\r\n]*-?(?:NaN|Inf)"


def _as_one_value(text, type):
    """The whole chunk as a one-element Arrow array of ``type`` (no copy)."""
    return pa.Array.from_buffers(type, 1, [None, pa.py_buffer(np.array([0, len(text)], np.int64)),
                                           pa.py_buffer(text)])


def _check_json_lines(text) -> None:
    """Refuse (:class:`FastPathUnavailable`) what Arrow's parser would take and JSON Lines
    (the reference reader) does not: bytes that are not UTF-8, and ``NaN`` or ``Infinity``
    (or the same text in a string, after ``:``, ``[`` or ``,``: only the fast path is lost).
    Runs in the parsing thread: pyarrow's checks do not hold the GIL."""
    try:
        _as_one_value(text, pa.large_utf8()).validate(full=True)
    except pa.ArrowInvalid:
        raise FastPathUnavailable("bytes that are not UTF-8") from None
    if _holds_nan_or_inf(text) and \
            pc.match_substring_regex(_as_one_value(text, pa.large_binary()), _NOT_A_JSON_NUMBER)[0].as_py():
        raise FastPathUnavailable("NaN or Infinity, which JSON does not allow")


def _holds_nan_or_inf(text) -> bool:
    """Whether ``text`` holds the bytes ``NaN`` or ``Inf`` anywhere: the cheap test before the
    regular expression of :func:`_check_json_lines` (RE2 scans every ``:``, ``[`` and ``,``;
    this looks at the rare capitals only, in NumPy, which releases the GIL)."""
    chars = np.frombuffer(text, np.uint8)
    for word in (b"NaN", b"Inf"):
        first = chars[:-2] == word[0]
        if not first.any():
            continue
        at = np.flatnonzero(first)
        if ((chars[at + 1] == word[1]) & (chars[at + 2] == word[2])).any():
            return True
    return False


#: The deepest nesting that the reference reader's parser (orjson) reads.
JSON_DEPTH_LIMIT = 1024


def _newlines(text) -> np.ndarray:
    """The positions of the newlines of ``text``, found once for the checks of a chunk."""
    return np.flatnonzero(np.frombuffer(text, np.uint8) == ord("\n"))


def _check_depth(text, newlines=None) -> None:
    """Refuse (:class:`FastPathUnavailable`) a chunk with a line that may nest deeper than
    :data:`JSON_DEPTH_LIMIT`: Arrow reads any depth in a field it skips, the reference reader
    stops. A line opens at most as many levels as it has ``[`` and ``{`` (within strings too), and
    a line that Arrow parses closes each level it opens: only lines longer than twice the limit
    can nest deeper. Their ``[`` and ``{`` are counted, and a line with more than the limit goes
    to the reference reader, which decides. ``newlines``: :func:`_newlines` of ``text``, if
    already found."""
    ends = np.append(_newlines(text) if newlines is None else newlines, len(text))
    starts = np.concatenate([[0], ends[:-1] + 1])
    long = np.flatnonzero(ends - starts > 2 * JSON_DEPTH_LIMIT)
    if not long.size:
        return
    data = bytes(text)
    for start, end in zip(starts[long].tolist(), ends[long].tolist()):
        if data.count(b"[", start, end) + data.count(b"{", start, end) > JSON_DEPTH_LIMIT:
            raise FastPathUnavailable(f"a line that may nest deeper than {JSON_DEPTH_LIMIT:,} levels")


def _lines_opening_objects(text, rows: int, at_start: int) -> int:
    """The number of lines of ``text`` that open an object (``{``, after blanks at most).

    ``rows`` (the values Arrow read) is the likely answer: if that many lines start with
    ``{`` itself (``at_start``, :func:`_lines_starting_objects`), no line holds a second value;
    else RE2 counts the lines exactly.
    """
    if at_start == rows:
        return rows
    return pc.count_substring_regex(_as_one_value(text, pa.large_binary()), r"(?m)^[ \t\r]*\{")[0].as_py()


def _parse(text, parse_options):
    """One chunk of JSON lines as a single Arrow record batch (None when it has no line)."""
    if not _NOT_BLANK.search(text):
        return None
    newlines = _newlines(text)
    at_start = _lines_starting_objects(text, newlines)
    _check_json_lines(text)
    _check_depth(text, newlines)
    block = 1 << 21  # Arrow parses blocks of this size in parallel; a longer line needs one block
    try:
        table = pj.read_json(pa.BufferReader(text), read_options=pj.ReadOptions(block_size=block),
                             parse_options=parse_options)
    except pa.ArrowInvalid as err:
        if "straddl" not in str(err):
            raise
        table = pj.read_json(pa.BufferReader(text), read_options=pj.ReadOptions(block_size=len(text) + 1),
                             parse_options=parse_options)
    if _lines_opening_objects(text, table.num_rows, at_start) != table.num_rows:
        raise FastPathUnavailable("a line that holds more than one JSON value")
    return table.combine_chunks().to_batches()[0] if table.num_rows else None


def _arrow_chunks(path):
    """Yield ``(bytes read, Records)`` for each chunk of about :data:`CHUNK_BYTES` of a
    well-formed canonical JSONL file (no messages).

    Arrow parses the next chunk in a background thread while the caller works on this one;
    memory holds those two chunks and 16 bytes a conversation of key hashes. Raises
    :class:`FastPathUnavailable` as soon as something needs the reference reader; a
    repeated key is found after the last chunk.
    """
    options = pj.ParseOptions(explicit_schema=_schema(), unexpected_field_behavior="ignore")
    seen = _SeenKeys()
    unreported = 0
    try:
        with ThreadPoolExecutor(max_workers=1) as parser:
            parsing = None
            for read, text in chain(_line_chunks(path, CHUNK_BYTES), [(0, None)]):
                following = parser.submit(_parse, text, options) if text is not None else None
                if parsing is not None:
                    batch = parsing.result()
                    if batch is not None:
                        yield unreported, _records_of(batch, seen)
                        unreported = 0
                unreported += read
                parsing = following
        seen.check()  # before the caller writes its output: a repeated key is an input error
    except pa.ArrowException as err:  # any error of Arrow: the reference reader decides
        raise FastPathUnavailable(str(err)) from err


def iter_records(path, *, chunk_size: int = 50_000, messages: bool = True, labels=None, progress=None):
    """Yield the conversations of a canonical JSONL file (SPEC section 6) as :class:`Records` chunks.

    Without messages or labels, Arrow reads the file (see the module docstring); otherwise,
    or when Arrow cannot take the file, the reference reader does. The records are the same
    either way; only the cutting into chunks differs.

    Parameters
    ----------
    path : path-like
    chunk_size : int
        Conversations a chunk of the reference reader (Arrow cuts about 16 MB).
    messages : bool
        Fill the messages table (mode ``text`` needs it; the fast path leaves it empty).
    labels : Labels, optional
        Labels that replace or fill those of the records.
    progress : callable, optional
        Called with the number of bytes read since its last call.

    Raises
    ------
    InputError
        Naming the file and line, as :func:`estimators.records._records.iter_jsonl` does (a repeated
        key is found by the end of the file, before the last chunk is given).
    """
    given = reported = 0
    if not messages and labels is None:
        try:
            for read, records in _arrow_chunks(path):
                if progress:
                    progress(read)
                reported += read
                given += len(records)
                yield records
            return
        except FastPathUnavailable:
            pass

    def unreported(read):  # the reference reader reads from the start: report only what is new
        nonlocal reported
        if read > reported:
            progress(read - reported)
            reported = 0
        else:
            reported -= read

    for chunk in iter_jsonl(path, chunk_size=chunk_size, labels=labels, progress=unreported if progress else None):
        if given >= len(chunk):
            given -= len(chunk)
            continue
        yield Records.from_conversations([conv for _, conv in chunk[given:]], messages=messages)
        given = 0
