"""``escalation study coverage``: the coverage study of every clustered interval (``--interval``) and two oracles."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from escalation.commands._study_options import (RESUME_HELP, Backend, backend_option, cluster_arguments,
                                                n_jobs_option, scheduler_option, seed_option)
from escalation.estimators import InputError
from escalation.studies import COVERAGE_SEED as DEFAULT_SEED, COVERAGE_METHODS as METHODS, run_coverage_study as run_study


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``coverage`` to the ``escalation study`` sub-app."""

    @study_app.command("coverage", epilog=RESUME_HELP)
    def coverage(
        out: Path = typer.Option(..., "--out", help="Folder for design.csv, coverage.csv, run.json, figures and "
                                                    "report.md (created if missing)."),
        smoke: bool = typer.Option(False, "--smoke", help="A small grid (40 cells) and 200 replications per "
                                                          "cell (well under a minute)."),
        nsim: Optional[int] = typer.Option(None, "--nsim", help="Replications per design cell "
                                                                 "(default 2000; 200 with --smoke). The bootstraps "
                                                                 "use at most 500 with unequal sizes."),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Coverage of every interval of --interval and two oracles on scenarios of equal and unequal size,
        with exact coverage wherever it can be computed, and which interval to choose for how many scenarios
        and replicas (ADEMP write-up in DIR/report.md)."""
        if nsim is not None and nsim < 1:
            raise InputError(f"--nsim must be at least 1, got {nsim}", source="escalation study coverage")
        cluster = cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source="escalation study coverage")
        table = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **cluster)
        Console().print(f"coverage study: {len(table) // len(METHODS)} cells x {len(METHODS)} methods -> "
                        f"{out / 'coverage.csv'}; findings in {out / 'report.md'}")
