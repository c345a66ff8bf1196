"""Helpers shared by the tests of the command line and of the study engine."""
from __future__ import annotations

import sys
from pathlib import Path

from escalation.cli import main


def run_cli(monkeypatch, *args) -> int:
    """Run ``escalation ARGS`` in this process; its exit code."""
    monkeypatch.setattr(sys, "argv", ["escalation", *map(str, args)])
    try:
        main()
    except SystemExit as exit_:
        return exit_.code
    return 0


def output_files(folder: Path) -> dict[str, bytes]:
    """Every output file by its path in ``folder``, except run.json (times, backend, cells resumed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "run.json"}


def run_cli_output(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """Run ``escalation ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    code = run_cli(monkeypatch, *args)
    out = capsys.readouterr()
    return code, out.out, out.err
