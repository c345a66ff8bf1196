"""Coverage study: the Wilson-Kish interval against the cluster bootstrap (ADEMP).

Aims
    Find where the paper's interval (Wilson with the Kish design effect, SPEC section 5) covers
    the true rate, and where it fails, against the obvious alternatives: the plain Wilson interval
    that ignores clustering and the cluster bootstrap (percentile and BCa).
Data-generating mechanisms
    The plain beta-binomial model (not the synthetic world): ``K`` scenarios of ``m`` replicas.
    For ``p_u`` each scenario draws its own error probability ``q_j ~ Beta`` with mean ``p`` and
    intra-scenario correlation ``rho`` (``alpha = p (1 - rho) / rho``, ``beta = (1 - p) (1 - rho)
    / rho``; ``q_j = p`` when ``rho = 0``) and its ``m`` replicas are Bernoulli(``q_j``). For
    ``pi`` each of ``K`` cases has an ESC and an ACT scenario with ``m`` replicas each; the two
    scenarios draw independent ``q_u, q_o ~ Beta`` with mean ``a = 1 - sqrt(pi)`` and correlation
    ``rho``, replicas are Bernoulli, and replica ``r`` of both forms a pair whose outcome
    ``(1 - u)(1 - o)`` has mean ``(1 - a)^2 = pi``. The pair outcomes of a case are correlated
    (through ``q_u`` and ``q_o``) with intra-case correlation ``rho_outcome = Var(w) / (pi (1 -
    pi))``, ``w = (1 - q_u)(1 - q_o)``, which is smaller than ``rho``. Grid: true value ``p`` (for
    ``pi``: ``1 - p``), ``rho``, ``K`` (``scenarios``) and ``m`` (``replicas``), fully crossed.
Estimands
    ``p_u`` (a rate) and ``pi`` (the paired figure); the column ``p`` of the tables is the true
    value of the estimand.
Methods
    ``wilson`` (ignores clustering), ``wilson_kish_true_rho`` (design effect with the true
    ``rho_outcome``), ``wilson_kish_est_rho`` (the paper's: ANOVA rho truncated to [0, 1], 0 where
    undefined), ``bootstrap_percentile`` and ``bootstrap_bca`` (cluster bootstrap resampling
    scenarios, or cases for ``pi``, 999 resamples); all at 95%.
Performance measures
    Coverage with its Monte Carlo standard error ``sqrt(c (1 - c) / nsim)``; misses below
    (``high < truth``) and above (``low > truth``) separately; mean width over the replications
    where the interval is defined. An undefined interval (BCa with no variation between
    clusters) counts as not covering and as neither miss, so ``1 - coverage - miss_low -
    miss_high`` is the share of undefined intervals. For the Wilson methods the exact coverage
    (``estimators._exact``) is reported beside the Monte Carlo one.

Reproducibility: cell ``i`` uses child ``i`` of the root ``SeedSequence``; within a cell the
replications run in chunks of ``CHUNK`` with child ``c`` of the cell's seed, so
``replay_replication`` recomputes one replication from the root seed alone.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from escalation.estimators import (DegenerateIntervalWarning, anova_icc, cluster_bootstrap, cluster_bootstrap_pi,
                                   exact_coverage, wilson_interval, wilson_kish_interval)
from escalation.simulate import cluster_probabilities
from ._beta_binomial import cluster_pmf
from ._engine import cell_seed, run_cells
from ._figure_files import save_figure
from ._performance import binomial_mcse, interval_rows
from ._tables import write_table

__all__ = ["METHODS", "ESTIMANDS", "COLUMNS", "build_design", "run_cell", "run_study", "replay_replication",
           "pair_cluster_pmf", "pair_outcome_icc"]

METHODS = ("wilson", "wilson_kish_true_rho", "wilson_kish_est_rho", "bootstrap_percentile", "bootstrap_bca")
ESTIMANDS = ("p_u", "pi")
COLUMNS = ("method", "estimand", "p", "rho", "scenarios", "replicas", "nsim", "coverage", "coverage_mcse",
           "exact_coverage", "miss_low", "miss_high", "mean_width")
CONFIDENCE = 0.95
N_RESAMPLES = 999
CHUNK = 1000
DEFAULT_NSIM = 5000
SMOKE_NSIM = 200
DEFAULT_SEED = 20240501
# distance of the true value from the boundary: p_u = value, pi = 1 - value
FULL_GRID = {"p": (0.01, 0.02, 0.05, 0.1, 0.2, 0.5), "rho": (0.0, 0.05, 0.2, 0.5),
             "scenarios": (5, 10, 30, 100), "replicas": (1, 3, 8)}
SMOKE_GRID = {"p": (0.02, 0.2), "rho": (0.0, 0.2), "scenarios": (5, 30), "replicas": (1, 3)}


def build_design(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The design grid: one row per (estimand, p, rho, scenarios, replicas).

    Columns: ``estimand, p`` (true value of the estimand), ``rho`` (intra-scenario correlation of
    the 0/1 outcomes), ``rho_outcome`` (intra-cluster correlation of the outcome whose mean is
    the estimand: ``rho`` for ``p_u``, that of the pair outcome for ``pi``), ``scenarios`` (K),
    ``replicas`` (m), ``nsim``.
    """
    grid = SMOKE_GRID if smoke else FULL_GRID
    nsim = int(nsim if nsim is not None else SMOKE_NSIM if smoke else DEFAULT_NSIM)
    rows = []
    for estimand in ESTIMANDS:
        for distance in grid["p"]:
            truth = distance if estimand == "p_u" else round(1.0 - distance, 12)
            for rho in grid["rho"]:
                outcome_rho = rho if estimand == "p_u" else pair_outcome_icc(truth, rho)
                for scenarios in grid["scenarios"]:
                    for replicas in grid["replicas"]:
                        rows.append({"estimand": estimand, "p": truth, "rho": rho, "rho_outcome": outcome_rho,
                                     "scenarios": scenarios, "replicas": replicas, "nsim": nsim})
    return pd.DataFrame(rows)


def pair_outcome_icc(pi: float, rho: float) -> float:
    """Intra-case correlation of the pair outcome ``(1 - u)(1 - o)`` under the study's model.

    ``Var(w) / (pi (1 - pi))`` with ``w = (1 - q_u)(1 - q_o)``, ``q ~ Beta`` of mean
    ``a = 1 - sqrt(pi)`` and correlation ``rho``: ``E[(1 - q)^2] = (1 - a)^2 + rho a (1 - a)``.
    """
    a = 1.0 - math.sqrt(pi)
    second_moment = ((1.0 - a) ** 2 + rho * a * (1.0 - a)) ** 2
    return (second_moment - pi**2) / (pi * (1.0 - pi))


def pair_cluster_pmf(pi: float, rho: float, replicas: int) -> np.ndarray:
    """Distribution of a case's number of correct pairs, ``P(T = t)``, ``t = 0 .. m``.

    Given the error counts ``x`` (ESC) and ``y`` (ACT) of a case, their positions among the
    ``m`` replicas are independent uniform subsets, so the replicas where both err number
    ``I ~ Hypergeometric(m, x, y)`` and ``T = m - x - y + I``.
    """
    a = 1.0 - math.sqrt(pi)
    half = cluster_pmf(a, rho, replicas)
    pmf = np.zeros(replicas + 1)
    for x in range(replicas + 1):
        for y in range(replicas + 1):
            both = np.arange(max(0, x + y - replicas), min(x, y) + 1)
            pmf[replicas - x - y + both] += half[x] * half[y] * stats.hypergeom.pmf(both, replicas, x, y)
    return pmf


def _cluster_pmf(row: dict) -> np.ndarray:
    if row["estimand"] == "p_u":
        return cluster_pmf(row["p"], row["rho"], row["replicas"])
    return pair_cluster_pmf(row["p"], row["rho"], row["replicas"])


def _simulate(row: dict, rng: np.random.Generator, size: int) -> dict:
    """``size`` data sets of one cell: cluster totals, and for ``pi`` the 0/1 outcomes u and o."""
    K, m = row["scenarios"], row["replicas"]
    if row["estimand"] == "p_u":
        q = cluster_probabilities(row["p"], row["rho"], (size, K), rng=rng)
        return {"totals": rng.binomial(m, q)}
    a = 1.0 - math.sqrt(row["p"])
    q_u = cluster_probabilities(a, row["rho"], (size, K), rng=rng)
    q_o = cluster_probabilities(a, row["rho"], (size, K), rng=rng)
    u = (rng.random((size, K, m)) < q_u[..., None]).astype(np.int8)
    o = (rng.random((size, K, m)) < q_o[..., None]).astype(np.int8)
    return {"totals": ((1 - u) * (1 - o)).sum(axis=-1), "u": u, "o": o}


def _intervals(row: dict, data: dict, rng: np.random.Generator) -> dict:
    """Every method's interval for each data set: ``{method: (low, high)}``, and rho_hat."""
    m = row["replicas"]
    totals = data["totals"]
    errors, n = totals.sum(axis=-1), totals.shape[-1] * m
    rho_hat = np.nan_to_num(anova_icc(totals, m), nan=0.0)  # SPEC section 5: 0 where undefined
    if row["estimand"] == "p_u":
        boot = cluster_bootstrap(totals, m, n_resamples=N_RESAMPLES, rng=rng)
    else:
        boot = cluster_bootstrap_pi(data["u"], data["o"], n_resamples=N_RESAMPLES, rng=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)  # counted as not covering
        bca = boot.confidence_interval("bca", CONFIDENCE)
    return {
        "wilson": wilson_interval(errors / n, n, CONFIDENCE),
        "wilson_kish_true_rho": wilson_kish_interval(errors, n, m, row["rho_outcome"], CONFIDENCE).interval,
        "wilson_kish_est_rho": wilson_kish_interval(errors, n, m, rho_hat, CONFIDENCE).interval,
        "bootstrap_percentile": tuple(boot.confidence_interval("percentile", CONFIDENCE)),
        "bootstrap_bca": tuple(bca),
        "rho_hat": rho_hat,
    }


def _chunk(row: dict, seed_seq: np.random.SeedSequence, chunk: int) -> tuple[dict, dict]:
    """Data and intervals of replications ``chunk * CHUNK ...`` of a cell."""
    rng = np.random.default_rng(np.random.SeedSequence(seed_seq.entropy, spawn_key=seed_seq.spawn_key + (chunk,)))
    size = min(CHUNK, int(row["nsim"]) - chunk * CHUNK)
    data = _simulate(row, rng, size)
    return data, _intervals(row, data, rng)


def cell_intervals(row: dict, seed_seq: np.random.SeedSequence) -> dict:
    """Every replication's interval of every method in one cell: ``{method: (low, high)}``."""
    chunks = [_chunk(row, seed_seq, c)[1] for c in range(math.ceil(int(row["nsim"]) / CHUNK))]
    return {method: (np.concatenate([c[method][0] for c in chunks]), np.concatenate([c[method][1] for c in chunks]))
            for method in METHODS}


def _performance(low: np.ndarray, high: np.ndarray, truth: float) -> dict:
    """Coverage with its MCSE, the misses below and above, and the mean width of the defined intervals."""
    coverage, below, above = (row["est"] for row in interval_rows(low, high, truth))
    width = high - low
    defined = np.isfinite(width)
    return {"coverage": coverage, "coverage_mcse": float(binomial_mcse(coverage, width.size)),
            "miss_low": below, "miss_high": above,
            "mean_width": float(width[defined].mean()) if defined.any() else math.nan}


def _exact(row: dict) -> dict:
    """Exact coverage of the methods where it is computable (NaN for the bootstraps)."""
    pmf, K = _cluster_pmf(row), row["scenarios"]
    exact = {"wilson": exact_coverage(pmf, K, rho=0.0, confidence=CONFIDENCE),
             "wilson_kish_true_rho": exact_coverage(pmf, K, rho=row["rho_outcome"], confidence=CONFIDENCE),
             "wilson_kish_est_rho": exact_coverage(pmf, K, rho=None, confidence=CONFIDENCE)}
    return {method: exact[method].coverage if method in exact else math.nan for method in METHODS}


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Simulate and analyse one design cell: one result row per method."""
    intervals = cell_intervals(row, seed_seq)
    exact = _exact(row)
    return [{"method": method, **_performance(*intervals[method], row["p"]), "exact_coverage": exact[method]}
            for method in METHODS]


def replay_replication(row: dict, *, seed: int, replication: int) -> dict:
    """Recompute one replication of one cell from the root seed.

    Parameters
    ----------
    row : dict
        The cell's row of ``design.csv`` (with its ``cell`` index and ``nsim``).
    seed : int
        The study's root seed (``run.json``).
    replication : int
        Replication index, ``0 .. nsim - 1``.

    Returns
    -------
    dict
        ``totals`` (cluster totals of the data set), ``u`` and ``o`` for ``pi``, ``rho_hat``,
        ``truth``, ``intervals`` (``{method: (low, high)}``) and ``covered`` (``{method: bool}``),
        identical to what the study counted.
    """
    if not 0 <= replication < int(row["nsim"]):
        raise ValueError(f"replication must lie in 0 .. {int(row['nsim']) - 1}, got {replication}")
    chunk, index = divmod(replication, CHUNK)
    data, intervals = _chunk(row, cell_seed(seed, int(row["cell"])), chunk)
    truth = row["p"]
    picked = {method: (float(intervals[method][0][index]), float(intervals[method][1][index])) for method in METHODS}
    return {"truth": truth, "rho_hat": float(intervals["rho_hat"][index]),
            **{key: value[index] for key, value in data.items()},
            "intervals": picked, "covered": {m: bool(lo <= truth <= hi) for m, (lo, hi) in picked.items()}}


def run_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
              seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
              scheduler: str | None = None) -> pd.DataFrame:
    """Run the coverage study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``coverage.csv`` (columns ``COLUMNS``; exact
    coverage empty where not computable), ``run.json``, the figures (PNG and PDF) and
    ``report.md``. Returns the coverage table. ``backend`` and ``scheduler`` choose where the
    cells run and a stopped run resumes in the same folder (:func:`studies._engine.run_cells`).
    """
    from escalation.figures import coverage_by_p, coverage_by_scenarios, width_against_coverage
    from ._coverage_report import write_report

    out_dir = Path(out_dir)
    design = build_design(smoke=smoke, nsim=nsim)
    facts = {"study": "coverage", "smoke": smoke, "nsim": int(design["nsim"].iloc[0]), "n_resamples": N_RESAMPLES,
             "confidence": CONFIDENCE, "chunk": CHUNK}
    table = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                      backend=backend, scheduler=scheduler, description="coverage cells", run_facts=facts)
    coverage = table[list(COLUMNS)]
    write_table(coverage, out_dir, "coverage", digits=6)
    figures = []
    for estimand in ESTIMANDS:
        part = coverage[coverage["estimand"] == estimand]
        for replicas in sorted(part["replicas"].unique()):
            figures += save_figure(coverage_by_p(part, replicas=replicas, nominal=CONFIDENCE),
                                   out_dir / f"coverage_by_p_{estimand}_m{replicas}")
        figures += save_figure(coverage_by_scenarios(part, nominal=CONFIDENCE),
                               out_dir / f"coverage_by_scenarios_{estimand}")
    figures += save_figure(width_against_coverage(coverage, nominal=CONFIDENCE), out_dir / "width_against_coverage")
    write_report(coverage, out_dir / "report.md", seed=seed, figures=[f.name for f in figures if f.suffix == ".png"],
                 confidence=CONFIDENCE, n_resamples=N_RESAMPLES)
    return coverage
