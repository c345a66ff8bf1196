"""The warnings study (``escalation study warnings``): a smoke run end to end (its files and columns, the same
tables for one and two workers, the command), the cell's counts against a recount of its data sets, the
calibration on hand-made counts, and, at a fixed seed, a failing cell where the warned data sets cover below
0.93 and the silent ones hold (tolerances from the MCSE)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from escalation.estimators.stats import (
    MAX_THRESHOLD,
    RISK_THRESHOLDS,
    SUMS_METHODS,
    clustered_interval,
    group_coverage,
    interval_at_risk,
    minority_spread,
)
from escalation.studies import WARNINGS_SEED, cell_seed, run_warnings_study
from escalation.studies.warnings._warnings import (  # the coverage study's design and model, as the study uses them
    CALIBRATION_SEED,
    FLOOR,
    beta_binomial,
    build_design,
    calibrate,
    cell_sizes,
    cell_table,
    run_cell,
)

from .._helpers import run_cli_output

SEED = 7
#: The tables of a run, compared byte for byte.
TABLES = ("design", "spreads", "cells", "groups", "advice", "calibration")
GROUP_COLUMNS = ("method", "replicas", "scenarios", "cells", "threshold", "cells_failing", "warned_share",
                 "coverage_warned", "coverage_silent", "lowest_cell_silent", "misses_warned_share",
                 "cells_failing_silent", "cells_failing_covered_or_warned", "every_silent_cell_holds",
                 "failing_coverage_warned", "old_failing_coverage_warned", "held_in_group", "cells_failing_unnoted")


def _row(p: float, rho: float, k: int, m: int, nsim: int) -> dict:
    row = build_design(nsim=nsim).iloc[0].to_dict()
    return row | {"estimand": "p_u", "p": p, "rho": rho, "rho_outcome": rho, "scenarios": k, "replicas": m,
                  "size_cv": 0.0, "nsim": nsim}


def test_smoke_run_writes_its_tables_and_is_the_same_for_two_workers(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    tables = run_warnings_study(one, smoke=True, n_jobs=1, seed=SEED, progress=False)
    run_warnings_study(two, smoke=True, n_jobs=2, seed=SEED, progress=False)
    for name in TABLES:
        assert (one / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name
    for name in ("groups.md", "advice.md", "calibration.md", "report.md", "report.html", "run.json"):
        assert (one / name).is_file(), name
    assert set(GROUP_COLUMNS) <= set(tables["groups"].columns)
    assert set(tables["groups"]["method"]) == set(SUMS_METHODS)
    assert len(tables["cells"]) == 40 * len(SUMS_METHODS)  # the coverage study's smoke grid
    groups = tables["groups"]
    # the package's coverage table decides which groups score notes whole; their silent cells are not "unnoted"
    for _, g in groups.iterrows():
        fewest = {"K < 10": 1, "10-29": 10, "30-99": 30, "K >= 100": 100}[g["scenarios"]]
        assert g["held_in_group"] == group_coverage(fewest, g["replicas"] == "m > 1")[g["method"]].holds
        assert g["cells_failing_unnoted"] == (g["cells_failing_silent"] if g["held_in_group"] else 0)
    assert "Warnings study" in (one / "report.md").read_text()


def test_the_command_runs_the_smoke_study(tmp_path, monkeypatch, capsys):
    code, out, _ = run_cli_output(monkeypatch, capsys, "study", "warnings", "--smoke", "--out", str(tmp_path / "w"),
                                  "--seed", str(SEED))
    assert code == 0 and "warnings study: 40 cells" in out
    assert WARNINGS_SEED != CALIBRATION_SEED  # the default run validates what another seed calibrated


def test_a_cell_counts_what_its_data_sets_show():
    """The cell's counts by spread, recounted from the same draws by the public functions."""
    row = _row(0.05, 0.2, 30, 3, 300)
    rows = {r["method"]: r for r in run_cell(row, cell_seed(SEED, 0))}
    rng = np.random.default_rng(cell_seed(SEED, 0))
    sizes = np.tile(cell_sizes(row), (300, 1))
    totals = beta_binomial(rng, sizes, row)
    spread = np.minimum(minority_spread(totals, sizes), MAX_THRESHOLD)
    for method in SUMS_METHODS:
        low, high = clustered_interval(totals, sizes, method)
        hit = (low <= 0.05) & (0.05 <= high)
        assert [rows[method][f"n_{s}"] for s in range(MAX_THRESHOLD + 1)] == np.bincount(
            spread, minlength=MAX_THRESHOLD + 1).tolist()
        assert sum(rows[method][f"covered_{s}"] for s in range(MAX_THRESHOLD + 1)) == int(hit.sum())
        # the study's warned data sets are the trigger's
        cells = cell_table(pd.DataFrame([{"cell": 0, **row, **rows[method]}]))
        assert cells["warned_share"].iloc[0] == interval_at_risk(totals, sizes, method).mean()


def test_calibration_takes_the_least_threshold_that_holds_and_warns_a_group_whole():
    """Hand-made counts of one cell of 1000 data sets: 100 at spread 1 all missing, the rest covered. Warning
    spread < 2 leaves none missed (threshold 2); 300 missing at spread 0-2 need threshold 3, which warns 90%
    of the data sets: the group is warned whole."""
    def long(misses_at: dict[int, int], n_at: dict[int, int]) -> pd.DataFrame:
        row = {"cell": 0, "estimand": "p_u", "p": 0.05, "rho": 0.2, "scenarios": 30, "replicas": 3, "size_cv": 0.0,
               "method": "wilson-kish", "replicas_group": True, "old_warned": 0, "old_warned_covered": 0}
        for s in range(MAX_THRESHOLD + 1):
            row[f"n_{s}"] = n_at.get(s, 0)
            row[f"covered_{s}"] = n_at.get(s, 0) - misses_at.get(s, 0)
        return pd.DataFrame([row])
    first = calibrate(long({1: 100}, {0: 50, 1: 100, 5: 850})).iloc[0]
    assert (first["fewer_than"], first["least_holding"]) == (2.0, 2)
    assert math.isclose(first["warned_share"], 0.15) and math.isclose(first["coverage_warned"], 50 / 150)
    whole = calibrate(long({0: 100, 1: 100, 2: 100}, {0: 300, 1: 300, 2: 300, 9: 100})).iloc[0]
    assert whole["least_holding"] == 3 and whole["fewer_than"] == math.inf and whole["warned_share"] == 1.0


def test_in_a_failing_cell_the_warned_miss_and_the_silent_hold():
    """wilson-kish, p_u 0.02, rho 0.5, 100 scenarios of 8 (coverage 0.89 in the validation run): at a fixed
    seed, the warned data sets cover below 0.93 by more than 2 MCSE and the silent ones at least 0.93 less
    2 MCSE (each MCSE ``sqrt(c (1 - c) / n)`` of its own share)."""
    assert RISK_THRESHOLDS["wilson-kish"][(True, "K >= 100")].fewer_than == 5  # the rule this cell tests
    nsim = 3000
    row = _row(0.02, 0.5, 100, 8, nsim)
    rows = run_cell(row, cell_seed(SEED, 0))
    cell = cell_table(pd.DataFrame([{"cell": 0, **row, **r} for r in rows]))
    c = cell[cell["method"] == "wilson-kish"].iloc[0]
    warned = c["warned_share"] * nsim
    warned_mcse = math.sqrt(c["coverage_warned"] * (1 - c["coverage_warned"]) / warned)
    assert c["coverage"] < FLOOR  # the cell fails without the warning
    assert warned >= 300 and c["silent"] >= 300  # both parts are measured, neither empty
    assert c["coverage_warned"] + 2 * warned_mcse < FLOOR
    assert c["coverage_silent"] >= FLOOR - 2 * c["coverage_silent_mcse"]
    assert c["covered_or_warned"] > c["coverage"]
