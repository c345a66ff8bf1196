"""Warnings study: does the at-risk trigger of the intervals point the right way (issue 36, point 4; ADEMP)?

Aims
    Measure, for each interval of the cluster sums and each design group (one conversation a scenario or
    replicas; fewer than 10, 10-29, 30-99, 100 or more scenarios), how often
    :func:`escalation.estimators.stats.interval_at_risk` warns, the coverage among the warned and among the
    silent data sets, and the share of the misses that carry a warning; and calibrate its thresholds.
Data-generating mechanism
    The coverage study's default design and its beta-binomial model (:func:`studies.coverage.build_design`,
    :func:`studies.coverage.cell_sizes`, :func:`studies.coverage.beta_binomial`): 1800 cells of estimand
    ``p_u`` or ``pi``, true value 0.01 to 0.99, rho 0 to 0.5, 3 to 200 scenarios, 1, 3 or 8 replicas of
    spread 0, 0.5 or 1.
Estimands
    Per cell and method, with the threshold of the cell's design group: the share of data sets warned; the
    coverage of the truth among the warned and among the silent data sets; the share covered or warned (one
    minus the silent misses); the share of the misses warned.
Methods
    Each data set's interval by every method of
    :data:`escalation.estimators.stats.SUMS_METHODS` at 95%, and its minority spread
    (:func:`escalation.estimators.stats.minority_spread`: in how many scenarios the rarer outcome occurs).
    A cell stores, per method, the data sets and the covered ones at each spread ``0 ..``
    :data:`MAX_THRESHOLD` (the last bin: that many or more), so any threshold can be applied afterwards:
    the package's (:data:`escalation.estimators.stats.RISK_THRESHOLDS`) for the tables, every one from 0 to
    :data:`MAX_THRESHOLD` for the calibration (:func:`calibrate`).
Performance measures
    Shares with their Monte Carlo standard error ``sqrt(s (1 - s) / n)``, ``n`` the data sets they are a
    share of. A cell *holds among the silent* when their coverage is at least 0.93 less 2 MCSE taken at the
    floor, ``sqrt(0.93 x 0.07 / n_silent)`` (an observed coverage of 1 or 0 has an MCSE of 0 at itself); it
    *holds covered-or-warned* when the share covered or warned is at least 0.93 less 2 MCSE at the floor
    with ``n = nsim``: the calibration's criterion.

Reproducibility: cell ``i`` uses child ``i`` of the root ``SeedSequence`` (:func:`studies._engine.run_cells`);
the tables are identical for any ``n_jobs``. Calibrate with one ``--seed`` and validate with another.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from escalation.estimators.stats import (
    MAX_THRESHOLD,
    RHO_WHEN_UNDEFINED,
    RISK_THRESHOLDS,
    SCENARIO_RANGES,
    SUMS_METHODS,
    WHOLE_GROUP_SHARE,
    ClusterSums,
    anova_icc,
    clustered_interval,
    group_coverage,
    minority_spread,
)

from .._constants import WARNINGS_SEED as DEFAULT_SEED
from .._engine import record_outputs, run_cells, step
from .._report_files import write_reports
from .._tables import markdown_table, write_table
from .._templates import render
from ..coverage._coverage import beta_binomial, build_design, cell_sizes

__all__ = ["DEFAULT_SEED", "CALIBRATION_SEED", "METHODS", "FLOOR", "TOLERANCE_MCSE", "CONFIDENCE", "MIN_WARNED",
           "run_cell", "cell_table", "group_table", "advice_table", "calibrate", "run_warnings_study"]

#: The seed the package's thresholds were calibrated on (the default seed validates them).
CALIBRATION_SEED = 1
METHODS = SUMS_METHODS
FLOOR = 0.93
TOLERANCE_MCSE = 2.0
CONFIDENCE = 0.95
#: The lowest coverage among the warned data sets of a cell is read over the cells with at least this many.
MIN_WARNED = 200
_BINS = MAX_THRESHOLD + 1
_KEYS = ["estimand", "p", "rho", "scenarios", "replicas", "size_cv"]


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """One cell: ``nsim`` data sets; per method the data sets (``n_s``) and the covered ones (``covered_s``)
    at each minority spread ``s = 0 .. MAX_THRESHOLD`` (the last: that many or more)."""
    rng = np.random.default_rng(seed_seq)
    sizes = np.tile(cell_sizes(row), (int(row["nsim"]), 1))
    totals = beta_binomial(rng, sizes, row)
    spread = np.minimum(minority_spread(totals, sizes), MAX_THRESHOLD)
    replicas = bool((sizes > 1).any())
    n = np.bincount(spread, minlength=_BINS)
    sums = ClusterSums.of(totals, sizes)
    old = _old_trigger(totals, sizes, replicas)
    rows = []
    for method in METHODS:
        low, high = clustered_interval(sums, None, method, confidence=CONFIDENCE)
        hit = (low <= row["p"]) & (row["p"] <= high)
        covered = np.bincount(spread, weights=hit, minlength=_BINS)
        rows.append({"method": method, "replicas_group": replicas, "old_warned": int(old.sum()),
                     "old_warned_covered": int((old & hit).sum()), **{f"n_{s}": int(n[s]) for s in range(_BINS)},
                     **{f"covered_{s}": int(covered[s]) for s in range(_BINS)}})
    return rows


def _old_trigger(totals: np.ndarray, sizes: np.ndarray, replicas: bool) -> np.ndarray:
    """The trigger of ``score``'s warning before this study (``Summary.interval_warnings``, "errors this rare
    and concentrated"): replicas, an observed rate in (0, 0.02] or [0.98, 1), and rho (ANOVA, 1 where
    undefined, SPEC section 5) at least 0.2."""
    rate = totals.sum(-1) / sizes.sum(-1)
    rho = np.nan_to_num(anova_icc(totals, sizes), nan=RHO_WHEN_UNDEFINED)
    rare = ((rate > 0) & (rate <= 0.02)) | ((rate >= 0.98) & (rate < 1))
    return rare & replicas & (rho >= 0.2)


def _groups(long: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Each row's design group: replicas (any scenario above one conversation) and the scenarios' label."""
    labels = [label for label, _, _ in SCENARIO_RANGES]
    index = np.searchsorted([low for _, low, _ in SCENARIO_RANGES[1:]], long["scenarios"], side="right")
    return long["replicas_group"].astype(bool), pd.Series(np.asarray(labels)[index], index=long.index)


def _counts(long: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The data sets and the covered ones by spread: arrays (rows, bins)."""
    return (long[[f"n_{s}" for s in range(_BINS)]].to_numpy(float),
            long[[f"covered_{s}" for s in range(_BINS)]].to_numpy(float))


def _floor_mcse(n):
    return np.sqrt(FLOOR * (1 - FLOOR) / n)


def cell_table(long: pd.DataFrame, thresholds: dict | None = None) -> pd.DataFrame:
    """One row per cell and method with the trigger of ``thresholds`` (default: the package's
    :data:`RISK_THRESHOLDS`): its threshold, the shares warned, covered, covered among the warned and the
    silent, covered or warned, of the misses warned, with MCSE, and whether the cell holds among the silent
    and covered-or-warned (module docstring)."""
    thresholds = RISK_THRESHOLDS if thresholds is None else thresholds
    replicas, label = _groups(long)
    limit = np.array([thresholds[m][(bool(r), g)].fewer_than for m, r, g in zip(long["method"], replicas, label)])
    n, covered = _counts(long)
    warn = np.arange(_BINS)[None, :] < limit[:, None]
    nsim = n.sum(1)
    warned, cov_warned = (n * warn).sum(1), (covered * warn).sum(1)
    silent, cov_silent = nsim - warned, covered.sum(1) - cov_warned
    misses = nsim - covered.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = long[["cell", *_KEYS, "method", "replicas_group"]].assign(group=label.to_numpy())
        out = out.assign(nsim=nsim, threshold=limit, coverage=covered.sum(1) / nsim,
                         warned_share=warned / nsim, coverage_warned=cov_warned / warned,
                         silent=silent, coverage_silent=cov_silent / silent)
        out["coverage_silent_mcse"] = np.sqrt(out["coverage_silent"] * (1 - out["coverage_silent"]) / silent)
        out["covered_or_warned"] = (covered.sum(1) + warned - cov_warned) / nsim
        out["misses"] = misses
        out["misses_warned"] = warned - cov_warned
        out["old_warned"] = long["old_warned"].to_numpy()
        out["old_warned_covered"] = long["old_warned_covered"].to_numpy()
        out["holds_silent"] = (silent == 0) | (out["coverage_silent"] >= FLOOR - TOLERANCE_MCSE * _floor_mcse(silent))
        out["holds_covered_or_warned"] = out["covered_or_warned"] >= FLOOR - TOLERANCE_MCSE * _floor_mcse(nsim)
    return out.reset_index(drop=True)


def group_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per method and design group (:func:`cell_table`'s rows): threshold, warned share, coverage among the
    warned and the silent (pooled, with MCSE), the mean and the lowest silent cell, the share of the misses
    warned, the cells that fail without the trigger, among the silent and covered-or-warned, and whether
    every cell holds among the silent."""
    rows = []
    order = {label: i for i, (label, _, _) in enumerate(SCENARIO_RANGES)}
    for (method, replicas, group), g in cells.groupby(["method", "replicas_group", "group"], sort=False):
        nsim, warned = g["nsim"].sum(), (g["warned_share"] * g["nsim"]).sum()
        cov_warned = (g["coverage_warned"].fillna(0) * g["warned_share"] * g["nsim"]).sum()
        silent, cov_silent = g["silent"].sum(), (g["coverage_silent"].fillna(0) * g["silent"]).sum()
        lowest = g.loc[g["coverage_silent"].idxmin()] if g["coverage_silent"].notna().any() else None
        plain = g["coverage"] >= FLOOR - TOLERANCE_MCSE * _floor_mcse(g["nsim"])
        held = _held(method, replicas, group)
        rows.append({
            "method": method, "replicas": "m > 1" if replicas else "m = 1", "scenarios": group,
            "cells": len(g), "threshold": g["threshold"].iloc[0], "cells_failing": int((~plain).sum()),
            "lowest_coverage": g["coverage"].min(), "warned_share": warned / nsim,
            "coverage_warned": cov_warned / warned if warned else math.nan,
            "coverage_warned_mcse": math.sqrt(max(cov_warned / warned * (1 - cov_warned / warned), 0) / warned)
            if warned else math.nan,
            "coverage_silent": cov_silent / silent if silent else math.nan,
            "coverage_silent_mcse": math.sqrt(max(cov_silent / silent * (1 - cov_silent / silent), 0) / silent)
            if silent else math.nan,
            "lowest_cell_warned": g.loc[g["warned_share"] * g["nsim"] >= MIN_WARNED, "coverage_warned"].min(),
            "mean_cell_silent": g["coverage_silent"].mean(),
            "lowest_cell_silent": math.nan if lowest is None else lowest["coverage_silent"],
            "lowest_cell_silent_mcse": math.nan if lowest is None else lowest["coverage_silent_mcse"],
            "lowest_cell_silent_n": 0 if lowest is None else int(lowest["silent"]),
            "misses_warned_share": g["misses_warned"].sum() / g["misses"].sum() if g["misses"].sum() else math.nan,
            "cells_failing_silent": int((~g["holds_silent"]).sum()),
            "cells_failing_covered_or_warned": int((~g["holds_covered_or_warned"]).sum()),
            "every_silent_cell_holds": bool(g["holds_silent"].all()),
            "held_in_group": held,
            "cells_failing_unnoted": int((~g["holds_silent"]).sum()) if held else 0,
            **_in_failing(g[~plain]),
            "_order": (METHODS.index(method) if method in METHODS else len(METHODS), replicas, order[group])})
    return pd.DataFrame(rows).sort_values("_order").drop(columns="_order").reset_index(drop=True)


def _held(method: str, replicas: bool, group: str) -> bool:
    """Whether ``method`` held in the design group in the package's coverage table
    (:func:`escalation.estimators.stats.group_coverage`): where it did not, ``score`` notes every data set of
    the group, whatever the trigger."""
    fewest = next(low for label, low, _ in SCENARIO_RANGES if label == group)
    return group_coverage(fewest, bool(replicas))[method].holds


def advice_table(groups: pd.DataFrame) -> pd.DataFrame:
    """Per design group, the advice of a warning: the methods with no failing cell in this run (``holding``),
    and the method whose trigger warns the least share of the group's data sets (``least_warned``)."""
    rows = []
    for (replicas, scenarios), g in groups.groupby(["replicas", "scenarios"], sort=False):
        least = g.loc[g["warned_share"].idxmin()]
        rows.append({"replicas": replicas, "scenarios": scenarios,
                     "holding": ", ".join(g.loc[g["cells_failing"] == 0, "method"]) or "none",
                     "least_warned": least["method"], "least_warned_share": least["warned_share"]})
    return pd.DataFrame(rows)


def _in_failing(f: pd.DataFrame) -> dict:
    """In the cells where the method fails without a trigger: the new trigger's warned share, coverage among
    the warned and the silent, share of the misses warned; and the same of the old trigger."""
    n = f["nsim"].sum()
    warned = (f["warned_share"] * f["nsim"]).sum()
    cov_warned = (f["coverage_warned"].fillna(0) * f["warned_share"] * f["nsim"]).sum()
    misses = f["misses"].sum()
    old, old_cov = f["old_warned"].sum(), f["old_warned_covered"].sum()

    def ratio(a, b):
        return a / b if b else math.nan
    return {"failing_warned_share": ratio(warned, n), "failing_coverage_warned": ratio(cov_warned, warned),
            "failing_coverage_silent": ratio((f["coverage"] * f["nsim"]).sum() - cov_warned, n - warned),
            "failing_misses_warned_share": ratio(f["misses_warned"].sum(), misses),
            "old_failing_warned_share": ratio(old, n), "old_failing_coverage_warned": ratio(old_cov, old),
            "old_failing_coverage_silent": ratio((f["coverage"] * f["nsim"]).sum() - old_cov, n - old),
            "old_failing_misses_warned_share": ratio(old - old_cov, misses)}


def calibrate(long: pd.DataFrame) -> pd.DataFrame:
    """The thresholds the cells of ``long`` support: per method and design group the least ``c`` in 0 ..
    :data:`MAX_THRESHOLD` with which every cell holds covered-or-warned, ``inf`` where none does or where it
    warns more than :data:`WHOLE_GROUP_SHARE` of the group's data sets; with its warned share and the
    coverage among the warned."""
    replicas, label = _groups(long)
    n, covered = _counts(long)
    nsim = n.sum(1)
    # warned with threshold c: the bins below c (column c of the cumulative sums from the left, shifted)
    warned = np.hstack([np.zeros((len(n), 1)), n.cumsum(1)])  # (rows, bins + 1): c = 0 .. MAX_THRESHOLD + 1
    cov_warned = np.hstack([np.zeros((len(n), 1)), covered.cumsum(1)])
    share = (covered.sum(1)[:, None] + warned - cov_warned) / nsim[:, None]
    holds = share >= FLOOR - TOLERANCE_MCSE * _floor_mcse(nsim)[:, None]
    rows = []
    for (method, r, g), index in long.groupby([long["method"], replicas, label], sort=False).indices.items():
        ok = holds[index, :_BINS].all(0)
        least = int(np.argmax(ok)) if ok.any() else _BINS  # _BINS: every bin warned
        whole = not ok.any() or warned[index, least].sum() / nsim[index].sum() > WHOLE_GROUP_SHARE
        col = _BINS if whole else least
        w, cw = warned[index, col].sum(), cov_warned[index, col].sum()
        rows.append({"method": method, "replicas": bool(r), "scenarios": g,
                     "fewer_than": math.inf if whole else float(least),
                     "least_holding": least if ok.any() else math.nan,
                     "warned_share": w / nsim[index].sum(), "coverage_warned": cw / w if w else math.nan})
    return pd.DataFrame(rows)


_TITLES = {
    "groups": "The trigger per method and design group: warned share, coverage warned and silent, misses warned",
    "advice": "The advice of a warning per design group: the methods that hold, and the least warned",
    "calibration": "The thresholds this run supports (least c with every cell covered-or-warned)",
}


def run_warnings_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
                       seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
                       scheduler: str | None = None, force: bool = False) -> dict[str, pd.DataFrame]:
    """Run the warnings study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``run.json``, ``spreads.csv`` (each cell's counts by spread),
    ``cells.csv`` (:func:`cell_table`), ``groups``, ``advice`` and ``calibration`` (CSV and Markdown), ``report.md`` and
    ``report.html``; returns those tables. Identical for any ``n_jobs`` and ``backend``; a stopped run
    resumes, and ``force`` recomputes into a folder holding an earlier run.
    """
    out_dir = Path(out_dir)
    design = build_design(smoke=smoke, nsim=nsim)[[*_KEYS, "nsim"]]
    size = int(design["nsim"].iloc[0])
    facts = {"study": "warnings", "smoke": smoke, "nsim": size}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress, backend=backend,
                     scheduler=scheduler, description="warnings cells", run_facts=facts, force=force)
    with step("summarising the cells", progress=progress) as say:
        cells = cell_table(long)
        groups = group_table(cells)
        tables = {"groups": groups, "advice": advice_table(groups), "calibration": calibrate(long)}
        say("writing the tables")
        written = write_table(long, out_dir, "spreads") + write_table(cells, out_dir, "cells")
        for name, table in tables.items():
            written += write_table(table, out_dir, name, _TITLES[name], digits=6)
        say("writing report.md and report.html")
        text = render("warnings/report.md.j2", seed=seed, nsim=size, smoke=smoke, cells=len(design),
                      calibration_seed=CALIBRATION_SEED, floor=FLOOR, whole=WHOLE_GROUP_SHARE,
                      groups=markdown_table(_shown(tables["groups"]), digits=3),
                      failing=markdown_table(_shown_failing(tables["groups"]), digits=3),
                      calibration=markdown_table(tables["calibration"], digits=3),
                      advice=markdown_table(tables["advice"], digits=3),
                      design=_design_items())
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {"spreads": long, "cells": cells, **tables}


def _design_items() -> str:
    """The ADEMP part of this module's docstring as Markdown items: ``- **Aims.** ...``, one a heading."""
    items: list[str] = []
    for line in __doc__.split("\n\n", 1)[1].split("\n\nReproducibility", 1)[0].splitlines():
        if line and not line[0].isspace():
            items.append(f"- **{line.strip()}.**")
        elif items:
            items[-1] += " " + line.strip()
    return "\n".join(items).replace("``", "`").replace(":func:", "").replace(":data:", "")


def _shown(groups: pd.DataFrame) -> pd.DataFrame:
    """The groups table as the report shows it."""
    return groups[["method", "replicas", "scenarios", "cells", "threshold", "cells_failing", "lowest_coverage",
                   "warned_share", "coverage_warned", "lowest_cell_warned", "coverage_silent", "lowest_cell_silent",
                   "lowest_cell_silent_n", "misses_warned_share", "cells_failing_silent",
                   "cells_failing_covered_or_warned", "held_in_group", "cells_failing_unnoted"]]


def _shown_failing(groups: pd.DataFrame) -> pd.DataFrame:
    """The groups table in the cells that fail without a trigger: the new trigger against the old."""
    failing = groups[groups["cells_failing"] > 0]
    return failing[["method", "replicas", "scenarios", "cells_failing", "failing_warned_share",
                    "failing_coverage_warned", "failing_coverage_silent", "failing_misses_warned_share",
                    "old_failing_warned_share", "old_failing_coverage_warned", "old_failing_coverage_silent",
                    "old_failing_misses_warned_share"]]
