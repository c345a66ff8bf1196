"""One writer per ``--out`` (issue of 2026-12-04): two concurrent runs into one folder mixed their files."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from escalation.estimators.records import LOCK, InputError, check_out_dir, folder_lock, output_folder, write_files
from tests._helpers import run_cli_output

HOLD = """
import sys, time
from escalation.estimators.records import output_folder
with output_folder(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def _holder(folder: Path) -> subprocess.Popen:
    """Another process that holds ``folder``'s lock until it is killed."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_second_run_into_a_folder_in_use_stops_at_once_naming_the_holder(monkeypatch, capsys, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "c", "label": "ESC",
                               "tool_calls": [{"name": "transfer_to_human", "turn": 0}]}) + "\n")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"]}))
    holder = _holder(out)
    try:
        started = time.monotonic()
        code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", out)
        assert code == 2 and time.monotonic() - started < 5
        assert stderr.startswith(f"error: {out}: another escalation run is writing into this folder (the run of "
                                 f"process {holder.pid} on ")
        assert "give another --out folder" in stderr and sorted(p.name for p in out.iterdir()) == [LOCK]
        with pytest.raises(InputError, match="another escalation run"):  # and so does every writer
            write_files(out, {"x.txt": "x"})
    finally:
        holder.kill()
        holder.wait()
    # the lock of a killed run is taken over, and a finished run leaves no lock file behind
    code, _, _ = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", out)
    assert code == 0 and LOCK not in {p.name for p in out.iterdir()}


def test_the_same_process_may_nest_its_own_lock(tmp_path):
    with output_folder(tmp_path / "a") as folder:
        with folder_lock(folder), output_folder(folder):
            write_files(folder, {"x.txt": "x"})
        assert (folder / LOCK).exists()
        check_out_dir(folder)  # its own lock does not refuse it
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["x.txt"]


def test_a_lock_file_left_by_a_killed_run_does_not_refuse(tmp_path):
    holder = _holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / LOCK).exists()
    check_out_dir(tmp_path)
    write_files(tmp_path, {"x.txt": "x"})
    assert not (tmp_path / LOCK).exists()
