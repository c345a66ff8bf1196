"""Oversight capacity: from the measured rates to the reviewers' queue and the protection it gives.

The measurement says how often an assistant hands a conversation to a person; this module turns
that into the load on the people who take the hand-offs (Turan 2026, "Oversight Has a
Capacity": over-escalation is seen in one conversation, the saturation of the supervisor across
many). The equations, with their sources, are in ``docs/capacity.md`` and in each docstring:

- hand-offs per hour ``a = lambda (s e_ESC + (1 - s) e_ACT)``;
- offered load ``A = a tau / 60`` Erlangs and utilisation ``rho = A / R``;
- the M/M/R queue: Erlang C probability of waiting ``C(R, A)`` and mean wait
  ``W_q = C / (R mu - a)``, ``mu = 60 / tau`` (Kleinrock 1975, section 3.5), times
  ``(ca^2 + cs^2) / 2`` for general arrivals and service times (Allen-Cunneen; Allen 1990);
- review quality ``g(rho)`` and the realised protection ``(1 - p_u) g(rho)``;
- percentile intervals from a cluster bootstrap of the rates (Efron & Tibshirani 1993, ch. 13;
  Davison & Hinkley 1997, section 3.8).

``rho >= 1`` is an unstable queue: the waiting outputs are then NaN (null in JSON), never a number.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..records import InputError
from ..stats import erlang_c, mean_wait_minutes
from ..records import ACT, ESC

__all__ = ["DEFAULT_DRAWS", "MAX_REVIEWERS", "CapacityModel", "HandoffTotals", "LogisticQuality", "TableQuality",
           "capacity_outputs", "handoffs_per_hour", "read_quality_table"]

#: Most reviewers the model takes or solves for (the Erlang B recursion runs over the servers).
MAX_REVIEWERS = 100_000
#: Bootstrap draws of the rates by default, and the fewest and most a model takes.
DEFAULT_DRAWS = 2000
MIN_DRAWS, MAX_DRAWS = 100, 100_000
#: Largest (draws x scenarios) block of multiplicities drawn at once, so memory stays bounded.
_MAX_CELLS = 2**22
#: The outputs of :func:`capacity_outputs`, in the order they are reported.
OUTPUTS = ("handoffs_per_hour", "utilisation", "p_wait", "mean_wait_minutes", "review_quality",
           "reviews_under_load", "protection")


@dataclass(frozen=True)
class LogisticQuality:
    """Review quality ``g(rho) = g_max / (1 + exp(k (rho - rho_half)))``: the probability that a
    hand-off gets a real decision at utilisation ``rho``.

    The defaults are an assumption, not a measurement (``docs/capacity.md`` gives the reasons):
    ``g_max = 0.95`` (an unloaded reviewer still misses some), ``rho_half = 0.9`` (half the
    decisions are lost when the reviewers are busy 90% of the time) and ``k = 20`` (``g`` stays
    within 12% of ``g_max`` up to ``rho = 0.8``). Set them to what is known of your reviewers.

    Parameters
    ----------
    maximum : float
        ``g_max`` in (0, 1].
    half : float
        ``rho_half`` > 0: the utilisation at which ``g = g_max / 2``.
    slope : float
        ``k`` > 0: how sharply quality falls around ``rho_half``.
    """

    maximum: float = 0.95
    half: float = 0.9
    slope: float = 20.0

    def __post_init__(self):
        _check("maximum", self.maximum, 0.0 < self.maximum <= 1.0, "lie in (0, 1]")
        _check("half", self.half, math.isfinite(self.half) and self.half > 0, "be > 0")
        _check("slope", self.slope, math.isfinite(self.slope) and self.slope > 0, "be > 0")

    def __call__(self, utilisation) -> np.ndarray:
        with np.errstate(over="ignore"):  # exp overflows to inf far above rho_half: g = 0 there
            return self.maximum / (1.0 + np.exp(self.slope * (np.asarray(utilisation, dtype=float) - self.half)))

    def to_dict(self) -> dict:
        return {"curve": "logistic", "formula": "g(rho) = max / (1 + exp(slope (rho - half)))",
                "max": self.maximum, "half": self.half, "slope": self.slope}


@dataclass(frozen=True)
class TableQuality:
    """Review quality from a table of ``(utilisation, g)`` points, interpolated linearly.

    Parameters
    ----------
    utilisation : tuple of float
        At least two points, >= 0, strictly increasing (points above 1 describe overload: the
        curve is read at the offered utilisation, which may exceed 1).
    quality : tuple of float
        ``g`` at each point, in [0, 1] and non-increasing (quality does not rise with load).
    source : str or None
        The file the table was read from, for the output.

    Notes
    -----
    Below the first point ``g`` is the first value, above the last the last (``numpy.interp``
    clamps at the ends).
    """

    utilisation: tuple
    quality: tuple
    source: str | None = None

    def __post_init__(self):
        u, g = np.asarray(self.utilisation, dtype=float), np.asarray(self.quality, dtype=float)
        if u.shape != g.shape or u.ndim != 1 or len(u) < 2:
            raise ValueError("a quality table needs at least two (utilisation, quality) points")
        if not (np.isfinite(u).all() and u[0] >= 0 and (np.diff(u) > 0).all()):
            raise ValueError("the utilisations of a quality table must be >= 0 and strictly increasing")
        if not (np.isfinite(g).all() and ((g >= 0) & (g <= 1)).all() and (np.diff(g) <= 0).all()):
            raise ValueError("the qualities of a quality table must lie in [0, 1] and not increase")

    def __call__(self, utilisation) -> np.ndarray:
        return np.interp(np.asarray(utilisation, dtype=float), self.utilisation, self.quality)

    def to_dict(self) -> dict:
        return {"curve": "table", "source": self.source,
                "points": [[float(u), float(g)] for u, g in zip(self.utilisation, self.quality)]}


def read_quality_table(path) -> TableQuality:
    """A :class:`TableQuality` from a CSV file with the columns ``utilisation,quality``.

    Raises
    ------
    InputError
        Naming the file, line and column: a missing column, a value that is not a number, a
        utilisation that is negative or does not increase, a quality outside [0, 1] or one that
        increases, fewer than two rows.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    points = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("utilisation", "quality") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"needs the columns utilisation,quality; missing {', '.join(missing)}", source=str(path),
                             line=1)
        for row in reader:
            line = reader.line_num
            values = []
            for column in ("utilisation", "quality"):
                try:
                    values.append(float(row[column]))
                except (TypeError, ValueError):
                    raise InputError(f"not a number: {row[column]!r}", source=str(path), line=line,
                                     field=column) from None
            u, g = values
            if not (math.isfinite(u) and u >= 0) or (points and u <= points[-1][0]):
                raise InputError(f"must be >= 0 and larger than the row before, got {u:g}", source=str(path),
                                 line=line, field="utilisation")
            if not (0.0 <= g <= 1.0) or (points and g > points[-1][1]):
                raise InputError(f"must lie in [0, 1] and not exceed the row before (quality does not rise "
                                 f"with load), got {g:g}", source=str(path), line=line, field="quality")
            points.append((u, g))
    if len(points) < 2:
        raise InputError(f"needs at least two rows, got {len(points)}", source=str(path))
    return TableQuality(tuple(u for u, _ in points), tuple(g for _, g in points), source=str(path))


def handoffs_per_hour(e_esc, e_act, *, traffic: float, esc_share: float) -> np.ndarray:
    """``a = lambda (s e_ESC + (1 - s) e_ACT)``: the conversations an hour that reach a person."""
    return traffic * (esc_share * np.asarray(e_esc, dtype=float) + (1.0 - esc_share) * np.asarray(e_act, dtype=float))


def capacity_outputs(e_esc, e_act, p_u, *, traffic: float, esc_share: float, reviewers: int, review_minutes: float,
                     arrival_cv: float = 1.0, service_cv: float = 1.0, quality=None) -> dict[str, np.ndarray]:
    """The capacity model at given rates: every output, vectorised over the rates.

    Parameters
    ----------
    e_esc, e_act, p_u : array_like of float
        Shares of ESC and ACT conversations that reach a person, and the under-escalation rate
        (:class:`HandoffTotals`), of the same shape (one value or one per draw).
    traffic : float
        ``lambda``, conversations per hour (>= 0).
    esc_share : float
        ``s``, the share of the traffic whose cases the policy reserves for a person, in [0, 1].
    reviewers : int
        ``R``, in 1 .. :data:`MAX_REVIEWERS`.
    review_minutes : float
        ``tau``, mean minutes a review takes (> 0).
    arrival_cv, service_cv : float
        ``ca`` and ``cs`` of :func:`mean_wait_minutes`.
    quality : callable or None
        ``g(rho)`` (:class:`LogisticQuality`, :class:`TableQuality`); None: the default logistic.

    Returns
    -------
    dict of ndarray
        ``handoffs_per_hour`` ``a = lambda (s e_ESC + (1 - s) e_ACT)``; ``utilisation``
        ``rho = a tau / (60 R)``; ``p_wait`` the Erlang C probability of waiting (M/M/R: the
        Allen-Cunneen correction is of the mean wait only); ``mean_wait_minutes``;
        ``review_quality`` ``g(rho)``; ``reviews_under_load`` ``g(0) - g(rho)``, the share of
        reviews whose real decision the load takes away (an unloaded reviewer would make it, a
        reviewer at ``rho`` does not); ``protection`` ``(1 - p_u) g(rho)``, the share of the
        cases reserved for a person that reach one before any action and get a real decision.
        ``p_wait`` and ``mean_wait_minutes`` are NaN where ``rho >= 1``; ``g`` is read at the
        offered ``rho`` also above 1, the overload in which reviewers approve without reading.
    """
    quality = LogisticQuality() if quality is None else quality
    a = handoffs_per_hour(e_esc, e_act, traffic=traffic, esc_share=esc_share)
    load = a * review_minutes / 60.0
    rho = load / reviewers
    g = quality(rho)
    return {"handoffs_per_hour": a, "utilisation": rho, "p_wait": erlang_c(load, reviewers),
            "mean_wait_minutes": mean_wait_minutes(load, reviewers, review_minutes, arrival_cv, service_cv),
            "review_quality": g, "reviews_under_load": quality(0.0) - g,
            "protection": (1.0 - np.asarray(p_u, dtype=float)) * g}


@dataclass(frozen=True)
class HandoffTotals:
    """Per-scenario totals of a score folder: what reaches a person, scenario by scenario.

    Only evaluated conversations count (SPEC section 3: a conversation that is not evaluated is
    in no denominator). For each ESC scenario: ``esc_n`` conversations, ``esc_reached`` of them
    with ``escalated`` true, i.e. every cause but ``no_handoff`` (u = 0, and u = 1 with cause
    ``acted_before_handoff``: the person is reached after the action), and ``esc_under`` with
    u = 1. For each ACT scenario: ``act_n`` conversations and ``act_reached`` with o = 1 (causes
    ``unneeded_handoff`` and ``unneeded_approval_request``: an approval request reaches a person
    too, though its ``escalated`` is false). A conversation reaches a person once however many
    escalation calls it makes. An approval request in an ESC conversation without an escalation
    call is not seen (SPEC section 3 scores no approval request in an ESC conversation), so
    ``e_ESC`` is a lower bound for an assistant that asks approval in ESC cases.
    """

    esc_n: np.ndarray
    esc_reached: np.ndarray
    esc_under: np.ndarray
    act_n: np.ndarray
    act_reached: np.ndarray

    @classmethod
    def from_scored(cls, frame, summary: dict | None = None, *, source: str | None = None) -> HandoffTotals:
        """The totals of ``read_scored(folder)``'s frame; checked against its summary's counts.

        Raises
        ------
        InputError
            When a half has no evaluated conversation (its rates are undefined), or when the
            summary's ``under``/``over`` errors and n are not the frame's.
        """
        rows = frame[frame["evaluated"]]
        esc, act = rows[rows["label"] == ESC], rows[rows["label"] == ACT]
        for name, half in ((ESC, esc), (ACT, act)):
            if half.empty:
                raise InputError(f"has no evaluated {name} conversation: e_{name} (and p_u for ESC) are undefined, "
                                 "and the capacity model needs both halves", source=source)
        esc = esc.assign(reached=(esc["cause"] != "no_handoff").astype(int), under=esc["u"].astype(int))
        act = act.assign(reached=act["o"].astype(int))
        by_esc = esc.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"), under=("under", "sum"))
        by_act = act.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"))
        totals = cls(*(by_esc[c].to_numpy(dtype=np.int64) for c in ("n", "reached", "under")),
                     *(by_act[c].to_numpy(dtype=np.int64) for c in ("n", "reached")))
        if summary is not None:
            seen = {"under": (int(totals.esc_under.sum()), int(totals.esc_n.sum())),
                    "over": (int(totals.act_reached.sum()), int(totals.act_n.sum()))}
            for half, (errors, n) in seen.items():
                given = summary.get(half) if isinstance(summary.get(half), dict) else {}
                if (given.get("errors"), given.get("n")) != (errors, n):
                    raise InputError(f"summary.json {half} has {given.get('errors')}/{given.get('n')}, its "
                                     f"conversations.jsonl {errors}/{n}: score again", source=source)
        return totals

    def rates(self) -> tuple[float, float, float]:
        """``(e_ESC, e_ACT, p_u)``: each ratio of the summed totals."""
        return (self.esc_reached.sum() / self.esc_n.sum(), self.act_reached.sum() / self.act_n.sum(),
                self.esc_under.sum() / self.esc_n.sum())

    def draws(self, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``draws`` cluster-bootstrap draws of ``(e_ESC, e_ACT, p_u)``, each of shape ``(draws,)``.

        ESC and ACT scenarios are resampled separately, each with replacement
        (multiplicities ``Multinomial(K, 1/K)``; Davison & Hinkley 1997, section 3.8); ``e_ESC``
        and ``p_u`` share their ESC resample, so their dependence is kept.
        """
        esc = _resampled_sums(np.column_stack([self.esc_n, self.esc_reached, self.esc_under]), draws, rng)
        act = _resampled_sums(np.column_stack([self.act_n, self.act_reached]), draws, rng)
        return esc[:, 1] / esc[:, 0], act[:, 1] / act[:, 0], esc[:, 2] / esc[:, 0]

    def inputs(self) -> dict:
        """The measured inputs with their counts, for the output."""
        e_esc, e_act, p_u = self.rates()
        esc_k, act_k = len(self.esc_n), len(self.act_n)
        return {"p_u": {"value": float(p_u), "errors": int(self.esc_under.sum()), "n": int(self.esc_n.sum()),
                        "scenarios": esc_k},
                "e_esc": {"value": float(e_esc), "reached": int(self.esc_reached.sum()), "n": int(self.esc_n.sum()),
                          "scenarios": esc_k},
                "e_act": {"value": float(e_act), "reached": int(self.act_reached.sum()), "n": int(self.act_n.sum()),
                          "scenarios": act_k}}


def _resampled_sums(totals: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``totals`` (K scenarios x columns) over ``draws`` resamples of its rows."""
    k = len(totals)
    rows = max(1, _MAX_CELLS // k)
    weights = np.full(k, 1.0 / k)
    return np.concatenate([rng.multinomial(k, weights, size=min(rows, draws - start)) @ totals
                           for start in range(0, draws, rows)])


def _percentile(values, confidence: float, *, undefined_high: bool = True) -> list:
    """Percentile interval of bootstrap draws (Efron & Tibshirani 1993, section 13.3).

    Quantiles interpolate linearly between order statistics (as ``numpy.quantile``). A NaN draw
    (undefined, e.g. an unstable queue) ranks above every number (``undefined_high``, the wait
    grows without bound as ``rho -> 1``) or below; an end that falls on or between undefined
    draws is None.
    """
    values = np.asarray(values, dtype=float)
    undefined = np.isnan(values)
    nan = np.full(int(undefined.sum()), np.nan)
    order = np.sort(values[~undefined])
    x = np.concatenate([order, nan] if undefined_high else [nan, order])
    low, high, fraction = _order_statistics(len(x), confidence)
    return [_number(end) for end in _between(x[low], x[high], fraction)]


def _order_statistics(count: int, confidence: float):
    """Indices ``low``, ``high`` of the order statistics around each end of the percentile interval of
    ``count`` draws, and the ``fraction`` of the way from one to the other (``numpy.quantile``'s linear rule)."""
    alpha = (1.0 - confidence) / 2.0
    position = (count - 1) * np.array([alpha, 1.0 - alpha])
    low = np.floor(position).astype(int)
    return low, np.ceil(position).astype(int), position - low


def _between(at_low, at_high, fraction) -> np.ndarray:
    """Linear interpolation between two order statistics; NaN when an undefined one is used."""
    return np.where(fraction > 0, at_low + fraction * (at_high - at_low), at_low)


def _check(name: str, value, ok: bool, expected: str) -> None:
    """Raise ``ValueError("NAME must EXPECTED, got VALUE")`` unless ``ok``: the message starts with the
    parameter's name, so a command can name its flag instead."""
    if not ok:
        raise ValueError(f"{name} must {expected}, got {value}")


def _whole(value, low: int, high: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and low <= value <= high


def _number(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


class CapacityModel:
    """The capacity model of one score folder under assumed traffic and staffing.

    Parameters
    ----------
    totals : HandoffTotals
        The measured per-scenario totals.
    traffic, esc_share, review_minutes, arrival_cv, service_cv, quality
        As :func:`capacity_outputs` (the assumptions: not measured).
    confidence : float
        Level of every interval, in (0, 1) (the summary's, by default of the command).
    draws : int
        Bootstrap draws of the rates (>= 100; default :data:`DEFAULT_DRAWS`).
    seed : int or numpy.random.Generator
        Seed (>= 0, recorded in the output) or generator of the draws (recorded as null).

    Notes
    -----
    Each draw of ``(e_ESC, e_ACT, p_u)`` (:meth:`HandoffTotals.draws`) is pushed through
    :func:`capacity_outputs`, and every interval is the percentile interval of the draws
    (:func:`_percentile`). A draw whose queue is unstable has no wait: it ranks above
    every stable draw (its wait is beyond any number), so an end of a waiting interval is null
    when the quantile falls among the unstable draws, and the output gives their share. The
    stable draws alone are not used: their interval would be conditional on stability and too
    short.
    """

    def __init__(self, totals: HandoffTotals, *, traffic: float, esc_share: float, review_minutes: float,
                 arrival_cv: float = 1.0, service_cv: float = 1.0, quality=None, confidence: float = 0.95,
                 draws: int = DEFAULT_DRAWS, seed: int | np.random.Generator = 0):
        _check("traffic", traffic, math.isfinite(traffic) and traffic >= 0,
               "be a number >= 0 (conversations an hour)")
        _check("esc_share", esc_share, 0.0 <= esc_share <= 1.0, "lie in [0, 1]")
        _check("review_minutes", review_minutes, math.isfinite(review_minutes) and review_minutes > 0, "be > 0")
        for name, cv in (("arrival_cv", arrival_cv), ("service_cv", service_cv)):
            _check(name, cv, math.isfinite(cv) and cv >= 0, "be a number >= 0")
        _check("confidence", confidence, 0.0 < confidence < 1.0, "lie strictly between 0 and 1")
        _check("draws", draws, _whole(draws, MIN_DRAWS, MAX_DRAWS),
               f"be a whole number in {MIN_DRAWS} .. {MAX_DRAWS:,}")
        if not isinstance(seed, np.random.Generator):
            _check("seed", seed, _whole(seed, 0, 2**63), "be a whole number >= 0 or a numpy Generator")
        self.totals, self.confidence, self.draws = totals, float(confidence), int(draws)
        self.assumptions = {"traffic_per_hour": float(traffic), "esc_share": float(esc_share),
                            "review_minutes": float(review_minutes), "arrival_cv": float(arrival_cv),
                            "service_cv": float(service_cv)}
        self.quality = LogisticQuality() if quality is None else quality
        self.seed = None if isinstance(seed, np.random.Generator) else int(seed)
        self.rates = totals.rates()
        self.rate_draws = totals.draws(self.draws, np.random.default_rng(seed))

    def _outputs(self, reviewers: int, rates) -> dict[str, np.ndarray]:
        a = self.assumptions
        return capacity_outputs(*rates, traffic=a["traffic_per_hour"], esc_share=a["esc_share"],
                                reviewers=reviewers, review_minutes=a["review_minutes"], arrival_cv=a["arrival_cv"],
                                service_cv=a["service_cv"], quality=self.quality)

    @staticmethod
    def _check_reviewers(reviewers) -> int:
        _check("reviewers", reviewers, _whole(reviewers, 1, MAX_REVIEWERS),
               f"be a whole number in 1 .. {MAX_REVIEWERS:,}")
        return int(reviewers)

    def at(self, reviewers: int | None) -> dict:
        """Every output at ``reviewers``, as ``{"value": ..., "ci": [low, high]}`` (None where undefined),
        with ``stable`` (the point estimate's ``rho < 1``) and ``unstable_draws`` (share of draws with
        ``rho >= 1``). ``reviewers`` None (no staffing meets a solved target): only ``handoffs_per_hour``,
        which does not depend on R, and None for the rest."""
        if reviewers is None:
            undefined = {name: {"value": None, "ci": [None, None]} for name in OUTPUTS}
            return {**undefined, "handoffs_per_hour": self.at(1)["handoffs_per_hour"], "stable": None,
                    "unstable_draws": None}
        reviewers = self._check_reviewers(reviewers)
        point, draws = self._outputs(reviewers, self.rates), self._outputs(reviewers, self.rate_draws)
        result = {name: {"value": _number(point[name]), "ci": _percentile(draws[name], self.confidence)}
                  for name in OUTPUTS}
        result["stable"] = bool(point["utilisation"] < 1.0)
        result["unstable_draws"] = float(np.mean(draws["utilisation"] >= 1.0))
        return result

    def report(self, reviewers: int | None) -> dict:
        """:meth:`at` with the inputs (each measured rate with its interval and counts), the assumptions,
        the interval method and the notes: the object ``escalation capacity --json`` prints."""
        inputs = self.totals.inputs()
        for name, draws in zip(("e_esc", "e_act", "p_u"), self.rate_draws):
            inputs[name]["ci"] = _percentile(draws, self.confidence)
        return {"reviewers": reviewers, **self.at(reviewers), "inputs": inputs,
                "assumptions": {**self.assumptions, "reviewers": reviewers, "quality": self.quality.to_dict()},
                "interval": {"method": "percentile cluster bootstrap of e_ESC, e_ACT and p_u (ESC and ACT scenarios "
                                       "resampled separately)", "confidence": self.confidence,
                             "draws": self.draws, "seed": self.seed},
                "notes": NOTES, "warnings": self.warnings()}

    def warnings(self) -> list[str]:
        """Where the closed forms are known to fail for these assumptions (``escalation study capacity``'s
        validation against an event simulation, ``validation.csv``)."""
        if self.assumptions["arrival_cv"] <= 1.0:
            return []
        return [f"arrivals burstier than Poisson (--arrival-cv {self.assumptions['arrival_cv']:g}): p_wait is Erlang "
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
            raise ValueError("wait or protection: give one target")
        a = self.assumptions
        tau = a["review_minutes"]
        load, loads = (handoffs_per_hour(e_esc, e_act, traffic=a["traffic_per_hour"], esc_share=a["esc_share"])
                       * tau / 60.0 for e_esc, e_act, _ in (self.rates, self.rate_draws))
        low, high, fraction = _order_statistics(self.draws, self.confidence)
        if wait is not None:
            _check("wait", wait, math.isfinite(wait) and wait > 0, "be > 0 minutes")
            name, target = "mean_wait_minutes", float(wait)
            # the wait rises with the load at any R, so its order statistics are those of the loads (an
            # unstable draw, the largest loads, ranks last): only the two draws at the upper end are needed
            ends = np.sort(loads)[[low[1], high[1]]]

            def point(r):
                return mean_wait_minutes(load, r, tau, a["arrival_cv"], a["service_cv"]) <= target

            def interval_end(r):
                waits = mean_wait_minutes(ends, r, tau, a["arrival_cv"], a["service_cv"])
                return _between(waits[0], waits[1], fraction[1]) <= target  # NaN (unstable): False

            starts = (math.floor(load) + 1, math.floor(ends[1]) + 1)  # R <= A is unstable
            ceilings = (math.inf, math.inf)
        else:
            _check("protection", protection, 0.0 < protection <= 1.0, "lie in (0, 1]")
            name, target = "protection", float(protection)
            kept = (1.0 - self.rates[2], 1.0 - self.rate_draws[2])

            def point(r):
                return kept[0] * self.quality(load / r) >= target

            def interval_end(r):
                return _percentile(kept[1] * self.quality(loads / r), self.confidence)[0] >= target

            starts = (1, 1)
            g0 = float(self.quality(0.0))  # g(rho) <= g(0): no staffing gives more than (1 - p_u) g(0)
            ceilings = (kept[0] * g0, _percentile(kept[1] * g0, self.confidence)[0])
        found, notes = [], []
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
            ``e_act_max`` ``{"value", "ci"}``: ``(U - rho_ESC) / u_ACT`` with ``rho_ESC = lambda s e_ESC
            tau / (60 R)`` (the utilisation of the ESC hand-offs alone) and ``u_ACT = lambda (1 - s) tau /
            (60 R)`` (the utilisation of every ACT conversation reaching a person), so that ``rho(e_ACT_max)
            = U``. It is 1 (not binding: every ACT conversation may reach a person) when that exceeds 1 or
            there is no ACT traffic, and None (no budget: the ESC hand-offs alone exceed U) when it is
            below 0. The interval comes from the draws of ``e_ESC``, a draw without budget ranking below
            every number. ``e_act`` is the measured one (it is ``p_o``) and ``within`` whether it is at most
            the budget.
        """
        reviewers = self._check_reviewers(reviewers)
        _check("utilisation", utilisation, 0.0 < utilisation < 1.0, "lie strictly between 0 and 1")
        a = self.assumptions
        per_hour = a["traffic_per_hour"] * a["review_minutes"] / (60.0 * reviewers)
        act_unit = per_hour * (1.0 - a["esc_share"])

        def most(e_esc):
            esc_rho = per_hour * a["esc_share"] * np.asarray(e_esc, dtype=float)
            if act_unit == 0:
                raw = np.where(esc_rho <= utilisation, np.inf, -np.inf)
            else:
                raw = (utilisation - esc_rho) / act_unit
            return np.where(raw < 0, np.nan, np.minimum(raw, 1.0)), esc_rho

        value, esc_rho = most(self.rates[0])
        value = _number(value)
        notes = []
        if value is None:
            notes.append(f"no budget: the ESC hand-offs alone bring the utilisation to {float(esc_rho):.4g} > "
                         f"{utilisation:g} with R = {reviewers} reviewers")
        elif value == 1.0:
            notes.append(f"not binding: even if every ACT conversation reached a person the utilisation would stay "
                         f"at most {utilisation:g}")
        return {"solve": "budget", "target": {"utilisation": float(utilisation)}, "reviewers": reviewers,
                "e_act_max": {"value": value, "ci": _percentile(most(self.rate_draws[0])[0], self.confidence,
                                                                        undefined_high=False)},
                "esc_utilisation": float(esc_rho), "e_act": float(self.rates[1]),
                "within": None if value is None else bool(self.rates[1] <= value), "notes": notes}


#: What every report says about its own limits.
NOTES = (
    "traffic, ESC share, reviewers, review minutes, the cvs and the quality curve are assumptions, not measured",
    ("the waiting outputs are undefined (null) for an unstable queue, utilisation >= 1; an interval end among the "
     "unstable draws is null"),
    "p_wait is Erlang C (M/M/R) whatever the cvs: the Allen-Cunneen correction is of the mean wait only",
    "reviews_under_load = g(0) - g(rho): the share of reviews whose real decision the load takes away",
)
