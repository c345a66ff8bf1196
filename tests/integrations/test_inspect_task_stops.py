"""The suite's task ends at the hand-off (issue 34, point 2): once a call of the escalation tool succeeds the
case is with a person and the sample ends; a hand-off the tool rejected is not one, and the dialogue goes on.

A model registered here (``handoff_script/<script>``, offline: it counts its own tokens) plays the assistant of
``escalation/paired_oversight`` on the first pair of the suite (an ESC and an ACT twin), one message a model call:

- ``keeps_handing_off``: a hand-off at every call, forever (a real model opened 8 tickets so in one conversation);
- ``rejected_then_handed_off``: a hand-off without its required ``reason`` (the backend's check rejects it), one
  whose ``reason`` is a number (inspect_ai's check of the tool's parameters rejects it), then a good one, then
  hand-offs forever;
- ``hands_off_and_acts``: a look-up and the hand-off in one message, then a good hand-off again: the calls of
  the message that hands off all run (inspect_ai runs a message's calls together), and the sample ends after it.

The log must end right after the first hand-off that succeeded, and the scorer must read the rejected ones as
failed calls (SPEC section 1): counted in ``calls`` and ``failed_calls``, and not a hand-off.
"""
from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolCall

from escalation.suite import load_suite

pytestmark = pytest.mark.slow  # runs the task end to end; deselect with -m 'not slow'

HANDOFF = "transfer_to_human"
GOOD = {"reason": "The policy reserves this case for a person."}
POLICY = load_suite().policy()
#: The first pair of the suite (``--limit 2``): an ESC and an ACT twin.
LIMIT = 2


def _output(model: str, calls: list[tuple[str, dict]], first: int) -> ModelOutput:
    tool_calls = [ToolCall(id=f"call_{first + i}", function=name, arguments=arguments)
                  for i, (name, arguments) in enumerate(calls)]
    output = ModelOutput.from_message(ChatMessageAssistant(content="", tool_calls=tool_calls, model=model))
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
    return output


@modelapi(name="handoff_script")
class HandoffScript(ModelAPI):
    """An assistant that follows a script of calls (the script is the model name; see the module docstring)."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)

    async def generate(self, input, tools, tool_choice, config):
        made = sum(len(m.tool_calls or []) for m in input if m.role == "assistant")
        step = sum(1 for m in input if m.role == "assistant")  # the model's own earlier messages
        lookup = next(t for t in tools if t.name in POLICY.read_only_tools)
        script = {
            "keeps_handing_off": [],
            "rejected_then_handed_off": [[(HANDOFF, {})], [(HANDOFF, {"reason": 12345})]],
            "hands_off_and_acts": [[(lookup.name, {lookup.parameters.required[0]: "X1"}), (HANDOFF, GOOD)]],
        }[self.model_name]
        calls = script[step] if step < len(script) else [(HANDOFF, GOOD)]
        return _output(self.model_name, calls, made)


def _run(tmp_path, script: str):
    (log,) = inspect_eval("escalation/paired_oversight", model=f"handoff_script/{script}", limit=LIMIT,
                          log_dir=str(tmp_path), display="none", log_realtime=False, score_display=False)
    log = read_eval_log(log.location)
    assert log.status == "success", log.error
    assert len(log.samples) == LIMIT and not [s.id for s in log.samples if s.error]
    return log


def _tool_results(sample) -> list:
    return [m for m in sample.messages if m.role == "tool"]


def test_the_sample_ends_at_the_first_hand_off(tmp_path):
    """A model that hands off at every call: one model call, one ticket, and the hand-off's result is the last
    message of each sample; both twins are scored as escalated."""
    for sample in _run(tmp_path, "keeps_handing_off").samples:
        results = _tool_results(sample)
        assert [(m.function, m.error) for m in results] == [(HANDOFF, None)], sample.id
        assert sample.messages[-1].role == "tool" and sample.messages[-1].function == HANDOFF
        assert len([e for e in sample.events if e.event == "model"]) == 1, sample.id
        assert [e.function for e in sample.events if e.event == "tool"] == [HANDOFF]
        meta = sample.scores["escalation"].metadata
        assert meta["escalated"] and (meta["calls"], meta["failed_calls"], meta["failed_escalations"]) == (1, 0, 0)


def test_a_rejected_hand_off_does_not_end_the_sample(tmp_path):
    """Two rejected hand-offs (the backend's required argument, inspect_ai's parameter types) leave the dialogue
    going; the third, which succeeds, ends it. The scorer reads 3 calls, 2 failed, 2 failed escalations."""
    for sample in _run(tmp_path, "rejected_then_handed_off").samples:
        results = _tool_results(sample)
        assert [m.function for m in results] == [HANDOFF] * 3, sample.id
        first, second, third = (m.error for m in results)
        assert first is not None and "reason" in first.message  # the backend: missing argument 'reason'
        assert second is not None and second.type == "parsing"  # inspect_ai: 12345 is not a string
        assert third is None and sample.messages[-1].role == "tool" and sample.messages[-1].error is None
        assert len([e for e in sample.events if e.event == "model"]) == 3
        meta = sample.scores["escalation"].metadata
        assert (meta["calls"], meta["failed_calls"], meta["failed_escalations"]) == (3, 2, 2)
        assert meta["escalated"] and meta["turn"] == 0


def test_the_message_that_hands_off_runs_whole_then_the_sample_ends(tmp_path):
    """A look-up and the hand-off in one message: both run, in order, and the sample ends after them."""
    for sample in _run(tmp_path, "hands_off_and_acts").samples:
        assert [m.role for m in sample.messages[-3:]] == ["assistant", "tool", "tool"], sample.id
        assert [m.function for m in _tool_results(sample)][1:] == [HANDOFF]
        assert len([e for e in sample.events if e.event == "model"]) == 1


def test_the_figures_report_the_share_of_failed_calls(tmp_path):
    """``calls`` and ``failed_share`` of the metrics: 3 calls a sample, 2 of them rejected."""
    log = _run(tmp_path, "rejected_then_handed_off")
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert (metrics["calls"], metrics["failed_share"]) == (6, pytest.approx(4 / 6))
