"""Resumable studies: a stopped run, run again, gives the bytes of an uninterrupted one."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

import escalation.studies.sample_size._sample_size
from escalation.studies import run_cells

from .._helpers import output_files as files, run_cli

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


ROOT = Path(__file__).resolve().parents[2]
CALLS: list[int] = []  # cells computed in this process, in order
FAIL_AT: dict[str, int | None] = {"cell": None}


def counted_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """A cell with awkward values (NaN, infinity, numpy scalars) that fails at ``FAIL_AT``."""
    if row["cell"] == FAIL_AT["cell"]:
        raise RuntimeError(f"cell {row['cell']} failed")
    CALLS.append(row["cell"])
    rng = np.random.default_rng(seed_seq)
    return [{"draw": rng.random(), "count": np.int64(rng.integers(100)), "flag": np.bool_(row["x"] % 2),
             "undefined": np.nan if row["x"] == 1 else float("inf"), "name": f"r{k}"} for k in range(2)]


def slow_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """A cell that takes a moment, so that a run can be killed halfway."""
    time.sleep(0.1)
    return [{"draw": float(np.random.default_rng(seed_seq).random())}]




DESIGN = pd.DataFrame({"x": range(8)})


def test_a_failed_run_resumes_where_it_stopped(tmp_path):
    whole = run_cells(DESIGN, counted_cell, seed=3, out_dir=tmp_path / "whole", progress=False)
    CALLS.clear()
    FAIL_AT["cell"] = 5
    try:
        with pytest.raises(RuntimeError, match="cell 5 failed"):
            run_cells(DESIGN, counted_cell, seed=3, out_dir=tmp_path / "part", progress=False)
    finally:
        FAIL_AT["cell"] = None
    assert CALLS == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in (tmp_path / "part" / "cells").iterdir()) == [f"{i:06d}.json" for i in range(5)]
    assert not (tmp_path / "part" / "run.json").exists()
    CALLS.clear()
    resumed = run_cells(DESIGN, counted_cell, seed=3, out_dir=tmp_path / "part", progress=False)
    assert CALLS == [5, 6, 7]  # the finished cells are not computed again
    pd.testing.assert_frame_equal(resumed, whole)
    assert files(tmp_path / "part") == files(tmp_path / "whole")
    facts = orjson.loads((tmp_path / "part" / "run.json").read_bytes())
    assert facts["cells"] == 8 and facts["cells_resumed"] == 5


def test_cell_files_keep_every_value_exactly(tmp_path):
    table = run_cells(DESIGN.head(2), counted_cell, seed=4, out_dir=tmp_path, progress=False)
    rng = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(1,)))
    assert table["draw"].iloc[2] == rng.random()  # exact float, not a rounded one
    assert table["undefined"].iloc[0] == float("inf") and np.isnan(table["undefined"].iloc[2])
    assert table["count"].dtype == np.int64 and table["flag"].dtype == bool
    cell = json.loads((tmp_path / "cells" / "000001.json").read_text())
    assert cell["cell"] == 1 and len(cell["results"]) == 2


def test_a_killed_run_resumes_and_leaves_no_half_written_file(tmp_path):
    design = pd.DataFrame({"x": range(12)})
    whole = run_cells(design, slow_cell, seed=8, out_dir=tmp_path / "whole", progress=False)
    out = tmp_path / "killed"
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import pandas as pd; "
              "from escalation.studies import run_cells; "
              "from tests.e2e.test_engine_resume_sample_size import slow_cell; "
              f"run_cells(pd.DataFrame({{'x': range(12)}}), slow_cell, seed=8, out_dir={str(out)!r}, progress=False)")
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while len(list((out / "cells").glob("*.json"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    done = sorted((out / "cells").glob("*.json"))
    assert 3 <= len(done) < 12 and not (out / "run.json").exists()
    for path in done:  # every file under a final name is complete
        assert json.loads(path.read_text())["cell"] == int(path.stem)
    CALLS.clear()
    resumed = run_cells(design, slow_cell, seed=8, out_dir=out, progress=False)
    pd.testing.assert_frame_equal(resumed, whole)
    assert orjson.loads((out / "run.json").read_bytes())["cells_resumed"] == len(done)
    assert {k: v for k, v in files(out).items() if not Path(k).name.startswith(".")} == files(tmp_path / "whole")


def test_sample_size_study_interrupted_and_resumed_is_byte_identical(tmp_path, monkeypatch):
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert run_cli(monkeypatch, "study", "sample-size", "--out", whole, "--smoke", "--nsim", "50", "--seed", "6") == 0
    real = escalation.studies.sample_size._sample_size.run_cell
    calls = []

    @functools.wraps(real)
    def failing(row, seed_seq):
        if len(calls) == 3:
            raise KeyboardInterrupt  # as if stopped by Ctrl-C after three plans
        calls.append(row["cell"])
        return real(row, seed_seq)

    monkeypatch.setattr(escalation.studies.sample_size._sample_size, "run_cell", failing)
    code = run_cli(monkeypatch, "study", "sample-size", "--out", part, "--smoke", "--nsim", "50", "--seed", "6")
    assert code == 130  # stopped as by Ctrl-C
    assert len(list((part / "cells").glob("*.json"))) == 3 and not (part / "validation.csv").exists()
    monkeypatch.setattr(escalation.studies.sample_size._sample_size, "run_cell", real)
    assert run_cli(monkeypatch, "study", "sample-size", "--out", part, "--smoke", "--nsim", "50", "--seed", "6") == 0
    assert orjson.loads((part / "run.json").read_bytes())["cells_resumed"] == 3
    assert files(part) == files(whole)
    # a finished run, run again, computes nothing and writes the same bytes
    assert run_cli(monkeypatch, "study", "sample-size", "--out", part, "--smoke", "--nsim", "50", "--seed", "6") == 0
    facts = orjson.loads((part / "run.json").read_bytes())
    assert facts["cells_resumed"] == facts["cells"] and files(part) == files(whole)


@pytest.mark.parametrize("changed, message", [
    (["--seed", "7"], "seed 6 (this run: 7)"),
    (["--nsim", "60"], "nsim 50 (this run: 60)"),
])
def test_other_arguments_into_the_same_folder_are_refused(tmp_path, monkeypatch, capsys, changed, message):
    out = tmp_path / "run"
    arguments = {"--smoke": [], "--nsim": ["50"], "--seed": ["6"]}
    base = [item for key, values in arguments.items() for item in (key, *values)]
    assert run_cli(monkeypatch, "study", "sample-size", "--out", out, *base) == 0
    before = files(out)
    capsys.readouterr()
    arguments[changed[0]] = changed[1:]
    again = [item for key, values in arguments.items() for item in (key, *values)]
    assert run_cli(monkeypatch, "study", "sample-size", "--out", out, *again) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {out}: holds a run with other arguments: ")
    assert message in err and "give another --out folder" in err
    assert files(out) == before  # nothing of the earlier run is touched


def test_a_different_study_into_the_folder_is_refused(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    assert run_cli(monkeypatch, "study", "sample-size", "--out", out, "--smoke", "--nsim", "20") == 0
    capsys.readouterr()
    assert run_cli(monkeypatch, "study", "coverage", "--out", out, "--smoke", "--nsim", "20") == 2
    err = capsys.readouterr().err
    assert 'study "sample-size" (this run: "coverage")' in err and len(err.splitlines()) == 1
