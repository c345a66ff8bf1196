"""Reading an ``escalation score`` output folder back: ``conversations.jsonl`` and ``summary.json``."""
from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd

from ._errors import InputError
from ._keys import check_unique_keys

__all__ = ["read_scored"]

_REQUIRED = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "u", "o",
             "cause")


def read_scored(folder) -> tuple[pd.DataFrame, dict]:
    """Read an ``escalation score`` output folder: ``conversations.jsonl`` and ``summary.json``.

    Returns the conversations as a DataFrame (the columns :func:`summarise` needs) and the
    summary dict. Raises :class:`InputError` naming the folder, file, line and field, also
    for a repeated key (:func:`~estimators._records.check_unique_keys`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("is not a folder of `escalation score` output", source=str(folder))
    path, summary_path = folder / "conversations.jsonl", folder / "summary.json"
    for needed in (path, summary_path):
        if not needed.is_file():
            raise InputError(f"has no {needed.name} (write it with `escalation score --out`)",
                             source=str(folder))
    try:
        summary = orjson.loads(summary_path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg})", source=str(summary_path)) from None
    rows, lines = [], []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
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
                raise InputError(f"must be true or false, got {row['evaluated']!r}", source=str(path),
                                 line=number, field="evaluated")
            lines.append(number)
            rows.append({name: row[name] for name in _REQUIRED}
                        | {"reason": row.get("reason"), "unmarked_tools": row.get("unmarked_tools") or []})
    frame = pd.DataFrame(rows, columns=[*_REQUIRED, "reason", "unmarked_tools"])
    check_unique_keys(frame, source=str(path), lines=lines)
    frame["evaluated"] = frame["evaluated"].astype(bool)
    for name in ("u", "o"):
        frame[name] = pd.to_numeric(frame[name]).astype("Float64")
    return frame, summary
