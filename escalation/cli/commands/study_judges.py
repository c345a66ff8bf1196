"""``escalation study judges``: the judges, their calibration per language, and what a measurement
without a record or without the read-only marks loses. ``escalation study calibration`` is its
old name, and ``--reps`` the old name of ``--nsim``: both still accepted with a notice."""
from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (RESUME_HELP, Backend, backend_option, check_count, force_option,
                                                n_jobs_option, nsim_option, out_option, scheduler_option,
                                                seed_option, study_arguments)
from escalation.estimators.records import InputError
from escalation.studies import JUDGES_SEED as DEFAULT_SEED


def run_study(out, **options):
    """The study, :func:`escalation.studies.run_judges_study`, imported when it runs: ``--help`` imports
    no numerical library."""
    from escalation.studies import run_judges_study

    return run_judges_study(out, **options)


#: The command's old name: still accepted, with a one-line notice on stderr.
OLD_NAME = "calibration"
#: The old name of ``--nsim`` here (the other studies always said ``--nsim``): hidden, with a notice.
OLD_NSIM = "--reps"


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``judges`` (and its old name ``calibration``, hidden) to the ``escalation study`` sub-app."""

    def judges(
        out: Path = out_option("design.csv, run.json, results.csv, the tables (calibration.csv, mode_b.csv, ... "
                               "as CSV and Markdown), figures, report.md and report.html"),
        smoke: bool = typer.Option(False, "--smoke", help="Two pair sizes, two fake-escalation rates and 20 data "
                                                          "sets per cell (seconds)."),
        nsim: Optional[int] = nsim_option("default 200; 20 with --smoke; at least 2; a doubt or cause cell is "
                                          "one sample"),
        reps: Optional[int] = typer.Option(None, OLD_NSIM, metavar="N", hidden=True,
                                           help="Old name of --nsim."),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """The per-turn judge calibrated per language (Platt, isotonic; ECE, bias, pairs needed), doubt
        measured by runs and paraphrases, the cause judge, under-escalation without a record against
        the truth with its correction, and the read-only notice (findings in DIR/report.md, with the figures
        and tables in DIR/report.html).

        Example: escalation study judges --out results/judges --smoke --nsim 4
        """
        where = "escalation study judges"
        if reps is not None:
            if nsim is not None:
                raise InputError(f"give --nsim only ({OLD_NSIM} is its old name)", source=where)
            typer.echo(f"notice: {OLD_NSIM} is now called --nsim", err=True)
            nsim = reps
        check_count(nsim, 2, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **options)
        console().print(f"judges study: {tables['results']['cell'].nunique()} cells in "
                        f"{time.perf_counter() - clock:.1f} s -> {out / 'calibration.csv'}, {out / 'mode_b.csv'}; "
                        f"findings in {out / 'report.md'} and {out / 'report.html'}")

    study_app.command("judges", epilog=RESUME_HELP,
                      short_help="The judges per language, and mode B against the truth.")(judges)

    @functools.wraps(judges)  # the same options: typer reads them through __wrapped__
    def calibration(**options) -> None:
        typer.echo(f"note: `escalation study {OLD_NAME}` is now `escalation study judges`", err=True)
        judges(**options)

    calibration.__doc__ = "Old name of `escalation study judges`."
    study_app.command(OLD_NAME, hidden=True, epilog=RESUME_HELP)(calibration)
