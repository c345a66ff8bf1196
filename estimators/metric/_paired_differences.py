"""The paired differences of two assistants scored on the same scenarios: ``p_u``, ``p_o`` and ``pi``, B minus A.

:func:`paired_differences` is the computation on two scored tables (of the scenarios that
:func:`match_scenarios` found shared), with Newcombe's interval and the paired cluster bootstrap for each figure
and the p-value that inverts the chosen one (:func:`inverted_p_value`).
:func:`estimators.metric._compare.compare_scored` (two folders) and :func:`estimators.metric._leaderboard.leaderboard`
(every two of several assistants) use it; the notes on both intervals are in :mod:`estimators.metric._compare`.
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
    DEFAULT_INTERVAL,
    INTERVAL_METHODS,
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
from ._difference_coverage import CoverageWord, _study_method, coverage_word
from ._summary import Summary

__all__ = ["MetricDifference", "PairedDifferences", "paired_differences", "match_scenarios",
           "check_difference_options", "inverted_p_value", "P_FLOOR", "ScenarioMismatchError", "pairing_keys",
           "set_aside_run_errors", "SHOWN_RUN_ERRORS"]

#: ``run_error`` conversations named, per run, where they are set aside.
SHOWN_RUN_ERRORS = 10

_FIGURES = (("p_u", "under"), ("p_o", "over"), ("pi", "paired"))  # each metric and its Summary field


@dataclass(frozen=True)
class MetricDifference:
    """One figure of both assistants and its difference ``b - a`` with two intervals.

    ``clusters`` is the number of cases the figure rests on; ``p_value`` inverts the chosen
    interval (:func:`inverted_p_value`), NaN where the difference is undefined; ``coverage`` is
    the coverage study's word on each interval at ``clusters`` cases (:func:`coverage_word`).
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
                "coverage": {which: word.to_dict() for which, word in self.coverage.items()}}


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
    check_choice("interval", interval, INTERVAL_METHODS)
    if rho is not None:
        check_probability("rho", rho)


@dataclass(frozen=True)
class PairedDifferences:
    """What :func:`paired_differences` finds: the three differences and what their intervals rest on.

    Attributes
    ----------
    differences : tuple of MetricDifference
        ``p_u``, ``p_o`` and ``pi``, B minus A.
    summaries : tuple of Summary
        A's and B's summaries with the limits that Newcombe's interval combines.
    cases : pandas.Series
        The bootstrap's resampling unit (case) of each scenario, by scenario id.
    units : int
        The cases the paired bootstrap resampled.
    bootstraps : tuple
        The :class:`~estimators.stats._bootstrap.ClusterBootstrapResult` of each figure (None when
        there is no case, or no resample has the figure on both sides).
    """

    differences: tuple[MetricDifference, ...]
    summaries: tuple[Summary, Summary]
    cases: pd.Series = field(repr=False)
    units: int
    bootstraps: tuple = field(repr=False)

    def interval_at(self, index: int, confidence: float) -> ConfidenceInterval:
        """The chosen interval of figure ``index`` (0 ``p_u``, 1 ``p_o``, 2 ``pi``) at another level.

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
        figure = _FIGURES[index][1]
        rate_a, rate_b = (getattr(s, figure) for s in self.summaries)
        return newcombe_paired_interval(diff.a, rate_a.ci(confidence), diff.b, rate_b.ci(confidence), diff.psi)


def paired_differences(a: pd.DataFrame, b: pd.DataFrame, *, confidence: float, n_boot: int, interval: str,
                       rho: float | None, rng: np.random.Generator) -> PairedDifferences:
    """The differences of ``p_u``, ``p_o`` and ``pi`` of two scored tables on the same scenarios (B minus A).

    Parameters
    ----------
    a, b : DataFrame
        Scored conversations (the columns of :func:`estimators.read_scored`) of the same
        scenarios (:func:`match_scenarios`).
    confidence, n_boot, interval, rho
        As :func:`compare_scored` (checked there: :func:`check_difference_options`).
    rng : numpy.random.Generator
        The paired bootstrap's randomness.

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
    for metric, figure in _FIGURES:
        clusters_a, clusters_b = (_cluster_totals(getattr(s, figure)) for s in summaries)
        joined = clusters_a.merge(clusters_b, how="outer", left_index=True, right_index=True,
                                  suffixes=("_a", "_b")).fillna(0.0)
        unit = cases.reindex(joined.index).to_numpy(object) if metric != "pi" else joined.index.to_numpy(object)
        per_metric.append(joined.groupby(unit)[["y_a", "n_a", "y_b", "n_b"]].sum())
    units = sorted(set().union(*(t.index for t in per_metric)), key=str)
    totals = np.stack([t.reindex(units, fill_value=0.0).to_numpy(float).T for t in per_metric])
    if units:
        results = paired_cluster_bootstrap(*totals.transpose(1, 0, 2), n_resamples=n_boot, rng=rng)
        undefined = [n_boot - int(r.counts.sum()) for r in results]
        boots = [r if missing < n_boot else None for r, missing in zip(results, undefined)]
    else:
        boots, undefined = [None] * 3, [n_boot] * 3
    boot = [ConfidenceInterval(np.nan, np.nan) if r is None
            else ConfidenceInterval(*(float(x) for x in r.confidence_interval(method, confidence))) for r in boots]

    differences = []
    for i, ((metric, figure), t) in enumerate(zip(_FIGURES, per_metric)):
        rate_a, rate_b = (getattr(s, figure) for s in summaries)
        if metric == "pi":
            values = (rate_a.pi, rate_b.pi, rate_a.pairs, rate_b.pairs)
        else:
            values = (rate_a.rate, rate_b.rate, rate_a.n, rate_b.n)
        psi = paired_correlation(t["y_a"], t["n_a"], t["y_b"], t["n_b"])
        differences.append(MetricDifference(
            metric=metric, a=values[0], b=values[1], difference=values[1] - values[0],
            n_a=int(values[2]), n_b=int(values[3]), clusters=len(t), psi=psi,
            newcombe_ci=newcombe_paired_interval(values[0], rate_a.ci(), values[1], rate_b.ci(), psi),
            bootstrap_ci=boot[i], bootstrap_undefined=int(undefined[i]), interval=interval))
    paired = PairedDifferences(differences=tuple(differences), summaries=summaries, cases=cases, units=len(units),
                               bootstraps=tuple(boots))
    # a bootstrap interval's resamples resolve no p-value below 1 / n_boot (Davison & Hinkley 1997, chapter 4)
    floor = max(P_FLOOR, 1.0 / n_boot) if bootstrap else P_FLOOR
    tested = tuple(replace(d, p_value=inverted_p_value(lambda level, k=k: paired.interval_at(k, level), confidence,
                                                       floor) if d.defined else math.nan)
                   for k, d in enumerate(differences))
    return replace(paired, differences=tested)
