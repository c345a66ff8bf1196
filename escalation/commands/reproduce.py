"""``escalation reproduce``: every table and figure of the paper, from one command."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from escalation.commands._study_options import (RESUME_HELP, Backend, backend_option, cluster_arguments,
                                                scheduler_option)
from escalation.estimators import InputError
from escalation.studies import REPRODUCE_SEED as DEFAULT_SEED, EXPECTED_PAIRS, SMOKE_EXPECTED_PAIRS, reproduce as run_study


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``reproduce`` to the top-level app."""

    @app.command("reproduce", epilog=RESUME_HELP)
    def reproduce(
        out: Path = typer.Option(..., "--out", help="Folder for the tables (CSV and Markdown), figures (PNG and "
                                                    "PDF), design.csv, run.json and report.md (created if missing)."),
        smoke: bool = typer.Option(False, "--smoke", help=f"Expected values from {SMOKE_EXPECTED_PAIRS:,} pairs per "
                                                          f"profile instead of {EXPECTED_PAIRS:,} (a few seconds; "
                                                          "for tests)."),
        seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Root seed; every simulation run gets its own child "
                                                              "seed."),
        n_jobs: int = typer.Option(1, "--n-jobs", help="Parallel workers (joblib; -1 = all cores). "
                                                       "The tables do not depend on it."),
        expected_pairs: Optional[int] = typer.Option(None, "--expected-pairs",
                                                     help="Paired cases per profile for the expected values "
                                                          f"(default {EXPECTED_PAIRS:,}; {SMOKE_EXPECTED_PAIRS:,} "
                                                          "with --smoke)."),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Reproduce the paper's tables and figures: the worked example, the profile table with 88 paired cases
        and the expected values, observation without a record, the eleven implementation errors, the base
        metric and a missing read-only mark. DIR/report.md ties them together.

        Example: escalation reproduce --out results/ --n-jobs 2
        """
        source = "escalation reproduce"
        if expected_pairs is not None and expected_pairs < 1:
            raise InputError(f"--expected-pairs must be at least 1, got {expected_pairs}", source=source)
        if out.exists() and not out.is_dir():
            raise InputError("exists and is not a folder", source=str(out))
        cluster = cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source=source)
        tables = run_study(out, smoke=smoke, seed=seed, n_jobs=n_jobs, expected_pairs=expected_pairs, progress=True,
                           **cluster)
        checks = tables["rates"][tables["rates"]["within_tolerance"] != ""]
        Console().print(f"reproduced the paper: {int((checks['within_tolerance'] == 'yes').sum())} of {len(checks)} "
                        f"expected values within tolerance of the paper; tables, figures and {out / 'report.md'}")
