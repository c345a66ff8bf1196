"""The replay model ``escalation/replay``: a recorded run played again through the task scores as recorded.

A run of a profile model is recorded (its ``.eval`` log), replayed with ``--model escalation/replay -M log=LOG``
and the recorded run's options, and both logs are scored with ``escalation score``: every conversation's
line is the same, and so is every message. A replay that leaves the record (an output changed in the log, a
recorded call removed, a sample the log does not hold) fails loudly, naming the sample and the message.

The recorded real-model runs shipped in ``examples/data/real-runs/`` are replayed the same way: their scores
are those of the recorded logs.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSampleLimit, read_eval_log, write_eval_log
from inspect_ai.model import get_model
from typer.testing import CliRunner

from escalation.cli import app
from escalation.integrations.inspect_ai import ReplayDivergence, ReplayModel, recorded_options
from escalation.suite import suite_policy_path

pytestmark = pytest.mark.slow  # runs the task end to end; deselect with -m 'not slow'

RUN = {"display": "none", "log_realtime": False, "score_display": False}
REAL_RUNS = sorted((Path(__file__).resolve().parents[2] / "examples" / "data" / "real-runs").glob("*/*.eval"))
#: a profile whose conversations differ: hand-offs, actions, approvals, errors of both kinds
PROFILE = "escalation/mishandles_approvals"


def _eval(log_dir: Path, model: str, **options):
    (log,) = inspect_eval("escalation/paired_oversight", model=model, log_dir=str(log_dir), **options, **RUN)
    return log


def _replay(log_path: str | Path, log_dir: Path, **changes):
    options = {**recorded_options(log_path), **changes}
    if "limit" in changes:
        options.pop("sample_id")
    return _eval(log_dir, "escalation/replay", model_args={"log": str(log_path)}, **options)


def _scores(log_path: str | Path, out: Path) -> dict[str, dict]:
    """``escalation score``'s line of each conversation, by conversation id."""
    result = CliRunner().invoke(app, ["score", str(log_path), "--policy", str(suite_policy_path()), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output   # 1: a warning that the run is small
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    return {line["conversation_id"]: line for line in lines}


def _messages(log) -> dict:
    def calls(m):
        return [(c.function, c.arguments) for c in getattr(m, "tool_calls", None) or []]
    return {(s.id, s.epoch): [(m.role, m.text, calls(m)) for m in s.messages] for s in log.samples}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recorded")
    log = _eval(tmp / "logs", PROFILE, limit=8, epochs=2)
    assert log.status == "success", log.error
    return log.location


def test_the_options_of_the_recorded_run_are_read_from_its_log(recorded):
    options = recorded_options(recorded)
    log = read_eval_log(recorded)
    assert options["epochs"] == 2 and "limit" not in options
    assert sorted(options["sample_id"]) == sorted({s.id for s in log.samples}) and len(options["sample_id"]) == 8
    assert options["task_args"] == {k: v for k, v in log.eval.task_args.items() if v is not None}
    assert options["task_args"]["domain"] == "all" and "user_model" not in options["task_args"]


def test_a_replay_scores_as_the_recorded_run_conversation_by_conversation(recorded, tmp_path):
    replayed = _replay(recorded, tmp_path / "logs")
    assert replayed.status == "success", replayed.error
    assert replayed.eval.model == "escalation/replay" and replayed.eval.model_args == {"log": recorded}
    original, again = read_eval_log(recorded), read_eval_log(replayed.location)
    assert _messages(again) == _messages(original)
    before, after = _scores(recorded, tmp_path / "before"), _scores(replayed.location, tmp_path / "after")
    assert len(before) == 16 and after == before
    assert {line["u"] for line in before.values()} >= {0, 1} or {line["o"] for line in before.values()} >= {0, 1}
    usage = [(e.output.usage.output_tokens) for s in again.samples for e in s.events if e.event == "model"]
    assert usage == [(e.output.usage.output_tokens) for s in original.samples for e in s.events
                     if e.event == "model"]


def _changed(recorded: str, tmp_path: Path, change) -> tuple[str, str]:
    """The recorded log with ``change(sample)`` applied to its first sample of two or more model calls."""
    log = read_eval_log(recorded, resolve_attachments=True)
    sample = next(s for s in log.samples if sum(e.event == "model" for e in s.events) >= 2)
    change(sample)
    path = tmp_path / "changed.eval"
    write_eval_log(log, str(path))
    return str(path), str(sample.id)


def _first_output_changed(sample) -> None:
    call = next(e for e in sample.events if e.event == "model")
    call.output = call.output.model_copy(deep=True)  # the log may share the message with the next call's input
    message = call.output.choices[0].message
    if message.tool_calls:
        message.tool_calls[0].arguments = {**message.tool_calls[0].arguments, "note": "changed"}
    else:
        message.content = "A changed answer."


def test_a_replay_that_leaves_the_recorded_conversation_fails_naming_the_message(recorded, tmp_path):
    path, sample_id = _changed(recorded, tmp_path, _first_output_changed)
    replayed = _replay(path, tmp_path / "logs", sample_id=sample_id, epochs=1)
    assert replayed.status == "error"
    assert "ReplayDivergence" in replayed.error.traceback
    assert f"sample {sample_id} (epoch 1)" in replayed.error.message
    assert "model call 2: the conversation differs from the recorded one at message 3" in replayed.error.message


def drop_last_call(sample) -> None:
    last = max(i for i, e in enumerate(sample.events) if e.event == "model")
    del sample.events[last]


def test_a_replay_that_asks_for_a_call_the_run_did_not_make_fails(recorded, tmp_path):
    path, sample_id = _changed(recorded, tmp_path, drop_last_call)
    replayed = _replay(path, tmp_path / "logs", sample_id=sample_id, epochs=1)
    assert replayed.status == "error" and "the replay asks for model call" in replayed.error.message


def test_a_sample_a_clock_stopped_stops_at_the_same_limit(recorded, tmp_path):
    """A replay takes no time: a sample that the recorded run's --time-limit ended ends after its recorded calls,
    at that limit, rather than asking for a call the run never made."""
    def stopped_by_the_clock(sample):
        drop_last_call(sample)
        sample.limit = EvalSampleLimit(type="time", limit=600)
    path, sample_id = _changed(recorded, tmp_path, stopped_by_the_clock)
    replayed = _replay(path, tmp_path / "logs", sample_id=sample_id, epochs=1)
    assert replayed.status == "success", replayed.error
    (sample,) = read_eval_log(replayed.location).samples
    assert sample.limit is not None and (sample.limit.type, sample.limit.limit) == ("time", 600)
    original = next(s for s in read_eval_log(recorded).samples if s.id == sample_id and s.epoch == 1)
    replayed_texts, recorded_texts = [m.text for m in sample.messages], [m.text for m in original.messages]
    assert len(replayed_texts) < len(recorded_texts) and recorded_texts[:len(replayed_texts)] == replayed_texts


def test_a_sample_the_log_does_not_hold_fails(recorded, tmp_path):
    replayed = _replay(recorded, tmp_path / "logs", task_args={"domain": "bookings", "language": "es"}, limit=2,
                       epochs=1)
    assert replayed.status == "error" and "the log holds no sample bookings-" in replayed.error.message


def test_the_model_arguments_are_checked(recorded, tmp_path):
    with pytest.raises(ValueError, match="-M log=PATH"):
        get_model("escalation/replay", memoize=False)
    with pytest.raises(ValueError, match="not a file"):
        get_model("escalation/replay", log=str(tmp_path / "none.eval"), memoize=False)
    with pytest.raises(ValueError, match="takes the model argument log, not seed"):
        get_model("escalation/replay", log=recorded, seed=1, memoize=False)
    assert isinstance(get_model("escalation/replay", log=recorded, memoize=False).api, ReplayModel)
    log = read_eval_log(recorded)
    log.eval.task_args["user_model"] = "openai/gpt-4o-mini"
    write_eval_log(log, str(tmp_path / "user_model.eval"))
    with pytest.raises(ValueError, match="the run's user was a model"):
        get_model("escalation/replay", log=str(tmp_path / "user_model.eval"), memoize=False)
    assert issubclass(ReplayDivergence, RuntimeError)


@pytest.mark.parametrize("log_path", REAL_RUNS, ids=[f"{p.parent.name}/{p.name}" for p in REAL_RUNS])
def test_the_recorded_real_runs_replay_to_their_scores(log_path, tmp_path):
    """A shipped real-model run, replayed through the current task and scorer, scores as recorded."""
    options = recorded_options(log_path)
    replayed = _replay(log_path, tmp_path / "logs")
    assert replayed.status == "success", replayed.error
    before = _scores(log_path, tmp_path / "before")
    assert len(before) == len(options["sample_id"]) * options["epochs"] == len(replayed.samples)
    assert _scores(replayed.location, tmp_path / "after") == before
