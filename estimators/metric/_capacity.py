"""Oversight capacity: from the measured rates to the reviewers' queue and the protection it gives.

The measurement says how often an assistant hands a conversation to a person; this module turns
that into the load on the people who take the hand-offs (Turan 2026, "Oversight Has a
Capacity": over-escalation is seen in one conversation, the saturation of the supervisor across
many). The equations, with their sources, are in ``docs/capacity.md`` and in each docstring:

- hand-offs per hour ``a_H = lambda (s e_ESC + (1 - s) e_ACT)``, and approval reviews per hour
  ``a_P = lambda (s r_ESC + (1 - s) r_ACT)`` (requests and inline decisions,
  :func:`~estimators.metric._handoff_totals.approval_reviews`);
- offered load ``A = (a_H tau + a_P tau_P) / 60`` Erlangs and utilisation ``rho = A / R``;
- the M/M/R queue: Erlang C probability of waiting ``C(R, A)`` and mean wait
  ``W_q = C / (R mu - a)``, ``a = a_H + a_P``, ``mu = 60 / tau_bar`` with ``tau_bar = 60 A / a`` the
  arrival-weighted mean review (Kleinrock 1975, section 3.5), times ``(ca^2 + cs^2) / 2`` for general
  arrivals and service times (Allen-Cunneen; Allen 1990), ``cs^2`` that of the two-point mixture of review
  times (:func:`review_mix`);
- review quality ``g(rho)`` and the realised protection ``(1 - p_u) g(rho)``;
- percentile intervals from a cluster bootstrap of the rates (Efron & Tibshirani 1993, ch. 13;
  Davison & Hinkley 1997, section 3.8).

``rho >= 1`` is an unstable queue: the waiting outputs are then NaN (null in JSON), never a number.

The review-quality curves are in :mod:`estimators.metric._review_quality`, the per-scenario totals and their
bootstrap draws in :mod:`estimators.metric._handoff_totals`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..stats import (
    check_count,
    check_level,
    check_probability,
    check_range,
    erlang_c,
    group_coverage,
    mean_wait_minutes,
    nan_to_none,
    percentile_interval,
    percentile_positions,
    refuse,
)
from ._handoff_totals import HandoffTotals
from ._review_quality import LogisticQuality

__all__ = ["DEFAULT_DRAWS", "MAX_REVIEWERS", "CapacityModel", "capacity_outputs", "handoffs_per_hour", "review_mix",
           "NO_APPROVALS"]

#: Most reviewers the model takes or solves for (the Erlang B recursion runs over the servers).
MAX_REVIEWERS = 100_000
#: Bootstrap draws of the rates by default, and the fewest and most a model takes.
DEFAULT_DRAWS = 2000
MIN_DRAWS, MAX_DRAWS = 100, 100_000
#: The outputs of :func:`capacity_outputs`, in the order they are reported.
OUTPUTS = ("handoffs_per_hour", "approvals_per_hour", "mean_review_minutes", "review_cv", "utilisation", "p_wait",
           "mean_wait_minutes", "review_quality", "reviews_under_load", "protection")
#: The outputs that do not depend on the number of reviewers.
UNSTAFFED = ("handoffs_per_hour", "approvals_per_hour", "mean_review_minutes", "review_cv")


def handoffs_per_hour(e_esc, e_act, *, traffic: float, esc_share: float) -> np.ndarray:
    """``a = lambda (s e_ESC + (1 - s) e_ACT)``: the conversations an hour that reach a person (with the approval
    reviews a conversation ``r_ESC``, ``r_ACT`` in place of ``e``: the approval reviews an hour)."""
    return traffic * (esc_share * np.asarray(e_esc, dtype=float) + (1.0 - esc_share) * np.asarray(e_act, dtype=float))


def review_mix(handoffs, approvals, review_minutes: float, approval_minutes: float, service_cv: float = 1.0,
               approval_cv: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reviewers' load and service time when hand-offs and approval reviews share one queue.

    Parameters
    ----------
    handoffs, approvals : array_like of float
        ``a_H`` and ``a_P``, hand-offs and approval reviews an hour.
    review_minutes, approval_minutes : float
        ``tau`` and ``tau_P``, the mean minutes of a hand-off's review and of an approval review.
    service_cv, approval_cv : float
        ``c_H`` and ``c_P``, the coefficients of variation of each kind's review time.

    Returns
    -------
    load, mean_minutes, cv : ndarray
        The offered load ``A = (a_H tau + a_P tau_P) / 60`` Erlangs (loads of two arrival streams add); the
        arrival-weighted mean review ``tau_bar = w tau + (1 - w) tau_P``, ``w = a_H / (a_H + a_P)`` (``tau``
        where nothing arrives), so that ``A = (a_H + a_P) tau_bar / 60``; and ``cs`` of the mixture: a review is
        a hand-off's with probability ``w``, so its moments are the mixture of the two kinds' (law of total
        expectation), ``E[S^2] = w tau^2 (1 + c_H^2) + (1 - w) tau_P^2 (1 + c_P^2)`` and
        ``cs^2 = E[S^2] / tau_bar^2 - 1`` (the squared coefficient of variation of a mixture, with each kind's
        ``E[S_i^2] = tau_i^2 (1 + c_i^2)``; for two exponential kinds it is the hyperexponential's, Kleinrock
        1975, chapter 4). Allen-Cunneen (Allen 1990; Whitt 1993) reads the service time of every arrival, so it
        takes this ``cs`` at ``tau_bar``. With ``tau_P = tau`` and ``c_P = c_H`` it is ``c_H``: the queue of
        hand-offs alone.
    """
    handoffs, approvals = np.asarray(handoffs, dtype=float), np.asarray(approvals, dtype=float)
    total = handoffs + approvals
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(total > 0, handoffs / total, 1.0)
    mean = w * review_minutes + (1.0 - w) * approval_minutes
    second = w * review_minutes ** 2 * (1.0 + service_cv ** 2) + (1.0 - w) * approval_minutes ** 2 * (
        1.0 + approval_cv ** 2)
    cv = np.sqrt(np.maximum(second / mean ** 2 - 1.0, 0.0))  # >= 0 but for rounding
    return (handoffs * review_minutes + approvals * approval_minutes) / 60.0, mean, cv


def capacity_outputs(e_esc, e_act, p_u, r_esc=0.0, r_act=0.0, *, traffic: float, esc_share: float, reviewers: int,
                     review_minutes: float, approval_minutes: float | None = None, arrival_cv: float = 1.0,
                     service_cv: float = 1.0, approval_cv: float = 1.0, quality=None) -> dict[str, np.ndarray]:
    """The capacity model at given rates: every output, vectorised over the rates.

    Parameters
    ----------
    e_esc, e_act, p_u : array_like of float
        Shares of ESC and ACT conversations that reach a person, and the under-escalation rate
        (:class:`HandoffTotals`), of the same shape (one value or one per draw).
    r_esc, r_act : array_like of float
        Approval reviews a conversation of each label beyond its hand-off
        (:func:`~estimators.metric._handoff_totals.approval_reviews`; 0: none).
    traffic : float
        ``lambda``, conversations per hour (>= 0).
    esc_share : float
        ``s``, the share of the traffic whose cases the policy reserves for a person, in [0, 1].
    reviewers : int
        ``R``, in 1 .. :data:`MAX_REVIEWERS`.
    review_minutes : float
        ``tau``, mean minutes a hand-off's review takes (> 0).
    approval_minutes : float or None
        ``tau_P``, mean minutes an approval review takes (> 0); None: ``tau``.
    arrival_cv : float
        ``ca`` of :func:`mean_wait_minutes`.
    service_cv, approval_cv : float
        ``c_H`` and ``c_P``, the coefficients of variation of each kind's review time (:func:`review_mix`).
    quality : callable or None
        ``g(rho)`` (:class:`LogisticQuality`, :class:`TableQuality`); None: the default logistic.

    Returns
    -------
    dict of ndarray
        ``handoffs_per_hour`` ``a_H = lambda (s e_ESC + (1 - s) e_ACT)``; ``approvals_per_hour``
        ``a_P = lambda (s r_ESC + (1 - s) r_ACT)``; ``mean_review_minutes`` ``tau_bar`` and ``review_cv`` ``cs``
        of :func:`review_mix`; ``utilisation`` ``rho = A / R = (a_H tau + a_P tau_P) / (60 R)``; ``p_wait`` the
        Erlang C probability of waiting (M/M/R: the Allen-Cunneen correction is of the mean wait only);
        ``mean_wait_minutes`` (:func:`mean_wait_minutes` at ``tau_bar`` and ``cs``);
        ``review_quality`` ``g(rho)``; ``reviews_under_load`` ``g(0) - g(rho)``, the share of
        reviews whose real decision the load takes away (an unloaded reviewer would make it, a
        reviewer at ``rho`` does not); ``protection`` ``(1 - p_u) g(rho)``, the share of the
        cases reserved for a person that reach one before any action and get a real decision.
        ``p_wait`` and ``mean_wait_minutes`` are NaN where ``rho >= 1``; ``g`` is read at the
        offered ``rho`` also above 1, the overload in which reviewers approve without reading.
    """
    quality = LogisticQuality() if quality is None else quality
    a = handoffs_per_hour(e_esc, e_act, traffic=traffic, esc_share=esc_share)
    approvals = handoffs_per_hour(r_esc, r_act, traffic=traffic, esc_share=esc_share)
    load, tau, cv = review_mix(a, approvals, review_minutes, review_minutes if approval_minutes is None else
                               approval_minutes, service_cv, approval_cv)
    rho = load / reviewers
    g = quality(rho)
    return {"handoffs_per_hour": a, "approvals_per_hour": approvals, "mean_review_minutes": tau, "review_cv": cv,
            "utilisation": rho, "p_wait": erlang_c(load, reviewers),
            "mean_wait_minutes": mean_wait_minutes(load, reviewers, tau, arrival_cv, cv),
            "review_quality": g, "reviews_under_load": quality(0.0) - g,
            "protection": (1.0 - np.asarray(p_u, dtype=float)) * g}


def _percentile(draws, confidence: float, *, undefined_high: bool = True) -> list:
    """``[low, high]`` of the bootstrap's percentile interval of ``draws``
    (:func:`estimators.stats.percentile_interval`), None where an end is undefined."""
    return [nan_to_none(end) for end in percentile_interval(draws, confidence, undefined_high=undefined_high)]


class CapacityModel:
    """The capacity model of one score folder under assumed traffic and staffing.

    Parameters
    ----------
    totals : HandoffTotals
        The measured per-scenario totals.
    traffic, esc_share, review_minutes, approval_minutes, arrival_cv, service_cv, approval_cv, quality
        As :func:`capacity_outputs` (the assumptions: not measured; ``approval_minutes`` None is
        ``review_minutes``).
    confidence : float
        Level of every interval, in (0, 1) (the summary's, by default of the command).
    draws : int
        Bootstrap draws of the rates (>= 100; default :data:`DEFAULT_DRAWS`).
    seed : int or numpy.random.Generator
        Seed (>= 0, recorded in the output) or generator of the draws (recorded as null).

    Notes
    -----
    Each draw of ``(e_ESC, e_ACT, p_u, r_ESC, r_ACT)`` (:meth:`HandoffTotals.draws`) is pushed through
    :func:`capacity_outputs`, and every interval is the percentile interval of the draws
    (:func:`_percentile`). A draw whose queue is unstable has no wait: it ranks above
    every stable draw (its wait is beyond any number), so an end of a waiting interval is null
    when the quantile falls among the unstable draws, and the output gives their share. The
    stable draws alone are not used: their interval would be conditional on stability and too
    short.
    """

    def __init__(self, totals: HandoffTotals, *, traffic: float, esc_share: float, review_minutes: float,
                 approval_minutes: float | None = None, arrival_cv: float = 1.0, service_cv: float = 1.0,
                 approval_cv: float = 1.0, quality=None, confidence: float = 0.95, draws: int = DEFAULT_DRAWS,
                 seed: int | np.random.Generator = 0):
        check_range("traffic", traffic, 0.0, math.inf, closed="low", note=" (conversations an hour)")
        check_probability("esc_share", esc_share)
        check_range("review_minutes", review_minutes, 0.0, math.inf)
        approval_minutes = review_minutes if approval_minutes is None else approval_minutes
        check_range("approval_minutes", approval_minutes, 0.0, math.inf)
        for name, cv in (("arrival_cv", arrival_cv), ("service_cv", service_cv), ("approval_cv", approval_cv)):
            check_range(name, cv, 0.0, math.inf, closed="low")
        check_level("confidence", confidence)
        check_count("draws", draws, MIN_DRAWS, MAX_DRAWS)
        if not isinstance(seed, np.random.Generator):
            check_count("seed", seed, 0, 2**63, note=" (or a numpy Generator)")
        self.totals, self.confidence, self.draws = totals, float(confidence), int(draws)
        self.assumptions = {"traffic_per_hour": float(traffic), "esc_share": float(esc_share),
                            "review_minutes": float(review_minutes), "approval_minutes": float(approval_minutes),
                            "arrival_cv": float(arrival_cv), "service_cv": float(service_cv),
                            "approval_cv": float(approval_cv)}
        self.quality = LogisticQuality() if quality is None else quality
        self.seed = None if isinstance(seed, np.random.Generator) else int(seed)
        self.rates = totals.rates()
        self.rate_draws = totals.draws(self.draws, np.random.default_rng(seed))

    def _outputs(self, reviewers: int, rates) -> dict[str, np.ndarray]:
        a = self.assumptions
        return capacity_outputs(*rates, traffic=a["traffic_per_hour"], esc_share=a["esc_share"],
                                reviewers=reviewers, review_minutes=a["review_minutes"],
                                approval_minutes=a["approval_minutes"], arrival_cv=a["arrival_cv"],
                                service_cv=a["service_cv"], approval_cv=a["approval_cv"], quality=self.quality)

    def _mix(self, rates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`review_mix` (load, mean review, its cv) at ``rates``: one value or one per draw."""
        a = self.assumptions
        e_esc, e_act, _, r_esc, r_act = rates
        handoffs, approvals = (handoffs_per_hour(e, r, traffic=a["traffic_per_hour"], esc_share=a["esc_share"])
                               for e, r in ((e_esc, e_act), (r_esc, r_act)))
        return review_mix(handoffs, approvals, a["review_minutes"], a["approval_minutes"], a["service_cv"],
                          a["approval_cv"])

    @staticmethod
    def _check_reviewers(reviewers) -> int:
        return check_count("reviewers", reviewers, 1, MAX_REVIEWERS)

    def at(self, reviewers: int | None) -> dict:
        """Every output at ``reviewers``, as ``{"value": ..., "ci": [low, high]}`` (None where undefined),
        with ``stable`` (the point estimate's ``rho < 1``) and ``unstable_draws`` (share of draws with
        ``rho >= 1``). ``reviewers`` None (no staffing meets a solved target): only the outputs that do not
        depend on R (:data:`UNSTAFFED`), and None for the rest."""
        if reviewers is None:
            undefined = {name: {"value": None, "ci": [None, None]} for name in OUTPUTS}
            one = self.at(1)
            return {**undefined, **{name: one[name] for name in UNSTAFFED}, "stable": None, "unstable_draws": None}
        reviewers = self._check_reviewers(reviewers)
        point, draws = self._outputs(reviewers, self.rates), self._outputs(reviewers, self.rate_draws)
        result: dict[str, Any] = {
            name: {"value": nan_to_none(point[name]), "ci": _percentile(draws[name], self.confidence)}
            for name in OUTPUTS}
        result["stable"] = bool(point["utilisation"] < 1.0)
        result["unstable_draws"] = float(np.mean(draws["utilisation"] >= 1.0))
        return result

    def report(self, reviewers: int | None) -> dict:
        """:meth:`at` with the inputs (each measured rate with its interval and counts), the assumptions,
        the interval method and the notes: the object ``escalation capacity --json`` prints."""
        inputs = self.totals.inputs()
        for name, draws in zip(("e_esc", "e_act", "p_u", "r_esc", "r_act"), self.rate_draws):
            inputs[name]["ci"] = _percentile(draws, self.confidence)
        notes = NOTES if self.totals.approvals_recorded else (*NOTES, NO_APPROVALS)
        return {"reviewers": reviewers, **self.at(reviewers), "inputs": inputs,
                "assumptions": {**self.assumptions, "reviewers": reviewers, "quality": self.quality.to_dict()},
                "interval": {"method": "percentile cluster bootstrap of e_ESC, e_ACT, p_u, r_ESC and r_ACT (ESC and "
                                       "ACT scenarios resampled separately)", "confidence": self.confidence,
                             "draws": self.draws, "seed": self.seed, "coverage": self.interval_coverage()},
                "notes": notes, "warnings": self.warnings()}

    def interval_coverage(self) -> dict:
        """What ``escalation study coverage`` measured of the percentile cluster bootstrap of one rate, the
        interval every output's rests on, for the ESC and the ACT half's scenarios and replicas: ``{half:
        {"scenarios", "replicas", "cells", "mean", "lowest", "holds"}}`` (:func:`estimators.group_coverage`)."""
        inputs = self.totals.inputs()
        out = {}
        for half, key in (("esc", "e_esc"), ("act", "e_act")):
            scenarios, n = inputs[key]["scenarios"], inputs[key]["n"]
            found = group_coverage(scenarios, n > scenarios)["bootstrap-percentile"]
            out[half] = {"scenarios": scenarios, "replicas": n > scenarios, "cells": found.cells,
                         "mean": found.mean_coverage, "lowest": found.min_coverage, "holds": found.holds}
        return out

    def warnings(self) -> list[str]:
        """Where the intervals or the closed forms are known to fail: the rates' percentile bootstrap where
        ``escalation study coverage`` found it below 95% for the data's scenarios and replicas; burstier
        arrivals than Poisson (``escalation study capacity``'s validation against an event simulation,
        ``validation.csv``)."""
        notes = [f"the {half.upper()} half's {c['scenarios']} scenarios{' with replicas' if c['replicas'] else ''}: "
                 f"the percentile cluster bootstrap of a rate, on which every interval here rests, held "
                 f"{c['mean']:.2f} on average (lowest {c['lowest']:.2f}) in escalation study coverage's "
                 f"{c['cells']} cells of that design, below 95%: read the intervals as too narrow; run more "
                 "scenarios" for half, c in self.interval_coverage().items() if not c["holds"]]
        if self.assumptions["arrival_cv"] <= 1.0:
            return notes
        cv = self.assumptions["arrival_cv"]
        return notes + [f"arrivals burstier than Poisson (--arrival-cv {cv:g}): p_wait is Erlang "
                "C's, which escalation study capacity found 0.06 to 0.21 too low at a cv of 2 against an event "
                "simulation, with the Allen-Cunneen mean wait off by -14% to +57%: read the waiting outputs as "
                "optimistic"]

    @staticmethod
    def _smallest(meets, start: int = 1) -> int | None:
        """The fewest reviewers in ``start`` .. MAX_REVIEWERS for which ``meets(R)``, else None: ``meets`` is
        monotone in R and false below ``start``. Steps of 1, 2, 4... from ``start``, then a bisection."""
        low, high, step = start - 1, start, 1  # low: the largest R known not to meet
        while high <= MAX_REVIEWERS and not meets(high):
            if high == MAX_REVIEWERS:
                return None
            low, high, step = high, min(high + step, MAX_REVIEWERS), 2 * step
        if high > MAX_REVIEWERS:
            return None
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if meets(middle) else (middle, high)
        return high

    def reviewers_for(self, *, wait: float | None = None, protection: float | None = None) -> dict:
        """The fewest reviewers whose mean wait is at most ``wait`` minutes, or whose protection is at least
        ``protection`` (give one).

        Returns
        -------
        dict
            ``reviewers``: by the point estimate; ``reviewers_interval``: so that the interval's upper end
            of the wait (lower end of the protection) meets it too; each None, with the reason in ``notes``,
            when no staffing up to :data:`MAX_REVIEWERS` does (no staffing gives more protection than
            ``(1 - p_u) g(0)``). The wait falls and the protection rises with R in every draw, so a
            doubling then a bisection finds the exact fewest.
        """
        if (wait is None) == (protection is None):
            raise refuse("`wait` or `protection`: give one target", "wait", "protection")
        ca = self.assumptions["arrival_cv"]
        (load, tau, cv), (loads, taus, cvs) = self._mix(self.rates), self._mix(self.rate_draws)
        if wait is not None:
            check_range("wait", wait, 0.0, math.inf, note=" minutes")
            name, target = "mean_wait_minutes", float(wait)

            def point(r):
                return mean_wait_minutes(load, r, tau, ca, cv) <= target

            def interval_end(r):
                end = _percentile(mean_wait_minutes(loads, r, taus, ca, cvs), self.confidence)[1]
                return end is not None and end <= target  # None: the end falls among the unstable draws

            # R <= A is unstable; below the load at the interval's upper position, so is that end's draw
            high = percentile_positions(self.draws, self.confidence)[1][1]
            starts = (math.floor(load) + 1, math.floor(np.sort(loads)[high]) + 1)
            ceilings = (math.inf, math.inf)
        else:
            check_probability("protection", protection, closed="high")
            assert protection is not None  # exactly one target is given
            name, target = "protection", float(protection)
            kept = (1.0 - self.rates[2], 1.0 - self.rate_draws[2])

            def point(r):
                return kept[0] * self.quality(load / r) >= target

            def interval_end(r):
                return _percentile(kept[1] * self.quality(loads / r), self.confidence)[0] >= target

            starts = (1, 1)
            g0 = float(self.quality(0.0))  # g(rho) <= g(0): no staffing gives more than (1 - p_u) g(0)
            ceilings = (kept[0] * g0, _percentile(kept[1] * g0, self.confidence)[0])
        found: list[int | None] = []
        notes: list[str] = []
        for meets, start, ceiling, what in ((point, starts[0], ceilings[0], "the point estimate"),
                                            (interval_end, starts[1], ceilings[1],
                                             f"the interval's {'upper' if wait is not None else 'lower'} end")):
            if ceiling < target:
                found.append(None)
                notes.append(f"no staffing gives {what} a protection of {target:g}: at most (1 - p_u) g(0) = "
                             f"{ceiling:.4g}")
                continue
            found.append(self._smallest(lambda r, meets=meets: bool(meets(r)), max(start, 1)))
            if found[-1] is None:
                notes.append(f"no staffing up to {MAX_REVIEWERS:,} reviewers meets the target with {what}")
        return {"solve": "reviewers", "target": {name: target}, "reviewers": found[0], "reviewers_interval": found[1],
                "notes": notes}

    def budget(self, reviewers: int, utilisation: float = 0.8) -> dict:
        """The escalation budget: the highest ``e_ACT`` that keeps ``rho <= utilisation`` with ``reviewers``.

        Returns
        -------
        dict
            ``e_act_max`` ``{"value", "ci"}``: ``(U - rho_ESC - rho_P) / u_ACT`` with ``rho_ESC = lambda s e_ESC
            tau / (60 R)`` (the utilisation of the ESC hand-offs alone), ``rho_P = a_P tau_P / (60 R)`` (of the
            approval reviews, as measured) and ``u_ACT = lambda (1 - s) tau / (60 R)`` (the utilisation of every
            ACT conversation reaching a person), so that ``rho(e_ACT_max) = U``. It is 1 (not binding: every
            ACT conversation may reach a person) when that exceeds 1 or there is no ACT traffic, and None (no
            budget: the ESC hand-offs and the approval reviews alone exceed U) when it is below 0. The interval
            comes from the draws of ``e_ESC``, ``r_ESC`` and ``r_ACT``, a draw without budget ranking below
            every number. ``e_act`` is the measured one (it is ``p_o``) and ``within`` whether it is at most the
            budget; ``esc_utilisation`` and ``approval_utilisation`` are ``rho_ESC`` and ``rho_P``.
        """
        reviewers = self._check_reviewers(reviewers)
        check_level("utilisation", utilisation)
        a = self.assumptions
        per_hour = a["traffic_per_hour"] * a["review_minutes"] / (60.0 * reviewers)
        act_unit = per_hour * (1.0 - a["esc_share"])

        def most(rates):
            esc_rho = per_hour * a["esc_share"] * np.asarray(rates[0], dtype=float)
            approval_rho = handoffs_per_hour(rates[3], rates[4], traffic=a["traffic_per_hour"],
                                             esc_share=a["esc_share"]) * a["approval_minutes"] / (60.0 * reviewers)
            fixed = esc_rho + approval_rho
            if act_unit == 0:
                raw = np.where(fixed <= utilisation, np.inf, -np.inf)
            else:
                raw = (utilisation - fixed) / act_unit
            return np.where(raw < 0, np.nan, np.minimum(raw, 1.0)), esc_rho, approval_rho

        value, esc_rho, approval_rho = most(self.rates)
        value = nan_to_none(value)
        notes = []
        if value is None:
            notes.append(f"no budget: the ESC hand-offs and the approval reviews alone bring the utilisation to "
                         f"{float(esc_rho + approval_rho):.4g} > {utilisation:g} with R = {reviewers} reviewers")
        elif value == 1.0:
            notes.append(f"not binding: even if every ACT conversation reached a person the utilisation would stay "
                         f"at most {utilisation:g}")
        return {"solve": "budget", "target": {"utilisation": float(utilisation)}, "reviewers": reviewers,
                "e_act_max": {"value": value, "ci": _percentile(most(self.rate_draws)[0], self.confidence,
                                                                        undefined_high=False)},
                "esc_utilisation": float(esc_rho), "approval_utilisation": float(approval_rho),
                "e_act": float(self.rates[1]),
                "within": None if value is None else bool(self.rates[1] <= value), "notes": notes}


#: What every report says about its own limits.
NOTES = (
    "traffic, ESC share, reviewers, review minutes, the cvs and the quality curve are assumptions, not measured",
    ("the waiting outputs are undefined (null) for an unstable queue, utilisation >= 1; an interval end among the "
     "unstable draws is null"),
    "p_wait is Erlang C (M/M/R) whatever the cvs: the Allen-Cunneen correction is of the mean wait only",
    "reviews_under_load = g(0) - g(rho): the share of reviews whose real decision the load takes away",
    ("approval reviews (explicit requests and inline decisions, beyond the hand-offs) share the reviewers' queue, "
     "each taking the approval minutes; the wait is Allen-Cunneen's at the arrival-weighted mean review and the cv "
     "of the mixture of the two review times"),
)
#: The note of a folder without approval evidence (:attr:`HandoffTotals.approvals_recorded`).
NO_APPROVALS = ("the folder holds no approval evidence (scored before approval_requests were written, or in mode "
                "text): no approval review is counted, score it again to count them")
