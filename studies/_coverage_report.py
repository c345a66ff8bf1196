"""``report.md`` of the coverage study: the ADEMP design and the findings, read off the table."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from escalation.estimators import write_atomic
from ._performance import binomial_mcse

__all__ = ["write_report"]

_NAMES = {
    "wilson": "Wilson (ignores clustering)",
    "wilson_kish_true_rho": "Wilson-Kish with the true rho",
    "wilson_kish_est_rho": "Wilson-Kish with the estimated rho (the paper's interval)",
    "bootstrap_percentile": "cluster bootstrap, percentile",
    "bootstrap_bca": "cluster bootstrap, BCa",
}


def _cell(row) -> str:
    return f"{row['estimand']}, p = {row['p']:g}, rho = {row['rho']:g}, K = {row['scenarios']}, m = {row['replicas']}"


def _range(part: pd.DataFrame) -> str:
    """'mean 0.948 (lowest 0.912 at <cell>)' of the coverage in ``part``."""
    if part.empty:
        return "no cells"
    worst = part.loc[part["coverage"].idxmin()]
    return f"mean {part['coverage'].mean():.3f} (lowest {worst['coverage']:.3f} at {_cell(worst)})"


def _summary_table(table: pd.DataFrame, nominal: float) -> str:
    lines = ["| estimand | method | cells | mean coverage | lowest coverage | cells below nominal by > 3 MCSE | "
             "mean undefined share | mean width |", "|---|---|---|---|---|---|---|---|"]
    for (estimand, method), part in table.groupby(["estimand", "method"], sort=False):
        below = (part["coverage"] < nominal - 3 * np.maximum(part["coverage_mcse"], 1e-12)).sum()
        undefined = (1 - part["coverage"] - part["miss_low"] - part["miss_high"]).clip(lower=0).mean()
        lines.append(f"| {estimand} | {method} | {len(part)} | {part['coverage'].mean():.3f} | "
                     f"{part['coverage'].min():.3f} | {below} | {undefined:.3f} | {part['mean_width'].mean():.4f} |")
    return "\n".join(lines)


def _validation(table: pd.DataFrame) -> str:
    part = table[table["exact_coverage"].notna()]
    # methods that give the very same intervals in a cell (all three Wilson methods when m = 1,
    # wilson and the true-rho interval when rho = 0) are one comparison, not several
    part = part.drop_duplicates(["estimand", "p", "rho", "scenarios", "replicas", "coverage", "exact_coverage"]).copy()
    if part.empty:
        return "No cell has an exact coverage."
    se = binomial_mcse(part["exact_coverage"], part["nsim"])
    z = ((part["coverage"] - part["exact_coverage"]) / se.where(se > 0)).fillna(0.0)
    worst = part.loc[z.abs().idxmax()]
    return (f"For the three Wilson methods the exact coverage is computed by enumeration (no Monte Carlo error). "
            f"In {(z.abs() <= 3).sum()} of {len(part)} distinct comparisons the Monte Carlo coverage lies within "
            f"3 MCSE of it (MCSE from the exact value; about {0.0027 * len(part):.1f} are expected outside by "
            f"chance); the largest deviation is {z.abs().max():.2f} MCSE ({worst['method']}, {_cell(worst)}). "
            "This checks the simulation, the intervals and the enumeration against each other.")


def _findings(table: pd.DataFrame, nominal: float) -> list[str]:
    by = {m: table[table["method"] == m] for m in _NAMES}
    top_rho, top_m, small_k = table["rho"].max(), table["replicas"].max(), table["scenarios"].min()
    unclustered = lambda d: d[(d["rho"] == 0) | (d["replicas"] == 1)]  # noqa: E731
    clustered = lambda d: d[(d["rho"] == top_rho) & (d["replicas"] == top_m)]  # noqa: E731
    near = lambda d: d[np.minimum(d["p"], 1 - d["p"]) <= 0.02]  # noqa: E731
    findings = [
        f"**Ignoring clustering fails.** Without clustering (rho = 0 or m = 1) the plain Wilson interval "
        f"covers with {_range(unclustered(by['wilson']))}; with rho = {top_rho:g} and m = {top_m} its coverage falls "
        f"to {_range(clustered(by['wilson']))}: the interval is too narrow by the square root of the design effect.",
        f"**The design effect repairs it when rho is known.** Wilson-Kish with the true rho: "
        f"{_range(by['wilson_kish_true_rho'])}; in the clustered cells (rho = {top_rho:g}, m = {top_m}) "
        f"{_range(clustered(by['wilson_kish_true_rho']))}.",
        f"**Estimating rho costs coverage with few scenarios.** The paper's interval (ANOVA rho, truncated): "
        f"{_range(by['wilson_kish_est_rho'])}; with K = {small_k} scenarios "
        f"{_range(by['wilson_kish_est_rho'][by['wilson_kish_est_rho']['scenarios'] == small_k])}, against "
        f"{_range(by['wilson_kish_true_rho'][by['wilson_kish_true_rho']['scenarios'] == small_k])} with the true rho.",
    ]
    for method in ("bootstrap_percentile", "bootstrap_bca"):
        d = by[method]
        text = (f"**The {_NAMES[method]} needs many scenarios.** With K = {small_k}: "
                f"{_range(d[d['scenarios'] == small_k])}; with K = {table['scenarios'].max()}: "
                f"{_range(d[d['scenarios'] == table['scenarios'].max()])}.")
        undefined = (1 - d["coverage"] - d["miss_low"] - d["miss_high"]).clip(lower=0)
        if undefined.max() * d["nsim"].max() >= 0.5:  # at least one undefined interval in some cell
            worst = d.loc[undefined.idxmax()]
            text += (f" Its interval is undefined when every cluster has the same rate (common near the boundary): "
                     f"in up to {undefined.max():.1%} of replications ({_cell(worst)}), counted as not covering.")
        findings.append(text)
    boundary = "; ".join(f"{method} {near(by[method])['coverage'].mean():.3f}" for method in _NAMES)
    paper = near(by["wilson_kish_est_rho"])
    sides = "; ".join(f"{estimand}: {rows['miss_low'].mean():.3f} below and {rows['miss_high'].mean():.3f} above"
                      for estimand, rows in paper.groupby("estimand"))
    findings.append(f"**Near the boundary** (true value within 0.02 of 0 or 1) mean coverage is: {boundary}. "
                    f"The paper's interval misses there on average {sides} (mostly an interval built on "
                    "one or two observed rare events that lies wholly on the far side of a true value near the "
                    "boundary).")
    reference = by["wilson_kish_true_rho"].set_index(["estimand", "p", "rho", "scenarios", "replicas"])["mean_width"]
    ratios = "; ".join(
        f"{method} {np.nanmean(by[method].set_index(reference.index.names)['mean_width'] / reference):.2f}"
        for method in _NAMES if method != "wilson_kish_true_rho")
    findings.append(f"**Width.** Mean width relative to Wilson-Kish with the true rho, averaged over cells: {ratios}. "
                    "A method that is narrower than the true-rho interval buys it with coverage "
                    f"(nominal {nominal:g}).")
    return findings


def write_report(table: pd.DataFrame, path: str | Path, *, seed: int, figures: list[str], confidence: float,
                 n_resamples: int) -> None:
    """Write ``report.md`` for the coverage table ``table`` (the rows of ``coverage.csv``)."""
    nsim = int(table["nsim"].iloc[0])
    grid = {c: ", ".join(f"{v:g}" for v in sorted(table[c].unique())) for c in ("rho", "scenarios", "replicas")}
    truths = {e: ", ".join(f"{v:g}" for v in sorted(table.loc[table["estimand"] == e, "p"].unique()))
              for e in table["estimand"].unique()}
    text = [
        "# Coverage study: Wilson-Kish against the cluster bootstrap",
        "",
        f"Root seed {seed}; {nsim} replications per cell; {n_resamples} bootstrap resamples; "
        f"{confidence:.0%} two-sided intervals. Tables: `design.csv`, `coverage.csv`; run facts: `run.json`. "
        "Replay any replication with `studies.coverage.replay_replication(row_of_design_csv, seed=SEED, "
        "replication=R)`.",
        "",
        "## Design (ADEMP)",
        "",
        "- **Aims.** Find where the paper's interval (Wilson with the Kish design effect) covers the true rate and "
        "where it fails, against the plain Wilson interval and the cluster bootstrap.",
        "- **Data-generating mechanisms.** The plain beta-binomial model, not the synthetic world. For `p_u`: K "
        "scenarios of m replicas; scenario j draws q_j ~ Beta with mean p and intra-scenario correlation rho, and its "
        "replicas are Bernoulli(q_j). For `pi`: K cases, each with an ESC and an ACT scenario of m replicas; "
        "q_u and q_o are drawn independently (Beta, mean a = 1 - sqrt(pi), correlation rho), replicas are Bernoulli, "
        "and replica r of both scenarios forms a pair with outcome (1 - u)(1 - o), of mean pi. The pair outcomes of "
        "a case are correlated through q_u and q_o (their correlation, `rho_outcome` in `design.csv`, is below rho). "
        f"Grid, fully crossed: true p_u in {{{truths.get('p_u', '')}}}, true pi in {{{truths.get('pi', '')}}}, "
        f"rho in {{{grid['rho']}}}, K in {{{grid['scenarios']}}}, m in {{{grid['replicas']}}}.",
        "- **Estimands.** `p_u` and `pi`; the column `p` is the true value of the estimand.",
        "- **Methods.** `wilson` (ignores clustering); `wilson_kish_true_rho` (design effect with the true "
        "correlation of the outcome); `wilson_kish_est_rho` (ANOVA rho truncated to [0, 1], 0 where undefined, "
        "SPEC section 5); `bootstrap_percentile` and `bootstrap_bca` (scenarios, or cases for pi, resampled).",
        "- **Performance measures.** Coverage with its Monte Carlo standard error sqrt(c(1 - c)/nsim); misses below "
        "(`miss_low`: the interval lies below the truth) and above (`miss_high`) separately; mean width over the "
        "replications where the interval is defined; exact coverage for the Wilson methods. An undefined interval "
        "counts as a miss on neither side, so 1 - coverage - miss_low - miss_high is the undefined share.",
        "",
        "## Validation",
        "",
        _validation(table),
        "",
        "## Findings",
        "",
        *[f"{i}. {f}" for i, f in enumerate(_findings(table, confidence), start=1)],
        "",
        "## Summary by method",
        "",
        _summary_table(table, confidence),
        "",
        "## Figures",
        "",
        *[f"- `{name}` (and PDF)" for name in figures],
        "",
    ]
    write_atomic(path, "\n".join(text))
