"""``--interval auto``: the narrowest interval that held 95% in ``escalation study coverage`` for the data's design.

The coverage study judges every interval in eight **design groups**: one replica per scenario
(``m = 1``) or more (``m > 1``), by :data:`SCENARIO_RANGES` of scenarios. An interval **holds** in a
group when it was evaluated in every cell of it, its mean coverage is at least 0.945 and no cell lies
below 0.93 by more than 2 Monte Carlo standard errors (0 for an exact value; the study reruns borderline
cells until that error is at most 0.003): the rule of :mod:`escalation.studies.coverage._report`. The study
writes one row per group and method to ``interval_choice.csv``; this package ships one (what run it comes
from: :data:`INTERVAL_CHOICE_SOURCE`) and :func:`choose_interval` reads it, so the recommendation table,
``auto`` and the warnings of ``score`` never disagree.

Plain Python (the ``csv`` module): ``escalation --help`` imports no numerical library.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import NamedTuple

from ._constants import AUTO_INTERVAL, DEFAULT_INTERVAL, INTERVAL_METHODS

__all__ = ["SCENARIO_RANGES", "INTERVAL_CHOICE_SOURCE", "GroupCoverage", "IntervalChoice", "design_group",
           "group_coverage", "choose_interval", "resolve_interval"]

#: The ranges of the number of scenarios of the design groups: (label, fewest, most).
SCENARIO_RANGES = (("K < 10", 1, 9), ("10-29", 10, 29), ("30-99", 30, 99), ("K >= 100", 100, math.inf))
#: Where the shipped ``interval_choice.csv`` comes from.
INTERVAL_CHOICE_SOURCE = (
    "escalation study coverage, default run of 2026-12-04 (seed 20240501, 1,800 cells, 2,000 data sets a cell, the "
    "exact coverage of the methods of the cluster sums wherever the enumeration fits, unequal sizes included, and "
    "465 borderline cells rerun at 6,500 to 11,500 data sets to an MCSE of at most 0.003; escalation 0.1.0, --n-jobs "
    "2, resumed across two sessions), its interval_choice.csv (interval_choice() of studies/coverage/_report.py)")


@dataclass(frozen=True)
class GroupCoverage:
    """What the coverage study measured of one interval in one design group.

    ``lowest_bound`` is the lowest cell's coverage plus 2 MCSE (the value the 0.93 floor is held
    against); ``relative_width`` the mean width over that of Wilson-Kish with the true rho.
    """

    replicas: str
    scenarios: str
    method: str
    cells: int
    mean_coverage: float
    min_coverage: float
    lowest_bound: float
    holds: bool
    relative_width: float
    recommended: bool


class IntervalChoice(NamedTuple):
    """The interval of one figure: the ``method`` computed and ``reason``, why (one sentence)."""

    method: str
    reason: str


def design_group(clusters: int, replicas: bool) -> tuple[str, str]:
    """``(replicas group, scenarios range)`` of data with ``clusters`` scenarios, with or without replicas."""
    label = next(label for label, low, high in SCENARIO_RANGES if low <= max(clusters, 1) <= high)
    return ("m > 1" if replicas else "m = 1"), label


@cache
def _table() -> tuple[GroupCoverage, ...]:
    with files(__package__).joinpath("interval_choice.csv").open(encoding="utf-8") as handle:
        return tuple(GroupCoverage(
            replicas=row["replicas"], scenarios=row["scenarios"], method=row["method"], cells=int(row["cells"]),
            mean_coverage=float(row["mean_coverage"]), min_coverage=float(row["min_coverage"]),
            lowest_bound=float(row["lowest_bound"]), holds=row["holds"] == "True",
            relative_width=float(row["relative_width"]), recommended=row["recommended"] == "True")
            for row in csv.DictReader(handle))


def group_coverage(clusters: int, replicas: bool) -> dict[str, GroupCoverage]:
    """Every interval's :class:`GroupCoverage` in the design group of the data, by method."""
    group = design_group(clusters, replicas)
    return {row.method: row for row in _table() if (row.replicas, row.scenarios) == group}


def _group_text(clusters: int, replicas: bool) -> str:
    replicas_text = "replicas" if replicas else "one conversation a scenario"
    return f"{replicas_text}, {design_group(clusters, replicas)[1]} scenarios"


def choose_interval(clusters: int, replicas: bool, *, rho_fixed: float | None = None) -> IntervalChoice:
    """The interval ``auto`` computes for data of ``clusters`` scenarios, with or without replicas.

    The recommended interval of the data's design group (the narrowest that holds there); with a
    rho fixed by the user (``--rho``), the paper's Wilson-Kish at that rho; with no data or one scenario,
    Wilson-Kish (no other is then defined).
    """
    if rho_fixed is not None:
        return IntervalChoice(DEFAULT_INTERVAL, f"auto: rho is fixed at {rho_fixed:g} (--rho), so the paper's "
                                                "Wilson-Kish interval at that rho")
    if clusters == 0:
        return IntervalChoice(DEFAULT_INTERVAL, "auto: no data")
    if clusters == 1:  # no interval that reads the spread between scenarios is defined on one
        return IntervalChoice(DEFAULT_INTERVAL, "auto: one scenario, so no interval that estimates the spread "
                                                "between scenarios is defined; the paper's Wilson-Kish, with rho = 1 "
                                                "(SPEC section 5)")
    rows = group_coverage(clusters, replicas)
    best = next(row for row in rows.values() if row.recommended)
    return IntervalChoice(best.method, (
        f"auto: the narrowest interval that held 95% in the coverage study's {best.cells} cells with "
        f"{_group_text(clusters, replicas)} (lowest coverage {best.min_coverage:.3f}, mean {best.mean_coverage:.3f}, "
        f"{best.relative_width:.2f} times the width of the interval with the true rho)"))


def resolve_interval(interval: str, clusters: int, replicas: bool, *,
                     rho_fixed: float | None = None) -> IntervalChoice:
    """``interval`` as the method it computes: ``auto`` by :func:`choose_interval`, a method as itself."""
    if interval == AUTO_INTERVAL:
        return choose_interval(clusters, replicas, rho_fixed=rho_fixed)
    if interval not in INTERVAL_METHODS:
        raise ValueError(f"interval must be auto or one of {', '.join(INTERVAL_METHODS)}, got {interval!r}")
    return IntervalChoice(interval, "chosen (--interval)")
