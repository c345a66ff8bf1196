"""Compare two assistants scored on the same scenarios: differences of ``p_u``, ``p_o`` and ``pi``.

Both assistants ran the same scenarios, so their rates are paired by scenario, and the
replicas of a scenario are clustered. Two intervals respect both:

- **Newcombe's square-and-add interval for paired proportions** (:mod:`estimators.stats._difference`)
  with each rate's Wilson-Kish limits (SPEC section 5) and the correlation of the two rate
  estimates from cluster totals;
- a **paired cluster bootstrap** (:func:`estimators.stats._bootstrap.paired_cluster_bootstrap`):
  cases are resampled with replacement, jointly for A and B, so each resample keeps the
  pairing and the clusters.

The cluster totals are those the two summaries keep (:mod:`estimators.metric._summary`). Differences
are B minus A. :func:`paired_differences` is the computation on two scored tables, shared by
:func:`compare_scored` (two folders) and :func:`estimators.metric._leaderboard.leaderboard` (every
two of several assistants).

**p-values.** Each difference has the two-sided p-value of "no difference" that inverts its
chosen interval (:func:`inverted_p_value`): the smallest ``alpha`` whose ``1 - alpha``
interval leaves out 0, so ``p <= 1 - confidence`` exactly when the reported interval leaves
out 0. The leaderboard's pairwise tests use the same p-values.

**What the coverage study says.** :data:`DIFFERENCE_COVERAGE_STUDY` holds what ``escalation
study differences`` measured for each interval and number of scenarios; :func:`coverage_word`
turns it into one word beside each interval (``holds``, ``near``, ``too narrow``, ``often
undefined``, ``not studied``), and :func:`difference_warnings` and :func:`interval_advice`
are written from the same words, so the table, the warnings and the advice never disagree.
They live in :mod:`estimators.metric._difference_coverage` (plain Python, which ``escalation compare
--help`` reads) and are exported from here too.
"""
from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from ._aggregate import summarise
from ..stats import DegenerateIntervalWarning, paired_cluster_bootstrap
from ..stats import DEFAULT_INTERVAL, INTERVAL_METHODS
from ..stats import newcombe_paired_interval, paired_correlation
from ._difference_coverage import (DIFFERENCE_COVERAGE_SOURCE, DIFFERENCE_COVERAGE_STUDY, FEW_CASES_BOOTSTRAP,
    FEW_CASES_NEWCOMBE, HOLDS_AT, NEAR_MCSE, CoverageWord, _study_method, coverage_word, difference_warnings,
    interval_advice)
from ..records import InputError
from ..stats import ConfidenceInterval
from ..records import read_scored
from ._summary import Summary
from ..records import ACT, ESC, LABELS

__all__ = ["MetricDifference", "Comparison", "PairedDifferences", "compare_scored", "paired_differences",
           "difference_warnings", "match_scenarios", "check_difference_options", "check_scored_alike",
           "inverted_p_value", "P_FLOOR", "ScenarioMismatchError", "CoverageWord", "coverage_word",
           "interval_advice", "default_names", "DIFFERENCE_COVERAGE_STUDY", "DIFFERENCE_COVERAGE_SOURCE",
           "HOLDS_AT", "NEAR_MCSE", "FEW_CASES_NEWCOMBE", "FEW_CASES_BOOTSTRAP"]

_FIGURES = (("p_u", "under"), ("p_o", "over"), ("pi", "paired"))  # each metric and its Summary field


# ------------------------------------------------------------------ the results


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


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_scored`: the three differences and the disagreeing scenarios.

    Attributes
    ----------
    names : (str, str)
        A's and B's names (:func:`default_names` unless given).
    common : bool
        Whether the comparison is restricted to the scenarios both folders have.
    only_in : dict
        The scenario ids left out, only in A or only in B, by name (empty lists when both
        cover the same scenarios).
    notes : tuple of str
        What could not be checked (a summary without provenance).
    provenance : dict
        The two folders (path, SHA-256 of summary.json and conversations.jsonl), the options,
        the version and the time.
    """

    confidence: float
    n_boot: int
    interval: str
    seed: int | None
    differences: tuple[MetricDifference, ...]
    disagreements: pd.DataFrame = field(repr=False)
    scenarios: int
    cases: int
    names: tuple[str, str] = ("A", "B")
    common: bool = False
    only_in: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    provenance: dict = field(default_factory=dict, repr=False)

    @property
    def fewest_cases(self) -> int:
        """The fewest cases a defined difference rests on (else the cases the bootstrap resampled)."""
        defined = [d.clusters for d in self.differences if math.isfinite(float(d.difference))]
        return min(defined) if defined else self.cases

    @property
    def warnings(self) -> list[str]:
        """What could not be checked, then where the reported intervals are known not to hold their
        level (:func:`difference_warnings` at :attr:`fewest_cases`)."""
        return [*self.notes, *difference_warnings(self.interval, self.fewest_cases)]

    @property
    def advice(self) -> str:
        """Which interval to trust here (:func:`interval_advice` at :attr:`fewest_cases`)."""
        return interval_advice(self.interval, self.fewest_cases)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: the names, intervals in ``*_low`` / ``*_high`` columns, the p-value, and
        the study's words in ``newcombe_coverage`` / ``bootstrap_coverage`` (``*_lowest``, ``*_studied_at``)."""
        rows = []
        for diff in self.differences:
            d = diff.to_dict()
            for name in ("ci", "newcombe_ci", "bootstrap_ci"):
                low, high = d.pop(name)
                stem = name.removesuffix("ci").rstrip("_")
                d[f"{stem}_low" if stem else "low"], d[f"{stem}_high" if stem else "high"] = low, high
            for which, word in d.pop("coverage").items():
                d.update({f"{which}_coverage": word["word"], f"{which}_coverage_lowest": word["lowest"],
                          f"{which}_coverage_studied_at": word["studied_at"]})
            rows.append({"a_name": self.names[0], "b_name": self.names[1], **d})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        return {"names": {"a": self.names[0], "b": self.names[1]}, "confidence": self.confidence,
                "interval": self.interval, "n_boot": self.n_boot, "seed": self.seed,
                "scenarios": self.scenarios, "cases": self.cases, "common": self.common,
                "only_in": {name: list(ids) for name, ids in self.only_in.items()},
                "warnings": self.warnings, "advice": self.advice, "coverage_source": DIFFERENCE_COVERAGE_SOURCE,
                "differences": {d.metric: d.to_dict() for d in self.differences},
                "disagreements": orjson.loads(self.disagreements.to_json(orient="records")),
                "provenance": self.provenance}


# ------------------------------------------------------------------ p-values by test inversion

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


# ------------------------------------------------------------------ which scenarios, scored alike

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


_ROLES = (("escalation_tools", "an escalation tool"), ("read_only_tools", "a read-only tool"),
          ("action_tools", "an action tool"), ("approval_tools", "an approval tool"), ("gated_tools", "a gated tool"))


def _policy_differences(first: dict, second: dict, names) -> list[str]:
    """``transfer_to_human is an escalation tool in A and absent in B``, for each tool whose roles differ."""
    def roles(contents, tool):
        return " and ".join(phrase for key, phrase in _ROLES if tool in (contents.get(key) or ())) or "absent"
    tools = sorted({t for contents in (first, second) for key, _ in _ROLES for t in (contents.get(key) or ())})
    return [f"{tool} is {roles(first, tool)} in {names[0]} and {roles(second, tool)} in {names[1]}"
            for tool in tools if roles(first, tool) != roles(second, tool)]


def check_scored_alike(summary_a: dict, summary_b: dict, names, *, source: str | None = None) -> list[str]:
    """InputError unless two ``summary.json`` were scored alike; the notes on what could not be checked.

    Refused: different modes (``mode``), different confidence levels (``confidence``), different
    policies (``provenance.policy.sha256``, the fingerprint of the five tool lists; the message
    names the tools whose roles differ) and a different ``approval_escalation`` reading rule
    (``provenance.options``). A summary without ``provenance`` (written before escalation
    recorded it) gives a note that its policy could not be checked.

    Parameters
    ----------
    summary_a, summary_b : dict
        The two ``summary.json``.
    names : (str, str)
        A's and B's names, in the messages.
    source : str, optional
        Where the error is (default ``"A vs B"`` of the names).

    Returns
    -------
    list of str
        The notes (empty when everything was checked).
    """
    source = source or f"{names[0]} vs {names[1]}"
    mode_a, mode_b = summary_a.get("mode", "record"), summary_b.get("mode", "record")
    if mode_a != mode_b:
        raise InputError(f"{names[0]} was scored in mode {mode_a!r} and {names[1]} in mode "
                         f"{mode_b!r}; results of the two modes are never compared", source=source)
    level_a, level_b = summary_a.get("confidence"), summary_b.get("confidence")
    if level_a is not None and level_b is not None and float(level_a) != float(level_b):
        raise InputError(f"{names[0]} was scored at confidence {float(level_a):g} and {names[1]} at "
                         f"{float(level_b):g}; score both at the same level", source=source)
    provenance = [s.get("provenance") if isinstance(s.get("provenance"), dict) else None
                  for s in (summary_a, summary_b)]
    missing = [name for name, p in zip(names, provenance) if p is None]
    if missing:
        whose = " and ".join(missing)
        return [f"{whose} {'has' if len(missing) == 1 else 'have'} no provenance in summary.json (scored by an "
                "older escalation): compare cannot check that both were scored with the same policy"]
    policies = [p.get("policy") if isinstance(p.get("policy"), dict) else {} for p in provenance]
    if policies[0].get("sha256") != policies[1].get("sha256"):
        contents = [p.get("contents") for p in policies]
        tools = _policy_differences(*contents, names) if all(isinstance(c, dict) for c in contents) else []
        if tools:
            what = ": " + "; ".join(tools[:3]) + (f"; and {len(tools) - 3} more tools" if len(tools) > 3 else "")
        else:
            what = (f" (policy sha256 {str(policies[0].get('sha256'))[:12]}... and "
                    f"{str(policies[1].get('sha256'))[:12]}...)")
        raise InputError(f"{names[0]} and {names[1]} were scored with different policies{what}; score both with "
                         "the same policy", source=source)
    rules = [(p.get("options") or {}).get("approval_escalation") for p in provenance]
    if None not in rules and bool(rules[0]) != bool(rules[1]):
        raise InputError(f"{names[0]} was scored with approval_escalation {bool(rules[0])} and {names[1]} with "
                         f"{bool(rules[1])} (an approval event counted as an escalation, or not); score both "
                         "alike", source=source)
    return []


def default_names(a_dir, b_dir) -> tuple[str, str]:
    """Names of two folders for a table: their base names, with as many parent folders as tell them apart.

    ``runs/careful`` and ``runs/silent`` are ``careful`` and ``silent``; ``x/run`` and ``y/run``
    are ``x/run`` and ``y/run``; one folder given twice is ``NAME (A)`` and ``NAME (B)``.
    """
    paths = [Path(p).resolve() for p in (a_dir, b_dir)]
    if paths[0] == paths[1]:
        name = paths[0].name or str(paths[0])
        return f"{name} (A)", f"{name} (B)"
    parts = [p.parts[1:] if p.anchor else p.parts for p in paths]
    for k in range(1, max(len(x) for x in parts) + 1):
        names = tuple("/".join(x[-k:]) for x in parts)
        if names[0] != names[1]:
            return names
    return str(paths[0]), str(paths[1])


def _check_names(names) -> tuple[str, str]:
    names = (names,) if isinstance(names, str) else tuple(names)
    if len(names) != 2:
        raise InputError(f"must be two names, one for A and one for B, got {len(names)}", field="names")
    names = tuple(str(n).strip() for n in names)
    if not all(names):
        raise InputError(f"must be two non-empty names, got {names!r}", field="names")
    if names[0] == names[1]:
        raise InputError(f"must be two different names, got {names[0]!r} twice", field="names")
    return names


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


def check_difference_options(confidence: float, n_boot: int, interval: str, rho: float | None = None) -> None:
    """InputError unless the level, the number of resamples, the interval method and a fixed rho are valid.

    Each error names its parameter in ``field`` (``confidence``, ``n_boot``, ``interval``, ``rho``) and
    says what is wrong as a predicate (``must be at least 1, got 0``), so that a command line
    can put its own option in front: ``--n-boot must be at least 1, got 0``.
    """
    if not 0.0 < confidence < 1.0:
        raise InputError(f"must lie strictly between 0 and 1, got {confidence!r}", field="confidence")
    if n_boot < 1:
        raise InputError(f"must be at least 1, got {n_boot!r}", field="n_boot")
    if n_boot > MAX_RESAMPLES:
        raise InputError(f"must be at most {MAX_RESAMPLES:,}, got {n_boot!r}", field="n_boot")
    if interval not in INTERVAL_METHODS:
        raise InputError(f"must be one of {', '.join(INTERVAL_METHODS)}, got {interval!r}", field="interval")
    if rho is not None and not 0.0 <= rho <= 1.0:
        raise InputError(f"must lie in [0, 1], got {rho!r}", field="rho")


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _provenance(folders, names, options: dict) -> dict:
    """compare.json ``provenance``: the two folders with the SHA-256 of their files, the options, version, time."""
    from escalation import __version__

    return {"escalation": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "folders": [{"name": name, "path": str(folder),
                         "sha256": {file: _sha256(Path(folder) / file)
                                    for file in ("summary.json", "conversations.jsonl")}}
                        for name, folder in zip(names, folders)],
            "options": options}


def compare_scored(a_dir, b_dir, *, confidence: float = 0.95, n_boot: int = 2000,
                   interval: str = DEFAULT_INTERVAL, rho: float | None = None,
                   rng: np.random.Generator | None = None, seed: int | None = None,
                   names=None, common: bool = False) -> Comparison:
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
    names : (str, str), optional
        A's and B's names in the result and its messages; default :func:`default_names`.
    common : bool
        Compare on the scenarios both folders have, and list the others
        (:attr:`Comparison.only_in`), instead of refusing folders of different scenarios.

    Returns
    -------
    Comparison

    Raises
    ------
    ScenarioMismatchError
        Scenarios that do not match (without ``common``), or no scenario in common.
    InputError
        Missing folder or file, a bad line, a bad option, results scored differently
        (:func:`check_scored_alike`: mode, confidence, policy), or a scenario whose label
        differs between the folders.
    """
    check_difference_options(confidence, n_boot, interval, rho)
    names = default_names(a_dir, b_dir) if names is None else _check_names(names)
    source = f"{a_dir} vs {b_dir}"
    (a, summary_a), (b, summary_b) = read_scored(a_dir), read_scored(b_dir)
    notes = check_scored_alike(summary_a, summary_b, names, source=source)
    try:
        only_in = match_scenarios(a, b, names, common=common, source=source)
    except ScenarioMismatchError as err:
        if common or not err.shared:
            raise
        raise ScenarioMismatchError(f"{err.base}; common=True compares them on the {err.shared} scenarios both "
                                    "have", only_in=err.only_in, shared=err.shared, base=err.base,
                                    source=err.source) from None
    if common:
        shared = set(a["scenario_id"]) & set(b["scenario_id"])
        a = a.loc[a["scenario_id"].isin(shared).to_numpy(bool)].reset_index(drop=True)
        b = b.loc[b["scenario_id"].isin(shared).to_numpy(bool)].reset_index(drop=True)
    rng = np.random.default_rng(seed) if rng is None else rng
    paired = paired_differences(a, b, confidence=confidence, n_boot=n_boot, interval=interval, rho=rho, rng=rng)
    options = {"confidence": confidence, "n_boot": n_boot, "interval": interval, "rho": rho, "seed": seed,
               "common": common, "names": list(names)}
    return Comparison(confidence=confidence, n_boot=n_boot, interval=interval, seed=seed,
                      differences=paired.differences,
                      disagreements=_disagreements(paired.summaries, paired.cases),
                      scenarios=int(a["scenario_id"].nunique()), cases=paired.units, names=names,
                      common=common, only_in=only_in, notes=tuple(notes),
                      provenance=_provenance((a_dir, b_dir), names, options))


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
    paired = PairedDifferences(differences=tuple(differences), summaries=summaries, cases=cases, units=len(units),
                               bootstraps=tuple(boots))
    # a bootstrap interval's resamples resolve no p-value below 1 / n_boot (Davison & Hinkley 1997, chapter 4)
    floor = max(P_FLOOR, 1.0 / n_boot) if bootstrap else P_FLOOR
    tested = tuple(replace(d, p_value=inverted_p_value(lambda level, k=k: paired.interval_at(k, level), confidence,
                                                       floor) if d.defined else math.nan)
                   for k, d in enumerate(differences))
    return replace(paired, differences=tested)
