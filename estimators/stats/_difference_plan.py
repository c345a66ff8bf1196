"""Difference plans: scenarios, replicas or power to detect a difference between two assistants' rates
(:func:`plan_difference`), paired by scenario or unpaired, for a z test or a t test on the scenarios.

The rules shared by every plan (unequal scenario sizes, limits, z or t) are in :mod:`._planning`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.optimize import brentq
from scipy.special import nctdtr, ndtr, ndtri, stdtrit

from ._checks import check_choice, check_probability, check_range, refuse
from ._intervals import design_effect, z_value
from ._planning import (
    _DESIGNS,
    COMPARE_INTERVAL,
    DEFAULT_TEST,
    PLAN_TESTS,
    _as_dict,
    _check_count,
    _one_unknown,
    _size_spread,
    _within_limit,
)

__all__ = ["DifferencePlan", "plan_difference"]


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
    compare_interval : str or None
        The ``escalation compare --interval`` that runs the planned test (paired design:
        ``wilson-kish-t`` for t, ``wilson-kish`` for z, :data:`COMPARE_INTERVAL`); None unpaired, which
        ``compare`` does not run.
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
    compare_interval: str | None = None

    def to_dict(self) -> dict:
        """The plan as a JSON-ready dict (non-finite values become ``None``)."""
        return _as_dict(self)


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


def _check_correlation(correlation, design):
    """``correlation``, checked: required in [-1, 1] for the paired design, refused (NaN) for the unpaired one."""
    if design == "paired":
        if correlation is None:
            raise refuse("`correlation` (between the two assistants' scenario rates) is "
                         "required for `design`='paired'", "correlation", "design")
        correlation = check_range("correlation", correlation, -1.0, 1.0, closed="both")
    elif correlation is not None:
        raise refuse(f"`correlation` applies only to `design`='paired'; got {correlation!r} "
                     f"with `design`='unpaired'", "correlation", "design")
    else:
        correlation = float("nan")
    return correlation


def _check_power(power, alpha, test):
    """``power``, checked: in (0, 1) and above ``alpha / 2`` (z test) or ``alpha`` (t test)."""
    power = check_probability("power", power, closed="neither")
    least = alpha / 2.0 if test == "z" else alpha
    if power <= least:
        raise refuse(f"`power` must exceed {'alpha / 2' if test == 'z' else 'alpha'} = {least} "
                     f"with `test`={test}; got {power!r}", "power", "test")
    return power


@dataclass(frozen=True)
class _PowerRule:
    """The power of the test of ``p_b - p_a`` on ``K`` scenarios of ``m`` replicas, and its inverses.

    Attributes
    ----------
    c0, c1 : float
        The variance of one scenario's difference is ``c0 + c1 / m`` (:func:`_difference_variance`).
    delta2 : float
        ``(p_b - p_a) ** 2``.
    alpha, z_alpha : float
        The two-sided level and ``z_{1-alpha/2}``.
    test, design : str
        As in :func:`plan_difference`.
    """

    c0: float
    c1: float
    delta2: float
    alpha: float
    z_alpha: float
    test: str
    design: str

    def variance(self, m):
        """``V(m)``; ``c0`` for ``m = inf``."""
        return self.c0 + (self.c1 / m if math.isfinite(m) else 0.0)

    def power_of(self, k, m):
        """The power on ``k`` scenarios of ``m`` replicas."""
        nc = math.sqrt(k * self.delta2 / self.variance(m))
        if self.test == "z":
            return float(ndtr(nc - self.z_alpha))
        return _t_power(nc, _test_df(k, self.design), self.alpha)

    def exact_k(self, m, target_power):
        """The real ``K`` at which the test on ``m`` replicas has the target power."""
        k_z = (self.z_alpha + float(ndtri(target_power))) ** 2 * self.variance(m) / self.delta2
        if self.test == "z":
            return k_z
        # the real K at which the t test has the target power (power rises with K), from df = 1 up
        low = 2.0 if self.design == "paired" else 1.5
        high = max(2.0 * low, 2.0 * k_z)
        while self.power_of(high, m) < target_power:
            high *= 2.0
        if self.power_of(low, m) >= target_power:
            return low
        return float(brentq(lambda k: self.power_of(k, m) - target_power, low, high, xtol=1e-10))

    def needed_noncentrality(self, k, target_power):
        """The ``sqrt(K Delta^2 / V)`` at which the test on ``K`` scenarios has the target power."""
        if self.test == "z":
            return self.z_alpha + float(ndtri(target_power))
        df = _test_df(k, self.design)
        high = 2.0 * (self.z_alpha + float(ndtri(target_power))) + 1.0
        while _t_power(high, df, self.alpha) < target_power:
            high *= 2.0
        return float(brentq(lambda nc: _t_power(nc, df, self.alpha) - target_power, 0.0, high, xtol=1e-12))


def _scenarios_for_power(rule, replicas, power):
    """``(scenarios, replicas)``: the smallest whole ``K`` with the target power at ``replicas``."""
    replicas = _check_count("replicas", replicas)
    # the z rule first: the t test needs more, and its solver would not end on an absurd K
    _within_limit("scenarios", (rule.z_alpha + float(ndtri(power))) ** 2 * rule.variance(replicas) / rule.delta2,
                  f"`power`={power}", "power")
    exact = rule.exact_k(replicas, power)
    _within_limit("scenarios", exact, f"`power`={power}", "power")
    scenarios = max(1 if rule.test == "z" else 2, math.ceil(exact - 1e-9))
    while rule.power_of(scenarios, replicas) < power and rule.test == "t":  # guard against rounding
        scenarios += 1
    return scenarios, replicas


def _replicas_for_power(rule, scenarios, power):
    """``(scenarios, replicas)``: the smallest whole ``m`` with the target power on ``scenarios``."""
    scenarios = _check_count("scenarios", scenarios)
    c0, c1 = rule.c0, rule.c1
    budget = scenarios * rule.delta2 / rule.needed_noncentrality(scenarios, power) ** 2
    if budget <= c0:
        raise refuse(f"no number of replicas reaches `power`={power} with "
                     f"`scenarios`={scenarios}: it needs more than the floor of "
                     f"{rule.exact_k(math.inf, power):.2f} scenarios", "power", "scenarios")
    _within_limit("replicas", c1 / (budget - c0), f"`power`={power} with `scenarios`={scenarios}", "power",
                  "scenarios")
    replicas = max(1, math.ceil(c1 / (budget - c0) - 1e-9))
    while rule.power_of(scenarios, replicas) < power:  # guard against rounding
        replicas += 1
    return scenarios, replicas


def plan_difference(p_a, p_b, *, rho, scenarios=None, replicas=None, power=None,
                    alpha: float = 0.05, design: str = "paired",
                    correlation: float | None = None, size_cv: float = 0.0, sizes=None,
                    test: str = DEFAULT_TEST) -> DifferencePlan:
    """Scenarios, replicas or power to detect ``p_b - p_a`` with a two-sided level-``alpha`` test.

    Exactly one of ``scenarios``, ``replicas`` and ``power`` is ``None``.

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
        ``2 K - 2`` unpaired, planned with the noncentral t. ``"z"``: the normal rule. Paired, each is
        the test of an ``escalation compare --interval`` (``compare_interval``: ``wilson-kish-t`` and
        ``wilson-kish``).

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
    check_choice("design", design, _DESIGNS)
    test = check_choice("test", test, PLAN_TESTS)
    p_a, p_b = check_probability("p_a", p_a, closed="neither"), check_probability("p_b", p_b, closed="neither")
    if p_a == p_b:
        raise refuse(f"`p_a` and `p_b` must differ to plan a difference; both are {p_a!r}", "p_a", "p_b")
    rho = check_probability("rho", rho)
    alpha = check_probability("alpha", alpha, closed="neither")
    ratio, cv = _size_spread(size_cv, sizes)
    correlation = _check_correlation(correlation, design)
    c0, c1 = _difference_variance(p_a, p_b, rho, correlation, design, ratio)
    rule = _PowerRule(c0=c0, c1=c1, delta2=(p_b - p_a) ** 2, alpha=alpha, z_alpha=z_value(1.0 - alpha), test=test,
                      design=design)
    if unknown != "power":
        power = _check_power(power, alpha, test)
    if test == "t" and scenarios is not None:
        _check_count("scenarios", scenarios, 2)
    if unknown == "scenarios":
        scenarios, replicas = _scenarios_for_power(rule, replicas, power)
    elif unknown == "replicas":
        scenarios, replicas = _replicas_for_power(rule, scenarios, power)
    else:
        scenarios, replicas = _check_count("scenarios", scenarios), _check_count("replicas", replicas)
    achieved = rule.power_of(scenarios, replicas)
    if unknown == "power":
        power = achieved
    return DifferencePlan(p_a=p_a, p_b=p_b, rho=rho, correlation=correlation, design=design,
                          alpha=alpha, power=float(power), achieved_power=achieved,
                          scenarios=scenarios, scenarios_exact=rule.exact_k(replicas, power),
                          replicas=replicas, deff=float(design_effect(replicas * ratio, rho)),
                          conversations=2 * scenarios * replicas, solved_for=unknown,
                          size_cv=cv, m_bar=float(replicas * ratio), test=test,
                          df=_test_df(scenarios, design) if test == "t" else float("nan"),
                          compare_interval=COMPARE_INTERVAL[test] if design == "paired" else None)
