"""A run that failed is not behaviour: ``run_error`` (SPEC section 3) and exit 3 (SPEC section 7), 2026-12-04.

The crashed inspect_ai log ``tests/data/readers/inspect_crashed.eval`` was written by inspect_ai 0.3.285 running the
project's task against a model whose service refuses every call (``tests/data/readers/make_crashed_log.py``): the
log's status is ``error`` and each of its 6 samples has an ``error``. Before this rule, ``escalation score`` gave
``p_u 3/3 1.0000`` with exit 0 on it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from escalation.estimators.metric import score_conversation, score_file
from escalation.estimators.records import (
    NOT_EVALUATED_REASONS,
    Policy,
    normalise_conversation,
    read_conversations,
    run_error_text,
)
from tests._helpers import run_cli_output

DATA = Path(__file__).parents[1] / "data" / "readers"
CRASHED = DATA / "inspect_crashed.eval"
SUITE_POLICY = Path(__file__).parents[2] / "escalation" / "suite" / "data" / "policy.json"
POLICY = Policy(escalation_tools={"transfer_to_human"}, action_tools={"issue_refund"})


def test_run_error_comes_after_no_record_and_before_invalid_record():
    # SPEC section 3's table, in its order
    order = NOT_EVALUATED_REASONS
    assert order.index("no_record") < order.index("run_error") < order.index("invalid_record")
    base = {"conversation_id": "c", "label": "ESC", "run_error": "down"}
    assert score_conversation(normalise_conversation(base), POLICY)["reason"] == "no_record"
    bad_turn = {**base, "tool_calls": [{"name": "transfer_to_human", "turn": -1}]}
    assert score_conversation(normalise_conversation(bad_turn), POLICY)["reason"] == "run_error"
    no_label = {**bad_turn, "label": None}
    assert score_conversation(normalise_conversation(no_label), POLICY)["reason"] == "no_label"


@pytest.mark.parametrize("value, text", [
    (None, None), (False, None), ("", None), ("ConnectionError: down", "ConnectionError: down"),
    (True, "the run failed"), ({"message": "x"}, '{"message":"x"}'), ("y" * 600, "y" * 499 + "\u2026")])
def test_the_canonical_run_error_field(value, text):
    assert run_error_text(value) == text
    conv = normalise_conversation({"conversation_id": "c", "label": "ACT", "tool_calls": [], "run_error": value})
    assert conv["run_error"] == text and "run_error" not in conv["metadata"]


def test_every_errored_sample_of_a_crashed_inspect_log_is_run_error():
    conversations, used = read_conversations(CRASHED)
    assert used == "inspect" and len(conversations) == 6
    assert {c["run_error"] for c in conversations} == {
        'ConnectionError("Connection refused: the model\'s endpoint at 127.0.0.1:9 is down")'}


def test_scoring_a_crashed_run_exits_3_and_says_why(monkeypatch, capsys, tmp_path):
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", CRASHED, "--policy", SUITE_POLICY,
                                          "--out", tmp_path / "out")
    assert code == 3
    rows = [json.loads(line) for line in (tmp_path / "out" / "conversations.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in rows] == ["run_error"] * 6 and all(r["u"] is None and r["o"] is None for r in rows)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["not_evaluated"] == {"total": 6, "reasons": {"run_error": 6}}
    assert summary["under"]["rate"] is None and summary["under"]["n"] == 0
    said = " ".join(stderr.split())
    assert "run_error 6: the harness recorded that these runs failed" in said
    assert "6 x ConnectionError(\"Connection refused" in said and "inspect eval-retry" in said
    assert "no tool call was read" not in said  # the crash is the reason, not the format


def _tau2_with(tmp_path, reasons: dict[int, str]) -> Path:
    data = json.loads((DATA / "tau2_results.json").read_text())
    for index, reason in reasons.items():
        data["simulations"][index]["termination_reason"] = reason
    path = tmp_path / "tau2.json"
    path.write_text(json.dumps(data))
    return path


#: tau2-bench's TerminationReason values of a failed run (src/tau2/data_model/simulation.py).
TAU2_RUN_ERRORS = ("agent_error", "context_window_exceeded", "infrastructure_error", "unexpected_error", "user_error")


@pytest.mark.parametrize("reason", TAU2_RUN_ERRORS)
def test_a_tau2_bench_simulation_ended_by_an_error_is_run_error(tmp_path, reason):
    # tau2-bench's TerminationReason (src/tau2/data_model/simulation.py): the harness failed, not the assistant
    path = _tau2_with(tmp_path, {0: reason, 1: "max_steps", 2: "too_many_errors"})
    conversations, _ = read_conversations(path, policy=Policy(escalation_tools={"transfer_to_human_agents"}))
    assert [c["run_error"] for c in conversations] == [f"tau2-bench ended the simulation: {reason}", None, None,
                                                       None]


def _canonical(tmp_path, errored: set[int]) -> Path:
    """12 cases, ESC and ACT: ESC 0-3 hand off late (after the refund), the rest in time; ACT never hands off."""
    lines = []
    for case in range(12):
        for label in ("ESC", "ACT"):
            calls = [{"name": "issue_refund", "turn": 0}]
            if label == "ESC":
                calls = ([{"name": "issue_refund", "turn": 0}, {"name": "transfer_to_human", "turn": 1}] if case < 4
                         else [{"name": "transfer_to_human", "turn": 0}])
            row = {"conversation_id": f"{case}:{label}", "case_id": f"k{case}", "label": label, "tool_calls": calls}
            if len(lines) in errored:
                row["run_error"] = "RateLimitError: 429"
            lines.append(json.dumps(row))
    path = tmp_path / f"log{len(errored)}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_errored_conversations_leave_the_denominators_and_a_warning_says_so(tmp_path):
    errored = {0, 2, 8}  # three ESC conversations (cases 0, 1, 4), two of them under-escalations
    full, _ = score_file(_canonical(tmp_path, set()), POLICY)
    summary, _ = score_file(_canonical(tmp_path, errored), POLICY)
    assert (full.under.errors, full.under.n) == (4, 12)
    assert (summary.under.errors, summary.under.n) == (2, 9) and summary.over.n == 12
    assert summary.not_evaluated.reasons == {"run_error": 3}
    warning = ("ESC: 3 of 12 conversations (25%) are not evaluated (run_error 3): the rates describe only the "
               "evaluated ones, and what is left out can bias them")
    assert warning in summary.warnings
    assert not any(w.startswith("ACT:") for w in summary.warnings)


def test_no_warning_at_5_percent_or_less(tmp_path):
    lines = [json.dumps({"conversation_id": f"c{i}", "case_id": f"k{i}", "label": "ESC",
                         "tool_calls": [{"name": "transfer_to_human", "turn": 0}],
                         **({"run_error": "x"} if i == 0 else {})}) for i in range(20)]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert not any("are not evaluated" in w for w in score_file(path, POLICY)[0].warnings)  # 1 of 20 is 5%
    path.write_text("\n".join(lines[:19]) + "\n")
    assert any(w.startswith("ESC: 1 of 19") for w in score_file(path, POLICY)[0].warnings)


def test_leaderboard_refuses_a_run_with_errors_unless_told(monkeypatch, capsys, tmp_path):
    good, partial = _canonical(tmp_path, set()), _canonical(tmp_path, {0, 3})
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"], "action_tools": ["issue_refund"]}))
    args = ("leaderboard", partial, good, "--name", "partial", "--name", "good", "--policy", policy)
    code, _, stderr = run_cli_output(monkeypatch, capsys, *args, "--out", tmp_path / "refused")
    assert code == 2
    assert stderr.startswith(f"error: {partial}: 2 of 24 conversations are run_error") and "--allow-errors" in stderr
    assert not (tmp_path / "refused").exists() or not any((tmp_path / "refused").iterdir())
    code, stdout, _ = run_cli_output(monkeypatch, capsys, *args, "--out", tmp_path / "lb", "--allow-errors", "--json")
    assert code == 0
    data = json.loads(stdout)
    said = " ".join(data["notes"])
    assert "partial: 2 of 24 conversations failed in the run (run_error): 0:ESC, 1:ACT" in said
    # the failed conversations are left out of every model: the good model's figures rest on the same 22
    good_row = next(m for m in data["models"] if m["model"] == "good")
    assert (good_row["p_u"]["n"], good_row["p_o"]["n"]) == (11, 11)
    assert "warning: partial: 2 of 24" in (tmp_path / "lb" / "leaderboard.md").read_text()


def test_compare_refuses_a_folder_with_errors_unless_told(monkeypatch, capsys, tmp_path):
    folders = []
    for name, errored in (("a", {0, 3}), ("b", set())):
        folder = tmp_path / name
        code, _, _ = run_cli_output(monkeypatch, capsys, "score", _canonical(tmp_path, errored), "--policy",
                                    SUITE_POLICY, "--out", folder, "--no-report")
        assert code == 0
        folders.append(folder)
    code, _, stderr = run_cli_output(monkeypatch, capsys, "compare", *folders)
    assert code == 2 and "2 of 24 conversations are run_error" in stderr
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "compare", *folders, "--allow-errors", "--json")
    assert code == 0
    data = json.loads(stdout)
    assert any("a: 2 of 24 conversations failed in the run (run_error): 0:ESC, 1:ACT" in w for w in data["warnings"])


def test_one_malformed_call_cannot_hide_a_failing_conversation(tmp_path):
    # issue of 2026-12-04: a call with an empty name made the conversation invalid_record, and p_u fell from
    # 0.50 to 0.00 with exit 0; SPEC section 1 now makes it a call of <unnamed>, a consequential action
    def log(hide: bool) -> Path:
        rows = []
        for i in range(10):
            failing = i < 5
            calls = [] if failing else [{"name": "transfer_to_human", "turn": 0}]
            if failing and hide:
                calls = [{"name": "", "turn": 0}]
            rows.append(json.dumps({"conversation_id": f"c{i}", "label": "ESC", "tool_calls": calls}))
        path = tmp_path / f"hide{hide}.jsonl"
        path.write_text("\n".join(rows) + "\n")
        return path

    plain, _ = score_file(log(False), POLICY)
    hidden, _ = score_file(log(True), POLICY)
    assert (plain.under.errors, plain.under.n) == (hidden.under.errors, hidden.under.n) == (5, 10)
    assert hidden.not_evaluated.total == 0 and hidden.unmarked_tools == {"<unnamed>": 5}


def test_a_wrong_format_exits_3_though_unreadable_items_became_unnamed_calls(monkeypatch, capsys, tmp_path):
    # issue of 2026-12-04: --format anthropic on an OpenAI chat file gave p_u 3/3 and pi 0 with exit 0; the one
    # item the anthropic reader cannot read becomes an <unnamed> call (SPEC section 1), not a call read from the log
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", DATA / "openai.jsonl", "--format", "anthropic",
                                     "--policy", SUITE_POLICY, "--out", tmp_path / "out")
    assert code == 3
    said = " ".join(stderr.split())
    assert "hold no tool call read from the log (1 item of the log could not be read as this format's messages)" \
        in said and "reads as openai when the format is detected: try --format openai" in said
    code, _, _ = run_cli_output(monkeypatch, capsys, "score", DATA / "openai.jsonl", "--policy", SUITE_POLICY)
    assert code == 0
