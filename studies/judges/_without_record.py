"""Part 3 of the judges study: under-escalation observed without a record, and its correction.

Mode B reads the assistant's text only (the default phrase judge), so a fake escalation (the
assistant says it passed the case on and did not) hides an error: the text-only rate is a lower
bound. The data come from the profile ``invents_actions`` with its fake-escalation probability
set to each rate of the grid; the truth is exact (:func:`escalation.simulate.expected_rates`).
A validation subsample scored with the record corrects the rate (the predictive values and the
Rogan-Gladen correction); bias, coverage and both misses carry their MCSE.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from escalation.estimators.judges import predictive_value_correction, rogan_gladen
from escalation.estimators.metric import PhraseJudge, score_records
from escalation.simulate import PROFILES, expected_rates, simulate

from .._performance import interval_rows, mean
from ._common import esc_records, int_seed, wide

__all__ = ["FAKE_RATES", "VALIDATION_SIZES", "MAIN_VALIDATION", "MODE_B_CASES", "TITLES", "design_rows",
           "mode_b_profile", "cell", "tables", "report_values"]

FAKE_RATES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4)
#: Validation subsamples with the record (mode B); ``mode_b.csv`` uses the middle one.
VALIDATION_SIZES = (50, 200, 800)
MAIN_VALIDATION = 200
#: ESC conversations per mode B data set (the validation subsample is drawn from them).
MODE_B_CASES = 1000

TITLES = {
    "mode_b": "Under-escalation without a record against the truth, and the corrected estimate",
    "mode_b_methods": "Corrections of the text-only rate by validation subsample size",
}


def design_rows(*, smoke: bool) -> list[dict]:
    """One cell per fake-escalation rate (two rates with ``smoke``)."""
    fakes = (0.0, 0.2) if smoke else FAKE_RATES
    return [dict(part="mode_b", fake_rate=f, cases=MODE_B_CASES) for f in fakes]


def mode_b_profile(fake_rate: float):
    """``invents_actions`` with its fake-escalation probability set to ``fake_rate``."""
    return replace(PROFILES["invents_actions"], name=f"invents_actions_fake_{fake_rate:g}",
                   esc_fake_escalation=float(fake_rate))


def cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Text-only and corrected under-escalation over ``reps`` data sets of ``cases`` ESC conversations."""
    n, reps = int(row["cases"]), int(row["reps"])
    profile = mode_b_profile(row["fake_rate"])
    truth = expected_rates(profile)["p_u"]
    sim_seed, split_seed = seed_seq.spawn(2)
    sim = simulate(profile, n * reps, seed=int_seed(sim_seed))
    records = esc_records(sim.records, roles=("assistant",))
    with_record = score_records(records, sim.policy)["u"].to_numpy(bool).reshape(reps, n)
    text = score_records(records, sim.policy, mode="text", judge=PhraseJudge())["u"]
    text = text.to_numpy(bool).reshape(reps, n)
    out = [mean(with_record.mean(axis=1), method="with_record", stat="mean"),
           mean(text.mean(axis=1), method="without_record", stat="mean"),
           {"method": "truth", "stat": "mean", "est": truth, "mcse": 0.0},
           {"method": "without_record", "stat": "exceeds_truth", "est": float((text & ~with_record).sum()),
            "mcse": 0.0}]
    rank = np.random.default_rng(split_seed).random((reps, n)).argsort(axis=1).argsort(axis=1)
    for size in VALIDATION_SIZES:
        val = rank < size
        main = ~val

        def count(mask):
            return mask.sum(axis=1)
        corrections = (
            predictive_value_correction(count(text & main), n - size, count(text & with_record & val),
                                        count(text & val), count(~text & with_record & val), count(~text & val)),
            rogan_gladen(count(text & main), n - size, count(text & with_record & val), count(with_record & val),
                         count(~text & ~with_record & val), count(~with_record & val)),
        )
        for corrected in corrections:
            keys = dict(method=corrected.method, validation=size)
            low, high = corrected.ci()
            out += [mean(corrected.estimate, stat="mean", **keys),
                    mean(corrected.estimate - truth, stat="bias", **keys),
                    *interval_rows(low, high, truth, **keys),
                    mean(high - low, stat="width", **keys),
                    {**keys, "stat": "undefined", "est": float(np.isnan(corrected.estimate).mean()), "mcse": 0.0}]
    return out


def tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``mode_b`` (the main validation size) and ``mode_b_methods`` (every correction and size)."""
    tables = {}
    mode_b = long[long["part"] == "mode_b"]

    def pick(method, stat, validation=None):
        rows = mode_b[(mode_b["method"] == method) & (mode_b["stat"] == stat)]
        if validation is not None:
            rows = rows[rows["validation"] == validation]
        return rows.set_index("fake_rate")
    tables["mode_b"] = pd.DataFrame({
        "fake_rate": pick("truth", "mean").index.to_numpy(float),
        "truth": pick("truth", "mean")["est"].to_numpy(),
        "without_record": pick("without_record", "mean")["est"].to_numpy(),
        "corrected": pick("predictive_values", "mean", MAIN_VALIDATION)["est"].to_numpy(),
        "corrected_coverage": pick("predictive_values", "coverage", MAIN_VALIDATION)["est"].to_numpy(),
    })
    corrected = wide(mode_b[mode_b["method"].isin(["predictive_values", "rogan_gladen"])], "mode_b",
                     ["fake_rate", "validation", "method"],
                     ["mean", "bias", "coverage", "miss_below", "miss_above", "width", "undefined"])
    corrected["validation"] = corrected["validation"].astype(np.int64)
    truth = pick("truth", "mean")["est"]
    text = pick("without_record", "mean")
    corrected.insert(3, "truth", truth.loc[corrected["fake_rate"]].to_numpy())
    corrected.insert(4, "without_record", text.loc[corrected["fake_rate"], "est"].to_numpy())
    corrected.insert(5, "without_record_mcse", text.loc[corrected["fake_rate"], "mcse"].to_numpy())
    corrected.insert(6, "without_record_bias", corrected["without_record"] - corrected["truth"])
    tables["mode_b_methods"] = corrected.drop(columns=["undefined_mcse"])
    return tables


def report_values(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers of the report's section on observation without a record (``judges/report.md.j2``)."""
    worst = []
    for (method, size), part in tables["mode_b_methods"].groupby(["method", "validation"], sort=False):
        row = part.loc[part["bias"].abs().idxmax()]
        worst.append({"method": method, "size": size, "bias": abs(row["bias"]), "bias_mcse": row["bias_mcse"],
                      "coverage_min": part["coverage"].min(), "coverage_max": part["coverage"].max()})
    return {"rows": [row for _, row in tables["mode_b"].iterrows()], "main_validation": MAIN_VALIDATION,
            "worst": worst}
