"""``escalation study calibration``: the judges, their calibration per language, and the bias of
observation without a record."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from escalation.commands._study_options import (RESUME_HELP, Backend, backend_option, cluster_arguments,
                                                scheduler_option)
from escalation.estimators import InputError
from escalation.studies import CALIBRATION_SEED as DEFAULT_SEED, run_calibration_study as run_study


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``calibration`` to the ``escalation study`` sub-app."""

    @study_app.command("calibration", epilog=RESUME_HELP)
    def calibration(
        out: Path = typer.Option(..., "--out", help="Folder for design.csv, run.json, results.csv, the tables "
                                                    "(calibration.csv, mode_b.csv, ... as CSV and Markdown), "
                                                    "figures and report.md (created if missing)."),
        smoke: bool = typer.Option(False, "--smoke", help="Two pair sizes, two fake-escalation rates and 20 data "
                                                          "sets per cell (seconds)."),
        reps: Optional[int] = typer.Option(None, "--reps", help="Data sets per cell (default 200; 20 with --smoke)."),
        n_jobs: int = typer.Option(1, "--n-jobs", help="Parallel workers (joblib; -1 = all cores). "
                                                       "Results do not depend on it."),
        seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Root seed; every cell gets its own child seed."),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """The per-turn judge calibrated per language (Platt, isotonic; ECE, bias, pairs needed), doubt
        measured by runs and paraphrases, the cause judge, under-escalation without a record against
        the truth with its correction, and the read-only notice (findings in DIR/report.md)."""
        where = "escalation study calibration"
        if reps is not None and reps < 2:
            raise InputError(f"--reps must be at least 2, got {reps}", source=where)
        cluster = cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, reps=reps, n_jobs=n_jobs, seed=seed, progress=True, **cluster)
        Console().print(f"calibration study: {tables['results']['cell'].nunique()} cells in "
                        f"{time.perf_counter() - clock:.1f} s -> {out / 'calibration.csv'}, {out / 'mode_b.csv'}; "
                        f"findings in {out / 'report.md'}")
