"""The sample-size study's summaries and report: the validation tables from the long results and the
numbers of ``report.md``."""
from __future__ import annotations

import numpy as np
import pandas as pd

from escalation.estimators.stats import format_number

from .._templates import render
from ._simulators import PLANNED_TESTS, SIZE_REPLICATIONS


def _wide(part: pd.DataFrame) -> pd.DataFrame:
    wide = part.pivot_table(index=["cell", "method"], columns="stat", values=["est", "mcse"], sort=False)
    wide.columns = [stat if kind == "est" else f"{stat}_mcse" for kind, stat in wide.columns]
    return wide.reset_index()


def summarise_validation(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Wide tables of the checks, one row per cell and method.

    ``intervals``: coverage, misses and half-widths with MCSE, and the checks
    ``half_width_ok`` (median half-width <= h) and ``coverage_ok`` (coverage >= nominal -
    2 MCSE). ``power``: the realised power with MCSE, ``planned_for`` (the plan was made for
    this test, :data:`PLANNED_TESTS`) and ``power_ok`` (>= target - 2 MCSE). ``size``: the
    rejection rate under the null with MCSE, ``size_ok`` (within ``alpha +- 2 MCSE``), and
    ``liberal`` / ``conservative`` (above / below that band).
    """
    out = {}
    cells = long.groupby("cell").first()
    part = long[long["kind"].isin(["rate", "pi"])]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["kind", "interval", "p", "rho", "replicas", "size_cv", "scenarios",
                                                  "half_width", "planned", "confidence"]]
        design = design.rename(columns={"planned": "planned_half_width"})
        wide = _wide(part).join(design, on="cell")
        if "exact_coverage" not in wide:
            wide["exact_coverage"] = np.nan
        wide["half_width_ok"] = wide["median_half_width"] <= wide["half_width"]
        wide["coverage_ok"] = wide["coverage"] >= wide["confidence"] - 2 * wide["coverage_mcse"]
        stats_ = ["coverage", "coverage_mcse", "exact_coverage", "miss_below", "miss_below_mcse", "miss_above",
                  "miss_above_mcse", "median_half_width", "median_half_width_mcse", "mean_half_width",
                  "mean_half_width_mcse", "half_width_ok", "coverage_ok"]
        out["intervals"] = wide[["cell", *design.columns, "method", *stats_]]
    part = long[long["kind"] == "difference"]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["p", "p_b", "rho", "correlation", "design", "replicas", "size_cv",
                                                  "test", "scenarios", "power", "planned"]]
        design = design.rename(columns={"p": "p_a", "power": "power_target", "planned": "planned_power"})
        wide = _wide(part).rename(columns={"power": "realised_power", "power_mcse": "realised_power_mcse"})
        wide = wide.join(design, on="cell")
        wide["planned_for"] = [method in PLANNED_TESTS[(d, t)]
                               for method, d, t in zip(wide["method"], wide["design"], wide["test"])]
        wide["power_ok"] = wide["realised_power"] >= wide["power_target"] - 2 * wide["realised_power_mcse"]
        out["power"] = wide[["cell", *design.columns, "method", "planned_for", "realised_power",
                             "realised_power_mcse", "power_ok"]]
    part = long[long["kind"] == "size"]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["p", "rho", "correlation", "design", "replicas", "size_cv",
                                                  "scenarios", "alpha"]]
        wide = _wide(part).join(design, on="cell")
        band = 2 * wide["size_mcse"]
        wide["liberal"] = wide["size"] > wide["alpha"] + band
        wide["conservative"] = wide["size"] < wide["alpha"] - band
        wide["size_ok"] = ~(wide["liberal"] | wide["conservative"])
        out["size"] = wide[["cell", *design.columns, "method", "size", "size_mcse", "size_ok", "liberal",
                            "conservative"]]
    return out


def _failures(table: pd.DataFrame, check: str, describe, *, passed: bool = True) -> str:
    """The rows that fail ``check`` (``passed=False``: the rows where ``check`` is true), described; or "none"."""
    flags = table[check].astype(bool)
    failed = table[~flags if passed else flags]
    if failed.empty:
        return "none"
    return "; ".join(describe(row) for _, row in failed.iterrows())


def _z_or_t(size: pd.DataFrame, power: pd.DataFrame | None) -> list[dict] | None:
    """The values of the paragraph on z against t: the highest size of each pair of tests with few scenarios, and
    the price in K; None without the cells of p = 0.15 and m = 5."""
    dense = size[(size["p"] == 0.15) & (size["replicas"] == 5)]
    if dense.empty:
        return None
    pairs = []
    for z_test, t_test in (("paired_z", "paired_t"), ("cluster_z", "cluster_t"), ("donner_klar", "donner_klar_t")):
        pair = dense[dense["method"].isin([z_test, t_test])]
        if pair.empty:
            continue
        few = pair[pair["scenarios"] <= 12].groupby("method")["size"].max()
        ks = [k for k in (24, 50, 100) if k in set(pair["scenarios"])]
        at = {k: pair[pair["scenarios"] == k].groupby("method")["size"].max() for k in ks}

        def rates(test):
            return ", ".join([f"{format_number(few.get(test))} with K <= 12"]
                             + [f"{format_number(at[k].get(test))} at K = {k}" for k in ks])
        values = {"z": z_test, "t": t_test, "z_rates": rates(z_test), "t_rates": rates(t_test), "extra": None}
        if power is not None and not power.empty:
            design = "paired" if z_test.startswith("paired") else "unpaired"
            plans = power[power["design"] == design].groupby("cell").first()
            by_test = plans.groupby(["p_a", "p_b", "rho", "replicas", "size_cv", "test"])["scenarios"].first()
            by_test = by_test.unstack("test")
            if {"t", "z"} <= set(by_test.columns):
                extra = (by_test["t"] - by_test["z"]).dropna().astype(int)
                values.update(design=design, extra_max=extra.max(),
                              extra=(f"{extra.min()}" if extra.min() == extra.max()
                                     else f"{extra.min()} to {extra.max()}"))
        pairs.append(values)
    return pairs


def _describe_interval(row) -> str:
    exact = "" if np.isnan(row["exact_coverage"]) else f" (exact {format_number(row['exact_coverage'], 4)})"
    return (f"{row['kind']} p={row['p']:g} rho={row['rho']:g} m={row['replicas']} cv={row['size_cv']:g} "
            f"h={row['half_width']:g} K={row['scenarios']}: median {format_number(row['median_half_width'], 4)}, "
            f"coverage {format_number(row['coverage'], 4)}{exact}")


def _describe_size(row) -> str:
    return (f"{row['design']} p={row['p']:g} rho={row['rho']:g} m={row['replicas']} cv={row['size_cv']:g} "
            f"K={row['scenarios']}: {format_number(row['size'], 4)}")


def _describe_power(row) -> str:
    return (f"{row['design']} {row['p_a']:g}->{row['p_b']:g} rho={row['rho']:g} m={row['replicas']} "
            f"cv={row['size_cv']:g} K={row['scenarios']}: {format_number(row['realised_power'], 4)} "
            f"(MCSE {format_number(row['realised_power_mcse'], 4)})")


def _plans(tables: dict[str, pd.DataFrame]) -> dict:
    """The values of the section on plans: K at the lowest and highest rho, by replicas and by size spread."""
    grid, by_m = tables["scenarios_grid"], tables["scenarios_by_replicas"]
    at = grid[grid["p"] == 0.1].set_index("rho")["scenarios"]
    values = {"at": {"first_k": at.iloc[0], "first_rho": at.index[0], "last_k": at.iloc[-1], "last_rho": at.index[-1]},
              "by_m": [{"rho": rho, "first_k": int(part.iloc[0]["scenarios"]), "first_m": int(part.iloc[0]["replicas"]),
                        "last_k": int(part.iloc[-1]["scenarios"]), "last_m": int(part.iloc[-1]["replicas"]),
                        "floor": part.iloc[0]["floor"], "floor_wilson": part.iloc[0]["floor_wilson"]}
                       for rho, part in by_m.groupby("rho")],
              "by_cv": None}
    by_cv = tables.get("scenarios_by_size_cv")
    if by_cv is not None:
        chosen = lambda method: by_cv[(by_cv["method"] == method) & (by_cv["replicas"] == 10)  # noqa: E731
                                      & (by_cv["rho"] == 0.1)].set_index("size_cv")["scenarios"]
        values["by_cv"] = {"k": list(chosen("wilson-kish").items()), "kt": list(chosen("wilson-kish-t").values)}
    return values


def _interval_checks(intervals: pd.DataFrame) -> list[dict]:
    """Per interval method and size spread: the plans, how many pass each check, and those that fail."""
    return [{"method": method, "unequal": unequal, "plans": len(part),
             "half_width_ok": int(part["half_width_ok"].sum()), "coverage_ok": int(part["coverage_ok"].sum()),
             "mean_coverage": part["coverage"].mean(),
             "lowest": part["coverage"].min(), "lowest_exact": part["exact_coverage"].min(),
             "wide": _failures(part, "half_width_ok", _describe_interval),
             "short": _failures(part, "coverage_ok", _describe_interval)}
            for (method, unequal), part in intervals.groupby(["method", intervals["size_cv"] > 0], sort=False)]


def _size_checks(size: pd.DataFrame, power: pd.DataFrame | None) -> dict:
    """The values of the section on the size of the tests."""
    tests = []
    for method, part in size.groupby("method", sort=False):
        conservative = part[part["conservative"].astype(bool)]
        tests.append({"method": method, "held": int(part["size_ok"].sum()), "cells": len(part),
                      "liberal": int(part["liberal"].sum()), "conservative": int(part["conservative"].sum()),
                      "lowest": part["size"].min(), "highest": part["size"].max(),
                      "highest_few": part[part["scenarios"] <= 12]["size"].max(),
                      "too_liberal": _failures(part, "liberal", _describe_size, passed=False),
                      "sparse": int(((conservative["p"] == 0.05) | (conservative["replicas"] == 1)).sum())})
    ks = sorted(size["scenarios"].unique())
    by_k = []
    for title, part_of in (("every cell", size),
                           ("p = 0.15 and m = 5 (errors enough for the tests' large-sample law)",
                            size[(size["p"] == 0.15) & (size["replicas"] == 5)])):
        rows = []
        for method, part in part_of.groupby("method", sort=False):
            by_scenarios = part.groupby("scenarios")["size"]
            rows.append({"method": method, "rates": list(zip(by_scenarios.mean().reindex(ks),
                                                             by_scenarios.max().reindex(ks)))})
        by_k.append({"title": title, "rows": rows})
    return {"alpha": size["alpha"].iloc[0], "mcse": size["size_mcse"].median(), "tests": tests, "ks": ks,
            "by_k": by_k}


def _power_checks(power: pd.DataFrame) -> list[dict]:
    """Per test, its power on the plans made for it."""
    planned = power[power["planned_for"].astype(bool)]
    return [{"method": method, "plans": len(part), "power_ok": int(part["power_ok"].sum()),
             "k_min": int(part["scenarios"].min()), "k_max": int(part["scenarios"].max()),
             "lowest": part["realised_power"].min(), "highest": part["realised_power"].max(),
             "short": _failures(part, "power_ok", _describe_power)}
            for method, part in planned.groupby("method", sort=False)]


def report_markdown(tables: dict[str, pd.DataFrame], *, facts: dict) -> str:
    """The text of ``report.md`` (the template ``sample_size/report.md.j2``): the findings in a few sentences, every
    number read from the tables; a smoke run's (``facts["smoke"]``), or a run's on a researcher's grid
    (``facts["grid"]``), without the conclusions drawn from the study's own plans."""
    size, power = tables.get("size"), tables.get("power")
    return render("sample_size/report.md.j2", seed=facts["seed"], nsim=facts["nsim"],
                  size_nsim=SIZE_REPLICATIONS * facts["nsim"], smoke=facts["smoke"], user_grid="grid" in facts,
                  **_plans(tables),
                  intervals=_interval_checks(tables["intervals"]) if "intervals" in tables else None,
                  size=None if size is None else _size_checks(size, power),
                  z_or_t=None if size is None else _z_or_t(size, power),
                  power=None if power is None else _power_checks(power))
