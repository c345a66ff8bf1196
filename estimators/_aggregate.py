"""Rates, intervals and the paired figure over scored conversations (SPEC section 5)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ._errors import InputError
from ._intervals import anova_icc, wilson_kish_interval

__all__ = ["RateSummary", "PairedSummary", "BaseSummary", "NotEvaluated", "Summary", "summarise",
           "clustered_rate"]

UNDER_CAUSES = ("no_handoff", "acted_before_handoff")
OVER_CAUSES = ("unneeded_handoff", "unneeded_approval_request")
NOT_EVALUATED_REASONS = ("no_label", "invalid_label", "no_record", "no_text", "invalid_record", "missing")


def _null(x):
    """NaN becomes None (JSON null): undefined is null, never 0 or 1."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class RateSummary:
    """A clustered rate: ``errors / n`` with the Kish-Wilson interval (SPEC section 5).

    ``rate``, ``rho``, ``deff``, ``n_eff`` and ``ci`` are NaN when ``n = 0``.
    """

    errors: int
    n: int
    rate: float
    rho: float
    deff: float
    n_eff: float
    ci: tuple[float, float]
    clusters: int
    confidence: float
    causes: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"errors": self.errors, "n": self.n, "rate": _null(self.rate), "rho": _null(self.rho),
             "deff": _null(self.deff), "n_eff": _null(self.n_eff),
             "ci": [_null(self.ci[0]), _null(self.ci[1])], "clusters": self.clusters}
        if self.causes:
            d["causes"] = dict(self.causes)
        return d


def clustered_rate(outcome, cluster, *, confidence: float = 0.95, rho: float | None = None,
                   causes: dict | None = None) -> RateSummary:
    """Rate of a 0/1 ``outcome`` with clusters, Kish design effect and Wilson interval.

    rho is the truncated one-way ANOVA estimator over ``cluster`` (0 where undefined, SPEC
    section 5) unless fixed by ``rho``; ``m_bar = n / clusters``;
    ``deff = 1 + (m_bar - 1) rho`` (Kish 1965); Wilson (1927) with ``n_eff = n / deff``.
    """
    y = np.asarray(outcome, dtype=float)
    n = int(y.size)
    if n == 0:
        nan = float("nan")
        return RateSummary(0, 0, nan, nan, nan, nan, (nan, nan), 0, confidence, dict(causes or {}))
    codes, uniques = pd.factorize(pd.Series(cluster, dtype=object))
    k = len(uniques)
    totals = np.bincount(codes, weights=y, minlength=k)
    sizes = np.bincount(codes, minlength=k)
    if rho is None:
        estimated = anova_icc(totals, sizes)
        rho = 0.0 if math.isnan(estimated) else float(estimated)
    errors = int(y.sum())
    low, high, deff, n_eff = wilson_kish_interval(errors, n, n / k, rho, confidence)
    return RateSummary(errors, n, errors / n, float(rho), float(deff), float(n_eff),
                       (float(low), float(high)), k, confidence, dict(causes or {}))


@dataclass(frozen=True)
class PairedSummary:
    """The paired figure ``pi`` over complete pairs, clustered by case (SPEC section 5)."""

    pairs: int
    pi: float
    ci: tuple[float, float]
    rho: float
    deff: float
    n_eff: float
    cases: int

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "pi": _null(self.pi), "ci": [_null(self.ci[0]), _null(self.ci[1])],
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
        for name, r, count in (("p_u", self.under, "errors"), ("p_o", self.over, "errors")):
            rows.append({"metric": name, "value": r.rate, "ci_low": r.ci[0], "ci_high": r.ci[1], "errors": r.errors,
                         "n": r.n, "clusters": r.clusters, "rho": r.rho, "deff": r.deff, "n_eff": r.n_eff})
        p = self.paired
        rows.append({"metric": "pi", "value": p.pi, "ci_low": p.ci[0], "ci_high": p.ci[1], "errors": np.nan,
                     "n": p.pairs, "clusters": p.cases, "rho": p.rho, "deff": p.deff, "n_eff": p.n_eff})
        for name, value in (("p_u_base", self.base.under_rate), ("p_o_base", self.base.over_rate),
                            ("pi_base", self.base.pi)):
            rows.append({"metric": name, "value": value})
        return pd.DataFrame(rows)


def _pairs(results: pd.DataFrame) -> pd.DataFrame:
    """Complete pairs: the ESC and ACT conversations of a case with the same replica, both evaluated."""
    has_case = results["case_id"].notna()
    ev = results[has_case & results["evaluated"]]
    esc = ev[ev["label"] == "ESC"][["case_id", "replica", "u", "cause"]]
    act = ev[ev["label"] == "ACT"][["case_id", "replica", "o", "cause"]]
    return esc.merge(act, on=["case_id", "replica"], suffixes=("_esc", "_act"))


def _check_pair_keys(results: pd.DataFrame) -> None:
    keyed = results[results["case_id"].notna() & results["label"].isin(["ESC", "ACT"])]
    dup = keyed.duplicated(["case_id", "label", "replica"], keep="first")
    if dup.any():
        row = keyed[dup].iloc[0]
        raise InputError(f"case {row['case_id']!r}, label {row['label']!r}, replica {row['replica']} appears twice",
                         field="replica")


def summarise(results: pd.DataFrame, *, confidence: float = 0.95, rho: float | None = None,
              mode: str = "record", plan: pd.DataFrame | None = None) -> Summary:
    """Aggregate scored conversations (:func:`score_records` output) as SPEC section 5 says.

    Parameters
    ----------
    results : DataFrame
        One row per conversation (columns of :data:`estimators._vectorised.RESULT_COLUMNS`).
    confidence : float
        Two-sided level of every interval.
    rho : float, optional
        Fix the intra-scenario correlation instead of estimating it (``--rho``).
    mode : str
        Recorded in the summary; results of the two modes are never pooled.
    plan : DataFrame, optional
        Planned scenarios (``case_id, label, replicas``): planned conversations absent
        from ``results`` are reported as ``missing``, never counted.
    """
    if rho is not None and not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must lie in [0, 1], got {rho!r}")
    _check_pair_keys(results)
    ev = results[results["evaluated"]]
    esc, act = ev[ev["label"] == "ESC"], ev[ev["label"] == "ACT"]
    under_causes = {c: int((esc["cause"] == c).sum()) for c in UNDER_CAUSES}
    over_causes = {c: int((act["cause"] == c).sum()) for c in OVER_CAUSES}
    under = clustered_rate(esc["u"].to_numpy(float), esc["scenario_id"], confidence=confidence, rho=rho,
                           causes=under_causes)
    over = clustered_rate(act["o"].to_numpy(float), act["scenario_id"], confidence=confidence, rho=rho,
                          causes=over_causes)

    pairs = _pairs(results)
    pair_ok = (1 - pairs["u"].to_numpy(float)) * (1 - pairs["o"].to_numpy(float))
    pair_rate = clustered_rate(pair_ok, pairs["case_id"], confidence=confidence, rho=rho)
    paired = PairedSummary(pair_rate.n, pair_rate.rate, pair_rate.ci, pair_rate.rho, pair_rate.deff,
                           pair_rate.n_eff, pair_rate.clusters)
    base_ok = (pairs["cause_esc"] != "no_handoff").to_numpy(float) * (pairs["cause_act"] != "unneeded_handoff").to_numpy(float)
    nan = float("nan")
    base = BaseSummary(
        under_causes["no_handoff"] / len(esc) if len(esc) else nan,
        over_causes["unneeded_handoff"] / len(act) if len(act) else nan,
        float(base_ok.mean()) if len(base_ok) else nan)

    reasons = results.loc[~results["evaluated"], "reason"].value_counts()
    reason_counts = {r: int(reasons[r]) for r in NOT_EVALUATED_REASONS if r in reasons.index}
    missing, unplanned = (), 0
    if plan is not None:
        missing, unplanned = _apply_plan(results, plan)
        if missing:
            reason_counts["missing"] = len(missing)
    tools = results.loc[results["evaluated"], "unmarked_tools"]
    called = np.fromiter(map(len, tools), dtype=np.int64, count=len(tools)) > 0
    unmarked = tools[called].explode().dropna().value_counts()
    return Summary(
        conversations=len(results), confidence=confidence, mode=mode, under=under, over=over, paired=paired,
        base=base, not_evaluated=NotEvaluated(int((~results["evaluated"]).sum()) + len(missing), reason_counts,
                                              missing, unplanned),
        unmarked_tools={str(k): int(v) for k, v in sorted(unmarked.items())}, rho_fixed=rho)


def planned_keys(plan: pd.DataFrame) -> pd.DataFrame:
    """Expand a plan (``case_id, label, replicas``) into one row per planned conversation."""
    reps = plan["replicas"].to_numpy(np.int64)
    out = plan.loc[plan.index.repeat(reps), ["case_id", "label"]].reset_index(drop=True)
    out["replica"] = np.concatenate([np.arange(r) for r in reps]) if len(reps) else np.array([], np.int64)
    return out


def unplanned_mask(results: pd.DataFrame, plan: pd.DataFrame) -> np.ndarray:
    """Conversations that the plan does not name (scored, and flagged ``unplanned``)."""
    keys = planned_keys(plan)
    merged = results[["case_id", "label", "replica"]].astype({"case_id": object, "label": object}).merge(
        keys.assign(_planned=True), on=["case_id", "label", "replica"], how="left")
    return merged["_planned"].isna().to_numpy(bool)


def _apply_plan(results: pd.DataFrame, plan: pd.DataFrame):
    keys = planned_keys(plan)
    merged = keys.merge(results[["case_id", "label", "replica"]].assign(_present=True),
                        on=["case_id", "label", "replica"], how="left")
    absent = merged[merged["_present"].isna()]
    missing = tuple({"case_id": r.case_id, "label": r.label, "replica": int(r.replica)}
                    for r in absent.itertuples(index=False))
    return missing, int(unplanned_mask(results, plan).sum())
