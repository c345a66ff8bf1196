"""Sample-size study: do the plans of :mod:`estimators._planning` deliver what they promise?

ADEMP (Morris, White & Crowther 2019):

- **Aims**: check that a plan's scenarios give the planned half-width and the nominal
  coverage, and that the power plans reach their power; show how ``K`` moves with ``p``,
  ``rho`` and ``m`` and that replicas cannot take ``K`` below the floor.
- **Data-generating mechanism**: the plain beta-binomial model (not the synthetic world):
  scenario rates ``theta_j ~ Beta(p (1-rho)/rho, (1-p)(1-rho)/rho)`` (``theta_j = p`` when
  ``rho = 0``), ``y_j ~ Binomial(m, theta_j)``, for ``K`` scenarios planned by the planner.
  The paired figure's plans draw the pair outcomes of a case the same way (the case is the
  cluster). Two assistants on the same scenarios have rates with correlation ``r``: with
  probability ``c = r / r_max`` the second rate is the comonotone (countermonotone if
  ``r < 0``) transform of the first, else independent, where ``r_max`` is the correlation
  of the comonotone pair, so the Pearson correlation is exactly ``r``.
- **Estimands**: the rate ``p`` (or ``pi``); the difference ``p_b - p_a`` for power plans.
- **Methods**: Wilson-Kish with the estimated rho (SPEC section 5, ANOVA, 0 where undefined)
  and with the planned (true) rho; tests at level ``alpha``: ``paired_z`` on the scenario
  differences, ``cluster_z`` on the scenario means of each assistant, ``donner_klar`` (Wald
  with each assistant's design effect from its estimated rho).
- **Performance**: coverage, misses below and above, median and mean half-width, rejection
  rate; each with its Monte Carlo standard error; beside the coverage, the exact coverage of
  both Wilson-Kish methods (:mod:`estimators._exact`, no Monte Carlo error).
- **Checks** (issue 6): median half-width <= h; coverage >= nominal - 2 MCSE; power >=
  target - 2 MCSE.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import integrate, stats
from scipy.special import betainc, betaincinv

from escalation.estimators import (anova_icc, exact_coverage, plan_difference, plan_interval,
                                   plan_paired_figure, wilson_kish_interval, write_atomic, z_value)
from escalation.simulate import cluster_probabilities
from ._beta_binomial import beta_shape, cluster_pmf
from ._engine import run_cells
from ._figure_files import save_figure
from ._performance import interval_rows, mean, median, share
from ._tables import write_table

__all__ = ["DEFAULT_SEED", "write_report", "draw_cluster_totals", "draw_paired_rates", "interval_performance",
           "exact_interval_coverage", "power_performance", "design_grid", "run_cell", "planning_tables", "summarise_validation",
           "run_study"]


def draw_cluster_totals(p, rho, reps, clusters, replicas, *, rng: np.random.Generator):
    """Beta-binomial totals: ``y[r, j] ~ Binomial(m, theta_j)``, shape ``(reps, clusters)``."""
    return rng.binomial(replicas, cluster_probabilities(p, rho, (reps, clusters), rng=rng))


def _extreme_correlation(p_a, p_b, rho, sign):
    """Pearson correlation of ``(F_a^-1(U), F_b^-1(U))`` (sign +1) or ``F_b^-1(1 - U)`` (-1)."""
    first, second = stats.beta(*beta_shape(p_a, rho)), stats.beta(*beta_shape(p_b, rho))
    moment, _ = integrate.quad(lambda u: first.ppf(u) * second.ppf(u if sign > 0 else 1.0 - u),
                               0.0, 1.0, limit=200)
    return (moment - p_a * p_b) / math.sqrt(first.var() * second.var())


def draw_paired_rates(p_a, p_b, rho, correlation, reps, clusters, *, rng: np.random.Generator):
    """Two assistants' rates on the same scenarios, with Pearson correlation ``correlation``.

    Returns ``(theta_a, theta_b)``, each ``(reps, clusters)``. See the module notes: a
    mixture of the comonotone (or countermonotone) coupling, with probability
    ``|r| / |r_extreme|``, and independence. ValueError if ``|r|`` exceeds what the two
    beta marginals allow.
    """
    theta_a = cluster_probabilities(p_a, rho, (reps, clusters), rng=rng)
    theta_b = cluster_probabilities(p_b, rho, (reps, clusters), rng=rng)
    if rho == 0.0 or correlation == 0.0:
        return theta_a, theta_b
    sign = 1 if correlation > 0 else -1
    extreme = _extreme_correlation(p_a, p_b, rho, sign)
    mixing = correlation / extreme
    if mixing > 1.0:
        raise ValueError(f"correlation={correlation} is beyond the {extreme:.3f} that beta "
                         f"rates with p_a={p_a}, p_b={p_b}, rho={rho} allow")
    coupled = rng.random((reps, clusters)) < mixing
    u = betainc(*beta_shape(p_a, rho), theta_a[coupled])
    theta_b[coupled] = betaincinv(*beta_shape(p_b, rho), u if sign > 0 else 1.0 - u)
    return theta_a, theta_b


def interval_performance(totals, replicas, p, rho, confidence):
    """Coverage and half-width of Wilson-Kish intervals over replicated data sets.

    Parameters
    ----------
    totals : ndarray, shape (reps, clusters)
        Errors per cluster, ``replicas`` trials each.
    replicas : int
    p, rho : float
        True rate and the planned intra-cluster correlation.
    confidence : float

    Returns
    -------
    list of dict
        Rows ``method, stat, est, mcse`` for methods ``wilson_kish_est_rho`` (SPEC: ANOVA
        estimate, 0 where undefined) and ``wilson_kish_true_rho``; stats ``coverage``,
        ``miss_below`` (the interval lies below ``p``), ``miss_above``,
        ``median_half_width``, ``mean_half_width``.
    """
    n = totals.shape[1] * replicas
    estimated = np.nan_to_num(anova_icc(totals, replicas), nan=0.0)
    rows = []
    for method, rho_used in (("wilson_kish_est_rho", estimated), ("wilson_kish_true_rho", rho)):
        low, high = wilson_kish_interval(totals.sum(axis=1), n, replicas, rho_used, confidence).interval
        half = (high - low) / 2.0
        for row in (*interval_rows(low, high, p), median(half, stat="median_half_width"),
                    mean(half, stat="mean_half_width")):
            rows.append({"method": method, **row})
    return rows


def exact_interval_coverage(p, rho, clusters, replicas, confidence):
    """Exact coverage of both Wilson-Kish methods under the beta-binomial model (no MC error).

    :func:`estimators._exact.exact_coverage` on the beta-binomial pmf of one
    cluster; NaN for the estimated rho where the enumeration is too large. Rows ``method,
    stat="exact_coverage", est, mcse=0``.
    """
    pmf = cluster_pmf(p, rho, replicas)
    return [{"method": method, "stat": "exact_coverage", "mcse": 0.0,
             "est": exact_coverage(pmf, clusters, rho=fixed, confidence=confidence).coverage}
            for method, fixed in (("wilson_kish_est_rho", None), ("wilson_kish_true_rho", rho))]


def power_performance(totals_a, totals_b, replicas, design, alpha):
    """Rejection rates of two-sided level-``alpha`` tests of ``p_a = p_b``.

    ``design="paired"``: ``paired_z``, the z statistic of the mean scenario difference
    ``mean(d) / (sd(d) / sqrt(K))``. ``design="unpaired"``: ``cluster_z`` on the two sets of
    scenario means, and ``donner_klar``, ``(p_b - p_a) / sqrt(sum p q deff / (K m))`` with
    each assistant's ANOVA rho (Donner & Klar 2000, section 5.2). A statistic that is 0/0
    (no variation at all) does not reject.
    """
    reps, clusters = totals_a.shape
    means_a, means_b = totals_a / replicas, totals_b / replicas
    critical = z_value(1.0 - alpha)
    statistics = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        if design == "paired":
            diff = means_b - means_a
            statistics["paired_z"] = diff.mean(axis=1) / (diff.std(axis=1, ddof=1) / math.sqrt(clusters))
        else:
            spread = means_a.var(axis=1, ddof=1) + means_b.var(axis=1, ddof=1)
            gap = means_b.mean(axis=1) - means_a.mean(axis=1)
            statistics["cluster_z"] = gap / np.sqrt(spread / clusters)
            variance = 0.0
            for totals, means in ((totals_a, means_a), (totals_b, means_b)):
                rate = means.mean(axis=1)
                deff = 1.0 + (replicas - 1) * np.nan_to_num(anova_icc(totals, replicas), nan=0.0)
                variance = variance + rate * (1.0 - rate) * deff / (clusters * replicas)
            statistics["donner_klar"] = gap / np.sqrt(variance)
    return [{"method": method, **share(np.abs(np.nan_to_num(value, nan=0.0)) > critical, stat="power")}
            for method, value in statistics.items()]


# ---------------------------------------------------------------- the study

DEFAULT_SEED = 20240606
_NOMINAL = 0.95
_ALPHA = 0.05
_HALF_WIDTH = 0.05
_POWER = 0.8
_PAIRED_CORRELATION = 0.5


def design_grid(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The simulated plans, one row per cell (written to ``design.csv`` before the run).

    Full: rates ``p`` in (0.05, 0.1, 0.2, 0.5) with ``(rho, m)`` = (0, 1) and every
    ``rho`` in (0, 0.05, 0.1, 0.2) with ``m`` in (5, 10); the paired figure ``pi`` in (0.6, 0.8)
    with ``rho`` in (0.05, 0.2), ``m = 3``; all for ``h = 0.05`` at 95%. Power plans for
    ``p_b - p_a`` = 0.2 - 0.1 and 0.2 - 0.3, ``rho`` in (0.05, 0.2), ``m`` in (1, 5, 10), unpaired
    and paired (``r = 0.5``), 80% power at level 0.05. ``nsim`` replications per cell
    (default 4,000; 200 with ``smoke``).
    """
    nsim = int(nsim if nsim is not None else (200 if smoke else 4000))
    rates = (0.1,) if smoke else (0.05, 0.1, 0.2, 0.5)
    clustered = ((0.1, 5),) if smoke else tuple((r, m) for r in (0.0, 0.05, 0.1, 0.2) for m in (5, 10))
    pis, pi_rhos = ((0.8,), (0.2,)) if smoke else ((0.6, 0.8), (0.05, 0.2))
    pairs = ((0.1, 0.2),) if smoke else ((0.1, 0.2), (0.3, 0.2))
    power_rhos, power_replicas = ((0.05,), (5,)) if smoke else ((0.05, 0.2), (1, 5, 10))
    interval = dict(half_width=_HALF_WIDTH, confidence=_NOMINAL, p_b=np.nan, correlation=np.nan,
                    design="", power=np.nan, alpha=np.nan)
    rows = [dict(kind="rate", p=p, rho=rho, replicas=m, **interval)
            for p in rates for rho, m in ((0.0, 1),) + clustered]
    rows += [dict(kind="pi", p=pi, rho=rho, replicas=3, **interval) for pi in pis for rho in pi_rhos]
    rows += [dict(kind="difference", p=p_a, p_b=p_b, rho=rho, replicas=m, design=design,
                  correlation=_PAIRED_CORRELATION if design == "paired" else np.nan,
                  power=_POWER, alpha=_ALPHA, half_width=np.nan, confidence=np.nan)
             for p_a, p_b in pairs for rho in power_rhos for m in power_replicas
             for design in ("unpaired", "paired")]
    columns = ["kind", "p", "p_b", "rho", "correlation", "design", "replicas", "half_width",
               "confidence", "power", "alpha"]
    return pd.DataFrame(rows, columns=columns).assign(nsim=nsim)


def _plan_of(row: dict):
    """The planner's answer for one design row."""
    if row["kind"] == "difference":
        paired = row["design"] == "paired"
        return plan_difference(row["p"], row["p_b"], rho=row["rho"], replicas=int(row["replicas"]),
                               power=row["power"], alpha=row["alpha"], design=row["design"],
                               correlation=row["correlation"] if paired else None)
    plan = plan_paired_figure if row["kind"] == "pi" else plan_interval
    first = "pi" if row["kind"] == "pi" else "p"
    return plan(**{first: row["p"]}, rho=row["rho"], replicas=int(row["replicas"]),
                half_width=row["half_width"], confidence=row["confidence"])


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Plan one design row, simulate ``nsim`` data sets of that plan and analyse them.

    Returns long rows ``scenarios, planned, method, stat, est, mcse``: ``scenarios`` is the
    planned ``K`` (cases for ``pi``; per assistant when unpaired), ``planned`` the plan's own
    half-width or power at that ``K``.
    """
    rng = np.random.default_rng(seed_seq)
    plan = _plan_of(row)
    reps, m = int(row["nsim"]), int(row["replicas"])
    if row["kind"] == "difference":
        k = plan.scenarios
        if row["design"] == "paired":
            theta_a, theta_b = draw_paired_rates(row["p"], row["p_b"], row["rho"], row["correlation"],
                                                 reps, k, rng=rng)
        else:
            theta_a = cluster_probabilities(row["p"], row["rho"], (reps, k), rng=rng)
            theta_b = cluster_probabilities(row["p_b"], row["rho"], (reps, k), rng=rng)
        results = power_performance(rng.binomial(m, theta_a), rng.binomial(m, theta_b), m,
                                    row["design"], row["alpha"])
        planned = plan.achieved_power
    else:
        k = plan.cases if row["kind"] == "pi" else plan.scenarios
        totals = draw_cluster_totals(row["p"], row["rho"], reps, k, m, rng=rng)
        results = interval_performance(totals, m, row["p"], row["rho"], row["confidence"])
        results += exact_interval_coverage(row["p"], row["rho"], k, m, row["confidence"])
        planned = plan.achieved_half_width
    return [{"scenarios": k, "planned": planned, **result} for result in results]


def planning_tables() -> dict[str, pd.DataFrame]:
    """Plans without simulation: ``K`` over ``(p, rho)`` and ``K`` against ``m`` with the floor.

    ``scenarios_grid``: ``h = 0.05``, ``m = 5``, 95%, ``p`` in (0.01 ... 0.5) and ``rho`` in
    (0 ... 0.5). ``scenarios_by_replicas``: ``p = 0.1``, ``h = 0.05``, ``rho`` in (0.05, 0.1,
    0.2) and ``m`` from 1 to 50, with the normal-rule and Wilson floors.
    """
    grid = [plan_interval(p, rho=rho, replicas=5, half_width=_HALF_WIDTH).to_dict()
            for p in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
            for rho in (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)]
    by_m = [plan_interval(0.1, rho=rho, replicas=m, half_width=_HALF_WIDTH).to_dict()
            for rho in (0.05, 0.1, 0.2) for m in (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50)]
    keep = ["p", "rho", "replicas", "half_width", "scenarios", "scenarios_normal", "conversations",
            "achieved_half_width", "floor", "floor_wilson"]
    return {"scenarios_grid": pd.DataFrame(grid)[keep], "scenarios_by_replicas": pd.DataFrame(by_m)[keep]}


def summarise_validation(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Wide tables of the checks, one row per cell and method.

    ``intervals``: coverage, misses and half-widths with MCSE, and the checks
    ``half_width_ok`` (median half-width <= h) and ``coverage_ok`` (coverage >= nominal -
    2 MCSE). ``power``: the realised power with MCSE and ``power_ok`` (>= target - 2 MCSE).
    """
    out = {}
    for name, kinds in (("intervals", ["rate", "pi"]), ("power", ["difference"])):
        part = long[long["kind"].isin(kinds)]
        if part.empty:
            continue
        wide = part.pivot_table(index=["cell", "method"], columns="stat", values=["est", "mcse"],
                                sort=False)
        wide.columns = [stat if kind == "est" else f"{stat}_mcse" for kind, stat in wide.columns]
        cells = part.groupby("cell").first()
        if name == "intervals":
            design = cells[["kind", "p", "rho", "replicas", "scenarios", "half_width", "planned",
                            "confidence"]].rename(columns={"planned": "planned_half_width"})
            wide = wide.reset_index().join(design, on="cell")
            wide["half_width_ok"] = wide["median_half_width"] <= wide["half_width"]
            wide["coverage_ok"] = wide["coverage"] >= wide["confidence"] - 2 * wide["coverage_mcse"]
            stats_ = ["coverage", "coverage_mcse", "exact_coverage", "miss_below", "miss_below_mcse", "miss_above",
                      "miss_above_mcse", "median_half_width", "median_half_width_mcse",
                      "mean_half_width", "mean_half_width_mcse", "half_width_ok", "coverage_ok"]
        else:
            design = cells[["p", "p_b", "rho", "correlation", "design", "replicas", "scenarios",
                            "power", "planned"]].rename(columns={"p": "p_a", "power": "power_target",
                                                                 "planned": "planned_power"})
            wide = wide.rename(columns={"power": "realised_power", "power_mcse": "realised_power_mcse"})
            wide = wide.reset_index().join(design, on="cell")
            wide["power_ok"] = wide["realised_power"] >= wide["power_target"] - 2 * wide["realised_power_mcse"]
            stats_ = ["realised_power", "realised_power_mcse", "power_ok"]
        out[name] = wide[["cell", *design.columns, "method", *stats_]]
    return out


def _failures(table: pd.DataFrame, check: str, describe) -> str:
    failed = table[~table[check].astype(bool)]
    if failed.empty:
        return "none"
    return "; ".join(describe(row) for _, row in failed.iterrows())


def write_report(tables: dict[str, pd.DataFrame], path, *, facts: dict) -> None:
    """``report.md``: the findings in a few sentences, every number read from the tables."""
    grid, by_m = tables["scenarios_grid"], tables["scenarios_by_replicas"]
    at = grid[grid["p"] == 0.1].set_index("rho")["scenarios"]
    lines = ["# Sample-size plans: study report\n",
             f"Seed {facts['seed']}, {facts['nsim']} replications per plan, beta-binomial data "
             f"(design.csv, run.json).\n", "## Plans\n",
             f"- For p = 0.1, half-width 0.05 and m = 5 replicas the plan needs K = {at.iloc[0]} "
             f"scenarios at rho = {at.index[0]:g} and K = {at.iloc[-1]} at rho = {at.index[-1]:g} "
             f"(scenarios_grid): rho is rarely known, so plan for a range.",
             ]
    for rho, part in by_m.groupby("rho"):
        first, last = part.iloc[0], part.iloc[-1]
        lines.append(f"- rho = {rho:g}: K = {int(first['scenarios'])} with m = {int(first['replicas'])}, "
                     f"K = {int(last['scenarios'])} with m = {int(last['replicas'])}; the floor is "
                     f"{first['floor']:.1f} (normal rule), {first['floor_wilson']:.1f} (Wilson).")
    if "intervals" in tables:
        intervals = tables["intervals"]
        lines += ["\n## Interval plans (intervals.csv)\n"]
        def describe(row):
            return (f"{row['kind']} p={row['p']:g} rho={row['rho']:g} m={row['replicas']} "
                    f"K={row['scenarios']}: median {row['median_half_width']:.4f}, coverage "
                    f"{row['coverage']:.4f} (exact {row['exact_coverage']:.4f})")
        for method, part in intervals.groupby("method", sort=False):
            lines.append(
                f"- `{method}`: median half-width <= h in {int(part['half_width_ok'].sum())} of "
                f"{len(part)} plans (exceeded: {_failures(part, 'half_width_ok', describe)}); "
                f"coverage >= 0.95 - 2 MCSE in {int(part['coverage_ok'].sum())} of {len(part)} "
                f"(lowest {part['coverage'].min():.4f}, exact {part['exact_coverage'].min():.4f}; "
                f"short: {_failures(part, 'coverage_ok', describe)}).")
    if "power" in tables:
        power = tables["power"]
        lines += ["\n## Power plans (power.csv)\n"]
        for method, part in power.groupby("method", sort=False):
            lines.append(f"- `{method}`: power >= target - 2 MCSE in {int(part['power_ok'].sum())} "
                         f"of {len(part)} plans; realised power {part['realised_power'].min():.4f} "
                         f"to {part['realised_power'].max():.4f}.")
    lines += ["\n## Figures\n", "- scenarios_grid: K over (p, rho); scenarios_by_replicas: K "
              "against m with the floor; intervals: coverage and median half-width of each plan; "
              "power: realised power of each power plan (PNG and PDF)."]
    write_atomic(path, "\n".join(lines) + "\n")


def run_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
              nsim: int | None = None, progress: bool = True, backend: str = "local",
              scheduler: str | None = None) -> dict[str, pd.DataFrame]:
    """Run the sample-size study and write its tables (CSV + Markdown) and figures.

    Writes ``design.csv`` and ``run.json`` (:func:`studies._engine.run_cells`),
    ``validation.csv`` (long: design, ``scenarios, planned, method, stat, est, mcse``),
    ``intervals.*`` and ``power.*`` (the checks), ``scenarios_grid.*`` and
    ``scenarios_by_replicas.*`` (plans), and the figures of :mod:`figures.sample_size`.
    The tables are identical for any ``n_jobs`` and ``backend``; a stopped run resumes in the same
    folder (:func:`studies._engine.run_cells`).
    """
    from escalation.figures import plot_interval_validation, plot_power_validation, plot_scenarios_by_replicas, plot_scenarios_grid
    out_dir = Path(out_dir)
    design = design_grid(smoke=smoke, nsim=nsim)
    facts = {"study": "sample-size", "smoke": smoke, "nsim": int(design["nsim"].iloc[0])}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="sample-size plans", run_facts=facts)
    write_table(long, out_dir, "validation")
    tables = {**planning_tables(), **summarise_validation(long)}
    titles = {"scenarios_grid": "Scenarios K for h = 0.05, m = 5, 95% (Wilson-Kish and normal rule)",
              "scenarios_by_replicas": "Scenarios K against replicas m (p = 0.1, h = 0.05) and the floor",
              "intervals": "Realised half-width and coverage of each interval plan",
              "power": "Realised power of each power plan"}
    for name, table in tables.items():
        write_table(table, out_dir, name, titles[name])
    save_figure(plot_scenarios_grid(tables["scenarios_grid"]), out_dir / "scenarios_grid")
    save_figure(plot_scenarios_by_replicas(tables["scenarios_by_replicas"]), out_dir / "scenarios_by_replicas")
    if "intervals" in tables:
        save_figure(plot_interval_validation(tables["intervals"]), out_dir / "intervals")
    if "power" in tables:
        save_figure(plot_power_validation(tables["power"]), out_dir / "power")
    write_report(tables, out_dir / "report.md", facts={"seed": seed, **facts})
    return {"validation": long, **tables}
