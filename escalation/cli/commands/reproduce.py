"""``escalation reproduce``: every table and figure of the paper, from one command."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console, plain
from escalation.cli.commands._study_options import (
    RESUME_HELP,
    Backend,
    backend_option,
    check_count,
    force_option,
    n_jobs_option,
    out_option,
    scheduler_option,
    seed_option,
    study_arguments,
)
from escalation.studies import EXPECTED_PAIRS, REPRODUCE_SEED as DEFAULT_SEED, SMOKE_EXPECTED_PAIRS


def run_study(out, **options):
    """The study, :func:`escalation.studies.reproduce`, imported when it runs: ``--help`` imports
    no numerical library."""
    from escalation.studies import reproduce

    return reproduce(out, **options)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``reproduce`` to the top-level app."""

    @app.command("reproduce", epilog=RESUME_HELP, short_help="The paper's tables and figures, into one folder.")
    def reproduce(
        out: Path = out_option("the tables (CSV and Markdown), figures (PNG and PDF), design.csv, run.json, "
                               "report.md and report.html (the report with its figures and tables, one file)"),
        smoke: bool = typer.Option(False, "--smoke", help=f"Expected values from {SMOKE_EXPECTED_PAIRS:,} pairs per "
                                                          f"profile instead of {EXPECTED_PAIRS:,} (a few seconds; "
                                                          "for tests)."),
        seed: int = seed_option(DEFAULT_SEED, "simulation run"),
        n_jobs: int = n_jobs_option("The tables do not depend on it.", default=-1),
        expected_pairs: Optional[int] = typer.Option(None, "--expected-pairs", metavar="N",
                                                     help="Paired cases per profile for the expected values "
                                                          f"(default {EXPECTED_PAIRS:,}; {SMOKE_EXPECTED_PAIRS:,} "
                                                          f"with --smoke; 1 to {100 * EXPECTED_PAIRS:,})."),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Reproduce the paper's tables and figures: the worked example, the profile table with 88 paired cases
        and the expected values, observation without a record, the implementation errors of SPEC 9, the base
        metric and a missing read-only mark. DIR/report.md ties them together; DIR/report.html shows it with
        the figures and tables.

        Example: escalation reproduce --out results/ --n-jobs 2
        """
        source = "escalation reproduce"
        check_count(expected_pairs, 1, source=source, flag="--expected-pairs", most=100 * EXPECTED_PAIRS)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=source)
        tables = run_study(out, smoke=smoke, seed=seed, n_jobs=n_jobs, expected_pairs=expected_pairs, progress=True,
                           **options)
        checks = tables["rates"][tables["rates"]["within_tolerance"] != ""]
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        resumed = int(run.get("cells_resumed", 0))
        say = console().print
        if resumed:
            say(f"resumed the run in {plain(out, None)}: {resumed} of its {run['cells']} simulation cells reused, "
                f"{run['cells'] - resumed} computed (--force computes them all again)", soft_wrap=True)
        say(f"reproduced the paper: {int((checks['within_tolerance'] == 'yes').sum())} of {len(checks)} expected "
            "values within tolerance of the paper", soft_wrap=True)
        say(f"wrote the tables, the figures, {plain(out / 'report.md', None)} and {plain(out / 'report.html', None)}",
            soft_wrap=True)
