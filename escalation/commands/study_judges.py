"""``escalation study judges``: the judges, their calibration per language, and what a measurement
without a record or without the read-only marks loses. ``escalation study calibration`` is its
old name, still accepted with a notice."""
from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from escalation.commands._study_options import (RESUME_HELP, Backend, backend_option, cluster_arguments,
                                                n_jobs_option, scheduler_option, seed_option)
from escalation.estimators import InputError
from escalation.studies import JUDGES_SEED as DEFAULT_SEED, run_judges_study as run_study

#: The command's old name: still accepted, with a one-line notice on stderr.
OLD_NAME = "calibration"


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``judges`` (and its old name ``calibration``, hidden) to the ``escalation study`` sub-app."""

    def judges(
        out: Path = typer.Option(..., "--out", help="Folder for design.csv, run.json, results.csv, the tables "
                                                    "(calibration.csv, mode_b.csv, ... as CSV and Markdown), "
                                                    "figures and report.md (created if missing)."),
        smoke: bool = typer.Option(False, "--smoke", help="Two pair sizes, two fake-escalation rates and 20 data "
                                                          "sets per cell (seconds)."),
        reps: Optional[int] = typer.Option(None, "--reps", help="Data sets per cell (default 200; 20 with --smoke)."),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """The per-turn judge calibrated per language (Platt, isotonic; ECE, bias, pairs needed), doubt
        measured by runs and paraphrases, the cause judge, under-escalation without a record against
        the truth with its correction, and the read-only notice (findings in DIR/report.md)."""
        where = "escalation study judges"
        if reps is not None and reps < 2:
            raise InputError(f"--reps must be at least 2, got {reps}", source=where)
        cluster = cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, reps=reps, n_jobs=n_jobs, seed=seed, progress=True, **cluster)
        Console().print(f"judges study: {tables['results']['cell'].nunique()} cells in "
                        f"{time.perf_counter() - clock:.1f} s -> {out / 'calibration.csv'}, {out / 'mode_b.csv'}; "
                        f"findings in {out / 'report.md'}")

    study_app.command("judges", epilog=RESUME_HELP)(judges)

    @functools.wraps(judges)  # the same options: typer reads them through __wrapped__
    def calibration(**options) -> None:
        typer.echo(f"note: `escalation study {OLD_NAME}` is now `escalation study judges`", err=True)
        judges(**options)

    calibration.__doc__ = "Old name of `escalation study judges`."
    study_app.command(OLD_NAME, hidden=True, epilog=RESUME_HELP)(calibration)
