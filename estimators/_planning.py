"""Sample-size plans: how many scenarios and replicas an evaluation needs.

Three plans, each solved for whichever one of its unknowns is ``None`` (as
``statsmodels.stats.power.solve_power`` does; exactly one may be ``None``):

- :func:`plan_interval`: scenarios ``K``, replicas ``m`` or half-width ``h`` of the
  Wilson-Kish interval of a rate (``p_u`` or ``p_o``; SPEC section 5).
- :func:`plan_paired_figure`: the same for the paired figure ``pi``, whose clusters are cases.
- :func:`plan_difference`: scenarios, replicas or power to detect a difference between two
  assistants' rates, paired by scenario or unpaired (Donner & Klar 2000, with the design effect).

Replicas are not independent, so more replicas cannot replace more scenarios: as
``m -> inf`` the design effect grows like ``m rho`` and ``K`` falls to the *floor*
``z^2 p (1-p) rho / h^2`` (normal rule), below which no number of replicas goes.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from ._intervals import design_effect, wilson_kish_interval, z_value

__all__ = ["IntervalPlan", "PairedFigurePlan", "DifferencePlan", "plan_interval",
           "plan_paired_figure", "plan_difference", "scenarios_needed", "wilson_sample_size"]

_DESIGNS = ("paired", "unpaired")


def _as_dict(obj) -> dict:
    """Plain-Python dict of a frozen plan (floats, ints, str), ready for JSON."""
    out = {}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if isinstance(value, (np.floating, np.integer)):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        out[field.name] = value
    return out


@dataclass(frozen=True)
class IntervalPlan:
    """A plan for the Wilson-Kish interval of one rate.

    Attributes
    ----------
    p, rho, confidence : float
        Planned rate, intra-scenario correlation and confidence level.
    scenarios, replicas : int
        Number of scenarios ``K`` and replicas ``m`` per scenario.
    half_width : float
        Target half-width, or the solved one when ``solved_for == "half_width"``.
    achieved_half_width : float
        ``(high - low) / 2`` of the Wilson-Kish interval at ``p_hat = p`` with this design.
    scenarios_normal : float
        Normal-rule scenarios ``z^2 p (1-p) deff / (m h^2)``, not rounded.
    deff, n_eff : float
        Design effect ``1 + (m - 1) rho`` and effective size ``K m / deff``.
    conversations : int
        ``K m``.
    floor : float
        ``z^2 p (1-p) rho / h^2``: scenarios that no number of replicas goes below (normal rule).
    floor_wilson : float
        The same limit for the Wilson interval, ``n* rho`` with ``n*`` the Wilson sample size.
    solved_for : str
        ``"scenarios"``, ``"replicas"`` or ``"half_width"``.
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

    def to_dict(self) -> dict:
        """The plan as a JSON-ready dict (non-finite values become ``None``)."""
        return _as_dict(self)


@dataclass(frozen=True)
class DifferencePlan:
    """A plan to detect the difference ``p_b - p_a`` between two assistants' rates.

    Attributes
    ----------
    p_a, p_b, rho : float
        The two rates and the intra-scenario correlation (the same for both assistants).
    correlation : float
        Correlation between the two assistants' true scenario rates (paired design); NaN
        for the unpaired design.
    design : str
        ``"paired"`` (both assistants run the same ``K`` scenarios) or ``"unpaired"``
        (``K`` scenarios per assistant, Donner & Klar).
    alpha, power : float
        Two-sided level and the target power (or the solved one).
    achieved_power : float
        Power of this design by the normal rule.
    scenarios : int
        ``K``: shared scenarios (paired) or scenarios per assistant (unpaired).
    scenarios_exact : float
        The unrounded ``K`` for the replicas and power of the plan.
    replicas : int
        ``m`` per scenario and assistant.
    deff : float
        ``1 + (m - 1) rho``.
    conversations : int
        Conversations of both assistants together, ``2 K m``.
    solved_for : str
        ``"scenarios"``, ``"replicas"`` or ``"power"``.
    """

    p_a: float
    p_b: float
    rho: float
    correlation: float
    design: str
    alpha: float
    power: float
    achieved_power: float
    scenarios: int
    scenarios_exact: float
    replicas: int
    deff: float
    conversations: int
    solved_for: str

    def to_dict(self) -> dict:
        """The plan as a JSON-ready dict (non-finite values become ``None``)."""
        return _as_dict(self)


# ---------------------------------------------------------------- validation

def _check_probability(name, value, *, open_low=True, open_high=True):
    value = float(value)
    low_ok = value > 0.0 if open_low else value >= 0.0
    high_ok = value < 1.0 if open_high else value <= 1.0
    if not (low_ok and high_ok):
        interval = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return value


def _check_count(name, value):
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if int(value) < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _check_half_width(value):
    value = float(value)
    if not 0.0 < value < 0.5:
        raise ValueError(f"half_width must lie in (0, 0.5) (a Wilson interval is never wider "
                         f"than 1), got {value!r}")
    return value


def _one_unknown(**given):
    """Name of the single ``None`` argument; ValueError naming them otherwise."""
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        names = ", ".join(given)
        raise ValueError(f"exactly one of {names} must be None (the unknown to solve for); "
                         f"got {len(missing)} None: {missing or 'none'}")
    return missing[0]


# ---------------------------------------------------------------- interval plans

def wilson_sample_size(p, half_width, confidence: float = 0.95):
    """Effective size ``n*`` at which the Wilson interval at ``p_hat = p`` has half-width ``h``.

    Solves ``z sqrt(p q n + z^2/4) / (n + z^2) = h`` (the Wilson half-width, Brown, Cai &
    DasGupta 2001, eq. 4, at ``p_hat = p``) for ``n``; the half-width decreases in ``n``, so
    the larger root of ``h^2 n^2 + (2 h^2 z^2 - z^2 p q) n + z^4 (h^2 - 1/4) = 0`` is the
    only positive one::

        n* = z^2 (p q - 2 h^2 + sqrt(p^2 q^2 + h^2 (1 - 4 p q))) / (2 h^2)

    It tends to the normal rule ``z^2 p q / h^2`` as ``h -> 0``. Vectorised; not rounded.
    """
    z = z_value(confidence)
    p = np.asarray(p, dtype=float)
    h = np.asarray(half_width, dtype=float)
    pq = p * (1.0 - p)
    return z * z * (pq - 2.0 * h * h + np.sqrt(pq * pq + h * h * (1.0 - 4.0 * pq))) / (2.0 * h * h)


def _wilson_kish_half_width(p, scenarios, replicas, rho, confidence):
    """``(high - low) / 2`` of the Wilson-Kish interval at ``p_hat = p`` (vectorised)."""
    n = np.asarray(scenarios, dtype=float) * np.asarray(replicas, dtype=float)
    interval = wilson_kish_interval(np.asarray(p, dtype=float) * n, n, replicas, rho, confidence)
    return (interval.high - interval.low) / 2.0


def scenarios_needed(p, half_width, rho, replicas, confidence: float = 0.95):
    """Smallest ``K`` whose Wilson-Kish interval at ``p_hat = p`` has half-width ``<= h``.

    Vectorised over ``p``, ``half_width``, ``rho`` and ``replicas`` (broadcast). ``K`` starts
    from ``ceil(n* deff / m)`` (:func:`wilson_sample_size`) and is then checked against
    :func:`estimators._intervals.wilson_kish_interval` itself, one step either way, so the
    answer is the interval's, not the formula's.
    """
    p, h, rho, m = np.broadcast_arrays(*(np.asarray(x, dtype=float)
                                         for x in (p, half_width, rho, replicas)))
    deff = design_effect(m, rho)
    k = np.maximum(np.ceil(wilson_sample_size(p, h, confidence) * deff / m - 1e-9), 1.0)
    too_wide = _wilson_kish_half_width(p, k, m, rho, confidence) > h
    k = np.where(too_wide, k + 1.0, k)
    smaller_fits = (k > 1) & (_wilson_kish_half_width(p, np.maximum(k - 1.0, 1.0), m, rho,
                                                      confidence) <= h)
    k = np.where(smaller_fits, k - 1.0, k).astype(np.int64)
    return k[()] if k.ndim == 0 else k


def _replicas_needed(n_star, scenarios, rho, what):
    """Smallest ``m >= 1`` with ``K m / (1 + (m-1) rho) >= n*``; ValueError below the floor.

    From ``m (K - n* rho) >= n* (1 - rho)``: possible only when ``K > n* rho``.
    """
    if scenarios <= n_star * rho:
        raise ValueError(f"no number of replicas reaches the target with scenarios={scenarios}: "
                         f"{what} needs more than the floor of {n_star * rho:.2f} scenarios at "
                         f"rho={rho}")
    return max(1, math.ceil(n_star * (1.0 - rho) / (scenarios - n_star * rho) - 1e-9))


def _solve_interval(p, rho, scenarios, replicas, half_width, confidence, p_name):
    """Shared solver of :func:`plan_interval` and :func:`plan_paired_figure`."""
    unknown = _one_unknown(scenarios=scenarios, replicas=replicas, half_width=half_width)
    p = _check_probability(p_name, p)
    rho = _check_probability("rho", rho, open_low=False, open_high=False)
    z = z_value(confidence)
    if unknown == "scenarios":
        replicas, half_width = _check_count("replicas", replicas), _check_half_width(half_width)
        scenarios = int(scenarios_needed(p, half_width, rho, replicas, confidence))
    elif unknown == "replicas":
        scenarios, half_width = _check_count("scenarios", scenarios), _check_half_width(half_width)
        replicas = _replicas_needed(float(wilson_sample_size(p, half_width, confidence)),
                                    scenarios, rho, f"half_width={half_width}")
        # the closed form is the Wilson root; confirm on the interval itself
        while _wilson_kish_half_width(p, scenarios, replicas, rho, confidence) > half_width:
            replicas += 1
    else:
        scenarios, replicas = _check_count("scenarios", scenarios), _check_count("replicas", replicas)
        half_width = float(_wilson_kish_half_width(p, scenarios, replicas, rho, confidence))
    deff = float(design_effect(replicas, rho))
    pq = p * (1.0 - p)
    return dict(
        rho=rho, confidence=float(confidence), replicas=replicas, half_width=float(half_width),
        achieved_half_width=float(_wilson_kish_half_width(p, scenarios, replicas, rho, confidence)),
        deff=deff, n_eff=scenarios * replicas / deff,
        floor=z * z * pq * rho / half_width**2,
        floor_wilson=float(wilson_sample_size(p, half_width, confidence)) * rho,
        units=scenarios, units_normal=z * z * pq * deff / (replicas * half_width**2),
        solved_for=unknown,
    )


def plan_interval(p, *, rho, scenarios=None, replicas=None, half_width=None,
                  confidence: float = 0.95) -> IntervalPlan:
    """Plan the Wilson-Kish interval of a rate: solve for ``scenarios``, ``replicas`` or ``half_width``.

    Parameters
    ----------
    p : float
        Expected rate, in (0, 1).
    rho : float
        Intra-scenario correlation, in [0, 1] (SPEC section 5).
    scenarios, replicas : int or None
        ``K`` and ``m``.
    half_width : float or None
        Target ``(high - low) / 2``, in (0, 0.5).
    confidence : float
        Two-sided confidence level.

    Exactly one of ``scenarios``, ``replicas`` and ``half_width`` is ``None``; it is solved
    for on the Wilson-Kish interval at ``p_hat = p``: the smallest ``K`` (or ``m``) whose
    half-width is at most ``h``, or the half-width of the given design.

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
    ``samplesize_confint_proportion`` when ``m = 1``)::

        K = z^2 p (1 - p) (1 + (m - 1) rho) / (m h^2),   floor = lim_{m->inf} K = z^2 p (1-p) rho / h^2

    Examples
    --------
    >>> plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05)
    >>> plan.scenarios, round(plan.scenarios_normal, 2), round(plan.floor, 2)
    (27, 26.28, 13.83)
    """
    solved = _solve_interval(p, rho, scenarios, replicas, half_width, confidence, "p")
    k = solved.pop("units")
    return IntervalPlan(p=float(p), scenarios=k, scenarios_normal=solved.pop("units_normal"),
                        conversations=k * solved["replicas"], **solved)


def plan_paired_figure(pi, *, rho, cases=None, replicas=None, half_width=None,
                       confidence: float = 0.95) -> PairedFigurePlan:
    """Plan the Wilson-Kish interval of the paired figure ``pi``, with the case as cluster.

    Exactly one of ``cases``, ``replicas`` and ``half_width`` is ``None``. ``rho`` is the
    intra-case correlation of the pair outcome ``(1 - u)(1 - o)``; each case gives
    ``replicas`` pairs and ``2 * replicas`` conversations (SPEC section 5, "Pairs").
    Same solver and notes as :func:`plan_interval`.
    """
    try:
        solved = _solve_interval(pi, rho, cases, replicas, half_width, confidence, "pi")
    except ValueError as err:
        raise ValueError(str(err).replace("scenarios", "cases")) from None
    k = solved.pop("units")
    solved["solved_for"] = solved["solved_for"].replace("scenarios", "cases")
    return PairedFigurePlan(pi=float(pi), cases=k, cases_normal=solved.pop("units_normal"),
                            pairs=k * solved["replicas"], conversations=2 * k * solved["replicas"],
                            **solved)


# ---------------------------------------------------------------- power plans

def _difference_variance(p_a, p_b, rho, replicas, correlation, design):
    """Variance of one scenario's contribution to ``p_b - p_a``, split as ``c0 + c1 / m``.

    Beta-binomial scenarios: a scenario mean of ``m`` replicas has variance
    ``p q (rho + (1 - rho) / m)``. Unpaired (Donner & Klar 2000, eq. 3.1 per arm and
    cluster): ``(p_a q_a + p_b q_b) (rho + (1 - rho) / m)``. Paired by scenario: minus
    ``2 r rho sqrt(p_a q_a p_b q_b)``, the covariance of the two assistants' true scenario
    rates with correlation ``r``.
    """
    va, vb = p_a * (1.0 - p_a), p_b * (1.0 - p_b)
    c0 = (va + vb) * rho
    if design == "paired":
        c0 -= 2.0 * correlation * rho * math.sqrt(va * vb)
    c1 = (va + vb) * (1.0 - rho)
    return c0, c1


def plan_difference(p_a, p_b, *, rho, scenarios=None, replicas=None, power=None,
                    alpha: float = 0.05, design: str = "paired",
                    correlation: float | None = None) -> DifferencePlan:
    """Scenarios, replicas or power to detect ``p_b - p_a`` with a two-sided level-``alpha`` test.

    Parameters
    ----------
    p_a, p_b : float
        The two assistants' expected rates, in (0, 1), different.
    rho : float
        Intra-scenario correlation of each assistant's outcome, in [0, 1].
    scenarios, replicas : int or None
        ``K`` (shared scenarios if paired, per assistant if unpaired) and ``m``.
    power : float or None
        Target power, in (alpha / 2, 1).
    alpha : float
        Two-sided significance level.
    design : {"paired", "unpaired"}
        ``"paired"``: both assistants run the same scenarios and the test is on the
        scenario differences. ``"unpaired"``: separate scenarios (Donner & Klar).
    correlation : float or None
        Paired design only (required there): correlation between the two assistants'
        true scenario rates, in [-1, 1]. A pilot's scenario rates estimate it.

    Exactly one of ``scenarios``, ``replicas`` and ``power`` is ``None``.

    Returns
    -------
    DifferencePlan

    Notes
    -----
    With ``V(m) = c0 + c1 / m`` the variance of one scenario's difference
    (:func:`_difference_variance`) and ``Delta = p_b - p_a``, the normal rule is
    (Donner & Klar 2000, section 5.2; the unpaired ``K`` is clusters per arm)::

        K = (z_{1-alpha/2} + z_{power})^2 V(m) / Delta^2
        power = Phi(sqrt(K Delta^2 / V(m)) - z_{1-alpha/2})

    The far tail of the two-sided test is ignored, as in the formula. Unpaired, ``V(m)``
    times ``m`` is ``(p_a q_a + p_b q_b) deff``: the textbook ``K = (z+z)^2 (p_a q_a +
    p_b q_b) (1 + (m-1) rho) / (m Delta^2)``.

    Examples
    --------
    >>> plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired")
    >>> plan.scenarios, round(plan.scenarios_exact, 2)
    (29, 28.45)
    """
    unknown = _one_unknown(scenarios=scenarios, replicas=replicas, power=power)
    if design not in _DESIGNS:
        raise ValueError(f"design must be one of {_DESIGNS}, got {design!r}")
    p_a, p_b = _check_probability("p_a", p_a), _check_probability("p_b", p_b)
    if p_a == p_b:
        raise ValueError(f"p_a and p_b must differ to plan a difference, both are {p_a!r}")
    rho = _check_probability("rho", rho, open_low=False, open_high=False)
    alpha = _check_probability("alpha", alpha)
    if design == "paired":
        if correlation is None:
            raise ValueError("correlation (between the two assistants' scenario rates) is "
                             "required for design='paired'")
        correlation = float(correlation)
        if not -1.0 <= correlation <= 1.0:
            raise ValueError(f"correlation must lie in [-1, 1], got {correlation!r}")
    elif correlation is not None:
        raise ValueError(f"correlation applies only to design='paired', got {correlation!r} "
                         f"with design='unpaired'")
    else:
        correlation = float("nan")
    z_alpha = z_value(1.0 - alpha)
    delta2 = (p_b - p_a) ** 2

    def exact_k(m, target_power):
        c0, c1 = _difference_variance(p_a, p_b, rho, m, correlation, design)
        return (z_alpha + float(ndtri(target_power))) ** 2 * (c0 + c1 / m) / delta2

    if unknown != "power":
        power = _check_probability("power", power)
        if power <= alpha / 2.0:
            raise ValueError(f"power must exceed alpha / 2 = {alpha / 2}, got {power!r}")
    if unknown == "scenarios":
        replicas = _check_count("replicas", replicas)
        scenarios = max(1, math.ceil(exact_k(replicas, power) - 1e-9))
    elif unknown == "replicas":
        scenarios = _check_count("scenarios", scenarios)
        c0, c1 = _difference_variance(p_a, p_b, rho, 1, correlation, design)
        budget = scenarios * delta2 / (z_alpha + float(ndtri(power))) ** 2
        if budget <= c0:
            raise ValueError(f"no number of replicas reaches power={power} with "
                             f"scenarios={scenarios}: it needs more than the floor of "
                             f"{exact_k(math.inf, power):.2f} scenarios")
        replicas = max(1, math.ceil(c1 / (budget - c0) - 1e-9))
    else:
        scenarios, replicas = _check_count("scenarios", scenarios), _check_count("replicas", replicas)
    c0, c1 = _difference_variance(p_a, p_b, rho, replicas, correlation, design)
    achieved = float(ndtr(math.sqrt(scenarios * delta2 / (c0 + c1 / replicas)) - z_alpha))
    if unknown == "power":
        power = achieved
    return DifferencePlan(p_a=p_a, p_b=p_b, rho=rho, correlation=correlation, design=design,
                          alpha=alpha, power=float(power), achieved_power=achieved,
                          scenarios=scenarios, scenarios_exact=exact_k(replicas, power),
                          replicas=replicas, deff=float(design_effect(replicas, rho)),
                          conversations=2 * scenarios * replicas, solved_for=unknown)
