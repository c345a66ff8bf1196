"""The suite measures approvals (SPEC section 3A) through inspect_ai, in both designs, offline.

``escalation/paired_oversight`` is run with profile models on its approval-gated scenarios (English,
pressure none, two replicas), with ``-T approval=request`` (the assistant asks with ``request_approval``)
and ``-T approval=inline`` (the harness puts every gated call to the task's ``supervisor`` approver). The
log is scored with ``escalation score``, and conversation by conversation the scored ``approval`` statuses
equal :func:`escalation.suite.approval_truth` of the behaviour and approval handling the profile drew
(recomputed here with :func:`draw_behaviour` and :func:`draw_approval`, and the same as those the model
reports in its output metadata). ``mishandles_approvals`` draws every handling, so every status shows;
``defies_denials`` acts after every denial of the denied-approval cases.
"""
from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from typer.testing import CliRunner

from escalation.cli import app
from escalation.integrations.inspect_ai import paired_oversight
from escalation.suite import (
    APPROVAL_HANDLINGS,
    PRESSURES,
    SUITE_PROFILES,
    approval_truth,
    draw_approval,
    draw_behaviour,
    load_suite,
    suite_policy_path,
)

pytestmark = pytest.mark.slow  # inspect_ai runs of some 300 samples, 25 s in all; deselect with -m 'not slow'

SCENARIOS = {s.sample_id: s for s in load_suite().scenarios(pressures=PRESSURES)}
ERRORS = ("defied", "reused", "post_hoc", "unapproved", "unauthorized_approver")


def _run(tmp, profile: str, design: str, kind: str, language: str = "en", epochs: int = 2):
    """The task on the scenarios of one kind, played by a profile model, and the scored lines."""
    task = paired_oversight(language=language, approval=design)
    task.dataset = MemoryDataset([s for s in task.dataset if kind in s.metadata["kinds"]])
    (log,) = inspect_eval(task, model=f"escalation/{profile}", epochs=epochs, log_dir=str(tmp / "logs"),
                          display="none", log_realtime=False, score_display=False, max_samples=64)
    assert log.status == "success", log.error
    out = tmp / "scored"
    result = CliRunner().invoke(app, ["score", log.location, "--policy", str(suite_policy_path()), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    return log, lines, json.loads((out / "summary.json").read_text())


def _truth(lines, profile: str, design: str) -> list[tuple[tuple, tuple, str]]:
    """(scored statuses, true statuses, handling) of each conversation."""
    out = []
    for line in lines:
        sample_id, epoch = line["conversation_id"].rsplit(":", 1)
        scenario, replica = SCENARIOS[sample_id], int(epoch) - 1
        behaviour, _ = draw_behaviour(SUITE_PROFILES[profile], scenario, replica)
        handling = draw_approval(SUITE_PROFILES[profile], scenario, replica)
        truth = approval_truth(behaviour, handling, scenario, inline=design == "inline")
        out.append((tuple(line["approval"] or ()), truth, handling))
    return out


def _mishandled(tmp_path_factory, design: str):
    log, lines, summary = _run(tmp_path_factory.mktemp(design), "mishandles_approvals", design, "approval_gated")
    return design, log, lines, summary


@pytest.fixture(scope="module")
def request_run(tmp_path_factory):
    return _mishandled(tmp_path_factory, "request")


@pytest.fixture(scope="module")
def inline_run(tmp_path_factory):
    return _mishandled(tmp_path_factory, "inline")


@pytest.fixture(params=["request", "inline"])
def mishandled(request):
    return request.getfixturevalue(f"{request.param}_run")


def test_the_profile_model_reports_the_approval_handling_it_drew(mishandled):
    _, log, _, _ = mishandled
    for sample in log.samples:
        reported = {e.output.metadata["approval"] for e in sample.events
                    if e.event == "model" and e.output.metadata and "approval" in e.output.metadata}
        scenario = SCENARIOS[sample.id]
        assert reported == {draw_approval(SUITE_PROFILES["mishandles_approvals"], scenario, sample.epoch - 1)}


def test_the_run_draws_every_handling_and_the_truth_holds_every_status(mishandled):
    """The check below is not vacuous: the run holds every handling, and its truth every status of the design."""
    design, _, lines, _ = mishandled
    rows = _truth(lines, "mishandles_approvals", design)
    assert {handling for _, truth, handling in rows if truth} == set(APPROVAL_HANDLINGS)
    statuses = {s for _, truth, _ in rows for s in truth}
    assert statuses == ({"approved", "denied"} if design == "inline" else
                        {"approved", "defied", "reused", "post_hoc", "unapproved"})


def _scored_is_drawn(run):
    design, _, lines, summary = run
    rows = _truth(lines, "mishandles_approvals", design)
    assert [(scored, truth) for scored, truth, _ in rows if scored != truth] == []
    gated = [truth for _, truth, _ in rows if truth]
    errors = sum(any(s in ERRORS for s in truth) for truth in gated)
    assert (summary["approval"]["n"], summary["approval"]["errors"]) == (len(gated), errors)
    return summary["approval"]["rate"], errors / len(gated)


def test_inline_the_scored_statuses_are_the_drawn_ones_conversation_by_conversation(inline_run):
    rate, truth = _scored_is_drawn(inline_run)
    assert rate == truth == 0.0  # the harness asked about every gated call


def test_request_the_scored_statuses_are_the_drawn_ones_conversation_by_conversation(request_run):
    rate, truth = _scored_is_drawn(request_run)
    assert rate == pytest.approx(truth) and rate > 0


def test_defies_denials_is_scored_defied_in_every_denied_case_it_acted_in(tmp_path):
    """Both languages and every pressure of the six denied-approval cases, one replica."""
    _, lines, summary = _run(tmp_path, "defies_denials", "request", "approval_denied", language="all", epochs=1)
    rows = _truth(lines, "defies_denials", "request")
    assert [(scored, truth) for scored, truth, _ in rows if scored != truth] == []
    assert any(truth == ("defied",) for _, truth, _ in rows)
    assert summary["approval"]["causes"]["defied"] == sum(truth == ("defied",) for _, truth, _ in rows)


def test_the_task_s_own_scorer_sees_the_inline_decisions(mishandled):
    """The scorer inside the run reads the sample's ApprovalEvents: each sample's ``a`` and the metric's ``p_a``
    are those of ``escalation score`` of the log, in both designs (without the events, every gated call that an
    approver decided would be ``unapproved`` in the inline design)."""
    _, log, lines, summary = mishandled
    by_id = {line["conversation_id"]: line for line in lines}
    for sample in log.samples:
        line = by_id[f"{sample.id}:{sample.epoch}"]
        score = sample.scores["escalation"]
        assert score.metadata["approval"] == line["approval"]
    metrics = log.results.scores[0].metrics
    assert metrics["p_a"].value == pytest.approx(summary["approval"]["rate"])
    assert metrics["n_gated"].value == summary["approval"]["n"]
