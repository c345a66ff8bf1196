"""Per-turn cells and the ``conversations.jsonl`` / ``summary.json`` files (SPEC sections 3, 7)."""
from __future__ import annotations

import contextlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from ._vocabulary import ESC

__all__ = ["cells", "conversation_lines", "write_atomic", "write_outputs", "LINE_FIELDS", "temporary_file",
           "output_folder"]

LINE_FIELDS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "language", "assistant_turns",
               "evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells", "unmarked_tools",
               "only_unmarked_before_handoff")


def cells(turns: int | None, scored_turn: int | None, score: int | None, cause: str | None) -> list[dict]:
    """One cell per turn ``0 .. T-1`` (SPEC section 3): only the scored turn has a score.

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


@lru_cache(maxsize=65536)
def _cells_json(turns, scored_turn, score, cause) -> bytes:
    return orjson.dumps(cells(turns, scored_turn, score, cause))


def _plain(series: pd.Series) -> list:
    """Column values as Python objects with None for null."""
    return series.astype(object).where(series.notna(), None).tolist()


def conversation_lines(results: pd.DataFrame, *, extra: dict | None = None):
    """Yield one ``conversations.jsonl`` line (bytes, with newline) per row of ``results``.

    ``extra`` maps a field name to a column of values added to every line (e.g. ``unplanned``).
    """
    cols = {name: _plain(results[name]) for name in LINE_FIELDS if name != "cells"}
    score = np.where(results["label"].to_numpy(object) == ESC, results["u"].astype("Float64").to_numpy(float, na_value=np.nan),
                     results["o"].astype("Float64").to_numpy(float, na_value=np.nan))
    scores = [None if np.isnan(s) else int(s) for s in score]
    extra = {k: np.asarray(v).tolist() for k, v in (extra or {}).items()}
    names = [n for n in LINE_FIELDS if n != "cells"]
    for i in range(len(results)):
        row = {n: cols[n][i] for n in names}
        for k, v in extra.items():
            row[k] = v[i]
        head = orjson.dumps(row)
        body = _cells_json(row["assistant_turns"], row["turn"], scores[i], row["cause"])
        yield head[:-1] + b',"cells":' + body + b"}\n"


def _file_mode() -> int:
    """The mode a new file gets from ``open()`` under the current umask (0644 under 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def temporary_file(path) -> tuple[int, Path]:
    """A new hidden temporary file beside ``path``, to be renamed onto it: ``(fd, temporary path)``.

    :func:`tempfile.mkstemp` makes the file ``-rw-------``; it gets the mode that ``open()``
    would give it under the umask, so a renamed output is as readable as any other file.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, _file_mode())
    return fd, Path(tmp)


def write_atomic(path, data: bytes | str | None = None, *, chunks=None) -> None:
    """Write ``data`` (or an iterable of byte ``chunks``) to a temporary file, then rename it.

    A killed run never leaves a half-written file under the final name; the file's mode
    respects the umask (:func:`temporary_file`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temporary_file(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            if data is not None:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            for chunk in chunks or ():
                handle.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def output_folder(path):
    """Create the folder ``path`` (and its missing parents) for a run; on failure, remove what it created.

    A run that stops with an error (or is interrupted) leaves no empty folder behind: each
    folder this made is removed again if it is still empty. A folder that existed before,
    or holds files (a study's finished cells, kept for ``--resume``), stays.

    Yields
    ------
    pathlib.Path
    """
    path = Path(path)
    made = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        made.append(folder)
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    except BaseException:
        for folder in made:  # innermost first
            try:
                folder.rmdir()
            except OSError:  # not empty, or gone: keep what holds something
                break
        raise


def write_outputs(out_dir, results: pd.DataFrame, summary, *, extra: dict | None = None) -> None:
    """Write ``conversations.jsonl`` and ``summary.json`` into ``out_dir`` (SPEC section 7)."""
    out_dir = Path(out_dir)
    write_atomic(out_dir / "conversations.jsonl", chunks=conversation_lines(results, extra=extra))
    write_atomic(out_dir / "summary.json", orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
