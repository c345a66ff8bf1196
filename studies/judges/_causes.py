"""Part 5 of the judges study: the simulated cause judge against the world's causes.

For each error of a sample the cause judge (:class:`escalation.simulate.SimulatedCauseJudge`)
names a cause, with the instructions the assistant received and with their rules withheld; the
part scores its accuracy against the world's cause, its consistency with the deterministic
cause, the share of verified evidence and how often it says ``threshold_misapplied``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.judges import judge_causes
from escalation.estimators.metric import score_records
from escalation.simulate import SimulatedCauseJudge, simulate, true_causes, world_instructions

from .._performance import share
from ._common import int_seed, wide

__all__ = ["CAUSE_PROFILES", "TITLES", "design_rows", "cell", "tables", "report_values"]

CAUSE_PROFILES = ("pressure_susceptible", "threshold_confused", "invents_actions", "never_escalates",
                  "acts_then_escalates")

TITLES = {"causes": "The simulated cause judge against the world's causes"}


def design_rows(*, smoke: bool) -> list[dict]:
    """One sample per profile (100 cases with ``smoke``, else 500)."""
    return [dict(part="causes", profile=p, cases=100 if smoke else 500) for p in CAUSE_PROFILES]


def cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """The simulated cause judge against the world's causes, with and without the instructions' rules."""
    sim_seed, judge_seed = seed_seq.spawn(2)
    sim = simulate(row["profile"], int(row["cases"]), seed=int_seed(sim_seed))
    results = score_records(sim.records, sim.policy)
    truth = pd.Series(true_causes(sim), index=sim.truth["conversation_id"].to_numpy(object))
    out = []
    for given, instructions in (("given", world_instructions()), ("rules_withheld", world_instructions(rules=False))):
        found = judge_causes(sim.records, results, instructions, SimulatedCauseJudge(seed=int_seed(judge_seed)))
        right = found["judge_cause"].to_numpy(object) == truth.loc[found["conversation_id"]].to_numpy(object)
        out += [{"instructions": given, "stat": "errors", "est": float(len(found)), "mcse": 0.0},
                share(right, instructions=given, stat="accuracy"),
                share(found["consistent"].to_numpy(bool, na_value=False), instructions=given, stat="consistent"),
                share(found["evidence_verified"].to_numpy(bool, na_value=False), instructions=given,
                           stat="evidence_verified"),
                share(found["judge_cause"].to_numpy(object) == "threshold_misapplied", instructions=given,
                           stat="threshold_misapplied")]
    return out


def tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``causes``: one row per profile and instructions."""
    causes = wide(long, "causes", ["profile", "instructions"],
                  ["errors", "accuracy", "consistent", "evidence_verified", "threshold_misapplied"]
                  ).drop(columns=["errors_mcse"])
    causes["errors"] = causes["errors"].astype(np.int64)
    return {"causes": causes}


def report_values(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers of the report's section on the cause judge (``judges/report.md.j2``): the table's rows."""
    return {"rows": [row for _, row in tables["causes"].iterrows()]}
