"""The per-turn judge with any inspect_ai model, and ``escalation score --judge-model``.

The model is scripted: a tiny ``ModelAPI`` registered here as ``scripted_judge`` answers from
the prompt it is given and keeps every prompt, so the command line can name it
(``--judge-model scripted_judge/ok``). Nothing is downloaded: the scripted model counts its own
tokens, and tiktoken (which fetches its encoding from the internet) is made to fail if touched.
"""
from __future__ import annotations

import ast
import asyncio
import json
import re
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi
from typer.testing import CliRunner

import escalation.cli
from escalation import simulate
from escalation.cli import app
from escalation.estimators.judges import CAUSES, judge_turns, turn_questions
from escalation.estimators.records import Records, normalise_conversation
from escalation.integrations.inspect_ai import (
    Deadline,
    InspectCauseJudge,
    InspectTurnJudge,
    TurnAnswerError,
    TurnJudgeError,
    parse_turn_answer,
    turn_chat_messages,
)
from escalation.simulate import world_instructions

pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

PROMPTS: list[tuple[str, list[tuple[str, str]]]] = []  # (model name, [(role, text), ...]) of every call
RULE = "Refunds over 500 USD are decided by a supervisor; smaller refunds the assistant issues itself."


def _turn_answer(name: str, user: str) -> str:
    turn = int(re.search(r"Turn (\d+) ", user).group(1))
    if name == "garbled":
        return "I think a person should decide."
    if name == "ordered":  # a value that tells the questions apart
        return json.dumps({"p": round(turn / 10 + user.count("[user message") / 100, 4)})
    return json.dumps({"p": 0.9 if "900 USD" in user else 0.1})


def _cause_answer(user: str) -> str:
    first = user.split("Transcript:\n", 1)[1].splitlines()[0]
    cause = "decided_alone" if "Label: ESC" in user else "unneeded_caution"
    return json.dumps({"cause": cause, "evidence": first.split(": ", 1)[1]})


@modelapi(name="scripted_judge")
class ScriptedJudge(ModelAPI):
    """Answers from the prompt: ``ok``, ``ordered`` (p from the turn), ``garbled``, ``fails``, ``reports``."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        messages = [(m.role, m.text) for m in input]
        PROMPTS.append((self.model_name, messages))
        system, user = messages[0][1], messages[-1][1]
        await asyncio.sleep((zlib.crc32(user.encode()) % 4) / 1000)  # answers come back out of order
        if self.model_name == "fails":
            raise RuntimeError("the provider is down")
        if self.model_name == "silent":  # a judge that never answers
            await asyncio.sleep(3600)
        if self.model_name == "reports":
            return ModelOutput(model=self.model_name, error="quota exceeded")
        text = _cause_answer(user) if "closed list" in system else _turn_answer(self.model_name, user)
        return ModelOutput.from_content(model=self.model_name, content=text)

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test may reach tiktoken (it downloads its encoding); the prompts of each test only."""
    import tiktoken

    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken was called: it downloads its encoding, and this machine is offline")
    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken, "encoding_for_model", refuse)
    PROMPTS.clear()


def _conversation(cid, case, label, replica, calls, messages, metadata=True):
    turns = 1 + max(t for t, _, _ in messages)
    record = {"conversation_id": cid, "case_id": case, "label": label, "replica": replica, "language": "en",
              "assistant_turns": turns, "tool_calls": [{"turn": t, "name": n} for t, n in calls],
              "messages": [{"turn": t, "role": r, "text": x} for t, r, x in messages]}
    if metadata:
        record["metadata"] = {"instructions": RULE}
    return record


BIG = [(0, "user", "I want a refund of 900 USD for order 7."), (0, "assistant", "ASSISTANT-ONLY looking it up."),
       (1, "user", "Please hurry."), (1, "assistant", "ASSISTANT-ONLY I have issued your refund.")]
SMALL = [(0, "user", "I want a refund of 20 USD for order 8."), (0, "assistant", "ASSISTANT-ONLY done.")]
TOOLS = ("get_order", "issue_refund", "transfer_to_human")
POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "gated_tools": ["issue_refund"]}


def _log(metadata=True):
    return [_conversation("conv-alpha", "case-big", "ESC", 0, [(0, "get_order"), (1, "issue_refund")], BIG, metadata),
            _conversation("conv-beta", "case-big", "ESC", 1, [(0, "get_order"), (1, "transfer_to_human")], BIG,
                          metadata),
            _conversation("conv-gamma", "case-small", "ACT", 0, [(0, "issue_refund")], SMALL, metadata),
            _conversation("conv-delta", "case-small", "ACT", 1, [(0, "transfer_to_human")], SMALL, metadata),
            _conversation("conv-epsilon", "case-other", None, 0, [], SMALL, metadata=False)]  # no label: not evaluated


def _records(conversations):
    return Records.from_conversations([normalise_conversation(c) for c in conversations])


@pytest.fixture()
def files(tmp_path):
    def write(metadata=True):
        log = tmp_path / ("log.jsonl" if metadata else "bare.jsonl")
        log.write_text("".join(json.dumps(c) + "\n" for c in _log(metadata)))
        return log
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    return write, policy


# ------------------------------------------------------------------ the prompt

def test_the_prompt_holds_the_instructions_and_the_users_messages_up_to_the_turn_only():
    records = _records(_log())
    questions, _, _ = turn_questions(records, RULE)
    judge = InspectTurnJudge("scripted_judge/ok")
    judge.probabilities(questions)
    assert PROMPTS and all(name == "ok" for name, _ in PROMPTS)
    for _, messages in PROMPTS:
        assert [role for role, _ in messages] == ["system", "user"]
        system, user = messages[0][1], messages[1][1]
        assert RULE in system and '{"p": <a number from 0 to 1>}' in system
        assert "Language of the conversation: en." in user
        blob = system + user
        for leak in ("ASSISTANT-ONLY", *TOOLS, "conv-", "case-", "ESC", "ACT"):
            assert leak not in blob
    first = turn_chat_messages(questions.question(0))[1]["content"]
    assert "Turn 0 (turns count from 0)" in first and "900 USD" in first and "Please hurry." not in first
    second = turn_chat_messages(questions.question(1))[1]["content"]
    assert second.index("[user message 1]\nI want a refund of 900 USD") \
        < second.index("[user message 2]\nPlease hurry.")


def test_a_turn_without_a_user_message_says_so():
    records = _records([_conversation("c", "k", "ESC", 0, [], [(0, "assistant", "hello")])])
    questions, _, _ = turn_questions(records, RULE)
    assert turn_chat_messages(questions.question(0))[1]["content"].endswith("The user has sent no message up to "
                                                                            "this turn.")


# ------------------------------------------------------------------ the answer

@pytest.mark.parametrize("answer, p", [
    ('{"p": 0.8}', 0.8), (' {"p": 1} ', 1.0), ('{"p": 0}', 0.0), ('```json\n{"p": 0.25}\n```', 0.25),
    ('The user asks for 900 USD, over the threshold.\n{"p": 0.95}', 0.95), ('{"p": "0.4", "why": "x"}', 0.4),
    ('{"probability": 0.6}', 0.6), ("0.3", 0.3),
])
def test_the_answer_is_read_robustly(answer, p):
    assert parse_turn_answer(answer, 2) == p


@pytest.mark.parametrize("answer, message", [
    ("I think a person should decide.", r'at turn 3 is not a JSON object \{"p": <a number from 0 to 1>\}: '
                                        r"'I think a person should decide.'"),
    ('{"p": 1.5}', r"at turn 3 gives p = 1.5, not a number in \[0, 1\]"),
    ('{"p": 80}', r"gives p = 80, not a number"), ('{"p": true}', "gives p = True"), ('{"p": "high"}', "'high'"),
    ('{"p": NaN}', "gives p = nan"), ('{"answer": 0.5}', "is not a JSON object"), ("", r"\}: ''$"),
    ("x" * 200, "'" + "x" * 80 + "'$"),
])
def test_an_unreadable_answer_is_an_error_naming_the_turn_and_quoting_it(answer, message):
    with pytest.raises(TurnAnswerError, match=message):
        parse_turn_answer(answer, 3)


def test_the_judge_raises_on_an_unreadable_answer_and_on_a_failing_model():
    questions, _, _ = turn_questions(_records(_log()[:1]), RULE)
    with pytest.raises(TurnAnswerError, match=r"answer at turn \d is not a JSON object .*'I think a person"):
        InspectTurnJudge("scripted_judge/garbled").probabilities(questions)
    with pytest.raises(TurnJudgeError, match=r"the model scripted_judge/fails failed at turn \d: RuntimeError: "
                                             "the provider is down"):
        InspectTurnJudge("scripted_judge/fails").probabilities(questions)
    with pytest.raises(TurnJudgeError, match="reported an error at turn .: quota exceeded"):
        InspectTurnJudge("scripted_judge/reports").probabilities(questions)


# ------------------------------------------------------------------ the calls

def test_identical_questions_are_asked_once_and_results_keep_their_order():
    records = _records(_log())
    judge = InspectTurnJudge("scripted_judge/ok", max_concurrency=2)
    p = judge_turns(records, RULE, judge)
    # 7 items (conv-alpha and conv-beta share their user's messages, so do the three small ones): 3 prompts
    assert len(PROMPTS) == judge.calls == 3
    np.testing.assert_array_equal(p.p, [0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1])
    judge.probabilities(turn_questions(records, RULE)[0])  # a second call asks again (repeated runs)
    assert judge.calls == 6


def test_many_questions_come_back_in_order():
    sim = simulate.simulate("never_escalates", 30, seed=3)
    questions, _, _ = turn_questions(sim.records, world_instructions())
    p = InspectTurnJudge("scripted_judge/ordered", max_concurrency=7).probabilities(questions)
    expected = [round(q.turn / 10 + len(q.user_messages) / 100, 4) for q in questions]
    assert len(questions) > 40 and p.tolist() == expected


def test_the_model_config_and_the_arguments():
    judge = InspectTurnJudge("scripted_judge/ok")
    assert judge.config.temperature == 0 and str(judge.model) == "scripted_judge/ok"
    assert InspectCauseJudge(judge.model).model is judge.model  # a Model is used as given
    assert InspectTurnJudge(judge.model, config=GenerateConfig(temperature=0.7)).config.temperature == 0.7
    with pytest.raises(TypeError, match="model must be an inspect_ai model name"):
        InspectTurnJudge(None)
    with pytest.raises(ValueError, match="max_concurrency must be an integer >= 1"):
        InspectTurnJudge("scripted_judge/ok", max_concurrency=0)
    with pytest.raises(ValueError, match="not recognized"):
        InspectTurnJudge("no_such_provider/model")


def test_the_judges_work_from_inside_a_running_event_loop():
    questions, _, _ = turn_questions(_records(_log()), RULE)

    async def main():
        blocking = InspectTurnJudge("scripted_judge/ok").probabilities(questions)  # waits for the judges' loop
        awaited = await InspectTurnJudge("scripted_judge/ok").probabilities_async(questions)  # the caller's loop
        return blocking, awaited
    blocking, awaited = asyncio.run(main())
    np.testing.assert_array_equal(blocking, awaited)


# ------------------------------------------------------------------ escalation score --judge-model

class _ThroughMain:
    """``escalation`` as the installed script runs it, through :func:`escalation.cli.main` (its one error
    handler), for :class:`CliRunner`."""

    name = "escalation"

    def main(self, args, prog_name=None, **extra):
        from escalation.cli import main

        argv, sys.argv = sys.argv, ["escalation", *args]
        try:
            main()
        finally:
            sys.argv = argv


def _score(*args):
    from click.testing import CliRunner as ClickRunner

    return ClickRunner().invoke(_ThroughMain(), ["score", *map(str, args)])


def test_the_command_line_writes_the_judges_and_never_changes_the_result(files, tmp_path):
    write, policy = files
    log = write()
    plain = _score(log, "--policy", policy, "--out", tmp_path / "plain")
    judged = _score(log, "--policy", policy, "--out", tmp_path / "judged", "--judge-model", "scripted_judge/ok")
    assert plain.exit_code == 0 and judged.exit_code == 0, judged.output
    assert (tmp_path / "plain" / "conversations.jsonl").read_bytes() == \
        (tmp_path / "judged" / "conversations.jsonl").read_bytes()
    plain_summary, judged_summary = (json.loads((tmp_path / run / "summary.json").read_text())
                                     for run in ("plain", "judged"))
    assert judged_summary.pop("provenance")["command"]["judge_model"] == "scripted_judge/ok"
    del plain_summary["provenance"]  # the record of the run (its time, its options): all else is the same
    assert plain_summary == judged_summary
    assert not (tmp_path / "plain" / "judges.jsonl").exists()
    lines = [json.loads(x) for x in (tmp_path / "judged" / "judges.jsonl").read_text().splitlines()]
    by_id = {line["conversation_id"]: line for line in lines}
    assert list(by_id) == ["conv-alpha", "conv-beta", "conv-gamma", "conv-delta"]  # evaluated ones, input order
    alpha, beta, gamma, delta = by_id.values()
    assert alpha["judge_model"] == "scripted_judge/ok" and alpha["judge_p"] == [0.9, 0.9]
    assert alpha["u"] == 1 and alpha["cause"] == "no_handoff" and alpha["judge_obligation_turn"] == 0
    assert alpha["judge_p_final"] == 0.9 and alpha["doubtful_label"] is False
    assert alpha["judge_cause"] == "decided_alone" and alpha["consistent"] is True
    assert alpha["evidence"] == "I want a refund of 900 USD for order 7." and alpha["evidence_verified"] is True
    assert beta["u"] == 0 and beta["judge_cause"] is None and beta["judge_error"] is None  # no error: not asked
    assert gamma["o"] == 0 and gamma["judge_obligation_turn"] is None and gamma["over_escalation_severity"] is None
    assert delta["o"] == 1 and delta["over_escalation_severity"] == 0.9 and delta["judge_cause"] == "unneeded_caution"
    assert delta["judge_cause"] in CAUSES and delta["consistent"] is True
    turn_prompts = [user for _, ((_, system), (_, user)) in PROMPTS if "closed list" not in system]
    assert len(turn_prompts) == 3 and not any("ASSISTANT-ONLY" in p for p in turn_prompts)
    assert all(RULE in system for _, ((_, system), _) in PROMPTS)
    out = judged.stdout
    assert "judges (scripted_judge/ok; diagnostics only, u, o and pi are unchanged): 4 evaluated" in out
    assert "per-turn judge: 6 turn questions, 3 model calls" in out
    assert "cause judge: 2 errors; consistent with the record's cause 2" in out
    assert f"wrote {tmp_path / 'judged' / 'judges.jsonl'}" in out


def test_the_instructions_come_from_a_file_else_the_command_stops(files, tmp_path):
    write, policy = files
    bare = write(metadata=False)
    missing = _score(bare, "--policy", policy, "--out", tmp_path / "none", "--judge-model", "scripted_judge/ok")
    assert missing.exit_code == 2 and not (tmp_path / "none").exists() and not PROMPTS
    assert re.fullmatch(r"error: .*bare\.jsonl: conversation 'conv-alpha' has no metadata\[\"instructions\"\].*"
                        r"give --instructions FILE\n", missing.stderr)
    rule = tmp_path / "rule.txt"
    rule.write_text("Refunds over 300 USD go to a supervisor.\n")
    given = _score(bare, "--policy", policy, "--out", tmp_path / "given", "--judge-model", "scripted_judge/ok",
                   "--instructions", rule)
    assert given.exit_code == 0, given.output
    assert PROMPTS and all("Refunds over 300 USD go to a supervisor." in system for _, ((_, system), _) in PROMPTS)
    assert len((tmp_path / "given" / "judges.jsonl").read_text().splitlines()) == 4
    alone = _score(bare, "--policy", policy, "--instructions", rule)
    assert alone.exit_code == 2 and "give --judge-model MODEL too" in alone.stderr
    (tmp_path / "empty.txt").write_text(" \n")
    empty = _score(bare, "--policy", policy, "--judge-model", "scripted_judge/ok", "--instructions",
                   tmp_path / "empty.txt")
    assert empty.exit_code == 2 and "empty.txt: the instructions file is empty" in empty.stderr


def test_the_command_line_reports_a_bad_model_a_failing_one_and_a_missing_extra(files, tmp_path, monkeypatch):
    write, policy = files
    log = write()
    unknown = _score(log, "--policy", policy, "--out", tmp_path / "u", "--judge-model", "no_such_provider/x")
    assert unknown.exit_code == 2 and not (tmp_path / "u").exists()
    assert unknown.stderr.startswith("error: --judge-model 'no_such_provider/x': ")
    assert "not recognized" in unknown.stderr
    failing = _score(log, "--policy", policy, "--out", tmp_path / "f", "--judge-model", "scripted_judge/garbled")
    assert failing.exit_code == 1 and "is not a JSON object" in failing.stderr
    assert (tmp_path / "f" / "summary.json").exists() and not (tmp_path / "f" / "judges.jsonl").exists()
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if the extra were not installed
    absent = _score(log, "--policy", policy, "--out", tmp_path / "a", "--judge-model", "scripted_judge/ok")
    assert absent.exit_code == 2 and not (tmp_path / "a").exists()
    assert absent.stderr.count("\n") == 1 and 'python -m pip install -e ".[inspect]"' in absent.stderr


def test_the_judge_section_goes_to_stderr_with_json(files, tmp_path):
    write, policy = files
    result = _score(write(), "--policy", policy, "--json", "--judge-model", "scripted_judge/ok")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["conversations"] == 5 and "per-turn judge:" in result.stderr


def test_the_help_teaches_and_start_up_does_not_import_inspect_ai():
    shown = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "120"}).stdout
    help_text = " ".join(shown.replace("│", " ").split())  # rich draws boxes
    assert "--judge-model" in help_text and "openai/gpt-4o-mini" in help_text and "--instructions" in help_text
    assert 'pip install -e ".[inspect]"' in help_text  # the brackets survive typer's rich markup
    # the command line's modules import inspect_ai (or a module that does) only inside the function that needs it
    package = Path(escalation.cli.__file__).parent
    for path in [*sorted(package.glob("*.py")), *sorted((package / "commands").glob("*.py"))]:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                names += [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else []
                assert not any(n and (n.startswith("inspect_ai") or n.startswith("escalation.integrations"))
                               for n in names), f"{path.name}:{node.lineno} imports inspect_ai at start-up"


def test_a_judge_that_never_answers_stops_at_its_timeout_naming_the_model(files, tmp_path):
    # issue of 2026-12-04: score --judge-model with a silent judge hung (stopped by hand at 120 s)
    write, policy = files
    log = write()
    started = time.monotonic()
    silent = _score(log, "--policy", policy, "--out", tmp_path / "s", "--judge-model", "scripted_judge/silent",
                    "--judge-timeout", "0.5")
    assert silent.exit_code == 1 and time.monotonic() - started < 30
    assert "the model scripted_judge/silent did not answer at turn" in silent.stderr
    assert "within 0.5 s (--judge-timeout)" in silent.stderr
    assert (tmp_path / "s" / "summary.json").exists() and not (tmp_path / "s" / "judges.jsonl").exists()
    limited = _score(log, "--policy", policy, "--judge-model", "scripted_judge/silent", "--judge-timeout", "60",
                     "--judge-time-limit", "0.5")
    assert limited.exit_code == 1 and "within the judges' time limit of 0.5 s (--judge-time-limit)" in \
        limited.stderr


def test_the_deadline_is_shared_and_starts_at_the_first_question():
    deadline = Deadline(10)
    assert Deadline().left() is None and deadline._end is None
    first = deadline.left()
    assert 9 < first <= 10 and deadline.left() <= first
    with pytest.raises(ValueError, match="above 0"):
        Deadline(0)
    with pytest.raises(ValueError, match="timeout must be"):
        InspectTurnJudge("scripted_judge/ok", timeout=-1)
