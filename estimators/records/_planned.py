"""The bookkeeping of a plan (SPEC section 7, ``--plan``): which planned conversations came.

A planned conversation that never comes is reported as ``missing`` and never counted; a
conversation that the plan does not name is scored and flagged ``unplanned``.

A plan holds at most :data:`MAX_PLANNED_CONVERSATIONS` conversations: each missing one is
listed in ``summary.json`` (about 60 bytes of JSON each), so a plan of a million that none came
to writes some 60 MB. The planned conversations are kept as one byte each (came or not), and a
chunk of results is matched against the plan's rows, not against every planned conversation.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PlannedConversations", "MAX_PLANNED_CONVERSATIONS"]

#: The most conversations a plan file may plan (the sum of its ``replicas``).
MAX_PLANNED_CONVERSATIONS = 1_000_000


class PlannedConversations:
    """The planned conversations, marked as present as chunks of results come.

    Parameters
    ----------
    plan : DataFrame
        Planned scenarios: ``case_id, label, replicas`` (each ``(case_id, label)`` once), as
        :func:`estimators.records._labels.load_plan` reads them; replicas ``0 .. replicas - 1`` are planned.
    """

    def __init__(self, plan: pd.DataFrame):
        replicas = plan["replicas"].to_numpy(np.int64)
        if replicas.sum() > MAX_PLANNED_CONVERSATIONS:
            raise ValueError(f"the plan plans {replicas.sum():,} conversations, more than the "
                             f"{MAX_PLANNED_CONVERSATIONS:,} a plan may hold")
        self._rows = plan[["case_id", "label"]].astype(object).assign(_row=np.arange(len(plan)))
        self._replicas = replicas
        self._start = np.concatenate([[0], np.cumsum(replicas)]).astype(np.int64)  # of each row's replica 0
        self.present = np.zeros(int(self._start[-1]), bool)
        self.unplanned = 0

    def add(self, results: pd.DataFrame) -> np.ndarray:
        """Mark the planned conversations of a chunk; return the mask of its unplanned ones."""
        keys = results[["case_id", "label"]].astype(object)
        row = keys.merge(self._rows, on=["case_id", "label"], how="left", validate="many_to_one")["_row"]
        row = row.to_numpy(float)
        replica = pd.to_numeric(results["replica"], errors="coerce").to_numpy(float)
        found = ~np.isnan(row) & (replica == np.floor(replica))
        planned = np.zeros(len(results), bool)
        planned[found] = (replica[found] >= 0) & (replica[found] < self._replicas[row[found].astype(np.int64)])
        rows = row[planned].astype(np.int64)
        self.present[self._start[rows] + replica[planned].astype(np.int64)] = True
        unplanned = ~planned
        self.unplanned += int(unplanned.sum())
        return unplanned

    def missing(self) -> tuple:
        """Case, label and replica of each planned conversation that has not come, in plan order."""
        index = np.flatnonzero(~self.present)
        rows = np.searchsorted(self._start, index, side="right") - 1
        cases, labels = self._rows["case_id"].to_numpy(object), self._rows["label"].to_numpy(object)
        return tuple({"case_id": cases[r], "label": labels[r], "replica": int(i - self._start[r])}
                     for r, i in zip(rows.tolist(), index.tolist()))
