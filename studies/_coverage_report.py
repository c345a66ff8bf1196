"""Summaries and ``report.md`` of the coverage study, read off the table ``coverage.csv``.

Every summary takes a cell's **exact** coverage, misses and width where they are computable
and the Monte Carlo ones elsewhere (:func:`summary_cells`); the Monte Carlo value beside an
exact one only checks the simulation (:func:`validation`).

An interval **holds** 95% over a set of cells (:func:`recommendation`) when it was evaluated in
every one of them, its mean coverage is at least :data:`MEAN_LEVEL` and no cell lies below
:data:`FLOOR` by more than :data:`TOLERANCE_MCSE` Monte Carlo standard errors (0 for an exact
value). Among the intervals that hold, the narrowest (mean width relative to Wilson-Kish with
the true rho in the same cell) is recommended. Where even that oracle fails (the Wilson
interval's own dips with few effective observations, which no design effect repairs), a
second rule asks for an interval **as good as the oracle**: the same test with the floor of
each cell lowered to the oracle's coverage there minus :data:`ORACLE_MARGIN`, and the mean to
the oracle's mean minus :data:`ORACLE_MARGIN` / 2.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.stats import INTERVAL_METHODS, RHO_BOUND_LEVEL
from ._coverage import UNEQUAL_BOOTSTRAP_MAX_K
from ._performance import binomial_mcse
from ._tables import markdown_table

__all__ = ["summary_cells", "summary_by_method", "recommendation", "aggregate", "by_range", "misses", "validation",
           "report_markdown", "SMOKE_FINDINGS", "FLOOR", "MEAN_LEVEL", "TOLERANCE_MCSE", "ORACLE_MARGIN",
           "SCENARIO_RANGES"]

FLOOR = 0.93
MEAN_LEVEL = 0.945
TOLERANCE_MCSE = 2.0
ORACLE_MARGIN = 0.01
#: Ranges of the number of scenarios of the recommendation: (label, lowest K, highest K).
SCENARIO_RANGES = (("K < 10", 1, 9), ("10-29", 10, 29), ("30-99", 30, 99), ("K >= 100", 100, np.inf))
KEYS = ["estimand", "p", "rho", "scenarios", "replicas", "size_cv"]
ORACLE = "wilson-kish-true-rho"
#: The findings of a smoke run: its grid lacks most of the conditions the findings of the full study are about.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its grid holds a few of the study's conditions and few data sets per "
                  "cell. The tables below show what this run computed.")

_NAMES = {
    "wilson": "Wilson, ignores clustering (oracle baseline)",
    "wilson-kish-true-rho": "Wilson-Kish with the true rho (oracle)",
    "wilson-kish": "Wilson-Kish, rho estimated (the paper's, SPEC 5)",
    "wilson-kish-t": "Wilson-Kish with t on K - 1 df",
    "wilson-kish-ucb": f"Wilson-Kish with the {RHO_BOUND_LEVEL:g} upper bound of rho",
    "korn-graubard": "Korn-Graubard effective size, t on K - 1 df",
    "bootstrap-percentile": "cluster bootstrap, percentile",
    "bootstrap-bca": "cluster bootstrap, BCa",
}


def _spread(cv: float) -> str:
    return "equal sizes" if cv == 0 else f"size cv {cv:g}"


def _range_of(k: int) -> str:
    return next(label for label, low, high in SCENARIO_RANGES if low <= k <= high)


def summary_cells(table: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluated (cell, method) with the values every summary uses.

    Adds ``summary_coverage``, ``summary_mcse`` (0 for an exact value), ``summary_miss_low``,
    ``summary_miss_high``, ``summary_width`` (exact where computable, else Monte Carlo),
    ``source`` (``exact`` or ``monte carlo``), ``relative_width`` (width over that of
    Wilson-Kish with the true rho in the same cell), ``spread``, ``scenarios_range`` and
    ``replicas_group``. Methods not run in a cell (the bootstraps with unequal sizes and many
    scenarios) are left out.
    """
    cells = table.copy()
    exact = cells["exact_coverage"].notna()
    cells["source"] = np.where(exact, "exact", "monte carlo")
    for name, mc, ex in (("coverage", "coverage", "exact_coverage"), ("miss_low", "miss_low", "exact_miss_low"),
                         ("miss_high", "miss_high", "exact_miss_high"), ("width", "mean_width", "exact_mean_width")):
        cells[f"summary_{name}"] = cells[ex].where(exact, cells[mc])
    cells["summary_mcse"] = cells["coverage_mcse"].where(~exact, 0.0)
    cells = cells[cells["summary_coverage"].notna()].copy()
    oracle = cells.loc[cells["method"] == ORACLE, KEYS + ["summary_width"]].rename(
        columns={"summary_width": "oracle_width"})
    cells = cells.merge(oracle, on=KEYS, how="left", sort=False)
    cells["relative_width"] = cells["summary_width"] / cells.pop("oracle_width")
    cells["spread"] = cells["size_cv"].map(_spread)
    cells["scenarios_range"] = cells["scenarios"].map(_range_of)
    cells["replicas_group"] = np.where(cells["replicas"] == 1, "m = 1", "m > 1")
    return cells


def _cell(row) -> str:
    return (f"{row['estimand']}, p = {row['p']:g}, rho = {row['rho']:g}, K = {row['scenarios']}, "
            f"m = {row['replicas']}, {_spread(row['size_cv'])}")


def summary_by_method(cells: pd.DataFrame) -> pd.DataFrame:
    """Per method, over every cell where it was evaluated (both estimands).

    Columns: ``method, cells, exact_share`` (share of cells with an exact value),
    ``mean_coverage, min_coverage, worst_cell, share_below_0.93, miss_low, miss_high``
    (mean shares of intervals wholly below and wholly above the truth), ``mean_width`` and
    ``relative_width`` (mean over cells of the width relative to the true-rho oracle).
    """
    rows = []
    for method in [m for m in _NAMES if m in set(cells["method"])]:
        part = cells[cells["method"] == method]
        worst = part.loc[part["summary_coverage"].idxmin()]
        rows.append({"method": method, "cells": len(part), "exact_share": (part["source"] == "exact").mean(),
                     "mean_coverage": part["summary_coverage"].mean(), "min_coverage": worst["summary_coverage"],
                     "worst_cell": _cell(worst), f"share_below_{FLOOR:g}": (part["summary_coverage"] < FLOOR).mean(),
                     "miss_low": part["summary_miss_low"].mean(), "miss_high": part["summary_miss_high"].mean(),
                     "mean_width": part["summary_width"].mean(), "relative_width": part["relative_width"].mean()})
    return pd.DataFrame(rows)


def _judge(part: pd.DataFrame, oracle: pd.Series, cells_in_group: int) -> dict:
    """Mean, minimum, both rules and the widths of one method over one group of cells.

    ``oracle`` is the true-rho oracle's coverage of each cell, indexed by the cell keys.
    """
    indexed = part.set_index(KEYS)
    coverage = indexed["summary_coverage"]
    lowest = coverage + TOLERANCE_MCSE * indexed["summary_mcse"]
    complete = len(part) == cells_in_group
    floor = np.minimum(FLOOR, oracle.reindex(coverage.index) - ORACLE_MARGIN)
    mean = coverage.mean()
    failing = coverage.index[(lowest < FLOOR).to_numpy()].to_frame(index=False)
    return {"mean": mean, "min": coverage.min(), "complete": complete, "failing": failing,
            "holds": bool(complete and mean >= MEAN_LEVEL and lowest.min() >= FLOOR),
            "as_oracle": bool(complete and mean >= min(MEAN_LEVEL, oracle.mean() - ORACLE_MARGIN / 2)
                              and (lowest >= floor).all()),
            "width": part["summary_width"].mean(), "relative": part["relative_width"].mean()}


def _short(name: str, judged: dict) -> str:
    return f"{name} (mean {judged['mean']:.3f}, min {judged['min']:.3f}, relative width {judged['relative']:.2f})"


def _where(failing: pd.DataFrame) -> str:
    """'5 cells below 0.93: distance from the boundary 0.01, 0.02; rho 0.2, 0.5; K 100, 200'."""
    values = lambda column: ", ".join(f"{v:g}" for v in sorted(set(column)))  # noqa: E731
    distance = np.minimum(failing["p"], 1 - failing["p"]).round(12)
    return (f"{len(failing)} cells below {FLOOR:g}: distance from the boundary {values(distance)}; "
            f"rho {values(failing['rho'])}; K {values(failing['scenarios'])}")


def recommendation(cells: pd.DataFrame) -> pd.DataFrame:
    """Which interval a user can choose holds 95%, by replicas (m = 1, m > 1) and range of scenarios.

    Columns: ``replicas, scenarios, cells``; ``oracle_mean, oracle_min`` (Wilson-Kish with the
    true rho over the same cells); ``recommended`` (the narrowest method that holds, or ``none
    holds``), its ``mean_coverage, min_coverage, mean_width, relative_width``; ``also_hold``
    (the other methods that hold, with their relative width); ``as_good_as_oracle`` (the
    narrowest method that meets the second rule, with its mean, minimum and relative width) and
    ``closest`` (when neither rule is met: the method with the highest minimum coverage, and the
    conditions of the cells where it fails). The rules are in the module docstring.
    """
    rows = []
    for group in ("m = 1", "m > 1"):
        for label, _, _ in SCENARIO_RANGES:
            part = cells[(cells["replicas_group"] == group) & (cells["scenarios_range"] == label)]
            if part.empty:
                continue
            oracle = part[part["method"] == ORACLE].set_index(KEYS)["summary_coverage"]
            judged = {m: _judge(part[part["method"] == m], oracle, len(oracle)) for m in INTERVAL_METHODS
                      if (part["method"] == m).any()}
            narrowest = lambda rule: sorted((m for m, j in judged.items() if j[rule]),  # noqa: E731
                                            key=lambda m: judged[m]["relative"])
            holding, as_oracle = narrowest("holds"), narrowest("as_oracle")
            row = {"replicas": group, "scenarios": label, "cells": len(oracle), "oracle_mean": oracle.mean(),
                   "oracle_min": oracle.min(), "recommended": holding[0] if holding else "none holds"}
            best = judged[holding[0]] if holding else dict.fromkeys(("mean", "min", "width", "relative"), np.nan)
            row.update({"mean_coverage": best["mean"], "min_coverage": best["min"], "mean_width": best["width"],
                        "relative_width": best["relative"],
                        "also_hold": "; ".join(f"{m} ({judged[m]['relative']:.2f})" for m in holding[1:]),
                        "as_good_as_oracle": _short(as_oracle[0], judged[as_oracle[0]]) if as_oracle else "",
                        "closest": ""})
            if not holding and not as_oracle:
                near = max(judged, key=lambda m: (judged[m]["complete"], judged[m]["min"]))
                row["closest"] = f"{_short(near, judged[near])}; {_where(judged[near]['failing'])}"
            rows.append(row)
    return pd.DataFrame(rows)


def aggregate(cells: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean and lowest coverage per ``estimand, method, replicas, size_cv`` and ``by`` (``scenarios`` or ``p``)."""
    grouped = cells.groupby(["estimand", "method", "replicas", "size_cv", by], sort=True)["summary_coverage"]
    return grouped.agg(["mean", "min"]).reset_index()


def by_range(cells: pd.DataFrame) -> pd.DataFrame:
    """Mean and lowest coverage and mean relative width per ``method, replicas_group, scenarios_range``."""
    order = {label: i for i, (label, _, _) in enumerate(SCENARIO_RANGES)}
    out = (cells.groupby(["method", "replicas_group", "scenarios_range"])
           .agg(mean=("summary_coverage", "mean"), min=("summary_coverage", "min"),
                relative_width=("relative_width", "mean")).reset_index())
    return out.sort_values(["replicas_group", "scenarios_range"], key=lambda s: s.map(order) if s.name ==
                           "scenarios_range" else s, kind="stable").reset_index(drop=True)


def misses(cells: pd.DataFrame) -> pd.DataFrame:
    """Mean shares of intervals below (``miss_low``) and above (``miss_high``) the truth per estimand and method."""
    return (cells.groupby(["estimand", "method"], sort=False)
            .agg(miss_low=("summary_miss_low", "mean"), miss_high=("summary_miss_high", "mean")).reset_index())


def validation(table: pd.DataFrame) -> dict:
    """Monte Carlo against exact coverage where both exist: the z scores ``(MC - exact) / MCSE``.

    Methods that give the very same intervals in a cell (all Wilson-type methods when
    ``m = 1``; Wilson and the oracle when rho = 0) are one comparison, not several: the same
    Monte Carlo coverage and the same exact one to 12 decimals (the enumeration's rounding is
    about 1e-13, :mod:`estimators.stats._exact`). The MCSE is computed from the exact value.

    Returns
    -------
    dict
        ``comparisons``, ``within_3`` (count with ``|z| <= 3``), ``expected_outside`` (0.27%
        of the comparisons), ``mean_z``, ``sd_z`` and ``worst`` (the row of the largest
        ``|z|``, with its ``z``).
    """
    part = table[table["exact_coverage"].notna() & table["coverage"].notna()]
    part = part[~part.assign(exact=part["exact_coverage"].round(12)).duplicated(KEYS + ["coverage", "exact"])].copy()
    se = binomial_mcse(part["exact_coverage"], part["nsim"])
    part["z"] = ((part["coverage"] - part["exact_coverage"]) / se.where(se > 0)).fillna(0.0)
    worst = part.loc[part["z"].abs().idxmax()]
    return {"comparisons": len(part), "within_3": int((part["z"].abs() <= 3).sum()),
            "expected_outside": 0.0027 * len(part), "mean_z": float(part["z"].mean()),
            "sd_z": float(part["z"].std(ddof=1)), "worst": worst}


def _stats(part: pd.DataFrame) -> str:
    """'mean 0.948, lowest 0.912 (<cell>)' of the summary coverage in ``part``."""
    if part.empty:
        return "no cells"
    worst = part.loc[part["summary_coverage"].idxmin()]
    return (f"mean {part['summary_coverage'].mean():.3f}, lowest {worst['summary_coverage']:.3f} "
            f"({_cell(worst)})")


def _sides(part: pd.DataFrame) -> str:
    """'0.037 towards the boundary / 0.004 away': the misses between the truth and the nearer boundary, and beyond.

    For ``p_u`` near 0 the boundary side is below the truth, for ``pi`` near 1 above it.
    """
    low_boundary = part["p"] < 0.5
    toward = part["summary_miss_low"].where(low_boundary, part["summary_miss_high"])
    away = part["summary_miss_high"].where(low_boundary, part["summary_miss_low"])
    return f"{toward.mean():.3f} towards the boundary / {away.mean():.3f} away"


def _summary_markdown(summary: pd.DataFrame) -> str:
    lines = [f"| method | cells | exact | mean coverage | lowest | share < {FLOOR:g} | miss below | miss above | "
             "mean width | width / oracle |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in summary.to_dict(orient="records"):
        lines.append(f"| {row['method']} | {row['cells']} | {row['exact_share']:.0%} | {row['mean_coverage']:.3f} | "
                     f"{row['min_coverage']:.3f} | {row[f'share_below_{FLOOR:g}']:.3f} | {row['miss_low']:.4f} | "
                     f"{row['miss_high']:.4f} | {row['mean_width']:.4f} | {row['relative_width']:.2f} |")
    return "\n".join(lines)


def _spread_markdown(cells: pd.DataFrame) -> str:
    """Mean, lowest and share below the floor per method and size spread (m > 1 only)."""
    clustered = cells[cells["replicas"] > 1]
    spreads = list(dict.fromkeys(clustered.sort_values("size_cv")["spread"]))
    head = " | ".join(f"{s}: mean / lowest / < {FLOOR:g}" for s in spreads)
    lines = [f"| method | {head} |", "|---|" + "---|" * len(spreads)]
    for method in [m for m in _NAMES if m in set(clustered["method"])]:
        parts = []
        for spread in spreads:
            part = clustered[(clustered["method"] == method) & (clustered["spread"] == spread)]["summary_coverage"]
            parts.append(f"{part.mean():.3f} / {part.min():.3f} / {(part < FLOOR).mean():.2f}" if len(part) else "-")
        lines.append(f"| {method} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def _recommendation_markdown(advice: pd.DataFrame) -> str:
    lines = ["| replicas | scenarios | cells | oracle mean / lowest | holds: narrowest | mean coverage | lowest | "
             "mean width | width / oracle | also holds (width / oracle) | as good as the oracle: narrowest | "
             "closest, when neither |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in advice.to_dict(orient="records"):
        numbers = ("| - | - | - | - " if row["recommended"] == "none holds" else
                   f"| {row['mean_coverage']:.3f} | {row['min_coverage']:.3f} | {row['mean_width']:.4f} | "
                   f"{row['relative_width']:.2f} ")
        lines.append(f"| {row['replicas']} | {row['scenarios']} | {row['cells']} | {row['oracle_mean']:.3f} / "
                     f"{row['oracle_min']:.3f} | **{row['recommended']}** {numbers}| {row['also_hold'] or '-'} | "
                     f"{row['as_good_as_oracle'] or '-'} | {row['closest'] or '-'} |")
    return "\n".join(lines)


def _sizes_markdown(design: pd.DataFrame) -> str:
    """The scenario sizes of each (m, cv, K): realised mean, coefficient of variation and m_bar."""
    sizes = design[design["estimand"] == design["estimand"].iloc[0]].drop_duplicates(
        ["replicas", "size_cv", "scenarios"])
    sizes = sizes[sizes["size_cv"] > 0]
    if sizes.empty:
        return "Every cell has equal sizes."
    mean = sizes["conversations"] / sizes["scenarios"]
    table = pd.DataFrame({"m": sizes["replicas"], "cv": sizes["size_cv"], "K": sizes["scenarios"],
                          "mean size": mean.round(2), "realised cv": np.sqrt(sizes["m_bar"] / mean - 1).round(2),
                          "m_bar": sizes["m_bar"].round(2)})
    return markdown_table(table).rstrip("\n")


def _findings(cells: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    by = {m: cells[cells["method"] == m] for m in _NAMES}
    top_rho, top_m = cells["rho"].max(), cells["replicas"].max()
    few = lambda d: d[d["scenarios"] < 10]  # noqa: E731
    unclustered = lambda d: d[(d["rho"] == 0) | (d["replicas"] == 1)]  # noqa: E731
    clustered = lambda d: d[(d["rho"] == top_rho) & (d["replicas"] == top_m)]  # noqa: E731
    rare = lambda d: d[np.minimum(d["p"], 1 - d["p"]) <= 0.02]  # noqa: E731
    equal, spread = (lambda d: d[(d["size_cv"] == 0) & (d["replicas"] > 1)]), (lambda d: d[d["size_cv"] > 0])
    oracle, paper = by[ORACLE], by["wilson-kish"]
    findings = [
        f"**Ignoring clustering fails.** Without clustering (rho = 0 or m = 1) the plain Wilson interval has "
        f"{_stats(unclustered(by['wilson']))}; with rho = {top_rho:g} and m = {top_m}, "
        f"{_stats(clustered(by['wilson']))}.",
        f"**With the true rho and m_bar = sum n_j^2 / N the design effect holds on unequal sizes too.** Wilson-Kish "
        f"with the true rho: equal sizes (m > 1) {_stats(equal(oracle))}; unequal sizes {_stats(spread(oracle))} "
        "(exact in every cell). Its failures are those of the Wilson interval itself with few effective "
        f"observations: with a true value within 0.02 of the boundary, {_stats(rare(oracle))}.",
        f"**The paper's interval (rho estimated, 1 where undefined).** {_stats(paper)}; with K < 10 "
        f"{_stats(few(paper))}; rare errors (within 0.02 of the boundary) {_stats(rare(paper))}; "
        f"unequal sizes {_stats(spread(paper))}.",
    ]
    def concentrated(d):
        return d[(np.minimum(d["p"], 1 - d["p"]) <= 0.02) & (d["rho"] >= 0.2) & (d["replicas"] > 1)
                 & (d["scenarios"] >= 100)]

    if not concentrated(paper).empty:
        sides = "; ".join(f"{m}: {_stats(concentrated(by[m]))}, misses {_sides(concentrated(by[m]))}"
                          for m in ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb", "korn-graubard"))
        findings.append("**Rare errors concentrated in a few scenarios defeat every interval that reads rho from the "
                        "data, even with 100 or 200 scenarios** (true value within 0.02 of the boundary, rho >= 0.2, "
                        f"m > 1): {sides}; the oracle there: {_stats(concentrated(oracle))}. Most data sets then "
                        "show too few scenarios with an error for the spread between scenarios to be measured, so "
                        "the design effect read from the data is wrong in either direction.")
    for method in ("wilson-kish-t", "wilson-kish-ucb", "korn-graubard"):
        d = by[method]
        findings.append(f"**{_NAMES[method]}.** {_stats(d)}; with K < 10 {_stats(few(d))}; mean width "
                        f"{d['relative_width'].mean():.2f} times the oracle's.")
    not_run = int(table[table["method"].isin(["bootstrap-percentile", "bootstrap-bca"])]["coverage"].isna().sum())
    for method in ("bootstrap-percentile", "bootstrap-bca"):
        d = by[method]
        text = (f"**The {_NAMES[method]} needs many scenarios.** With K < 10 {_stats(few(d))}; with "
                f"K >= 100 {_stats(d[d['scenarios'] >= 100])}.")
        undefined = (1 - d["summary_coverage"] - d["summary_miss_low"] - d["summary_miss_high"]).clip(lower=0)
        if undefined.max() > 0:
            worst = d.loc[undefined.idxmax()]
            text += (f" Its interval is undefined when every cluster has the same rate (common with rare errors): "
                     f"in up to {undefined.max():.1%} of replications ({_cell(worst)}), counted as not covering.")
        findings.append(text)
    findings.append(f"**Not run.** The two bootstraps with unequal sizes and more than {UNEQUAL_BOOTSTRAP_MAX_K} "
                    f"scenarios ({not_run // 2} cells each): there the package resamples every cluster directly, "
                    "which the budget does not allow; every summary of a bootstrap is over the cells where it ran "
                    "(the recommendation requires every cell of a group).")
    sides = "; ".join(f"{m} {_sides(rare(by[m]))}" for m in _NAMES)
    findings.append(f"**Misses near the boundary are one-sided.** With the true value within 0.02 of the boundary "
                    f"the mean share of intervals wholly between the truth and the boundary / wholly on the other "
                    f"side is: {sides} (nominal 0.025 each). A data set without an error gives the bootstraps the "
                    "boundary itself as their interval; a Wilson-type interval misses away from the boundary when "
                    "a few errors, clustered in one scenario, put its near end beyond the truth.")
    return findings


def report_markdown(table: pd.DataFrame, *, cells: pd.DataFrame, summary: pd.DataFrame, advice: pd.DataFrame,
                    seed: int, figures: list[str], confidence: float, n_resamples: int, design: pd.DataFrame,
                    smoke: bool) -> str:
    """The text of ``report.md`` for the coverage table ``table`` (the rows of ``coverage.csv``) and its ``design``.

    ``cells`` is :func:`summary_cells` of ``table``; ``summary`` and ``advice`` are the tables
    written beside the report, :func:`summary_by_method` and :func:`recommendation` of ``cells``.
    A ``smoke`` run's findings are :data:`SMOKE_FINDINGS`.
    """
    check = validation(table)
    worst = check["worst"]
    nsim = int(design["nsim"].iloc[0])
    boot = sorted(set(design["nsim_bootstrap"]) - {0, nsim})
    grid = {c: ", ".join(f"{v:g}" for v in sorted(design[c].unique())) for c in ("rho", "scenarios")}
    truths = {e: ", ".join(f"{v:g}" for v in sorted(design.loc[design["estimand"] == e, "p"].unique()))
              for e in design["estimand"].unique()}
    size_designs = ", ".join(f"(m = {m}, {_spread(cv)})" for m, cv in
                             sorted({(int(a), float(b)) for a, b in zip(design["replicas"], design["size_cv"])}))
    text = [
        "# Coverage study: the clustered intervals on the data users meet",
        "",
        f"Root seed {seed}; {nsim} replications per cell ({', '.join(map(str, boot)) or nsim} for the bootstraps with "
        f"unequal sizes); {n_resamples} bootstrap resamples; {confidence:.0%} two-sided intervals; "
        f"{len(design)} cells. Tables: `design.csv`, `coverage.csv` (one row per cell and method), `summary.csv`, "
        "`recommendation.csv` (and `.md`); run facts: `run.json`. Replay any replication with "
        "`studies._coverage.replay_replication(row_of_design_csv, seed=SEED, replication=R)`.",
        "",
        "## Design (ADEMP)",
        "",
        "- **Aims.** Find where each interval of `--interval` holds 95% and where it fails, on scenarios of unequal "
        "size, with rare errors and with 3 to 200 scenarios, against two oracles.",
        "- **Data-generating mechanisms.** The plain beta-binomial model, not the synthetic world. Scenario j has "
        "n_j conversations: K of m (equal sizes), or the (j - 1/2)/K quantiles of a gamma law of mean m and "
        "coefficient of variation cv, rounded and at least 1 (fixed per cell, table below). For `p_u` scenario j "
        "draws q_j ~ Beta with mean p and intra-scenario correlation rho, and its errors are Binomial(n_j, q_j). "
        "For `pi` case j has an ESC and an ACT scenario of n_j replicas each; q_u and q_o are drawn independently "
        "(Beta, mean a = 1 - sqrt(pi), correlation rho), and replica r of both forms a pair with outcome "
        "(1 - u)(1 - o) of mean pi; the n_j pairs of a case are its cluster. The pair outcomes of a case are "
        "correlated through q_u and q_o (`rho_outcome` in `design.csv`, below rho). "
        f"Grid, fully crossed: true p_u in {{{truths.get('p_u', '')}}}, true pi in {{{truths.get('pi', '')}}}, "
        f"rho in {{{grid['rho']}}}, K in {{{grid['scenarios']}}}, sizes {size_designs}; with m = 1 only rho = 0 (the "
        "data do not depend on rho when every scenario has one conversation).",
        "- **Estimands.** `p_u` and `pi`; the column `p` is the true value of the estimand.",
        "- **Methods.** `wilson` (rho fixed at 0: ignores clustering) and `wilson-kish-true-rho` (rho fixed at the "
        "true correlation of the outcome), two oracles; `wilson-kish` (SPEC section 5: ANOVA rho truncated to "
        "[0, 1], 1 where undefined, m_bar = sum n_j^2 / N), `wilson-kish-t`, "
        f"`wilson-kish-ucb` (one-sided {RHO_BOUND_LEVEL:g} upper bound of rho), `korn-graubard`, "
        "`bootstrap-percentile` and `bootstrap-bca` (scenarios, or cases for pi, resampled; both read off one "
        "bootstrap distribution per data set), as `escalation.estimators.stats.clustered_interval` computes them.",
        "- **Performance measures.** Coverage with its Monte Carlo standard error sqrt(c(1 - c)/nsim); misses below "
        "(`miss_low`: the interval lies wholly below the truth) and above (`miss_high`) separately; mean width over "
        "the replications where the interval is defined. An undefined interval (BCa without variation between "
        "clusters) counts as not covering and as neither miss. Exact coverage, misses and width (enumeration, no "
        "Monte Carlo error) for every Wilson-type method with equal sizes, and for the two oracles (rho fixed) with "
        "unequal sizes; the other cells are Monte Carlo only. **Every summary below uses the exact value where it "
        "exists**, the Monte Carlo one elsewhere.",
        "",
        "### Scenario sizes of the unequal cells",
        "",
        _sizes_markdown(design),
        "",
        "## Validation",
        "",
        f"Where both exist, the Monte Carlo coverage lies within 3 MCSE of the exact one (MCSE from the exact value) "
        f"in {check['within_3']} of {check['comparisons']} distinct comparisons (about "
        f"{check['expected_outside']:.1f} are expected outside by chance); the z scores have mean "
        f"{check['mean_z']:.2f} and standard deviation {check['sd_z']:.2f} (0 and 1 if the simulation, the "
        f"intervals and the enumeration agree); the largest is {worst['z']:.2f} ({worst['method']}, {_cell(worst)}).",
        "",
        "## Findings",
        "",
        *([SMOKE_FINDINGS] if smoke else [f"{i}. {f}" for i, f in enumerate(_findings(cells, table), start=1)]),
        "",
        "## Summary by method",
        "",
        f"Over every cell where the method was evaluated, both estimands; exact where computable (column `exact`: "
        f"share of such cells). `share < {FLOOR:g}`: share of cells with coverage below {FLOOR:g}; misses: mean "
        "shares of intervals wholly below / above the truth; width / oracle: mean over cells of the width relative "
        "to Wilson-Kish with the true rho.",
        "",
        _summary_markdown(summary),
        "",
        "By spread of the scenario sizes (cells with m > 1):",
        "",
        _spread_markdown(cells),
        "",
        "## Recommendation",
        "",
        f"An interval **holds** 95% in a group of cells when it was evaluated in every cell of the group, its mean "
        f"coverage is at least {MEAN_LEVEL:g} and no cell lies below {FLOOR:g} by more than {TOLERANCE_MCSE:g} MCSE "
        f"(0 for an exact value). The recommended interval is the narrowest that holds (width relative to the "
        "true-rho oracle, averaged over the group's cells); both estimands, every true value, rho and size "
        "spread of the group. The oracles are not candidates. Even the true-rho oracle dips below "
        f"{FLOOR:g} where the Wilson interval itself does (rare errors, few effective observations: its "
        "discreteness, which no design effect repairs), so a second column names the narrowest interval **as good "
        f"as the oracle**: the same test with each cell's floor lowered to the oracle's coverage minus "
        f"{ORACLE_MARGIN:g}, and the mean to the oracle's mean minus {ORACLE_MARGIN / 2:g}.",
        "",
        _recommendation_markdown(advice),
        "",
        "## Figures",
        "",
        *[f"- `{name}` (and PDF)" for name in figures],
        "",
    ]
    return "\n".join(text)
