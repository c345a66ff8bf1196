"""The sample-size study's design: the grid of simulated plans and tests, each row's plan, and the plans
without simulation."""
from __future__ import annotations

import pandas as pd

from escalation.estimators.stats import plan_difference, plan_interval, plan_paired_figure

from .._user_methods import GridKey

_NOMINAL = 0.95
_ALPHA = 0.05
_HALF_WIDTH = 0.05
_POWER = 0.8
_PAIRED_CORRELATION = 0.5
_COLUMNS = ["kind", "p", "p_b", "rho", "correlation", "design", "replicas", "size_cv", "interval", "test",
            "scenarios", "half_width", "confidence", "power", "alpha"]


#: The keys of a grid of the sample-size study (``--grid FILE``, or ``grid=`` a dict), the coverage study's:
#: the interval plans are ``estimand`` x ``p`` x ``rho`` x ``replicas`` x ``size_cv`` (``p_u``: the rate ``p``;
#: ``pi``: the paired figure ``1 - p``), each planned by the planner for ``h = 0.05`` at 95% with the wilson-kish
#: interval, so that K is the plan's; ``scenarios`` gives the K of the size cells (``p_u`` only), each
#: ``p`` x ``rho`` x ``replicas`` x ``size_cv`` x ``scenarios``, unpaired and paired. No power plans: they need
#: a second rate.
GRID_KEYS = {
    "p": GridKey(float, lambda v: 0 < v < 1, "numbers in (0, 1) (the rate p_u; the paired figure pi is 1 - p)"),
    "rho": GridKey(float, lambda v: 0 <= v < 1, "numbers in [0, 1)"),
    "scenarios": GridKey(int, lambda v: 2 <= v <= 10_000, "whole numbers from 2 to 10000"),
    "replicas": GridKey(int, lambda v: 1 <= v <= 1000, "whole numbers from 1 to 1000"),
    "size_cv": GridKey(float, lambda v: 0 <= v <= 10, "numbers in [0, 10]"),
    "estimand": GridKey(str, lambda v: v in ("p_u", "pi"), "estimands among p_u, pi", optional=True,
                        default=("p_u", "pi")),
    "nsim": GridKey(int, lambda v: v >= 1, "a whole number from 1", optional=True, scalar=True),
}


def _grid_cells(add, grid: dict, interval: dict, test: dict) -> None:
    """The cells of a researcher's grid (:data:`GRID_KEYS`, checked): ``add(kind, **values)`` appends one."""
    for estimand in grid["estimand"]:
        for p in grid["p"]:
            for rho in grid["rho"]:
                for m in grid["replicas"]:
                    for cv in grid["size_cv"]:
                        add("rate" if estimand == "p_u" else "pi", p=p if estimand == "p_u" else round(1.0 - p, 12),
                            rho=rho, replicas=m, **(interval | dict(size_cv=cv)))
    if "p_u" in grid["estimand"]:
        for p in grid["p"]:
            for rho in grid["rho"]:
                for m in grid["replicas"]:
                    for cv in grid["size_cv"]:
                        for design in ("unpaired", "paired"):
                            for k in grid["scenarios"]:
                                add("size", p=p, rho=rho, replicas=m, design=design, scenarios=k,
                                    **(test | dict(size_cv=cv)))


def design_grid(*, smoke: bool = False, nsim: int | None = None, grid: dict | None = None) -> pd.DataFrame:
    """The simulated plans and tests, one row per cell (written to ``design.csv`` before the run).

    Full grid (``h = 0.05`` at 95%, 80% power at level 0.05 unless said):

    - ``rate``, equal sizes: ``p`` in (0.05, 0.1, 0.2, 0.5) with ``(rho, m)`` = (0, 1) and every
      ``rho`` in (0, 0.05, 0.1, 0.2) with ``m`` in (5, 10); unequal sizes: ``p`` in (0.05, 0.1,
      0.2), ``rho`` in (0.05, 0.2), ``m`` in (5, 10), ``size_cv`` in (0.5, 1); the t interval:
      ``p`` in (0.1, 0.2), ``rho`` in (0.1, 0.2), ``m = 10``, ``h`` in (0.05, 0.1).
    - ``pi``: ``pi`` in (0.6, 0.8), ``rho`` in (0.05, 0.2), ``m = 3``.
    - ``difference`` (power): ``p_b - p_a`` = 0.2 - 0.1, 0.2 - 0.3, 0.3 - 0.1 and 0.4 - 0.1,
      ``rho`` in (0.05, 0.2), ``m`` in (1, 5, 10), unpaired and paired (``r = 0.5``), each planned
      for the z and for the t test (``K`` from 4 to 292); unequal sizes: 0.3 - 0.1 with ``m`` in
      (5, 10) and ``size_cv`` in (0.5, 1).
    - ``size`` (``p_a = p_b = p``): ``K`` in (5, 8, 12, 24, 50, 100), ``p`` in (0.05, 0.15),
      ``rho`` in (0.05, 0.2), ``m`` in (1, 5), unpaired and paired (``r = 0.5``); unequal sizes:
      ``p = 0.15``, ``m = 5``, ``size_cv = 0.5``.

    ``nsim`` replications per cell (default 4,000; 200 with ``smoke``), :data:`SIZE_REPLICATIONS`
    times that for the size cells. ``grid``, a researcher's (:data:`GRID_KEYS`, checked), replaces these
    cells; its ``nsim`` applies unless ``nsim`` is given.
    """
    nsim = nsim if nsim is not None else (grid or {}).get("nsim")
    nsim = int(nsim if nsim is not None else (200 if smoke else 4000))
    rows = []

    def add(kind, **values):
        rows.append(dict(kind=kind, **values))

    interval = dict(half_width=_HALF_WIDTH, confidence=_NOMINAL, interval="wilson-kish", size_cv=0.0)
    test = dict(power=_POWER, alpha=_ALPHA, size_cv=0.0)
    if grid is not None:
        _grid_cells(add, grid, interval, test)
    elif smoke:
        _smoke_cells(add, interval, test)
    else:
        _full_interval_cells(add, interval)
        _full_test_cells(add, test)
    table = pd.DataFrame(rows, columns=_COLUMNS)
    paired = table["design"] == "paired"
    table.loc[paired, "correlation"] = _PAIRED_CORRELATION
    table[["design", "interval", "test"]] = table[["design", "interval", "test"]].astype(object).fillna("")
    return table.assign(nsim=nsim)


def _smoke_cells(add, interval: dict, test: dict) -> None:
    """The cells of a smoke run (``add(kind, **values)`` appends one)."""
    for rho, m in ((0.0, 1), (0.1, 5)):
        add("rate", p=0.1, rho=rho, replicas=m, **interval)
    add("rate", p=0.1, rho=0.1, replicas=5, **(interval | dict(size_cv=0.5)))
    add("rate", p=0.2, rho=0.2, replicas=10, **(interval | dict(interval="wilson-kish-t", half_width=0.1)))
    add("pi", p=0.8, rho=0.2, replicas=3, **interval)
    for design in ("unpaired", "paired"):
        for which in ("z", "t"):
            add("difference", p=0.1, p_b=0.3, rho=0.05, replicas=5, design=design, test=which, **test)
        for k in (5, 24):
            add("size", p=0.15, rho=0.05, replicas=5, design=design, scenarios=k, **test)


def _full_interval_cells(add, interval: dict) -> None:
    """The full grid's interval plans: ``rate`` (equal and unequal sizes, the t interval) and ``pi``."""
    for p in (0.05, 0.1, 0.2, 0.5):
        for rho, m in ((0.0, 1),) + tuple((r, m) for r in (0.0, 0.05, 0.1, 0.2) for m in (5, 10)):
            add("rate", p=p, rho=rho, replicas=m, **interval)
    for p in (0.05, 0.1, 0.2):
        for rho in (0.05, 0.2):
            for m in (5, 10):
                for cv in (0.5, 1.0):
                    add("rate", p=p, rho=rho, replicas=m, **(interval | dict(size_cv=cv)))
    for p in (0.1, 0.2):
        for rho in (0.1, 0.2):
            for h in (0.05, 0.1):
                add("rate", p=p, rho=rho, replicas=10, **(interval | dict(interval="wilson-kish-t", half_width=h)))
    for pi in (0.6, 0.8):
        for rho in (0.05, 0.2):
            add("pi", p=pi, rho=rho, replicas=3, **interval)


def _full_test_cells(add, test: dict) -> None:
    """The full grid's tests: ``difference`` (power) and ``size`` cells."""
    for p_a, p_b in ((0.1, 0.2), (0.3, 0.2), (0.1, 0.3), (0.1, 0.4)):
        for rho in (0.05, 0.2):
            for m in (1, 5, 10):
                for design in ("unpaired", "paired"):
                    for which in ("z", "t"):
                        add("difference", p=p_a, p_b=p_b, rho=rho, replicas=m, design=design, test=which, **test)
    for m in (5, 10):
        for cv in (0.5, 1.0):
            for design in ("unpaired", "paired"):
                for which in ("z", "t"):
                    add("difference", p=0.1, p_b=0.3, rho=0.05, replicas=m, design=design, test=which,
                        **(test | dict(size_cv=cv)))
    for p in (0.05, 0.15):
        for rho in (0.05, 0.2):
            for m in (1, 5):
                for design in ("unpaired", "paired"):
                    for k in (5, 8, 12, 24, 50, 100):
                        add("size", p=p, rho=rho, replicas=m, design=design, scenarios=k, **test)
    for rho in (0.05, 0.2):
        for design in ("unpaired", "paired"):
            for k in (5, 8, 12, 24, 50, 100):
                add("size", p=0.15, rho=rho, replicas=5, design=design, scenarios=k, **(test | dict(size_cv=0.5)))


def _plan_of(row: dict):
    """The planner's answer for one design row."""
    if row["kind"] == "difference":
        paired = row["design"] == "paired"
        return plan_difference(row["p"], row["p_b"], rho=row["rho"], replicas=int(row["replicas"]),
                               power=row["power"], alpha=row["alpha"], design=row["design"],
                               correlation=row["correlation"] if paired else None, size_cv=row["size_cv"],
                               test=row["test"])
    plan = plan_paired_figure if row["kind"] == "pi" else plan_interval
    first = "pi" if row["kind"] == "pi" else "p"
    return plan(**{first: row["p"]}, rho=row["rho"], replicas=int(row["replicas"]),
                half_width=row["half_width"], confidence=row["confidence"], size_cv=row["size_cv"],
                method=row["interval"])


def planning_tables() -> dict[str, pd.DataFrame]:
    """Plans without simulation: ``K`` over ``(p, rho)``, against ``m`` with the floor, and against the size spread.

    ``scenarios_grid``: ``h = 0.05``, ``m = 5``, 95%, ``p`` in (0.01 ... 0.5) and ``rho`` in
    (0 ... 0.5). ``scenarios_by_replicas``: ``p = 0.1``, ``h = 0.05``, ``rho`` in (0.05, 0.1,
    0.2) and ``m`` from 1 to 50, with the normal-rule and Wilson floors. ``scenarios_by_size_cv``:
    ``p = 0.1``, ``h = 0.05``, ``m`` in (5, 10), ``rho`` in (0.05, 0.1, 0.2) and ``size_cv`` from
    0 to 1, for both interval methods.
    """
    grid = [plan_interval(p, rho=rho, replicas=5, half_width=_HALF_WIDTH).to_dict()
            for p in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
            for rho in (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)]
    by_m = [plan_interval(0.1, rho=rho, replicas=m, half_width=_HALF_WIDTH).to_dict()
            for rho in (0.05, 0.1, 0.2) for m in (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50)]
    by_cv = [plan_interval(0.1, rho=rho, replicas=m, half_width=_HALF_WIDTH, size_cv=cv, method=method).to_dict()
             for method in ("wilson-kish", "wilson-kish-t") for m in (5, 10) for rho in (0.05, 0.1, 0.2)
             for cv in (0.0, 0.25, 0.5, 0.75, 1.0)]
    keep = ["p", "rho", "replicas", "half_width", "scenarios", "scenarios_normal", "conversations",
            "achieved_half_width", "floor", "floor_wilson"]
    keep_cv = ["method", "p", "rho", "replicas", "size_cv", "m_bar", "deff", "half_width", "scenarios",
               "conversations", "achieved_half_width", "floor"]
    return {"scenarios_grid": pd.DataFrame(grid)[keep], "scenarios_by_replicas": pd.DataFrame(by_m)[keep],
            "scenarios_by_size_cv": pd.DataFrame(by_cv)[keep_cv]}
