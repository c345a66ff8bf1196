"""Options every study command shares: ``--out``, ``--nsim``, ``--n-jobs``, ``--seed``, ``--force`` and
where its cells run (``--backend``, ``--scheduler``); ``simulate`` shares ``--n-jobs`` and ``--out``.

Each study command declares ``out: Path = out_option(...)``, ``force: bool = force_option()``,
``backend: Backend = backend_option()`` and ``scheduler: Optional[str] = scheduler_option()``,
checks them with :func:`study_arguments` before anything is written, and passes what it returns
(``backend``, ``scheduler``, ``force``) to its ``run_study``, which hands them to
:func:`studies._engine.run_cells`. One name for one thing: ``--nsim N`` is the number of data sets
(Monte Carlo replications) per design cell in every study, ``--out DIR`` the folder a command
writes, ``--seed SEED`` the root seed, ``--n-jobs N`` the parallel workers.
"""
from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

import typer

from escalation.estimators.records import InputError

__all__ = ["Backend", "out_option", "nsim_option", "n_jobs_option", "seed_option", "force_option", "backend_option",
           "scheduler_option", "check_n_jobs", "check_count", "study_arguments",
           "cluster_arguments", "RESUME_HELP", "Generator", "method_option", "grid_option", "generator_option",
           "from_run_option", "own_methods"]

#: The epilog of every study command: how a stopped run resumes, and --force.
RESUME_HELP = ("Each finished cell is saved in DIR/cells/ as it completes: run the same command again to resume a "
               "stopped run. A DIR that holds a run with other arguments is refused; --force recomputes into it.")


class Backend(str, Enum):
    """Where the cells of a study run."""

    local = "local"
    dask = "dask"


class Generator(str, Enum):
    """The data-generating models ``study coverage --generator`` names (``studies.coverage._generators``)."""

    beta_binomial = "beta-binomial"
    logit_normal = "logit-normal"


def out_option(what: str):
    """``--out DIR`` (required): ``what`` the folder receives."""
    return typer.Option(..., "--out", metavar="DIR", help=f"Folder for {what} (created if missing).")


#: The most data sets per design cell: 50 times the usual 2000, whose Monte Carlo standard error of a
#: 95% coverage is already 0.005 (0.0007 here); the work and the memory of a cell grow with it.
MAX_NSIM = 100_000
#: Workers per core at most: each is a process that imports the project (some 150 MB).
WORKERS_PER_CORE = 4


def nsim_option(default: str):
    """``--nsim N``: data sets per design cell; ``default`` says how many without it."""
    return typer.Option(None, "--nsim", metavar="N", help=f"Data sets (Monte Carlo replications) per design cell "
                                                          f"({default}; at most {MAX_NSIM:,}).")


def n_jobs_option(independent: str = "Results do not depend on it.", default: int = 1):
    """``--n-jobs N`` (default ``default``, 1 unless told; -1 = all cores); ``independent`` says what does not
    depend on it."""
    return typer.Option(default, "--n-jobs", metavar="N", help=f"Parallel workers (-1: all cores; at most "
                                                               f"{WORKERS_PER_CORE} per core). {independent}")


def seed_option(default: int, unit: str = "cell"):
    """``--seed SEED``: the root seed from which every ``unit`` gets its own child seed."""
    return typer.Option(default, "--seed", metavar="SEED", help=f"Root seed (>= 0); every {unit} gets its own "
                                                                "child seed.")


def force_option():
    """``--force``: recompute into a folder that holds an earlier run."""
    return typer.Option(False, "--force", help="Recompute into a DIR that holds an earlier run, with other "
                                               "arguments or the same: its cells and outputs are removed first "
                                               "(other files stay).")


def backend_option():
    """``--backend local|dask``."""
    return typer.Option(Backend.local, "--backend",
                        help="Where the cells run: local (--n-jobs processes on this machine) or dask (a Dask "
                             "cluster: the one at --scheduler, else a local one of --n-jobs workers). "
                             "Results do not depend on it.")


def scheduler_option():
    """``--scheduler ADDRESS``."""
    return typer.Option(None, "--scheduler", metavar="ADDRESS",
                        help="Address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (with --backend "
                             "dask; its workers need this package installed).")


def method_option(contract: str):
    """``--method NAME=MODULE:FUNCTION`` (repeatable): a researcher's method of the ``contract`` shown."""
    return typer.Option(None, "--method", metavar="NAME=MODULE:FUNCTION",
                        help=f"Your own method, run beside the study's on the same data sets: {contract}. MODULE is "
                             "an importable module or the path of a .py file; repeat for several. Its name, module "
                             "and source file's SHA-256 enter DIR/run-args.json (a run resumes only with the same).")


def grid_option(what: str):
    """``--grid FILE``: a TOML grid that replaces the study's design; ``what`` says which keys."""
    return typer.Option(None, "--grid", metavar="FILE", help=f"A TOML grid that replaces the study's design by the "
                                                             f"full cross product of its lists: {what}.")


def generator_option():
    """``--generator NAME``: the coverage study's data-generating model."""
    return typer.Option(Generator.beta_binomial, "--generator",
                        help="The data-generating model: beta-binomial (the study's; exact coverage where computable) "
                             "or logit-normal (scenario effects normal on the logit scale, rho their latent-scale "
                             "ICC; Monte Carlo only).")


def from_run_option():
    """``--from-run DIR``: scenarios drawn from a scored folder's per-scenario rates."""
    return typer.Option(None, "--from-run", metavar="DIR",
                        help="A folder of `escalation score --out`: each simulated scenario draws its "
                             "under-escalation rate from that run's per-scenario rates (with replacement); p and rho "
                             "are the run's, the estimand p_u, every method Monte Carlo.")


def own_methods(given: list[str] | None, *, source: str = "--method") -> dict[str, str] | None:
    """``{NAME: "MODULE:FUNCTION"}`` of the ``--method`` options (None when none is given); a name given twice, or
    an option that is not NAME=MODULE:FUNCTION, is an :class:`InputError`."""
    if not given:
        return None
    methods: dict[str, str] = {}
    for text in given:
        name, equals, spec = text.partition("=")
        if not equals or not name or not spec:
            raise InputError(f"{text!r} is not NAME=MODULE:FUNCTION", source=source)
        if name in methods:
            raise InputError(f"method name {name!r} is given twice", source=source)
        methods[name] = spec
    return methods


def check_n_jobs(n_jobs: int, *, source: str) -> None:
    """``--n-jobs`` must be a positive number of workers, at most :data:`WORKERS_PER_CORE` per core, or -1."""
    if n_jobs == 0 or n_jobs < -1:
        raise InputError(f"--n-jobs must be a positive number of workers or -1, got {n_jobs}", source=source)
    most = WORKERS_PER_CORE * (os.cpu_count() or 1)
    if n_jobs > most:
        raise InputError(f"--n-jobs must be at most {most} ({WORKERS_PER_CORE} per core of this machine; -1 uses "
                         f"one per core), got {n_jobs}", source=source)


def check_count(value: int | None, least: int, *, source: str, flag: str = "--nsim", most: int = MAX_NSIM) -> None:
    """``flag`` (``--nsim`` unless told; when given) must be at least ``least`` and at most ``most``."""
    if value is not None and value < least:
        raise InputError(f"{flag} must be at least {least}, got {value}", source=source)
    if value is not None and value > most:
        raise InputError(f"{flag} must be at most {most:,}, got {value}", source=source)


def cluster_arguments(backend: Backend, scheduler: str | None, *, n_jobs: int, seed: int, source: str) -> dict:
    """``{"backend": ..., "scheduler": ...}`` for ``run_study``, after checking the options every study
    shares: ``--n-jobs`` positive or -1, ``--seed`` >= 0, ``--scheduler`` only with ``--backend dask``."""
    check_n_jobs(n_jobs, source=source)
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed}", source=source)
    if scheduler is not None and backend is not Backend.dask:
        raise InputError("--scheduler needs --backend dask", source=source)
    if scheduler is not None and not scheduler.strip():
        raise InputError("--scheduler needs an address, e.g. tcp://10.0.0.5:8786", source=source)
    return {"backend": backend.value, "scheduler": scheduler}


def study_arguments(out: Path, backend: Backend, scheduler: str | None, *, n_jobs: int, seed: int, force: bool,
                    source: str) -> dict:
    """Check the options every study shares, and ``--out``, before anything is written; the keyword
    arguments of ``run_study``: ``backend``, ``scheduler`` and ``force``."""
    from escalation.estimators.records import check_out_dir

    cluster = cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source=source)
    check_out_dir(out)
    return {**cluster, "force": force}
