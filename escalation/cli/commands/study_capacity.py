"""``escalation study capacity``: the inverted U of oversight (realised protection against the escalation
rate for several numbers of reviewers), and Erlang C / Allen-Cunneen against a SimPy event simulation."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (RESUME_HELP, Backend, backend_option, check_count, force_option,
                                                n_jobs_option, nsim_option, out_option, scheduler_option,
                                                seed_option, study_arguments)

#: The study's root seed: :data:`escalation.studies.CAPACITY_SEED`, repeated here so that ``--help`` imports no
#: numerical library (tests/test_study_capacity.py checks that the two agree).
DEFAULT_SEED = 20261202


def run_study(out, **options):
    """The study, :func:`escalation.studies.run_capacity_study`, imported when it runs."""
    from escalation.studies import run_capacity_study

    return run_capacity_study(out, **options)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``capacity`` to the ``escalation study`` sub-app."""

    @study_app.command("capacity", epilog=RESUME_HELP,
                       short_help="The inverted U of oversight, and the queue formulas against SimPy.")
    def capacity(
        out: Path = out_option("design.csv, run.json, the tables (protection, best, agreement, rates, validation "
                               "as CSV and Markdown), figures, report.md and report.html"),
        smoke: bool = typer.Option(False, "--smoke", help="11 thresholds, 40 data sets and four small queue "
                                                          "configurations (seconds)."),
        nsim: Optional[int] = nsim_option("measured data sets of each assistant's threshold sweep, in cells of at "
                                          "most 50; default 400, 40 with --smoke; at least 2"),
        n_jobs: int = n_jobs_option(),
        seed: int = seed_option(DEFAULT_SEED),
        force: bool = force_option(),
        backend: Backend = backend_option(),
        scheduler: Optional[str] = scheduler_option(),
    ) -> None:
        """Simulated assistants that trade under- against over-escalation through one threshold t (t = 0
        escalates nothing, t = 1 everything), each measured with the clustered Wilson-Kish intervals, put
        through the capacity model (escalation capacity) for R = 1, 2, 3, 5, 8 reviewers at an assumed 60
        conversations an hour, ESC share 0.1 and 4 minutes a review: realised protection (1 - p_u) g(rho)
        against the escalation rate, the best threshold t* per R, how often the measured rates find it, and
        how far pi and the protection agree. Then Erlang C and Allen-Cunneen against a SimPy simulation of
        the same queue (Poisson, bursty and deterministic-review queues, few reviewers, high load), with
        where they fail (findings in DIR/report.md, figures and tables in DIR/report.html).

        Example: escalation study capacity --out results/capacity --smoke
        """
        where = "escalation study capacity"
        check_count(nsim, 2, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        clock = time.perf_counter()
        tables = run_study(out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True, **options)
        best = ", ".join(f"R={r}: t*={t:g}" for r, t in zip(tables["best"]["reviewers"], tables["best"]["t_star"]))
        console().print(f"capacity study in {time.perf_counter() - clock:.1f} s ({best}) -> {out}; findings in "
                        f"{out / 'report.md'} and {out / 'report.html'}")
