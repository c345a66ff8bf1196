"""Whether a clustered interval is at risk on the data at hand: a trigger that reads only what the data show
(issue 36, point 4).

Which data sets miss
    In the coverage study's failing cells (rare outcomes, high rho, replicas) the misses are of two kinds.
    An interval *below* the truth comes from data sets whose rarer outcome sits in few scenarios: rho is
    then estimated low (exactly 0 with one error), the design effect near 1 and the interval too short.
    An interval *above* the truth comes from data sets whose rarer outcome is more widespread than the truth
    makes typical; the same counts are typical under a larger truth, where they cover, so no function of
    the data can tell those data sets apart. The trigger therefore warns the first kind: the rarer outcome
    (errors, or non-errors where they are the rarer) occurs in fewer than ``c`` scenarios, with ``c`` per
    method, replicas (any scenario with more than one conversation) and number of scenarios with data.
Threshold
    :data:`RISK_THRESHOLDS`: for each method and design group the least ``c`` (0 to
    :data:`MAX_THRESHOLD`) with which, in every cell of the study's design, the data sets that are covered
    or warned make at least 0.93 of the cell within 2 Monte Carlo standard errors (the silent misses at
    most 7%); ``inf`` (every data set warned) where no ``c`` does so or where that ``c`` warns more than
    :data:`WHOLE_GROUP_SHARE` of the group's data sets anyway. Calibrated by ``escalation study warnings``
    on one seed and validated on another (:data:`RISK_SOURCE`).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._checks import check_choice
from ._choice import SCENARIO_RANGES

__all__ = ["RiskRule", "RISK_THRESHOLDS", "RISK_SOURCE", "MAX_THRESHOLD",
           "WHOLE_GROUP_SHARE", "minority_spread", "risk_group", "interval_at_risk", "risk_reason"]

#: The largest finite threshold the calibration tries.
MAX_THRESHOLD = 40
#: A group whose least holding threshold warns more than this share of its data sets is warned whole.
WHOLE_GROUP_SHARE = 0.8


class RiskRule(NamedTuple):
    """The trigger of one method in one design group, and what the validation run measured of it."""

    #: Warn when the rarer outcome occurs in fewer than this many scenarios (0: never; inf: always).
    fewer_than: float
    #: The coverage among the group's warned data sets, pooled over its cells (NaN: none warned).
    warned_coverage: float
    #: The lowest coverage among the warned data sets of one cell (cells with 200 or more warned; NaN: none).
    warned_lowest: float


#: Where :data:`RISK_THRESHOLDS` comes from.
RISK_SOURCE = ("thresholds: escalation study warnings --seed 1 (calibration.csv; nsim 2000, the coverage study's "
               "1800 default cells), 2026-12-04; the coverages: the validation run escalation study warnings "
               "(seed 20261204, nsim 2000, groups.csv), 2026-12-04; docs/background/intervals.md, 'Warnings, "
               "measured'")

_INF, _NAN = math.inf, math.nan
#: ``{method: {(replicas, group label): (threshold, warned coverage, lowest warned cell)}}``: the threshold
#: of the calibration run (the least with every cell covered-or-warned, the module docstring), the coverages
#: of the validation run (:data:`RISK_SOURCE`).
_RULES: dict[str, dict[tuple[bool, str], tuple[float, float, float]]] = {
    "wilson-kish": {
        (False, "K < 10"): (_INF, 0.941, 0.857),
        (False, "10-29"): (3, 0.955, 0.811),
        (False, "30-99"): (0, _NAN, _NAN),
        (False, "K >= 100"): (4, 0.970, 0.939),
        (True, "K < 10"): (_INF, 0.944, 0.823),
        (True, "10-29"): (6, 0.952, 0.721),
        (True, "30-99"): (4, 0.964, 0.675),
        (True, "K >= 100"): (5, 0.936, 0.692),
    },
    "wilson-kish-t": {
        (False, "K < 10"): (_INF, 0.983, 0.914),
        (False, "10-29"): (2, 0.971, 0.898),
        (False, "30-99"): (0, _NAN, _NAN),
        (False, "K >= 100"): (4, 0.970, 0.939),
        (True, "K < 10"): (0, _NAN, _NAN),
        (True, "10-29"): (2, 0.983, 0.675),
        (True, "30-99"): (3, 0.979, 0.677),
        (True, "K >= 100"): (3, 0.902, 0.607),
    },
    "wilson-kish-ucb": {
        (False, "K < 10"): (_INF, 0.941, 0.857),
        (False, "10-29"): (3, 0.955, 0.811),
        (False, "30-99"): (0, _NAN, _NAN),
        (False, "K >= 100"): (4, 0.970, 0.939),
        (True, "K < 10"): (0, _NAN, _NAN),
        (True, "10-29"): (0, _NAN, _NAN),
        (True, "30-99"): (2, 0.991, 0.812),
        (True, "K >= 100"): (2, 0.911, 0.702),
    },
    "wilson-cluster-t": {
        (False, "K < 10"): (0, _NAN, _NAN),
        (False, "10-29"): (2, 0.971, 0.898),
        (False, "30-99"): (0, _NAN, _NAN),
        (False, "K >= 100"): (4, 0.970, 0.939),
        (True, "K < 10"): (_INF, 0.988, 0.879),
        (True, "10-29"): (6, 0.965, 0.803),
        (True, "30-99"): (9, 0.937, 0.704),
        (True, "K >= 100"): (8, 0.916, 0.679),
    },
    "korn-graubard": {
        (False, "K < 10"): (0, _NAN, _NAN),
        (False, "10-29"): (0, _NAN, _NAN),
        (False, "30-99"): (0, _NAN, _NAN),
        (False, "K >= 100"): (0, _NAN, _NAN),
        (True, "K < 10"): (2, 0.984, 0.555),
        (True, "10-29"): (3, 0.968, 0.667),
        (True, "30-99"): (5, 0.956, 0.693),
        (True, "K >= 100"): (6, 0.911, 0.556),
    },
}
#: ``{method: {(replicas, group label): RiskRule}}``, ``replicas`` True when some scenario has more than one
#: conversation (:data:`RISK_SOURCE`).
RISK_THRESHOLDS: dict[str, dict[tuple[bool, str], RiskRule]] = {
    method: {key: RiskRule(*map(float, rule)) for key, rule in table.items()} for method, table in _RULES.items()}


def minority_spread(totals, sizes) -> np.ndarray:
    """The number of scenarios in which the rarer outcome occurs: ``min(#{y_j > 0}, #{y_j < n_j})`` over the
    scenarios with data (``totals``, ``sizes`` of shape ``(..., K)``, size 0 = absent); integers of the
    leading shape."""
    y = np.asarray(totals)
    n = np.broadcast_to(np.asarray(sizes), y.shape)
    present = n > 0
    return np.minimum((present & (y > 0)).sum(axis=-1), (present & (y < n)).sum(axis=-1))


def risk_group(totals, sizes) -> tuple[np.ndarray, np.ndarray]:
    """``(replicas, group)`` of each data set: whether some scenario has more than one conversation, and the
    index in :data:`SCENARIO_RANGES` of its number of scenarios with data (-1: none)."""
    n = np.asarray(sizes)
    n = np.broadcast_to(n, np.shape(totals))
    k = (n > 0).sum(axis=-1)
    edges = np.array([low for _, low, _ in SCENARIO_RANGES[1:]])
    group = np.where(k > 0, np.searchsorted(edges, k, side="right"), -1)
    return np.asarray((n > 1).any(axis=-1)), group


def _thresholds(method: str) -> np.ndarray:
    """The thresholds of ``method`` as an array ``(2, groups)``: without and with replicas."""
    table = RISK_THRESHOLDS[method]
    return np.array([[table[(replicas, label)].fewer_than for label, _, _ in SCENARIO_RANGES]
                     for replicas in (False, True)])


def interval_at_risk(totals, sizes, method: str) -> np.ndarray:
    """Whether the interval by ``method`` on each data set is at risk of covering below 0.93.

    Parameters
    ----------
    totals, sizes : array_like, shape (..., K)
        Ones and conversations of each scenario, scenarios on the last axis (size 0 = absent), as in
        :func:`clustered_interval`.
    method : str
        One of :data:`RISK_THRESHOLDS` (the methods of the cluster sums).

    Returns
    -------
    ndarray of bool, the leading shape
        True where the rarer outcome occurs in fewer scenarios than the method's threshold for the data
        set's design group (:data:`RISK_THRESHOLDS`); False for a data set without conversations.

    Notes
    -----
    The thresholds are measured by ``escalation study warnings`` (:data:`RISK_SOURCE`).
    """
    check_choice("method", method, tuple(RISK_THRESHOLDS))
    replicas, group = risk_group(totals, sizes)
    limit = _thresholds(method)[replicas.astype(int), np.maximum(group, 0)]
    return (group >= 0) & (minority_spread(totals, sizes) < limit)


def risk_reason(totals, sizes, method: str, *, instead: str, figure: str = "p_u",
                unit: str = "scenarios", beside: bool = False) -> str | None:
    """The one-line warning of one data set (``totals``, ``sizes`` of shape ``(K,)``), None when it is not
    at risk (:func:`interval_at_risk`).

    ``instead`` names the interval to use instead (the one that holds in the data set's design group);
    ``figure`` and ``unit`` name the figure and its clusters in the text; ``beside``: the interval is the
    paper's, printed beside the one ``--interval auto`` computed (``instead``).
    """
    if not interval_at_risk(totals, sizes, method):
        return None
    replicas, group = risk_group(totals, sizes)
    label = SCENARIO_RANGES[int(group)][0]
    rule = RISK_THRESHOLDS[method][(bool(replicas), label)]
    k = int((np.asarray(sizes) > 0).sum())
    if math.isfinite(rule.fewer_than):
        where = (f"the rarer outcome occurs in {int(minority_spread(totals, sizes))} of the {k} {unit}, fewer than "
                 f"{rule.fewer_than:g}")
    else:
        where = f"every data set with {label} {unit}{' and replicas' if replicas else ', one conversation each'}"
    lowest = "" if math.isnan(rule.warned_lowest) else f", down to {rule.warned_lowest:.2f} in one cell"
    measured = ("" if math.isnan(rule.warned_coverage) else
                f" (escalation study warnings: such data sets covered {rule.warned_coverage:.2f}{lowest})")
    if beside:
        return (f"{figure}: the paper's {method} interval, printed beside, is at risk of covering below 95% here: "
                f"{where}{measured}; read {instead}'s, which --interval auto computed")
    return (f"{figure}: the {method} interval is at risk of covering below 95% here: {where}{measured}; "
            f"use --interval {instead}")

