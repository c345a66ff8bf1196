"""The differences study's cells: simulated pairs and mode-B counts, their intervals, and one cell's rows."""
from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np
from scipy.special import betaincinv, ndtr

from escalation.estimators.judges import CorrectedRate, predictive_value_correction, rogan_gladen
from escalation.estimators.stats import (
    ClusterBootstrapResult,
    DegenerateIntervalWarning,
    clustered_interval,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_correlation,
)
from escalation.simulate import cluster_probabilities

from .._beta_binomial import beta_shape
from .._performance import binomial_mcse, borderline, interval_rows, mean, rerun_seed, rerun_size
from .._user_methods import UserFunction, checked_bounds
from ._design import BOOTSTRAP_BATCH, CONFIDENCE, DIFFERENCE_METHODS, MODE_B_CHUNK, N_RESAMPLES, NEWCOMBE_LIMITS


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
    out: dict[str, Any] = {"psi": psi}
    for method, limits in NEWCOMBE_LIMITS.items():
        ci_a = clustered_interval(y_a, replicas, limits, confidence=CONFIDENCE)
        ci_b = clustered_interval(y_b, replicas, limits, confidence=CONFIDENCE)
        # arrays over the data sets: y_a and y_b hold D of them
        low_a, high_a = cast(np.ndarray, ci_a.low), cast(np.ndarray, ci_a.high)
        low_b, high_b = cast(np.ndarray, ci_b.low), cast(np.ndarray, ci_b.high)
        bounds = np.array([tuple(newcombe_paired_interval(rate_a[i], (low_a[i], high_a[i]), rate_b[i],
                                                          (low_b[i], high_b[i]), psi[i])) for i in range(D)])
        out[method] = (bounds[:, 0], bounds[:, 1])
    lows: dict[str, list[np.ndarray]] = {"percentile": [], "bca": []}
    highs: dict[str, list[np.ndarray]] = {"percentile": [], "bca": []}
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


def own_difference_intervals(methods: tuple[UserFunction, ...], y_a: np.ndarray, y_b: np.ndarray,
                             replicas: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A researcher's intervals of ``p_b - p_a`` on the data sets ``(y_a, y_b)``, each
    ``f(totals_a, sizes_a, totals_b, sizes_b, confidence) -> (low, high)``, checked."""
    sizes = np.full_like(y_a, replicas)
    return {m.name: checked_bounds(m.name, m.function(y_a.copy(), sizes.copy(), y_b.copy(), sizes.copy(), CONFIDENCE),
                                   len(y_a)) for m in methods}


def _difference_cell(row: dict, rng: np.random.Generator, methods: tuple[UserFunction, ...] = ()) -> list[dict]:
    y_a, y_b = simulate_pairs(row, rng, int(row["nsim"]))
    intervals = difference_intervals(y_a, y_b, int(row["replicas"]), rng)
    intervals |= own_difference_intervals(methods, y_a, y_b, int(row["replicas"]))
    truth = float(row["p_b"]) - float(row["p_a"])
    # each method's (low, high): typed, for mypy reads the bounds of *Any into every parameter
    return [{"method": method, "difference": truth,
             **_performance(*cast(tuple[np.ndarray, np.ndarray], intervals[method]), truth),
             "mean_psi": float(np.mean(intervals["psi"]))}
            for method in (*DIFFERENCE_METHODS, *(m.name for m in methods))]


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
        val: np.ndarray = np.zeros((d, K * m), dtype=bool)  # a simple random sample of `chosen` conversations
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


def mode_b_intervals(counts: dict) -> dict[str, CorrectedRate]:
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


def run_cell(row: dict, seed_seq: np.random.SeedSequence, *, methods: tuple[UserFunction, ...] = (),
             rerun: bool = False) -> list[dict]:
    """Simulate and analyse one design cell: one result row per method (a difference cell: the researcher's
    ``methods`` after the study's, on the same data sets).

    ``rerun``: where a difference interval's coverage is borderline (:func:`studies._performance.borderline`),
    the cell is drawn again on data sets of its own (:func:`studies._performance.rerun_seed`), as many as bring
    every borderline method's MCSE to :data:`studies._performance.RERUN_MCSE`, and redrawn larger while one of
    them is still borderline (its rerun coverage came out further from 1). The rows are then the rerun's, with
    its ``nsim`` and ``rerun`` true. The mode-B cells are not rerun: no command's words read them.
    """
    rng = np.random.default_rng(seed_seq)
    if row["part"] != "difference":
        return _mode_b_cell(row, rng)
    rows = _difference_cell(row, rng, methods)
    close = {r["method"] for r in rows if borderline(r["coverage"], r["coverage_mcse"])} if rerun else set()
    short = [r["coverage"] for r in rows if r["method"] in close]
    again = None
    while short:
        again = {**row, "nsim": rerun_size(short)}
        rows = _difference_cell(again, np.random.default_rng(rerun_seed(seed_seq)), methods)
        short = [r["coverage"] for r in rows if r["method"] in close
                 and borderline(r["coverage"], r["coverage_mcse"])]
    return [{**r, "nsim": int((again or row)["nsim"]), "rerun": again is not None} for r in rows]


# --- tables, figures and the report ------------------------------------------------------------
