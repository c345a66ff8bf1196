"""The differences study's summaries and the numbers of its report's validation and findings."""
from __future__ import annotations

import math

import pandas as pd

from .._performance import MEAN_LEVEL, TOLERANCE_MCSE, binomial_mcse
from ._design import CONFIDENCE, DIFFERENCE_METHODS, FAILS_BELOW, MAX_UNDEFINED, MODE_B_METHODS


def _cell_name(row) -> str:
    if row["part"] == "difference":
        head = f"p_a = {row['p_a']:g}, p_b = {row['p_b']:g}, rho = {row['rho']:g}, between = {row['between']:g}"
    else:
        head = f"p = {row['p']:g}, rho = {row['rho']:g}"
    return f"{head}, K = {int(row['scenarios'])}, m = {int(row['replicas'])}"


def usable_mode_b(mode_b: pd.DataFrame) -> pd.DataFrame:
    """The mode-B rows the summaries use: a method in a cell where it is undefined in at most
    :data:`MAX_UNDEFINED` of the data sets, with ``coverage`` (and its MCSE) among its defined intervals."""
    rows = mode_b[mode_b["undefined"] <= MAX_UNDEFINED].copy()
    rows["coverage"] = rows["coverage_defined"]
    rows["coverage_mcse"] = binomial_mcse(rows["coverage"], rows["nsim"] * (1.0 - rows["undefined"]))
    return rows


def failing(cells: pd.DataFrame) -> pd.Series:
    """Whether each cell fails under the holds rule (:mod:`studies._performance`): its coverage below
    :data:`FAILS_BELOW` by more than :data:`studies._performance.TOLERANCE_MCSE` Monte Carlo standard errors."""
    return cells["coverage"] + TOLERANCE_MCSE * cells["coverage_mcse"] < FAILS_BELOW


def summaries(differences: pd.DataFrame, mode_b: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The summary tables of the study, read off the two cell tables.

    A cell *fails* when its coverage is below :data:`FAILS_BELOW` by more than 2 MCSE (:func:`failing`); a
    method *holds* at a number of scenarios when no cell fails there and its mean coverage is at least
    :data:`studies._performance.MEAN_LEVEL`: the holds rule of :mod:`studies._performance`, with the
    borderline difference cells rerun to an MCSE of at most 0.003 (:func:`run_cell`).

    ``summary``: per method, the cells, mean and lowest coverage (and where), the number and share of
    failing cells, the mean misses and width. ``by_scenarios``: per number of scenarios the same, with
    the lowest cell's MCSE, the cells rerun and whether the method holds. ``failures``: every failing
    cell. ``recommendation``: per part and K, the methods that hold, narrowest first. The difference
    part counts an undefined interval as a miss; the mode-B part uses :func:`usable_mode_b` (its cells
    are not rerun).
    """
    parts = {"difference": differences.assign(part="difference"), "mode_b": usable_mode_b(mode_b).assign(part="mode_b")}
    rows, by_k, fails = [], [], []
    for part, table in parts.items():
        table = table.assign(fails=failing(table))
        for method, cells in table.groupby("method", sort=False):
            worst = cells.loc[cells["coverage"].idxmin()]
            rows.append({"part": part, "method": method, "cells": len(cells),
                         "coverage_of": "all data sets" if part == "difference" else "defined intervals",
                         "mean_coverage": cells["coverage"].mean(), "min_coverage": cells["coverage"].min(),
                         "worst_cell": _cell_name(worst), "cells_failing": int(cells["fails"].sum()),
                         "share_failing": cells["fails"].mean(), "mean_miss_below": cells["miss_below"].mean(),
                         "mean_miss_above": cells["miss_above"].mean(), "mean_width": cells["mean_width"].mean()})
            for k, group in cells.groupby("scenarios"):
                lowest = group.loc[group["coverage"].idxmin()]
                mean_coverage = group["coverage"].mean()
                by_k.append({"part": part, "method": method, "scenarios": int(k), "cells": len(group),
                             "mean_coverage": mean_coverage, "min_coverage": lowest["coverage"],
                             "min_coverage_mcse": lowest["coverage_mcse"], "cells_failing": int(group["fails"].sum()),
                             "cells_rerun": int(group["rerun"].eq(True).sum()),
                             "holds": bool(not group["fails"].any() and mean_coverage >= MEAN_LEVEL),
                             "mean_width": group["mean_width"].mean()})
            for _, cell in cells[cells["fails"]].iterrows():
                fails.append({"part": part, "method": method, "cell_conditions": _cell_name(cell),
                              "coverage": cell["coverage"], "coverage_mcse": cell["coverage_mcse"],
                              "miss_below": cell["miss_below"], "miss_above": cell["miss_above"],
                              "undefined": cell["undefined"]})
    by_scenarios = pd.DataFrame(by_k)
    advice = []
    for (part, k), group in by_scenarios.groupby(["part", "scenarios"], sort=False):
        holding = group[group["holds"]].sort_values("mean_width")
        advice.append({"part": part, "scenarios": int(k),
                       "methods_holding": ", ".join(holding["method"]) if len(holding) else "none",
                       "narrowest": holding["method"].iloc[0] if len(holding) else "none",
                       "its_mean_width": holding["mean_width"].iloc[0] if len(holding) else math.nan,
                       "best_min_coverage": group["min_coverage"].max(),
                       "best_by_min_coverage": group.loc[group["min_coverage"].idxmax(), "method"]})
    failures = pd.DataFrame(fails, columns=["part", "method", "cell_conditions", "coverage", "coverage_mcse",
                                            "miss_below", "miss_above", "undefined"])
    return {"summary": pd.DataFrame(rows), "by_scenarios": by_scenarios,
            "failures": failures.sort_values(["part", "method", "coverage"]).reset_index(drop=True),
            "recommendation": pd.DataFrame(advice)}


def own_lines(differences: pd.DataFrame, tables: dict, own: list[dict]) -> list[dict]:
    """The values of the report's section on a researcher's difference methods (``own``: their ``run-args.json``
    records): each one's row of ``summary``, its mean share of undefined intervals, compare's interval
    (``newcombe_wilson_kish``) on the same cells, and per number of scenarios its lowest coverage and whether
    it holds there (the rule of the recommendation, :func:`summaries`)."""
    summary = tables["summary"].set_index(["part", "method"])
    by_k = tables["by_scenarios"]
    out = []
    for record in own:
        name = record["name"]
        cells = differences[differences["method"] == name]
        per_k = by_k[(by_k["part"] == "difference") & (by_k["method"] == name)]
        out.append({**record, **summary.loc[("difference", name)].to_dict(), "undefined": cells["undefined"].mean(),
                    "compare": _coverage_at(differences, "newcombe_wilson_kish"),
                    "compare_width": differences.loc[differences["method"] == "newcombe_wilson_kish",
                                                     "mean_width"].mean(),
                    "per_k": [{"scenarios": int(r["scenarios"]), "min": r["min_coverage"], "mean": r["mean_coverage"],
                               "holds": bool(r["holds"])} for _, r in per_k.iterrows()]})
    return out


def _coverage_at(table: pd.DataFrame, method: str, **conditions) -> tuple[float, float] | None:
    """The mean and lowest coverage of ``method`` in the cells of ``table`` that meet ``conditions``
    (None: no cells)."""
    part = table[table["method"] == method]
    for key, value in conditions.items():
        part = part[part[key] == value]
    if part.empty:
        return None
    return part["coverage"].mean(), part["coverage"].min()


def _difference_findings(differences: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The numbers of the findings on compare's difference intervals."""
    ks = sorted(differences["scenarios"].unique())
    small, large = ks[0], ks[-1]
    clustered = differences[(differences["rho"] > 0) & (differences["replicas"] > 1)]
    rare = differences[differences[["p_a", "p_b"]].max(axis=1) <= 0.1]
    return {"lines": [{**summary.loc[m].to_dict(), "method": m} for m in DIFFERENCE_METHODS],
            "per_k": [(method, [(k, _coverage_at(differences, method, scenarios=k)) for k in ks])
                      for method in DIFFERENCE_METHODS],
            "small": small, "large": large,
            "clustered": {m: _coverage_at(clustered, m) for m in DIFFERENCE_METHODS},
            "clustered_small": {m: _coverage_at(clustered, m, scenarios=small) for m in DIFFERENCE_METHODS},
            "clustered_large": {m: _coverage_at(clustered, m, scenarios=large) for m in DIFFERENCE_METHODS},
            "rare": [(m, _coverage_at(rare, m)) for m in DIFFERENCE_METHODS],
            "misses": [(m, summary.loc[m, "mean_miss_below"], summary.loc[m, "mean_miss_above"])
                       for m in DIFFERENCE_METHODS]}


def _not_repaired(usable: pd.DataFrame) -> dict | None:
    """The cells where the predictive-value correction's cluster-robust interval fails (:func:`failing`; None if
    none does), how many of them fail with the Wald interval already without clustering."""
    pv = usable[usable["method"] == "predictive_values_cluster"]
    below = pv[failing(pv)]
    if not len(below):
        return None
    wald = usable[(usable["method"] == "predictive_values_wald") & (usable["rho"] == 0)]
    plain = wald.assign(fails=failing(wald)).set_index(["p", "scenarios", "replicas"])["fails"]
    keys = list(zip(below["p"], below["scenarios"], below["replicas"]))
    already = sum(1 for key in keys if key in plain.index and bool(plain.loc[key]))
    conversations = (below["scenarios"] * below["replicas"]).astype(int)
    return {"cells": len(below), "conversations": conversations.max(), "already": already,
            "miss_below": below["miss_below"].mean(), "miss_above": below["miss_above"].mean()}


def _mode_b_findings(mode_b: pd.DataFrame) -> dict | None:
    """The numbers of the findings on the mode-B correction (None where no cell is usable)."""
    usable = usable_mode_b(mode_b)
    if usable.empty:
        return None
    subsets = {"replicated": usable[(usable["rho"] > 0) & (usable["replicas"] > 1)],
               "single": usable[usable["replicas"] == 1],
               "strongest": usable[(usable["rho"] == usable["rho"].max())
                                   & (usable["replicas"] == usable["replicas"].max())],
               "few": usable[usable["scenarios"] == usable["scenarios"].min()]}
    left = mode_b[mode_b["undefined"] > MAX_UNDEFINED]
    sizes = (left["scenarios"] * left["replicas"]).astype(int)
    return {**{name: {m: _coverage_at(rows, m) for m in MODE_B_METHODS} for name, rows in subsets.items()},
            "rho": usable["rho"].max(), "replicas": int(usable["replicas"].max()),
            "scenarios": int(usable["scenarios"].min()), "not_repaired": _not_repaired(usable),
            "left": len(left), "cells": len(mode_b), "smallest": sizes.min() if len(sizes) else 0,
            "largest": sizes.max() if len(sizes) else 0}


def _findings(differences: pd.DataFrame, mode_b: pd.DataFrame, tables: dict) -> dict:
    """The numbers of the findings of a full run (the sentences are the template's)."""
    summary = tables["summary"].set_index("method")
    return {"differences": _difference_findings(differences, summary),
            "mode_b_lines": [{**summary.loc[m].to_dict(), "method": m} for m in MODE_B_METHODS if m in summary.index],
            "mode_b": _mode_b_findings(mode_b)}


def _validation(differences: pd.DataFrame, mode_b: pd.DataFrame) -> dict:
    """The numbers of the checks whose answer is known: unclustered data, where every method should be near nominal."""
    plain = differences[(differences["rho"] == 0) & (differences["replicas"] == 1)
                        & (differences["scenarios"] == differences["scenarios"].max())]
    independent = []
    for method in DIFFERENCE_METHODS:
        part = plain[plain["method"] == method]
        if len(part):
            z = (part["coverage"] - CONFIDENCE) / binomial_mcse(CONFIDENCE, part["nsim"])
            independent.append({"method": method, "scenarios": int(part["scenarios"].iloc[0]),
                                "coverage": list(part["coverage"]), "z": list(z)})
    gap = None
    single = usable_mode_b(mode_b)
    single = single[single["replicas"] == 1]
    if len(single):
        pv = single.pivot_table(index="cell", columns="method", values="coverage")
        if {"predictive_values_wald", "predictive_values_cluster"} <= set(pv.columns):
            gap = (pv["predictive_values_cluster"] - pv["predictive_values_wald"])
    bias = mode_b[(mode_b["correction"] == "predictive_values") & (mode_b["undefined"] == 0)]
    z = (bias["bias"] / bias["bias_mcse"]).abs() if len(bias) else None
    return {"independent": independent,
            "gap": None if gap is None else {"low": gap.min(), "high": gap.max(), "cells": len(gap)},
            "bias": None if z is None else {"within": (z <= 3).sum(), "cells": len(z), "largest": z.max()}}
