"""The files of one run appear together or not at all; an unusable ``--out`` is refused before anything is read;
temporary files of killed runs are removed; ``simulate`` never writes through a planted link (issue 17)."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import orjson
import pandas as pd
import pytest

from escalation.estimators.metric import score_file
from escalation.estimators.records import InputError, load_policy, read_scored, write_atomic
from escalation.studies import run_cells

from .._helpers import run_cli, run_cli_output

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


POLICY = '{"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}\n'


def _records(path, n, *, escalate=()):
    lines = [orjson.dumps({"conversation_id": f"c{i}", "case_id": f"k{i // 2}", "label": "ACT" if i % 2 else "ESC",
                           "assistant_turns": 2,
                           "tool_calls": [{"turn": 0, "name": "transfer_to_human"}] if i in escalate else []})
             for i in range(n)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture
def files(tmp_path):
    (tmp_path / "policy.json").write_text(POLICY)
    return _records(tmp_path / "records.jsonl", 8, escalate={0, 2}), tmp_path / "policy.json"


def _score(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "score", *map(str, args))


def _tree(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ------------------------------------------------------------------ summary.json last, naming conversations.jsonl

def test_summary_json_is_renamed_last_and_names_the_conversations_it_belongs_to(files, tmp_path, monkeypatch):
    records, policy = files
    renamed, replace = [], os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (renamed.append(os.path.basename(dst)), replace(src, dst)))
    score_file(records, load_policy(policy), out_dir=tmp_path / "out")
    assert renamed == ["conversations.jsonl", "summary.json"]
    raw = (tmp_path / "out" / "conversations.jsonl").read_bytes()
    outputs = orjson.loads((tmp_path / "out" / "summary.json").read_bytes())["provenance"]["outputs"]
    assert outputs == {"conversations.jsonl": {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}}
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]


def test_a_kill_between_the_two_renames_is_found_by_compare(files, tmp_path, monkeypatch, capsys):
    records, policy = files
    out = tmp_path / "out"
    score_file(records, load_policy(policy), out_dir=out)
    old_summary = (out / "summary.json").read_bytes()
    _records(records, 8, escalate={0, 4})  # the log changed: the next run writes other conversations, as long
    replace = os.replace

    def killed_after_the_first(src, dst):
        if os.path.basename(dst) == "summary.json":
            raise KeyboardInterrupt  # the kill, after conversations.jsonl was renamed
        replace(src, dst)

    monkeypatch.setattr(os, "replace", killed_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        score_file(records, load_policy(policy), out_dir=out)
    monkeypatch.undo()
    assert (out / "summary.json").read_bytes() == old_summary  # new conversations beside the old summary
    assert sorted(p.name for p in out.iterdir()) == ["conversations.jsonl", "summary.json"]  # no temporary file
    with pytest.raises(InputError, match="or a run was killed between its two renames; score again"):
        read_scored(out)

    code, printed, err = run_cli_output(monkeypatch, capsys, "compare", out, out)
    assert code == 2 and printed == "" and err == (
        f"error: {out / 'conversations.jsonl'}: is not the file its summary.json describes (SHA-256 "
        f"{hashlib.sha256((out / 'conversations.jsonl').read_bytes()).hexdigest()[:12]}..., its summary.json names "
        f"{orjson.loads(old_summary)['provenance']['outputs']['conversations.jsonl']['sha256'][:12]}...): another "
        "run replaced one of the two files (a run of an older version writing into the same folder at once, or a "
        "file copied in by hand), or a run was killed between its two renames; score again\n")


def test_a_conversations_file_of_another_size_is_refused_and_an_old_summary_is_read(files, tmp_path):
    records, policy = files
    out = tmp_path / "out"
    score_file(records, load_policy(policy), out_dir=out)
    frame, _ = read_scored(out)
    with (out / "conversations.jsonl").open("ab") as handle:
        handle.write(b"\n")
    with pytest.raises(InputError,
                       match=r"conversations.jsonl: is not the file its summary.json describes \(\d+ bytes"):
        read_scored(out)
    summary = orjson.loads((out / "summary.json").read_bytes())
    del summary["provenance"]["outputs"]  # written before issue 17: read unchecked
    (out / "summary.json").write_bytes(orjson.dumps(summary))
    assert read_scored(out)[0].equals(frame)
    summary["provenance"]["outputs"] = {"conversations.jsonl": "abc"}
    (out / "summary.json").write_bytes(orjson.dumps(summary))
    with pytest.raises(InputError, match=r"summary.json: field 'provenance.outputs.conversations.jsonl': must be"):
        read_scored(out)


def test_a_failed_run_leaves_the_earlier_outputs_as_they_were(files, tmp_path, monkeypatch, capsys):
    records, policy = files
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    records.write_bytes(records.read_bytes() + b"not json\n")
    code, _, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
    assert code == 2 and err.startswith(f"error: {records}:9:")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_an_earlier_runs_judges_file_is_removed_with_its_run(files, tmp_path, monkeypatch, capsys):
    records, policy = files
    out = tmp_path / "out"
    out.mkdir()
    (out / "judges.jsonl").write_text('{"conversation_id": "c0"}\n')  # of an earlier run, with --judge-model
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["conversations.jsonl", "report.html", "summary.json"]


# ------------------------------------------------------------------ stale temporary files

def _own_temporary_name(folder) -> str:
    """The name write_atomic gives its temporary file (``.NAME.PID@HOST.XXXXXXXX.tmp``), seen while it writes."""
    seen = []

    def chunks():
        seen.extend(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))
        yield b"x"

    write_atomic(folder / "probe", chunks=chunks())
    (folder / "probe").unlink()
    return seen[0]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_run_removes_the_temporary_files_of_killed_runs_and_keeps_those_of_live_ones(files, tmp_path, monkeypatch,
                                                                                       capsys):
    records, policy = files
    out = tmp_path / "out"
    out.mkdir()
    own = _own_temporary_name(out)
    assert own.startswith(f".probe.{os.getpid()}@") and own.endswith(".tmp")
    host = own.split("@")[1].split(".")[0]
    hour_ago = time.time() - 2 * 3600
    stale = {f".conversations.jsonl.{_dead_pid()}@{host}.abcd1234.tmp": None,  # its writer is gone
             ".summary.json.12345@another-machine.abcd1234.tmp": hour_ago,  # unwritten for 2 hours
             ".conversations.jsonl.q1w2e3r4.tmp": hour_ago}  # of a version without the writer in the name
    kept = {f".conversations.jsonl.{os.getpid()}@{host}.abcd1234.tmp": hour_ago,  # its writer runs (this one)
            ".summary.json.12345@another-machine.zxcv5678.tmp": None,  # written a moment ago, on another machine
            ".conversations.jsonl.zxcv5678.tmp": None,
            ".notes.tmp": hour_ago, "draft.tmp": hour_ago}  # not ours
    for name, when in {**stale, **kept}.items():
        (out / name).write_bytes(b"x" * 1000)
        if when is not None:
            os.utime(out / name, (when, when))
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    assert _tree(out) == sorted(["conversations.jsonl", "summary.json", "report.html", *kept])


def _cell(row, seed_seq):
    return [{"y": int(row["x"]) * 2}]


def test_a_study_removes_the_temporary_cells_of_a_killed_run(tmp_path):
    out = tmp_path / "study"
    (out / "cells").mkdir(parents=True)
    host = _own_temporary_name(out).split("@")[1].split(".")[0]
    left = out / "cells" / f".000001.json.{_dead_pid()}@{host}.a1b2c3d4.tmp"
    left.write_bytes(b"{")
    run_cells(pd.DataFrame({"x": [1, 2]}), _cell, seed=1, out_dir=out, progress=False)
    assert not left.exists() and sorted(p.name for p in (out / "cells").iterdir()) == ["000000.json", "000001.json"]


# ------------------------------------------------------------------ --out checked before anything is read

def _commands(tmp_path, records, policy, scored):
    return {"score": ["score", records, "--policy", policy],
            "compare": ["compare", scored, scored],
            "leaderboard": ["leaderboard", records, records, "--policy", policy, "--name", "a", "--name", "b"],
            "simulate": ["simulate", "--profile", "follows_policy", "--cases", "2"],
            "study": ["study", "differences", "--smoke", "--nsim", "2"]}


@pytest.fixture
def scored(files, tmp_path):
    score_file(files[0], load_policy(files[1]), out_dir=tmp_path / "scored")
    return tmp_path / "scored"


@pytest.mark.parametrize("command", ["score", "compare", "leaderboard", "simulate", "study"])
@pytest.mark.parametrize("kind", ["file", "dangling symlink", "inside a file"])
def test_an_unusable_out_is_refused_in_one_line_before_anything_runs(files, scored, tmp_path, monkeypatch, capsys,
                                                                    command, kind):
    records, policy = files
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("mine\n")
        out, why = target, "exists and is not a folder; --out names the folder to write"
    elif kind == "dangling symlink":
        target.symlink_to(tmp_path / "nowhere")
        out, why = target, (f"is a symbolic link to {tmp_path / 'nowhere'}, which does not exist; --out names the "
                            "folder to write")
    else:
        target.write_text("mine\n")
        out, why = target / "sub", f"cannot be made: {target} is not a folder; --out names the folder to write"
    before = _tree(tmp_path)
    code, printed, err = run_cli_output(monkeypatch, capsys, *_commands(tmp_path, records, policy, scored)[command],
                                        "--out", out)
    assert (code, printed, err) == (2, "", f"error: {out}: {why}\n")
    assert _tree(tmp_path) == before and (kind == "dangling symlink" or target.read_text() == "mine\n")


def test_an_out_that_is_the_input_is_refused(files, scored, tmp_path, monkeypatch, capsys):
    records, policy = files
    raw = records.read_bytes()
    for args, out, why in (
            (["score", records, "--policy", policy], records, f"is the input {records}"),
            (["score", tmp_path / "scored" / "conversations.jsonl", "--policy", policy], scored,
             f"holds the input {scored / 'conversations.jsonl'}, which this run would replace with its "
             "conversations.jsonl; give another --out folder"),
            (["score", records, "--policy", policy, "--labels", tmp_path / "summary.json"], tmp_path,
             f"holds the input {tmp_path / 'summary.json'}, which this run would replace with its summary.json; "
             "give another --out folder"),
            (["compare", scored, scored], scored, f"is the input {scored}"),
    ):
        (tmp_path / "summary.json").write_text("{}")
        code, printed, err = run_cli_output(monkeypatch, capsys, *args, "--out", out)
        assert (code, printed) == (2, "") and err.startswith(f"error: {out}: {why}") and len(err.splitlines()) == 1
    assert records.read_bytes() == raw and read_scored(scored)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder of mode 0555 (tests/e2e/test_full_disk.py "
                                              "checks a read-only file system instead)")
def test_a_folder_this_user_cannot_write_is_refused(files, tmp_path, monkeypatch, capsys):
    records, policy = files
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    for out, why in ((locked, "is not writable by this user"),
                     (locked / "new", f"cannot be made: {locked} is not writable by this user")):
        code, _, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
        assert code == 2 and err == f"error: {out}: {why}; --out names a folder this run can write to\n"


# ------------------------------------------------------------------ interrupted runs

def test_an_interrupted_score_ends_in_one_line_and_removes_what_it_created(files, tmp_path, monkeypatch, capsys):
    from rich.progress import Progress

    records, policy = files
    out, handler = tmp_path / "new" / "out", signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(Progress, "advance", lambda *args: os.kill(os.getpid(), signal.SIGINT))  # Ctrl-C mid-run
    code, printed, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
    assert (code, printed) == (2, "")
    assert err == ("error: interrupted (SIGINT); the files this run had begun are removed (a study keeps its "
                   "finished cells: run it again to resume)\n")
    assert not (tmp_path / "new").exists()
    assert signal.getsignal(signal.SIGINT) is handler  # main() gives the handler back


def test_a_killed_score_reading_standard_input_removes_its_folder_and_its_copy(files, tmp_path):
    records, policy = files
    out = tmp_path / "new" / "out"
    spool = tmp_path / "spool"
    spool.mkdir()
    run = subprocess.Popen([sys.executable, "-m", "escalation", "score", "-", "--policy", str(policy), "--out",
                            str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env={**os.environ, "TMPDIR": str(spool)})
    run.stdin.write(records.read_bytes())  # and no end of input: the run waits for more
    run.stdin.flush()
    deadline = time.monotonic() + 60
    # the copy itself: the first entry may be the file that tempfile.gettempdir() makes and removes to test the folder
    while not list(spool.glob("escalation-stdin-*")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert out.is_dir() and list(spool.glob("escalation-stdin-*"))  # the folder made and standard input being copied
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and err.decode().startswith("error: interrupted (SIGTERM); ")
    assert len(err.splitlines()) == 1 and not (tmp_path / "new").exists() and not list(spool.iterdir())


# ------------------------------------------------------------------ simulate

def test_simulate_never_writes_through_a_link_planted_beside_its_output(tmp_path, monkeypatch, capsys):
    out, victim = tmp_path / "sim", tmp_path / "victim.txt"
    out.mkdir()
    victim.write_text("precious\n")
    (out / "records.jsonl.part").symlink_to(victim)  # the fixed temporary name of earlier versions
    (out / "records.jsonl").symlink_to(victim)
    assert run_cli(monkeypatch, "simulate", "--profile", "follows_policy", "--cases", "2", "--out", out) == 0
    assert victim.read_text() == "precious\n"
    assert not (out / "records.jsonl").is_symlink() and (out / "records.jsonl").read_bytes().count(b"\n") == 4
    assert _tree(out) == ["policy.json", "records.jsonl", "records.jsonl.part"]  # the planted link left alone
