"""Options every study command shares: ``--n-jobs``, ``--seed`` and where its cells run
(``--backend``, ``--scheduler``).

Each study command declares ``backend: Backend = backend_option()`` and
``scheduler: Optional[str] = scheduler_option()`` and passes
``**cluster_arguments(backend, scheduler, n_jobs=..., seed=..., source=...)`` to its ``run_study``, which hands them to
:func:`studies._engine.run_cells`.
"""
from __future__ import annotations

from enum import Enum

import typer

from escalation.estimators import InputError

__all__ = ["Backend", "n_jobs_option", "seed_option", "backend_option", "scheduler_option", "cluster_arguments",
           "RESUME_HELP"]

#: Sentence for a study command's docstring: how a stopped run resumes.
RESUME_HELP = ("Each finished cell is saved in DIR/cells/ as it completes: run the same command again to resume "
               "a stopped run (other arguments into the same DIR are refused).")


class Backend(str, Enum):
    """Where the cells of a study run."""

    local = "local"
    dask = "dask"


def n_jobs_option():
    """``--n-jobs N`` (default 1; -1 = all cores)."""
    return typer.Option(1, "--n-jobs", help="Parallel workers (joblib; -1 = all cores). Results do not depend on it.")


def seed_option(default: int, unit: str = "cell"):
    """``--seed S``: the root seed from which every ``unit`` gets its own child seed."""
    return typer.Option(default, "--seed", help=f"Root seed; every {unit} gets its own child seed.")


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


def cluster_arguments(backend: Backend, scheduler: str | None, *, n_jobs: int, seed: int, source: str) -> dict:
    """``{"backend": ..., "scheduler": ...}`` for ``run_study``, after checking the options every study
    shares: ``--n-jobs`` positive or -1, ``--seed`` >= 0, ``--scheduler`` only with ``--backend dask``."""
    if n_jobs == 0 or n_jobs < -1:
        raise InputError(f"--n-jobs must be a positive number of workers or -1, got {n_jobs}", source=source)
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed}", source=source)
    if scheduler is not None and backend is not Backend.dask:
        raise InputError("--scheduler needs --backend dask", source=source)
    if scheduler is not None and not scheduler.strip():
        raise InputError("--scheduler needs an address, e.g. tcp://10.0.0.5:8786", source=source)
    return {"backend": backend.value, "scheduler": scheduler}
