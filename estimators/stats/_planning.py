"""Sample-size plans: how many scenarios and replicas an evaluation needs.

Three plans, each solved for whichever one of its unknowns is ``None`` (as
``statsmodels.stats.power.solve_power`` does; exactly one may be ``None``):

- :func:`plan_interval`: scenarios ``K``, replicas ``m`` or half-width ``h`` of the
  Wilson-Kish interval of a rate (``p_u`` or ``p_o``; SPEC section 5), or of the
  ``wilson-kish-t`` interval (t on ``K - 1`` degrees of freedom).
- :func:`plan_paired_figure`: the same for the paired figure ``pi``, whose clusters are cases.
- :func:`plan_difference`: scenarios, replicas or power to detect a difference between two
  assistants' rates, paired by scenario or unpaired (Donner & Klar 2000, with the design effect),
  for a z test or a t test on the scenarios.

Replicas are not independent, so more replicas cannot replace more scenarios: as
``m -> inf`` the design effect grows like ``m rho`` and ``K`` falls to the *floor*
``z^2 p (1-p) rho / h^2`` (normal rule), below which no number of replicas goes.

Unequal scenario sizes (SPEC section 5 as changed on 2026-12-01)
================================================================
``replicas`` is the mean number ``m`` of conversations per scenario, so ``N = K m``. When the
scenarios differ in size, ``size_cv`` gives the coefficient of variation of their sizes
(population standard deviation over mean), or ``sizes`` gives the sizes themselves (of a
pilot, or of the planned evaluation). Every plan then takes the design effect of SPEC
section 5, Kish's ``1 + (m_bar - 1) rho`` (:func:`estimators.design_effect`), at the
size-weighted mean size ``m_bar = sum n_j^2 / N``:

- with ``sizes``: ``m_bar = m * size_weighted_mean(sizes) / mean(sizes)``
  (:func:`estimators.size_weighted_mean`), the sizes' own ``m_bar`` when ``m`` is their mean;
- with ``size_cv``: ``m_bar = m (1 + cv^2)``, the same number for sizes of mean ``m`` and
  coefficient of variation ``cv``, i.e. ``deff = 1 + ((cv^2 + 1) m - 1) rho`` (Eldridge,
  Ashby & Kerry 2006, "Sample size for cluster randomized trials: effect of coefficient of
  variation of cluster size and analysis method", Int. J. Epidemiol. 35:1292-1300).

``size_cv = 0`` (the default) is the plan for equal sizes. The floor grows to
``z^2 p (1-p) rho (1 + cv^2) / h^2``.

Limits
======
A plan has at most :data:`MAX_PLAN_SIZE` (a million) scenarios (or cases) and as many replicas,
and a scenario size of ``sizes`` is at most that too; ``size_cv`` is at most
:data:`MAX_SIZE_CV`. A target that needs more (a half-width of 1e-10, two rates 1e-7 apart) is
a ValueError that says how many it would need: no evaluation runs that many conversations, and
the solvers, which step one scenario at a time, would not end (``K + 1 == K`` in floating point
beyond 2**53).

z or t
======
A test on ``K`` scenarios estimates its variance from the scenarios, so with few scenarios
its statistic has heavier tails than the normal. ``test="t"`` (the default of
:func:`plan_difference`) plans for the t test on ``K - 1`` degrees of freedom (paired test on
the scenario differences) or ``2 K - 2`` (unpaired test on the two assistants' scenario
means), with the power of the noncentral t (``K`` is iterated, since the degrees of freedom
depend on it). ``test="z"`` is the normal rule of the textbooks. The sample-size study
(``escalation study sample-size``) measures the size and power of both. Under the null, with
p = 0.15 and 5 replicas, the paired z test rejected up to 12.8% at nominal 5% with 5 to 12
scenarios and 6.6% with 24, the unpaired cluster z test 10.0% and 6.0%; the t tests at most 5.7%
and 5.4% (the unpaired one 6.3% with 5 scenarios of unequal size), and less where errors are
rare. Planned for t, each test reached its 80% power (within 2 MCSE) in 27 or 28 of 28 plans, for
1 (unpaired) or 2 (paired) more scenarios than the z plan.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import nctdtr, ndtr, ndtri, stdtrit

from ._constants import MAX_PLAN_SIZE
from ._design import size_weighted_mean
from ._intervals import critical_value, design_effect, wilson_interval, z_value

__all__ = ["IntervalPlan", "PairedFigurePlan", "DifferencePlan", "plan_interval",
           "plan_paired_figure", "plan_difference", "scenarios_needed", "wilson_sample_size",
           "PLAN_INTERVAL_METHODS", "PLAN_TESTS", "DEFAULT_TEST", "MAX_PLAN_SIZE", "MAX_SIZE_CV"]

_DESIGNS = ("paired", "unpaired")
#: Intervals an interval plan can be made for (:func:`estimators.clustered_interval` names).
PLAN_INTERVAL_METHODS = ("wilson-kish", "wilson-kish-t")
#: Tests a power plan can be made for.
PLAN_TESTS = ("t", "z")
#: The test of :func:`plan_difference` unless told otherwise (the study: t holds its size).
DEFAULT_TEST = "t"
#: The largest coefficient of variation of the scenario sizes (``m_bar = m (1 + cv^2)``: 10001 m).
MAX_SIZE_CV = 100.0


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
        Power of this design for the planned test (normal rule for ``z``, noncentral t for ``t``).
    scenarios : int
        ``K``: shared scenarios (paired) or scenarios per assistant (unpaired).
    scenarios_exact : float
        The unrounded ``K`` for the replicas and power of the plan.
    replicas : int
        Mean ``m`` per scenario and assistant.
    deff : float
        ``1 + (m_bar - 1) rho``.
    conversations : int
        Conversations of both assistants together, ``2 K m``.
    solved_for : str
        ``"scenarios"``, ``"replicas"`` or ``"power"``.
    size_cv, m_bar : float
        Coefficient of variation of the scenario sizes and ``m_bar = m (1 + cv^2)``.
    test : str
        ``"t"`` or ``"z"``.
    df : float
        Degrees of freedom of the t test (``K - 1`` paired, ``2 K - 2`` unpaired); NaN for z.
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
    size_cv: float
    m_bar: float
    test: str
    df: float

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
    if int(value) > MAX_PLAN_SIZE:
        raise ValueError(f"{name} must be at most {MAX_PLAN_SIZE:,} (no evaluation runs more), got {value!r}")
    return int(value)


def _within_limit(name, needed, target: str) -> None:
    """ValueError when a solved ``name`` (``needed``, unrounded; NaN or inf when no finite one does)
    passes :data:`MAX_PLAN_SIZE`; ``target`` says what it was solved for (``half_width=1e-10``)."""
    needed = float(np.max(needed))
    if not needed <= MAX_PLAN_SIZE:
        raise ValueError(f"no plan of at most {MAX_PLAN_SIZE:,} {name} reaches {target}: it needs about "
                         f"{needed:.3g} {name}")


def _check_half_width(value):
    value = float(value)
    if not 0.0 < value < 0.5:
        raise ValueError(f"half_width must lie in (0, 0.5) (a Wilson interval is never wider "
                         f"than 1), got {value!r}")
    return value


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _one_unknown(**given):
    """Name of the single ``None`` argument; ValueError naming them otherwise."""
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        names = ", ".join(given)
        raise ValueError(f"exactly one of {names} must be None (the unknown to solve for); "
                         f"got {len(missing)} None: {missing or 'none'}")
    return missing[0]


def _size_spread(size_cv, sizes) -> tuple[float, float]:
    """``(m_bar / m, cv)`` of the scenario sizes: from ``sizes`` by the one rule, else ``1 + cv^2``.

    With ``sizes``, ``m_bar / m = size_weighted_mean(sizes) / mean(sizes)`` (SPEC section 5) and
    ``cv = sqrt(m_bar / m - 1)``, the population coefficient of variation of the sizes.
    """
    if sizes is not None:
        if size_cv:
            raise ValueError("give size_cv or sizes (whose spread gives it), not both")
        n = np.asarray(sizes, dtype=float).ravel()
        if n.size == 0 or not np.all(np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)) \
                or np.any(n > MAX_PLAN_SIZE):
            raise ValueError(f"sizes must be whole numbers >= 1 (conversations per scenario), at most "
                             f"{MAX_PLAN_SIZE:,}, got {sizes!r}")
        ratio = float(size_weighted_mean(n)) / float(n.mean())
        return ratio, math.sqrt(max(ratio - 1.0, 0.0))
    cv = float(size_cv)
    if not (math.isfinite(cv) and cv >= 0.0):
        raise ValueError(f"size_cv must be a finite number >= 0, got {size_cv!r}")
    if cv > MAX_SIZE_CV:
        raise ValueError(f"size_cv must be at most {MAX_SIZE_CV:g}, got {size_cv!r}")
    return 1.0 + cv * cv, cv


# ---------------------------------------------------------------- interval plans

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
    _within_limit("scenarios", exact, f"half_width={float(np.min(h)):g}")
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
    _check_choice("method", method, PLAN_INTERVAL_METHODS)
    cv = np.asarray(size_cv, dtype=float)
    return _scenarios_needed(p, half_width, rho, replicas, 1.0 + cv * cv, confidence, method)


def _replicas_needed(n_star, scenarios, rho, ratio, what):
    """Smallest ``m >= 1`` with ``K m / (1 + (m r - 1) rho) >= n*`` (``r = m_bar / m``).

    From ``m (K - n* r rho) >= n* (1 - rho)``: possible only when ``K > n* r rho``; ValueError
    below that floor.
    """
    floor = n_star * rho * ratio
    if scenarios <= floor:
        raise ValueError(f"no number of replicas reaches the target with scenarios={scenarios}: "
                         f"{what} needs more than the floor of {floor:.2f} scenarios at "
                         f"rho={rho}")
    exact = n_star * (1.0 - rho) / (scenarios - floor)
    _within_limit("replicas", exact, f"{what} with scenarios={scenarios}")
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
    p = _check_probability(p_name, p)
    rho = _check_probability("rho", rho, open_low=False, open_high=False)
    method = _check_choice("method", method, PLAN_INTERVAL_METHODS)
    ratio, cv = _size_spread(size_cv, sizes)
    z = z_value(confidence)

    def fixed_scenarios(value):
        value = _check_count("scenarios", value)
        if method == "wilson-kish-t" and value < 2:
            raise ValueError("the wilson-kish-t interval needs scenarios >= 2 (t on scenarios - 1 "
                             "degrees of freedom)")
        return value

    if unknown == "scenarios":
        replicas, half_width = _check_count("replicas", replicas), _check_half_width(half_width)
        units = float(_wilson_units(p, half_width))
        scenarios = int(_scenarios_needed(p, half_width, rho, replicas, ratio, confidence, method))
    elif unknown == "replicas":
        scenarios, half_width = fixed_scenarios(scenarios), _check_half_width(half_width)
        units = float(_wilson_units(p, half_width))
        c = float(_critical(confidence, method, scenarios))
        replicas = _replicas_needed(c * c * units, scenarios, rho, ratio, f"half_width={half_width}")
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

    Exactly one of ``scenarios``, ``replicas`` and ``half_width`` is ``None``; it is solved
    for on the interval at ``p_hat = p``: the smallest ``K`` (or ``m``) whose half-width is
    at most ``h``, or the half-width of the given design.

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
        raise ValueError(str(err).replace("scenarios", "cases")) from None
    k = solved.pop("units")
    solved["solved_for"] = solved["solved_for"].replace("scenarios", "cases")
    return PairedFigurePlan(pi=float(pi), cases=k, cases_normal=solved.pop("units_normal"),
                            pairs=k * solved["replicas"], conversations=2 * k * solved["replicas"],
                            **solved)


# ---------------------------------------------------------------- power plans

def _difference_variance(p_a, p_b, rho, correlation, design, ratio=1.0):
    """Variance of one scenario's contribution to ``p_b - p_a``, split as ``c0 + c1 / m``.

    Beta-binomial scenarios: a scenario mean of ``m`` replicas has variance
    ``p q (rho + (1 - rho) / m)``. Unpaired (Donner & Klar 2000, eq. 3.1 per arm and
    cluster): ``(p_a q_a + p_b q_b) (rho + (1 - rho) / m)``. Paired by scenario: minus
    ``2 r rho sqrt(p_a q_a p_b q_b)``, the covariance of the two assistants' true scenario
    rates with correlation ``r``. Unequal sizes (``ratio = m_bar / m = 1 + cv^2``) multiply
    the between-scenario part ``c0``: the size-weighted rate of ``K`` scenarios has variance
    ``sum n_j^2 rho p q / N^2 + (1 - rho) p q / N``, i.e. ``p q deff(m_bar) / N``.
    """
    va, vb = p_a * (1.0 - p_a), p_b * (1.0 - p_b)
    c0 = (va + vb) * rho
    if design == "paired":
        c0 -= 2.0 * correlation * rho * math.sqrt(va * vb)
    c1 = (va + vb) * (1.0 - rho)
    return c0 * ratio, c1


def _test_df(scenarios, design):
    """Degrees of freedom of the t test: ``K - 1`` paired, ``2 K - 2`` unpaired."""
    return scenarios - 1.0 if design == "paired" else 2.0 * scenarios - 2.0


def _t_power(noncentrality, df, alpha):
    """Power of the two-sided level-``alpha`` t test: ``P(|T| > t_{1-alpha/2})``, ``T ~ t(df, nc)``.

    Both tails, as statsmodels' ``TTestPower`` and ``TTestIndPower`` compute it. Where the far tail
    underflows to NaN in ``scipy.special.nctdtr`` (large noncentrality) it is 0; where the near tail
    does, the normal value ``Phi(nc - t)``.
    """
    nc = abs(float(noncentrality))
    critical = float(stdtrit(df, 1.0 - alpha / 2.0))
    near, far = 1.0 - float(nctdtr(df, nc, critical)), float(nctdtr(df, nc, -critical))
    if not math.isfinite(near):
        near = float(ndtr(nc - critical))
    return near + (far if math.isfinite(far) else 0.0)


def plan_difference(p_a, p_b, *, rho, scenarios=None, replicas=None, power=None,
                    alpha: float = 0.05, design: str = "paired",
                    correlation: float | None = None, size_cv: float = 0.0, sizes=None,
                    test: str = DEFAULT_TEST) -> DifferencePlan:
    """Scenarios, replicas or power to detect ``p_b - p_a`` with a two-sided level-``alpha`` test.

    Parameters
    ----------
    p_a, p_b : float
        The two assistants' expected rates, in (0, 1), different.
    rho : float
        Intra-scenario correlation of each assistant's outcome, in [0, 1].
    scenarios, replicas : int or None
        ``K`` (shared scenarios if paired, per assistant if unpaired) and the mean ``m``.
    power : float or None
        Target power, in (alpha / 2, 1) for z and (alpha, 1) for t.
    alpha : float
        Two-sided significance level.
    design : {"paired", "unpaired"}
        ``"paired"``: both assistants run the same scenarios and the test is on the
        scenario differences. ``"unpaired"``: separate scenarios (Donner & Klar).
    correlation : float or None
        Paired design only (required there): correlation between the two assistants'
        true scenario rates, in [-1, 1]. A pilot's scenario rates estimate it.
    size_cv, sizes
        The spread of the scenario sizes, as in :func:`plan_interval`.
    test : {"t", "z"}
        ``"t"``: the t test on the scenarios, ``K - 1`` degrees of freedom paired and
        ``2 K - 2`` unpaired, planned with the noncentral t. ``"z"``: the normal rule.

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
    p_b q_b) (1 + (m_bar-1) rho) / (m Delta^2)``, with ``m_bar = m (1 + cv^2)`` for unequal
    sizes (Eldridge, Ashby & Kerry 2006).

    The t rule is the power of the t test with noncentrality ``sqrt(K Delta^2 / V(m))``
    (Cohen 1988, ch. 2; statsmodels ``TTestPower`` for the paired test, ``TTestIndPower`` with
    ``ratio=1`` for the unpaired one, whose effect size is ``Delta / sqrt(V(m) / 2)``)::

        power = P(|T| > t_{1-alpha/2, df}),   T ~ noncentral t(df, sqrt(K Delta^2 / V(m)))

    solved for the smallest whole ``K`` (``scenarios_exact`` the real root, ``df`` read at it).

    Examples
    --------
    >>> plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired", test="z")
    >>> plan.scenarios, round(plan.scenarios_exact, 2)
    (29, 28.45)
    >>> plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired").scenarios
    30
    """
    unknown = _one_unknown(scenarios=scenarios, replicas=replicas, power=power)
    if design not in _DESIGNS:
        raise ValueError(f"design must be one of {_DESIGNS}, got {design!r}")
    test = _check_choice("test", test, PLAN_TESTS)
    p_a, p_b = _check_probability("p_a", p_a), _check_probability("p_b", p_b)
    if p_a == p_b:
        raise ValueError(f"p_a and p_b must differ to plan a difference, both are {p_a!r}")
    rho = _check_probability("rho", rho, open_low=False, open_high=False)
    alpha = _check_probability("alpha", alpha)
    ratio, cv = _size_spread(size_cv, sizes)
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
    c0, c1 = _difference_variance(p_a, p_b, rho, correlation, design, ratio)

    def variance(m):
        return c0 + (c1 / m if math.isfinite(m) else 0.0)

    def power_of(k, m):
        nc = math.sqrt(k * delta2 / variance(m))
        if test == "z":
            return float(ndtr(nc - z_alpha))
        return _t_power(nc, _test_df(k, design), alpha)

    def exact_k(m, target_power):
        k_z = (z_alpha + float(ndtri(target_power))) ** 2 * variance(m) / delta2
        if test == "z":
            return k_z
        # the real K at which the t test has the target power (power rises with K), from df = 1 up
        low = 2.0 if design == "paired" else 1.5
        high = max(2.0 * low, 2.0 * k_z)
        while power_of(high, m) < target_power:
            high *= 2.0
        if power_of(low, m) >= target_power:
            return low
        return float(brentq(lambda k: power_of(k, m) - target_power, low, high, xtol=1e-10))

    def needed_noncentrality(k, target_power):
        """The ``sqrt(K Delta^2 / V)`` at which the test on ``K`` scenarios has the target power."""
        if test == "z":
            return z_alpha + float(ndtri(target_power))
        df = _test_df(k, design)
        high = 2.0 * (z_alpha + float(ndtri(target_power))) + 1.0
        while _t_power(high, df, alpha) < target_power:
            high *= 2.0
        return float(brentq(lambda nc: _t_power(nc, df, alpha) - target_power, 0.0, high, xtol=1e-12))

    if unknown != "power":
        power = _check_probability("power", power)
        least = alpha / 2.0 if test == "z" else alpha
        if power <= least:
            raise ValueError(f"power must exceed {'alpha / 2' if test == 'z' else 'alpha'} = {least} "
                             f"with test={test!r}, got {power!r}")
    if test == "t" and scenarios is not None and _check_count("scenarios", scenarios) < 2:
        raise ValueError("the t test needs scenarios >= 2 (t on the scenarios' degrees of freedom)")
    if unknown == "scenarios":
        replicas = _check_count("replicas", replicas)
        # the z rule first: the t test needs more, and its solver would not end on an absurd K
        _within_limit("scenarios", (z_alpha + float(ndtri(power))) ** 2 * variance(replicas) / delta2,
                      f"power={power}")
        exact = exact_k(replicas, power)
        _within_limit("scenarios", exact, f"power={power}")
        scenarios = max(1 if test == "z" else 2, math.ceil(exact - 1e-9))
        while power_of(scenarios, replicas) < power and test == "t":  # guard against rounding
            scenarios += 1
    elif unknown == "replicas":
        scenarios = _check_count("scenarios", scenarios)
        budget = scenarios * delta2 / needed_noncentrality(scenarios, power) ** 2
        if budget <= c0:
            raise ValueError(f"no number of replicas reaches power={power} with "
                             f"scenarios={scenarios}: it needs more than the floor of "
                             f"{exact_k(math.inf, power):.2f} scenarios")
        _within_limit("replicas", c1 / (budget - c0), f"power={power} with scenarios={scenarios}")
        replicas = max(1, math.ceil(c1 / (budget - c0) - 1e-9))
        while power_of(scenarios, replicas) < power:  # guard against rounding
            replicas += 1
    else:
        scenarios, replicas = _check_count("scenarios", scenarios), _check_count("replicas", replicas)
    achieved = power_of(scenarios, replicas)
    if unknown == "power":
        power = achieved
    return DifferencePlan(p_a=p_a, p_b=p_b, rho=rho, correlation=correlation, design=design,
                          alpha=alpha, power=float(power), achieved_power=achieved,
                          scenarios=scenarios, scenarios_exact=exact_k(replicas, power),
                          replicas=replicas, deff=float(design_effect(replicas * ratio, rho)),
                          conversations=2 * scenarios * replicas, solved_for=unknown,
                          size_cv=cv, m_bar=float(replicas * ratio), test=test,
                          df=_test_df(scenarios, design) if test == "t" else float("nan"))
