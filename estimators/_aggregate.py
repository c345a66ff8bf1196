"""Rates, intervals and the paired figure over scored conversations (SPEC section 5)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ._errors import InputError
from ._intervals import anova_icc, wilson_kish_interval

__all__ = ["RateSummary", "PairedSummary", "BaseSummary", "NotEvaluated", "Summary", "SummaryAccumulator",
           "summarise", "clustered_rate"]

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
    codes, uniques = pd.factorize(pd.Series(cluster, dtype=object))
    totals = np.bincount(codes, weights=y, minlength=len(uniques))
    sizes = np.bincount(codes, minlength=len(uniques))
    return _rate_of_clusters(totals, sizes, confidence=confidence, rho=rho, causes=causes)


def _rate_of_clusters(totals, sizes, *, confidence, rho, causes=None) -> RateSummary:
    """:func:`clustered_rate` from the number of ones and the size of each cluster."""
    n = int(np.sum(sizes))
    if n == 0:
        nan = float("nan")
        return RateSummary(0, 0, nan, nan, nan, nan, (nan, nan), 0, confidence, dict(causes or {}))
    k = len(sizes)
    if rho is None:
        estimated = anova_icc(totals, sizes)
        rho = 0.0 if math.isnan(estimated) else float(estimated)
    errors = int(np.sum(totals))
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


class _ClusterTotals:
    """Number of ones and size of each cluster, kept by cluster id as chunks come.

    Clusters are numbered in order of first appearance, so the totals (and the
    floating-point sums over them) do not depend on how the input was cut into chunks.
    """

    def __init__(self):
        self.index: dict = {}
        self.ones = np.zeros(0, np.int64)
        self.sizes = np.zeros(0, np.int64)

    def codes(self, cluster) -> np.ndarray:
        """The number of each cluster id; an id not seen before gets the next one."""
        local, uniques = pd.factorize(pd.Series(cluster, dtype=object))
        index = self.index
        numbers = np.fromiter((index.setdefault(key, len(index)) for key in uniques), np.int64, len(uniques))
        grow = len(index) - len(self.sizes)
        if grow:
            self.ones = np.concatenate([self.ones, np.zeros(grow, np.int64)])
            self.sizes = np.concatenate([self.sizes, np.zeros(grow, np.int64)])
        return numbers[local]

    def add(self, codes, outcome) -> None:
        """Count 0/1 ``outcome`` in the clusters numbered ``codes``."""
        k = len(self.sizes)
        self.ones += np.bincount(codes, weights=outcome, minlength=k).astype(np.int64)
        self.sizes += np.bincount(codes, minlength=k)

    def totals(self):
        """Ones and sizes of the clusters that have at least one member."""
        present = self.sizes > 0
        return self.ones[present], self.sizes[present]


def _halves(results: pd.DataFrame, evaluated: np.ndarray):
    """The evaluated ESC and ACT conversations of a case: the halves of pairs (SPEC section 5).

    Returns their rows, whether each is the ESC half, ``error`` (``u`` of an ESC half, ``o``
    of an ACT half) and ``base_error`` (``no_handoff`` / ``unneeded_handoff``).
    """
    label = results["label"].to_numpy(object)
    is_esc, is_act = label == "ESC", label == "ACT"
    rows = np.flatnonzero(evaluated & (is_esc | is_act) & results["case_id"].notna().to_numpy(bool))
    esc = is_esc[rows]
    cause = results["cause"].to_numpy(object)[rows]
    u, o = (results[score].to_numpy(np.int8, na_value=0)[rows] for score in ("u", "o"))
    error = np.where(esc, u, o)
    base_error = np.where(esc, cause == "no_handoff", cause == "unneeded_handoff").astype(np.int8)
    return rows, esc, error, base_error


def _match_pairs(case: np.ndarray, replica: np.ndarray, is_esc: np.ndarray):
    """Among halves of pairs (one per (case, label, replica)), the positions of the ESC and of
    the ACT half of each complete pair, and of the halves that still wait for the other label."""
    order = np.lexsort((is_esc, replica, case))  # by case, then replica, the ACT half first
    c, r = case[order], replica[order]
    pair = (c[1:] == c[:-1]) & (r[1:] == r[:-1])
    act, esc = order[:-1][pair], order[1:][pair]
    waiting = np.ones(case.size, bool)
    waiting[act] = waiting[esc] = False
    return esc, act, np.flatnonzero(waiting)


def complete_pairs(results: pd.DataFrame) -> pd.DataFrame:
    """The complete pairs of scored conversations: ``case_id``, ``replica``, ``error_esc`` (u)
    and ``error_act`` (o) (SPEC section 5, "Pairs")."""
    rows, is_esc, error, _ = _halves(results, results["evaluated"].to_numpy(bool))
    case, cases = pd.factorize(pd.Series(results["case_id"].to_numpy(object)[rows], dtype=object))
    replica = results["replica"].to_numpy(np.int64)[rows]
    esc, act, _ = _match_pairs(case, replica, is_esc)
    return pd.DataFrame({"case_id": pd.Series(np.asarray(cases, dtype=object)[case[esc]], dtype=object),
                         "replica": replica[esc], "error_esc": error[esc], "error_act": error[act]})


class SummaryAccumulator:
    """The SPEC section 5 summary of scored conversations given chunk by chunk.

    Memory grows with the number of scenarios and cases, not of conversations: it keeps
    counts, the number of errors and conversations of each scenario and of each case, and
    the halves of pairs whose other conversation has not come yet. :func:`summarise` is this over one frame. The
    (case, label, replica) keys must be unique across chunks, as the readers check.

    Parameters
    ----------
    plan : DataFrame, optional
        Planned scenarios (``case_id, label, replicas``): planned conversations that never
        come are reported as ``missing``, never counted; others are counted ``unplanned``.
    """

    def __init__(self, *, plan: pd.DataFrame | None = None):
        self.conversations = 0
        self._under, self._over, self._paired = _ClusterTotals(), _ClusterTotals(), _ClusterTotals()
        self._causes = dict.fromkeys(UNDER_CAUSES + OVER_CAUSES, 0)
        self._base_ok = 0
        self._waiting = None  # halves of pairs whose other conversation has not come yet
        self._not_evaluated = 0
        self._reasons: dict = {}
        self._tools: dict = {}
        self._planned = planned_keys(plan) if plan is not None else None
        self._present = np.zeros(0 if plan is None else len(self._planned), bool)
        self._unplanned = 0

    def add(self, results: pd.DataFrame) -> np.ndarray | None:
        """Count one chunk of :func:`~estimators._vectorised.score_records` output.

        Returns the mask of its conversations that the plan does not name (None without a plan).
        """
        self.conversations += len(results)
        evaluated = results["evaluated"].to_numpy(bool)
        label = results["label"].to_numpy(object)
        cause = results["cause"].to_numpy(object)
        scenario = results["scenario_id"].to_numpy(object)
        for kind, score, totals, causes in (("ESC", "u", self._under, UNDER_CAUSES),
                                            ("ACT", "o", self._over, OVER_CAUSES)):
            mask = evaluated & (label == kind)
            totals.add(totals.codes(scenario[mask]), results[score].to_numpy(np.int8, na_value=0)[mask])
            for c in causes:
                self._causes[c] += int(np.count_nonzero(cause[mask] == c))
        self._add_pairs(results, evaluated)
        self._not_evaluated += int(np.count_nonzero(~evaluated))
        for reason, count in results.loc[~evaluated, "reason"].value_counts().items():
            self._reasons[reason] = self._reasons.get(reason, 0) + int(count)
        tools = results["unmarked_tools"].to_numpy(object)[evaluated]
        called = np.fromiter(map(len, tools), dtype=np.int64, count=len(tools)) > 0
        for tool, count in pd.Series(tools[called], dtype=object).explode().dropna().value_counts().items():
            self._tools[tool] = self._tools.get(tool, 0) + int(count)
        if self._planned is not None:
            merged = self._planned.merge(results[["case_id", "label", "replica"]].astype(
                {"case_id": object, "label": object}).assign(_present=True), on=["case_id", "label", "replica"],
                how="left")
            self._present |= merged["_present"].notna().to_numpy(bool)
            unplanned = _unplanned(results, self._planned)
            self._unplanned += int(unplanned.sum())
            return unplanned
        return None

    def _add_pairs(self, results, evaluated) -> None:
        rows, is_esc, error, base_error = _halves(results, evaluated)
        halves = {"case": self._paired.codes(results["case_id"].to_numpy(object)[rows]),
                  "replica": results["replica"].to_numpy(np.int64)[rows], "is_esc": is_esc, "error": error,
                  "base_error": base_error}
        if self._waiting is not None:
            halves = {k: np.concatenate([self._waiting[k], v]) for k, v in halves.items()}
        esc, act, waiting = _match_pairs(halves["case"], halves["replica"], halves["is_esc"])
        self._waiting = {k: v[waiting] for k, v in halves.items()}
        ok = (1 - halves["error"][esc]) * (1 - halves["error"][act])
        self._paired.add(halves["case"][esc], ok)
        self._base_ok += int(np.count_nonzero((halves["base_error"][esc] == 0) & (halves["base_error"][act] == 0)))

    def summary(self, *, confidence: float = 0.95, rho: float | None = None, mode: str = "record") -> Summary:
        """The summary of everything added so far (SPEC sections 5 and 7)."""
        if rho is not None and not 0.0 <= rho <= 1.0:
            raise ValueError(f"rho must lie in [0, 1], got {rho!r}")
        under_causes = {c: self._causes[c] for c in UNDER_CAUSES}
        over_causes = {c: self._causes[c] for c in OVER_CAUSES}
        under = _rate_of_clusters(*self._under.totals(), confidence=confidence, rho=rho, causes=under_causes)
        over = _rate_of_clusters(*self._over.totals(), confidence=confidence, rho=rho, causes=over_causes)
        pair_rate = _rate_of_clusters(*self._paired.totals(), confidence=confidence, rho=rho)
        paired = PairedSummary(pair_rate.n, pair_rate.rate, pair_rate.ci, pair_rate.rho, pair_rate.deff,
                               pair_rate.n_eff, pair_rate.clusters)
        nan = float("nan")
        base = BaseSummary(under_causes["no_handoff"] / under.n if under.n else nan,
                           over_causes["unneeded_handoff"] / over.n if over.n else nan,
                           self._base_ok / paired.pairs if paired.pairs else nan)
        reasons = {r: self._reasons[r] for r in NOT_EVALUATED_REASONS if r in self._reasons}
        missing = ()
        if self._planned is not None:
            absent = self._planned[~self._present]
            missing = tuple({"case_id": r.case_id, "label": r.label, "replica": int(r.replica)}
                            for r in absent.itertuples(index=False))
            if missing:
                reasons["missing"] = len(missing)
        return Summary(
            conversations=self.conversations, confidence=confidence, mode=mode, under=under, over=over,
            paired=paired, base=base,
            not_evaluated=NotEvaluated(self._not_evaluated + len(missing), reasons, missing, self._unplanned),
            unmarked_tools={str(k): v for k, v in sorted(self._tools.items())}, rho_fixed=rho)


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

    Raises
    ------
    InputError
        When a (case, label, replica) appears twice.
    """
    _check_pair_keys(results)
    accumulator = SummaryAccumulator(plan=plan)
    accumulator.add(results)
    return accumulator.summary(confidence=confidence, rho=rho, mode=mode)


def planned_keys(plan: pd.DataFrame) -> pd.DataFrame:
    """Expand a plan (``case_id, label, replicas``) into one row per planned conversation."""
    reps = plan["replicas"].to_numpy(np.int64)
    out = plan.loc[plan.index.repeat(reps), ["case_id", "label"]].reset_index(drop=True)
    out["replica"] = np.concatenate([np.arange(r) for r in reps]) if len(reps) else np.array([], np.int64)
    return out


def _unplanned(results: pd.DataFrame, keys: pd.DataFrame) -> np.ndarray:
    """Conversations that the planned ``keys`` do not name (scored, and flagged ``unplanned``)."""
    merged = results[["case_id", "label", "replica"]].astype({"case_id": object, "label": object}).merge(
        keys.assign(_planned=True), on=["case_id", "label", "replica"], how="left")
    return merged["_planned"].isna().to_numpy(bool)
