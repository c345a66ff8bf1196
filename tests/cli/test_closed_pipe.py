"""``escalation score ... | head -1``: a standard output closed early (issue of 2026-12-04: exit 1, silently)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_a_reader_that_closes_stdout_early_gets_141_and_a_note_and_the_files_are_written(tmp_path):
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-m", "escalation", "score",
                            str(ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"), "--policy",
                            str(ROOT / "examples" / "tau-bench-airline.policy.json"), "--out", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()  # closed before the first line is written: the write fails for sure (a read line would race)
    err = run.stderr.read().decode()
    assert run.wait(timeout=120) == 141  # as a process ended by SIGPIPE: set -o pipefail sees it
    assert err.endswith("note: the reader of standard output closed it early (| head?); everything this run writes "
                        "to files was written\n")
    assert sorted(p.name for p in out.iterdir()) == ["conversations.jsonl", "report.html", "summary.json"]
