"""Type-check the installed name ``escalation`` with mypy, from the repository's folders.

setuptools' ``package-dir`` maps ``estimators/``, ``simulate/``, ``figures/`` and ``studies/`` into
``escalation``, which mypy cannot read from the folders themselves (nor from an editable install's
import hook). This lays the package out as it is installed, with symbolic links in a temporary
folder, and runs ``mypy -p escalation`` there with the configuration of ``pyproject.toml``.

Usage: ``python tools/typecheck.py [MYPY OPTIONS]``; exits with mypy's code.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lay_out(folder: Path) -> Path:
    """``folder/escalation``: the package as installed, each part a link to the repository."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    package = folder / "escalation"
    package.mkdir()
    for entry in (ROOT / mapping["escalation"]).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, source in mapping.items():
        if name != "escalation":
            (folder / name.replace(".", "/")).symlink_to(ROOT / source)
    return package


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="escalation-typecheck-") as tmp:
        lay_out(Path(tmp))
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                   "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "escalation", *argv]
        return subprocess.run(command, cwd=tmp, env={**os.environ, "MYPYPATH": tmp}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
