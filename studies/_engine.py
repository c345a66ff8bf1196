"""The generic Monte Carlo study runner: a design grid in, a long results table out.

A study is a design (one row per cell: the conditions) and a cell function that simulates and
analyses one cell. ``run_cells`` writes the design before anything runs, gives every cell its own
``numpy.random.SeedSequence`` spawned from the root seed (cell ``i`` gets child ``i``, whatever
the number of workers), runs the cells through joblib and returns the results in design order.
So a study is bit-identical for any ``n_jobs`` and any cell can be rerun alone from the root seed.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import orjson
import pandas as pd
from joblib import Parallel, delayed
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from escalation import __version__

__all__ = ["run_cells", "cell_seed"]

CellFunction = Callable[[dict, np.random.SeedSequence], list[dict]]


def cell_seed(seed: int, cell: int) -> np.random.SeedSequence:
    """The seed sequence of design cell ``cell`` under root ``seed`` (child ``cell`` of the root)."""
    return np.random.SeedSequence(seed, spawn_key=(int(cell),))


def run_cells(design: pd.DataFrame, cell_fn: CellFunction, *, seed: int, n_jobs: int = 1,
              out_dir: str | Path, progress: bool = True, backend: str = "loky",
              description: str = "cells", run_facts: dict | None = None) -> pd.DataFrame:
    """Run every design cell through ``cell_fn`` in parallel and collect a long table.

    Parameters
    ----------
    design : pandas.DataFrame
        One row per cell; its columns are the conditions passed to ``cell_fn`` as a dict.
    cell_fn : callable
        ``cell_fn(row: dict, seed_seq: SeedSequence) -> list[dict]``: simulates and analyses
        one cell and returns its result rows. Must be picklable (a module-level function).
    seed : int
        Root seed; cell ``i`` uses ``cell_seed(seed, i)``.
    n_jobs : int
        Number of joblib workers (``-1``: all cores). Results do not depend on it.
    out_dir : str or Path
        Folder for ``design.csv`` (written before the run starts, with a ``cell`` column) and
        ``run.json`` (seed, version, start and end time, elapsed seconds, n_jobs, backend).
    progress : bool
        Show a rich progress bar over cells.
    backend : str
        joblib backend (default ``"loky"``); another, such as dask, can be plugged in through
        ``joblib.parallel_config``.
    description : str
        Label of the progress bar.
    run_facts : dict, optional
        Extra facts recorded in ``run.json`` (e.g. the study name and size).

    Returns
    -------
    pandas.DataFrame
        One row per result dict: the design columns (``cell`` first), then the result fields,
        in design order.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    design = design.reset_index(drop=True)
    design.insert(0, "cell", np.arange(len(design)))
    design.to_csv(out_dir / "design.csv", index=False)
    rows = design.to_dict(orient="records")
    started, clock = datetime.now(timezone.utc), time.perf_counter()

    def indexed(i: int, row: dict) -> tuple[int, list[dict]]:
        return i, cell_fn(row, cell_seed(seed, i))

    results: list[list[dict] | None] = [None] * len(rows)
    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), disable=not progress) as bar:
        task = bar.add_task(description, total=len(rows))
        for i, cell_results in parallel(delayed(indexed)(i, row) for i, row in enumerate(rows)):
            results[i] = cell_results
            bar.advance(task)
    finished = datetime.now(timezone.utc)
    facts = {"seed": seed, "version": __version__, "started": started.isoformat(timespec="seconds"),
             "finished": finished.isoformat(timespec="seconds"),
             "elapsed_seconds": round(time.perf_counter() - clock, 3), "n_jobs": n_jobs, "backend": backend,
             "cells": len(rows), **(run_facts or {})}
    (out_dir / "run.json").write_bytes(orjson.dumps(facts, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    table = [{**row, **result} for row, cell_results in zip(rows, results) for result in cell_results]
    return pd.DataFrame(table)
