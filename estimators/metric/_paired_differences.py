"""The paired differences of two assistants scored on the same scenarios: ``p_u``, ``p_o``, ``pi`` and ``p_a``,
B minus A.

:func:`paired_differences` is the computation on two scored tables (of the scenarios that
:func:`match_scenarios` found shared), with Newcombe's interval and the paired cluster bootstrap for each figure
and the p-value that inverts the chosen one (:func:`inverted_p_value`).
:func:`estimators.metric._compare.compare_scored` (two folders) and :func:`estimators.metric._leaderboard.leaderboard`
(every two of several assistants) use it; the notes on both intervals are in :mod:`estimators.metric._compare`.

``p_a`` (SPEC section 3A) has a value only in the conversations where the assistant made a gated call, which
differ between assistants, so its difference is taken on the conversations where *both* have ``a``, paired by
:func:`pairing_keys` (case, label, replica): each side's ``p_a`` on those pairs with its Wilson-Kish limits
clustered by scenario (as ``summary.approval``), ``psi`` and the bootstrap over cases, as for ``p_u`` and ``p_o``.
Its bootstrap draws after the joint resamples of the other three, so adding it changes none of theirs.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import pandas as pd

from ..records import LABELS, InputError
from ..stats import (
    AUTO_INTERVAL,
    DEFAULT_INTERVAL,
    INTERVAL_CHOICES,
    ConfidenceInterval,
    DegenerateIntervalWarning,
    check_choice,
    check_count,
    check_level,
    check_probability,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_correlation,
)
from ._aggregate import summarise
from ._difference_coverage import (
    CoverageWord,
    _study_method,
    auto_difference_interval,
    coverage_word,
)
from ._summary import RateSummary, Summary, clustered_rate

__all__ = ["MetricDifference", "PairedDifferences", "paired_differences", "chosen_paired_differences",
           "fewest_cases", "match_scenarios",
           "check_difference_options", "inverted_p_value", "P_FLOOR", "ScenarioMismatchError", "pairing_keys",
           "set_aside_run_errors", "SHOWN_RUN_ERRORS", "FIGURES", "LOWER_IS_BETTER"]

#: ``run_error`` conversations named, per run, where they are set aside.
SHOWN_RUN_ERRORS = 10

#: The figures of a difference, in the order of every table.
FIGURES = ("p_u", "p_o", "pi", "p_a")
#: The figures of which lower is better (pi: higher).
LOWER_IS_BETTER = frozenset({"p_u", "p_o", "p_a"})
_FIELDS = {"p_u": "under", "p_o": "over", "pi": "paired"}  # the Summary field of the figures of the summaries


@dataclass(frozen=True)
class MetricDifference:
    """One figure of both assistants and its difference ``b - a`` with two intervals.

    ``clusters`` is the number of cases the figure rests on; ``p_value`` inverts the chosen
    interval (:func:`inverted_p_value`), NaN where the difference is undefined; ``coverage`` is
    the coverage study's word on each interval at ``clusters`` cases (:func:`coverage_word`).
    For ``p_a``, ``a`` and ``b`` are each side's ``p_a`` on the conversations where both made a gated call,
    ``n_a`` and ``n_b`` both the number of those pairs, and ``note`` says so (or why there is none).
    """

    metric: str
    a: float
    b: float
    difference: float
    n_a: int
    n_b: int
    clusters: int
    psi: float
    newcombe_ci: ConfidenceInterval
    bootstrap_ci: ConfidenceInterval
    bootstrap_undefined: int
    interval: str = DEFAULT_INTERVAL
    p_value: float = math.nan
    note: str | None = None

    @property
    def ci(self) -> ConfidenceInterval:
        """The interval chosen by ``interval``: the bootstrap's for a bootstrap method, else Newcombe's."""
        return self.bootstrap_ci if self.interval.startswith("bootstrap") else self.newcombe_ci

    @property
    def defined(self) -> bool:
        """Whether the chosen interval exists (both assistants have the figure)."""
        return all(math.isfinite(float(x)) for x in self.ci)

    @property
    def coverage(self) -> dict[str, CoverageWord]:
        """``{"newcombe": CoverageWord, "bootstrap": CoverageWord}`` at this figure's number of cases."""
        cases = self.clusters if math.isfinite(float(self.difference)) else 0
        return {which: coverage_word(_study_method(self.interval, which), cases)
                for which in ("newcombe", "bootstrap")}

    def to_dict(self) -> dict:
        def null(x):
            return None if x is None or not math.isfinite(float(x)) else float(x)
        return {"metric": self.metric, "a": null(self.a), "b": null(self.b),
                "difference": null(self.difference), "n_a": self.n_a, "n_b": self.n_b,
                "clusters": self.clusters, "psi": null(self.psi), "ci": [null(v) for v in self.ci],
                "newcombe_ci": [null(v) for v in self.newcombe_ci],
                "bootstrap_ci": [null(v) for v in self.bootstrap_ci],
                "bootstrap_undefined": self.bootstrap_undefined, "p_value": null(self.p_value),
                "coverage": {which: word.to_dict() for which, word in self.coverage.items()}, "note": self.note}


#: p-values of the inverted intervals are found between these bounds (below: reported as the floor).
P_FLOOR = 1e-12
#: The most bootstrap resamples of a comparison: 50 times the default, whose Monte Carlo error on
#: a 95% limit is already small; more only takes longer (and memory, resamples x scenarios).
MAX_RESAMPLES = 100_000
_BISECTIONS = 24


def inverted_p_value(interval_at, confidence: float, floor: float = P_FLOOR) -> float:
    """The smallest ``alpha`` whose ``1 - alpha`` interval leaves out 0 (test inversion).

    Bisection on ``log alpha`` between ``floor`` and ``1 - floor``, split first at the
    reported level ``confidence``, so that ``p <= 1 - confidence`` exactly when the reported
    interval leaves out 0. The intervals nest as the level grows (Wilson limits do, so do
    Newcombe's built from them and the bootstrap's quantiles), so the levels whose interval
    leaves out 0 form one range; the p-value is found to a relative precision of about 1e-6.

    Parameters
    ----------
    interval_at : callable
        ``interval_at(level) -> (low, high)``, e.g. :meth:`PairedDifferences.interval_at`.
    confidence : float
        The reported level.
    floor : float
        The smallest p-value reported (for a bootstrap interval ``1 / n_boot``: its resamples
        resolve no smaller one).
    """
    def leaves_out_zero(level: float) -> bool:
        low, high = interval_at(level)
        return low > 0.0 or high < 0.0

    lo, hi = math.log(floor), math.log1p(-floor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        if leaves_out_zero(confidence):
            hi = math.log1p(-confidence)
            if leaves_out_zero(1.0 - floor):
                return floor
        else:
            lo = math.log1p(-confidence)
            if not leaves_out_zero(floor):
                return 1.0
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if leaves_out_zero(-math.expm1(mid)) else (mid, hi)
    return math.exp(hi)


class ScenarioMismatchError(InputError):
    """The two results do not cover the same scenarios.

    Attributes
    ----------
    only_in : dict
        The scenario ids only in each result, by its name.
    shared : int
        The scenarios both have.
    base : str
        The message without the way out (``common=True``), for a caller that names its own.
    """

    def __init__(self, message: str, *, only_in: dict, shared: int, base: str, source: str | None = None):
        super().__init__(message, source=source)
        self.only_in, self.shared, self.base = only_in, shared, base


def pairing_keys(frame: pd.DataFrame) -> pd.Series:
    """The key that pairs a conversation across runs: (case, label, replica), else its ``conversation_id``."""
    case, label = frame["case_id"].to_numpy(object), frame["label"].to_numpy(object)
    replica, ids = frame["replica"].to_numpy(object), frame["conversation_id"].to_numpy(object)
    return pd.Series([(c, lab, r) if c is not None and isinstance(lab, str) else ("conversation_id", i)
                      for c, lab, r, i in zip(case, label, replica, ids)], index=frame.index, dtype=object)


def set_aside_run_errors(frames: dict, sources: dict, *, allow: bool) -> tuple[dict, list[str]]:
    """Runs whose harness recorded failures (``run_error``, SPEC section 3), refused or set aside.

    A crashed run is not a model's behaviour: without ``allow`` (``--allow-errors``) the first run
    with a ``run_error`` conversation is refused. With it, every conversation that failed in *any*
    run is left out of *every* run (by :func:`pairing_keys`), so the models are still compared on
    the same conversations, and the warnings name the failed ones.

    Parameters
    ----------
    frames : dict of str to DataFrame
        Each run's scored conversations (with ``reason``), by name.
    sources : dict of str to str
        Where each came from, for the messages.
    allow : bool
        Set the failed conversations aside instead of refusing the run.

    Returns
    -------
    (dict, list of str)
        The frames without the failed conversations, and the warnings (none when nothing failed).
    """
    errored = {name: frame["reason"].to_numpy(object) == "run_error" for name, frame in frames.items()}
    failed = {name: mask for name, mask in errored.items() if mask.any()}
    if not failed:
        return dict(frames), []
    if not allow:
        name, mask = next(iter(failed.items()))
        raise InputError(f"{int(mask.sum())} of {len(mask)} conversations are run_error: the harness recorded that "
                         "the run failed, so they are not the model's behaviour; rerun them, or give --allow-errors "
                         "to compare the models on the conversations that every run completed", source=sources[name])
    left_out: set = set()
    for name, mask in failed.items():
        left_out.update(pairing_keys(frames[name])[mask])
    kept, warnings = {}, []
    for name, frame in frames.items():
        drop = pairing_keys(frame).isin(left_out).to_numpy(bool)
        if drop.all():
            raise InputError("every conversation of this run failed in some run (run_error): nothing is left to "
                             "compare; rerun the failed runs", source=sources[name])
        kept[name] = frame.loc[~drop].reset_index(drop=True)
        if name in failed:
            ids = [str(i) for i in frame["conversation_id"].to_numpy(object)[failed[name]]]
            more = f" and {len(ids) - SHOWN_RUN_ERRORS} more" if len(ids) > SHOWN_RUN_ERRORS else ""
            warnings.append(f"{name}: {len(ids)} of {len(frame)} conversations failed in the run (run_error): "
                            f"{', '.join(ids[:SHOWN_RUN_ERRORS])}{more} ({sources[name]})")
    warnings.append(f"--allow-errors: the {len(left_out)} conversation{'' if len(left_out) == 1 else 's'} that "
                    "failed in some run are left out of every run, so each model's figures rest on fewer "
                    "conversations than `escalation score` on its log alone")
    return kept, warnings


def match_scenarios(a: pd.DataFrame, b: pd.DataFrame, names, *, common: bool = False,
                    source: str | None = None) -> dict[str, list]:
    """The scenarios only in A and only in B, by name; an error unless both cover the same ones.

    Parameters
    ----------
    a, b : DataFrame
        Scored conversations.
    names : (str, str)
        The names of A and B, in messages and as the keys of the result.
    common : bool
        Accept different scenario sets (the caller compares the shared ones) instead of refusing.
    source : str, optional
        Where the error is (default ``"A vs B"`` of the names).

    Returns
    -------
    dict
        ``{name_a: [ids only in A], name_b: [ids only in B]}``, sorted.

    Raises
    ------
    ScenarioMismatchError
        Without ``common``, when the scenario sets differ; with it, when they share none.
    InputError
        When a scenario is ESC in one and ACT in the other.
    """
    ids_a, ids_b = set(a["scenario_id"]), set(b["scenario_id"])
    only_a, only_b = sorted(ids_a - ids_b, key=str), sorted(ids_b - ids_a, key=str)
    only_in = {names[0]: only_a, names[1]: only_b}
    shared = len(ids_a & ids_b)
    source = source or f"{names[0]} vs {names[1]}"
    if (only_a or only_b) and (not common or not shared):
        def some(ids):
            return ", ".join(repr(x) for x in ids[:3]) + (", ..." if len(ids) > 3 else "")
        parts = [f"{len(ids)} only in {name} ({some(ids)})" for ids, name in ((only_a, names[0]),
                                                                              (only_b, names[1])) if ids]
        what = "share no scenario" if not shared else "are not scored on the same scenarios"
        base = f"the two folders {what}: {'; '.join(parts)}"
        raise ScenarioMismatchError(base, only_in=only_in, shared=shared, base=base, source=source)
    labels = pd.concat([frame.loc[frame["label"].isin(LABELS), ["scenario_id", "label"]]
                        for frame in (a, b)]).drop_duplicates()
    clash = labels["scenario_id"].duplicated(keep=False)
    if clash.any():
        raise InputError(f"scenario {labels.loc[clash, 'scenario_id'].iloc[0]!r} has the label ESC "
                         f"in one folder and ACT in the other", source=source)
    return only_in


def _case_of_scenario(frames) -> pd.Series:
    """The bootstrap's resampling unit of each scenario: its case, else the scenario itself."""
    both = pd.concat([f[["scenario_id", "case_id"]] for f in frames]).drop_duplicates("scenario_id")
    unit = both["case_id"].where(both["case_id"].notna(), "scenario:" + both["scenario_id"].astype(str))
    return pd.Series(unit.to_numpy(object), index=both["scenario_id"].to_numpy(object))


def _cluster_totals(rate) -> pd.DataFrame:
    """Ones ``y`` and size ``n`` of each cluster a summary kept, by cluster id in sorted order."""
    return (pd.DataFrame({"y": np.asarray(rate.cluster_totals, dtype=float), "n": rate.cluster_sizes},
                         index=pd.Index(rate.cluster_ids, dtype=object)).sort_index())


def check_difference_options(confidence: float, n_boot: int, interval: str, rho: float | None = None) -> None:
    """ValueError unless the level, the number of resamples, the interval method and a fixed rho are valid;
    each names its parameter (``confidence``, ``n_boot``, ``interval``, ``rho``), so that a command line can
    name its own option instead: ``--n-boot must be a whole number >= 1; got 0``."""
    check_level("confidence", confidence)
    check_count("n_boot", n_boot, 1, MAX_RESAMPLES, whole_floats=True)
    check_choice("interval", interval, INTERVAL_CHOICES)
    if rho is not None:
        check_probability("rho", rho)


@dataclass(frozen=True)
class PairedDifferences:
    """What :func:`paired_differences` finds: the four differences and what their intervals rest on.

    Attributes
    ----------
    differences : tuple of MetricDifference
        ``p_u``, ``p_o``, ``pi`` and ``p_a`` (:data:`FIGURES`), B minus A.
    summaries : tuple of Summary
        A's and B's summaries, whose ``p_u``, ``p_o`` and ``pi`` limits Newcombe's interval combines.
    rates : tuple
        A's and B's rate of each figure, whose limits Newcombe's interval combines: the summaries' and, for
        ``p_a``, the rates on the conversations where both made a gated call.
    cases : pandas.Series
        The bootstrap's resampling unit (case) of each scenario, by scenario id.
    units : int
        The cases the paired bootstrap of ``p_u``, ``p_o`` and ``pi`` resampled.
    bootstraps : tuple
        The :class:`~estimators.stats._bootstrap.ClusterBootstrapResult` of each figure (None when
        there is no case, or no resample has the figure on both sides).
    """

    differences: tuple[MetricDifference, ...]
    summaries: tuple[Summary, Summary]
    rates: tuple[tuple[RateSummary, RateSummary], ...] = field(repr=False)
    cases: pd.Series = field(repr=False)
    units: int
    bootstraps: tuple = field(repr=False)

    def interval_at(self, index: int, confidence: float) -> ConfidenceInterval:
        """The chosen interval of figure ``index`` (of :data:`FIGURES`) at another level.

        The same construction as :attr:`MetricDifference.ci` (Newcombe's with the same ``psi``
        and the limits recomputed at ``confidence``, or the same bootstrap resamples read at
        ``confidence``), so that test inversion can find the level at which it leaves out 0.
        """
        diff = self.differences[index]
        if diff.interval.startswith("bootstrap"):
            boot = self.bootstraps[index]
            if boot is None:
                return ConfidenceInterval(np.nan, np.nan)
            low, high = boot.confidence_interval(diff.interval.removeprefix("bootstrap-"), confidence)
            return ConfidenceInterval(float(low), float(high))
        rate_a, rate_b = self.rates[index]
        return newcombe_paired_interval(diff.a, rate_a.ci(confidence), diff.b, rate_b.ci(confidence), diff.psi)


def _gated(frame: pd.DataFrame) -> pd.DataFrame:
    """The conversations of ``frame`` with ``a`` (a gated call): their :func:`pairing_keys`, ``a`` and scenario."""
    if "a" not in frame.columns:  # scored before escalation recorded approval evidence
        return pd.DataFrame({"key": pd.Series(dtype=object), "y": pd.Series(dtype=float),
                             "scenario": pd.Series(dtype=object)})
    gated = frame.loc[frame["a"].notna().to_numpy(bool)]
    return pd.DataFrame({"key": pairing_keys(gated).to_numpy(object), "y": gated["a"].to_numpy(float),
                         "scenario": gated["scenario_id"].to_numpy(object)})


def _approval_pairs(a: pd.DataFrame, b: pd.DataFrame, cases: pd.Series):
    """The conversations where both A and B have ``a``, and their totals by case.

    Returns ``(pairs, totals)``: one row per pair with each side's ``a`` (``y_a``, ``y_b``), scenario
    (``scenario_a``, ``scenario_b``) and case (``unit``, the bootstrap's unit: a scenario without a case is its
    own); and the ones ``y_a``, ``y_b`` and sizes ``n_a = n_b`` of each case, in the order of the cases' names.
    """
    pairs = _gated(a).merge(_gated(b), on="key", suffixes=("_a", "_b"))  # keys are unique on each side
    pairs["unit"] = cases.reindex(pairs["scenario_a"].to_numpy(object)).to_numpy(object)
    by_case = pairs.groupby("unit", sort=False)
    totals = pd.DataFrame({"y_a": by_case["y_a"].sum(), "n_a": by_case.size(), "y_b": by_case["y_b"].sum(),
                           "n_b": by_case.size()}, dtype=float)
    return pairs, totals.loc[sorted(totals.index, key=str)]


def _approval_note(frames, summaries, pairs: int) -> str:
    """What the ``p_a`` difference rests on, or why there is none."""
    missing = [side for side, frame in zip("AB", frames) if "a" not in frame.columns]
    if missing:
        return (f"not compared: {' and '.join(missing)} {'has' if len(missing) == 1 else 'have'} no approval "
                "evidence (a conversations.jsonl scored before escalation recorded `a`, SPEC section 3A); score "
                "it again")
    gated = f"A made one in {summaries[0].approval.n}, B in {summaries[1].approval.n}"
    if not pairs:
        return f"undefined: no conversation in which both made a gated call ({gated})"
    return (f"on the {pairs} conversation{'' if pairs == 1 else 's'} in which both made a gated call, paired by "
            f"case, label and replica ({gated})")


def chosen_paired_differences(a: pd.DataFrame, b: pd.DataFrame, *, confidence: float, n_boot: int, interval: str,
                              rho: float | None, rng: np.random.Generator) -> tuple[PairedDifferences, str, str]:
    """``(differences, method, reason)``: :func:`paired_differences` by ``interval``, ``auto`` resolved.

    ``auto`` is Newcombe's interval with the limits of :func:`auto_difference_interval` at the fewest cases a
    difference of ``p_u``, ``p_o`` or ``pi`` rests on and the rates' design (replicas or not), known after a
    first pass with the paper's limits (neither depends on them); a second pass, when the limits change, draws
    the same resamples as ``--interval METHOD``.
    """
    if interval != AUTO_INTERVAL:
        return (paired_differences(a, b, confidence=confidence, n_boot=n_boot, interval=interval, rho=rho, rng=rng),
                interval, "chosen (--interval)")
    state = rng.bit_generator.state
    first = DEFAULT_INTERVAL
    paired = paired_differences(a, b, confidence=confidence, n_boot=n_boot, interval=first, rho=rho, rng=rng)
    replicas = any(rate.replicas for summary in paired.summaries
                   for rate in (summary.under, summary.over, summary.paired) if rate.n)
    method, reason = auto_difference_interval(fewest_cases(paired.differences, paired.units), replicas)
    if method != first:
        rng.bit_generator.state = state
        paired = paired_differences(a, b, confidence=confidence, n_boot=n_boot, interval=method, rho=rho, rng=rng)
    return paired, method, reason


def fewest_cases(differences, cases: int) -> int:
    """The fewest cases a defined difference of ``p_u``, ``p_o`` or ``pi`` rests on (else ``cases``); ``p_a``'s,
    often fewer, has its own warnings."""
    defined = [d.clusters for d in differences if d.metric != "p_a" and math.isfinite(float(d.difference))]
    return min(defined) if defined else cases


def paired_differences(a: pd.DataFrame, b: pd.DataFrame, *, confidence: float, n_boot: int, interval: str,
                       rho: float | None, rng: np.random.Generator) -> PairedDifferences:
    """The differences of ``p_u``, ``p_o``, ``pi`` and ``p_a`` of two scored tables on the same scenarios (B - A).

    ``p_u``, ``p_o`` and ``pi`` are each side's summary figures; ``p_a`` is each side's on the conversations
    where both have ``a`` (module docstring), undefined with a note when a table has no ``a`` column.

    Parameters
    ----------
    a, b : DataFrame
        Scored conversations (the columns of :func:`estimators.read_scored`) of the same
        scenarios (:func:`match_scenarios`).
    confidence, n_boot, interval, rho
        As :func:`compare_scored` (checked there: :func:`check_difference_options`).
    rng : numpy.random.Generator
        The paired bootstrap's randomness: first the joint resamples of ``p_u``, ``p_o`` and ``pi`` (their cases),
        then those of ``p_a`` (the cases of its pairs).

    Returns
    -------
    PairedDifferences
        Each difference with its p-value (:func:`inverted_p_value` of the chosen interval,
        floored at :data:`P_FLOOR`, and for a bootstrap interval at ``1 / n_boot``).
    """
    bootstrap = interval.startswith("bootstrap")
    method = interval.removeprefix("bootstrap-") if bootstrap else "percentile"
    limits = DEFAULT_INTERVAL if bootstrap else interval
    summaries = cast(tuple[Summary, Summary],
                     tuple(summarise(frame, confidence=confidence, rho=rho, interval=limits) for frame in (a, b)))
    cases = _case_of_scenario((a, b))

    per_metric = []
    for metric, figure in _FIELDS.items():
        clusters_a, clusters_b = (_cluster_totals(getattr(s, figure)) for s in summaries)
        joined = clusters_a.merge(clusters_b, how="outer", left_index=True, right_index=True,
                                  suffixes=("_a", "_b")).fillna(0.0)
        unit = cases.reindex(joined.index).to_numpy(object) if metric != "pi" else joined.index.to_numpy(object)
        per_metric.append(joined.groupby(unit)[["y_a", "n_a", "y_b", "n_b"]].sum())
    units = sorted(set().union(*(t.index for t in per_metric)), key=str)
    totals = np.stack([t.reindex(units, fill_value=0.0).to_numpy(float).T for t in per_metric])
    results: list = (list(paired_cluster_bootstrap(*totals.transpose(1, 0, 2), n_resamples=n_boot, rng=rng))
                     if units else [None] * len(per_metric))
    pairs, approval_totals = _approval_pairs(a, b, cases)
    per_metric.append(approval_totals)
    results.append(paired_cluster_bootstrap(*approval_totals.to_numpy(float).T, n_resamples=n_boot, rng=rng)[0]
                   if len(approval_totals) else None)
    undefined = [n_boot if r is None else n_boot - int(r.counts.sum()) for r in results]
    boots = [r if missing < n_boot else None for r, missing in zip(results, undefined)]
    boot = [ConfidenceInterval(np.nan, np.nan) if r is None
            else ConfidenceInterval(*(float(x) for x in r.confidence_interval(method, confidence))) for r in boots]

    rates = [tuple(getattr(s, figure) for s in summaries) for figure in _FIELDS.values()]
    rates.append(tuple(clustered_rate(pairs[f"y_{side}"], pairs[f"scenario_{side}"], confidence=confidence, rho=rho,
                                      interval=limits) for side in "ab"))
    differences = []
    for i, (metric, t, (rate_a, rate_b)) in enumerate(zip(FIGURES, per_metric, rates)):
        psi = paired_correlation(t["y_a"], t["n_a"], t["y_b"], t["n_b"])
        differences.append(MetricDifference(
            metric=metric, a=rate_a.rate, b=rate_b.rate, difference=rate_b.rate - rate_a.rate,
            n_a=rate_a.n, n_b=rate_b.n, clusters=len(t), psi=psi,
            newcombe_ci=newcombe_paired_interval(rate_a.rate, rate_a.ci(), rate_b.rate, rate_b.ci(), psi),
            bootstrap_ci=boot[i], bootstrap_undefined=int(undefined[i]), interval=interval,
            note=_approval_note((a, b), summaries, len(pairs)) if metric == "p_a" else None))
    paired = PairedDifferences(differences=tuple(differences), summaries=summaries, rates=tuple(rates), cases=cases,
                               units=len(units), bootstraps=tuple(boots))
    # a bootstrap interval's resamples resolve no p-value below 1 / n_boot (Davison & Hinkley 1997, chapter 4)
    floor = max(P_FLOOR, 1.0 / n_boot) if bootstrap else P_FLOOR
    tested = tuple(replace(d, p_value=inverted_p_value(lambda level, k=k: paired.interval_at(k, level), confidence,
                                                       floor) if d.defined else math.nan)
                   for k, d in enumerate(differences))
    return replace(paired, differences=tested)
