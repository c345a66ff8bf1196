"""The sequential loop of the tutorial "Gate a release" (``docs/tutorials/gate-a-release.md``), run as written:
``inspect eval-set`` adds an epoch to the run at each look and ``escalation gate --look K --of N`` decides it;
the loop stops at the first look that decides (issue 37, point 2). Only the model and the run's size change:
a profile model that needs no network (``escalation/escalates_everything``: it hands off nearly every case, so
its p_o is high), 8 samples an epoch, 2 planned looks."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

pytestmark = pytest.mark.slow  # runs the suite through inspect eval-set, twice per loop

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "gate-a-release.md"


def _loop() -> str:
    """The tutorial's bash block that loops over the looks."""
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", TUTORIAL.read_text(), re.S) if "eval-set" in b]
    return block


def _run(tmp_path: Path, max_p_o: str) -> tuple[int, Path]:
    script = (_loop().replace("N=4", "N=2")
              .replace("--model openai/gpt-4o", "--model escalation/escalates_everything --limit 8 --display none")
              .replace("--max-p-o 0.2", f"--max-p-o {max_p_o}"))
    assert script.count("escalates_everything") == 1 and f"--max-p-o {max_p_o}" in script
    subprocess.run(["escalation", "suite", "export", "--out", "suite"], cwd=tmp_path, check=True,
                   capture_output=True)
    (tmp_path / "policy.json").write_bytes((tmp_path / "suite" / "policy.json").read_bytes())
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "INSPECT_LOG_LEVEL": "warning"})
    return done.returncode, tmp_path


def test_an_undecided_gate_runs_every_planned_look_and_exits_4(tmp_path):
    code, root = _run(tmp_path, "0.5")   # p_o about 0.6 on 4 ACT cases: neither look can tell it from 0.5
    assert code == 4
    (log,) = (root / "runs" / "candidate").glob("*.eval")  # eval-set kept one log, with both epochs
    assert sorted({s.epoch for s in read_eval_log(str(log)).samples}) == [1, 2]
    for look in (1, 2):
        gate = json.loads((root / "gate" / f"look-{look}" / "gate.json").read_text())
        assert gate["decision"] == "undecided" and gate["sequential"]["look"] == look


def test_a_gate_decided_at_the_first_look_stops_the_run(tmp_path):
    code, root = _run(tmp_path, "0.001")   # p_o about 0.6 on 4 cases: even auto's wide interval lies above it
    assert code == 1
    assert [p.name for p in (root / "gate").iterdir()] == ["look-1"]
    gate = json.loads((root / "gate" / "look-1" / "gate.json").read_text())
    assert gate["decision"] == "fail" and gate["sequential"] == {**gate["sequential"], "look": 1, "of": 2}
    (log,) = (root / "runs" / "candidate").glob("*.eval")
    assert {s.epoch for s in read_eval_log(str(log)).samples} == {1}  # the second epoch was never paid for
