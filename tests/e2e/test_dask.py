"""Studies on a Dask cluster: the same bytes as on this machine, for the same seed."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import cloudpickle
import distributed
import numpy as np
import orjson
import pandas as pd
import psutil
import pytest

from escalation.studies import run_cells

from .._helpers import output_files as files, run_cli

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


# Worker processes cannot import this test module (the tests take the repository root off the
# path, see conftest.py): its cell functions travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def cluster():
    """A small in-process Dask cluster (threads, so it starts in a fraction of a second)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as local:
        yield local


def where_it_ran(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """A cell that reports the Dask worker it ran on (none outside a worker)."""
    try:
        worker = distributed.get_worker().address
    except ValueError:
        worker = None
    return [{"worker": worker, "draw": float(np.random.default_rng(seed_seq).random())}]


def test_cells_run_on_the_cluster_workers(cluster, tmp_path):
    design = pd.DataFrame({"x": range(6)})
    table = run_cells(design, where_it_ran, seed=1, out_dir=tmp_path, progress=False, backend="dask",
                      scheduler=cluster.scheduler_address)
    assert set(table["worker"]) <= set(cluster.scheduler_info["workers"]) and table["worker"].notna().all()
    local = run_cells(design, where_it_ran, seed=1, out_dir=tmp_path / "local", progress=False)
    assert local["worker"].isna().all()
    assert local["draw"].tolist() == table["draw"].tolist()
    facts = orjson.loads((tmp_path / "run.json").read_bytes())
    assert facts["backend"] == "dask" and facts["scheduler"] == cluster.scheduler_address


@pytest.mark.parametrize("command, size", [
    (["study", "coverage"], ["--nsim", "10"]),
    (["study", "sample-size"], ["--nsim", "30"]),
    (["study", "judges"], ["--nsim", "4"]),
    (["reproduce"], ["--expected-pairs", "100"]),
])
def test_every_study_command_takes_the_dask_backend(cluster, tmp_path, monkeypatch, command, size):
    local, dask = tmp_path / "local", tmp_path / "dask"
    assert run_cli(monkeypatch, *command, "--out", local, "--smoke", *size, "--seed", "4") == 0
    assert run_cli(monkeypatch, *command, "--out", dask, "--smoke", *size, "--seed", "4", "--backend", "dask",
                   "--scheduler", cluster.scheduler_address) == 0
    assert orjson.loads((dask / "run.json").read_bytes())["backend"] == "dask"
    expected = files(local)
    assert {"design.csv", "run-args.json", "report.md", "cells/000000.json"} <= set(expected)
    assert any(name.endswith(".png") for name in expected) and any(name.endswith(".pdf") for name in expected)
    # reproduce's report (and its page) states the time of its cells; every table, figure and cell is identical
    differ = [name for name, data in expected.items() if files(dask).get(name) != data
              and not (command == ["reproduce"] and name in ("report.md", "report.html"))]
    assert differ == []


def test_a_local_cluster_is_started_and_shut_down_when_no_scheduler_is_given(tmp_path):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    design = pd.DataFrame({"x": range(3)})
    table = run_cells(design, where_it_ran, seed=2, out_dir=tmp_path, progress=False, backend="dask", n_jobs=2)
    assert table["worker"].notna().all()  # ran on the worker of the cluster started for the run
    with pytest.raises(ValueError):
        distributed.Client.current()  # no client left behind
    workers = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
               and p.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(p.cmdline())]
    assert workers == []  # (multiprocessing's resource tracker lives as long as this process, by design)
    local = run_cells(design, where_it_ran, seed=2, out_dir=tmp_path / "local", progress=False)
    assert local["draw"].tolist() == table["draw"].tolist()


def test_scheduler_without_the_dask_backend_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    code = run_cli(monkeypatch, "study", "sample-size", "--out", tmp_path / "x", "--smoke", "--scheduler",
                   "tcp://127.0.0.1:8786")
    assert code == 2
    assert capsys.readouterr().err == "error: escalation study sample-size: --scheduler needs --backend dask\n"
    assert not (tmp_path / "x").exists()


def test_unreachable_scheduler_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code = run_cli(monkeypatch, "study", "sample-size", "--out", tmp_path / "x", "--smoke", "--backend", "dask",
                       "--scheduler", "tcp://127.0.0.1:9")
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: field '--scheduler': cannot reach the Dask scheduler at tcp://127.0.0.1:9")


TRACES = Path(__file__).parents[1] / "data" / "readers" / "otel"
POLICY = ('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'
          'gated_tools = ["issue_refund"]\n')


def _score(monkeypatch, capsys, folder, out, *extra):
    code = run_cli(monkeypatch, "score", folder, "--policy", folder.parent / "policy.toml", "--out", out, *extra)
    return code, capsys.readouterr()


def _comparable(out) -> dict:
    """The files of a score run, its time of scoring taken out (``summary.json``'s ``created``, the times that
    report.html states, and so report.html's hash among the outputs)."""
    found = files(out)
    summary = orjson.loads(found.pop("summary.json"))
    summary["provenance"].pop("created")
    summary["provenance"]["outputs"].pop("report.html")
    found["report.html"] = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"TIME", found["report.html"])
    return {**found, "summary.json": orjson.dumps(summary, option=orjson.OPT_SORT_KEYS)}


def test_score_on_the_cluster_writes_the_bytes_of_a_local_run(cluster, tmp_path, monkeypatch, capsys):
    """A folder of trace files, a task a file: every output file, the OTLP events and the labels' note included,
    is that of a local run."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("openai_v2.jsonl", "sessions.jsonl"):
        (folder / name).write_bytes((TRACES / name).read_bytes())
    (tmp_path / "policy.toml").write_text(POLICY)
    (tmp_path / "labels.csv").write_text("case_id,label\nnot-a-case,ESC\n")  # labels nothing: a note names ids
    common = ("--group-by", "session", "--emit", "otel", "--labels", tmp_path / "labels.csv")
    code, local = _score(monkeypatch, capsys, folder, tmp_path / "local", *common)
    assert code == 0, local.err
    before = set(cluster.scheduler.task_prefixes)
    code, dask = _score(monkeypatch, capsys, folder, tmp_path / "dask", *common, "--backend", "dask",
                        "--scheduler", cluster.scheduler_address)
    assert code == 0, dask.err
    assert "escalation-score" in set(cluster.scheduler.task_prefixes) - before  # the logs were read on the workers
    assert _comparable(tmp_path / "dask") == _comparable(tmp_path / "local")
    summary = orjson.loads((tmp_path / "dask" / "summary.json").read_bytes())
    assert summary["provenance"]["command"]["group_by"] == "session"
    assert "the labels file labels none of the 8 conversations" in summary["warnings"][0]
    assert "case_id 'refund-900', 'refund-120', 'refund-300'" in summary["warnings"][0]  # the first three, in order


def test_a_key_repeated_across_files_is_the_same_error_on_the_cluster(cluster, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("openai_v2.jsonl", "openllmetry_events.jsonl"):  # the same scenarios, instrumented twice
        (folder / name).write_bytes((TRACES / name).read_bytes())
    (tmp_path / "policy.toml").write_text(POLICY)
    code, local = _score(monkeypatch, capsys, folder, tmp_path / "local")
    code_dask, dask = _score(monkeypatch, capsys, folder, tmp_path / "dask", "--backend", "dask",
                             "--scheduler", cluster.scheduler_address)
    assert code == code_dask == 2 and "repeat" in local.err
    assert dask.err == local.err
    assert not (tmp_path / "dask").exists() and not (tmp_path / "local").exists()


def test_standard_input_is_scored_here(tmp_path, monkeypatch, capsys):
    (tmp_path / "policy.toml").write_text(POLICY)
    monkeypatch.setattr(sys, "stdin", open(TRACES / "openai_v2.jsonl"))
    code = run_cli(monkeypatch, "score", "-", "--format", "otel", "--policy", tmp_path / "policy.toml",
                   "--backend", "dask", "--n-jobs", "1")
    err = capsys.readouterr().err
    assert code == 2 and "standard input is scored locally" in err, err
