"""The install lines of the README work on a machine without the clone: the wheel, with the suite extra.

A wheel is built from this tree and installed into a fresh virtual environment that sees this
machine's packages (``--system-site-packages``) but no package index (``--no-index``): so the test
proves what the wheel holds and that no step downloads anything, not what PyPI serves. Every command
then runs from a folder outside the clone, with the environment's own ``escalation`` and ``inspect``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.slow


def _run(args, cwd, timeout=600, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                            env=env)
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A virtual environment with the wheel of this tree and its suite extra, installed offline."""
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"  # the wheel is built from a copy: a build never writes into the tree under test
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "*.egg-info", "build", "dist", "results",
                                                                  "__pycache__", "_build", ".pytest_cache"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", ".", "-w", tmp / "dist"],
         cwd=source)
    wheel, = (tmp / "dist").glob("escalation-*.whl")
    _run([sys.executable, "-m", "venv", "--system-site-packages", tmp / "venv"], cwd=tmp)
    bin_dir = tmp / "venv" / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--no-index", f"{wheel}[inspect]"], cwd=tmp)
    work = tmp / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    return bin_dir, work, env


def test_the_readme_says_the_lines_this_test_runs():
    readme = (ROOT / "README.md").read_text()
    assert 'python -m pip install -e ".[inspect]"' in readme  # the suite extra from a clone
    assert 'pip install "escalation[inspect]"' not in readme  # no such package on the index
    assert re.search(r"python -m pip wheel --no-deps \. -w dist/", readme)


def test_the_installed_package_is_the_wheel_not_the_clone(installed):
    bin_dir, work, env = installed
    where = _run([bin_dir / "python", "-c", "import escalation, sys; print(escalation.__file__)"], cwd=work, env=env)
    assert "venv" in where.stdout and str(ROOT) not in where.stdout
    version = _run([bin_dir / "escalation", "--version"], cwd=work, env=env)
    assert version.stdout.startswith("escalation ")


def test_the_wheel_scores_a_log_with_its_own_data(installed):
    bin_dir, work, env = installed
    log = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
    policy = ROOT / "examples" / "tau-bench-airline.policy.json"
    shutil.copy(log, work / "log.json")
    shutil.copy(policy, work / "policy.json")
    _run([bin_dir / "escalation", "score", "log.json", "--policy", "policy.json", "--out", "scored"], cwd=work,
         env=env)
    summary = json.loads((work / "scored" / "summary.json").read_text())
    assert summary["under"]["n"] > 0 and summary["over"]["n"] > 0


def test_the_suite_extra_runs_the_suite_offline_with_the_projects_own_model(installed):
    bin_dir, work, env = installed
    # inspect_ai came from this machine's packages, so its ``inspect`` script is not in the environment's bin:
    # ``python -m inspect_ai`` is the same command, run by the environment's Python (which sees the wheel)
    _run([bin_dir / "python", "-m", "inspect_ai", "eval", "escalation/paired_oversight", "--model",
          "escalation/follows_policy", "--limit", "4", "--log-dir", "logs", "--display", "none"], cwd=work, env=env)
    log, = (work / "logs").glob("*.eval")
    _run([bin_dir / "escalation", "suite", "export", "--out", "suite"], cwd=work, env=env)
    scored = _run([bin_dir / "escalation", "score", log, "--policy", "suite/policy.json", "--json"], cwd=work,
                  env=env)
    summary = json.loads(scored.stdout)
    assert summary["not_evaluated"]["total"] == 0 and summary["under"]["n"] + summary["over"]["n"] == 4
