"""The generic Monte Carlo study runner: a design grid in, a long results table out.

A study is a design (one row per cell: the conditions) and a cell function that simulates and
analyses one cell. ``run_cells`` writes the design before anything runs, gives every cell its own
``numpy.random.SeedSequence`` spawned from the root seed (cell ``i`` gets child ``i``, whatever
the number of workers), runs the cells through joblib and returns the results in design order.
So a study is bit-identical for any ``n_jobs`` and any backend, and any cell can be rerun alone
from the root seed.

Where the cells run: ``backend="local"`` (joblib's loky processes on this machine) or
``backend="dask"`` (joblib's Dask backend on a ``distributed`` cluster: the scheduler at
``scheduler``, else a ``LocalCluster`` started for the run and shut down after it).

Resume: each finished cell is written at once to ``OUT/cells/<cell>.json`` and the run's
arguments to ``OUT/run-args.json``. A run into a folder that holds a run with the same arguments
skips the cells already there; one with other arguments is refused, unless ``force=True``
(``--force``): the earlier run's files are then removed and every cell is computed again. The
table is always built from the cells as written (the JSON keeps floats exact, NaN included), so a
resumed run gives the very table of an uninterrupted one. Every file is written to a temporary
name and renamed.

What the engine owns in ``OUT``: ``run-args.json``, ``design.csv``, ``run.json``, the cell files
``cells/NNNNNN.json`` and the outputs a study lists in ``run.json`` with :func:`record_outputs`
(its tables, figures and report). ``force`` removes those and nothing else: a file a person put in
the folder stays.

A failed run leaves no folder it created (:func:`escalation.estimators.records.output_folder`): when no
cell finished, the files it wrote are removed and so are the folders it made. Once a cell has
finished the folder stays, so the same command resumes it.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, cast

import numpy as np
import orjson
import pandas as pd
from joblib import Parallel, delayed, parallel_config
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from escalation import __version__
from escalation.estimators.metric import BACKENDS, dask_client
from escalation.estimators.records import InputError, output_folder, remove_stale_temporaries, write_atomic
from escalation.estimators.stats import check_choice, refuse

__all__ = ["run_cells", "record_outputs", "step", "cell_seed", "BACKENDS", "CELLS_DIR", "RUN_ARGS", "RUN_FACTS",
           "DESIGN"]

CellFunction = Callable[[dict, np.random.SeedSequence], list[dict]]

#: Subfolder of the output folder with one JSON file per finished cell.
CELLS_DIR = "cells"
#: The run's arguments, compared when a run resumes in the same folder.
RUN_ARGS = "run-args.json"
#: The run's facts (times, workers, cells resumed) and the outputs the study wrote.
RUN_FACTS = "run.json"
#: The design, one row per cell, written before the first cell runs.
DESIGN = "design.csv"
#: What tells the user how to go on when a folder holds another run.
_WAYS_ON = ("run the same command with that run's arguments to resume it, add --force to recompute into this "
            "folder (its earlier cells and outputs are removed), or give another --out folder")


def cell_seed(seed: int, cell: int) -> np.random.SeedSequence:
    """The seed sequence of design cell ``cell`` under root ``seed`` (child ``cell`` of the root)."""
    return np.random.SeedSequence(seed, spawn_key=(int(cell),))


def _plain(value):
    """JSON form of the numpy scalars and arrays a cell may return."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"a cell returned a {type(value).__name__}, which a cell file cannot hold")


def _cell_bytes(cell: int, results: list[dict]) -> bytes:
    """A finished cell as JSON; ``NaN`` and ``Infinity`` are written as such, floats exactly."""
    return json.dumps({"cell": cell, "results": results}, default=_plain, allow_nan=True,
                      separators=(",", ":")).encode("ascii")


def _cell_path(out_dir: Path, cell: int) -> Path:
    return out_dir / CELLS_DIR / f"{cell:06d}.json"


#: The name of a cell file (:func:`_cell_path`).
_CELL_NAME = re.compile(r"[0-9]{6,}\.json")


def _finished_cell(path: Path, cell: int) -> list[dict] | None:
    """The results of a cell written by an earlier run, or None when it has none."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("cell") != cell or not isinstance(data.get("results"), list):
        return None
    return data["results"]


def _differences(held: dict, wanted: dict) -> str:
    """``seed 5 (this run: 6); smoke true (this run: false)`` for the arguments that differ."""
    def show(value):
        return "missing" if value is None else orjson.dumps(value).decode()
    names = [k for k in held.keys() | wanted.keys() if k != "design_sha256" and held.get(k) != wanted.get(k)]
    if "study" in names:  # another study altogether: its other arguments say nothing more
        names = ["study"]
    parts = [f"{name} {show(held.get(name))} (this run: {show(wanted.get(name))})"
             for name in sorted(names)]
    if not parts and held.get("design_sha256") != wanted.get("design_sha256"):
        parts = ["another design (design.csv)"]
    return "; ".join(parts)


def _claim_folder(out_dir: Path, arguments: dict, *, force: bool = False) -> bool:
    """Record the run's arguments in ``out_dir``; True when the folder holds a run to resume.

    Raises :class:`InputError` when the folder holds a run with other arguments (or one whose
    ``run-args.json`` cannot be read), unless ``force``: the earlier run is then removed
    (:func:`_remove_run`) and the folder claimed afresh, also when its arguments are the same.
    """
    path = out_dir / RUN_ARGS
    try:
        held = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        held = None
    except (OSError, orjson.JSONDecodeError) as err:
        if not force:
            raise InputError(f"cannot read {RUN_ARGS} of the earlier run in this folder ({err}); add --force to "
                             "recompute into this folder, or give another --out folder", source=str(out_dir)) from None
        held = {}
    if held is not None and not force:
        if held != arguments:
            raise InputError(f"holds a run with other arguments: {_differences(held, arguments)}; {_WAYS_ON}",
                             source=str(out_dir))
        return True
    if force:  # also without run-args.json: what a run left that the engine owns goes
        _remove_run(out_dir)
    write_atomic(path, orjson.dumps(arguments, option=orjson.OPT_INDENT_2) + b"\n")
    return False


def _owned_outputs(out_dir: Path) -> list[Path]:
    """The outputs the study of the run in ``out_dir`` listed in ``run.json`` (files inside ``out_dir`` only)."""
    try:
        names = orjson.loads((out_dir / RUN_FACTS).read_bytes()).get("outputs", [])
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return []
    root = out_dir.resolve()
    owned = []
    for name in names if isinstance(names, list) else []:
        path = out_dir / str(name)
        if path.resolve().parent == root and path.name not in ("", ".", ".."):
            owned.append(path)
    return owned


def _remove_run(out_dir: Path) -> None:
    """Remove what the engine owns of the run in ``out_dir`` (the module docstring), and nothing else.

    The study's listed outputs and ``run.json`` first, then the cell files, ``cells/`` when it is
    left empty, ``design.csv`` and last ``run-args.json``: a removal stopped half-way leaves a
    folder that ``force`` clears again.
    """
    for path in [*_owned_outputs(out_dir), out_dir / RUN_FACTS]:
        if path.is_file() or path.is_symlink():
            path.unlink()
    folder = out_dir / CELLS_DIR
    if folder.is_dir():
        for path in folder.iterdir():
            if _CELL_NAME.fullmatch(path.name) and path.is_file():
                path.unlink()
    _remove_claim(out_dir)


def _remove_claim(out_dir: Path) -> None:
    """Remove ``cells/`` if empty, ``design.csv`` and ``run-args.json``: a run that computed no cell undone."""
    try:
        (out_dir / CELLS_DIR).rmdir()
    except OSError:  # absent, or holds something
        pass
    for name in (DESIGN, RUN_ARGS):
        (out_dir / name).unlink(missing_ok=True)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _stamp(moment: datetime) -> str:
    """A time of ``run.json``: ISO 8601 in UTC, to the millisecond (``elapsed_seconds`` is read off two of them)."""
    return moment.isoformat(timespec="milliseconds")


def record_outputs(out_dir: str | Path, paths) -> None:
    """List the files a study wrote into ``out_dir`` after its cells in ``run.json`` (key ``outputs``).

    They become the engine's: a later run with ``force=True`` removes them with the cells, so a
    recomputed folder holds no output of the earlier run. Call it once the outputs are written,
    with every path (each inside ``out_dir``): the run ends here, so ``finished`` and
    ``elapsed_seconds`` (the run's wall time since :func:`run_cells` began, ``started``) are
    set to now.
    """
    out_dir = Path(out_dir)
    names = sorted({Path(p).name for p in paths if Path(p).resolve().parent == out_dir.resolve()})
    facts = orjson.loads((out_dir / RUN_FACTS).read_bytes())
    finished = _now()
    facts.update(outputs=names, finished=_stamp(finished),
                 elapsed_seconds=round((finished - datetime.fromisoformat(facts["started"])).total_seconds(), 3))
    write_atomic(out_dir / RUN_FACTS, orjson.dumps(facts, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))


@contextmanager
def step(description: str, *, progress: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on standard error while a step of a study that is not a cell loop runs (tables, figures, a report).

    Shown with ``progress`` when standard error is a terminal, and wiped when the step ends. Yields a
    function that replaces the text beside the spinner (``say("drawing profiles.png")``).
    """
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True,
                  disable=not (progress and sys.stderr.isatty())) as spinner:
        task = spinner.add_task(description, total=None)
        yield lambda text: spinner.update(task, description=text, refresh=True)


@contextmanager
def _workers(backend: str, scheduler: str | None, n_jobs: int) -> Iterator[dict]:
    """The keyword arguments of joblib's ``Parallel`` for ``backend``, with the Dask client set up.

    ``dask`` connects to ``scheduler``, or starts a ``LocalCluster`` of ``n_jobs`` single-thread
    worker processes (all cores for ``-1``) that listens on 127.0.0.1 only, its dashboard
    included; the client, and a cluster started here, are closed
    on the way out, also when a cell fails. joblib runs the cells of a cluster with a single
    thread in all in this process, as it runs any one job.
    """
    if backend == "local":
        yield {"n_jobs": n_jobs, "backend": "loky"}
        return
    with dask_client(scheduler, n_jobs) as client, parallel_config(backend="dask", client=client):
        yield {"n_jobs": -1}  # every thread of the cluster


def run_cells(design: pd.DataFrame, cell_fn: CellFunction, *, seed: int, n_jobs: int = 1,
              out_dir: str | Path, progress: bool = True, backend: str = "local", scheduler: str | None = None,
              description: str = "cells", run_facts: dict | None = None, force: bool = False) -> pd.DataFrame:
    """Run every design cell through ``cell_fn`` in parallel and collect a long table.

    Parameters
    ----------
    design : pandas.DataFrame
        One row per cell; its columns are the conditions passed to ``cell_fn`` as a dict.
    cell_fn : callable
        ``cell_fn(row: dict, seed_seq: SeedSequence) -> list[dict]``: simulates and analyses
        one cell and returns its result rows (JSON values or numpy scalars). Must be picklable.
    seed : int
        Root seed; cell ``i`` uses ``cell_seed(seed, i)``.
    n_jobs : int
        Number of joblib workers (``-1``: all cores); with ``backend="dask"`` and no
        ``scheduler``, the number of workers of the local Dask cluster. Results do not depend on it.
    out_dir : str or Path
        Folder for ``design.csv`` (written before the run starts, with a ``cell`` column),
        ``run-args.json`` (what the results depend on: seed, ``run_facts``, the design, the cell
        function, the version), ``cells/`` (one file per finished cell) and ``run.json`` (also
        ``started`` and ``finished`` (UTC), ``elapsed_seconds`` (the wall time from the start of
        this call; :func:`record_outputs` extends it to the study's last output),
        ``cells_seconds`` (the wall time of the cells computed by this call), n_jobs, backend,
        cells resumed, and the study's ``outputs``, :func:`record_outputs`). Created with its
        missing parents if missing; a run that fails before any cell finished removes what it
        created.
    progress : bool
        Show a rich progress bar over cells.
    backend : {"local", "dask"}
        Where the cells run (see the module docstring). Results do not depend on it.
    scheduler : str, optional
        Address of a running Dask scheduler (``backend="dask"`` only).
    description : str
        Label of the progress bar.
    run_facts : dict, optional
        Facts that decide the results besides the seed and the design (e.g. the study name and
        size); recorded in ``run-args.json`` and ``run.json``.
    force : bool
        Recompute into a folder that holds an earlier run, with other arguments or the same: the
        files the engine owns of that run are removed first (the module docstring), every other
        file stays.

    Returns
    -------
    pandas.DataFrame
        One row per result dict: the design columns (``cell`` first), then the result fields,
        in design order.

    Raises
    ------
    InputError
        When ``out_dir`` holds a run with other arguments and ``force`` is false.
    """
    check_choice("backend", backend, BACKENDS)
    if scheduler is not None and backend != "dask":
        raise refuse("a `scheduler` address needs `backend`='dask'", "scheduler", "backend")
    started = _now()
    out_dir = Path(out_dir)
    design = design.reset_index(drop=True)
    design.insert(0, "cell", np.arange(len(design)))
    design_csv = design.to_csv(index=False)
    arguments = orjson.loads(orjson.dumps({
        "seed": seed, **(run_facts or {}), "cell_function": f"{cell_fn.__module__}.{cell_fn.__qualname__}",
        "version": __version__, "cells": len(design),
        "design_sha256": hashlib.sha256(design_csv.encode("utf-8")).hexdigest()}, option=orjson.OPT_SERIALIZE_NUMPY))
    with output_folder(out_dir):
        remove_stale_temporaries(out_dir / CELLS_DIR)  # output_folder's, for the cells of a killed run
        resuming = _claim_folder(out_dir, arguments, force=force)
        computed: list[int] = []
        try:
            return _run_claimed(out_dir, design, design_csv, cell_fn, seed=seed, n_jobs=n_jobs, progress=progress,
                                backend=backend, scheduler=scheduler, description=description,
                                run_facts=run_facts, resuming=resuming, computed=computed, started=started)
        except BaseException:
            if not resuming and not computed:  # nothing to resume: leave the folder as it was
                _remove_claim(out_dir)
            raise


def _run_claimed(out_dir: Path, design: pd.DataFrame, design_csv: str, cell_fn: CellFunction, *, seed: int,
                 n_jobs: int, progress: bool, backend: str, scheduler: str | None, description: str,
                 run_facts: dict | None, resuming: bool, computed: list[int], started: datetime) -> pd.DataFrame:
    """:func:`run_cells` in a claimed folder, begun at ``started``; appends to ``computed`` each cell it writes."""
    outputs = [path.name for path in _owned_outputs(out_dir)] if resuming else []
    write_atomic(out_dir / DESIGN, design_csv)
    rows = design.to_dict(orient="records")
    results: list[list[dict] | None] = [None] * len(rows)
    if resuming:
        for i in range(len(rows)):
            results[i] = _finished_cell(_cell_path(out_dir, i), i)
    todo = [i for i, done in enumerate(results) if done is None]
    resumed = len(rows) - len(todo)
    clock = time.perf_counter()

    def indexed(i: int, row: dict) -> tuple[int, list[dict]]:
        return i, cell_fn(row, cell_seed(seed, i))

    label = f"{description} ({resumed} from the earlier run)" if resumed else description
    with ExitStack() as stack:
        bar = stack.enter_context(Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                           TimeElapsedColumn(), TimeRemainingColumn(),
                                           disable=not (progress and sys.stderr.isatty()),
                                           console=Console(stderr=True)))  # as the steps' spinner: stdout holds
        # the command's summary alone, and a file or a pipe no bar drawn once at its end
        task = bar.add_task(label, total=len(rows), completed=resumed)
        if todo:
            parallel = Parallel(**stack.enter_context(_workers(backend, scheduler, n_jobs)),
                                return_as="generator_unordered")
            for i, cell_results in parallel(delayed(indexed)(i, rows[i]) for i in todo):
                data = _cell_bytes(i, cell_results)
                write_atomic(_cell_path(out_dir, i), data)
                computed.append(i)
                results[i] = json.loads(data)["results"]  # the table is read from what was written
                bar.advance(task)
    cells_seconds = time.perf_counter() - clock
    finished = _now()
    facts = {"seed": seed, "version": __version__, "started": _stamp(started), "finished": _stamp(finished),
             "elapsed_seconds": round((finished - started).total_seconds(), 3),
             "cells_seconds": round(cells_seconds, 3), "n_jobs": n_jobs, "backend": backend, "scheduler": scheduler,
             "cells": len(rows), "cells_resumed": resumed, **(run_facts or {}), "outputs": outputs}
    write_atomic(out_dir / RUN_FACTS, orjson.dumps(facts, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    done = cast(list[list[dict]], results)  # every cell read back from the earlier run or computed above
    table = [{**row, **result} for row, cell_results in zip(rows, done) for result in cell_results]
    return pd.DataFrame(table)
