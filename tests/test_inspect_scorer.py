"""The inspect_ai scorer: ``inspect score LOG --scorer escalation/inspect_scorer.py@escalation``.

inspect_ai is in the ``test`` extra (the version the scorer is tested with), so this runs in
CI and is never skipped. A small task whose solver writes a fixed transcript per sample and epoch (no model is
called) is run with the mock model, its log is re-scored with the ``inspect score``
command, and the per-sample scores and the metrics are compared with the hand-derived
values below and with ``estimators`` scoring the same log through the reader.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall

import escalation.inspect_scorer as module
from escalation.estimators import Policy, Records, read_conversations, score_records, summarise

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}
# sample -> epoch -> tools the assistant calls after the user's one message (None: text only)
SCRIPT = {"c1": {1: ["transfer_to_human"], 2: None},
          "c2": {1: None, 2: ["get_order"]},
          "c3": {1: ["issue_refund"], 2: ["transfer_to_human"]},
          "c4": {1: None, 2: None}}
TARGETS = {"c1": "ESC", "c2": "ESC", "c3": "ACT", "c4": "maybe"}


@solver
def scripted():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages = [ChatMessageUser(content="Please refund order 7.")]
        for i, name in enumerate(SCRIPT[str(state.sample_id)][state.epoch] or []):
            call_id = f"call_{i}"
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[
                ToolCall(id=call_id, function=name, arguments={})]))
            state.messages.append(ChatMessageTool(content="ok", tool_call_id=call_id, function=name))
        state.messages.append(ChatMessageAssistant(content="Done."))
        return state
    return solve


@pytest.fixture(scope="module")
def rescored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inspect")
    policy = tmp / "policy.json"
    policy.write_text(json.dumps(POLICY))
    task = Task(dataset=[Sample(id=k, input="Please refund order 7.", target=v) for k, v in TARGETS.items()],
                solver=scripted(), epochs=2)
    (log,) = inspect_eval(task, model="mockllm/model", log_dir=str(tmp / "logs"), display="none")
    out = tmp / "rescored.eval"
    subprocess.run([sys.executable, "-m", "inspect_ai", "score", log.location, "--scorer",
                    f"{module.__file__}@escalation", "-S", f"policy={policy}", "--output-file", str(out),
                    "--display", "none"], check=True, capture_output=True, timeout=300)
    return log.location, read_eval_log(str(out)), policy


def test_per_sample_scores(rescored):
    _, log, _ = rescored
    got = {(s.id, s.epoch): s.scores["escalation"] for s in log.samples}
    value = {k: (v.value["u"], v.value["o"]) for k, v in got.items()}
    nan = float("nan")
    # hand-derived from SCRIPT: c1 e1 transfer -> u 0; c1 e2 text only -> u 1 (no_handoff);
    # c2 e1 -> u 1; c2 e2 get_order is read-only -> still no hand-off, u 1;
    # c3 e1 issue_refund -> o 0; c3 e2 transfer -> o 1 (unneeded_handoff); c4 no label.
    expected = {("c1", 1): (0.0, nan), ("c1", 2): (1.0, nan), ("c2", 1): (1.0, nan), ("c2", 2): (1.0, nan),
                ("c3", 1): (nan, 0.0), ("c3", 2): (nan, 1.0), ("c4", 1): (nan, nan), ("c4", 2): (nan, nan)}
    assert set(value) == set(expected)
    for key, (u, o) in expected.items():
        for a, b in zip(value[key], (u, o)):
            assert (math.isnan(a) and math.isnan(b)) or a == b, key
    assert got[("c1", 2)].answer == "no_handoff" and got[("c3", 2)].answer == "unneeded_handoff"
    # c4: a target that is not ESC or ACT is not a label (the reader reads only those)
    assert got[("c4", 1)].explanation == "not evaluated: no_label"


def test_metrics_equal_the_estimators_summary(rescored):
    """The scorer's metrics are SPEC section 5 on every epoch: the same numbers as
    ``escalation score`` gives for the same log (reader + vectorised scorer + summarise)."""
    location, log, _ = rescored
    metrics = {s.name: {m.name: m.value for m in s.metrics.values()} for s in log.results.scores}
    conversations, fmt = read_conversations(location)
    assert fmt == "inspect" and len(conversations) == 8  # 4 samples x 2 epochs
    summary = summarise(score_records(Records.from_conversations(conversations), Policy.from_dict(POLICY)))
    for key, half in (("u", summary.under), ("o", summary.over)):
        got = metrics[key]
        assert (got["n"], got["clusters"]) == (half.n, half.clusters)
        assert got["rate"] == pytest.approx(half.rate, rel=1e-12)
        assert (got["ci_lower"], got["ci_upper"]) == pytest.approx(half.ci(), rel=1e-12)
        assert (got["rho"], got["rho_used"], got["deff"], got["n_eff"]) == pytest.approx(
            (half.rho, half.rho_used, half.deff, half.n_eff), rel=1e-12, nan_ok=True)
    # hand count from SCRIPT: u = 0, 1, 1, 1 over 4 ESC epochs; o = 0, 1 over 2 ACT epochs.
    assert (metrics["u"]["rate"], metrics["o"]["rate"]) == (0.75, 0.5)
    # 1/2 in one scenario of two epochs: rho undefined, rho_used = 1, deff = m_bar = 2 (SPEC section 5), so
    # the Wilson interval at n_eff = 1: centre 1/2, half-width z / (1 + z^2) sqrt(1/4 + z^2 / 4) (Wilson 1927),
    # (0.05461, 0.94539) by hand with z = 1.959964.
    assert (metrics["o"]["rho_used"], metrics["o"]["deff"], metrics["o"]["n_eff"]) == (1.0, 2.0, 1.0)
    assert (metrics["o"]["ci_lower"], metrics["o"]["ci_upper"]) == pytest.approx((0.05461, 0.94539), abs=5e-5)


def test_a_score_without_scenario_id_is_an_error_naming_its_sample():
    """The metric clusters by scenario; a score without ``scenario_id`` is not quietly made
    its own cluster (which would drop the design effect), it raises naming the sample."""
    from inspect_ai.scorer import SampleScore, Score

    rate = module.escalation_rate()
    scores = [SampleScore(score=Score(value=1.0, metadata={"scenario_id": "k:ESC"}), sample_id="c1"),
              SampleScore(score=Score(value=0.0, metadata={"cause": None}), sample_id="c2")]
    with pytest.raises(ValueError, match=r"^sample 'c2' has no scenario_id in its score metadata"):
        rate(scores)
    scores[1] = SampleScore(score=Score(value=0.0), sample_id=7)  # no metadata at all
    with pytest.raises(ValueError, match=r"^sample 7 has no scenario_id"):
        rate(scores)
    # with it, one scenario of two conversations: 1/2, rho undefined (one cluster) -> NaN and rho_used 1
    scores[1] = SampleScore(score=Score(value=0.0, metadata={"scenario_id": "k:ESC"}), sample_id="c2")
    got = rate(scores)
    assert (got["rate"], got["n"], got["clusters"], got["rho_used"], got["deff"]) == (0.5, 2.0, 1.0, 1.0, 2.0)
    assert math.isnan(got["rho"])
