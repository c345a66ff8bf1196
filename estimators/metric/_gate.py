"""The release gate's arithmetic (issue 37): a criterion decided from the bounds of an interval, and the
levels of planned looks at a growing run.

A criterion ``figure <= threshold`` (or ``>=``) **passes** when the whole two-sided interval of its figure is
on the allowed side of the threshold, **fails** when the whole interval is on the other side, and is
**undecided** otherwise, or where the interval is undefined. Where the interval holds its level, each wrong
decision has a probability of at most ``(1 - confidence) / 2``, the one-sided error of the interval.

Looks after each epoch of a growing run spend the overall error by Lan & DeMets' O'Brien-Fleming-type
function (Lan & DeMets 1983, Biometrika 70(3), 659-663), so that stopping at the first decided look keeps it
(:func:`look_confidence`). ``escalation gate`` decides one run with :func:`gate_decision`; the gate study
(``escalation study gate``) decides many simulated runs at once with :func:`gate_decisions`.

Plain Python, importing no numerical library (``escalation --help`` imports this module); numpy is
imported by :func:`gate_decisions` when it runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

__all__ = ["GATE_PASS", "GATE_FAIL", "GATE_UNDECIDED", "GATE_CODES", "GateCriterion", "gate_decision",
           "gate_decisions", "gate_overall", "obrien_fleming_spent", "look_confidence"]

#: The three decisions, as ``gate.json`` writes them.
GATE_PASS, GATE_FAIL, GATE_UNDECIDED = "pass", "fail", "undecided"
#: The code of each decision in the arrays of :func:`gate_decisions`.
GATE_CODES = {GATE_PASS: 1, GATE_FAIL: -1, GATE_UNDECIDED: 0}


@dataclass(frozen=True)
class GateCriterion:
    """One rule of the gate: ``figure`` at most (``upper``) or at least ``threshold``, named by ``flag``."""

    figure: str
    threshold: float
    flag: str
    upper: bool = True

    @property
    def rule(self) -> str:
        """``p_u <= 0.05``: the rule as text."""
        return f"{self.figure} {'<=' if self.upper else '>='} {self.threshold:g}"


def gate_decision(criterion: GateCriterion, low: float, high: float) -> tuple[str, Optional[str], str]:
    """``(decision, side of the bound that decided, reason)`` of ``criterion`` from an interval ``(low, high)``.

    A criterion ``figure <= threshold`` passes when ``high <= threshold`` (the whole interval is allowed) and
    fails when ``low > threshold`` (none of it is); ``figure >= threshold`` passes when ``low >= threshold``
    and fails when ``high < threshold``. Otherwise, or for an undefined interval (NaN), it is undecided.
    :func:`gate_decisions` is the same rule on arrays of intervals.

    Examples
    --------
    >>> gate_decision(GateCriterion("p_u", 0.05, "--max-p-u"), 0.01, 0.04)
    ('pass', 'upper', 'upper bound 0.0400 <= 0.05')
    >>> gate_decision(GateCriterion("pi", 0.9, "--min-pi", upper=False), 0.5, 0.8)
    ('fail', 'upper', 'upper bound 0.8000 < 0.9')
    >>> gate_decision(GateCriterion("p_u", 0.05, "--max-p-u"), 0.01, 0.09)[0]
    'undecided'
    """
    t = criterion.threshold
    if not (math.isfinite(low) and math.isfinite(high)):
        return GATE_UNDECIDED, None, "undefined: the interval is not defined for these data"
    if criterion.upper:
        if high <= t:
            return GATE_PASS, "upper", f"upper bound {high:.4f} <= {t:g}"
        if low > t:
            return GATE_FAIL, "lower", f"lower bound {low:.4f} > {t:g}"
    else:
        if low >= t:
            return GATE_PASS, "lower", f"lower bound {low:.4f} >= {t:g}"
        if high < t:
            return GATE_FAIL, "upper", f"upper bound {high:.4f} < {t:g}"
    return GATE_UNDECIDED, None, f"the interval ({low:.4f}, {high:.4f}) holds {t:g}: more data decide"


def gate_decisions(low, high, threshold: float, *, upper: bool = True):
    """The decisions of :func:`gate_decision` for arrays of intervals, as codes (:data:`GATE_CODES`: 1 pass,
    -1 fail, 0 undecided).

    Parameters
    ----------
    low, high : array_like
        The bounds (broadcast together); a NaN or infinite bound leaves its interval undecided.
    threshold : float
    upper : bool
        ``figure <= threshold`` (True) or ``figure >= threshold``.

    Returns
    -------
    numpy.ndarray of int8
        One code per interval, of the broadcast shape.

    Examples
    --------
    >>> gate_decisions([0.01, 0.06, 0.01, float("nan")], [0.04, 0.09, 0.09, 0.04], 0.05).tolist()
    [1, -1, 0, 0]
    """
    import numpy as np

    low, high = np.broadcast_arrays(np.asarray(low, dtype=float), np.asarray(high, dtype=float))
    defined = np.isfinite(low) & np.isfinite(high)
    if upper:
        passed, failed = high <= threshold, low > threshold
    else:
        passed, failed = low >= threshold, high < threshold
    return np.where(defined & passed, 1, np.where(defined & failed, -1, 0)).astype(np.int8)


def gate_overall(decisions) -> str:
    """The release's decision from its criteria's: fail when one fails, else undecided when one is, else pass.

    Examples
    --------
    >>> gate_overall(["pass", "undecided", "fail"]), gate_overall(["pass", "undecided"]), gate_overall(["pass"])
    ('fail', 'undecided', 'pass')
    """
    decisions = set(decisions)
    return GATE_FAIL if GATE_FAIL in decisions else GATE_UNDECIDED if GATE_UNDECIDED in decisions else GATE_PASS


# ------------------------------------------------------------------ looks at a growing run


def obrien_fleming_spent(fraction: float, alpha: float) -> float:
    """The two-sided error spent by the information fraction ``fraction`` under Lan & DeMets' O'Brien-Fleming-type
    spending function, ``alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))`` (Lan & DeMets 1983, Biometrika 70(3),
    659-663): almost nothing early, ``alpha`` at ``t = 1``.

    Examples
    --------
    >>> round(obrien_fleming_spent(0.5, 0.05), 5), obrien_fleming_spent(1.0, 0.05) == 0.05
    (0.00557, True)
    """
    from statistics import NormalDist

    if fraction <= 0:
        return 0.0
    if fraction >= 1:
        return alpha
    normal = NormalDist()
    return 2.0 * (1.0 - normal.cdf(normal.inv_cdf(1.0 - alpha / 2.0) / math.sqrt(fraction)))


def look_confidence(look: int, of: int, confidence: float) -> float:
    """The two-sided level of the intervals at look ``look`` of ``of`` planned, equally spaced looks, for an
    overall level ``confidence``: one minus the error that O'Brien-Fleming-type spending
    (:func:`obrien_fleming_spent`) spends between the look before and this one.

    By the union bound, the chance that any look makes a wrong decision of a criterion is at most the sum of
    the errors spent, ``(1 - confidence) / 2`` on each side, whatever the correlation of the looks; the
    information fraction of look ``k`` is ``k / of`` (planned looks, fixed before the data).

    Examples
    --------
    >>> [round(look_confidence(k, 4, 0.95), 4) for k in (1, 2, 3, 4)]
    [0.9999, 0.9945, 0.9819, 0.9736]
    """
    alpha = 1.0 - confidence
    return 1.0 - (obrien_fleming_spent(look / of, alpha) - obrien_fleming_spent((look - 1) / of, alpha))
