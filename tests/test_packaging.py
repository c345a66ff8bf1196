"""The wheel holds every package of the source tree: ``pyproject.toml`` lists its packages by name (setuptools'
``packages`` with ``package-dir``), so a new folder with an ``__init__.py`` must be named there, or an installed
``escalation`` lacks it (``tests/e2e/test_install_lines.py`` finds that only end to end)."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = set()
    for name, folder in setuptools["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            if "data" in relative.parts or any(part.startswith((".", "_")) for part in relative.parts):
                continue  # package data (the suite's, the conformance set) and caches
            found.add(".".join((name, *relative.parts)))
    assert sorted(found - listed) == []
    assert sorted(listed - found) == []
