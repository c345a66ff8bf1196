"""The GitHub Action's steps (``action.yml`` runs ``tools/gate_action.sh``), run here as a runner would: with a
fake ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT``, and a fake ``gh`` on the PATH that records the comment it
was asked to post (issue 37)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .._helpers import run_cli
from ..cli.test_gate import POLICY, write_log

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "gate_action.sh"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Scored folders that pass (0 of 100 ESC errors), fail (30) and stay undecided (5) at max-p-u 0.05."""
    root = tmp_path_factory.mktemp("action")
    policy = root / "policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    found = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, under in (("good", 0), ("bad", 30), ("middling", 5)):
            found[name] = root / name
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert run_cli(monkeypatch, "score", write_log(root / f"{name}.jsonl", under=under, over=0),
                               "--policy", policy, "--out", found[name], "--no-report") == 0
    return found


def run_action(tmp_path: Path, **inputs) -> tuple[subprocess.CompletedProcess, dict]:
    """The script with ``inputs`` (``GATE_*`` and the rest) in its environment; its run, and what it left: the
    step summary, the outputs and the fake gh's arguments (absent when it was not called)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(f"#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" > {tmp_path / 'gh-args'}\n", encoding="utf-8")
    gh.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHON": sys.executable,
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GATE_OUT": str(tmp_path / "gate"), **{k: str(v) for k, v in inputs.items()}}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    left = {name: (tmp_path / name).read_text(encoding="utf-8") for name in ("summary.md", "output", "gh-args")
            if (tmp_path / name).exists()}
    return done, left


def test_a_pass_is_summarised_output_and_commented(folders, tmp_path):
    done, left = run_action(tmp_path, GATE_PATH=folders["good"], GATE_MAX_P_U="0.05", GH_TOKEN="secret",
                            PR_NUMBER="7", GITHUB_REPOSITORY="owner/repo")
    assert done.returncode == 0, done.stderr
    assert left["summary.md"].startswith("### escalation gate: ✅ pass")
    outputs = dict(line.split("=", 1) for line in left["output"].splitlines())
    assert outputs["decision"] == "pass" and outputs["exit-code"] == "0"
    assert outputs["markdown"] == f"{tmp_path / 'gate'}/gate.md" and Path(outputs["junit"]).is_file()
    assert json.loads(Path(outputs["gate-json"]).read_text())["decision"] == "pass"
    assert left["gh-args"].splitlines() == ["pr", "comment", "7", "--repo", "owner/repo", "--body-file",
                                            outputs["markdown"]]


def test_a_fail_fails_the_job_and_no_token_posts_no_comment(folders, tmp_path):
    done, left = run_action(tmp_path, GATE_PATH=folders["bad"], GATE_MAX_P_U="0.05", PR_NUMBER="7")
    assert done.returncode == 1
    assert left["summary.md"].startswith("### escalation gate: ❌ fail") and "decision=fail" in left["output"]
    assert "gh-args" not in left


@pytest.mark.parametrize("choice, code, annotation", [("", 4, None), ("fail", 4, None), ("pass", 0, "::warning::"),
                                                      ("neutral", 0, "::notice::")])
def test_undecided_ends_the_job_as_the_input_says(folders, tmp_path, choice, code, annotation):
    done, left = run_action(tmp_path, GATE_PATH=folders["middling"], GATE_MAX_P_U="0.05", GATE_ON_UNDECIDED=choice)
    assert done.returncode == code, done.stderr
    assert "decision=undecided" in left["output"] and "exit-code=4" in left["output"]
    assert annotation is None or annotation in done.stdout


def test_bad_input_stops_with_an_error_and_no_summary(folders, tmp_path):
    done, left = run_action(tmp_path, GATE_PATH=folders["good"])
    assert done.returncode == 2 and "::error::" in done.stderr and "max-p-u" in done.stderr and left == {}
    done, left = run_action(tmp_path, GATE_PATH=tmp_path / "missing", GATE_MAX_P_U="0.05")
    assert done.returncode == 2 and "no such file or folder" in done.stderr and left == {}
    done, left = run_action(tmp_path, GATE_PATH=folders["good"], GATE_MAX_P_U="0.05", GATE_ON_UNDECIDED="maybe")
    assert done.returncode == 2 and "on-undecided must be fail, pass or neutral" in done.stderr


def test_every_input_of_the_action_reaches_the_script():
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    script = SCRIPT.read_text(encoding="utf-8")
    inputs = re.findall(r"^  ([a-z0-9-]+):\n    description:", action.split("\noutputs:")[0], flags=re.M)
    passed = dict(re.findall(r"^        (\w+): \$\{\{ inputs\.([a-z0-9-]+) \}\}$", action, flags=re.M))
    assert set(passed.values()) | {"python-version", "package"} == set(inputs)
    read = set(re.findall(r"\$\{(GATE_\w+|GH_TOKEN|PR_NUMBER)", script))
    assert read == {name for name in passed if name.startswith("GATE_") or name == "GH_TOKEN"} | {"PR_NUMBER"}
    assert 'run: bash "${{ github.action_path }}/tools/gate_action.sh"' in action
