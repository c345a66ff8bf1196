"""Compare two assistants scored on the same scenarios: differences of ``p_u``, ``p_o`` and ``pi``.

Both assistants ran the same scenarios, so their rates are paired by scenario, and the
replicas of a scenario are clustered. Two intervals respect both:

- **Newcombe's square-and-add interval for paired proportions** (:mod:`estimators._difference`)
  with each rate's Wilson-Kish limits (SPEC section 5) and the correlation of the two rate
  estimates from cluster totals;
- a **paired cluster bootstrap** (:func:`estimators._bootstrap.paired_cluster_bootstrap`):
  cases are resampled with replacement, jointly for A and B, so each resample keeps the
  pairing and the clusters.

The cluster totals are those the two summaries keep (:mod:`estimators._summary`). Differences
are B minus A. :func:`paired_differences` is the computation on two scored tables, shared by
:func:`compare_scored` (two folders) and :func:`estimators._leaderboard.leaderboard` (every
two of several assistants).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import orjson
import pandas as pd

from ._aggregate import summarise
from ._bootstrap import paired_cluster_bootstrap
from ._clustered import DEFAULT_INTERVAL, INTERVAL_METHODS
from ._difference import newcombe_paired_interval, paired_correlation
from ._errors import InputError
from ._intervals import ConfidenceInterval
from ._scored import read_scored
from ._summary import Summary
from ._vocabulary import ACT, ESC, LABELS

__all__ = ["MetricDifference", "Comparison", "PairedDifferences", "compare_scored", "paired_differences",
           "difference_warnings", "match_scenarios"]

_FIGURES = (("p_u", "under"), ("p_o", "over"), ("pi", "paired"))  # each metric and its Summary field
#: Cases below which Newcombe's interval with Wilson-Kish limits, and the paired bootstrap, fell
#: below 0.93 in ``escalation study differences`` (issue 14); the comparison then says so.
FEW_CASES_NEWCOMBE = 30
FEW_CASES_BOOTSTRAP = 100


@dataclass(frozen=True)
class MetricDifference:
    """One figure of both assistants and its difference ``b - a`` with two intervals."""

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

    @property
    def ci(self) -> ConfidenceInterval:
        """The interval chosen by ``interval``: the bootstrap's for a bootstrap method, else Newcombe's."""
        return self.bootstrap_ci if self.interval.startswith("bootstrap") else self.newcombe_ci

    def to_dict(self) -> dict:
        def null(x):
            return None if x is None or not math.isfinite(float(x)) else float(x)
        return {"metric": self.metric, "a": null(self.a), "b": null(self.b),
                "difference": null(self.difference), "n_a": self.n_a, "n_b": self.n_b,
                "clusters": self.clusters, "psi": null(self.psi), "ci": [null(v) for v in self.ci],
                "newcombe_ci": [null(v) for v in self.newcombe_ci],
                "bootstrap_ci": [null(v) for v in self.bootstrap_ci],
                "bootstrap_undefined": self.bootstrap_undefined}


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_scored`: the three differences and the disagreeing scenarios."""

    confidence: float
    n_boot: int
    interval: str
    seed: int | None
    differences: tuple[MetricDifference, ...]
    disagreements: pd.DataFrame = field(repr=False)
    scenarios: int
    cases: int

    @property
    def warnings(self) -> list[str]:
        """Where the reported intervals are known not to hold their level (:func:`difference_warnings`)."""
        return difference_warnings(self.interval, self.cases)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric, intervals in ``*_low`` / ``*_high`` columns."""
        rows = []
        for diff in self.differences:
            d = diff.to_dict()
            for name in ("ci", "newcombe_ci", "bootstrap_ci"):
                low, high = d.pop(name)
                stem = name.removesuffix("ci").rstrip("_")
                d[f"{stem}_low" if stem else "low"], d[f"{stem}_high" if stem else "high"] = low, high
            rows.append(d)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        return {"confidence": self.confidence, "interval": self.interval, "n_boot": self.n_boot, "seed": self.seed,
                "scenarios": self.scenarios, "cases": self.cases, "warnings": self.warnings,
                "differences": {d.metric: d.to_dict() for d in self.differences},
                "disagreements": orjson.loads(self.disagreements.to_json(orient="records"))}


def difference_warnings(interval: str, cases: int) -> list[str]:
    """Where the difference intervals are known not to hold their level (``escalation study differences``).

    Parameters
    ----------
    interval : str
        The chosen method (:data:`estimators.INTERVAL_METHODS`).
    cases : int
        The cases the paired bootstrap resamples.
    """
    notes = []
    limits = DEFAULT_INTERVAL if interval.startswith("bootstrap") else interval
    if cases < FEW_CASES_NEWCOMBE and limits != "wilson-kish-t":
        notes.append(f"Newcombe's interval with {limits} limits rests on {cases} cases: with fewer than "
                     f"{FEW_CASES_NEWCOMBE} scenarios of correlated replicas the study measured its coverage "
                     "down to 0.88; with --interval wilson-kish-t it held 0.93 in every cell")
    if cases < FEW_CASES_BOOTSTRAP:
        notes.append(f"the paired bootstrap rests on {cases} cases: below {FEW_CASES_BOOTSTRAP} scenarios "
                     "the study measured its coverage down to 0.38 (percentile) and 0.37 (BCa), too narrow; "
                     "do not read it as a 95% interval")
    return notes


def match_scenarios(a: pd.DataFrame, b: pd.DataFrame, names) -> None:
    """InputError unless A and B cover the same scenarios with the same labels."""
    only_a = sorted(set(a["scenario_id"]) - set(b["scenario_id"]))
    only_b = sorted(set(b["scenario_id"]) - set(a["scenario_id"]))
    if only_a or only_b:
        def some(ids):
            return ", ".join(repr(x) for x in ids[:3]) + (", ..." if len(ids) > 3 else "")
        parts = [f"{len(ids)} only in {name} ({some(ids)})" for ids, name in ((only_a, names[0]),
                                                                              (only_b, names[1])) if ids]
        raise InputError(f"the two folders are not scored on the same scenarios: {'; '.join(parts)}",
                         source=f"{names[0]} vs {names[1]}")
    labels = pd.concat([frame.loc[frame["label"].isin(LABELS), ["scenario_id", "label"]]
                        for frame in (a, b)]).drop_duplicates()
    clash = labels["scenario_id"].duplicated(keep=False)
    if clash.any():
        raise InputError(f"scenario {labels.loc[clash, 'scenario_id'].iloc[0]!r} has the label ESC "
                         f"in one folder and ACT in the other", source=f"{names[0]} vs {names[1]}")


def _case_of_scenario(frames) -> pd.Series:
    """The bootstrap's resampling unit of each scenario: its case, else the scenario itself."""
    both = pd.concat([f[["scenario_id", "case_id"]] for f in frames]).drop_duplicates("scenario_id")
    unit = both["case_id"].where(both["case_id"].notna(), "scenario:" + both["scenario_id"].astype(str))
    return pd.Series(unit.to_numpy(object), index=both["scenario_id"].to_numpy(object))


def _cluster_totals(rate) -> pd.DataFrame:
    """Ones ``y`` and size ``n`` of each cluster a summary kept, by cluster id in sorted order."""
    return (pd.DataFrame({"y": np.asarray(rate.cluster_totals, dtype=float), "n": rate.cluster_sizes},
                         index=pd.Index(rate.cluster_ids, dtype=object)).sort_index())


def _disagreements(summaries, cases: pd.Series) -> pd.DataFrame:
    """Scenarios whose error rates differ between A and B, largest difference first."""
    tables = []
    for label, half in ((ESC, "under"), (ACT, "over")):
        a, b = (_cluster_totals(getattr(s, half)) for s in summaries)
        merged = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
        merged = merged.rename_axis("scenario_id").reset_index().assign(label=label)
        tables.append(merged)
    both = pd.concat(tables, ignore_index=True)
    both["rate_a"], both["rate_b"] = both["y_a"] / both["n_a"], both["y_b"] / both["n_b"]
    both["difference"] = both["rate_b"] - both["rate_a"]
    both = both[both["difference"] != 0].copy()
    both.insert(1, "case_id", [c if not str(c).startswith("scenario:") else None
                               for c in cases.reindex(both["scenario_id"]).to_numpy(object)])
    both = both.rename(columns={"y_a": "errors_a", "y_b": "errors_b"})
    both[["errors_a", "errors_b"]] = both[["errors_a", "errors_b"]].astype(np.int64)
    both = (both.assign(size=both["difference"].abs())
            .sort_values(["size", "label", "scenario_id"], ascending=[False, False, True]))
    return both[["scenario_id", "case_id", "label", "errors_a", "n_a", "rate_a", "errors_b", "n_b",
                 "rate_b", "difference"]].reset_index(drop=True)


def check_difference_options(confidence: float, n_boot: int, interval: str) -> None:
    """InputError unless the level, the number of resamples and the interval method are valid."""
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}",
                         field="confidence")
    if n_boot < 1:
        raise InputError(f"n_boot must be at least 1, got {n_boot!r}", field="n_boot")
    if interval not in INTERVAL_METHODS:
        raise InputError(f"must be one of {', '.join(INTERVAL_METHODS)}, got {interval!r}", field="interval")


def compare_scored(a_dir, b_dir, *, confidence: float = 0.95, n_boot: int = 2000,
                   interval: str = DEFAULT_INTERVAL, rho: float | None = None,
                   rng: np.random.Generator | None = None, seed: int | None = None) -> Comparison:
    """Compare two ``escalation score`` outputs on the same scenarios (B minus A).

    Parameters
    ----------
    a_dir, b_dir : path
        Folders with ``conversations.jsonl`` and ``summary.json``.
    confidence : float
        Two-sided level of both intervals.
    n_boot : int
        Paired cluster bootstrap resamples.
    interval : str
        One of :data:`estimators.INTERVAL_METHODS`. A Wilson-type method gives the limits of
        each rate that Newcombe's interval combines (``MetricDifference.ci`` is then Newcombe's);
        ``bootstrap-percentile`` or ``bootstrap-bca`` makes the paired bootstrap's interval of
        that kind the chosen one (Newcombe's then uses Wilson-Kish limits). Both are reported.
    rho : float, optional
        Fix the intra-scenario correlation of the Wilson-Kish limits (else estimated, SPEC 5).
    rng : numpy.random.Generator, optional
        Bootstrap randomness; ``numpy.random.default_rng(seed)`` if not given.
    seed : int, optional
        Recorded in the result, and used when ``rng`` is not given.

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        Missing folder or file, a bad line, results of different modes, or scenarios that
        do not match.
    """
    check_difference_options(confidence, n_boot, interval)
    names = (str(a_dir), str(b_dir))
    (a, summary_a), (b, summary_b) = read_scored(a_dir), read_scored(b_dir)
    mode_a, mode_b = summary_a.get("mode", "record"), summary_b.get("mode", "record")
    if mode_a != mode_b:
        raise InputError(f"{names[0]} was scored in mode {mode_a!r} and {names[1]} in mode "
                         f"{mode_b!r}; results of the two modes are never compared",
                         source=f"{names[0]} vs {names[1]}")
    match_scenarios(a, b, names)
    rng = np.random.default_rng(seed) if rng is None else rng
    paired = paired_differences(a, b, confidence=confidence, n_boot=n_boot, interval=interval, rho=rho, rng=rng)
    return Comparison(confidence=confidence, n_boot=n_boot, interval=interval, seed=seed,
                      differences=paired.differences,
                      disagreements=_disagreements(paired.summaries, paired.cases),
                      scenarios=int(a["scenario_id"].nunique()), cases=paired.units)


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
        The :class:`~estimators._bootstrap.ClusterBootstrapResult` of each figure (None when
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
    """
    bootstrap = interval.startswith("bootstrap")
    method = interval.removeprefix("bootstrap-") if bootstrap else "percentile"
    limits = DEFAULT_INTERVAL if bootstrap else interval
    summaries = tuple(summarise(frame, confidence=confidence, rho=rho, interval=limits) for frame in (a, b))
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
    return PairedDifferences(differences=tuple(differences), summaries=summaries, cases=cases, units=len(units),
                             bootstraps=tuple(boots))
