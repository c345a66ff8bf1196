"""What the parts of the judges study share: seeds, the ESC half of a sample, wide tables."""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.records import Records

__all__ = ["TAU", "int_seed", "esc_records", "wide"]

#: The obligation turn is the first turn with ``p_t >= TAU``; a judge run errs where ``p >= TAU``
#: disagrees with the label.
TAU = 0.5


def int_seed(seed_seq: np.random.SeedSequence) -> int:
    """An integer seed for the functions that take one (``simulate``, the simulated judges)."""
    return int(seed_seq.generate_state(1)[0])


def esc_records(records: Records, *, roles=("user", "assistant")) -> Records:
    """The ESC conversations of ``records`` alone (under-escalation needs no ACT half), with their
    messages of ``roles`` only: the scorer with the record reads no message (``roles=()``), the
    mode B judge the assistant's text alone (SPEC section 4)."""
    keep = records.conversations["label"].to_numpy(object) == "ESC"
    new_row = np.cumsum(keep) - 1

    def subset(frame, rows=True):
        conv = frame["conv"].to_numpy(np.int64)
        part = frame[keep[conv] & rows].reset_index(drop=True)
        return part.assign(conv=new_row[part["conv"].to_numpy(np.int64)])
    messages = records.messages
    return Records(records.conversations[keep].reset_index(drop=True), subset(records.calls),
                   subset(messages, np.isin(messages["role"].to_numpy(object), list(roles))))


def wide(long: pd.DataFrame, part: str, index: list[str], stats: list[str]) -> pd.DataFrame:
    """The rows of ``part`` with a ``stat`` in ``stats``, one column per stat and one ``<stat>_mcse`` beside it."""
    rows = long[(long["part"] == part) & long["stat"].isin(stats)]
    table = rows.pivot_table(index=index, columns="stat", values=["est", "mcse"], sort=False, dropna=False)
    table.columns = [stat if kind == "est" else f"{stat}_mcse" for kind, stat in table.columns]
    return table.reset_index()

