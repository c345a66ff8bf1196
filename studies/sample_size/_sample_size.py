"""Sample-size study: do the plans of :mod:`estimators.stats._planning` deliver what they promise?

ADEMP (Morris, White & Crowther 2019):

- **Aims**: check that a plan's scenarios give the planned half-width and the nominal
  coverage, with equal and with unequal scenario sizes; that every test the planner plans for
  holds its level (size) with few and with many scenarios and reaches the planned power; show
  how ``K`` moves with ``p``, ``rho``, ``m`` and the spread of the sizes, and that replicas
  cannot take ``K`` below the floor.
- **Data-generating mechanism**: the plain beta-binomial model (not the synthetic world):
  scenario rates ``theta_j ~ Beta(p (1-rho)/rho, (1-p)(1-rho)/rho)`` (``theta_j = p`` when
  ``rho = 0``), ``y_j ~ Binomial(n_j, theta_j)``, for ``K`` scenarios planned by the planner
  (or fixed, for the size of the tests). Sizes ``n_j = m`` when ``size_cv = 0``, else
  ``n_j = 1 + NegativeBinomial`` with mean ``m`` and coefficient of variation ``size_cv``, drawn
  afresh for every data set (:func:`draw_sizes`). The paired figure's plans draw the pair
  outcomes of a case the same way (the case is the cluster). Two assistants on the same
  scenarios have rates with correlation ``r``: with probability ``c = r / r_max`` the second
  rate is the comonotone (countermonotone if ``r < 0``) transform of the first, else
  independent, where ``r_max`` is the correlation of the comonotone pair, so the Pearson
  correlation is exactly ``r``; they share the scenario sizes. The size of the tests is
  measured under ``p_a = p_b = p`` with the same mechanism.
- **Estimands**: the rate ``p`` (or ``pi``); the difference ``p_b - p_a`` for the tests.
- **Methods**: the interval the plan is made for, ``wilson-kish`` or ``wilson-kish-t``
  (:func:`estimators.clustered_interval`), with rho estimated as SPEC section 5 says (ANOVA,
  ``rho_used = 1`` where undefined, ``m_bar = sum n_j^2 / N``) and with the planned (true)
  rho; with unequal sizes also the true rho with ``m_bar = N / k`` (the rule before
  2026-12-01). Tests at level ``alpha`` (:func:`difference_statistics`): ``paired_z`` and
  ``paired_t`` on the scenario differences, ``cluster_z`` and ``cluster_t`` on the two
  assistants' scenario rates, ``donner_klar`` and ``donner_klar_t`` (Wald with each
  assistant's design effect, SPEC section 5).
- **Performance**: coverage, misses below and above, median and mean half-width, rejection
  rate under the null (size) and under the planned alternative (power); each with its Monte
  Carlo standard error; beside the coverage, the exact coverage of both interval methods
  where the sizes are equal (:mod:`estimators.stats._exact`, no Monte Carlo error).
- **Checks**: median half-width <= h; coverage >= nominal - 2 MCSE; size within
  ``alpha +- 2 MCSE``; power of the test a plan is made for >= target - 2 MCSE.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from escalation.simulate import cluster_probabilities

from .._constants import SAMPLE_SIZE_SEED as DEFAULT_SEED
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._report_files import write_reports
from .._tables import write_table
from .._user_methods import read_grid
from ._design import GRID_KEYS, _plan_of, design_grid, planning_tables
from ._report import report_markdown, summarise_validation
from ._simulators import (
    PLANNED_TESTS,
    SIZE_REPLICATIONS,
    TESTS,
    difference_statistics,
    draw_cluster_totals,
    draw_paired_rates,
    draw_sizes,
    exact_interval_coverage,
    interval_performance,
    rejection_rows,
)

__all__ = ["DEFAULT_SEED", "SIZE_REPLICATIONS", "TESTS", "PLANNED_TESTS", "report_markdown", "draw_cluster_totals",
           "draw_sizes", "draw_paired_rates", "interval_performance", "exact_interval_coverage",
           "difference_statistics", "rejection_rows", "design_grid", "run_cell", "planning_tables",
           "summarise_validation", "run_sample_size_study"]


def _two_assistants(row: dict, p_a: float, p_b: float, reps: int, k: int, rng):
    """Totals and sizes of both assistants: paired (shared scenarios and sizes) or unpaired."""
    m, cv = int(row["replicas"]), float(row["size_cv"])
    if row["design"] == "paired":
        theta_a, theta_b = draw_paired_rates(p_a, p_b, row["rho"], row["correlation"], reps, k, rng=rng)
        sizes_a = sizes_b = draw_sizes(m, cv, (reps, k), rng=rng)
    else:
        theta_a = cluster_probabilities(p_a, row["rho"], (reps, k), rng=rng)
        theta_b = cluster_probabilities(p_b, row["rho"], (reps, k), rng=rng)
        sizes_a, sizes_b = draw_sizes(m, cv, (reps, k), rng=rng), draw_sizes(m, cv, (reps, k), rng=rng)
    return rng.binomial(sizes_a, theta_a), rng.binomial(sizes_b, theta_b), sizes_a, sizes_b


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Plan one design row (or take its ``K``), simulate its data sets and analyse them.

    Returns long rows ``scenarios, planned, method, stat, est, mcse``: ``scenarios`` is the
    planned ``K`` (cases for ``pi``; per assistant when unpaired; the fixed one of a size cell),
    ``planned`` the plan's own half-width or power at that ``K`` (``alpha`` for a size cell).
    """
    rng = np.random.default_rng(seed_seq)
    reps, m, cv = int(row["nsim"]), int(row["replicas"]), float(row["size_cv"])
    if row["kind"] == "size":
        k = int(row["scenarios"])
        totals_a, totals_b, sizes_a, sizes_b = _two_assistants(row, row["p"], row["p"], SIZE_REPLICATIONS * reps, k,
                                                               rng)
        results = rejection_rows(difference_statistics(totals_a, totals_b, sizes_a, sizes_b, row["design"]),
                                 row["alpha"], "size")
        planned = row["alpha"]
    elif row["kind"] == "difference":
        plan = _plan_of(row)
        k = plan.scenarios
        totals_a, totals_b, sizes_a, sizes_b = _two_assistants(row, row["p"], row["p_b"], reps, k, rng)
        results = rejection_rows(difference_statistics(totals_a, totals_b, sizes_a, sizes_b, row["design"]),
                                 row["alpha"], "power")
        planned = plan.achieved_power
    else:
        plan = _plan_of(row)
        k = plan.cases if row["kind"] == "pi" else plan.scenarios
        sizes = m if cv == 0 else draw_sizes(m, cv, (reps, k), rng=rng)
        totals = draw_cluster_totals(row["p"], row["rho"], reps, k, sizes, rng=rng)
        results = interval_performance(totals, sizes, row["p"], row["rho"], row["confidence"], row["interval"])
        if cv == 0:
            results += exact_interval_coverage(row["p"], row["rho"], k, m, row["confidence"], row["interval"])
        planned = plan.achieved_half_width
    return [{"scenarios": k, "planned": planned, **result} for result in results]



def run_sample_size_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
              nsim: int | None = None, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False, grid=None) -> dict[str, pd.DataFrame]:
    """Run the sample-size study and write its tables (CSV + Markdown), figures and report.

    Writes ``design.csv`` and ``run.json`` (:func:`studies._engine.run_cells`),
    ``validation.csv`` (long: design, ``scenarios, planned, method, stat, est, mcse``),
    ``intervals.*``, ``power.*`` and ``size.*`` (the checks), ``scenarios_grid.*``,
    ``scenarios_by_replicas.*`` and ``scenarios_by_size_cv.*`` (plans), the figures of
    :mod:`figures.sample_size`, ``report.md`` and ``report.html``. The tables are identical for
    any ``n_jobs`` and ``backend``; a stopped run resumes in the same folder
    (:func:`studies._engine.run_cells`); ``force`` recomputes into a folder that holds an earlier
    run (its cells and outputs are removed first). ``grid``, a TOML file or a dict of
    :data:`._design.GRID_KEYS` (the coverage study's keys), replaces the simulated plans and tests by the
    interval plans and size cells of its cross product; it enters ``run-args.json``.
    """
    out_dir = Path(out_dir)
    read = None if grid is None else read_grid(grid, GRID_KEYS)
    design = design_grid(smoke=smoke, nsim=nsim, grid=read)
    facts = {"study": "sample-size", "smoke": smoke, "nsim": int(design["nsim"].iloc[0])}
    if read is not None:  # only when given: a run without a grid resumes as before
        facts["grid"] = read
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="sample-size plans", run_facts=facts,
                     force=force)
    with step("planning and summarising", progress=progress) as say:
        tables = {**planning_tables(), **summarise_validation(long)}
        say("writing the tables, drawing the figures")
        written = _write_outputs(out_dir, long, tables, smoke=smoke)
        say("writing report.md and report.html")
        written += write_reports(out_dir, report_markdown(tables, facts={"seed": seed, **facts}), smoke=smoke,
                                 outputs=written)
    record_outputs(out_dir, written)
    return {"validation": long, **tables}


def _write_outputs(out_dir: Path, long: pd.DataFrame, tables: dict[str, pd.DataFrame], *,
                   smoke: bool = False) -> list[Path]:
    """The study's tables (CSV and Markdown) and figures (PNG and PDF); the paths written. A ``smoke`` run marks
    the figures of its simulations (the plans are exact whatever the run)."""
    from escalation.figures import (
        plot_interval_validation,
        plot_power_validation,
        plot_scenarios_by_replicas,
        plot_scenarios_grid,
    )
    written = write_table(long, out_dir, "validation")
    titles = {"scenarios_grid": "Scenarios K for h = 0.05, m = 5, 95% (Wilson-Kish and normal rule)",
              "scenarios_by_replicas": "Scenarios K against replicas m (p = 0.1, h = 0.05) and the floor",
              "scenarios_by_size_cv": "Scenarios K against the coefficient of variation of the scenario sizes "
                                      "(p = 0.1, h = 0.05; m_bar = m (1 + cv^2))",
              "intervals": "Realised half-width and coverage of each interval plan",
              "power": "Realised power of each power plan, every test",
              "size": "Rejection rate of each test under the null (size)"}
    for name, table in tables.items():
        written += write_table(table, out_dir, name, titles[name])
    written += save_figure(plot_scenarios_grid(tables["scenarios_grid"]), out_dir / "scenarios_grid")
    written += save_figure(plot_scenarios_by_replicas(tables["scenarios_by_replicas"]),
                           out_dir / "scenarios_by_replicas")
    if "intervals" in tables:
        written += save_figure(plot_interval_validation(tables["intervals"]), out_dir / "intervals", smoke=smoke)
    if "power" in tables:
        size = tables.get("size")
        dense = None if size is None else size[(size["p"] == 0.15) & (size["replicas"] == 5)]
        written += save_figure(plot_power_validation(tables["power"], size=dense,
                                                     size_note="\ncells with p = 0.15, m = 5"), out_dir / "power",
                               smoke=smoke)
    return written
