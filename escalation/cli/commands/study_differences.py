"""``escalation study differences``: the coverage of compare's difference intervals and of the mode-B correction."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (RESUME_HELP, Backend, backend_option, check_count, force_option,
                                                n_jobs_option, nsim_option, out_option, scheduler_option,
                                                seed_option, study_arguments)
from escalation.studies import DIFFERENCES_SEED as DEFAULT_SEED


def run_study(out, **options):
    """The study, :func:`escalation.studies.run_differences_study`, imported when it runs: ``--help`` imports
    no numerical library."""
    from escalation.studies import run_differences_study

    return run_differences_study(out, **options)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``differences`` to the ``escalation study`` sub-app."""

    @study_app.command("differences", epilog=RESUME_HELP,
                       short_help="Coverage of compare's difference intervals and of mode B.")
    def differences(
        out: Path = out_option("design.csv, run.json, differences.csv, mode_b.csv, the summary tables (CSV and "
                               "Markdown), figures, report.md and report.html"),
        smoke: bool = typer.Option(False, "--smoke", help="A small grid and 150 (differences) or 300 (mode B) "
                                                          "data sets per cell (seconds)."),
        nsim: Optional[int] = nsim_option("default 2000, in both parts; at least 2"),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Coverage of compare's intervals of a difference (Newcombe with the design effect, the paired
        cluster bootstrap) with paired, clustered data, and of the mode-B corrected rate with replicas (its
        Wald interval against the cluster-robust one); ADEMP write-up in DIR/report.md, with its figures and
        tables in DIR/report.html.

        Example: escalation study differences --out results/differences --smoke
        """
        where = "escalation study differences"
        check_count(nsim, 2, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **options)
        console().print(f"differences study: {tables['differences']['cell'].nunique()} difference cells and "
                        f"{tables['mode_b']['cell'].nunique()} mode-B cells in {time.perf_counter() - clock:.1f} s "
                        f"-> {out / 'summary.md'}; findings in {out / 'report.md'} and {out / 'report.html'}")
