"""Regression tests of the defects that the fuzzer (``tools/fuzz_hunt.py``) found, each from a
minimal file written by hand: every one ends in one line naming the file and field, exit 2,
and no output folder (before the fixes: a traceback, exit 1, or the two readers disagreeing)."""
from __future__ import annotations

import json

import pytest

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "action_tools": ["issue_refund"]}
DEEP = "[" * 1000 + "1" + "]" * 1000  # a list nested 1,000 deep: its repr or str() passes Python's recursion limit
CALL = {"id": "c", "type": "function", "function": {"name": "transfer_to_human", "arguments": "{}"}}


def _deep(value: dict) -> str:
    """``value`` as JSON with the string "DEEP" replaced by :data:`DEEP`."""
    return json.dumps(value).replace('"DEEP"', DEEP)


def _inspect(**sample) -> str:
    return _deep({"eval": {"task": "t", "model": "m"}, "samples": [
        {"id": 1, "epoch": 1, "target": "ESC", **sample,
         "messages": [{"role": "user", "content": "refund"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"id": "c", "function": "transfer_to_human", "arguments": {}}]}]}]})


def _tau_bench(**run) -> str:
    return _deep([{"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": [], **run}])


def _tau2(**simulation) -> str:
    return _deep({"tasks": [{"id": "t1"}], "simulations": [{"id": "s", "task_id": "t1", "trial": 0, "messages": [],
                                                             **simulation}]})


CASES = {  # file name, its text, and the message after "error: FILE"
    "an inspect sample id nested 1,000 deep": (
        "log.json", _inspect(id="DEEP"), ": field 'samples[0].id': must be an integer or a string, got a list"),
    "an inspect epoch nested 1,000 deep": (
        "log.json", _inspect(epoch="DEEP"),
        ": field 'samples[0].epoch': must be an integer >= 1 (inspect_ai counts epochs from 1), got a list"),
    "a tau-bench task_id nested 1,000 deep": (
        "runs.json", _tau_bench(task_id="DEEP"), ": field '[0].task_id': must be an integer or a string, got a list"),
    "a tau-bench trial nested 1,000 deep": (
        "runs.json", _tau_bench(trial="DEEP"), ": field '[0].trial': must be an integer or a string, got a list"),
    "a tau2-bench simulation task_id nested 1,000 deep": (
        "results.json", _tau2(task_id="DEEP"),
        ": field 'simulations[0].task_id': must be an integer or a string, got a list"),
    "a tau2-bench simulation trial nested 1,000 deep": (
        "results.json", _tau2(trial="DEEP"),
        ": field 'simulations[0].trial': must be an integer or a string, got a list"),
    "a canonical replica nested 1,000 deep": (
        "log.jsonl", _deep({"conversation_id": "a", "label": "ESC", "replica": "DEEP", "assistant_turns": 1,
                            "tool_calls": []}) + "\n",
        ":1: field 'replica': must be an integer >= 0, got a list"),
    "a lone surrogate in a log that NaN sends to Python's parser": (
        "chat.json", '[{"conversation_id": "a", "label": "ESC", "score": NaN,\n "messages": [{"role": "assistant", '
                     '"tool_calls": [{"id": "c", "type": "function",\n "function": {"name": "\\ud800", '
                     '"arguments": "{}"}}]}]}]',
        ":3: not valid JSON (a lone surrogate escape (\\ud800 to \\udfff) is not text)"),
}


def test_a_surrogate_written_as_utf_8_bytes_in_a_log_that_nan_sends_to_pythons_parser(tmp_path, monkeypatch, capsys):
    # The fuzzer (seed 20261202): json.loads(bytes) decodes with "surrogatepass", so a surrogate
    # encoded as UTF-8 bytes (ED A0 80), which orjson refuses, came through to a traceback.
    log = tmp_path / "results.json"
    log.write_bytes(b'{"tasks": [{"id": "t1"}], "simulations": [{"id": "s", "task_id": "t1", "trial": 0, "x": NaN,\n'
                    b'"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "name": "\xed\xa0\x80", '
                    b'"arguments": {}}]}]}]}')
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    code, out, err = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--format", "tau2-bench",
                                    "--out", tmp_path / "out")
    assert (code, out) == (2, "")
    # ED A0 80 starts there
    assert err == f"error: {log}:2: not valid JSON (bytes that are not UTF-8 text at byte 164)\n"


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_value_is_one_line_naming_its_field(case, tmp_path, monkeypatch, capsys):
    name, text, message = CASES[case]
    log = tmp_path / name
    log.write_text(text, encoding="utf-8")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    code, out, err = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", tmp_path / "out")
    assert (code, out, err) == (2, "", f"error: {log}{message}\n")
    assert not (tmp_path / "out").exists()


def test_a_lone_surrogate_in_a_policy_is_refused_before_anything_is_read(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "a", "label": "ESC", "messages": [
        {"role": "assistant", "tool_calls": [CALL]}]}) + "\n")
    policy = tmp_path / "policy.json"
    policy.write_text('{"escalation_tools": ["transfer\\ud800"]}')  # valid JSON; Python's json reads it as text
    code, out, err = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", tmp_path / "out")
    assert (code, out) == (2, "")
    assert err == (f"error: {policy}: field 'escalation_tools': tool 'transfer\\ud800' holds a lone surrogate, which "
                   "is not text: no tool of a log can have that name\n")
    assert not (tmp_path / "out").exists()


def test_a_labels_id_that_is_a_list_is_named(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "a", "assistant_turns": 1, "tool_calls": []}) + "\n")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps([{"conversation_id": [[["a"]]], "label": "ESC"}]))
    code, _, err = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--labels", labels,
                                  "--out", tmp_path / "out")
    assert (code, err) == (2, f"error: {labels}: field '[0].conversation_id': must be a string, got a list\n")
