"""The study runner's contract, and atomic output: no file is ever written under its final name."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from escalation.studies import run_cells

from .._helpers import run_cli

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


_WATCHED: dict[str, object] = {"root": None, "opened": []}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _audit(event: str, args: tuple) -> None:
    """Record every file opened for writing under the watched folder (``sys.addaudithook``)."""
    root = _WATCHED["root"]
    if root is None or event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    path, mode, flags = args
    writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
    path = Path(os.fsdecode(path)).absolute()
    if writing and path.is_relative_to(root):
        _WATCHED["opened"].append(path)


sys.addaudithook(_audit)  # hooks cannot be removed; this one does nothing while no folder is watched



@pytest.fixture
def watched(tmp_path):
    """``tmp_path``, with every file opened there for writing recorded."""
    _WATCHED["root"], _WATCHED["opened"] = tmp_path.absolute(), []
    try:
        yield tmp_path
    finally:
        _WATCHED["root"] = None


def assert_written_atomically(folder: Path) -> None:
    """No file of ``folder`` was opened for writing under its final name (only temporary names were)."""
    finals = {p.absolute() for p in folder.rglob("*") if p.is_file()}
    assert finals, "nothing was written"
    assert _WATCHED["opened"], "the audit hook saw no write"
    assert sorted(finals & set(_WATCHED["opened"])) == []


def test_every_study_output_is_written_under_a_temporary_name_first(watched, monkeypatch):
    out = watched / "study"
    assert run_cli(monkeypatch, "study", "sample-size", "--out", out, "--smoke", "--nsim", "20") == 0
    assert {"design.csv", "run.json", "run-args.json", "validation.csv", "intervals.md", "power.pdf",
            "report.md"} <= {p.name for p in out.iterdir()}
    assert_written_atomically(out)


def test_coverage_judges_and_reproduce_outputs_are_written_atomically(watched, monkeypatch):
    assert run_cli(monkeypatch, "study", "coverage", "--out", watched / "coverage", "--smoke", "--nsim", "10") == 0
    assert run_cli(monkeypatch, "study", "judges", "--out", watched / "calibration", "--smoke", "--nsim", "2") == 0
    assert run_cli(monkeypatch, "reproduce", "--out", watched / "reproduce", "--smoke", "--expected-pairs", "100") == 0
    for name in ("coverage/coverage.csv", "calibration/results.csv", "calibration/report.md", "reproduce/report.md"):
        assert (watched / name).exists()
    assert_written_atomically(watched)


def test_simulated_and_scored_files_are_written_atomically(watched, monkeypatch):
    sim, scored = watched / "sim", watched / "scored"
    assert run_cli(monkeypatch, "simulate", "--profile", "follows_policy", "--cases", "5", "--out", sim) == 0
    assert run_cli(monkeypatch, "score", sim / "records.jsonl", "--policy", sim / "policy.json", "--out", scored) == 0
    assert (scored / "conversations.jsonl").exists() and (scored / "summary.json").exists()
    assert_written_atomically(watched)


def test_the_audit_hook_catches_a_direct_write(watched):
    """The check above can fail: a plain ``to_csv`` to the final name is caught."""
    pd.DataFrame({"a": [1]}).to_csv(watched / "plain.csv")
    with pytest.raises(AssertionError):
        assert_written_atomically(watched)


def test_backend_and_scheduler_are_checked(tmp_path):
    design = pd.DataFrame({"x": [1]})
    cell = lambda row, seed_seq: [{"y": 1}]  # noqa: E731
    with pytest.raises(ValueError, match="`backend` must be one of local, dask; got 'spark'"):
        run_cells(design, cell, seed=1, out_dir=tmp_path, progress=False, backend="spark")
    with pytest.raises(ValueError, match="a `scheduler` address needs `backend`='dask'"):
        run_cells(design, cell, seed=1, out_dir=tmp_path, progress=False, scheduler="tcp://127.0.0.1:8786")


def test_a_cell_result_that_json_cannot_hold_is_a_clear_error(tmp_path):
    with pytest.raises(TypeError, match="a cell returned a set, which a cell file cannot hold"):
        run_cells(pd.DataFrame({"x": [1]}), lambda row, s: [{"y": {1, 2}}], seed=1, out_dir=tmp_path, progress=False)
    table = run_cells(pd.DataFrame({"x": [1]}), lambda row, s: [{"y": np.arange(3)}], seed=1,
                      out_dir=tmp_path / "array", progress=False)
    assert table["y"].iloc[0] == [0, 1, 2]  # numpy arrays become lists
