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
    Differences, at 95%: ``newcombe_wilson_kish`` (what ``compare --interval wilson-kish`` reports:
    Newcombe's square-and-add interval, :func:`estimators.newcombe_paired_interval`, with each rate's
    ``wilson-kish`` limits from :func:`estimators.clustered_interval` and ``psi`` from
    :func:`estimators.paired_correlation` of the scenario totals), the same with ``wilson-kish-t``,
    ``korn-graubard``, ``beta-binomial-profile`` and ``beta-binomial-bayes`` limits
    (``newcombe_wilson_kish_t`` ..., :data:`NEWCOMBE_LIMITS`; ``compare --interval auto`` takes the
    narrowest of them that holds), ``bootstrap_percentile`` and ``bootstrap_bca``
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

from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import orjson
import pandas as pd

from .._constants import DIFFERENCES_SEED as DEFAULT_SEED
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._performance import FLOOR, MEAN_LEVEL, RERUN_MCSE, TOLERANCE_MCSE
from .._report_files import write_reports
from .._tables import markdown_table, write_table
from .._templates import render
from .._user_methods import CellWithOptions, read_grid, user_functions
from ._cells import (  # noqa: F401
    _difference_cell,
    _stacked,
    difference_intervals,
    mode_b_intervals,
    own_difference_intervals,
    run_cell,
    simulate_mode_b,
    simulate_pairs,
)
from ._design import (  # noqa: F401
    _NAMES,
    BOOTSTRAP_BATCH,
    CONFIDENCE,
    DIFFERENCE_COLUMNS,
    DIFFERENCE_METHODS,
    FAILS_BELOW,
    GRID_KEYS,
    MAX_UNDEFINED,
    MODE_B_COLUMNS,
    MODE_B_METHODS,
    N_RESAMPLES,
    NEWCOMBE_LIMITS,
    OWN_GRID_FINDINGS,
    SENSITIVITY,
    SMOKE_FINDINGS,
    SPECIFICITY,
    VALIDATION_SHARE,
    build_design,
)
from ._summaries import _findings, _validation, failing, own_lines, summaries, usable_mode_b  # noqa: F401

__all__ = ["DEFAULT_SEED", "DIFFERENCE_METHODS", "MODE_B_METHODS", "DIFFERENCE_COLUMNS", "MODE_B_COLUMNS",
           "build_design", "run_cell", "run_differences_study", "difference_intervals", "simulate_pairs",
           "simulate_mode_b", "mode_b_intervals", "summaries", "report_markdown", "SMOKE_FINDINGS", "GRID_KEYS",
           "OWN_GRID_FINDINGS"]


def report_markdown(differences: pd.DataFrame, mode_b: pd.DataFrame, tables: dict, *, seed: int,
                    figures: list[str], cells_seconds: float, smoke: bool, resumed: int = 0,
                    own: list[dict] | None = None, user_grid: bool = False) -> str:
    """The text of ``report.md`` (the template ``differences/report.md.j2``): the ADEMP design, validation,
    findings (:data:`SMOKE_FINDINGS` for a ``smoke`` run, :data:`OWN_GRID_FINDINGS` for a run on a
    researcher's grid) and the summary tables; ``own``, the ``run-args.json`` records of a researcher's
    methods, adds a section on them (:func:`own_lines`)."""
    design = __doc__.split("\n\n", 1)[1].split("\n\nReproducibility", 1)[0]
    return render("differences/report.md.j2", seed=seed, smoke=smoke, difference_cells=differences["cell"].nunique(),
                  difference_nsim=int(differences["nsim"].min()), mode_b_cells=mode_b["cell"].nunique(),
                  mode_b_nsim=int(mode_b["nsim"].iloc[0]), N_RESAMPLES=N_RESAMPLES, cells_seconds=cells_seconds,
                  resumed=resumed, design=design.strip(), validation=_validation(differences, mode_b),
                  names=_NAMES, MAX_UNDEFINED=MAX_UNDEFINED, SMOKE_FINDINGS=SMOKE_FINDINGS,
                  findings=None if smoke or user_grid else _findings(differences, mode_b, tables),
                  OWN_GRID_FINDINGS=OWN_GRID_FINDINGS, user_grid=user_grid,
                  own=own_lines(differences, tables, own or []),
                  FAILS_BELOW=FAILS_BELOW, TOLERANCE_MCSE=TOLERANCE_MCSE, MEAN_LEVEL=MEAN_LEVEL, RERUN_MCSE=RERUN_MCSE,
                  reruns=int(differences.loc[differences["rerun"].eq(True), "cell"].nunique()),
                  rerun_sizes=_sizes(differences),
                  failures=len(tables["failures"]), figures=figures,
                  tables={name: markdown_table(tables[name]) for name in ("recommendation", "summary", "by_scenarios")})


def _sizes(differences: pd.DataFrame) -> str:
    """The data sets of the rerun cells, e.g. ``7500 to 9500 data sets`` (``no more data sets``: none rerun)."""
    sizes = differences.loc[differences["rerun"].eq(True), "nsim"]
    if sizes.empty:
        return "no more data sets"
    low, high = int(sizes.min()), int(sizes.max())
    return f"{low} data sets" if low == high else f"{low} to {high} data sets"


_TITLES = {
    "differences": "Coverage of compare's difference intervals, per cell",
    "mode_b": "Coverage of the mode-B corrected rate, per cell",
    "summary": "Coverage per method",
    "by_scenarios": "Coverage per method and number of scenarios",
    "failures": f"Cells with coverage below {FAILS_BELOW} by more than {TOLERANCE_MCSE:g} MCSE",
    "recommendation": "Methods that hold (no failing cell, mean coverage at least "
                      f"{MEAN_LEVEL}), per number of scenarios",
}


def run_differences_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
              seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False,
              methods: Mapping[str, Callable | str] | None = None, grid=None,
              rerun: bool | None = None) -> dict[str, pd.DataFrame]:
    """Run the differences study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``run.json``, ``differences.csv`` and ``mode_b.csv``
    (one row per method and cell), the summary tables ``summary``, ``by_scenarios``,
    ``failures`` and ``recommendation`` (CSV and Markdown), the figures
    ``differences_coverage`` and ``mode_b_coverage`` (PNG and PDF), ``report.md`` and ``report.html``. ``nsim``
    replaces the data sets per cell of both parts. Returns the tables by name. ``force``
    recomputes into a folder that holds an earlier run (its cells and outputs are removed first,
    :func:`studies._engine.run_cells`).

    A researcher's own (checked before anything is written, and recorded in ``run-args.json``):
    ``methods``, ``{name: f}`` with ``f(totals_a, sizes_a, totals_b, sizes_b, confidence) -> (low, high)``
    of ``p_b - p_a`` (or ``"MODULE:FUNCTION"``, :mod:`studies._user_methods`), run beside the study's
    difference intervals on the same data sets; ``grid``, a TOML file or a dict of :data:`GRID_KEYS`,
    whose full cross product replaces the design of both parts.

    ``rerun`` reruns the difference cells where an interval's coverage is borderline under the holds rule
    (:mod:`studies._performance`) until its MCSE is at most :data:`studies._performance.RERUN_MCSE`
    (:func:`run_cell`); None (the default) reruns them except in a ``smoke`` run.
    """
    out_dir = Path(out_dir)
    own = user_functions(methods, builtin=DIFFERENCE_METHODS + MODE_B_METHODS, statistics=False)
    read = None if grid is None else read_grid(grid, GRID_KEYS)
    design = build_design(smoke=smoke, nsim=nsim, grid=read)
    if own:  # the researcher's methods on two data sets of the first cell, before anything is written
        row = design.iloc[0].to_dict()
        own_difference_intervals(own, *simulate_pairs(row, np.random.default_rng(0), 2), int(row["replicas"]))
    rerun = not smoke if rerun is None else bool(rerun)
    facts = {"study": "differences", "smoke": smoke, "nsim": None if nsim is None else int(nsim),
             "n_resamples": N_RESAMPLES, "confidence": CONFIDENCE, "bootstrap_batch": BOOTSTRAP_BATCH,
             "rerun": {"floor": FLOOR, "tolerance_mcse": TOLERANCE_MCSE, "mcse": RERUN_MCSE} if rerun else False}
    # the researcher's options enter the run's arguments only when given: a run without them resumes as before
    facts |= {key: value for key, value in (("methods", [m.identity() for m in own]), ("grid", read)) if value}
    options: dict[str, Any] = {"methods": own} if own else {}
    options |= {"rerun": True} if rerun else {}
    cell = CellWithOptions(run_cell, options) if options else run_cell
    long = run_cells(design, cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
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
        style = {"names": _NAMES | {m.name: f"{m.name} (yours)" for m in own}, "nominal": CONFIDENCE,
                 "fails_below": FAILS_BELOW}
        figures = save_figure(difference_coverage(differences, methods=DIFFERENCE_METHODS + tuple(m.name for m in own),
                                                  **style),
                              out_dir / "differences_coverage", smoke=smoke)
        figures += save_figure(mode_b_coverage(
            mode_b, usable_mode_b(mode_b), methods=MODE_B_METHODS,
            title=(f"Coverage of the mode-B corrected rate (Se = {SENSITIVITY:g}, Sp = {SPECIFICITY:g}, validation "
                   f"share {VALIDATION_SHARE:g}; coverage of the defined intervals, where at least "
                   f"{1 - MAX_UNDEFINED:.0%} are defined)"), **style), out_dir / "mode_b_coverage", smoke=smoke)
        say("writing report.md and report.html")
        text = report_markdown(differences, mode_b, tables, seed=seed, cells_seconds=run["cells_seconds"],
                               smoke=smoke, resumed=int(run["cells_resumed"]),
                               figures=[f.name for f in figures if f.suffix == ".png"],
                               own=[m.identity() for m in own], user_grid=read is not None)
        written += figures
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {"differences": differences, "mode_b": mode_b, **tables}
