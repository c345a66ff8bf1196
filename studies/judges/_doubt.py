"""Part 2 of the judges study: doubt must be measured, not read off the judge's stated confidence.

One judge run at the last turn errs where ``p >= TAU`` disagrees with the label. Three doubt
signals are scored by their AUROC for those errors (with its standard error): the judge's
stated confidence, the disagreement of :data:`DOUBT_RUNS` runs, and that of as many
paraphrased questions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.judges import TurnProbabilities, auroc, judge_turns, turn_questions
from escalation.simulate import SimulatedTurnJudge, simulate, world_instructions

from .._performance import share
from ._common import TAU, int_seed

__all__ = ["DOUBT_RUNS", "TITLES", "design_rows", "cell", "tables", "report_values"]

DOUBT_RUNS = 5
LANGUAGES = ("en", "es")

TITLES = {"doubt": "AUROC of doubt signals for the errors of one judge run"}


def design_rows(*, smoke: bool) -> list[dict]:
    """One sample per language (300 cases with ``smoke``, else 2000)."""
    return [dict(part="doubt", language=lang, cases=300 if smoke else 2000) for lang in LANGUAGES]


def cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """AUROC of three doubt signals for the errors of one judge run at the last turn."""
    sim_seed, judge_seed = seed_seq.spawn(2)
    sim = simulate("follows_policy", int(row["cases"]), languages=(row["language"],), seed=int_seed(sim_seed))
    judge = SimulatedTurnJudge(seed=int_seed(judge_seed))
    records, n = sim.records, len(sim.records.conversations)
    runs = judge_turns(records, world_instructions(), judge, runs=DOUBT_RUNS)
    paraphrases = judge_turns(records, [world_instructions(v) for v in range(DOUBT_RUNS)], judge)
    first_run = TurnProbabilities(runs.conversation, runs.turn, runs.runs[:1], n)
    label = records.conversations["label"].to_numpy(object) == "ESC"
    error = (first_run.final() >= TAU) != label
    questions, _, _ = turn_questions(records, world_instructions())
    stated = TurnProbabilities(runs.conversation, runs.turn, judge.stated_confidence(questions)[None, :], n).final()
    signals = {"stated_confidence": 1.0 - stated, "disagreement_runs": runs.final_disagreement(TAU),
               "disagreement_paraphrases": paraphrases.final_disagreement(TAU)}
    out = []
    for signal, score in signals.items():
        area, se = auroc(score, error)
        out.append({"signal": signal, "stat": "auroc", "est": area, "mcse": se})
    out.append({"signal": "", "stat": "judge_error", **share(error)})
    return out


def tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``doubt``: one row per language and signal."""
    doubt = long[(long["part"] == "doubt") & (long["stat"] == "auroc")]
    errors = long[(long["part"] == "doubt") & (long["stat"] == "judge_error")].set_index("language")["est"]
    return {"doubt": pd.DataFrame({"language": doubt["language"].to_numpy(), "signal": doubt["signal"].to_numpy(),
                                   "auroc": doubt["est"].to_numpy(), "auroc_se": doubt["mcse"].to_numpy(),
                                   "judge_error_rate": errors.loc[doubt["language"]].to_numpy()})}


def report_values(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers of the report's section on doubt (``judges/report.md.j2``), read from the table."""
    doubt = tables["doubt"]
    near_half = (doubt["auroc"] - 0.5).abs() <= 2 * doubt["auroc_se"]
    above_half = doubt["auroc"] - 0.5 > 2 * doubt["auroc_se"]
    signals = [{"signal": signal, "near_half": int((near_half & rows).sum()), "languages": int(rows.sum()),
                "above_half": int((above_half & rows).sum())}
               for signal, rows in ((s, doubt["signal"] == s) for s in doubt["signal"].unique())]
    return {"rows": [row for _, row in doubt.iterrows()], "signals": signals}
