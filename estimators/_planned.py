"""The bookkeeping of a plan (SPEC section 7, ``--plan``): which planned conversations came.

A planned conversation that never comes is reported as ``missing`` and never counted; a
conversation that the plan does not name is scored and flagged ``unplanned``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PlannedConversations", "planned_keys"]

_KEY = ["case_id", "label", "replica"]


def planned_keys(plan: pd.DataFrame) -> pd.DataFrame:
    """Expand a plan (``case_id, label, replicas``) into one row per planned conversation."""
    reps = plan["replicas"].to_numpy(np.int64)
    out = plan.loc[plan.index.repeat(reps), ["case_id", "label"]].reset_index(drop=True)
    out["replica"] = np.concatenate([np.arange(r) for r in reps]) if len(reps) else np.array([], np.int64)
    return out


class PlannedConversations:
    """The planned conversations, marked as present as chunks of results come.

    Parameters
    ----------
    plan : DataFrame
        Planned scenarios: ``case_id, label, replicas``.
    """

    def __init__(self, plan: pd.DataFrame):
        self.keys = planned_keys(plan)
        self.present = np.zeros(len(self.keys), bool)
        self.unplanned = 0

    def add(self, results: pd.DataFrame) -> np.ndarray:
        """Mark the planned conversations of a chunk; return the mask of its unplanned ones."""
        keys = results[_KEY].astype({"case_id": object, "label": object})
        merged = self.keys.merge(keys.assign(_present=True), on=_KEY, how="left")
        self.present |= merged["_present"].notna().to_numpy(bool)
        unplanned = keys.merge(self.keys.assign(_planned=True), on=_KEY, how="left")["_planned"].isna().to_numpy(bool)
        self.unplanned += int(unplanned.sum())
        return unplanned

    def missing(self) -> tuple:
        """Case, label and replica of each planned conversation that has not come."""
        return tuple({"case_id": r.case_id, "label": r.label, "replica": int(r.replica)}
                     for r in self.keys[~self.present].itertuples(index=False))
