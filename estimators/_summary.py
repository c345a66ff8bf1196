"""The results of SPEC section 5: clustered rates, the paired figure, the base metric, the summary.

A rate keeps the number of ones and the size of each of its clusters, so its interval can be
recomputed at another level (``summary.under.ci(confidence_level=0.9)``) and two summaries
can be compared cluster by cluster without reading the conversations again.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ._intervals import ConfidenceInterval, anova_icc, wilson_kish_interval

__all__ = ["RateSummary", "PairedSummary", "BaseSummary", "NotEvaluated", "Summary", "clustered_rate",
           "rate_of_clusters"]


def _null(x):
    """NaN becomes None (JSON null): undefined is null, never 0 or 1."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _interval(ones: int, n: int, clusters: int, rho: float, confidence_level: float) -> ConfidenceInterval:
    """Wilson-Kish interval of ``ones / n`` with ``m_bar = n / clusters`` (SPEC section 5); NaN when ``n = 0``."""
    if n == 0:
        return ConfidenceInterval(float("nan"), float("nan"))
    low, high = wilson_kish_interval(ones, n, n / clusters, rho, confidence_level).interval
    return ConfidenceInterval(float(low), float(high))


@dataclass(frozen=True)
class RateSummary:
    """A clustered rate: ``errors / n`` with the Kish-Wilson interval (SPEC section 5).

    ``rate``, ``rho``, ``deff``, ``n_eff`` and the interval are NaN when ``n = 0``.
    ``cluster_ids``, ``cluster_totals`` and ``cluster_sizes`` are the scenarios (in order of
    first appearance) with their errors and evaluated conversations; they are neither shown
    nor compared, and ``to_dict`` leaves them out.
    """

    errors: int
    n: int
    rate: float
    rho: float
    deff: float
    n_eff: float
    clusters: int
    confidence: float
    causes: dict = field(default_factory=dict)
    cluster_ids: np.ndarray = field(default=None, repr=False, compare=False)
    cluster_totals: np.ndarray = field(default=None, repr=False, compare=False)
    cluster_sizes: np.ndarray = field(default=None, repr=False, compare=False)

    def ci(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The Wilson-Kish interval at ``confidence_level`` (default: :attr:`confidence`), with the same rho."""
        level = self.confidence if confidence_level is None else confidence_level
        return _interval(self.errors, self.n, self.clusters, self.rho, level)

    def to_dict(self) -> dict:
        low, high = self.ci()
        d = {"errors": self.errors, "n": self.n, "rate": _null(self.rate), "rho": _null(self.rho),
             "deff": _null(self.deff), "n_eff": _null(self.n_eff), "ci": [_null(low), _null(high)],
             "clusters": self.clusters}
        if self.causes:
            d["causes"] = dict(self.causes)
        return d


def rate_of_clusters(ids, totals, sizes, *, confidence: float, rho: float | None,
                     causes: dict | None = None) -> RateSummary:
    """:func:`clustered_rate` from the id, number of ones and size of each cluster."""
    totals, sizes = np.asarray(totals), np.asarray(sizes)
    n = int(np.sum(sizes))
    kept = {"cluster_ids": np.asarray(ids, dtype=object), "cluster_totals": totals, "cluster_sizes": sizes}
    if n == 0:
        nan = float("nan")
        return RateSummary(0, 0, nan, nan, nan, nan, 0, confidence, dict(causes or {}), **kept)
    k = len(sizes)
    if rho is None:
        estimated = anova_icc(totals, sizes)
        rho = 0.0 if math.isnan(estimated) else float(estimated)
    errors = int(np.sum(totals))
    kish = wilson_kish_interval(errors, n, n / k, rho, confidence)
    return RateSummary(errors, n, errors / n, float(rho), float(kish.deff), float(kish.n_eff), k, confidence,
                       dict(causes or {}), **kept)


def clustered_rate(outcome, cluster, *, confidence: float = 0.95, rho: float | None = None,
                   causes: dict | None = None) -> RateSummary:
    """Rate of a 0/1 ``outcome`` with clusters, Kish design effect and Wilson interval.

    rho is the truncated one-way ANOVA estimator over ``cluster`` (0 where undefined, SPEC
    section 5) unless fixed by ``rho``; ``m_bar = n / clusters``;
    ``deff = 1 + (m_bar - 1) rho`` (Kish 1965); Wilson (1927) with ``n_eff = n / deff``.
    """
    y = np.asarray(outcome, dtype=float)
    codes, uniques = pd.factorize(pd.Series(cluster, dtype=object))
    totals = np.bincount(codes, weights=y, minlength=len(uniques))
    sizes = np.bincount(codes, minlength=len(uniques))
    return rate_of_clusters(uniques, totals, sizes, confidence=confidence, rho=rho, causes=causes)


@dataclass(frozen=True)
class PairedSummary:
    """The paired figure ``pi = correct / pairs`` over complete pairs, clustered by case (SPEC section 5).

    ``cluster_ids``, ``cluster_totals`` and ``cluster_sizes`` are the cases with their
    correct and complete pairs.
    """

    pairs: int
    correct: int
    pi: float
    rho: float
    deff: float
    n_eff: float
    cases: int
    confidence: float
    cluster_ids: np.ndarray = field(default=None, repr=False, compare=False)
    cluster_totals: np.ndarray = field(default=None, repr=False, compare=False)
    cluster_sizes: np.ndarray = field(default=None, repr=False, compare=False)

    @classmethod
    def of_rate(cls, rate: RateSummary) -> PairedSummary:
        """The paired figure of the clustered rate of correct pairs."""
        return cls(rate.n, rate.errors, rate.rate, rate.rho, rate.deff, rate.n_eff, rate.clusters, rate.confidence,
                   rate.cluster_ids, rate.cluster_totals, rate.cluster_sizes)

    def ci(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The Wilson-Kish interval at ``confidence_level`` (default: :attr:`confidence`), with the same rho."""
        level = self.confidence if confidence_level is None else confidence_level
        return _interval(self.correct, self.pairs, self.cases, self.rho, level)

    def to_dict(self) -> dict:
        low, high = self.ci()
        return {"pairs": self.pairs, "pi": _null(self.pi), "ci": [_null(low), _null(high)],
                "rho": _null(self.rho), "deff": _null(self.deff), "n_eff": _null(self.n_eff), "cases": self.cases}


@dataclass(frozen=True)
class BaseSummary:
    """The base metric: only ``no_handoff`` and ``unneeded_handoff`` count (SPEC section 5)."""

    under_rate: float
    over_rate: float
    pi: float

    def to_dict(self) -> dict:
        return {k: _null(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class NotEvaluated:
    """Conversations left out of every denominator, with their reasons."""

    total: int
    reasons: dict
    missing: tuple = ()
    unplanned: int = 0

    def to_dict(self) -> dict:
        d = {"total": self.total, "reasons": dict(self.reasons)}
        if self.missing:
            d["missing"] = [dict(m) for m in self.missing]
        if self.unplanned:
            d["unplanned"] = self.unplanned
        return d


@dataclass(frozen=True)
class Summary:
    """Everything ``summary.json`` reports (SPEC section 7)."""

    conversations: int
    confidence: float
    mode: str
    under: RateSummary
    over: RateSummary
    paired: PairedSummary
    base: BaseSummary
    not_evaluated: NotEvaluated
    unmarked_tools: dict
    rho_fixed: float | None = None

    def to_dict(self) -> dict:
        return {"conversations": self.conversations, "confidence": self.confidence, "mode": self.mode,
                "rho_fixed": self.rho_fixed,
                "under": self.under.to_dict(), "over": self.over.to_dict(), "paired": self.paired.to_dict(),
                "base": self.base.to_dict(), "not_evaluated": self.not_evaluated.to_dict(),
                "unmarked_tools": dict(self.unmarked_tools)}

    def to_frame(self) -> pd.DataFrame:
        """One row per figure: ``p_u``, ``p_o``, ``pi`` and the base figures, with intervals."""
        rows = []
        for name, r in (("p_u", self.under), ("p_o", self.over)):
            low, high = r.ci()
            rows.append({"metric": name, "value": r.rate, "ci_low": low, "ci_high": high, "errors": r.errors,
                         "n": r.n, "clusters": r.clusters, "rho": r.rho, "deff": r.deff, "n_eff": r.n_eff})
        p = self.paired
        low, high = p.ci()
        rows.append({"metric": "pi", "value": p.pi, "ci_low": low, "ci_high": high, "errors": np.nan,
                     "n": p.pairs, "clusters": p.cases, "rho": p.rho, "deff": p.deff, "n_eff": p.n_eff})
        for name, value in (("p_u_base", self.base.under_rate), ("p_o_base", self.base.over_rate),
                            ("pi_base", self.base.pi)):
            rows.append({"metric": name, "value": value})
        return pd.DataFrame(rows)
