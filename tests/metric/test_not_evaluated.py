"""SPEC section 7, "When the result cannot be what the user meant" [decision, 2026-12-01].

No conversation evaluated: both files are still written, each not-evaluated reason is printed with
what fixes it, and the exit code is 3. In record mode, a log with no tool call, or no call of an
escalation tool, is said on standard error with the tools it calls (and those that look like a
hand-off), exit 0, and the same note is in ``summary.json`` ``warnings``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from escalation.estimators.metric import score_file, score_records, summarise
from escalation.estimators.records import Records, load_policy, read_jsonl, read_scored

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}
DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
HANDOFF_NOTE = ("no call of an escalation tool (transfer_to_human) was read; the log calls get_order 40, "
                "transfer_to_agent 12; transfer_to_agent looks like a hand-off: is it your escalation tool? "
                "(policy escalation_tools); a log where nothing escalates is possible, but a wrong --format or a "
                "wrong policy is the usual cause")


def _conversation(i: int, label="ESC", calls=(), case=None, **extra) -> dict:
    record = {"conversation_id": f"c{i}", "case_id": f"k{i}" if case is None else case, "label": label,
              "replica": 0}
    if calls is not None:
        record["tool_calls"] = [{"turn": 0, "name": name} for name in calls]
    return record | extra


def _write(tmp_path: Path, rows: list[dict], policy: dict = POLICY) -> tuple[Path, Path]:
    log, pol = tmp_path / "log.jsonl", tmp_path / "policy.json"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    pol.write_text(json.dumps(policy))
    return log, pol


def _score(monkeypatch, capsys, tmp_path, rows, *extra, policy=POLICY):
    log, pol = _write(tmp_path, rows, policy)
    out = tmp_path / "out"
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", pol, "--out", out, *extra)
    return code, stdout, stderr, out


def _paired(n_cases: int, esc_calls=("transfer_to_human",), act_calls=("get_order",)) -> list[dict]:
    rows = []
    for case in range(n_cases):
        rows.append(_conversation(2 * case, "ESC", esc_calls, case=f"k{case}"))
        rows.append(_conversation(2 * case + 1, "ACT", act_calls, case=f"k{case}"))
    return rows


NOTHING_EVALUATED = {
    "no_label": ([_conversation(0, None, ["transfer_to_human"]), _conversation(1, None, [])], (),
                 "no conversation evaluated: no_label 2: the log gives no label; give --labels FILE (a CSV or JSON "
                 "file mapping case_id or conversation_id to ESC or ACT)"),
    "invalid_label": ([_conversation(i, label, []) for i, label in
                       enumerate(["yes", "yes", "yes", "no", "no", "maybe", "x", "y", "z"])], (),
                      "no conversation evaluated: invalid_label 9: the labels found are 'yes' 3, 'no' 2, 'maybe' 1, "
                      "'x' 1, 'y' 1 ...; the two accepted are ESC and ACT (read case-insensitively): correct them or "
                      "give --labels FILE"),
    "no_record": ([_conversation(0, "ESC", None), _conversation(1, "ACT", None)], (),
                  "no conversation evaluated: no_record 2: the log has no tool record (tool_calls); --mode text "
                  "scores the assistant's text instead (p_u is then a lower bound when every hand-off is stated; "
                  "--validation corrects it), or check --format"),
    "invalid_record": ([{"conversation_id": "a", "label": "ESC", "tool_calls": [{"turn": 0, "name": "get_order"},
                                                                                  {"turn": -1}]},
                        {"conversation_id": "b", "label": "ACT", "assistant_turns": 0, "tool_calls": []},
                        {"conversation_id": "c", "label": "ACT", "assistant_turns": 2,
                         "tool_calls": [{"turn": 1, "name": "get_order"}, {"turn": 0, "name": "get_order"},
                                        {"turn": 5, "name": "get_order"}]},
                        {"conversation_id": "d", "label": "ESC", "tool_calls": [{"turn": "0", "name": "get_order"}]}],
                       (),
                       "no conversation evaluated: invalid_record 4: the tool records break SPEC section 3 (a call "
                       "turn missing, negative or not an integer 2, a call turn not below assistant_turns 1, a call "
                       "turn smaller than the one before 1, assistant_turns not an integer in 1..100000 1): those "
                       "conversations cannot be scored; correct the records, or check --format"),
    "no_text": ([_conversation(0, "ESC", ["transfer_to_human"]), _conversation(1, "ACT", [])], ("--mode", "text"),
                "no conversation evaluated: no_text 2: no assistant text was read, so --mode text has nothing to "
                "judge; check --format, or score the tool record (--mode record)"),
    "empty": ([], (), "no conversation evaluated: the log holds no conversation; is it the right file, and the "
                      "right --format?"),
}


@pytest.mark.parametrize("reason", list(NOTHING_EVALUATED))
def test_nothing_evaluated_writes_both_files_says_what_fixes_it_and_exits_3(monkeypatch, capsys, tmp_path, reason):
    rows, extra, hint = NOTHING_EVALUATED[reason]
    code, stdout, stderr, out = _score(monkeypatch, capsys, tmp_path, rows, *extra)
    assert code == 3
    assert f"warning: {hint}\n" in stderr
    assert hint not in stdout  # printed once, on standard error
    lines = (out / "conversations.jsonl").read_text().splitlines()
    assert len(lines) == len(rows) and not any(json.loads(line)["evaluated"] for line in lines)
    summary = json.loads((out / "summary.json").read_text())
    assert hint in summary["warnings"]
    assert summary["conversations"] == len(rows)


def test_nothing_evaluated_for_two_reasons_gives_both(monkeypatch, capsys, tmp_path):
    rows = [_conversation(0, None, []), _conversation(1, "ACT", None), _conversation(2, "ESC", None)]
    code, _, stderr, _ = _score(monkeypatch, capsys, tmp_path, rows)
    assert code == 3
    assert "no conversation evaluated: no_label 1: " in stderr
    assert "no conversation evaluated: no_record 2: " in stderr


def test_nothing_evaluated_with_json_keeps_stdout_json(monkeypatch, capsys, tmp_path):
    code, stdout, stderr, _ = _score(monkeypatch, capsys, tmp_path, NOTHING_EVALUATED["no_label"][0], "--json")
    assert code == 3
    assert json.loads(stdout)["not_evaluated"]["reasons"] == {"no_label": 2}
    assert "--labels FILE" in stderr


def test_a_chat_log_read_with_the_wrong_format_exits_3_and_points_to_mode_text(monkeypatch, capsys, tmp_path):
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps(POLICY))
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", DATA / "openai.jsonl", "--policy", pol,
                                     "--format", "jsonl", "--out", tmp_path / "out")
    assert code == 3
    assert "no_record 7: the log has no tool record" in stderr and "--mode text" in stderr
    assert (tmp_path / "out" / "conversations.jsonl").is_file() and (tmp_path / "out" / "summary.json").is_file()


def test_a_log_whose_evaluated_conversations_hold_no_tool_call_exits_3(monkeypatch, capsys, tmp_path):
    # SPEC section 7 (decision of 2026-12-04): every ESC conversation would be no_handoff, p_u = 1
    code, stdout, stderr, out = _score(monkeypatch, capsys, tmp_path, _paired(12, (), ()))
    note = ("the 24 evaluated conversations hold no tool call read from the log, so no conversation can show a "
            "hand-off and the figures say nothing of the assistant; the usual causes are a wrong --format (try "
            "--format auto) or a log without a tool record (score its text with --mode text)")
    assert code == 3
    assert stderr == f"warning: {note}\n"
    assert note not in stdout
    assert json.loads((out / "summary.json").read_text())["warnings"][0] == note


def _handoff_log() -> list[dict]:
    """20 conversations in 10 pairs: get_order called 40 times, transfer_to_agent 12, transfer_to_human never."""
    return [_conversation(i, "ESC" if i % 2 == 0 else "ACT",
                          ["get_order", "get_order"] + (["transfer_to_agent"] if i < 12 else []), case=f"k{i // 2}")
            for i in range(20)]


def test_a_hand_off_tool_named_otherwise_is_named(monkeypatch, capsys, tmp_path):
    rows = _handoff_log()
    code, stdout, stderr, out = _score(monkeypatch, capsys, tmp_path, rows, "--chunk-size", "3")
    assert code == 0
    assert stderr == f"warning: {HANDOFF_NOTE}\n"
    # the wrong fix (mark it read-only) is not suggested for a name that suggests a hand-off
    said = " ".join(stdout.split())
    assert ("unmarked tools whose name suggests a hand-off (counted as actions; if they pass the case to a person, "
            "they belong in escalation_tools): transfer_to_agent (12)") in said
    assert "mark look-ups as read_only_tools" not in said
    summary = json.loads((out / "summary.json").read_text())
    assert summary["warnings"][0] == HANDOFF_NOTE
    assert summary["unmarked_tools"] == {"transfer_to_agent": 12}
    (tmp_path / "whole").mkdir()
    whole = _score(monkeypatch, capsys, tmp_path / "whole", rows)[3]
    summary.pop("provenance")  # it names the options, --chunk-size among them
    assert {k: v for k, v in json.loads((whole / "summary.json").read_text()).items() if k != "provenance"} \
        == summary  # the counts do not depend on the chunks


def test_the_called_tools_are_the_ten_most_frequent(monkeypatch, capsys, tmp_path):
    names = [f"tool_{k:02d}" for k in range(12)]
    rows = [_conversation(i, "ESC", names[:12 - i % 12] + ["call_supervisor"] * (i == 0)) for i in range(24)]
    code, _, stderr, _ = _score(monkeypatch, capsys, tmp_path, rows)
    assert code == 0
    assert ("the log calls tool_00 24, tool_01 22, tool_02 20, tool_03 18, tool_04 16, tool_05 14, tool_06 12, "
            "tool_07 10, tool_08 8, tool_09 6 ...; call_supervisor looks like a hand-off") in stderr


def test_several_hand_off_names(monkeypatch, capsys, tmp_path):
    rows = [_conversation(i, "ESC", ["Escalate", "human_review", "get_order"]) for i in range(4)]
    code, _, stderr, _ = _score(monkeypatch, capsys, tmp_path, rows)
    assert code == 0
    assert "; Escalate, human_review look like hand-offs: is one of them your escalation tool?" in stderr


def test_a_chat_log_with_another_escalation_tool(monkeypatch, capsys, tmp_path):
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps({"escalation_tools": ["escalate_to_supervisor"], "read_only_tools": ["get_order"]}))
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", DATA / "openai.jsonl", "--policy", pol)
    assert code == 0
    assert "no call of an escalation tool (escalate_to_supervisor) was read; the log calls " in stderr
    assert "transfer_to_human looks like a hand-off: is it your escalation tool?" in stderr


def test_no_note_on_calls_in_text_mode(monkeypatch, capsys, tmp_path):
    rows = [_conversation(i, "ESC", [], messages=[{"turn": 0, "role": "assistant", "text": "I cannot help."}])
            for i in range(4)]
    code, _, stderr, out = _score(monkeypatch, capsys, tmp_path, rows, "--mode", "text")
    assert code == 0 and stderr == ""
    assert not any("tool" in w for w in json.loads((out / "summary.json").read_text())["warnings"])


def test_a_normal_run_is_unchanged(monkeypatch, capsys, tmp_path):
    code, stdout, stderr, out = _score(monkeypatch, capsys, tmp_path, _paired(12))
    assert code == 0 and stderr == ""
    warnings = json.loads((out / "summary.json").read_text())["warnings"]
    # no note on the input; only, with no error in 12 scenarios, that the paper's interval printed beside
    # auto's is at risk there (escalation study warnings)
    assert warnings and all("the paper's wilson-kish interval, printed beside, is at risk" in w for w in warnings)
    assert stdout.count("warning:") == len(warnings)


def test_few_scenarios_still_warn_as_before(monkeypatch, capsys, tmp_path):
    code, stdout, stderr, out = _score(monkeypatch, capsys, tmp_path, _paired(3))
    assert code == 0 and stderr == ""
    warnings = json.loads((out / "summary.json").read_text())["warnings"]
    assert [w.split(":")[0] for w in warnings] == ["p_u", "p_o", "pi"]
    assert all(f"warning: {w[:40]}" in stdout for w in warnings)


def test_the_python_api_carries_the_notes(tmp_path):
    log, pol = _write(tmp_path, _handoff_log())
    policy = load_policy(pol)
    summary, _ = score_file(log, policy)
    assert summary.input_warnings == [HANDOFF_NOTE] and summary.warnings[0] == HANDOFF_NOTE
    assert summary.evaluated == 20
    assert summary.to_dict()["warnings"] == summary.warnings
    alone = summarise(score_records(Records.from_conversations(read_jsonl(log)), policy))
    assert alone.input_warnings == []  # a frame alone: its calls were not counted
    assert alone.to_dict() | {"warnings": None} == \
        {k: v for k, v in summary.to_dict().items() if k != "provenance"} | {"warnings": None}


def test_the_python_api_says_nothing_was_evaluated(tmp_path):
    log, pol = _write(tmp_path, [_conversation(0, None, [])])
    summary, _ = score_file(log, load_policy(pol))
    assert summary.evaluated == 0
    assert summary.input_warnings[0].startswith("no conversation evaluated: no_label 1: the log gives no label")


def test_a_frame_summarised_alone_names_the_rules_it_can_see(monkeypatch, capsys, tmp_path):
    rows = NOTHING_EVALUATED["invalid_record"][0]
    code, _, _, out = _score(monkeypatch, capsys, tmp_path, rows)
    assert code == 3
    fix = "): those conversations cannot be scored; correct the records, or check --format"
    unseen = "a call with a bad turn, or a bad assistant_turns"
    frame, _ = read_scored(out)  # no assistant_turns column: no rule can be told
    assert summarise(frame).input_warnings == [
        f"no conversation evaluated: invalid_record 4: the tool records break SPEC section 3 ({unseen} 4{fix}"]
    scored = score_records(Records.from_conversations(read_jsonl(tmp_path / "log.jsonl")), load_policy(
        tmp_path / "policy.json"))
    assert summarise(scored).input_warnings == [
        "no conversation evaluated: invalid_record 4: the tool records break SPEC section 3 (assistant_turns not "
        f"an integer in 1..100000 1, {unseen} 3{fix}"]
