"""The frictions a new user met in the first hour (issue 30), each replayed as that user ran it.

Bad labels name the values found and what to do; a ``--labels`` file keyed by ``case_id`` on
ESC/ACT twins says that the file made the repeat; a folder of several models' logs is sent to
``escalation leaderboard`` in one line; a count of one is singular; ``score -h`` shows ``LOG...``;
tables written to a file or a pipe do not wrap names at 80 columns; ``policy check`` doubts
``think`` and ``calculate`` among the actions; ``capacity`` writes each row in one number format.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"]}
ROOT = Path(__file__).resolve().parents[2]
AIRLINE = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _policy(tmp_path: Path, policy: dict = POLICY) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    return path


def _twins(n_cases: int, *, labelled: bool = True, model: str = "m") -> list[dict]:
    """ESC and ACT twins of ``n_cases`` cases, one replica each: the ESC one transfers, the ACT one acts."""
    rows = []
    for case in range(n_cases):
        for label, call in (("ESC", "transfer_to_human"), ("ACT", "issue_refund")):
            row = {"conversation_id": f"k{case}:{label}", "case_id": f"k{case}", "replica": 0,
                   "tool_calls": [{"turn": 0, "name": call}], "metadata": {"model": model}}
            rows.append({**row, "label": label} if labelled else row)
    return rows


# -- 1. bad labels ------------------------------------------------------------------------------------------------

def test_bad_labels_among_good_ones_are_named_with_what_to_do(monkeypatch, capsys, tmp_path):
    rows = _twins(3)
    for row, bad in zip(rows[3:], ("escalate", "yes", "no")):
        row["label"] = bad
    log = _write(tmp_path / "log.jsonl", rows)
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path),
                                          "--out", tmp_path / "out")
    note = ("invalid_label 3: 3 conversations left out of every figure, as their label is neither ESC nor ACT; the "
            "labels found are 'escalate' 1, 'no' 1, 'yes' 1; the two accepted are ESC and ACT (read "
            "case-insensitively): correct them or give --labels FILE (a CSV or JSON file mapping case_id or "
            "conversation_id to ESC or ACT, which replaces the log's labels)")
    assert code == 0  # the other three are scored
    assert f"warning: {note}\n" in stderr
    assert "not evaluated: 3 (invalid_label 3)" in stdout
    assert note in json.loads((tmp_path / "out" / "summary.json").read_text())["warnings"]


def test_a_bad_label_is_shown_short_and_escaped(monkeypatch, capsys, tmp_path):
    rows = _twins(2)
    rows[0]["label"] = "x" * 5000 + "\x1b[2J"
    log = _write(tmp_path / "log.jsonl", rows)
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path))
    assert code == 0
    (line,) = [line for line in stderr.splitlines() if line.startswith("warning: invalid_label 1")]
    assert "'xxxxxxxx" in line and "\u2026 1;" in line and len(line) < 500 and "\x1b" not in line


def test_a_case_id_labels_file_on_twins_names_the_file_and_what_to_do(monkeypatch, capsys, tmp_path):
    log = _write(tmp_path / "log.jsonl", _twins(2, labelled=False))
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,label\nk0,ESC\nk1,ESC\n")
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path),
                                          "--labels", labels, "--out", tmp_path / "out")
    assert code == 2 and stdout == "" and stderr.count("\n") == 1
    assert stderr == (f"error: {log}:2: field 'replica': case 'k0', label 'ESC', replica 0 repeats line 1, because "
                      f"the --labels file {labels} (line 2) gives case_id 'k0' the label ESC for all its "
                      f"conversations, ESC and ACT twins alike: label them by conversation_id in {labels} instead "
                      "(or, for replicas, give each its replica number)\n")
    assert not (tmp_path / "out").exists()
    # as it says: by conversation_id, the same log is scored
    labels.write_text("conversation_id,label\n" + "".join(f"k{c}:{x},{x}\n" for c in range(2) for x in ("ESC", "ACT")))
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path),
                                     "--labels", labels)
    assert code == 0, stderr


def test_a_repeat_the_labels_file_did_not_make_is_left_as_it_is(monkeypatch, capsys, tmp_path):
    esc = _twins(1)[0]
    log = _write(tmp_path / "log.jsonl", [esc, {**esc, "conversation_id": "again"}])  # the log's own repeat
    labels = tmp_path / "labels.csv"
    for text in ("case_id,label\nk9,ACT\n", "conversation_id,label\nk0:ESC,ESC\nagain,esc\n"):
        labels.write_text(text)  # another case; or both conversations by their id
        code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path),
                                         "--labels", labels)
        assert code == 2
        assert stderr == f"error: {log}:2: field 'replica': case 'k0', label 'ESC', replica 0 repeats line 1\n"


# -- 2. a folder of several models' logs --------------------------------------------------------------------------

def test_a_folder_of_two_models_logs_sends_to_leaderboard_in_one_line(monkeypatch, capsys, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    _write(folder / "model_a.jsonl", _twins(12, model="a"))
    _write(folder / "model_b.jsonl", _twins(12, model="b"))
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", folder, "--policy", _policy(tmp_path))
    assert code == 2 and stdout == "" and stderr.count("\n") == 1
    assert stderr == (f"error: {folder / 'model_b.jsonl'}: field 'conversation_id': conversation_id 'k0:ACT' (and 23 "
                      f"more) is also in {folder / 'model_a.jsonl'}: logs scored together must not repeat a key; for "
                      "several models' runs of the same scenarios, run escalation leaderboard LOG LOG ... (or "
                      "escalation compare on two score --out folders)\n")


def test_chat_files_that_number_their_lines_are_told_so():
    from escalation.estimators.records import RepeatedKeyError, repeated_across_logs

    err = repeated_across_logs("conversation_id", ["line-1", "line-2"], "a.jsonl", "b.jsonl")
    assert isinstance(err, RepeatedKeyError) and err.key == "line-1" and err.source == "b.jsonl"
    assert "numbers its lines line-1, line-2" in str(err) and "leaderboard" not in str(err)
    err = repeated_across_logs("replica", [("k", "ESC", 0)], "a.jsonl", "b.jsonl")
    assert "(case_id, label, replica) ('k', 'ESC', 0) is also in a.jsonl" in str(err) and "leaderboard" in str(err)


# -- 3. the smaller points ----------------------------------------------------------------------------------------

def test_one_conversation_is_singular(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("COLUMNS", "400")  # a pipe's width: the long temporary path wraps no line
    log = _write(tmp_path / "log.jsonl", _twins(1)[:1])
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "score", log, "--policy", _policy(tmp_path),
                                     "--out", tmp_path / "out")
    assert code == 0
    assert "(jsonl): 1 conversation, scored" in stdout and "0 pairs" in stdout and "0 cases" in stdout
    page = (tmp_path / "out" / "report.html").read_text()
    assert "1 conversation from" in page and "1 conversation;" in page and "1 conversation has a timeline" in page
    assert not re.search(r"\b1 (conversations|scenarios|cases|pairs)\b", stdout + page)


def test_counted():
    from escalation.figures import counted

    assert [counted(1, "case"), counted(0, "case"), counted(2_000, "conversation"), counted(2, "reply", "replies")] \
        == ["1 case", "0 cases", "2,000 conversations", "2 replies"]


@pytest.mark.parametrize("command", [("score",), ("leaderboard",)])
def test_a_list_argument_reads_log_dots_in_help(monkeypatch, capsys, command):
    monkeypatch.setenv("COLUMNS", "80")
    code, stdout, _ = run_cli_output(monkeypatch, capsys, *command, "-h")
    assert code == 0
    assert "<list[" not in stdout and re.search(r"^  LOG\.\.\.  ", stdout, re.MULTILINE)


def test_output_that_is_not_a_terminal_is_wide(monkeypatch):
    from escalation.cli.commands._console import NOT_A_TERMINAL, columns, console

    monkeypatch.delenv("COLUMNS", raising=False)
    assert columns() == NOT_A_TERMINAL == console().width == 200  # capsys: not a terminal
    assert console(most=100).width == 200  # `most` caps a terminal only
    monkeypatch.setenv("COLUMNS", "90")
    assert columns() == console().width == 90 and columns(most=60) == 60


def test_a_compare_table_in_a_pipe_keeps_the_model_names_whole(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    policy = _policy(tmp_path)
    for name in ("follows_policy", "escalates_everything"):
        log = _write(tmp_path / f"{name}.jsonl", _twins(3, model=name))
        code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out",
                                         tmp_path / name, "--no-report")
        assert code == 0, stderr
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "compare", tmp_path / "follows_policy",
                                          tmp_path / "escalates_everything", "--names",
                                          "follows_policy,escalates_everything", "--n-boot", "200")
    assert code == 0, stderr
    header = next(line for line in stdout.splitlines() if line.startswith("figure"))
    assert "follows_policy" in header and "escalates_everything" in header


def test_a_tool_table_in_a_pipe_keeps_the_tool_names_whole(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    name = "a_tool_name_of_sixty_characters_that_an_80_column_table_split"
    log = _write(tmp_path / "log.jsonl", [{"conversation_id": "a", "label": "ESC",
                                           "tool_calls": [{"turn": 0, "name": name}]}])
    code, _, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", log)
    assert code == 0
    assert any(line.startswith(name) for line in stderr.splitlines())  # the table: standard error without --out
    monkeypatch.setenv("COLUMNS", "80")  # a terminal of 80 columns: the table fits, the name folds
    code, _, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", log)
    assert code == 0 and all(len(line) <= 80 for line in stderr.splitlines() if not line.startswith("warning"))


def test_policy_draft_and_check_know_think_and_calculate():
    from escalation.estimators.records import check_policy, load_policy, place_tool, tool_usage

    for name in ("think", "calculate", "Calculator", "mcp__thinking__sequentialthinking", "tools.think"):
        placed = place_tool(name)
        assert (placed.list, placed.by) == ("read_only_tools", "name"), name
    assert place_tool("calculate_refund").list == "action_tools"  # only the whole name
    assert place_tool("think_then_transfer").list == "escalation_tools"  # a hand-off word first
    example = json.loads((ROOT / "examples" / "tau-bench-airline.policy.json").read_text())
    lists = {**example, "read_only_tools": [t for t in example["read_only_tools"] if t not in ("think", "calculate")],
             "action_tools": [*example["action_tools"], "think"]}  # calculate left unmarked
    check = check_policy(tool_usage(AIRLINE), load_policy_from(lists))
    assert [name for name, _, _ in check.doubts] == ["think"]
    assert {t.name: p.list for t, p in check.unmarked} == {"calculate": "read_only_tools"}
    assert check.counted_as_actions == ("calculate", "think")
    assert check.warnings()[0] == (
        "calculate, think are well-known tools that change nothing, yet the policy counts each of their calls as a "
        "consequential action (in action_tools, or unmarked): an ESC conversation that calls one before it hands "
        "over is then scored acted_before_handoff; move them to read_only_tools")
    assert check_policy(tool_usage(AIRLINE), load_policy(ROOT / "examples" / "tau-bench-airline.policy.json")) \
        .warnings() == []


def load_policy_from(lists: dict):
    from escalation.estimators.records import Policy

    return Policy(**{k: frozenset(v) for k, v in lists.items()
                     if k in ("escalation_tools", "read_only_tools", "action_tools")}, name="test")


def test_capacity_writes_each_row_in_one_number_format():
    from escalation.cli.commands.capacity import _estimate

    assert _estimate({"value": 0.02541, "ci": [6.718e-06, 0.9364]}, share=True) == "0.0254 (0.0000, 0.9364)"
    assert _estimate({"value": 1.08, "ci": [0.6883, 1.493]}) == "1.080 (0.688, 1.493)"
    assert _estimate({"value": 22.5, "ci": [18.33, 129.17]}) == "22.5 (18.3, 129.2)"
    assert _estimate({"value": 1234.5, "ci": [980.2, 20000.0]}) == "1,234 (980, 20,000)"
    assert _estimate({"value": 36.29, "ci": [7.006, None]}, "unstable") == "36.29 (7.01, unstable)"
    assert _estimate({"value": 3e-07, "ci": [1e-08, 2e-06]}) == "0.0000 (0.0000, 0.0000)"


def test_study_summary_of_a_smoke_run_states_no_finding(monkeypatch, capsys, tmp_path):
    import pandas as pd

    from escalation.cli.commands import study

    best = pd.DataFrame({"reviewers": [1, 2], "t_star": [0.3, 0.6]})
    monkeypatch.setattr(study, "run_study", lambda name, out, **options: {"best": best})
    monkeypatch.delenv("COLUMNS", raising=False)
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "study", "capacity", "--out", tmp_path / "s", "--smoke")
    assert code == 0
    assert "t*=" not in stdout and "a smoke run (--smoke: tiny sizes" in stdout and "no finding" in stdout
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "study", "capacity", "--out", tmp_path / "f")
    assert code == 0
    assert "(R=1: t*=0.3, R=2: t*=0.6)" in stdout and f"findings in {tmp_path / 'f' / 'report.md'}" in stdout


def test_reproduce_uses_every_core_by_default():
    import typer.main

    from escalation.cli import app

    command = typer.main.get_command(app).commands["reproduce"]
    assert next(p for p in command.params if p.name == "n_jobs").default == -1
