"""``escalation study sample-size``: are the sample-size plans right? Simulate each one."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (RESUME_HELP, Backend, backend_option, check_count, force_option,
                                                n_jobs_option, nsim_option, out_option, scheduler_option,
                                                seed_option, study_arguments)
from escalation.studies import SAMPLE_SIZE_SEED as DEFAULT_SEED


def run_study(out, **options):
    """The study, :func:`escalation.studies.run_sample_size_study`, imported when it runs: ``--help`` imports
    no numerical library."""
    from escalation.studies import run_sample_size_study

    return run_sample_size_study(out, **options)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``sample-size`` to the ``escalation study`` sub-app."""

    @study_app.command("sample-size", epilog=RESUME_HELP, short_help="Every plan of escalation plan, simulated.")
    def sample_size(
        out: Path = out_option("design.csv, run.json, the tables (CSV and Markdown), figures, report.md and "
                               "report.html"),
        smoke: bool = typer.Option(False, "--smoke", help="Thirteen plans and tests, 200 data sets each (800 per "
                                                          "size cell; seconds)."),
        nsim: Optional[int] = nsim_option("default 4000; 200 with --smoke; at least 2; four times that per size "
                                          "cell"),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED, "plan"),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Plans of scenarios and replicas, simulated: half-width and coverage of each interval plan (equal
        and unequal scenario sizes), size and power of every test the planner plans for (z and t), K over
        (p, rho), against replicas with the floor and against the spread of the sizes (findings in
        DIR/report.md).

        Example: escalation study sample-size --out results/sample-size --smoke
        """
        where = "escalation study sample-size"
        check_count(nsim, 2, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **options)
        console().print(f"sample-size study: {tables['validation']['cell'].nunique()} plans and tests simulated in "
                        f"{time.perf_counter() - clock:.1f} s -> {out}; findings in {out / 'report.md'} and "
                        f"{out / 'report.html'}")
