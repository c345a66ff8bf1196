"""Interval plans: scenarios, replicas or half-width of the Wilson-Kish interval of a rate
(:func:`plan_interval`) or of the paired figure, whose clusters are cases (:func:`plan_paired_figure`).

The rules shared by every plan (unequal scenario sizes, limits, z or t) are in :mod:`._planning`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ._checks import check_choice, check_probability, refuse
from ._intervals import critical_value, design_effect, wilson_interval, z_value
from ._planning import (
    PLAN_INTERVAL_METHODS,
    _as_dict,
    _check_count,
    _check_half_width,
    _one_unknown,
    _size_spread,
    _within_limit,
)

__all__ = ["IntervalPlan", "PairedFigurePlan", "plan_interval", "plan_paired_figure", "scenarios_needed",
           "wilson_sample_size"]


@dataclass(frozen=True)
class IntervalPlan:
    """A plan for the Wilson-Kish interval of one rate.

    Attributes
    ----------
    p, rho, confidence : float
        Planned rate, intra-scenario correlation and confidence level.
    scenarios, replicas : int
        Number of scenarios ``K`` and mean replicas (conversations) ``m`` per scenario.
    half_width : float
        Target half-width, or the solved one when ``solved_for == "half_width"``.
    achieved_half_width : float
        ``(high - low) / 2`` of the interval at ``p_hat = p`` with this design.
    scenarios_normal : float
        Normal-rule scenarios ``c^2 p (1-p) deff / (m h^2)``, not rounded (``c`` the critical
        value: ``z``, or t on ``K - 1`` degrees of freedom for ``wilson-kish-t``).
    deff, n_eff : float
        Design effect ``1 + (m_bar - 1) rho`` and effective size ``K m / deff``.
    conversations : int
        ``K m``.
    floor : float
        ``z^2 p (1-p) rho (1 + cv^2) / h^2``: scenarios that no number of replicas goes below
        (normal rule; with t, the ``K`` that equals its own floor at ``K - 1`` degrees of freedom).
    floor_wilson : float
        The same limit for the Wilson interval, ``n* rho (1 + cv^2)`` with ``n*`` the Wilson size.
    solved_for : str
        ``"scenarios"``, ``"replicas"`` or ``"half_width"``.
    size_cv : float
        Coefficient of variation of the scenario sizes (0 = equal sizes).
    m_bar : float
        Size-weighted mean scenario size ``m (1 + cv^2)`` of the design effect (SPEC section 5).
    method : str
        The interval planned for: ``"wilson-kish"`` or ``"wilson-kish-t"``.
    """

    p: float
    rho: float
    confidence: float
    scenarios: int
    replicas: int
    half_width: float
    achieved_half_width: float
    scenarios_normal: float
    deff: float
    n_eff: float
    conversations: int
    floor: float
    floor_wilson: float
    solved_for: str
    size_cv: float
    m_bar: float
    method: str

    def to_dict(self) -> dict:
        """The plan as a JSON-ready dict (non-finite values become ``None``)."""
        return _as_dict(self)


@dataclass(frozen=True)
class PairedFigurePlan:
    """A plan for the Wilson-Kish interval of the paired figure ``pi`` (SPEC section 5).

    A case contributes ``m`` pairs (ESC replica ``r`` with ACT replica ``r``) and is the
    cluster, so ``cases`` plays the role of ``scenarios`` in :class:`IntervalPlan`; the
    evaluation runs ``2 m`` conversations per case.
    """

    pi: float
    rho: float
    confidence: float
    cases: int
    replicas: int
    half_width: float
    achieved_half_width: float
    cases_normal: float
    deff: float
    n_eff: float
    pairs: int
    conversations: int
    floor: float
    floor_wilson: float
    solved_for: str
    size_cv: float
    m_bar: float
    method: str

    def to_dict(self) -> dict:
        """The plan as a JSON-ready dict (non-finite values become ``None``)."""
        return _as_dict(self)


def _wilson_units(p, half_width):
    """``n* / c^2``: the Wilson size divided by the square of the critical value (free of ``c``).

    Writing ``n = c^2 x`` turns the Wilson half-width ``c sqrt(p q n + c^2/4) / (n + c^2)`` into
    ``sqrt(p q x + 1/4) / (x + 1)``, so the root ``x`` does not depend on the critical value.
    """
    p = np.asarray(p, dtype=float)
    h = np.asarray(half_width, dtype=float)
    pq = p * (1.0 - p)
    return (pq - 2.0 * h * h + np.sqrt(pq * pq + h * h * (1.0 - 4.0 * pq))) / (2.0 * h * h)


def wilson_sample_size(p, half_width, confidence: float = 0.95):
    """Effective size ``n*`` at which the Wilson interval at ``p_hat = p`` has half-width ``h``.

    Solves ``z sqrt(p q n + z^2/4) / (n + z^2) = h`` (the Wilson half-width, Brown, Cai &
    DasGupta 2001, eq. 4, at ``p_hat = p``) for ``n``; the half-width decreases in ``n``, so
    the larger root of ``h^2 n^2 + (2 h^2 z^2 - z^2 p q) n + z^4 (h^2 - 1/4) = 0`` is the
    only positive one::

        n* = z^2 (p q - 2 h^2 + sqrt(p^2 q^2 + h^2 (1 - 4 p q))) / (2 h^2)

    It tends to the normal rule ``z^2 p q / h^2`` as ``h -> 0``. Vectorised; not rounded.
    With a t quantile ``t`` in place of ``z`` the root is ``(t / z)^2`` times this one.
    """
    z = z_value(confidence)
    return z * z * _wilson_units(p, half_width)


def _critical(confidence, method, scenarios):
    """``z``, or t on ``K - 1`` degrees of freedom for ``wilson-kish-t`` (NaN where ``K < 2``)."""
    if method == "wilson-kish":
        return z_value(confidence)
    return critical_value(confidence, df=np.asarray(scenarios, dtype=float) - 1.0)


def _half_width(p, scenarios, replicas, rho, ratio, confidence, method):
    """``(high - low) / 2`` of the planned interval at ``p_hat = p`` (vectorised).

    The Wilson interval at ``n_eff = K m / deff``, ``deff = design_effect(m * ratio, rho)``, with
    the t quantile on ``K - 1`` degrees of freedom for ``wilson-kish-t`` (NaN for ``K = 1``).
    """
    k = np.asarray(scenarios, dtype=float)
    m = np.asarray(replicas, dtype=float)
    n_eff = k * m / design_effect(m * ratio, rho)
    df = None if method == "wilson-kish" else k - 1.0
    low, high = wilson_interval(np.asarray(p, dtype=float), n_eff, confidence, df=df)
    return (high - low) / 2.0


def _scenarios_needed(p, h, rho, m, ratio, confidence, method):
    """The smallest ``K`` of :func:`scenarios_needed` (arrays broadcast, ``ratio = m_bar / m``)."""
    p, h, rho, m, ratio = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, h, rho, m, ratio)))
    deff = design_effect(m * ratio, rho)
    exact = wilson_sample_size(p, h, confidence) * deff / m
    _within_limit("scenarios", exact, f"`half_width`={float(np.min(h)):g}", "half_width")
    k = np.maximum(np.ceil(exact - 1e-9), 1.0)
    too_wide = _half_width(p, k, m, rho, ratio, confidence, "wilson-kish") > h
    k = np.where(too_wide, k + 1.0, k)
    smaller_fits = (k > 1) & (_half_width(p, np.maximum(k - 1.0, 1.0), m, rho, ratio, confidence,
                                          "wilson-kish") <= h)
    k = np.where(smaller_fits, k - 1.0, k)
    if method == "wilson-kish-t":
        # t is wider than z at every K and the half-width falls with K: step up from the z answer
        k = np.maximum(k, 2.0)
        while True:
            too_wide = ~(_half_width(p, k, m, rho, ratio, confidence, method) <= h)
            if not too_wide.any():
                break
            k = np.where(too_wide, k + 1.0, k)
    k = k.astype(np.int64)
    return k[()] if k.ndim == 0 else k


def scenarios_needed(p, half_width, rho, replicas, confidence: float = 0.95, *, size_cv=0.0,
                     method: str = "wilson-kish"):
    """Smallest ``K`` whose interval at ``p_hat = p`` has half-width ``<= h``.

    Vectorised over ``p``, ``half_width``, ``rho``, ``replicas`` and ``size_cv`` (broadcast).
    ``K`` starts from ``ceil(n* deff / m)`` (:func:`wilson_sample_size`), ``deff`` at
    ``m_bar = m (1 + size_cv^2)``, and is then checked against the Wilson interval itself, one
    step either way, so the answer is the interval's, not the formula's. With
    ``method="wilson-kish-t"`` it then steps up until the interval with t on ``K - 1`` degrees
    of freedom is narrow enough.
    """
    check_choice("method", method, PLAN_INTERVAL_METHODS)
    cv = np.asarray(size_cv, dtype=float)
    return _scenarios_needed(p, half_width, rho, replicas, 1.0 + cv * cv, confidence, method)


def _replicas_needed(n_star, scenarios, rho, ratio, what):
    """Smallest ``m >= 1`` with ``K m / (1 + (m r - 1) rho) >= n*`` (``r = m_bar / m``).

    From ``m (K - n* r rho) >= n* (1 - rho)``: possible only when ``K > n* r rho``; ValueError
    below that floor.
    """
    floor = n_star * rho * ratio
    if scenarios <= floor:
        raise refuse(f"no number of replicas reaches the target with `scenarios`={scenarios}: "
                     f"{what} needs more than the floor of {floor:.2f} scenarios at "
                     f"`rho`={rho}", "scenarios", "rho", "half_width")
    exact = n_star * (1.0 - rho) / (scenarios - floor)
    _within_limit("replicas", exact, f"{what} with `scenarios`={scenarios}", "scenarios", "half_width")
    return max(1, math.ceil(exact - 1e-9))


def _t_floor(scale, confidence):
    """The ``K`` with ``K = t_{K-1}^2 scale``: the floor when the quantile is t on ``K - 1`` df.

    ``K - t_{K-1}^2 scale`` increases in ``K``; the root lies above the normal floor ``z^2
    scale``. Where even ``K = 2`` is above its floor, ``t_1^2 scale`` (below 2) is returned.
    """
    if scale <= 0.0:
        return 0.0

    def excess(k):
        return k - float(critical_value(confidence, df=k - 1.0)) ** 2 * scale

    if excess(2.0) >= 0.0:
        return 2.0 - excess(2.0)
    high = max(4.0, 2.0 * z_value(confidence) ** 2 * scale)
    while excess(high) < 0.0:
        high *= 2.0
    return float(brentq(excess, 2.0, high, xtol=1e-10))


def _solve_interval(p, rho, scenarios, replicas, half_width, confidence, p_name, size_cv, sizes, method):
    """Shared solver of :func:`plan_interval` and :func:`plan_paired_figure`."""
    unknown = _one_unknown(scenarios=scenarios, replicas=replicas, half_width=half_width)
    p = check_probability(p_name, p, closed="neither")
    rho = check_probability("rho", rho)
    method = check_choice("method", method, PLAN_INTERVAL_METHODS)
    ratio, cv = _size_spread(size_cv, sizes)
    z = z_value(confidence)

    def fixed_scenarios(value):
        return _check_count("scenarios", value, 2 if method == "wilson-kish-t" else 1)

    if unknown == "scenarios":
        replicas, half_width = _check_count("replicas", replicas), _check_half_width(half_width)
        units = float(_wilson_units(p, half_width))
        scenarios = int(_scenarios_needed(p, half_width, rho, replicas, ratio, confidence, method))
    elif unknown == "replicas":
        scenarios, half_width = fixed_scenarios(scenarios), _check_half_width(half_width)
        units = float(_wilson_units(p, half_width))
        c = float(_critical(confidence, method, scenarios))
        replicas = _replicas_needed(c * c * units, scenarios, rho, ratio, f"`half_width`={half_width}")
        # the closed form is the Wilson root; confirm on the interval itself
        while _half_width(p, scenarios, replicas, rho, ratio, confidence, method) > half_width:
            replicas += 1
    else:
        scenarios, replicas = fixed_scenarios(scenarios), _check_count("replicas", replicas)
        half_width = float(_half_width(p, scenarios, replicas, rho, ratio, confidence, method))
        units = float(_wilson_units(p, half_width))
    m_bar = replicas * ratio
    deff = float(design_effect(m_bar, rho))
    pq = p * (1.0 - p)
    c = float(_critical(confidence, method, scenarios))
    if method == "wilson-kish":
        floor, floor_wilson = z * z * pq * rho * ratio / half_width**2, z * z * units * rho * ratio
    else:
        floor = _t_floor(pq * rho * ratio / half_width**2, confidence)
        floor_wilson = _t_floor(units * rho * ratio, confidence)
    return dict(
        rho=rho, confidence=float(confidence), replicas=replicas, half_width=float(half_width),
        achieved_half_width=float(_half_width(p, scenarios, replicas, rho, ratio, confidence, method)),
        deff=deff, n_eff=scenarios * replicas / deff, floor=floor, floor_wilson=floor_wilson,
        units=scenarios, units_normal=c * c * pq * deff / (replicas * half_width**2),
        solved_for=unknown, size_cv=cv, m_bar=float(m_bar), method=method,
    )


def plan_interval(p, *, rho, scenarios=None, replicas=None, half_width=None,
                  confidence: float = 0.95, size_cv: float = 0.0, sizes=None,
                  method: str = "wilson-kish") -> IntervalPlan:
    """Plan the Wilson-Kish interval of a rate: solve for ``scenarios``, ``replicas`` or ``half_width``.

    Exactly one of ``scenarios``, ``replicas`` and ``half_width`` is ``None``; it is solved
    for on the interval at ``p_hat = p``: the smallest ``K`` (or ``m``) whose half-width is
    at most ``h``, or the half-width of the given design.

    Parameters
    ----------
    p : float
        Expected rate, in (0, 1).
    rho : float
        Intra-scenario correlation, in [0, 1] (SPEC section 5).
    scenarios, replicas : int or None
        ``K`` and the mean number ``m`` of conversations per scenario.
    half_width : float or None
        Target ``(high - low) / 2``, in (0, 0.5).
    confidence : float
        Two-sided confidence level.
    size_cv : float
        Coefficient of variation of the scenario sizes (0: all scenarios have ``m``).
    sizes : sequence of int, optional
        Scenario sizes (of a pilot, say) whose spread replaces ``size_cv``: ``m_bar = m *
        size_weighted_mean(sizes) / mean(sizes)`` (see the module notes).
    method : {"wilson-kish", "wilson-kish-t"}
        The interval planned for: the paper's (normal quantile) or with t on ``K - 1``
        degrees of freedom (:func:`estimators.clustered_interval`).

    Returns
    -------
    IntervalPlan

    Raises
    ------
    ValueError
        If not exactly one unknown is ``None``, an input is out of range, or no number of
        replicas reaches ``h`` with the given ``K`` (``K`` below the floor).

    Notes
    -----
    Normal rule (Kish 1965 design effect on the binomial sample size; statsmodels
    ``samplesize_confint_proportion`` when ``m = 1``), with ``m_bar = m (1 + cv^2)``
    (Eldridge, Ashby & Kerry 2006)::

        K = z^2 p (1 - p) (1 + (m_bar - 1) rho) / (m h^2)
        floor = lim_{m->inf} K = z^2 p (1-p) rho (1 + cv^2) / h^2

    The t interval needs more scenarios: its quantile on ``K - 1`` degrees of freedom exceeds
    ``z`` (2.06 against 1.96 at 26 df, so about 10% more effective size), and ``K`` is found by
    stepping up from the z plan.

    Examples
    --------
    >>> plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05)
    >>> plan.scenarios, round(plan.scenarios_normal, 2), round(plan.floor, 2)
    (27, 26.28, 13.83)
    >>> plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, size_cv=0.5).m_bar
    12.5
    """
    solved = _solve_interval(p, rho, scenarios, replicas, half_width, confidence, "p", size_cv, sizes, method)
    k = solved.pop("units")
    return IntervalPlan(p=float(p), scenarios=k, scenarios_normal=solved.pop("units_normal"),
                        conversations=k * solved["replicas"], **solved)


def plan_paired_figure(pi, *, rho, cases=None, replicas=None, half_width=None,
                       confidence: float = 0.95, size_cv: float = 0.0, sizes=None,
                       method: str = "wilson-kish") -> PairedFigurePlan:
    """Plan the Wilson-Kish interval of the paired figure ``pi``, with the case as cluster.

    Exactly one of ``cases``, ``replicas`` and ``half_width`` is ``None``. ``rho`` is the
    intra-case correlation of the pair outcome ``(1 - u)(1 - o)``; each case gives
    ``replicas`` pairs and ``2 * replicas`` conversations (SPEC section 5, "Pairs");
    ``size_cv`` or ``sizes`` is the spread of the number of pairs per case. Same solver and
    notes as :func:`plan_interval`.
    """
    try:
        solved = _solve_interval(pi, rho, cases, replicas, half_width, confidence, "pi", size_cv, sizes,
                                 method)
    except ValueError as err:
        raise refuse(str(err).replace("scenarios", "cases"),
                     *(name.replace("scenarios", "cases") for name in getattr(err, "parameters", ()))) from None
    k = solved.pop("units")
    solved["solved_for"] = solved["solved_for"].replace("scenarios", "cases")
    return PairedFigurePlan(pi=float(pi), cases=k, cases_normal=solved.pop("units_normal"),
                            pairs=k * solved["replicas"], conversations=2 * k * solved["replicas"],
                            **solved)
