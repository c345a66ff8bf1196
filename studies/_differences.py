"""Differences study: the intervals of ``compare`` and of the mode-B correction, with replicas (ADEMP).

Aims
    Measure whether the intervals the tool reports besides a single rate keep their 95%: the
    interval of the difference ``B - A`` of two assistants run on the same scenarios (what
    ``escalation compare`` reports), and the interval of the mode-B rate corrected for the text
    judge's errors, when the conversations are replicas clustered in scenarios (issue 14, point 4).
Data-generating mechanisms
    *Differences* (``part = difference``): ``K`` scenarios of ``m`` replicas, each run by both
    assistants. Scenario ``j`` has error probabilities ``q_aj ~ Beta`` of mean ``p_a`` and
    intra-scenario correlation ``rho`` (``alpha = p (1 - rho) / rho``, as
    :mod:`studies._beta_binomial`), and ``q_bj`` likewise with mean ``p_b``; the two are joined by
    a Gaussian copula of correlation ``between`` (``q = F^-1(Phi(z))`` with ``(z_a, z_b)``
    bivariate normal), so each assistant's marginal model is exactly the beta-binomial one and
    a scenario that is hard for A tends to be hard for B. Each replica of each assistant is
    Bernoulli(``q``). With ``rho = 0`` there is no scenario effect, so ``between`` has no meaning
    and only ``between = 0`` is drawn. Grid: the rate pairs ``(p_a, p_b)`` (two null differences,
    a rare and a common one, and two non-null ones), ``(rho, between)``, ``K`` and ``m``, crossed.
    *Mode B* (``part = mode_b``): ``K`` scenarios of ``m`` replicas of one assistant with
    ``q_j ~ Beta(p, rho)`` as above; the text judge flags an error with probability
    ``sensitivity`` and flags a correct conversation with probability ``1 - specificity``
    (non-differential, the same in every scenario); a random ``validation_share`` of the
    conversations (drawn without replacement among all ``K m``) also has the record and forms the
    validation subsample, the others the main, text-only sample.
Estimands
    ``difference = p_b - p_a`` (the marginal rates of the model) and, for mode B, ``p``.
Methods
    Differences, at 95%: ``newcombe_wilson_kish`` (what ``compare`` reports: Newcombe's
    square-and-add interval, :func:`estimators.newcombe_paired_interval`, with each rate's
    ``wilson-kish`` limits from :func:`estimators.clustered_interval` and ``psi`` from
    :func:`estimators.paired_correlation` of the scenario totals), ``newcombe_wilson_kish_t``
    (the same with ``wilson-kish-t`` limits), ``bootstrap_percentile`` and ``bootstrap_bca``
    (:func:`estimators.paired_cluster_bootstrap`, scenarios resampled jointly for A and B,
    :data:`N_RESAMPLES` resamples). Mode B, at 95%: the predictive-value and the Rogan-Gladen
    corrections (:func:`estimators.predictive_value_correction`, :func:`estimators.rogan_gladen`),
    each with its ``wald`` interval (counts of the whole samples, conversations taken as
    independent) and its ``cluster`` interval (counts per scenario, ``per_cluster=True``: the
    cluster-robust linearised variance and t on ``K - 1`` degrees of freedom).
Performance measures
    Coverage with its Monte Carlo standard error ``sqrt(c (1 - c) / nsim)``; misses below
    (``high < truth``) and above (``low > truth``) separately; the share of undefined intervals
    (counted as not covering and as neither miss); the mean width of the defined intervals; for
    the differences the mean ``psi``, for mode B the bias of the estimate (with its MCSE). A
    cell "fails" when its coverage is below 0.93. With few conversations the mode-B validation
    subsample often lacks a stratum and the correction is undefined (no interval is reported);
    so the mode-B summaries take, for each method, the cells where it is defined in at least
    95% of the data sets and the coverage of its defined intervals (``coverage_defined``);
    ``mode_b.csv`` keeps every cell with both coverages.

Reproducibility: cell ``i`` uses child ``i`` of the root ``SeedSequence``
(:func:`studies._engine.run_cells`), so the tables are identical for any ``n_jobs``. The
bootstrap resamples are drawn for :data:`BOOTSTRAP_BATCH` data sets of a cell at once (one call
of the paired bootstrap with the data sets as its figures): the data sets are independent, they
share the multinomial weights of a batch, which makes their coverage indicators independent
given those weights.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
from scipy.special import betaincinv, ndtr

from escalation.estimators.stats import (ClusterBootstrapResult, DegenerateIntervalWarning, clustered_interval,
    newcombe_paired_interval, paired_cluster_bootstrap, paired_correlation)
from escalation.estimators.judges import predictive_value_correction, rogan_gladen
from escalation.simulate import cluster_probabilities
from ._beta_binomial import beta_shape
from ._constants import DIFFERENCES_SEED as DEFAULT_SEED
from ._engine import record_outputs, run_cells, step
from ._figure_files import save_figure
from ._performance import binomial_mcse, interval_rows, mean
from ._report_files import write_reports
from ._tables import markdown_table, write_table

__all__ = ["DEFAULT_SEED", "DIFFERENCE_METHODS", "MODE_B_METHODS", "DIFFERENCE_COLUMNS", "MODE_B_COLUMNS",
           "build_design", "run_cell", "run_differences_study", "difference_intervals", "simulate_pairs", "simulate_mode_b",
           "mode_b_intervals", "summaries", "report_markdown", "SMOKE_FINDINGS"]

DIFFERENCE_METHODS = ("newcombe_wilson_kish", "newcombe_wilson_kish_t", "bootstrap_percentile", "bootstrap_bca")
MODE_B_METHODS = ("predictive_values_wald", "predictive_values_cluster", "rogan_gladen_wald", "rogan_gladen_cluster")
DIFFERENCE_COLUMNS = ("method", "p_a", "p_b", "difference", "rho", "between", "scenarios", "replicas", "nsim",
                      "coverage", "coverage_mcse", "miss_below", "miss_above", "undefined", "coverage_defined",
                      "mean_width", "mean_psi")
MODE_B_COLUMNS = ("method", "correction", "interval", "p", "rho", "scenarios", "replicas", "sensitivity",
                  "specificity", "validation_share", "nsim", "coverage", "coverage_mcse", "miss_below", "miss_above",
                  "undefined", "coverage_defined", "mean_width", "bias", "bias_mcse")
CONFIDENCE = 0.95
#: A cell fails when its coverage is below this.
FAILS_BELOW = 0.93
#: Paired bootstrap resamples per data set.
N_RESAMPLES = 999
#: Data sets whose bootstrap shares one call (and its multinomial weights).
BOOTSTRAP_BATCH = 50
#: A mode-B method enters the summaries of a cell when it is undefined in at most this share of its data sets.
MAX_UNDEFINED = 0.05
#: Mode-B data sets drawn at once (bounded memory).
MODE_B_CHUNK = 500
DEFAULT_NSIM = {"difference": 2000, "mode_b": 2000}
SMOKE_NSIM = {"difference": 150, "mode_b": 300}
#: The text judge and the validation subsample of mode B.
SENSITIVITY, SPECIFICITY, VALIDATION_SHARE = 0.75, 0.95, 0.3
#: The findings of a smoke run: its grid lacks most of the conditions the findings of the full study compare.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its grid holds a few of the study's conditions and few data sets per "
                  "cell. The tables below show what this run computed.")

FULL_GRID = {
    "difference": {"pairs": ((0.05, 0.05), (0.02, 0.1), (0.2, 0.2), (0.1, 0.3)),
                   "rho_between": ((0.0, 0.0), (0.2, 0.0), (0.2, 0.5)),
                   "scenarios": (5, 10, 30, 100), "replicas": (1, 3, 8)},
    "mode_b": {"p": (0.1, 0.3), "rho": (0.0, 0.2, 0.5), "scenarios": (10, 30, 100, 300), "replicas": (1, 3, 10)},
}
SMOKE_GRID = {
    "difference": {"pairs": ((0.05, 0.05), (0.1, 0.3)), "rho_between": ((0.0, 0.0), (0.2, 0.5)),
                   "scenarios": (5, 30), "replicas": (1, 3)},
    "mode_b": {"p": (0.3,), "rho": (0.0, 0.5), "scenarios": (10, 100), "replicas": (1, 10)},
}

_NAMES = {
    "newcombe_wilson_kish": "Newcombe, Wilson-Kish limits (compare's)",
    "newcombe_wilson_kish_t": "Newcombe, Wilson-Kish-t limits",
    "bootstrap_percentile": "paired cluster bootstrap, percentile",
    "bootstrap_bca": "paired cluster bootstrap, BCa",
    "predictive_values_wald": "predictive values, Wald (independent)",
    "predictive_values_cluster": "predictive values, cluster-robust t",
    "rogan_gladen_wald": "Rogan-Gladen, Wald (independent)",
    "rogan_gladen_cluster": "Rogan-Gladen, cluster-robust t",
}


def build_design(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The design grid: the difference cells, then the mode-B cells, one row each.

    Columns: ``part`` (``difference`` or ``mode_b``), ``p_a, p_b`` (difference), ``p`` (mode B),
    ``rho``, ``between`` (difference), ``scenarios`` (K), ``replicas`` (m), ``sensitivity``,
    ``specificity``, ``validation_share`` (mode B) and ``nsim``; NaN where a column does not
    apply to the part.
    """
    grid = SMOKE_GRID if smoke else FULL_GRID
    sizes = SMOKE_NSIM if smoke else DEFAULT_NSIM
    nan = math.nan
    rows = []
    part = grid["difference"]
    for p_a, p_b in part["pairs"]:
        for rho, between in part["rho_between"]:
            for scenarios in part["scenarios"]:
                for replicas in part["replicas"]:
                    rows.append({"part": "difference", "p_a": p_a, "p_b": p_b, "p": nan, "rho": rho,
                                 "between": between, "scenarios": scenarios, "replicas": replicas,
                                 "sensitivity": nan, "specificity": nan, "validation_share": nan,
                                 "nsim": int(nsim or sizes["difference"])})
    part = grid["mode_b"]
    for p in part["p"]:
        for rho in part["rho"]:
            for scenarios in part["scenarios"]:
                for replicas in part["replicas"]:
                    rows.append({"part": "mode_b", "p_a": nan, "p_b": nan, "p": p, "rho": rho, "between": nan,
                                 "scenarios": scenarios, "replicas": replicas, "sensitivity": SENSITIVITY,
                                 "specificity": SPECIFICITY, "validation_share": VALIDATION_SHARE,
                                 "nsim": int(nsim or sizes["mode_b"])})
    return pd.DataFrame(rows)


# --- the differences ---------------------------------------------------------------------------

def simulate_pairs(row: dict, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` data sets of a difference cell: the scenario totals ``(y_a, y_b)``, each ``(size, K)``."""
    K, m = int(row["scenarios"]), int(row["replicas"])
    rho, between = float(row["rho"]), float(row["between"])
    p_a, p_b = float(row["p_a"]), float(row["p_b"])
    if rho == 0.0 or between == 0.0:
        q_a = cluster_probabilities(p_a, rho, (size, K), rng=rng)
        q_b = cluster_probabilities(p_b, rho, (size, K), rng=rng)
    else:  # Gaussian copula: each margin exactly Beta(p, rho), latent correlation `between`
        z = rng.standard_normal((2, size, K))
        z_b = between * z[0] + math.sqrt(1.0 - between**2) * z[1]
        q_a = betaincinv(*beta_shape(p_a, rho), ndtr(z[0]))
        q_b = betaincinv(*beta_shape(p_b, rho), ndtr(z_b))
    return rng.binomial(m, q_a), rng.binomial(m, q_b)


def _stacked(results: list[ClusterBootstrapResult]) -> ClusterBootstrapResult:
    """The paired bootstrap's per-figure results as one result over data sets (same draws, same method).

    Every figure has the same number of finite resamples here (equal cluster sizes, never empty),
    so the sorted draws stack into ``support (D, B)`` with one count each, and one call of
    :meth:`ClusterBootstrapResult.confidence_interval` computes what each result's own call does.
    """
    if len({r.support.shape for r in results}) != 1:
        raise ValueError("the data sets of a batch have different numbers of defined resamples")
    return ClusterBootstrapResult(estimate=np.array([float(r.estimate) for r in results]),
                                  support=np.stack([r.support for r in results]),
                                  counts=np.stack([r.counts for r in results]),
                                  acceleration=np.array([float(r.acceleration) for r in results]),
                                  n_resamples=results[0].n_resamples)


def difference_intervals(y_a: np.ndarray, y_b: np.ndarray, replicas: int, rng: np.random.Generator, *,
                         n_resamples: int = N_RESAMPLES) -> dict:
    """Every method's interval of ``p_b - p_a`` for each data set, and the psi of each.

    Returns ``{method: (low, high)}`` (arrays over data sets) and ``"psi"``.
    """
    D, K = y_a.shape
    sizes = np.full(K, replicas)
    rate_a, rate_b = y_a.sum(-1) / (K * replicas), y_b.sum(-1) / (K * replicas)
    psi = np.array([paired_correlation(y_a[i], sizes, y_b[i], sizes) for i in range(D)])
    out = {"psi": psi}
    for method, limits in (("newcombe_wilson_kish", "wilson-kish"), ("newcombe_wilson_kish_t", "wilson-kish-t")):
        ci_a = clustered_interval(y_a, replicas, limits, confidence=CONFIDENCE)
        ci_b = clustered_interval(y_b, replicas, limits, confidence=CONFIDENCE)
        bounds = np.array([tuple(newcombe_paired_interval(rate_a[i], (ci_a.low[i], ci_a.high[i]), rate_b[i],
                                                          (ci_b.low[i], ci_b.high[i]), psi[i])) for i in range(D)])
        out[method] = (bounds[:, 0], bounds[:, 1])
    lows = {"percentile": [], "bca": []}
    highs = {"percentile": [], "bca": []}
    for start in range(0, D, BOOTSTRAP_BATCH):
        part = slice(start, min(start + BOOTSTRAP_BATCH, D))
        n = np.broadcast_to(sizes, y_a[part].shape)
        boot = _stacked(paired_cluster_bootstrap(y_a[part], n, y_b[part], n, n_resamples=n_resamples, rng=rng))
        for kind in lows:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateIntervalWarning)  # undefined BCa: counted as such
                low, high = boot.confidence_interval(kind, CONFIDENCE)
            lows[kind].append(np.atleast_1d(low))
            highs[kind].append(np.atleast_1d(high))
    for kind in lows:
        out[f"bootstrap_{kind}"] = (np.concatenate(lows[kind]), np.concatenate(highs[kind]))
    return out


def _performance(low, high, truth: float) -> dict:
    """Coverage with its MCSE, the misses on each side, the undefined share and the mean width."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    coverage, below, above = (r["est"] for r in interval_rows(low, high, truth))
    width = high - low
    defined = np.isfinite(width)
    covered = (low[defined] <= truth) & (truth <= high[defined])
    return {"coverage": coverage, "coverage_mcse": float(binomial_mcse(coverage, width.size)),
            "miss_below": below, "miss_above": above, "undefined": float(1.0 - defined.mean()),
            "coverage_defined": float(covered.mean()) if defined.any() else math.nan,
            "mean_width": float(width[defined].mean()) if defined.any() else math.nan}


def _difference_cell(row: dict, rng: np.random.Generator) -> list[dict]:
    y_a, y_b = simulate_pairs(row, rng, int(row["nsim"]))
    intervals = difference_intervals(y_a, y_b, int(row["replicas"]), rng)
    truth = float(row["p_b"]) - float(row["p_a"])
    return [{"method": method, "difference": truth, **_performance(*intervals[method], truth),
             "mean_psi": float(np.mean(intervals["psi"]))} for method in DIFFERENCE_METHODS]


# --- mode B ------------------------------------------------------------------------------------

def simulate_mode_b(row: dict, rng: np.random.Generator, size: int) -> dict:
    """``size`` data sets of a mode-B cell: per-scenario counts, each ``(size, K)``.

    Keys: ``text`` and ``main`` (text-flagged and all conversations of the main sample), and of
    the validation subsample ``flag_err`` (flagged errors), ``flag`` (flagged), ``clear_err``
    (unflagged errors), ``clear`` (unflagged), ``err`` (errors), ``ok_clear`` (unflagged
    correct ones) and ``ok`` (correct ones). Drawn :data:`MODE_B_CHUNK` data sets at a time.
    """
    K, m = int(row["scenarios"]), int(row["replicas"])
    chosen = int(round(float(row["validation_share"]) * K * m))
    parts = []
    for start in range(0, size, MODE_B_CHUNK):
        d = min(MODE_B_CHUNK, size - start)
        q = cluster_probabilities(float(row["p"]), float(row["rho"]), (d, K), rng=rng)
        error = rng.random((d, K, m)) < q[..., None]
        flag = np.where(error, rng.random(error.shape) < float(row["sensitivity"]),
                        rng.random(error.shape) < 1.0 - float(row["specificity"]))
        val = np.zeros((d, K * m), dtype=bool)  # a simple random sample of `chosen` conversations
        np.put_along_axis(val, rng.random((d, K * m)).argsort(axis=1)[:, :chosen], True, axis=1)
        val = val.reshape(d, K, m)
        main = ~val

        def count(mask):
            return mask.sum(axis=-1)
        parts.append({"text": count(flag & main), "main": count(main), "flag_err": count(flag & error & val),
                      "flag": count(flag & val), "clear_err": count(~flag & error & val),
                      "clear": count(~flag & val), "err": count(error & val),
                      "ok_clear": count(~flag & ~error & val), "ok": count(~error & val)})
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def mode_b_intervals(counts: dict) -> dict:
    """Each correction with each interval: ``{method: CorrectedRate}`` (arrays over data sets)."""
    c = counts

    def total(name):
        return c[name].sum(axis=-1)
    pv_args = ("text", "main", "flag_err", "flag", "clear_err", "clear")
    rg_args = ("text", "main", "flag_err", "err", "ok_clear", "ok")
    return {
        "predictive_values_wald": predictive_value_correction(*(total(a) for a in pv_args), confidence=CONFIDENCE),
        "predictive_values_cluster": predictive_value_correction(*(c[a] for a in pv_args), confidence=CONFIDENCE,
                                                                 per_cluster=True),
        "rogan_gladen_wald": rogan_gladen(*(total(a) for a in rg_args), confidence=CONFIDENCE),
        "rogan_gladen_cluster": rogan_gladen(*(c[a] for a in rg_args), confidence=CONFIDENCE, per_cluster=True),
    }


def _mode_b_cell(row: dict, rng: np.random.Generator) -> list[dict]:
    counts = simulate_mode_b(row, rng, int(row["nsim"]))
    truth = float(row["p"])
    out = []
    for method, corrected in mode_b_intervals(counts).items():
        correction, interval = method.rsplit("_", 1)
        bias = mean(corrected.estimate - truth)
        out.append({"method": method, "correction": correction, "interval": interval,
                    **_performance(*corrected.ci(), truth), "bias": bias["est"], "bias_mcse": bias["mcse"]})
    return out


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Simulate and analyse one design cell: one result row per method."""
    rng = np.random.default_rng(seed_seq)
    return _difference_cell(row, rng) if row["part"] == "difference" else _mode_b_cell(row, rng)


# --- tables, figures and the report ------------------------------------------------------------

def _cell_name(row) -> str:
    if row["part"] == "difference":
        head = f"p_a = {row['p_a']:g}, p_b = {row['p_b']:g}, rho = {row['rho']:g}, between = {row['between']:g}"
    else:
        head = f"p = {row['p']:g}, rho = {row['rho']:g}"
    return f"{head}, K = {int(row['scenarios'])}, m = {int(row['replicas'])}"


def usable_mode_b(mode_b: pd.DataFrame) -> pd.DataFrame:
    """The mode-B rows the summaries use: a method in a cell where it is undefined in at most
    :data:`MAX_UNDEFINED` of the data sets, with ``coverage`` (and its MCSE) among its defined intervals."""
    rows = mode_b[mode_b["undefined"] <= MAX_UNDEFINED].copy()
    rows["coverage"] = rows["coverage_defined"]
    rows["coverage_mcse"] = binomial_mcse(rows["coverage"], rows["nsim"] * (1.0 - rows["undefined"]))
    return rows


def summaries(differences: pd.DataFrame, mode_b: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The summary tables of the study, read off the two cell tables.

    ``summary``: per method, the cells, mean and lowest coverage (and where), the share and
    number of cells below :data:`FAILS_BELOW`, the mean misses and width. ``by_scenarios``: the
    same per number of scenarios. ``failures``: every cell below :data:`FAILS_BELOW`.
    ``recommendation``: per part and K, the methods whose lowest coverage over the other
    conditions is at least :data:`FAILS_BELOW`, narrowest first. The difference part counts an
    undefined interval as a miss; the mode-B part uses :func:`usable_mode_b`.
    """
    parts = {"difference": differences.assign(part="difference"), "mode_b": usable_mode_b(mode_b).assign(part="mode_b")}
    rows, by_k, fails = [], [], []
    for part, table in parts.items():
        for method, cells in table.groupby("method", sort=False):
            worst = cells.loc[cells["coverage"].idxmin()]
            below = cells["coverage"] < FAILS_BELOW
            rows.append({"part": part, "method": method, "cells": len(cells),
                         "coverage_of": "all data sets" if part == "difference" else "defined intervals",
                         "mean_coverage": cells["coverage"].mean(), "min_coverage": cells["coverage"].min(),
                         "worst_cell": _cell_name(worst), "cells_below_0.93": int(below.sum()),
                         "share_below_0.93": below.mean(), "mean_miss_below": cells["miss_below"].mean(),
                         "mean_miss_above": cells["miss_above"].mean(), "mean_width": cells["mean_width"].mean()})
            for k, group in cells.groupby("scenarios"):
                by_k.append({"part": part, "method": method, "scenarios": int(k), "cells": len(group),
                             "mean_coverage": group["coverage"].mean(), "min_coverage": group["coverage"].min(),
                             "share_below_0.93": (group["coverage"] < FAILS_BELOW).mean(),
                             "mean_width": group["mean_width"].mean()})
            for _, cell in cells[below].iterrows():
                fails.append({"part": part, "method": method, "cell_conditions": _cell_name(cell),
                              "coverage": cell["coverage"], "coverage_mcse": cell["coverage_mcse"],
                              "miss_below": cell["miss_below"], "miss_above": cell["miss_above"],
                              "undefined": cell["undefined"]})
    by_scenarios = pd.DataFrame(by_k)
    advice = []
    for (part, k), group in by_scenarios.groupby(["part", "scenarios"], sort=False):
        holding = group[group["min_coverage"] >= FAILS_BELOW].sort_values("mean_width")
        advice.append({"part": part, "scenarios": int(k),
                       "methods_holding_0.93": ", ".join(holding["method"]) if len(holding) else "none",
                       "narrowest": holding["method"].iloc[0] if len(holding) else "none",
                       "its_mean_width": holding["mean_width"].iloc[0] if len(holding) else math.nan,
                       "best_min_coverage": group["min_coverage"].max(),
                       "best_by_min_coverage": group.loc[group["min_coverage"].idxmax(), "method"]})
    failures = pd.DataFrame(fails, columns=["part", "method", "cell_conditions", "coverage", "coverage_mcse",
                                            "miss_below", "miss_above", "undefined"])
    return {"summary": pd.DataFrame(rows), "by_scenarios": by_scenarios,
            "failures": failures.sort_values(["part", "method", "coverage"]).reset_index(drop=True),
            "recommendation": pd.DataFrame(advice)}


def _line(row) -> str:
    return (f"{_NAMES[row['method']]}: mean {row['mean_coverage']:.3f}, lowest {row['min_coverage']:.3f} "
            f"({row['worst_cell']}), {row['cells_below_0.93']} of {row['cells']} cells below {FAILS_BELOW}")


def _coverage_at(table: pd.DataFrame, method: str, **conditions) -> str:
    part = table[table["method"] == method]
    for key, value in conditions.items():
        part = part[part[key] == value]
    if part.empty:
        return "no cells"
    return f"mean {part['coverage'].mean():.3f}, lowest {part['coverage'].min():.3f}"


def _findings(differences: pd.DataFrame, mode_b: pd.DataFrame, tables: dict) -> list[str]:
    summary = tables["summary"].set_index("method")
    ks = sorted(differences["scenarios"].unique())
    small, large = ks[0], ks[-1]
    out = ["**Differences (compare).** " + "; ".join(_line({**summary.loc[m].to_dict(), "method": m})
                                                     for m in DIFFERENCE_METHODS) + "."]
    per_k = []
    for method in DIFFERENCE_METHODS:
        per_k.append(f"{_NAMES[method]}: " + ", ".join(
            f"K = {k}: {_coverage_at(differences, method, scenarios=k)}" for k in ks))
    out.append("**By the number of scenarios.** " + "; ".join(per_k) + ".")
    clustered = differences[(differences["rho"] > 0) & (differences["replicas"] > 1)]
    out.append(
        f"**Clustered cells (rho > 0, m > 1).** Newcombe with Wilson-Kish limits: "
        f"{_coverage_at(clustered, 'newcombe_wilson_kish')}; with Wilson-Kish-t limits: "
        f"{_coverage_at(clustered, 'newcombe_wilson_kish_t')}; bootstrap percentile: "
        f"{_coverage_at(clustered, 'bootstrap_percentile')}; BCa: {_coverage_at(clustered, 'bootstrap_bca')}. "
        f"With K = {small}: percentile {_coverage_at(clustered, 'bootstrap_percentile', scenarios=small)}, "
        f"Newcombe-WK {_coverage_at(clustered, 'newcombe_wilson_kish', scenarios=small)}; with K = {large}: "
        f"percentile {_coverage_at(clustered, 'bootstrap_percentile', scenarios=large)}, "
        f"Newcombe-WK {_coverage_at(clustered, 'newcombe_wilson_kish', scenarios=large)}.")
    rare = differences[differences[["p_a", "p_b"]].max(axis=1) <= 0.1]
    out.append(
        "**Rare errors (both rates at most 0.1).** " + "; ".join(
            f"{_NAMES[m]}: {_coverage_at(rare, m)}" for m in DIFFERENCE_METHODS)
        + ". Misses by side over all cells: " + "; ".join(
            f"{m}: below {summary.loc[m, 'mean_miss_below']:.3f}, above {summary.loc[m, 'mean_miss_above']:.3f}"
            for m in DIFFERENCE_METHODS) + ".")
    out.append("**Mode B, corrected rate** (coverage of the defined intervals, in the cells where at most "
               f"{MAX_UNDEFINED:.0%} are undefined). " + "; ".join(
                   _line({**summary.loc[m].to_dict(), "method": m}) for m in MODE_B_METHODS if m in summary.index)
               + ".")
    usable = usable_mode_b(mode_b)
    if usable.empty:
        return out + ["**Mode B.** The correction is undefined in too many data sets of every cell to summarise."]
    replicated = usable[(usable["rho"] > 0) & (usable["replicas"] > 1)]
    single = usable[usable["replicas"] == 1]
    strongest = usable[(usable["rho"] == usable["rho"].max()) & (usable["replicas"] == usable["replicas"].max())]
    few = usable[usable["scenarios"] == usable["scenarios"].min()]
    out.append(
        f"**Mode B with replicas (rho > 0, m > 1).** Predictive values: Wald "
        f"{_coverage_at(replicated, 'predictive_values_wald')}, cluster-robust "
        f"{_coverage_at(replicated, 'predictive_values_cluster')}; Rogan-Gladen: Wald "
        f"{_coverage_at(replicated, 'rogan_gladen_wald')}, cluster-robust "
        f"{_coverage_at(replicated, 'rogan_gladen_cluster')}. At rho = {usable['rho'].max():g} and "
        f"m = {int(usable['replicas'].max())}: predictive values Wald "
        f"{_coverage_at(strongest, 'predictive_values_wald')}, cluster-robust "
        f"{_coverage_at(strongest, 'predictive_values_cluster')}; Rogan-Gladen Wald "
        f"{_coverage_at(strongest, 'rogan_gladen_wald')}, cluster-robust "
        f"{_coverage_at(strongest, 'rogan_gladen_cluster')}. Without replicas (m = 1): predictive values Wald "
        f"{_coverage_at(single, 'predictive_values_wald')}, cluster-robust "
        f"{_coverage_at(single, 'predictive_values_cluster')}. With the fewest scenarios "
        f"(K = {int(usable['scenarios'].min())}): predictive values cluster-robust "
        f"{_coverage_at(few, 'predictive_values_cluster')}, Rogan-Gladen cluster-robust "
        f"{_coverage_at(few, 'rogan_gladen_cluster')}.")
    pv = usable[usable["method"] == "predictive_values_cluster"]
    failing = pv[pv["coverage"] < FAILS_BELOW]
    if len(failing):
        plain = usable[(usable["method"] == "predictive_values_wald") & (usable["rho"] == 0)].set_index(
            ["p", "scenarios", "replicas"])["coverage"]
        keys = list(zip(failing["p"], failing["scenarios"], failing["replicas"]))
        already = sum(1 for key in keys if key in plain.index and plain.loc[key] < FAILS_BELOW)
        conversations = (failing["scenarios"] * failing["replicas"]).astype(int)
        out.append(
            f"**What the cluster-robust interval does not repair.** The predictive-value correction with the "
            f"cluster-robust interval is below {FAILS_BELOW} in {len(failing)} cells, all with at most "
            f"{conversations.max()} conversations (K m); in {already} of them the Wald interval is below "
            f"{FAILS_BELOW} already without clustering (rho = 0, same p, K and m). That failure is the Wald "
            "interval's with a small validation subsample (a stratum whose estimated predictive value is 0 or 1 "
            "adds no variance), not the clustering's; the misses are below the truth "
            f"(mean miss below {failing['miss_below'].mean():.3f}, above {failing['miss_above'].mean():.3f}).")
    left = mode_b[mode_b["undefined"] > MAX_UNDEFINED]
    sizes = (left["scenarios"] * left["replicas"]).astype(int)
    out.append(f"**Where the correction does not exist.** {len(left)} of {len(mode_b)} mode-B method-cells are left "
               f"out of the mode-B summaries: the correction is undefined in more than {MAX_UNDEFINED:.0%} of their "
               "data sets (the validation subsample lacks a flagged or an unflagged conversation, or errors, or "
               f"Se + Sp <= 1); they have {sizes.min() if len(sizes) else 0} to {sizes.max() if len(sizes) else 0} "
               "conversations; mode_b.csv has them.")
    return out


def _validation(differences: pd.DataFrame, mode_b: pd.DataFrame) -> list[str]:
    """Checks whose answer is known: unclustered data, where every method should be near nominal."""
    lines = []
    plain = differences[(differences["rho"] == 0) & (differences["replicas"] == 1)
                        & (differences["scenarios"] == differences["scenarios"].max())]
    for method in DIFFERENCE_METHODS:
        part = plain[plain["method"] == method]
        if len(part):
            z = (part["coverage"] - CONFIDENCE) / binomial_mcse(CONFIDENCE, part["nsim"])
            shown = ", ".join(f"{c:.3f}" for c in part["coverage"])
            lines.append(f"- {_NAMES[method]}, independent conversations (rho = 0, m = 1), "
                         f"K = {int(part['scenarios'].iloc[0])}: coverage {shown} over the rate pairs "
                         f"({', '.join(f'{v:+.1f}' for v in z)} MCSE from 0.95).")
    single = usable_mode_b(mode_b)
    single = single[single["replicas"] == 1]
    if len(single):
        pv = single.pivot_table(index="cell", columns="method", values="coverage")
        if {"predictive_values_wald", "predictive_values_cluster"} <= set(pv.columns):
            gap = (pv["predictive_values_cluster"] - pv["predictive_values_wald"])
            lines.append(f"- Mode B without replicas (m = 1): the cluster-robust variance is the delta-method one "
                         f"times K/(K - 1) and t replaces z, so it can only be a little wider; its coverage minus "
                         f"the Wald one ranges over [{gap.min():+.3f}, {gap.max():+.3f}] in {len(gap)} cells.")
    bias = mode_b[(mode_b["correction"] == "predictive_values") & (mode_b["undefined"] == 0)]
    if len(bias):
        z = (bias["bias"] / bias["bias_mcse"]).abs()
        lines.append(f"- The predictive-value correction is unbiased (Tenenbein 1970): where it is always defined, "
                     f"its bias lies within 3 MCSE of 0 in {(z <= 3).sum()} of {len(z)} cells "
                     f"(largest {z.max():.1f} MCSE).")
    return lines


def report_markdown(differences: pd.DataFrame, mode_b: pd.DataFrame, tables: dict, *, seed: int,
                    figures: list[str], cells_seconds: float, smoke: bool, resumed: int = 0) -> str:
    """The text of ``report.md``: the ADEMP design, validation, findings (:data:`SMOKE_FINDINGS` for a
    ``smoke`` run) and the summary tables."""
    design = __doc__.split("\n\n", 1)[1].split("\n\nReproducibility", 1)[0]
    findings = [SMOKE_FINDINGS] if smoke else [f"- {f}" for f in _findings(differences, mode_b, tables)]
    lines = ["# Differences study: compare's intervals and the mode-B correction, with replicas\n",
             (f"Seed {seed}; {'smoke run; ' if smoke else ''}{differences['cell'].nunique()} difference cells of "
              f"{int(differences['nsim'].iloc[0])} data sets, {mode_b['cell'].nunique()} mode-B cells of "
              f"{int(mode_b['nsim'].iloc[0])}; {N_RESAMPLES} bootstrap resamples; cells computed in "
              f"{cells_seconds:.0f} s {f'({resumed} cells resumed from an earlier run) ' if resumed else ''}"
              "(run.json: `cells_seconds`; the whole run: `elapsed_seconds`). Every number below is read from this "
              "run's tables.\n"),
             "## Design (ADEMP)\n", design.strip() + "\n",
             "## Validation\n", *_validation(differences, mode_b), "",
             "## Findings\n", *findings, "",
             "## Recommendation (recommendation.md)\n",
             ("Per number of scenarios, the methods whose lowest coverage over every other condition of the grid "
              f"is at least {FAILS_BELOW}, narrowest first:\n"), markdown_table(tables["recommendation"]),
             "## Summary by method (summary.md)\n", markdown_table(tables["summary"]),
             "## By number of scenarios (by_scenarios.md)\n", markdown_table(tables["by_scenarios"]),
             f"## Cells below {FAILS_BELOW} (failures.md)\n",
             f"{len(tables['failures'])} method-cells; the full list with misses by side is in failures.md.\n",
             "## Figures\n", *(f"![{name}]({name})" for name in figures), ""]
    return "\n".join(lines)


_TITLES = {
    "differences": "Coverage of compare's difference intervals, per cell",
    "mode_b": "Coverage of the mode-B corrected rate, per cell",
    "summary": "Coverage per method",
    "by_scenarios": "Coverage per method and number of scenarios",
    "failures": f"Cells with coverage below {FAILS_BELOW}",
    "recommendation": f"Methods whose lowest coverage is at least {FAILS_BELOW}, per number of scenarios",
}


def run_differences_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
              seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False) -> dict[str, pd.DataFrame]:
    """Run the differences study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``run.json``, ``differences.csv`` and ``mode_b.csv``
    (one row per method and cell), the summary tables ``summary``, ``by_scenarios``,
    ``failures`` and ``recommendation`` (CSV and Markdown), the figures
    ``differences_coverage`` and ``mode_b_coverage`` (PNG and PDF), ``report.md`` and ``report.html``. ``nsim``
    replaces the data sets per cell of both parts. Returns the tables by name. ``force``
    recomputes into a folder that holds an earlier run (its cells and outputs are removed first,
    :func:`studies._engine.run_cells`).
    """
    out_dir = Path(out_dir)
    design = build_design(smoke=smoke, nsim=nsim)
    facts = {"study": "differences", "smoke": smoke, "nsim": None if nsim is None else int(nsim),
             "n_resamples": N_RESAMPLES, "confidence": CONFIDENCE, "bootstrap_batch": BOOTSTRAP_BATCH}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="differences cells", run_facts=facts,
                     force=force)
    run = orjson.loads((out_dir / "run.json").read_bytes())
    with step("summarising the cells", progress=progress) as say:
        differences = long[long["part"] == "difference"].reset_index(drop=True)
        mode_b = long[long["part"] == "mode_b"].reset_index(drop=True)
        tables = summaries(differences, mode_b)
        say("writing the tables")
        written = []
        for name, table in (("differences", differences[["cell", *DIFFERENCE_COLUMNS]]),
                            ("mode_b", mode_b[["cell", *MODE_B_COLUMNS]]), *tables.items()):
            written += write_table(table, out_dir, name, _TITLES[name], digits=6)
        say("drawing the figures")
        from escalation.figures import difference_coverage, mode_b_coverage
        style = {"names": _NAMES, "nominal": CONFIDENCE, "fails_below": FAILS_BELOW}
        figures = save_figure(difference_coverage(differences, methods=DIFFERENCE_METHODS, **style),
                              out_dir / "differences_coverage")
        figures += save_figure(mode_b_coverage(
            mode_b, usable_mode_b(mode_b), methods=MODE_B_METHODS,
            title=(f"Coverage of the mode-B corrected rate (Se = {SENSITIVITY:g}, Sp = {SPECIFICITY:g}, validation "
                   f"share {VALIDATION_SHARE:g}; coverage of the defined intervals, where at least "
                   f"{1 - MAX_UNDEFINED:.0%} are defined)"), **style), out_dir / "mode_b_coverage")
        say("writing report.md and report.html")
        text = report_markdown(differences, mode_b, tables, seed=seed, cells_seconds=run["cells_seconds"],
                               smoke=smoke, resumed=int(run["cells_resumed"]),
                               figures=[f.name for f in figures if f.suffix == ".png"])
        written += figures
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {"differences": differences, "mode_b": mode_b, **tables}
