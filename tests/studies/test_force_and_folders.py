"""``--force`` recomputes a study folder; a failed run leaves no folder it created.

The command-line runs use the cheapest study, ``study differences --smoke --nsim 2`` (a few
seconds); the engine's own rules are checked on a two-cell design through ``run_cells``.
"""
from __future__ import annotations

import re

import orjson
import pandas as pd
import pytest

import escalation.cli.commands.study as study_command
from escalation.estimators.records import output_folder
from escalation.studies import record_outputs, run_cells

from .._helpers import output_files, run_cli, run_cli_output

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'



def _study(monkeypatch, capsys, out, *args):
    return run_cli_output(monkeypatch, capsys, "study", "differences", "--out", out, "--smoke", *map(str, args))


def _facts(out, name="run.json"):
    return orjson.loads((out / name).read_bytes())


def test_other_arguments_are_refused_naming_force_and_force_recomputes(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    assert _study(monkeypatch, capsys, out, "--nsim", 2, "--seed", 1)[0] == 0
    (out / "notes.txt").write_text("mine")  # files of a person, in the folder and in cells/
    (out / "cells" / "keep.txt").write_text("mine too")
    before = output_files(out)

    code, printed, err = _study(monkeypatch, capsys, out, "--nsim", 3, "--seed", 1)
    assert code == 2 and printed == "" and len(err.splitlines()) == 1
    assert err.startswith(f"error: {out}: holds a run with other arguments: nsim 2 (this run: 3); ")
    assert "resume it" in err and "add --force to recompute into this folder" in err
    assert "give another --out folder" in err
    assert output_files(out) == before  # refused: nothing touched

    assert _study(monkeypatch, capsys, out, "--nsim", 3, "--seed", 1, "--force")[0] == 0
    assert _facts(out, "run-args.json")["nsim"] == 3 and _facts(out)["cells_resumed"] == 0
    fresh = tmp_path / "fresh"
    assert _study(monkeypatch, capsys, fresh, "--nsim", 3, "--seed", 1)[0] == 0
    mine = {"notes.txt", "cells/keep.txt"}

    def untimed(files):  # the report states the time of the cells, which differs between two runs
        return {k: re.sub(rb"cells computed in [0-9]+ s", b"cells computed in - s", v)
                if k in ("report.md", "report.html") else v for k, v in files.items()}
    assert untimed({k: v for k, v in output_files(out).items() if k not in mine}) == untimed(output_files(fresh))
    assert (out / "notes.txt").read_text() == "mine" and (out / "cells" / "keep.txt").read_text() == "mine too"
    assert output_files(out)["differences.csv"] != before["differences.csv"]  # the second run's outputs
    assert set(_facts(out)["outputs"]) >= {"differences.csv", "report.md", "report.html", "differences_coverage.png"}


def _cell(row, seed_seq):
    return [{"y": int(row["x"]) * 2}]


def test_force_removes_what_the_engine_owns_and_nothing_else(tmp_path):
    out = tmp_path / "run"
    design = pd.DataFrame({"x": [1, 2]})
    run_cells(design, _cell, seed=1, out_dir=out, progress=False)
    for name in ("table.csv", "old-only.png"):
        (out / name).write_text("an output of the first run")
    (tmp_path / "outside.txt").write_text("not in the folder")
    record_outputs(out, [out / "table.csv", out / "old-only.png"])
    facts = _facts(out)
    facts["outputs"] += ["../outside.txt"]  # a run.json that names a file outside: never removed
    (out / "run.json").write_bytes(orjson.dumps(facts))
    (out / "notes.txt").write_text("mine")
    (out / "cells" / "notes.txt").write_text("mine")

    table = run_cells(design, _cell, seed=2, out_dir=out, progress=False, force=True)
    assert table["y"].tolist() == [2, 4] and _facts(out)["cells_resumed"] == 0
    assert not (out / "table.csv").exists() and not (out / "old-only.png").exists()
    assert (tmp_path / "outside.txt").exists() and (out / "notes.txt").exists()
    assert (out / "cells" / "notes.txt").exists()
    assert sorted(p.name for p in (out / "cells").iterdir()) == ["000000.json", "000001.json", "notes.txt"]
    assert _facts(out, "run-args.json")["seed"] == 2 and _facts(out)["outputs"] == []
    # the same arguments resume every cell; with force they are all computed again
    run_cells(design, _cell, seed=2, out_dir=out, progress=False)
    assert _facts(out)["cells_resumed"] == 2
    run_cells(design, _cell, seed=2, out_dir=out, progress=False, force=True)
    assert _facts(out)["cells_resumed"] == 0 and (out / "notes.txt").exists()


def test_an_unreadable_run_args_is_refused_naming_force(tmp_path):
    out = tmp_path / "run"
    run_cells(pd.DataFrame({"x": [1]}), _cell, seed=1, out_dir=out, progress=False)
    (out / "run-args.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read run-args.json .*add --force"):
        run_cells(pd.DataFrame({"x": [1]}), _cell, seed=1, out_dir=out, progress=False)
    assert run_cells(pd.DataFrame({"x": [1]}), _cell, seed=1, out_dir=out, progress=False,
                     force=True)["y"].tolist() == [2]


@pytest.mark.parametrize("command", [
    ["study", "coverage", "--nsim", "0"],
    ["study", "sample-size", "--nsim", "1"],
    ["study", "judges", "--nsim", "1"],
    ["study", "differences", "--nsim", "1"],
    ["study", "coverage", "--n-jobs", "0"],
    ["study", "judges", "--seed", "-1"],
    ["study", "sample-size", "--scheduler", "tcp://127.0.0.1:8786"],
    ["reproduce", "--expected-pairs", "0"],
    ["simulate", "--profile", "follows_policy", "--n-jobs", "0"],
    ["simulate", "--profile", "follows_policy", "--languages", "xx"],
], ids=" ".join)
def test_a_bad_value_names_its_flag_and_creates_no_folder(tmp_path, monkeypatch, capsys, command):
    out = tmp_path / "x" / "y"
    code, _, err = run_cli_output(monkeypatch, capsys, *command, "--out", out)
    flag = next(arg for arg in command if arg.startswith("--") and arg != "--profile")
    assert code == 2 and flag in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_an_out_that_is_a_file_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    out = tmp_path / "file"
    out.write_text("")
    for command in (["study", "differences"], ["reproduce"], ["simulate", "--profile", "follows_policy"]):
        code, _, err = run_cli_output(monkeypatch, capsys, *command, "--out", out)
        assert code == 2 and err == f"error: {out}: exists and is not a folder; --out names the folder to write\n"


def _failing(after: int):
    """A cell function that fails once ``after`` cells have finished."""
    calls = []

    def cell(row, seed_seq):
        if len(calls) == after:
            raise RuntimeError("a cell failed")
        calls.append(row)
        return [{"y": int(row["x"])}]
    return cell


def test_an_error_in_the_first_cell_leaves_no_folder(tmp_path):
    design = pd.DataFrame({"x": [1, 2]})
    with pytest.raises(RuntimeError, match="a cell failed"):
        run_cells(design, _failing(0), seed=1, out_dir=tmp_path / "x" / "y", progress=False)
    assert list(tmp_path.iterdir()) == []
    existing = tmp_path / "existing"  # a folder that was there stays, holding nothing of the run
    (existing / "cells").mkdir(parents=True)
    (existing / "cells" / "notes.txt").write_text("mine")
    with pytest.raises(RuntimeError, match="a cell failed"):
        run_cells(design, _failing(0), seed=1, out_dir=existing, progress=False)
    assert sorted(str(p.relative_to(existing)) for p in existing.rglob("*")) == ["cells", "cells/notes.txt"]


def test_a_study_command_whose_first_cell_fails_leaves_no_folder(tmp_path, monkeypatch, capsys):
    """The command creates no folder itself: the engine makes --out, and removes it when no cell finished."""
    def failing_study(name, out, *, smoke, nsim, n_jobs, seed, progress, backend, scheduler, force):
        return run_cells(pd.DataFrame({"x": [1, 2]}), _failing(0), seed=seed, n_jobs=n_jobs, out_dir=out,
                         progress=False, backend=backend, scheduler=scheduler, force=force)

    monkeypatch.setattr(study_command, "run_study", failing_study)
    with pytest.raises(RuntimeError, match="a cell failed"):
        _study(monkeypatch, capsys, tmp_path / "x" / "y", "--nsim", 2)
    assert list(tmp_path.iterdir()) == []


def test_a_run_stopped_after_a_cell_keeps_its_folder_to_resume(tmp_path):
    design, out = pd.DataFrame({"x": [1, 2]}), tmp_path / "x" / "y"
    with pytest.raises(RuntimeError, match="a cell failed"):
        run_cells(design, _failing(1), seed=1, out_dir=out, progress=False)
    assert sorted(p.name for p in (out / "cells").iterdir()) == ["000000.json"]
    assert run_cells(design, _failing(5), seed=1, out_dir=out, progress=False)["y"].tolist() == [1, 2]
    assert _facts(out)["cells_resumed"] == 1


def test_simulate_that_fails_while_writing_leaves_no_folder(tmp_path, monkeypatch, capsys):
    import escalation.simulate

    def broken(sim, path, **options):
        raise OSError("disk full")

    monkeypatch.setattr(escalation.simulate, "write_jsonl", broken)
    assert run_cli(monkeypatch, "simulate", "--profile", "follows_policy", "--cases", "2", "--out",
                   tmp_path / "x" / "y") == 2
    assert capsys.readouterr().err == "error: disk full\n"  # one line, never a traceback
    assert not (tmp_path / "x").exists()


def test_output_folder_removes_only_the_empty_folders_it_made(tmp_path):
    with pytest.raises(KeyError):
        with output_folder(tmp_path / "a" / "b" / "c"):
            raise KeyError("stop")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KeyError):
        with output_folder(tmp_path / "a" / "b") as folder:
            (folder / "kept.txt").write_text("something")
            raise KeyError("stop")
    assert (tmp_path / "a" / "b" / "kept.txt").exists()
    with output_folder(tmp_path / "ok") as folder:
        pass
    assert folder.is_dir()
