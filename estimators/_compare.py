"""Compare two assistants scored on the same scenarios: differences of ``p_u``, ``p_o`` and ``pi``.

Both assistants ran the same scenarios, so their rates are paired by scenario, and the
replicas of a scenario are clustered. Two intervals respect both:

- **Newcombe's square-and-add interval for paired proportions** (Newcombe 1998, method 10;
  Fagerland, Lydersen & Laake 2017, section 8.5) with each rate's Wilson-Kish limits (SPEC
  section 5) and the correlation of the two rate estimates from cluster totals;
- a **paired cluster bootstrap**: cases are resampled with replacement, jointly for A and B,
  so each resample keeps the pairing and the clusters.

Differences are B minus A.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from ._aggregate import complete_pairs, summarise
from ._bootstrap import ClusterBootstrapResult
from ._errors import InputError

__all__ = ["MetricDifference", "Comparison", "read_scored", "compare_scored",
           "newcombe_paired_interval", "paired_correlation", "paired_cluster_bootstrap"]

_REQUIRED = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "u", "o",
             "cause")
_METRICS = ("p_u", "p_o", "pi")
_BOOTSTRAP_METHODS = ("percentile", "basic", "bca")
_CHUNK = 256  # bootstrap resamples drawn per block, so memory stays bounded for many clusters


def read_scored(folder) -> tuple[pd.DataFrame, dict]:
    """Read an ``escalation score`` output folder: ``conversations.jsonl`` and ``summary.json``.

    Returns the conversations as a DataFrame (the columns :func:`summarise` needs) and the
    summary dict. Raises :class:`InputError` naming the folder, file, line and field.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("is not a folder of `escalation score` output", source=str(folder))
    path, summary_path = folder / "conversations.jsonl", folder / "summary.json"
    for needed in (path, summary_path):
        if not needed.is_file():
            raise InputError(f"has no {needed.name} (write it with `escalation score --out`)",
                             source=str(folder))
    try:
        summary = orjson.loads(summary_path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg})", source=str(summary_path)) from None
    rows = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as err:
                raise InputError(f"not valid JSON ({err.msg})", source=str(path), line=number) from None
            if not isinstance(row, dict):
                raise InputError("not a JSON object", source=str(path), line=number)
            for name in _REQUIRED:
                if name not in row:
                    raise InputError("missing", source=str(path), line=number, field=name)
            if not isinstance(row["evaluated"], bool):
                raise InputError(f"must be true or false, got {row['evaluated']!r}", source=str(path),
                                 line=number, field="evaluated")
            rows.append({name: row[name] for name in _REQUIRED}
                        | {"reason": row.get("reason"), "unmarked_tools": row.get("unmarked_tools") or []})
    frame = pd.DataFrame(rows, columns=[*_REQUIRED, "reason", "unmarked_tools"])
    frame["evaluated"] = frame["evaluated"].astype(bool)
    for name in ("u", "o"):
        frame[name] = pd.to_numeric(frame[name]).astype("Float64")
    return frame, summary


def paired_correlation(totals_a, sizes_a, totals_b, sizes_b, *, continuity: bool = True) -> float:
    """Correlation of two clustered rate estimates paired by cluster, for Newcombe's interval.

    With cluster residuals ``e_j = y_j - p_hat n_j`` of each assistant, the linearised
    covariance of ``p_hat_a`` and ``p_hat_b`` gives ``psi = sum e_aj e_bj / sqrt(sum e_aj^2
    sum e_bj^2)``. With one conversation per cluster this is the phi coefficient
    ``(AD - BC) / sqrt(product of margins)`` of the paired 2x2 table; the continuity
    correction of Newcombe (1998) subtracts ``N / 2`` from ``AD - BC``, i.e. ``1/2`` from
    ``sum e_a e_b``, and sets ``psi = 0`` when the corrected positive value falls below 0
    (Fagerland et al. 2017, eq. 8.10). ``psi = 0`` where a margin is empty (no variation).
    """
    ya, na, yb, nb = (np.asarray(x, dtype=float) for x in (totals_a, sizes_a, totals_b, sizes_b))
    if na.sum() == 0 or nb.sum() == 0:
        return 0.0
    ea = ya - ya.sum() / na.sum() * na
    eb = yb - yb.sum() / nb.sum() * nb
    scale = math.sqrt(float((ea * ea).sum() * (eb * eb).sum()))
    if scale <= 1e-12:
        return 0.0
    cross = float((ea * eb).sum())
    if continuity and cross >= 0.0:
        cross = max(cross - 0.5, 0.0)
    return cross / scale


def newcombe_paired_interval(rate_a, ci_a, rate_b, ci_b, psi):
    """Newcombe's square-and-add interval for ``rate_b - rate_a`` from paired data.

    ``ci_a`` and ``ci_b`` are the two rates' score (here Wilson-Kish) intervals and ``psi``
    the correlation of the two estimates (:func:`paired_correlation`). Newcombe (1998),
    method 10; Fagerland, Lydersen & Laake (2017), eq. 8.9::

        L = d - sqrt((b - l_b)^2 + (u_a - a)^2 - 2 psi (b - l_b)(u_a - a))
        U = d + sqrt((a - l_a)^2 + (u_b - b)^2 - 2 psi (a - l_a)(u_b - b))

    Returns ``(low, high)``; NaN when either rate is undefined.
    """
    a, b = float(rate_a), float(rate_b)
    (low_a, high_a), (low_b, high_b) = ci_a, ci_b
    if not all(math.isfinite(x) for x in (a, b, low_a, high_a, low_b, high_b)):
        return float("nan"), float("nan")
    d = b - a
    below_b, above_a = b - low_b, high_a - a
    below_a, above_b = a - low_a, high_b - b
    low = d - math.sqrt(max(below_b**2 + above_a**2 - 2.0 * psi * below_b * above_a, 0.0))
    high = d + math.sqrt(max(below_a**2 + above_b**2 - 2.0 * psi * below_a * above_b, 0.0))
    return max(low, -1.0), min(high, 1.0)


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
    newcombe_ci: tuple[float, float]
    bootstrap_ci: tuple[float, float]
    bootstrap_undefined: int

    def to_dict(self) -> dict:
        def null(x):
            return None if x is None or not math.isfinite(float(x)) else float(x)
        return {"metric": self.metric, "a": null(self.a), "b": null(self.b),
                "difference": null(self.difference), "n_a": self.n_a, "n_b": self.n_b,
                "clusters": self.clusters, "psi": null(self.psi),
                "newcombe_ci": [null(v) for v in self.newcombe_ci],
                "bootstrap_ci": [null(v) for v in self.bootstrap_ci],
                "bootstrap_undefined": self.bootstrap_undefined}


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_scored`: the three differences and the disagreeing scenarios."""

    confidence: float
    n_boot: int
    method: str
    seed: int | None
    differences: tuple[MetricDifference, ...]
    disagreements: pd.DataFrame = field(repr=False)
    scenarios: int
    cases: int

    def to_frame(self) -> pd.DataFrame:
        """One row per metric, intervals in ``*_low`` / ``*_high`` columns."""
        rows = []
        for diff in self.differences:
            d = diff.to_dict()
            for name in ("newcombe_ci", "bootstrap_ci"):
                low, high = d.pop(name)
                stem = name.removesuffix("_ci")
                d[f"{stem}_low"], d[f"{stem}_high"] = low, high
            rows.append(d)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        return {"confidence": self.confidence, "n_boot": self.n_boot,
                "bootstrap_method": self.method, "seed": self.seed,
                "scenarios": self.scenarios, "cases": self.cases,
                "differences": {d.metric: d.to_dict() for d in self.differences},
                "disagreements": orjson.loads(self.disagreements.to_json(orient="records"))}


def _match_scenarios(a: pd.DataFrame, b: pd.DataFrame, names) -> None:
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
    labels = pd.concat([frame.loc[frame["label"].isin(["ESC", "ACT"]), ["scenario_id", "label"]]
                        for frame in (a, b)]).drop_duplicates()
    clash = labels["scenario_id"].duplicated(keep=False)
    if clash.any():
        raise InputError(f"scenario {labels.loc[clash, 'scenario_id'].iloc[0]!r} has the label ESC "
                         f"in one folder and ACT in the other", source=f"{names[0]} vs {names[1]}")


def _cluster_totals(frame: pd.DataFrame, label: str, outcome: str) -> pd.DataFrame:
    """Errors ``y`` and evaluated conversations ``n`` per scenario of one half."""
    half = frame[frame["evaluated"] & (frame["label"] == label)]
    return (half.groupby("scenario_id", sort=True)[outcome]
            .agg(y=lambda s: float(s.sum()), n="count"))


def _pair_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Correct pairs ``y`` and complete pairs ``n`` per case (SPEC section 5, "Pairs")."""
    pairs = complete_pairs(frame)
    ok = (1.0 - pairs["error_esc"].to_numpy(float)) * (1.0 - pairs["error_act"].to_numpy(float))
    return (pd.DataFrame({"case_id": pairs["case_id"].to_numpy(object), "y": ok})
            .groupby("case_id", sort=True)["y"].agg(y="sum", n="count"))


def _case_of_scenario(frames) -> pd.Series:
    """The bootstrap's resampling unit of each scenario: its case, else the scenario itself."""
    both = pd.concat([f[["scenario_id", "case_id"]] for f in frames]).drop_duplicates("scenario_id")
    unit = both["case_id"].where(both["case_id"].notna(), "scenario:" + both["scenario_id"].astype(str))
    return pd.Series(unit.to_numpy(object), index=both["scenario_id"].to_numpy(object))


def paired_cluster_bootstrap(totals_a, sizes_a, totals_b, sizes_b, *, n_resamples: int = 2000,
                             rng: np.random.Generator) -> list[ClusterBootstrapResult]:
    """Paired cluster bootstrap of ``Y_b / N_b - Y_a / N_a``: clusters resampled for A and B at once.

    Parameters
    ----------
    totals_a, sizes_a, totals_b, sizes_b : array_like, shape (M, K) or (K,)
        Ones and sizes of each of ``K`` clusters (last axis) for assistants A and B, for
        ``M`` figures of the *same* clusters (e.g. ``p_u``, ``p_o`` and ``pi`` per case).
        All figures share every resample, so their joint distribution is kept.
    n_resamples : int
        Bootstrap resamples ``B``.
    rng : numpy.random.Generator
        Source of randomness (keyword, required).

    Returns
    -------
    list of ClusterBootstrapResult
        One per figure (:mod:`estimators._bootstrap`), so ``.confidence_interval(method,
        confidence)`` gives percentile, basic or BCa intervals. Resamples where a side has
        ``N = 0`` are left out (``n_resamples`` of the result counts the others); the
        acceleration is the leave-one-cluster-out jackknife of the difference (Efron &
        Tibshirani 1993, eq. 14.15).

    Notes
    -----
    Each resample draws multiplicities ``w ~ Multinomial(K, 1/K)`` and sums ``w * y`` and
    ``w * n`` for both assistants (Davison & Hinkley 1997, section 3.8; pairs resampled as
    units), in blocks of 256 resamples so memory stays bounded.
    """
    arrays = [np.atleast_2d(np.asarray(x, dtype=float)) for x in (totals_a, sizes_a, totals_b, sizes_b)]
    ya, na, yb, nb = np.broadcast_arrays(*arrays)
    figures, clusters = ya.shape
    draws = []
    for start in range(0, n_resamples, _CHUNK):
        weights = rng.multinomial(clusters, np.full(clusters, 1.0 / clusters),
                                  size=min(_CHUNK, n_resamples - start)).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            draws.append((weights @ yb.T) / (weights @ nb.T) - (weights @ ya.T) / (weights @ na.T))
    draws = np.concatenate(draws).T  # (figures, B)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = yb.sum(-1) / nb.sum(-1) - ya.sum(-1) / na.sum(-1)
        leave_out = ((yb.sum(-1, keepdims=True) - yb) / (nb.sum(-1, keepdims=True) - nb)
                     - (ya.sum(-1, keepdims=True) - ya) / (na.sum(-1, keepdims=True) - na))
    results = []
    for i in range(figures):
        finite = np.isfinite(draws[i])
        jack = leave_out[i][np.isfinite(leave_out[i])]
        centred = jack.mean() - jack if jack.size >= 2 else np.array([np.nan])
        spread = float((centred**2).sum())
        acceleration = float((centred**3).sum() / (6.0 * spread**1.5)) if spread > 0 else np.nan
        support = np.sort(draws[i][finite]) if finite.any() else np.array([np.nan])
        results.append(ClusterBootstrapResult(
            estimate=np.asarray(estimate[i]), support=support,
            counts=np.ones(support.shape, dtype=np.int64) * finite.any(),
            acceleration=np.asarray(acceleration), n_resamples=max(int(finite.sum()), 1)))
    return results


def _disagreements(a: pd.DataFrame, b: pd.DataFrame, cases: pd.Series) -> pd.DataFrame:
    """Scenarios whose error rates differ between A and B, largest difference first."""
    tables = []
    for label, outcome in (("ESC", "u"), ("ACT", "o")):
        merged = _cluster_totals(a, label, outcome).merge(
            _cluster_totals(b, label, outcome), left_index=True, right_index=True, suffixes=("_a", "_b"))
        merged = merged.reset_index().assign(label=label)
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


def compare_scored(a_dir, b_dir, *, confidence: float = 0.95, n_boot: int = 2000,
                   method: str = "percentile", rho: float | None = None,
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
    method : {"percentile", "basic", "bca"}
        Bootstrap interval (:meth:`ClusterBootstrapResult.confidence_interval`).
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
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}",
                         field="confidence")
    if n_boot < 1:
        raise InputError(f"n_boot must be at least 1, got {n_boot!r}", field="n_boot")
    if method not in _BOOTSTRAP_METHODS:
        raise InputError(f"must be one of {', '.join(_BOOTSTRAP_METHODS)}, got {method!r}",
                         field="method")
    names = (str(a_dir), str(b_dir))
    (a, summary_a), (b, summary_b) = read_scored(a_dir), read_scored(b_dir)
    mode_a, mode_b = summary_a.get("mode", "record"), summary_b.get("mode", "record")
    if mode_a != mode_b:
        raise InputError(f"{names[0]} was scored in mode {mode_a!r} and {names[1]} in mode "
                         f"{mode_b!r}; results of the two modes are never compared",
                         source=f"{names[0]} vs {names[1]}")
    _match_scenarios(a, b, names)
    rng = np.random.default_rng(seed) if rng is None else rng
    summaries = []
    for frame, folder in ((a, a_dir), (b, b_dir)):
        try:
            summaries.append(summarise(frame, confidence=confidence, rho=rho))
        except InputError as err:
            raise InputError(err.detail, source=str(Path(folder) / "conversations.jsonl"),
                             field=err.field) from None
    cases = _case_of_scenario((a, b))

    per_metric = []
    for metric, get in (("p_u", lambda f: _cluster_totals(f, "ESC", "u")),
                        ("p_o", lambda f: _cluster_totals(f, "ACT", "o")),
                        ("pi", _pair_totals)):
        joined = get(a).merge(get(b), how="outer", left_index=True, right_index=True,
                              suffixes=("_a", "_b")).fillna(0.0)
        unit = cases.reindex(joined.index).to_numpy(object) if metric != "pi" else joined.index.to_numpy(object)
        per_metric.append(joined.groupby(unit)[["y_a", "n_a", "y_b", "n_b"]].sum())
    units = sorted(set().union(*(t.index for t in per_metric)), key=str)
    totals = np.stack([t.reindex(units, fill_value=0.0).to_numpy(float).T for t in per_metric])
    if units:
        boots = paired_cluster_bootstrap(*totals.transpose(1, 0, 2), n_resamples=n_boot, rng=rng)
        undefined = [n_boot - int(b.counts.sum()) for b in boots]
        boot = [tuple(float(x) for x in b.confidence_interval(method, confidence))
                if missing < n_boot else (np.nan, np.nan) for b, missing in zip(boots, undefined)]
    else:
        boot, undefined = [(np.nan, np.nan)] * 3, [n_boot] * 3

    differences = []
    for i, (metric, t) in enumerate(zip(_METRICS, per_metric)):
        if metric == "pi":
            rate_a, rate_b = summaries[0].paired, summaries[1].paired
            values = (rate_a.pi, rate_b.pi, rate_a.pairs, rate_b.pairs)
        else:
            half = "under" if metric == "p_u" else "over"
            rate_a, rate_b = getattr(summaries[0], half), getattr(summaries[1], half)
            values = (rate_a.rate, rate_b.rate, rate_a.n, rate_b.n)
        psi = paired_correlation(t["y_a"], t["n_a"], t["y_b"], t["n_b"])
        differences.append(MetricDifference(
            metric=metric, a=values[0], b=values[1], difference=values[1] - values[0],
            n_a=int(values[2]), n_b=int(values[3]), clusters=len(t), psi=psi,
            newcombe_ci=newcombe_paired_interval(values[0], rate_a.ci, values[1], rate_b.ci, psi),
            bootstrap_ci=boot[i], bootstrap_undefined=int(undefined[i])))
    return Comparison(confidence=confidence, n_boot=n_boot, method=method, seed=seed,
                      differences=tuple(differences),
                      disagreements=_disagreements(a, b, cases), scenarios=int(a["scenario_id"].nunique()),
                      cases=len(units))
