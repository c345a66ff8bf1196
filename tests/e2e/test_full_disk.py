"""A full disk and a read-only file system: one line naming the file, exit 2, and nothing left (issue 17).

Each test mounts a small tmpfs of its own and unmounts it at the end; where this user cannot mount
one (mounting needs root), the test is skipped and says so.
"""
from __future__ import annotations

import contextlib
import os
import subprocess

import orjson
import pytest

from escalation.estimators.records import read_scored

from .._helpers import run_cli_output

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


POLICY = '{"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}\n'
FULL = "No space left on device"


@contextlib.contextmanager
def _tmpfs(folder, options):
    folder.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                                 text=True)
    except FileNotFoundError:
        pytest.skip("no mount command here: the test mounts a small tmpfs")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'mount failed'}): mounting needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def disk(tmp_path):
    """A 256 KiB file system, empty."""
    with _tmpfs(tmp_path / "disk", "size=256k") as folder:
        yield folder


@pytest.fixture
def read_only(tmp_path):
    """A read-only file system (as root, the one folder a run cannot write to)."""
    with _tmpfs(tmp_path / "ro", "ro,size=64k") as folder:
        yield folder


def _records(path, n):
    lines = [orjson.dumps({"conversation_id": f"c{i}", "case_id": f"k{i // 2}", "label": "ACT" if i % 2 else "ESC",
                           "assistant_turns": 3, "tool_calls": [{"turn": 0, "name": "get_order"}]})
             for i in range(n)]  # a call read: a log with none exits 3 (SPEC section 7)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture
def files(tmp_path):
    (tmp_path / "policy.json").write_text(POLICY)
    return tmp_path / "policy.json"


def _left(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_score_on_a_full_disk_names_the_file_and_leaves_nothing(disk, files, tmp_path, monkeypatch, capsys):
    records = _records(tmp_path / "records.jsonl", 2000)  # conversations.jsonl of about 1 MB
    out = disk / "runs" / "first"
    code, printed, err = run_cli_output(monkeypatch, capsys, "score", records, "--policy", files, "--out", out)
    assert (code, printed) == (2, "") and err == f"error: {out / 'conversations.jsonl'}: {FULL}\n"
    assert _left(disk) == []  # no temporary file, and neither folder it made


def test_a_full_disk_at_the_summary_keeps_the_earlier_outputs_together(disk, files, tmp_path, monkeypatch, capsys):
    out = disk / "out"
    first = _records(tmp_path / "first.jsonl", 20)
    alone = ("--no-report",)  # the two files alone (tests/figures/test_report_html.py: a failed report leaves nothing)
    assert run_cli_output(monkeypatch, capsys, "score", first, "--policy", files, "--out", out, *alone)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    second = _records(tmp_path / "second.jsonl", 250)
    assert run_cli_output(monkeypatch, capsys, "score", second, "--policy", files, "--out", tmp_path / "alone",
                          *alone)[0] == 0
    needed = (tmp_path / "alone" / "conversations.jsonl").stat().st_size
    page = os.statvfs(disk).f_frsize
    free = os.statvfs(disk).f_bavail * page
    # room for conversations.jsonl only, and the page of the run's lock file (estimators.records.folder_lock); the
    # 250 lines (about 560 bytes each since the approval fields of SPEC 3A) must fit the 256k disk beside the first run
    assert free > (-(-needed // page) + 1) * page
    (disk / "filler").write_bytes(b"x" * (free - (-(-needed // page) + 1) * page))
    code, _, err = run_cli_output(monkeypatch, capsys, "score", second, "--policy", files, "--out", out, *alone)
    assert code == 2 and err == f"error: {out / 'summary.json'}: {FULL}\n"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the earlier run, whole
    assert read_scored(out)[1]["conversations"] == 20


def test_simulate_on_a_full_disk_names_the_file_and_leaves_nothing(disk, monkeypatch, capsys):
    out = disk / "sim"
    code, printed, err = run_cli_output(monkeypatch, capsys, "simulate", "--profile", "follows_policy", "--cases",
                                        "150", "--out", out)
    assert (code, printed) == (2, "") and err == f"error: {out / 'records.jsonl'}: {FULL}\n"
    assert _left(disk) == []


def test_a_study_on_a_full_disk_ends_in_one_line_and_leaves_no_temporary_file(tmp_path, monkeypatch, capsys):
    with _tmpfs(tmp_path / "small", "size=64k") as small:  # its cells fit, its figures do not
        out = small / "study"
        code, printed, err = run_cli_output(monkeypatch, capsys, "study", "differences", "--smoke", "--nsim", "2",
                                            "--out", out)
        assert code == 2 and len(err.splitlines()) == 1
        assert err.startswith(f"error: {out}/") and err.endswith(f": {FULL}\n")
        assert not [name for name in _left(small) if name.endswith(".tmp")], err
        assert "study/cells/000000.json" in _left(small)  # kept, to resume when there is room


@pytest.mark.parametrize("command", [["score", "{records}", "--policy", "{policy}"],
                                     ["simulate", "--profile", "follows_policy", "--cases", "2"],
                                     ["study", "differences", "--smoke", "--nsim", "2"]])
def test_a_read_only_file_system_is_refused_before_anything_runs(read_only, files, tmp_path, monkeypatch, capsys,
                                                                command):
    records = _records(tmp_path / "records.jsonl", 4)
    args = [a.format(records=records, policy=files) for a in command]
    for out, why in ((read_only, "is on a read-only file system"),
                     (read_only / "new" / "out", f"cannot be made: {read_only} is on a read-only file system")):
        code, printed, err = run_cli_output(monkeypatch, capsys, *args, "--out", out)
        assert (code, printed) == (2, "")
        assert err == f"error: {out}: {why}; --out names a folder this run can write to\n"
    assert _left(read_only) == []
