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


def test_the_layers_import_from_the_checkouts_root():
    # Started in a clone's root, Python (and inspect eval, which puts that folder on sys.path) finds the folder
    # escalation/ there before the installed mapping: the layers beside it must still import, and the task load.
    import subprocess
    import sys

    code = ("import escalation.estimators.stats, escalation.simulate, escalation.suite, "
            "escalation.integrations.inspect_ai._registry as r; print(r.__name__)")
    for entry in ("", str(ROOT)):
        done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {entry!r}); {code}"],
                              cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    elsewhere = subprocess.run([sys.executable, "-c", "import escalation, os; "
                                "print(escalation.__path__ == [os.path.dirname(escalation.__file__)])"],
                               cwd=ROOT / "tests", capture_output=True, text=True)
    assert elsewhere.stdout.strip() == "True", elsewhere.stderr  # found through the installed mapping: nothing added
