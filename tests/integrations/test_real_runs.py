"""The recorded real-model runs (``examples/data/real-runs/``) score as their README says.

The figures are those of ``examples/data/real-runs/README.md`` ("Scores"): ``escalation score`` of each model's
folder on 2026-12-04, every transcript read against the domain's rule by a person, who scored each the same. A
change of a reader or of the scorer that moves them fails here; ``test_replay_model.py`` checks that the task,
replayed, gives the same conversations again. inspect_ai's own metrics, written into each log by the task's
scorer when the run ended, must equal ``escalation score`` of that log.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from escalation.cli import app
from escalation.suite import suite_policy_path

RUNS = Path(__file__).resolve().parents[2] / "examples" / "data" / "real-runs"
#: model folder -> conversations, (errors, n) of p_u, p_o and p_a, (correct pairs, pairs) of pi, the causes
EXPECTED = {
    "qwen2.5-coder-0.5b": {
        "conversations": 24, "p_u": (12, 12), "p_o": (4, 12), "pi": (0, 12), "p_a": (6, 6),
        "under_causes": {"no_handoff": 9, "acted_before_handoff": 3},
        "over_causes": {"unneeded_handoff": 2, "unneeded_approval_request": 2},
        "base": {"p_u": 0.75, "p_o": 2 / 12, "pi": 1 / 12}},
    "qwen2.5-coder-1.5b": {
        "conversations": 48, "p_u": (24, 24), "p_o": (5, 24), "pi": (0, 24), "p_a": (16, 16),
        "under_causes": {"no_handoff": 18, "acted_before_handoff": 6},
        "over_causes": {"unneeded_handoff": 5, "unneeded_approval_request": 0},
        "base": {"p_u": 0.75, "p_o": 5 / 24, "pi": 0.125}},
}


def _score(paths, out: Path, *options: str) -> dict:
    result = CliRunner().invoke(app, ["score", *map(str, paths), "--policy", str(suite_policy_path()),
                                      "--out", str(out), *options])
    assert result.exit_code in (0, 1), result.output   # 1: a warning that the run is small
    return json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_each_model_scores_as_published(model, tmp_path):
    want, summary = EXPECTED[model], _score([RUNS / model], tmp_path / "scored")
    assert summary["conversations"] == want["conversations"]
    for figure, half in (("p_u", "under"), ("p_o", "over"), ("p_a", "approval")):
        assert (summary[half]["errors"], summary[half]["n"]) == want[figure], figure
    paired = summary["paired"]
    assert (round(paired["pi"] * paired["pairs"]), paired["pairs"]) == want["pi"]
    assert {k: v for k, v in summary["under"]["causes"].items() if v} == {k: v for k, v in
                                                                          want["under_causes"].items() if v}
    assert {k: summary["over"]["causes"].get(k, 0) for k in want["over_causes"]} == want["over_causes"]
    base = summary["base"]
    assert (base["under_rate"], base["over_rate"], base["pi"]) == pytest.approx(
        (want["base"]["p_u"], want["base"]["p_o"], want["base"]["pi"]), abs=1e-12)


@pytest.mark.parametrize("log_path", sorted(RUNS.glob("*/*.eval")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_inspect_ais_metrics_in_each_log_equal_escalation_score(log_path, tmp_path):
    (metrics,) = [s.metrics for s in read_eval_log(str(log_path), header_only=True).results.scores]
    # the logs were run before --interval auto: their metrics hold the paper's Wilson-Kish intervals
    summary = _score([log_path], tmp_path / "scored", "--interval", "wilson-kish")
    for figure, half in (("p_u", "under"), ("p_o", "over"), ("pi", "paired"), ("p_a", "approval")):
        rate = summary[half]["pi" if figure == "pi" else "rate"]
        assert metrics[figure].value == pytest.approx(rate, abs=1e-12), figure
        low, high = summary[half]["ci"]
        assert (metrics[f"{figure}_ci_low"].value, metrics[f"{figure}_ci_high"].value) == pytest.approx(
            (low, high), abs=1e-12), figure
