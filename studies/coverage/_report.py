"""Summaries and ``report.md`` of the coverage study, read off the table ``coverage.csv``.

Every summary takes a cell's **exact** coverage, misses and width where they are computable
and the Monte Carlo ones elsewhere (:func:`summary_cells`); the Monte Carlo value beside an
exact one only checks the simulation (:func:`validation`).

An interval **holds** 95% over a set of cells (:func:`recommendation`) when it was evaluated in
every one of them, its mean coverage is at least :data:`MEAN_LEVEL` and no cell lies below
:data:`FLOOR` by more than :data:`TOLERANCE_MCSE` Monte Carlo standard errors (0 for an exact
value). The borderline Monte Carlo cells were rerun before (:mod:`._coverage`; :func:`rerun_cells` counts them): a
method within the tolerance there has an MCSE of at most ``RERUN_MCSE``, not the 0.0057 of 2000 data sets.
Among the intervals that hold, the narrowest (mean width relative to Wilson-Kish with
the true rho in the same cell) is recommended. Where even that oracle fails (the Wilson
interval's own dips with few effective observations, which no design effect repairs), a
second rule asks for an interval **as good as the oracle**: the same test with the floor of
each cell lowered to the oracle's coverage there minus :data:`ORACLE_MARGIN`, and the mean to
the oracle's mean minus :data:`ORACLE_MARGIN` / 2.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.stats import MAX_UNEQUAL_STATES, RHO_BOUND_LEVEL, SCENARIO_RANGES, format_number
from escalation.figures import counted

from .._performance import MEAN_LEVEL, binomial_mcse
from .._tables import markdown_table
from .._templates import render
from ._coverage import CHUNK, FLOOR, ORACLES, RERUN_MCSE, TOLERANCE_MCSE, UNEQUAL_BOOTSTRAP_MAX_K

__all__ = ["summary_cells", "summary_by_method", "recommendation", "interval_choice", "aggregate", "by_range",
           "misses", "validation", "rerun_cells", "report_markdown", "own_methods", "SMOKE_FINDINGS",
           "OWN_DESIGN_FINDINGS", "FLOOR", "MEAN_LEVEL", "TOLERANCE_MCSE", "ORACLE_MARGIN", "SCENARIO_RANGES"]

ORACLE_MARGIN = 0.01
KEYS = ["estimand", "p", "rho", "scenarios", "replicas", "size_cv"]
ORACLE = "wilson-kish-true-rho"
#: The findings of a smoke run: its grid lacks most of the conditions the findings of the full study are about.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its grid holds a few of the study's conditions and few data sets per "
                  "cell. The tables below show what this run computed.")
#: The findings of a run on a researcher's grid or generator: the study's findings are about its own design.
OWN_DESIGN_FINDINGS = ("The study's findings are drawn from its own grid and model; this run has another grid or "
                       "another data-generating model, so the tables below (and the section on the researcher's "
                       "methods, where there are some) are its findings.")

_NAMES = {
    "wilson": "Wilson, ignores clustering (oracle baseline)",
    "wilson-kish-true-rho": "Wilson-Kish with the true rho (oracle)",
    "wilson-kish": "Wilson-Kish, rho estimated (the paper's, SPEC 5)",
    "wilson-kish-t": "Wilson-Kish with t on K - 1 df",
    "wilson-kish-ucb": f"Wilson-Kish with the {RHO_BOUND_LEVEL:g} upper bound of rho",
    "wilson-cluster-t": "Wilson at the cluster variance's effective size, t on K - 1 df",
    "korn-graubard": "Korn-Graubard, Clopper-Pearson at the df-adjusted effective size",
    "beta-binomial-profile": "beta-binomial profile likelihood",
    "beta-binomial-bayes": "beta-binomial hierarchical Bayes, Jeffreys mu, uniform rho",
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


def _methods(cells: pd.DataFrame) -> list[str]:
    """The methods of ``cells``: the study's in their order, then a researcher's in the order they were given."""
    present = set(cells["method"])
    return [m for m in _NAMES if m in present] + [m for m in dict.fromkeys(cells["method"]) if m not in _NAMES]


def summary_by_method(cells: pd.DataFrame) -> pd.DataFrame:
    """Per method, over every cell where it was evaluated (both estimands).

    Columns: ``method, cells, exact_share`` (share of cells with an exact value),
    ``mean_coverage, min_coverage, worst_cell, share_below_0.93, miss_low, miss_high``
    (mean shares of intervals wholly below and wholly above the truth), ``mean_width`` and
    ``relative_width`` (mean over cells of the width relative to the true-rho oracle).
    """
    rows = []
    for method in _methods(cells):
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
    return {"mean": mean, "min": coverage.min(), "lowest_bound": lowest.min(), "cells": len(part),
            "complete": complete, "failing": failing,
            "holds": bool(complete and mean >= MEAN_LEVEL and lowest.min() >= FLOOR),
            "as_oracle": bool(complete and mean >= min(MEAN_LEVEL, oracle.mean() - ORACLE_MARGIN / 2)
                              and (lowest >= floor).all()),
            "width": part["summary_width"].mean(), "relative": part["relative_width"].mean()}


def _short(name: str, judged: dict) -> str:
    return (f"{name} (mean {format_number(judged['mean'])}, min {format_number(judged['min'])}, relative width "
            f"{format_number(judged['relative'], 2)})")


def _boundary_distance(p: pd.Series) -> pd.Series:
    """The true value's distance from the nearer boundary, ``min(p, 1 - p)``, rounded to 12 decimals: the grid's
    distances exactly (``1 - 0.98`` is 0.020000000000000018, which a comparison with 0.02 would leave out)."""
    return np.minimum(p, 1 - p).round(12)


def _where(failing: pd.DataFrame) -> str:
    """'5 cells below 0.93: distance from the boundary 0.01, 0.02; rho 0.2, 0.5; K 100, 200'."""
    values = lambda column: ", ".join(f"{v:g}" for v in sorted(set(column)))  # noqa: E731
    distance = _boundary_distance(failing["p"])
    return (f"{counted(len(failing), 'cell')} below {FLOOR:g}: distance from the boundary {values(distance)}; "
            f"rho {values(failing['rho'])}; K {values(failing['scenarios'])}")


def _groups(cells: pd.DataFrame):
    """``(replicas group, scenarios range, cells of the group, oracle coverage by cell, {method: _judge})`` of each
    group of the recommendation: every method but the oracles, the study's first, then a researcher's."""
    for group in ("m = 1", "m > 1"):
        for label, _, _ in SCENARIO_RANGES:
            part = cells[(cells["replicas_group"] == group) & (cells["scenarios_range"] == label)]
            if part.empty:
                continue
            oracle = part[part["method"] == ORACLE].set_index(KEYS)["summary_coverage"]
            candidates = [m for m in _methods(part) if m not in ORACLES]
            yield group, label, oracle, {m: _judge(part[part["method"] == m], oracle, len(oracle)) for m in candidates}


def recommendation(cells: pd.DataFrame) -> pd.DataFrame:
    """Which interval a user can choose (or a researcher's own) holds 95%, by replicas (m = 1, m > 1) and range
    of scenarios.

    Columns: ``replicas, scenarios, cells``; ``oracle_mean, oracle_min`` (Wilson-Kish with the
    true rho over the same cells); ``recommended`` (the narrowest method that holds, or ``none
    holds``), its ``mean_coverage, min_coverage, mean_width, relative_width``; ``also_hold``
    (the other methods that hold, with their relative width); ``as_good_as_oracle`` (the
    narrowest method that meets the second rule, with its mean, minimum and relative width) and
    ``closest`` (when neither rule is met: the method with the highest minimum coverage, and the
    conditions of the cells where it fails). The rules are in the module docstring.
    """
    rows = []
    for group, label, oracle, judged in _groups(cells):
        narrowest = lambda rule: sorted((m for m, j in judged.items() if j[rule]),  # noqa: E731
                                        key=lambda m: judged[m]["relative"])
        holding, as_oracle = narrowest("holds"), narrowest("as_oracle")
        row = {"replicas": group, "scenarios": label, "cells": len(oracle), "oracle_mean": oracle.mean(),
               "oracle_min": oracle.min(), "recommended": holding[0] if holding else "none holds"}
        best = judged[holding[0]] if holding else dict.fromkeys(("mean", "min", "width", "relative"), np.nan)
        row.update({"mean_coverage": best["mean"], "min_coverage": best["min"], "mean_width": best["width"],
                    "relative_width": best["relative"],
                    "also_hold": "; ".join(f"{m} ({format_number(judged[m]['relative'], 2)})" for m in holding[1:]),
                    "as_good_as_oracle": _short(as_oracle[0], judged[as_oracle[0]]) if as_oracle else "",
                    "closest": ""})
        if not holding and not as_oracle:
            near = max(judged, key=lambda m: (judged[m]["complete"], judged[m]["min"]))
            row["closest"] = f"{_short(near, judged[near])}; {_where(judged[near]['failing'])}"
        rows.append(row)
    return pd.DataFrame(rows)


def interval_choice(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per design group and method: what ``--interval auto`` reads (``estimators.choose_interval``).

    Columns: ``replicas, scenarios, method, cells, mean_coverage, min_coverage, lowest_bound`` (the lowest
    cell's coverage plus :data:`TOLERANCE_MCSE` MCSE), ``holds`` (the rule of the module docstring),
    ``relative_width`` and ``recommended`` (the narrowest method that holds: the row of
    :func:`recommendation`). The study's methods only, not the oracles or a researcher's.
    """
    rows = []
    for group, label, _, judged in _groups(cells):
        study = {m: j for m, j in judged.items() if m in _NAMES}
        holding = sorted((m for m, j in study.items() if j["holds"]), key=lambda m: study[m]["relative"])
        rows += [{"replicas": group, "scenarios": label, "method": m, "cells": j["cells"],
                  "mean_coverage": j["mean"], "min_coverage": j["min"], "lowest_bound": j["lowest_bound"],
                  "holds": j["holds"], "relative_width": j["relative"],
                  "recommended": bool(holding) and m == holding[0]}
                 for m, j in study.items()]
    return pd.DataFrame(rows)


def own_methods(cells: pd.DataFrame, own: list[dict]) -> list[dict]:
    """The values of the report's section on a researcher's methods (``own``: their ``run-args.json`` records).

    Per method: where it comes from, the share of its cells with an exact value, its mean and lowest
    coverage (and the worst cell), the mean misses below and above, the mean share of undefined intervals
    (``1 - coverage - misses``), the width relative to the true-rho oracle; beside it the same of the
    paper's interval (``wilson-kish``) where that ran; and per group of the recommendation whether it
    holds (or is as good as the oracle) by the same rules as the study's methods, with its mean and lowest.
    """
    judged = list(_groups(cells))
    out = []
    for record in own:
        name = record["name"]
        part = cells[cells["method"] == name]
        undefined = (1 - part["summary_coverage"] - part["summary_miss_low"] - part["summary_miss_high"]).clip(lower=0)
        out.append({**record, "cells": len(part), "exact_share": (part["source"] == "exact").mean(),
                    "stats": _stats(part), "below": (part["summary_coverage"] < FLOOR).mean(),
                    "miss_low": part["summary_miss_low"].mean(), "miss_high": part["summary_miss_high"].mean(),
                    "undefined": undefined.mean(), "relative_width": part["relative_width"].mean(),
                    "paper": _stats(cells[cells["method"] == "wilson-kish"]),
                    "groups": [{"replicas": group, "scenarios": label, "holds": j[name]["holds"],
                                "as_oracle": j[name]["as_oracle"], "mean": j[name]["mean"], "min": j[name]["min"],
                                "relative": j[name]["relative"],
                                "where": "" if j[name]["holds"] or j[name]["failing"].empty
                                else _where(j[name]["failing"])}
                               for group, label, _, j in judged if name in j]})
    return out


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


def validation(table: pd.DataFrame) -> dict | None:
    """Monte Carlo against exact coverage where both exist: the z scores ``(MC - exact) / MCSE``.

    Methods that give the very same intervals in a cell (all Wilson-type methods when
    ``m = 1``; Wilson and the oracle when rho = 0) are one comparison, not several: the same
    Monte Carlo coverage and the same exact one to 12 decimals (the enumeration's rounding is
    about 1e-13, :mod:`estimators.stats._exact`). The MCSE is computed from the exact value.

    Returns
    -------
    dict or None
        ``comparisons``, ``within_3`` (count with ``|z| <= 3``), ``expected_outside`` (0.27%
        of the comparisons), ``mean_z``, ``sd_z`` and ``worst`` (the row of the largest
        ``|z|``, with its ``z``); None without an exact value (a generator other than the beta-binomial).
    """
    part = table[table["exact_coverage"].notna() & table["coverage"].notna()]
    if part.empty:
        return None
    part = part[~part.assign(exact=part["exact_coverage"].round(12)).duplicated(KEYS + ["coverage", "exact"])].copy()
    se = binomial_mcse(part["exact_coverage"].clip(0.0, 1.0), part["nsim"])  # the enumeration may exceed 1 by 1e-13
    part["z"] = ((part["coverage"] - part["exact_coverage"]) / se.where(se > 0)).fillna(0.0)
    worst = part.loc[part["z"].abs().idxmax()]
    return {"comparisons": len(part), "within_3": int((part["z"].abs() <= 3).sum()),
            "expected_outside": 0.0027 * len(part), "mean_z": float(part["z"].mean()),
            "sd_z": float(part["z"].std(ddof=1)), "worst": worst}


def rerun_cells(table: pd.DataFrame) -> dict:
    """The cells of ``coverage.csv`` that were rerun (column ``rerun``): ``cells`` (how many), ``of`` (of how many
    cells), ``nsim_min`` and ``nsim_max`` (their data sets, the bootstraps' aside when they ran on fewer)."""
    cells = table.groupby(KEYS, sort=False)
    rerun = cells["rerun"].any()
    nsim = table[table["rerun"].astype(bool)].groupby(KEYS, sort=False)["nsim"].max()
    return {"cells": int(rerun.sum()), "of": len(rerun), "nsim_min": int(nsim.min()) if len(nsim) else 0,
            "nsim_max": int(nsim.max()) if len(nsim) else 0}


def _stats(part: pd.DataFrame) -> str:
    """'mean 0.948, lowest 0.912 (<cell>)' of the summary coverage in ``part``."""
    if part.empty:
        return "no cells"
    worst = part.loc[part["summary_coverage"].idxmin()]
    return (f"mean {format_number(part['summary_coverage'].mean())}, lowest {format_number(worst['summary_coverage'])} "
            f"({_cell(worst)})")


def _sides(part: pd.DataFrame) -> str:
    """'0.037 towards the boundary / 0.004 away': the misses between the truth and the nearer boundary, and beyond.

    For ``p_u`` near 0 the boundary side is below the truth, for ``pi`` near 1 above it.
    """
    low_boundary = part["p"] < 0.5
    toward = part["summary_miss_low"].where(low_boundary, part["summary_miss_high"])
    away = part["summary_miss_high"].where(low_boundary, part["summary_miss_low"])
    return f"{format_number(toward.mean())} towards the boundary / {format_number(away.mean())} away"


def _spreads(cells: pd.DataFrame) -> dict:
    """The size spreads (cells with m > 1) and, per method and spread, the mean, lowest and share below the
    floor of the coverage (None where the method has no such cell)."""
    clustered = cells[cells["replicas"] > 1]
    spreads = list(dict.fromkeys(clustered.sort_values("size_cv")["spread"]))
    rows = []
    for method in _methods(clustered):
        parts = []
        for spread in spreads:
            part = clustered[(clustered["method"] == method) & (clustered["spread"] == spread)]["summary_coverage"]
            parts.append({"mean": part.mean(), "min": part.min(), "below": (part < FLOOR).mean()} if len(part)
                         else None)
        rows.append({"method": method, "parts": parts})
    return {"names": spreads, "rows": rows}


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


def _findings(cells: pd.DataFrame, table: pd.DataFrame) -> dict:
    """The values of the findings (each summary of coverage a phrase of :func:`_stats`)."""
    by = {m: cells[cells["method"] == m] for m in _NAMES}
    top_rho, top_m = cells["rho"].max(), cells["replicas"].max()
    few = lambda d: d[d["scenarios"] < 10]  # noqa: E731
    unclustered = lambda d: d[(d["rho"] == 0) | (d["replicas"] == 1)]  # noqa: E731
    clustered = lambda d: d[(d["rho"] == top_rho) & (d["replicas"] == top_m)]  # noqa: E731
    rare = lambda d: d[_boundary_distance(d["p"]) <= 0.02]  # noqa: E731
    equal, spread = (lambda d: d[(d["size_cv"] == 0) & (d["replicas"] > 1)]), (lambda d: d[d["size_cv"] > 0])
    oracle, paper = by[ORACLE], by["wilson-kish"]

    def concentrated(d):
        return d[(_boundary_distance(d["p"]) <= 0.02) & (d["rho"] >= 0.2) & (d["replicas"] > 1)
                 & (d["scenarios"] >= 100)]

    values = {"top_rho": top_rho, "top_m": top_m, "wilson_unclustered": _stats(unclustered(by["wilson"])),
              "wilson_clustered": _stats(clustered(by["wilson"])), "oracle_equal": _stats(equal(oracle)),
              "oracle_spread": _stats(spread(oracle)), "oracle_rare": _stats(rare(oracle)), "paper": _stats(paper),
              "paper_few": _stats(few(paper)), "paper_rare": _stats(rare(paper)),
              "paper_spread": _stats(spread(paper)), "concentrated": [], "oracle_concentrated": None}
    if not concentrated(paper).empty:
        values["concentrated"] = [{"method": m, "stats": _stats(concentrated(by[m])),
                                   "sides": _sides(concentrated(by[m]))}
                                  for m in ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb", "wilson-cluster-t",
                                            "korn-graubard")]
        values["oracle_concentrated"] = _stats(concentrated(oracle))
    values["alternatives"] = [{"name": _NAMES[m], "stats": _stats(by[m]), "few": _stats(few(by[m])),
                               "relative_width": by[m]["relative_width"].mean()}
                              for m in ("wilson-kish-t", "wilson-kish-ucb", "wilson-cluster-t", "korn-graubard",
                                        "beta-binomial-profile", "beta-binomial-bayes")]
    values["bootstraps"] = [_bootstrap_finding(method, by[method], few) for method in BOOTSTRAPS]
    not_run = int(table[table["method"].isin(BOOTSTRAPS)]["coverage"].isna().sum())
    values["not_run_each"] = not_run // 2
    values["rare_sides"] = [{"method": m, "sides": _sides(rare(by[m]))} for m in _NAMES]
    return values


BOOTSTRAPS = ("bootstrap-percentile", "bootstrap-bca")


def _bootstrap_finding(method: str, d: pd.DataFrame, few) -> dict:
    """A bootstrap's coverage with few and with many scenarios, and its largest share of undefined intervals."""
    undefined = (1 - d["summary_coverage"] - d["summary_miss_low"] - d["summary_miss_high"]).clip(lower=0)
    worst = d.loc[undefined.idxmax()] if undefined.max() > 0 else None
    return {"name": _NAMES[method], "few": _stats(few(d)), "many": _stats(d[d["scenarios"] >= 100]),
            "undefined": undefined.max() if worst is not None else None,
            "worst_cell": _cell(worst) if worst is not None else None}


def report_markdown(table: pd.DataFrame, *, cells: pd.DataFrame, summary: pd.DataFrame, advice: pd.DataFrame,
                    seed: int, figures: list[str], confidence: float, n_resamples: int, design: pd.DataFrame,
                    smoke: bool, own: list[dict] | None = None, generator=None, user_grid: bool = False,
                    rerun: bool = False) -> str:
    """The text of ``report.md`` for the coverage table ``table`` (the rows of ``coverage.csv``) and its ``design``:
    the template ``coverage/report.md.j2`` filled with the values computed here.

    ``cells`` is :func:`summary_cells` of ``table``; ``summary`` and ``advice`` are the tables
    written beside the report, :func:`summary_by_method` and :func:`recommendation` of ``cells``.
    A ``smoke`` run's findings are :data:`SMOKE_FINDINGS`. A researcher's: ``own`` (the records of their
    methods in ``run-args.json``: a section of their own, :func:`own_methods`), ``generator`` (its record there;
    None for the beta-binomial) and ``user_grid``; a run on their grid or generator states
    :data:`OWN_DESIGN_FINDINGS` in place of the study's findings. ``rerun``: whether the borderline cells were
    rerun (:func:`rerun_cells` says which).
    """
    check = validation(table)
    nsim = int(design["nsim"].iloc[0])
    boot = sorted(set(design["nsim_bootstrap"]) - {0, nsim})
    listed = lambda values: "{" + ", ".join(f"{v:g}" for v in sorted(values)) + "}"  # noqa: E731
    grid = {c: listed(design[c].unique()) for c in ("rho", "scenarios")}
    truths = {e: listed(design.loc[design["estimand"] == e, "p"].unique()) for e in design["estimand"].unique()}
    grid.update({e: truths.get(e, "{}") for e in ("p_u", "pi")})
    size_designs = ", ".join(f"(m = {m}, {_spread(cv)})" for m, cv in
                             sorted({(int(a), float(b)) for a, b in zip(design["replicas"], design["size_cv"])}))
    own_design = user_grid or generator is not None
    estimands = " and ".join(f"`{e}`" for e in ("p_u", "pi") if e in set(design["estimand"]))
    drawn = ("beta-binomial" if generator is None else generator if isinstance(generator, str)
             else f"the run in {generator['from_run']}" if "from_run" in generator else f"`{generator['function']}`")
    return render(
        "coverage/report.md.j2", seed=seed, nsim=nsim, boot=", ".join(map(str, boot)) or nsim,
        n_resamples=n_resamples, confidence=confidence, cells=len(design), grid=grid, size_designs=size_designs,
        sizes=_sizes_markdown(design), check=check, worst_cell=_cell(check["worst"]) if check else None, smoke=smoke,
        SMOKE_FINDINGS=SMOKE_FINDINGS, OWN_DESIGN_FINDINGS=OWN_DESIGN_FINDINGS,
        find=None if smoke or own_design else _findings(cells, table),
        UNEQUAL_BOOTSTRAP_MAX_K=UNEQUAL_BOOTSTRAP_MAX_K, summary=summary.to_dict(orient="records"),
        share_below=f"share_below_{FLOOR:g}", spreads=_spreads(cells), advice=advice.to_dict(orient="records"),
        figures=figures, FLOOR=FLOOR, MEAN_LEVEL=MEAN_LEVEL, TOLERANCE_MCSE=TOLERANCE_MCSE, RERUN_MCSE=RERUN_MCSE,
        rerun=rerun, reruns=rerun_cells(table), CHUNK=CHUNK, MAX_UNEQUAL_STATES=MAX_UNEQUAL_STATES,
        ORACLE_MARGIN=ORACLE_MARGIN, RHO_BOUND_LEVEL=RHO_BOUND_LEVEL, user_grid=user_grid, generator=generator,
        drawn=drawn, own=own_methods(cells, own or []), estimands=estimands,
        from_run=isinstance(generator, dict) and "from_run" in generator)
