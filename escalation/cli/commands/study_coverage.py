"""``escalation study coverage``: the coverage study of every clustered interval (``--interval``) and two oracles."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (RESUME_HELP, Backend, backend_option, check_count, force_option,
                                                n_jobs_option, nsim_option, out_option, scheduler_option,
                                                seed_option, study_arguments)
from escalation.studies import COVERAGE_SEED as DEFAULT_SEED, COVERAGE_METHODS as METHODS


def run_study(out, **options):
    """The study, :func:`escalation.studies.run_coverage_study`, imported when it runs: ``--help`` imports
    no numerical library."""
    from escalation.studies import run_coverage_study

    return run_coverage_study(out, **options)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``coverage`` to the ``escalation study`` sub-app."""

    @study_app.command("coverage", epilog=RESUME_HELP, short_help="Coverage of every --interval, and which to choose.")
    def coverage(
        out: Path = out_option("design.csv, coverage.csv, the summary tables, run.json, figures, report.md and "
                               "report.html"),
        smoke: bool = typer.Option(False, "--smoke", help="A small grid (40 cells) and 200 data sets per cell "
                                                          "(about 20 seconds)."),
        nsim: Optional[int] = nsim_option("default 2000; 200 with --smoke; at least 1; the bootstraps use at "
                                          "most 500 with unequal sizes"),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Coverage of every interval of --interval and two oracles on scenarios of equal and unequal size,
        with exact coverage wherever it can be computed, and which interval to choose for how many scenarios
        and replicas (ADEMP write-up in DIR/report.md; DIR/report.html shows it with its figures and tables).

        Example: escalation study coverage --out results/coverage --smoke --n-jobs 2
        """
        where = "escalation study coverage"
        check_count(nsim, 1, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        table = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **options)
        console().print(f"coverage study: {len(table) // len(METHODS)} cells x {len(METHODS)} methods -> "
                        f"{out / 'coverage.csv'}; findings in {out / 'report.md'} and {out / 'report.html'}")
