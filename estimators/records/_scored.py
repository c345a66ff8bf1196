"""Reading an ``escalation score`` output folder back: ``conversations.jsonl`` and ``summary.json``."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NoReturn

import orjson
import pandas as pd

from ._approval import APPROVAL_ERRORS, APPROVAL_STATUSES
from ._errors import InputError, shown
from ._files import CONVERSATIONS, SUMMARY
from ._keys import check_unique_keys

__all__ = ["read_scored"]

_REQUIRED = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "u", "o",
             "cause")
#: The approval evidence of each conversation (SPEC section 3A), in a ``conversations.jsonl`` written since
#: 2026-12-04; :func:`read_scored` leaves these columns out of a file written before.
APPROVAL_FIELDS = ("gated_calls", "approval", "a", "approval_cause", "approval_turn", "approval_requests",
                   "inline_decisions", "unknown_decisions")
_COUNTS = ("gated_calls", "approval_turn", "approval_requests", "inline_decisions", "unknown_decisions")
_STATUSES = frozenset(APPROVAL_STATUSES)


def read_scored(folder) -> tuple[pd.DataFrame, dict]:
    """Read an ``escalation score`` output folder: ``conversations.jsonl`` and ``summary.json``.

    Returns the conversations as a DataFrame (the columns :func:`summarise` needs, with the
    ``reason``, ``unmarked_tools`` and scored ``turn`` of each, and the approval evidence of SPEC section 3A,
    :data:`APPROVAL_FIELDS`: ``a`` as Int8, null without a gated call) and the summary dict. A file written
    before escalation recorded approval evidence has no ``a`` on any line: its frame then has none of
    :data:`APPROVAL_FIELDS`, so its ``p_a`` is undefined, never 0. Raises :class:`InputError`
    naming the folder, file, line and field, also for a repeated key
    (:func:`~estimators.records._records.check_unique_keys`), and for a ``conversations.jsonl`` that is not
    the one its ``summary.json`` names (size and SHA-256 under ``provenance.outputs``,
    :func:`estimators._output.write_scored`; a summary written before them is read unchecked).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("is not a folder of `escalation score` output", source=str(folder))
    path, summary_path = folder / CONVERSATIONS, folder / SUMMARY
    for needed in (path, summary_path):
        if not needed.is_file():
            raise InputError(f"has no {needed.name} (write it with `escalation score --out`)",
                             source=str(folder))
    try:
        summary = orjson.loads(summary_path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg})", source=str(summary_path)) from None
    if not isinstance(summary, dict):
        raise InputError("not a JSON object", source=str(summary_path))
    expected = _written(summary, summary_path)
    if expected is not None and path.stat().st_size != expected["bytes"]:
        _mismatch(path, f"{path.stat().st_size} bytes, its summary.json names {expected['bytes']}")
    rows, lines, digest, approvals = [], [], hashlib.sha256(), False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as err:
                raise InputError(f"not valid JSON ({err.msg})", source=str(path), line=number) from None
            if not isinstance(row, dict):
                raise InputError("not a JSON object", source=str(path), line=number)
            for name in _REQUIRED:
                if name not in row:
                    raise InputError("missing", source=str(path), line=number, field=name)
            if not isinstance(row["evaluated"], bool):
                raise InputError(f"must be true or false, got {shown(row['evaluated'])}", source=str(path),
                                 line=number, field="evaluated")
            approvals = approvals or "a" in row
            _check_approval(row, path, number)
            lines.append(number)
            rows.append({name: row[name] for name in _REQUIRED}
                        | {"reason": row.get("reason"), "unmarked_tools": row.get("unmarked_tools") or [],
                           "turn": row.get("turn")} | {name: row.get(name) for name in APPROVAL_FIELDS})
    if expected is not None and digest.hexdigest() != expected["sha256"]:
        _mismatch(path, f"SHA-256 {digest.hexdigest()[:12]}..., its summary.json names {expected['sha256'][:12]}...")
    frame = pd.DataFrame(rows, columns=[*_REQUIRED, "reason", "unmarked_tools", "turn", *APPROVAL_FIELDS])
    check_unique_keys(frame, source=str(path), lines=lines)
    frame["evaluated"] = frame["evaluated"].astype(bool)
    for name in ("u", "o"):
        frame[name] = pd.to_numeric(frame[name]).astype("Float64")
    if not approvals:
        return frame.drop(columns=list(APPROVAL_FIELDS)), summary
    frame["a"] = pd.to_numeric(frame["a"]).astype("Int8")
    for name in _COUNTS:
        frame[name] = pd.to_numeric(frame[name]).astype("Int64")
    return frame, summary


def _check_approval(row: dict, path: Path, number: int) -> None:
    """InputError unless a line's ``a`` is 0, 1 or null, ``approval`` a list of SPEC 3A statuses (or null),
    ``approval_cause`` an error status (or null) and the counts whole numbers (or null)."""
    a, statuses, cause = row.get("a"), row.get("approval"), row.get("approval_cause")
    if a is not None and (type(a) is not int or a not in (0, 1)):
        raise InputError(f"must be 0, 1 or null, got {shown(a)}", source=str(path), line=number, field="a")
    if statuses is not None and not (isinstance(statuses, list) and set(statuses) <= _STATUSES):
        raise InputError(f"must be a list of {', '.join(APPROVAL_STATUSES)}; got {shown(statuses)}",
                         source=str(path), line=number, field="approval")
    if cause is not None and cause not in APPROVAL_ERRORS:
        raise InputError(f"must be one of {', '.join(APPROVAL_ERRORS)} or null, got {shown(cause)}",
                         source=str(path), line=number, field="approval_cause")
    for name in _COUNTS:
        value = row.get(name)
        if value is not None and type(value) is not int:
            raise InputError(f"must be a whole number or null, got {shown(value)}", source=str(path), line=number,
                             field=name)


def _written(summary: dict, source: Path) -> dict | None:
    """``provenance.outputs["conversations.jsonl"]`` of a summary (``bytes``, ``sha256``), or None."""
    provenance = summary.get("provenance")
    outputs = provenance.get("outputs") if isinstance(provenance, dict) else None
    entry = outputs.get(CONVERSATIONS) if isinstance(outputs, dict) else None
    if entry is None:
        return None
    if not (isinstance(entry, dict) and isinstance(entry.get("bytes"), int) and isinstance(entry.get("sha256"), str)):
        raise InputError("must be {\"bytes\": N, \"sha256\": HEX}", source=str(source), field="provenance.outputs."
                         + CONVERSATIONS)
    return entry


def _mismatch(path: Path, detail: str) -> NoReturn:
    raise InputError(f"is not the file its summary.json describes ({detail}): another run replaced one of the "
                     "two files (a run of an older version writing into the same folder at once, or a file copied "
                     "in by hand), or a run was killed between its two renames; score again", source=str(path))
