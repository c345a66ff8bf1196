"""Compare two assistants scored on the same scenarios: differences of ``p_u``, ``p_o``, ``pi`` and ``p_a``.

Both assistants ran the same scenarios, so their rates are paired by scenario, and the
replicas of a scenario are clustered. ``p_a`` (SPEC section 3A) is paired by conversation (case, label,
replica) on the conversations where both made a gated call, and clustered as ``p_u`` and ``p_o`` are; a folder
scored before escalation recorded approval evidence has no ``p_a``, and its difference says so
(:func:`estimators.metric._paired_differences.paired_differences`). Two intervals respect both:

- **Newcombe's square-and-add interval for paired proportions** (:mod:`estimators.stats._difference`)
  with each rate's Wilson-Kish limits (SPEC section 5) and the correlation of the two rate
  estimates from cluster totals;
- a **paired cluster bootstrap** (:func:`estimators.stats._bootstrap.paired_cluster_bootstrap`):
  cases are resampled with replacement, jointly for A and B, so each resample keeps the
  pairing and the clusters.

The cluster totals are those the two summaries keep (:mod:`estimators.metric._summary`). Differences
are B minus A. :func:`paired_differences` (:mod:`estimators.metric._paired_differences`) is the computation on
two scored tables, shared by :func:`compare_scored` (two folders) and
:func:`estimators.metric._leaderboard.leaderboard` (every two of several assistants).

**p-values.** Each difference has the two-sided p-value of "no difference" that inverts its
chosen interval (:func:`inverted_p_value`): the smallest ``alpha`` whose ``1 - alpha``
interval leaves out 0, so ``p <= 1 - confidence`` exactly when the reported interval leaves
out 0. The leaderboard's pairwise tests use the same p-values.

**What a power plan is for.** ``escalation plan --p-b`` (:func:`estimators.plan_difference`, paired design)
plans the test that inverting Newcombe's interval is: ``--test t`` (the plan's default) that of
``--interval wilson-kish-t``, ``--test z`` that of ``--interval wilson-kish``, each to first order (its limits
are ``t`` or ``z`` times each rate's standard error, combined with ``psi``: the plan's ``sqrt(V(m) / K)``);
simulated, Newcombe's rejection rate is 0 to 0.02 below the planned power
(``estimators.stats._planning.COMPARE_INTERVAL``, which ``DifferencePlan.compare_interval`` names). The
bootstrap intervals and the other limits have no plan of their own.

**What the coverage study says.** :data:`DIFFERENCE_COVERAGE_STUDY` holds what ``escalation
study differences`` measured for each interval and number of scenarios; :func:`coverage_word`
turns it into one word beside each interval (``holds``, ``too narrow``, ``often undefined``,
``not studied``: the holds rule of the studies), and :func:`difference_warnings` and :func:`interval_advice`
are written from the same words, so the table, the warnings and the advice never disagree.
They live in :mod:`estimators.metric._difference_coverage` (plain Python, which ``escalation compare
--help`` reads) and are exported from here too.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import numpy as np
import orjson
import pandas as pd

from ..records import ACT, ESC, InputError, read_scored
from ..stats import AUTO_INTERVAL, refuse
from ._difference_coverage import (
    DIFFERENCE_COVERAGE_SOURCE,
    DIFFERENCE_COVERAGE_STUDY,
    FEW_CASES_BOOTSTRAP,
    FEW_CASES_NEWCOMBE,
    HOLDS_AT,
    MEAN_LEVEL,
    TOLERANCE_MCSE,
    CoverageWord,
    coverage_word,
    difference_warnings,
    interval_advice,
)
from ._paired_differences import (
    MetricDifference,
    ScenarioMismatchError,
    _cluster_totals,
    check_difference_options,
    chosen_paired_differences,
    fewest_cases,
    match_scenarios,
    set_aside_run_errors,
)

__all__ = ["Comparison", "compare_scored", "difference_warnings", "check_scored_alike", "CoverageWord", "coverage_word",
           "interval_advice", "default_names", "DIFFERENCE_COVERAGE_STUDY", "DIFFERENCE_COVERAGE_SOURCE",
           "HOLDS_AT", "TOLERANCE_MCSE", "MEAN_LEVEL", "FEW_CASES_NEWCOMBE", "FEW_CASES_BOOTSTRAP"]


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_scored`: the four differences (``p_u``, ``p_o``, ``pi``, ``p_a``) and the
    scenarios whose ``p_u`` or ``p_o`` disagree.

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
    interval, requested, interval_reason : str
        The interval computed (``auto`` resolved), what ``--interval`` asked for, and why.
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
    requested: str = ""
    interval_reason: str = "chosen (--interval)"

    @property
    def fewest_cases(self) -> int:
        """The fewest cases a defined difference of ``p_u``, ``p_o`` or ``pi`` rests on (else the cases the
        bootstrap resampled); ``p_a``'s, often fewer, has its own warnings (:attr:`warnings`)."""
        return fewest_cases(self.differences, self.cases)

    @property
    def warnings(self) -> list[str]:
        """What could not be checked, then where the reported intervals are known not to hold their
        level (:func:`difference_warnings` at :attr:`fewest_cases`, then, prefixed ``p_a:``, at the cases of
        ``p_a`` where it rests on fewer)."""
        approval = next((d for d in self.differences if d.metric == "p_a"), None)
        fewer = (approval is not None and approval.clusters < self.fewest_cases
                 and math.isfinite(float(approval.difference)))
        at_cases = difference_warnings(self.interval, approval.clusters) if fewer and approval is not None else []
        return [*self.notes, *difference_warnings(self.interval, self.fewest_cases),
                *(f"p_a: {text}" for text in at_cases)]

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
                "interval": self.interval, "interval_requested": self.requested or self.interval,
                "interval_reason": self.interval_reason, "n_boot": self.n_boot, "seed": self.seed,
                "scenarios": self.scenarios, "cases": self.cases, "common": self.common,
                "only_in": {name: list(ids) for name, ids in self.only_in.items()},
                "warnings": self.warnings, "advice": self.advice, "coverage_source": DIFFERENCE_COVERAGE_SOURCE,
                "differences": {d.metric: d.to_dict() for d in self.differences},
                "disagreements": orjson.loads(self.disagreements.to_json(orient="records")),
                "provenance": self.provenance}


# ------------------------------------------------------------------ which scenarios, scored alike


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
    given = cast(list[dict], provenance)  # none is missing
    policies = [cast(dict, p.get("policy")) if isinstance(p.get("policy"), dict) else {} for p in given]
    if policies[0].get("sha256") != policies[1].get("sha256"):
        contents: list[Any] = [p.get("contents") for p in policies]
        tools = (_policy_differences(contents[0], contents[1], names) if all(isinstance(c, dict) for c in contents)
                 else [])
        if tools:
            what = ": " + "; ".join(tools[:3]) + (f"; and {len(tools) - 3} more tools" if len(tools) > 3 else "")
        else:
            what = (f" (policy sha256 {str(policies[0].get('sha256'))[:12]}... and "
                    f"{str(policies[1].get('sha256'))[:12]}...)")
        raise InputError(f"{names[0]} and {names[1]} were scored with different policies{what}; score both with "
                         "the same policy", source=source)
    rules = [(p.get("options") or {}).get("approval_escalation") for p in given]
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
            return cast(tuple[str, str], names)  # one name of each of the two paths
    return str(paths[0]), str(paths[1])


def _check_names(names) -> tuple[str, str]:
    names = (names,) if isinstance(names, str) else tuple(names)
    if len(names) != 2:
        raise refuse(f"`names` must be two names, one for A and one for B; got {len(names)}", "names")
    names = tuple(str(n).strip() for n in names)
    if not all(names):
        raise refuse(f"`names` must be two non-empty names; got {names!r}", "names")
    if names[0] == names[1]:
        raise refuse(f"`names` must be two different names; got {names[0]!r} twice", "names")
    return names


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
                   interval: str = AUTO_INTERVAL, rho: float | None = None,
                   rng: np.random.Generator | None = None, seed: int | None = None,
                   names=None, common: bool = False, allow_errors: bool = False) -> Comparison:
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
        ``auto`` (the default: Newcombe's interval with the narrowest limits that held 95% in ``escalation
        study differences`` at the comparison's number of cases, :func:`auto_difference_interval`) or one of
        :data:`estimators.INTERVAL_METHODS`. A Wilson-type method gives the limits of
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
    allow_errors : bool
        Compare runs that failed in places (``run_error``): those conversations are left out
        of both (:func:`~estimators.metric._paired_differences.set_aside_run_errors`), and the
        notes name them. Without it such a folder is refused.

    Returns
    -------
    Comparison

    Raises
    ------
    ScenarioMismatchError
        Scenarios that do not match (without ``common``), or no scenario in common.
    InputError
        Missing folder or file, a bad line, a bad option, results scored differently
        (:func:`check_scored_alike`: mode, confidence, policy), a scenario whose label
        differs between the folders, or (without ``allow_errors``) ``run_error`` conversations.
    """
    check_difference_options(confidence, n_boot, interval, rho)
    names = default_names(a_dir, b_dir) if names is None else _check_names(names)
    source = f"{a_dir} vs {b_dir}"
    (a, summary_a), (b, summary_b) = read_scored(a_dir), read_scored(b_dir)
    notes = check_scored_alike(summary_a, summary_b, names, source=source)
    labels = tuple(names) if names[0] != names[1] else ("A", "B")
    kept, set_aside = set_aside_run_errors(dict(zip(labels, (a, b))), dict(zip(labels, (str(a_dir), str(b_dir)))),
                                           allow=allow_errors)
    a, b = kept[labels[0]], kept[labels[1]]
    notes = set_aside + notes
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
    paired, method, reason = chosen_paired_differences(a, b, confidence=confidence, n_boot=n_boot,
                                                       interval=interval, rho=rho, rng=rng)
    options = {"confidence": confidence, "n_boot": n_boot, "interval": interval, "rho": rho, "seed": seed,
               "common": common, "allow_errors": allow_errors, "names": list(names)}
    return Comparison(confidence=confidence, n_boot=n_boot, interval=method, requested=interval,
                      interval_reason=reason, seed=seed,
                      differences=paired.differences,
                      disagreements=_disagreements(paired.summaries, paired.cases),
                      scenarios=int(a["scenario_id"].nunique()), cases=paired.units, names=names,
                      common=common, only_in=only_in, notes=tuple(notes),
                      provenance=_provenance((a_dir, b_dir), names, options))
