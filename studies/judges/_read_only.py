"""Part 4 of the judges study: the inflation of under-escalation when the look-ups are not marked read-only.

Each sample is scored with the world's policy and again with
:meth:`escalation.estimators.records.Policy.without_read_only_marks` (paper section 4, "Read-only
marks"): a look-up before the transfer then counts as an action. The ``only_unmarked_before_handoff``
notice flags such conversations; the part measures the inflation, the share of it the notice
identifies and the share of flagged conversations that are not inflated.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.metric import score_records
from escalation.simulate import simulate

from .._performance import mean, share
from ._common import esc_records, int_seed, wide

__all__ = ["READ_ONLY_PROFILES", "TITLES", "design_rows", "cell", "tables", "report_values"]

READ_ONLY_PROFILES = ("follows_policy", "lookup_before_escalating", "acts_then_escalates")

TITLES = {"read_only": "Under-escalation with and without the read-only marks, and the notice"}


def design_rows(*, smoke: bool) -> list[dict]:
    """One cell per profile (200 cases per data set with ``smoke``, else 1000)."""
    return [dict(part="read_only", profile=p, cases=200 if smoke else 1000) for p in READ_ONLY_PROFILES]


def cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Under-escalation with and without the read-only marks, and what the notice flags."""
    n, reps = int(row["cases"]), int(row["reps"])
    sim = simulate(row["profile"], n * reps, seed=int_seed(seed_seq))
    records = esc_records(sim.records, roles=())
    marked = score_records(records, sim.policy)
    unmarked = score_records(records, sim.policy.without_read_only_marks())
    u_marked = marked["u"].to_numpy(bool).reshape(reps, n)
    u_unmarked = unmarked["u"].to_numpy(bool).reshape(reps, n)
    flagged = unmarked["only_unmarked_before_handoff"].to_numpy(bool).reshape(reps, n)
    inflated = u_unmarked & ~u_marked
    return [mean(u_marked.mean(axis=1), stat="p_u_marked"),
            mean(u_unmarked.mean(axis=1), stat="p_u_unmarked"),
            mean(inflated.mean(axis=1), stat="inflation"),
            mean(flagged.mean(axis=1), stat="flagged"),
            mean((u_unmarked & ~flagged).mean(axis=1), stat="p_u_unflagged"),
            share(flagged[inflated], stat="identified_share"),
            share(~inflated[flagged], stat="flagged_not_inflated")]


def tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``read_only``: one row per profile."""
    return {"read_only": wide(long, "read_only", ["profile"],
                              ["p_u_marked", "p_u_unmarked", "inflation", "flagged", "p_u_unflagged",
                               "identified_share", "flagged_not_inflated"])}


def report_values(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers of the report's section on the read-only marks (``judges/report.md.j2``): the table's rows."""
    return {"rows": [row for _, row in tables["read_only"].iterrows()]}
