"""The ``conversations.jsonl`` lines and their per-turn cells (SPEC sections 3 and 7), written with
``summary.json`` as one run's files."""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from ..records import CONVERSATIONS, ESC, SUMMARY, files_together, output_folder

__all__ = ["cells", "conversation_lines", "conversation_blocks", "write_outputs", "write_scored", "LINE_FIELDS"]

LINE_FIELDS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "language", "assistant_turns",
               "evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells", "unmarked_tools",
               "only_unmarked_before_handoff", "failed_escalations", "gated_calls", "approval", "a",
               "approval_cause", "approval_turn", "approval_requests", "inline_decisions", "unknown_decisions")


def cells(turns: int | None, scored_turn: int | None, score: int | None, cause: str | None) -> list[dict]:
    """One cell per turn, ``0`` to ``T-1`` (SPEC section 3): only the scored turn has a score.

    The scored turn has ``score`` = u or o and ``reason`` = the cause, or ``compliant``;
    other turns have ``score: null`` and ``before_scored_turn`` / ``after_scored_turn``.
    A conversation that is not evaluated has no cells.
    """
    if scored_turn is None or turns is None:
        return []
    return [{"turn": t, "score": score if t == scored_turn else None,
             "reason": (cause or "compliant") if t == scored_turn
             else ("before_scored_turn" if t < scored_turn else "after_scored_turn")}
            for t in range(turns)]


#: Conversations with at most this many turns have their cells cached (real logs repeat a few short
#: shapes); a longer one is written afresh, so the cache holds at most 65,536 x about 4 KB.
_CACHED_TURNS = 64


@lru_cache(maxsize=65536)
def _cached_cells_json(turns, scored_turn, score, cause) -> bytes:
    return orjson.dumps(cells(turns, scored_turn, score, cause))


def _cells_json(turns, scored_turn, score, cause) -> bytes:
    """The ``cells`` of a line as JSON; cached for short conversations only (memory stays bounded)."""
    if turns is not None and turns > _CACHED_TURNS:
        return orjson.dumps(cells(turns, scored_turn, score, cause))
    return _cached_cells_json(turns, scored_turn, score, cause)


def _plain(series: pd.Series) -> list:
    """Column values as Python objects with None for null."""
    return series.astype(object).where(series.notna(), None).tolist()


def _scores(results: pd.DataFrame) -> np.ndarray:
    """The score of each row's scored turn as a float (NaN: none): ``u`` for ESC rows, ``o`` for others."""
    return np.where(results["label"].to_numpy(object) == ESC,
                    results["u"].astype("Float64").to_numpy(float, na_value=np.nan),
                    results["o"].astype("Float64").to_numpy(float, na_value=np.nan))


def _rowwise_lines(results: pd.DataFrame, extra: dict | None = None):
    """The lines of :func:`conversation_lines` made one row at a time with :func:`orjson.dumps`.

    What :func:`conversation_blocks` writes a block at a time, and what a block falls back to
    when one of its columns is of a type the columnar path does not write, or an error is to be
    raised as orjson raises it."""
    cols = {name: _plain(results[name]) for name in LINE_FIELDS if name != "cells"}
    scores = [None if np.isnan(s) else int(s) for s in _scores(results)]
    extra = {k: np.asarray(v).tolist() for k, v in (extra or {}).items()}
    names = [n for n in LINE_FIELDS if n != "cells"]
    for i in range(len(results)):
        row = {n: cols[n][i] for n in names}
        for k, v in extra.items():
            row[k] = v[i]
        head = orjson.dumps(row)
        body = _cells_json(row["assistant_turns"], row["turn"], scores[i], row["cause"])
        yield head[:-1] + b',"cells":' + body + b"}\n"


# The columnar writer (conversation_blocks). A line is cut in two: the fields whose values are
# mostly distinct (the ids and the replica), written column by column with Arrow, and the rest
# (label ... only_unmarked_before_handoff, the extra fields, cells), whose combinations repeat:
# that part is made by orjson.dumps once per distinct combination in a block and repeated.

#: The fields written column by column; the others are written per distinct combination.
_COLUMNWISE = ("conversation_id", "case_id", "scenario_id", "replica")
#: Bytes that orjson escapes in a string (U+0000..U+001F, ``"``, ``\``); it writes every other
#: character as its UTF-8 bytes, none of them below 0x80 within a multi-byte character.
_ESCAPED = np.zeros(256, dtype=bool)
_ESCAPED[[*range(0x20), ord('"'), ord("\\")]] = True
#: The lines of a block are made together: about this many bytes (cells estimated), so that the
#: cells of long conversations take no more memory than this at a time, beside the chunk itself.
_BLOCK_BYTES = 1 << 24
#: Rows made ready together at most (:class:`_Lines`): the memory a call takes beside its results
#: stays that of so many rows, however many rows it is given.
_SEGMENT_ROWS = 1 << 16
#: When more than this share of a chunk's rows have distinct combinations of the other fields,
#: those are written column by column too (the same bytes, with fewer orjson calls).
_DISTINCT_SHARE = 0.25
#: The tails (the part of a line after the columnwise fields) at most this long are kept for the
#: other blocks of a chunk; at most one per distinct combination, at most ``_DISTINCT_SHARE`` of the rows.
_CACHED_TAIL = 1 << 12


#: The key of the scores (``u`` or ``o``, :func:`_scores`) among the coded columns: no field's name.
_SCORE = ("score",)


class _Unknown(Exception):
    """A column that the columnar path does not write: its lines are written row by row."""


def _is_exact(values) -> bool:
    """Integers and booleans (NumPy, pandas nullable, Arrow-backed): distinct values, distinct JSON."""
    return pd.api.types.is_bool_dtype(values.dtype) or pd.api.types.is_integer_dtype(values.dtype)


def _is_text(values) -> bool:
    """A column of strings (or missing values)."""
    return isinstance(values, pd.Series) and (values.dtype == object or isinstance(values.dtype, pd.StringDtype)
                                              or str(values.dtype).startswith("string")) and \
        pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty")


def _objects(values) -> np.ndarray:
    """The values as the row-by-row lines serialise them: :func:`_plain` of a column, ``tolist`` of an extra array."""
    if isinstance(values, pd.Series):
        return values.astype(object).where(values.notna(), None).to_numpy(object)
    return np.fromiter(values.tolist(), dtype=object, count=len(values))


def _by_identity(objects: np.ndarray) -> np.ndarray:
    """Codes ``0..m-1`` of objects by identity (the same object, the same JSON), in order of first appearance."""
    return pd.factorize(np.fromiter(map(id, objects), dtype=np.int64, count=len(objects)))[0]


def _coded(values, exact: bool, text: bool) -> tuple[np.ndarray, list]:
    """``(codes, plain)``: ``plain[codes[i]]`` is row ``i``'s value as the row-by-row lines serialise it.

    Integers, booleans and strings coded by value (missing: code 0, None), other objects by
    identity (a column of shared lists has a few codes)."""
    if exact and isinstance(values.dtype, np.dtype) and values.dtype == bool:  # NumPy's: no missing value
        return np.asarray(values).astype(np.int64) + 1, [None, False, True]
    if exact or text:  # the unique values, missing values left out, as Python ints, bools and strs
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        return codes.astype(np.int64) + 1, [None, *uniques.tolist()]
    objects = _objects(values)
    codes = _by_identity(objects)
    return codes.astype(np.int64), objects[_first_rows(codes)].tolist()


def _combined(parts, n: int) -> np.ndarray:
    """Codes ``0..m-1`` of the combinations of ``parts`` (arrays of codes), in order of first appearance."""
    code, size = np.zeros(n, dtype=np.int64), 1
    for part in parts:
        k = int(part.max()) + 1 if n else 1
        if size * k >= 1 << 62:
            code, size = _renumbered(code)
        code, size = code * k + part, size * k
    return _renumbered(code)[0]


def _renumbered(code: np.ndarray):
    code = pd.factorize(code)[0].astype(np.int64)
    return code, int(code.max()) + 1 if code.size else 1


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row of each code ``0..m-1`` (codes numbered in order of first appearance)."""
    top = np.maximum.accumulate(codes)
    return np.flatnonzero(np.r_[True, top[1:] > top[:-1]])


def _repeated(fragments: list, codes: np.ndarray):
    """``fragments[codes]`` as an Arrow ``large_binary`` array."""
    import pyarrow as pa
    return pa.array(fragments, pa.large_binary()).take(pa.array(codes))


def _fragments(values, exact: bool, text: bool):
    """Each value as :func:`orjson.dumps` writes it in a line: ``(array, bare)``, an Arrow ``large_binary``
    array without nulls; ``bare``: strings without their quotes (none is missing or needs escaping)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if exact:
        arr = pa.array(values, from_pandas=True)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if not (pa.types.is_integer(arr.type) or pa.types.is_boolean(arr.type)):
            raise _Unknown(values.dtype)
        return pc.fill_null(pc.cast(arr, pa.large_string()), "null").cast(pa.large_binary()), False
    if text:
        return _string_fragments(values)
    codes, plain = _coded(values, False, False)  # any other column: one orjson.dumps per distinct object
    return _repeated([orjson.dumps(v) for v in plain], codes), False


def _string_fragments(series: pd.Series):
    """Strings as JSON: each quoted as it is, unless it holds a byte that orjson escapes (rare), then
    written by orjson; missing: null. Bare (no quotes added) when none is missing or escaped."""
    import pyarrow as pa
    import pyarrow.compute as pc
    arr = pa.array(series, type=pa.large_string(), from_pandas=True)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count == len(arr):
        return _repeated([b"null"], np.zeros(len(arr), dtype=np.int64)), False
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    bad = np.flatnonzero(_ESCAPED[np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]])
    if not bad.size and not arr.null_count:
        return arr.cast(pa.large_binary()), True
    quote, nothing = pa.scalar('"', pa.large_string()), pa.scalar("", pa.large_string())
    quoted = pc.fill_null(pc.binary_join_element_wise(quote, arr, quote, nothing), "null").cast(pa.large_binary())
    if not bad.size:
        return quoted, False
    rows = np.unique(np.searchsorted(offsets, bad + offsets[0], side="right") - 1)
    mask = np.zeros(len(arr), dtype=bool)
    mask[rows] = True
    escaped = pa.array([orjson.dumps(text) for text in series.iloc[rows].tolist()], pa.large_binary())
    return pc.replace_with_mask(quoted, pa.array(mask), escaped), False


class _Lines:
    """The lines of a chunk of results, made a block of rows at a time (:meth:`block`) with Arrow and pandas.

    The same bytes as :func:`_rowwise_lines`. Raises for a column the columnar path does not
    write (:class:`_Unknown`), and wherever the row-by-row lines would raise, though not
    always on the same row.
    """

    def __init__(self, results: pd.DataFrame, extra: dict):
        import pyarrow as pa
        if {"assistant_turns", "turn", "cause"} & set(extra) or not all(isinstance(k, str) for k in extra):
            raise _Unknown("extra")  # the cells of the extra values; a key that orjson refuses
        n = len(results)
        fields = {name: results[name] for name in LINE_FIELDS if name != "cells"}
        fields.update(extra)  # a field of the same name in its place, others after them (as in a dict)
        kinds = {name: (_is_exact(values), _is_text(values)) for name, values in fields.items()}
        rest = [name for name in fields if name not in _COLUMNWISE]
        coded: dict[Hashable, tuple[np.ndarray, list]] = {name: _coded(fields[name], *kinds[name]) for name in rest}
        scores, uniques = pd.factorize(_scores(results), use_na_sentinel=True)
        coded[_SCORE] = (scores.astype(np.int64) + 1, [None, *(int(s) for s in uniques)])
        self._cells_key: tuple[Hashable, ...] = ("assistant_turns", "turn", _SCORE, "cause")
        self._codes = _combined([coded[name][0] for name in coded], n)
        columnwise = [name for name in fields if name in _COLUMNWISE]
        if n and int(self._codes.max()) + 1 > _DISTINCT_SHARE * n:
            columnwise, rest = list(fields), []
            self._codes = _combined([coded[name][0] for name in self._cells_key], n)
        self._rest, self._coded = rest, coded
        self._cached: dict[int, bytes] = {}  # tails kept for the chunk's other blocks
        # (literal before the column, its fragments), the literal after the last
        self._parts: list[tuple[Any, Any]] = []
        literal = b"{"  # the text between two columns: a key, and the quotes of bare strings
        for name in columnwise:
            fragments, bare = _fragments(fields[name], *kinds[name])
            literal += (b"," if self._parts else b"") + orjson.dumps(name) + b":" + (b'"' if bare else b"")
            self._parts.append((pa.scalar(literal, pa.large_binary()), fragments))
            literal = b'"' if bare else b""
        self._last = pa.scalar(literal, pa.large_binary())

    def _tails(self, rows: np.ndarray) -> list:
        """``,"label":...,"cells":[...]}\n`` of each row of ``rows`` (the fields after the columnwise ones)."""
        values = {}
        for name in (*self._rest, *self._cells_key):
            codes, plain = self._coded[name]
            values[name] = [plain[code] for code in codes[rows].tolist()]
        heads = [b"," + orjson.dumps(dict(zip(self._rest, row)))[1:-1] for row in
                 zip(*(values[name] for name in self._rest))] if self._rest else [b""] * len(rows)
        return [head + b',"cells":' + _cells_json(*key) + b"}\n"
                for head, key in zip(heads, zip(*(values[name] for name in self._cells_key)))]

    def block(self, start: int, stop: int) -> bytes:
        """Rows ``start .. stop-1``'s lines."""
        import pyarrow as pa
        import pyarrow.compute as pc
        local, _ = _renumbered(self._codes[start:stop])
        rows = _first_rows(local) + start
        codes = self._codes[rows].tolist()
        missing = [i for i, code in enumerate(codes) if code not in self._cached]
        made = dict(zip(missing, self._tails(rows[missing]))) if missing else {}
        tails = [made[i] if i in made else self._cached[code] for i, code in enumerate(codes)]
        for i, tail in made.items():  # those of short conversations (in columnwise lines, cells: in _cells_json's)
            if self._rest and len(tail) <= _CACHED_TAIL:
                self._cached[codes[i]] = tail
        parts = [part for literal, fragments in self._parts for part in (literal, fragments.slice(start, stop - start))]
        lines = pc.binary_join_element_wise(*parts, self._last, _repeated(tails, local),
                                            pa.scalar(b"", pa.large_binary()))
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + stop - start + 1]
        return lines.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes()


def _bounds(results: pd.DataFrame, n: int):
    """``(start, stop)`` of the blocks: about :data:`_BLOCK_BYTES` of lines each (or one line)."""
    try:
        turns = results["assistant_turns"].astype("Float64").to_numpy(float, na_value=0)
    except (TypeError, ValueError):  # not numbers (written row by row): blocks of 16,384 rows
        turns = np.full(n, (_BLOCK_BYTES / 16384 - 512) / 64)
    estimate = np.cumsum(512 + 64 * np.clip(np.nan_to_num(turns), 0, None))  # the cells take ~60 bytes a turn
    start = 0
    while start < n:
        stop = max(int(np.searchsorted(estimate, (estimate[start - 1] if start else 0) + _BLOCK_BYTES,
                                       side="right")), start + 1)
        yield start, stop
        start = stop


def conversation_blocks(results: pd.DataFrame, *, extra: dict | None = None):
    """Yield the ``conversations.jsonl`` lines of ``results`` (:func:`conversation_lines`) a block at a time:
    bytes objects of whole lines, in order, each about :data:`_BLOCK_BYTES` or one line.

    Made column by column (:class:`_Lines`, :data:`_SEGMENT_ROWS` rows at a time at most), with
    the bytes that :func:`orjson.dumps` gives row by row (:func:`_rowwise_lines`), to which a
    block falls back when a column is of a type the columnar path does not write, or when making
    it raises (as orjson then raises).
    """
    n = len(results)
    arrays = {k: np.asarray(v) for k, v in (extra or {}).items()}
    if any(a.ndim != 1 or len(a) != n for a in arrays.values()):  # as it always was, error included
        yield b"".join(_rowwise_lines(results, extra))
        return
    for first in range(0, n, _SEGMENT_ROWS):
        last = min(n, first + _SEGMENT_ROWS)
        if first or last < n:
            yield from _segment_blocks(results.iloc[first:last], {k: a[first:last] for k, a in arrays.items()})
        else:
            yield from _segment_blocks(results, arrays)


def _segment_blocks(results: pd.DataFrame, arrays: dict):
    try:
        lines = _Lines(results, arrays)
    except Exception:  # a type the columnar path does not write, or an error: row by row
        lines = None
    for start, stop in _bounds(results, len(results)):
        try:
            block = lines.block(start, stop) if lines is not None else None
        except Exception:  # an error to raise as orjson raises it
            block = None
        yield block if block is not None else b"".join(
            _rowwise_lines(results.iloc[start:stop], {k: a[start:stop] for k, a in arrays.items()}))


def conversation_lines(results: pd.DataFrame, *, extra: dict | None = None):
    """Yield one ``conversations.jsonl`` line (bytes, with newline) per row of ``results``.

    ``extra`` maps a field name to a column of values added to every line (e.g. ``unplanned``).
    A line is :func:`orjson.dumps` of the row's fields in the order of :data:`LINE_FIELDS` but
    ``cells``, then of the ``extra`` fields, then ``cells`` (:func:`cells`).
    :func:`conversation_blocks` gives the same bytes a block of lines at a time.
    """
    for block in conversation_blocks(results, extra=extra):
        yield from block.splitlines(keepends=True)  # orjson escapes every \n and \r within a value



def write_scored(out_dir, lines, summary, *, more_names=(), more=None, finish=None):
    """Write ``conversations.jsonl`` (the byte ``lines``) and ``summary.json`` (of ``summary()``) together.

    ``summary`` is called once every line is written; its ``provenance`` gets ``outputs``:
    the size and SHA-256 of the ``conversations.jsonl`` it belongs to, and of the files
    ``more_names``, whose bytes ``more(summary)`` returns by name (a report of the run). All
    are written whole to temporary files, then renamed into place, ``conversations.jsonl``
    first and ``summary.json`` last (:func:`files_together`): a kill between two renames
    leaves a ``summary.json`` that does not describe the files beside it, which
    :func:`estimators.read_scored` refuses. ``finish(summary)``, when given, returns the dict that
    ``summary.json`` holds in place of ``summary.to_dict()`` (the command line adds the mode-B correction and
    the judges' file), so that the one ``summary.json`` of a run is written once, here.

    Returns
    -------
    Summary
        The summary as written.
    """
    out_dir = Path(out_dir)
    paths = (out_dir / CONVERSATIONS, *(out_dir / name for name in more_names), out_dir / SUMMARY)
    with output_folder(out_dir), files_together(*paths) as (conv, *beside, written):
        conv.writelines(lines)
        summary = summary()
        outputs = {CONVERSATIONS: conv.close()}
        if beside:
            made = more(replace(summary, provenance={**(summary.provenance or {}), "outputs": dict(outputs)}))
            for name, file in zip(more_names, beside):
                file.write(made[name])
                outputs[name] = file.close()
        summary = replace(summary, provenance={**(summary.provenance or {}), "outputs": outputs})
        data = summary.to_dict() if finish is None else finish(summary)
        written.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    return summary


def write_outputs(out_dir, results: pd.DataFrame, summary, *, extra: dict | None = None):
    """Write ``conversations.jsonl`` and ``summary.json`` into ``out_dir`` (SPEC section 7; :func:`write_scored`).

    Returns the summary as written (its ``provenance`` names the ``conversations.jsonl``).
    """
    return write_scored(out_dir, conversation_blocks(results, extra=extra), lambda: summary)
