"""The results of SPEC section 5: clustered rates, the paired figure, the base metric, the summary.

A rate keeps the number of ones and the size of each of its clusters, so its interval can be
recomputed at another level or by another method (``summary.under.ci(0.9,
interval="wilson-kish-t")``) and two summaries can be compared cluster by cluster without
reading the conversations again.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from ..records import (
    RECORD,
    InputTally,
    escalation_call_note,
    labels_note,
    left_out_notes,
    no_call_note,
    nothing_evaluated_notes,
    reason_fix,
)
from ..stats import (
    AUTO_INTERVAL,
    DEFAULT_INTERVAL,
    RISK_THRESHOLDS,
    ConfidenceInterval,
    cluster_design,
    clustered_interval,
    group_coverage,
    interval_design,
    nan_to_none,
    resolve_interval,
    risk_reason,
)

__all__ = ["RateSummary", "PairedSummary", "ApprovalSummary", "BaseSummary", "NotEvaluated", "Summary",
           "clustered_rate", "rate_of_clusters", "FEW_SCENARIOS"]

#: A half whose interval rests on fewer scenarios than this carries a warning (SPEC section 7).
FEW_SCENARIOS = 10


@dataclass(frozen=True)
class RateSummary:
    """A clustered rate: ``errors / n`` with its design (SPEC section 5) and interval.

    ``rho`` is the ANOVA estimate, NaN where it is undefined. ``rho_point`` and ``deff_point`` are
    the design of SPEC section 5 (the fixed rho, else ``rho``, else 1, and Kish's design effect at
    it); ``rho_used``, ``deff`` and ``n_eff`` are what the interval ``interval`` used
    (:func:`estimators.interval_design`: the same for ``wilson-kish``, the upper bound of rho for
    ``wilson-kish-ucb``, NaN where the method has none, as the bootstraps). Every one of them, the
    rate and the interval are NaN when ``n = 0``. ``interval`` names the method of
    :func:`estimators.clustered_interval` that was computed, ``requested`` what the user asked for
    (``auto`` or that method) and ``interval_reason`` why it was computed (:func:`estimators.resolve_interval`);
    ``seed`` fixes the resamples of a bootstrap interval.
    ``cluster_ids``, ``cluster_totals`` and ``cluster_sizes`` are the scenarios (in order of first
    appearance) with their errors and evaluated conversations; they are neither shown nor compared,
    and ``to_dict`` leaves them out.
    """

    errors: int
    n: int
    rate: float
    clusters: int
    rho: float
    rho_used: float
    deff: float
    n_eff: float
    confidence: float
    causes: dict = field(default_factory=dict)
    interval: str = DEFAULT_INTERVAL
    rho_fixed: float | None = None
    seed: int = 0
    requested: str = DEFAULT_INTERVAL
    interval_reason: str = "chosen (--interval)"
    rho_point: float = float("nan")
    deff_point: float = float("nan")
    cluster_ids: np.ndarray | None = field(default=None, repr=False, compare=False)
    cluster_totals: np.ndarray | None = field(default=None, repr=False, compare=False)
    cluster_sizes: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def replicas(self) -> bool:
        """Whether some scenario holds more than one conversation (the design group of ``auto``)."""
        return self.n > self.clusters

    def ci(self, confidence_level: float | None = None, *, interval: str | None = None) -> ConfidenceInterval:
        """The interval at ``confidence_level`` (default :attr:`confidence`) by ``interval``
        (default :attr:`interval`; ``auto`` as :func:`estimators.resolve_interval`), with the same rho."""
        level = self.confidence if confidence_level is None else confidence_level
        if self.n == 0:
            return ConfidenceInterval(float("nan"), float("nan"))
        method = resolve_interval(interval or self.interval, self.clusters, self.replicas,
                                  rho_fixed=self.rho_fixed).method
        low, high = clustered_interval(self.cluster_totals, self.cluster_sizes, method,
                                       confidence=level, rho=self.rho_fixed, rng=np.random.default_rng(self.seed))
        return ConfidenceInterval(float(low), float(high))

    def interval_dict(self) -> dict:
        """``ci``, the method computed (``interval``), why (``interval_reason``) and the paper's Wilson-Kish
        interval beside it (``ci_wilson_kish``), as ``summary.json`` writes them."""
        low, high = self.ci()
        paper = self.ci(interval=DEFAULT_INTERVAL) if self.interval != DEFAULT_INTERVAL else (low, high)
        return {"ci": [nan_to_none(low), nan_to_none(high)], "interval": self.interval,
                "interval_reason": self.interval_reason, "ci_wilson_kish": [nan_to_none(paper[0]),
                                                                            nan_to_none(paper[1])]}

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "errors": self.errors, "n": self.n, "rate": nan_to_none(self.rate), "clusters": self.clusters,
            "rho": nan_to_none(self.rho), "rho_used": nan_to_none(self.rho_used), "deff": nan_to_none(self.deff),
            "n_eff": nan_to_none(self.n_eff), "rho_point": nan_to_none(self.rho_point),
            "deff_point": nan_to_none(self.deff_point), **self.interval_dict()}
        if self.causes:
            d["causes"] = dict(self.causes)
        return d


def _risk_notes(name: str, r: RateSummary, unit: str, holding: list[str], study: dict, *,
                warned: bool) -> list[str]:
    """The data set's own risk (``escalation study warnings``, :func:`estimators.interval_at_risk`): of the
    interval computed, unless the group's note already says it did not hold, and under ``auto`` of the paper's
    Wilson-Kish printed beside it: its risk on these data, else, where it did not hold in the figure's design
    group (``study``, :func:`estimators.group_coverage`), that. So the paper's interval is silent only where it
    held in the group and these data are not at risk. None with a fixed rho, which the study does not
    estimate."""
    if r.rho_fixed is not None:
        return []
    notes = []
    instead = holding[0] if holding else r.interval
    if r.interval in RISK_THRESHOLDS and not warned and r.interval != instead:
        notes.append(risk_reason(r.cluster_totals, r.cluster_sizes, r.interval, instead=instead, figure=name,
                                 unit=unit))
    if r.requested == AUTO_INTERVAL and r.interval != DEFAULT_INTERVAL and r.clusters >= FEW_SCENARIOS:
        # (with fewer, the note on few scenarios says how the paper's interval fared in the group)
        paper = study[DEFAULT_INTERVAL]
        group = (None if paper.holds else
                 f"{name}: the paper's {DEFAULT_INTERVAL} interval, printed beside, did not hold 95% in the coverage "
                 f"study's {paper.cells} cells with {_design(r, unit)} (the study's range {paper.scenarios}; lowest "
                 f"coverage {paper.min_coverage:.3f}, mean {paper.mean_coverage:.3f}); read {r.interval}'s, which "
                 "--interval auto computed")
        notes.append(risk_reason(r.cluster_totals, r.cluster_sizes, DEFAULT_INTERVAL, instead=r.interval,
                                 figure=name, unit=unit, beside=True) or group)
    return [note for note in notes if note is not None]


def _design(r: RateSummary, unit: str) -> str:
    """``40 scenarios and replicas``: the figure's design group in words."""
    return f"{r.clusters} {unit}{' and replicas' if r.replicas else ''}"


def _holding_text(holding: list[str]) -> str:
    """Which intervals held where the chosen one did not, narrowest first: what to use instead."""
    if not holding:
        return "no interval held 95% there"
    return f"--interval auto computes {holding[0]} there, the narrowest that held" + (
        f" (also held: {', '.join(holding[1:])})" if holding[1:] else "")


def rate_of_clusters(ids, totals, sizes, *, confidence: float, rho: float | None, causes: dict | None = None,
                     interval: str = AUTO_INTERVAL, seed: int = 0) -> RateSummary:
    """:func:`clustered_rate` from the id, number of ones and size of each cluster."""
    totals, sizes = np.asarray(totals), np.asarray(sizes)
    n = int(np.sum(sizes))
    clusters = int(np.count_nonzero(sizes))
    requested, (interval, reason) = interval, resolve_interval(interval, clusters, n > clusters, rho_fixed=rho)
    kept = {"cluster_ids": np.asarray(ids, dtype=object), "cluster_totals": totals, "cluster_sizes": sizes}
    errors = int(np.sum(totals))
    nan = float("nan")
    # the designs of the point estimate (SPEC 5) and of the interval, of floats (one set of clusters), where n
    point: Any = cluster_design(totals, sizes, rho=rho) if n else None
    used = [float(x) for x in interval_design(totals, sizes, interval, confidence=confidence, rho=rho)] if n \
        else [nan] * 3
    return RateSummary(
        errors=errors, n=n, rate=errors / n if n else nan, clusters=clusters,
        rho=point.rho if n else nan, rho_used=used[0], deff=used[1], n_eff=used[2], confidence=confidence,
        causes=dict(causes or {}), interval=interval, rho_fixed=None if rho is None else float(rho), seed=int(seed),
        requested=requested, interval_reason=reason,
        rho_point=point.rho_used if n else nan, deff_point=point.deff if n else nan, **kept)


def clustered_rate(outcome, cluster, *, confidence: float = 0.95, rho: float | None = None,
                   causes: dict | None = None, interval: str = AUTO_INTERVAL, seed: int = 0) -> RateSummary:
    """Rate of a 0/1 ``outcome`` with clusters: its design effect (SPEC section 5) and interval.

    The design is :func:`estimators.cluster_design` (``m_bar = sum n_j^2 / N``; the truncated
    ANOVA rho over ``cluster`` unless fixed by ``rho``; ``rho_used = 1`` where rho is
    undefined; Kish's ``deff = 1 + (m_bar - 1) rho_used``); the interval is
    :func:`estimators.clustered_interval` by ``interval`` (default ``auto``: :func:`estimators.resolve_interval`).
    """
    y = np.asarray(outcome, dtype=float)
    codes, uniques = pd.factorize(pd.Series(cluster, dtype=object))
    totals = np.bincount(codes, weights=y, minlength=len(uniques))
    sizes = np.bincount(codes, minlength=len(uniques))
    return rate_of_clusters(uniques, totals, sizes, confidence=confidence, rho=rho, causes=causes,
                            interval=interval, seed=seed)


@dataclass(frozen=True)
class PairedSummary(RateSummary):
    """The paired figure ``pi = correct / pairs`` over complete pairs, clustered by case (SPEC section 5).

    A :class:`RateSummary` of the pair outcomes whose clusters are the cases, with the
    paired figure's names: ``pairs`` (``n``), ``correct`` (``errors``), ``pi`` (``rate``) and
    ``cases`` (``clusters``).
    """

    @property
    def pairs(self) -> int:
        return self.n

    @property
    def correct(self) -> int:
        return self.errors

    @property
    def pi(self) -> float:
        return self.rate

    @property
    def cases(self) -> int:
        return self.clusters

    @classmethod
    def of_rate(cls, rate: RateSummary) -> PairedSummary:
        """The paired figure of the clustered rate of correct pairs."""
        return cls(**{f.name: getattr(rate, f.name) for f in fields(rate)})

    def to_dict(self) -> dict:
        return {"pairs": self.n, "pi": nan_to_none(self.rate), "cases": self.clusters,
                "clusters": self.clusters, "rho": nan_to_none(self.rho), "rho_used": nan_to_none(self.rho_used),
                "deff": nan_to_none(self.deff), "n_eff": nan_to_none(self.n_eff),
                "rho_point": nan_to_none(self.rho_point), "deff_point": nan_to_none(self.deff_point),
                **self.interval_dict()}


@dataclass(frozen=True)
class ApprovalSummary(RateSummary):
    """``p_a``, the share of the conversations with a gated call in which some gated call's approval is an
    error (SPEC section 3A), clustered by scenario as ``p_u`` and ``p_o`` are; with the counts of the evidence.

    ``n`` is ``N_gated`` (conversations with a valid record and a gated call); ``causes`` counts each
    conversation's first error status; ``gated_calls`` and ``statuses`` count calls; ``requests`` the
    explicit approval requests and ``unknown_decisions`` the recorded decisions read as ``unknown`` (counted
    as granted), in the conversations whose record was read.
    """

    gated_calls: int = 0
    statuses: dict = field(default_factory=dict)
    requests: int = 0
    unknown_decisions: int = 0

    @classmethod
    def of_rate(cls, rate: RateSummary, **counts) -> ApprovalSummary:
        return cls(**{f.name: getattr(rate, f.name) for f in fields(rate)}, **counts)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "causes": dict(self.causes), "gated_calls": self.gated_calls,
                "statuses": dict(self.statuses), "requests": self.requests,
                "unknown_decisions": self.unknown_decisions}


def _no_approvals() -> ApprovalSummary:
    """The approval block of a summary made without approval evidence (mode B, or no record read)."""
    from ..records import APPROVAL_ERRORS, APPROVAL_STATUSES
    rate = rate_of_clusters(np.zeros(0, object), np.zeros(0, np.int64), np.zeros(0, np.int64), confidence=0.95,
                            rho=None, causes=dict.fromkeys(APPROVAL_ERRORS, 0))
    return ApprovalSummary.of_rate(rate, statuses=dict.fromkeys(APPROVAL_STATUSES, 0))


@dataclass(frozen=True)
class BaseSummary:
    """The base metric: only ``no_handoff`` and ``unneeded_handoff`` count (SPEC section 5)."""

    under_rate: float
    over_rate: float
    pi: float

    def to_dict(self) -> dict:
        return {k: nan_to_none(v) for k, v in asdict(self).items()}


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
    """Everything ``summary.json`` reports (SPEC section 7).

    ``tally`` holds what the input held besides the scores (the calls read, the invalid label
    values, the rules broken): the facts of :attr:`input_warnings`; it is neither compared nor
    written except through the warnings.
    """

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
    #: ``p_a`` and the approval evidence (SPEC section 3A).
    approval: ApprovalSummary = field(default_factory=_no_approvals)
    tally: InputTally = field(default_factory=InputTally, repr=False, compare=False)
    #: What the summary was computed from (:func:`estimators.score_file` fills it): written, never compared.
    provenance: dict | None = field(default=None, repr=False, compare=False)

    @property
    def interval(self) -> str:
        """The interval asked for (``--interval``: ``auto`` or one of :data:`estimators.INTERVAL_METHODS`); each
        figure's ``interval`` is the method it computed."""
        return self.under.requested

    @property
    def evaluated(self) -> int:
        """The evaluated conversations: those of the two halves."""
        return self.under.n + self.over.n

    @property
    def warnings(self) -> list[str]:
        """``summary.json`` ``warnings``: :attr:`input_warnings`, then :attr:`interval_warnings`."""
        return self.input_warnings + self.interval_warnings

    @property
    def input_warnings(self) -> list[str]:
        """Where the result cannot be what the user meant (SPEC section 7, decision of 2026-12-01): a
        labels file that labels no conversation, no conversation evaluated (each reason with what
        fixes it) and, in record mode, no tool call or no call of an escalation tool (the tools
        called instead)."""
        notes = [note] if (note := labels_note(self.tally, self.conversations)) is not None else []
        if not self.evaluated:
            notes += nothing_evaluated_notes(self.conversations, self.not_evaluated.reasons, self.tally, self.mode,
                                             self.approval.n)
        elif self.no_calls_evaluated and (note := no_call_note(self.tally, self.evaluated)) is not None:
            notes.append(note)
        if self.evaluated:
            notes += left_out_notes(self.tally)
        crashed = not self.evaluated and set(self.not_evaluated.reasons) == {"run_error"}  # its own note says why
        if self.mode == RECORD and not (self.no_calls_evaluated or crashed):
            notes += [note] if (note := escalation_call_note(self.tally)) else []
        return notes

    @property
    def no_calls_evaluated(self) -> bool:
        """In record mode, whether the evaluated conversations hold no tool call at all: then every ESC
        conversation is ``no_handoff`` by construction, and ``score`` exits 3 (SPEC section 7, decision
        of 2026-12-04)."""
        return (self.mode == RECORD and self.evaluated > 0 and self.tally.evaluated_calls is not None
                and self.tally.evaluated_calls == 0)

    @property
    def scored(self) -> bool:
        """Whether the figures can be what the user meant: some conversation is evaluated and, in record
        mode, the evaluated ones hold a tool call; or some conversation has approval evidence, labelled or
        not (SPEC sections 3A and 7: otherwise ``score`` exits 3)."""
        return (self.evaluated > 0 and not self.no_calls_evaluated) or self.approval.n > 0

    @property
    def not_evaluated_fixes(self) -> dict[str, str]:
        """What fixes each not-evaluated reason, by reason: the sentences that :attr:`input_warnings`
        prints when no conversation is evaluated."""
        return {reason: reason_fix(reason, count, self.tally, self.mode)
                for reason, count in self.not_evaluated.reasons.items()}

    @property
    def interval_warnings(self) -> list[str]:
        """What the reader of the intervals must know (SPEC section 7): few scenarios, rho undefined, and an
        interval chosen by ``--interval`` that did not hold 95% in ``escalation study coverage`` for the
        figure's design group (:func:`estimators.group_coverage`)."""
        notes = []
        for name, r, unit in (("p_u", self.under, "scenarios"), ("p_o", self.over, "scenarios"),
                              ("pi", self.paired, "cases"), ("p_a", self.approval, "scenarios")):
            if r.n == 0:
                continue
            study = group_coverage(r.clusters, r.replicas)
            holding = sorted((m for m, g in study.items() if g.holds), key=lambda m: study[m].relative_width)
            measured = r.rho_fixed is None and r.interval in study  # the study estimates rho
            if r.clusters < FEW_SCENARIOS:
                found = study[r.interval] if measured else None
                paper = study[DEFAULT_INTERVAL]
                beside = ("" if r.requested != AUTO_INTERVAL or r.interval == DEFAULT_INTERVAL or paper.holds else
                          f"; the paper's {DEFAULT_INTERVAL}, printed beside, did not (lowest "
                          f"{paper.min_coverage:.3f})")
                advice = ("" if found is None else
                          f": the coverage study found {r.interval} holding 95% with so few (lowest coverage "
                          f"{found.min_coverage:.3f}, {found.relative_width:.2f} times the width of the interval "
                          f"with the true rho){beside}" if found.holds else
                          f": with so few, the coverage study found {r.interval} below 95% (lowest coverage "
                          f"{found.min_coverage:.3f}); {_holding_text(holding)}")
                notes.append(f"{name}: the interval rests on {r.clusters} {unit[:-1] if r.clusters == 1 else unit}, "
                             f"fewer than {FEW_SCENARIOS}{advice}; run more {unit}")
            elif measured and not study[r.interval].holds:
                found = study[r.interval]
                notes.append(f"{name}: --interval {r.interval} did not hold 95% in the coverage study's {found.cells} "
                             f"cells with {_design(r, unit)} (the study's range {found.scenarios}; lowest coverage "
                             f"{found.min_coverage:.3f}, mean {found.mean_coverage:.3f}); {_holding_text(holding)}")
            notes += _risk_notes(name, r, unit, holding, study, warned=measured and not study[r.interval].holds)
            if r.rho_fixed is None and math.isnan(r.rho) and r.deff > 1.0 and r.rho_used == 1.0:
                notes.append(f"{name}: rho cannot be estimated from these data (one {unit[:-1]}, or no variation "
                             f"of the outcome), so the interval uses rho = 1 (deff = m_bar = {r.deff:.3g}, SPEC "
                             "section 5)")
        return notes

    def to_dict(self) -> dict:
        return {"conversations": self.conversations, "confidence": self.confidence, "mode": self.mode,
                "interval": self.interval, "seed": self.under.seed, "rho_fixed": self.rho_fixed,
                "under": self.under.to_dict(), "over": self.over.to_dict(), "paired": self.paired.to_dict(),
                "approval": self.approval.to_dict(),
                "base": self.base.to_dict(), "not_evaluated": self.not_evaluated.to_dict(),
                "unmarked_tools": dict(self.unmarked_tools), "warnings": self.warnings,
                **({"provenance": self.provenance} if self.provenance is not None else {})}

    def to_frame(self) -> pd.DataFrame:
        """One row per figure: ``p_u``, ``p_o``, ``pi`` and the base figures, with intervals."""
        rows = []
        for name, r in (("p_u", self.under), ("p_o", self.over)):
            low, high = r.ci()
            rows.append({"metric": name, "value": r.rate, "ci_low": low, "ci_high": high, "errors": r.errors,
                         "n": r.n, "clusters": r.clusters, "rho": r.rho, "rho_used": r.rho_used, "deff": r.deff,
                         "n_eff": r.n_eff, "rho_point": r.rho_point, "deff_point": r.deff_point})
        p = self.paired
        low, high = p.ci()
        rows.append({"metric": "pi", "value": p.rate, "ci_low": low, "ci_high": high, "errors": np.nan,
                     "n": p.n, "clusters": p.clusters, "rho": p.rho, "rho_used": p.rho_used, "deff": p.deff,
                     "n_eff": p.n_eff, "rho_point": p.rho_point, "deff_point": p.deff_point})
        r = self.approval
        low, high = r.ci()
        rows.append({"metric": "p_a", "value": r.rate, "ci_low": low, "ci_high": high, "errors": r.errors,
                     "n": r.n, "clusters": r.clusters, "rho": r.rho, "rho_used": r.rho_used, "deff": r.deff,
                     "n_eff": r.n_eff, "rho_point": r.rho_point, "deff_point": r.deff_point})
        for name, value in (("p_u_base", self.base.under_rate), ("p_o_base", self.base.over_rate),
                            ("pi_base", self.base.pi)):
            rows.append({"metric": name, "value": value})
        return pd.DataFrame(rows)
