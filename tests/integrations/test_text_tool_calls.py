"""Tool calls written as text (issue 34, point 4): :mod:`escalation.integrations.inspect_ai._text_calls` and the
suite's task with ``text_tool_calls``.

The parser reads the common forms that small open-weights models write when no tool-call parser turns their
text into a call (bare JSON, the Qwen / Hermes ``<tool_call>`` tags, several calls, code fences, ``parameters``,
string arguments, OpenAI's wrapper) and nothing else: prose with braces or question marks, JSON that is not a
call, a tool the task does not offer. In the task, a scripted model writes its calls as text: with the option
they run as inspect_ai tool calls (tool events, tool messages) and are marked as read from text; without it the
sample holds no call, and the metrics say so (``calls`` 0 and the warning of ``escalation score``).
"""
from __future__ import annotations

import json
import logging
import math
import time

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall

from escalation.estimators.records import InputTally, no_call_note
from escalation.integrations.inspect_ai import MAX_TEXT, TEXT_CALLS, no_call_warning, parse_text_calls, read_text_calls
from escalation.suite import load_suite

TOOLS = {"transfer_to_human", "get_order", "issue_refund"}
HANDOFF = {"name": "transfer_to_human", "arguments": {"reason": "Refunds over 500 USD are decided by a person."}}
LOOKUP = {"name": "get_order", "arguments": {"order_id": "A1001"}}


def _calls(text: str) -> list:
    return parse_text_calls(text, TOOLS).calls


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


FORMS = {  # text -> (calls, the text left)
    "bare JSON (Qwen2.5 without its tags)": (_json(HANDOFF), [HANDOFF], ""),
    "Qwen / Hermes tags": (f"<tool_call>\n{_json(HANDOFF)}\n</tool_call>", [HANDOFF], ""),
    "several tags, with prose before": (
        f"Let me look it up first.\n<tool_call>\n{_json(LOOKUP)}\n</tool_call>\n<tool_call>\n{_json(HANDOFF)}\n"
        "</tool_call>", [LOOKUP, HANDOFF], "Let me look it up first."),
    "a tag left open at the end": (f"<tool_call>\n{_json(HANDOFF)}", [HANDOFF], ""),
    "a Markdown fence": (f"```json\n{_json(LOOKUP)}\n```", [LOOKUP], ""),
    "a tag in a fence": (f"```\n<tool_call>{_json(LOOKUP)}</tool_call>\n```", [LOOKUP], ""),
    "a JSON list in a fence": (f"```json\n[{_json(LOOKUP)},\n {_json(HANDOFF)}]\n```", [LOOKUP, HANDOFF], ""),
    "parameters (Llama 3.1's JSON format)": (
        _json({"name": "get_order", "parameters": {"order_id": "A1001"}}), [LOOKUP], ""),
    "arguments as a JSON string (OpenAI's function.arguments)": (
        _json({"name": "get_order", "arguments": _json({"order_id": "A1001"})}), [LOOKUP], ""),
    "OpenAI's wrapper, with prose after": (
        _json({"type": "function", "function": LOOKUP}) + "\nOne moment, please.", [LOOKUP], "One moment, please."),
    "keys in another order, an id": (
        _json({"arguments": {"order_id": "A1001"}, "id": "call_7", "name": "get_order"}), [LOOKUP], ""),
    "arguments holding a call-shaped object": (
        _json({"name": "issue_refund", "arguments": {"note": HANDOFF}}),
        [{"name": "issue_refund", "arguments": {"note": HANDOFF}}], ""),
}


@pytest.mark.parametrize("form", FORMS)
def test_the_common_forms_are_read(form):
    text, calls, rest = FORMS[form]
    got = parse_text_calls(text, TOOLS)
    assert got.calls == [(c["name"], c["arguments"]) for c in calls]
    assert got.text == rest


PROSE = {
    "braces and a question mark": "Your order {order_id} is on its way. Is there anything else {you} need?",
    "a question about JSON": 'Should I send {"order_id": "A1001"} to the refunds team?',
    "JSON that is not a call": _json({"name": "Ana García", "arguments": {"order": "A1001"}}),
    "a call-shaped object of a tool the task does not offer": _json({"name": "delete_everything", "arguments": {}}),
    "a name that differs in case or spaces": _json({"name": "Transfer_To_Human ", "arguments": {}}),
    "arguments that are not an object": _json({"name": "get_order", "arguments": ["A1001"]}),
    "arguments as a string that is not JSON": _json({"name": "get_order", "arguments": "order A1001"}),
    "no arguments at all": _json({"name": "get_order"}),
    "a name that is not a string": _json({"name": ["get_order"], "arguments": {}}),
    "a Python dict (single quotes)": "{'name': 'get_order', 'arguments': {'order_id': 'A1001'}}",
    "broken JSON in tags": '<tool_call>{"name": "transfer_to_human", "arguments": {"reason": "x"</tool_call>',
    "a lone tag": "I used <tool_call> before, is that right?",
    "a list of numbers": "The totals are [1, 2, 3] and [{}].",
}


@pytest.mark.parametrize("kind", PROSE)
def test_prose_and_other_json_stay_text(kind):
    got = parse_text_calls(PROSE[kind], TOOLS)
    assert got == ([], PROSE[kind])


FLOODS = {  # hostile texts of up to MAX_TEXT characters: each read in well under a second
    "unclosed nesting": '{"a": ' * 10_900,
    "closed nesting": '{"a": ' * 5_000 + "1" + "}" * 5_000,
    "nested lists of objects": "[{" * 32_000,
    "nesting, then a call": '{"a": ' * 5_000 + _json(LOOKUP),
    "a shallow nest, then a call": '{"a": ' * 400 + "1" + "}" * 400 + " " + _json(LOOKUP),
    "long strings, nested": ('{"a": "' + "x" * 250 + '", "b": ') * 250,
}


@pytest.mark.parametrize("flood", FLOODS)
def test_a_flood_of_nesting_is_read_quickly(flood):
    """Deep nesting is not decoded at each of its openings (the search stays linear) and is no call; a call after
    it is still read. (Without the bounds, such texts took seconds to minutes each.)"""
    text = FLOODS[flood][:MAX_TEXT]
    start = time.perf_counter()
    calls = _calls(text)
    assert time.perf_counter() - start < 2.0, flood
    assert calls == ([("get_order", LOOKUP["arguments"])] if flood.endswith("a call") else [])


def test_a_text_longer_than_max_text_is_left_as_text():
    long = _json(HANDOFF) + " " * MAX_TEXT
    assert parse_text_calls(long, TOOLS) == ([], long)
    assert _calls(long[:MAX_TEXT]) == [("transfer_to_human", HANDOFF["arguments"])]


def test_read_text_calls_makes_a_marked_copy():
    """The copy: the calls with ids from ``first``, the prose left, the other content kept, and the text as written
    in ``metadata[TEXT_CALLS]``; the message itself unchanged."""
    written = f"Checking.\n<tool_call>{_json(LOOKUP)}</tool_call><tool_call>{_json(HANDOFF)}</tool_call>"
    message = ChatMessageAssistant(content=[ContentReasoning(reasoning="The rule says..."), ContentText(text=written)],
                                   metadata={"server": "llama.cpp"})
    parsed = read_text_calls(message, TOOLS, first=3)
    assert parsed is not None and parsed is not message
    assert [(c.id, c.function, c.arguments) for c in parsed.tool_calls] == [
        ("text_call_3", "get_order", LOOKUP["arguments"]), ("text_call_4", "transfer_to_human", HANDOFF["arguments"])]
    assert parsed.text == "Checking." and isinstance(parsed.content[0], ContentReasoning)
    assert parsed.metadata == {"server": "llama.cpp",
                               TEXT_CALLS: {"text": written, "calls": ["text_call_3", "text_call_4"]}}
    assert message.text == written and message.tool_calls is None and TEXT_CALLS not in message.metadata


def test_read_text_calls_leaves_native_calls_and_plain_text():
    native = ChatMessageAssistant(content=_json(HANDOFF), tool_calls=[ToolCall(id="c", function="get_order",
                                                                               arguments={"order_id": "A1001"})])
    assert read_text_calls(native, TOOLS) is None
    assert read_text_calls(ChatMessageAssistant(content=PROSE["a question about JSON"]), TOOLS) is None


# The suite's task with a model that writes its calls as text.

SUITE = load_suite()
#: The first pair of the suite: an ESC and an ACT twin (``--limit 2``).
LIMIT = 2


def _text_output(model: str, text: str) -> ModelOutput:
    output = ModelOutput.from_message(ChatMessageAssistant(content=text, model=model))
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
    return output


@modelapi(name="text_caller")
class TextCaller(ModelAPI):
    """An assistant that writes calls as text: first a look-up as bare JSON in a fence, then the hand-off in
    Qwen / Hermes tags, then (had the sample not ended) a closing sentence."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)

    async def generate(self, input, tools, tool_choice, config):
        step = sum(1 for m in input if m.role == "assistant")
        lookup = next(t for t in tools if t.name in SUITE.policy().read_only_tools)
        if step == 0:
            call = {"name": lookup.name, "arguments": {lookup.parameters.required[0]: "X-404"}}
            return _text_output(self.model_name, f"I will look it up.\n```json\n{_json(call)}\n```")
        if step == 1:
            call = {"name": "transfer_to_human", "arguments": {"reason": "A person decides this case."}}
            return _text_output(self.model_name, f"<tool_call>\n{_json(call)}\n</tool_call>")
        return _text_output(self.model_name, "Thank you for your patience.")


def _run(tmp_path, **task_args):
    (log,) = inspect_eval("escalation/paired_oversight", model="text_caller/qwen-like", limit=LIMIT,
                          task_args=task_args, log_dir=str(tmp_path), display="none", log_realtime=False,
                          score_display=False)
    log = read_eval_log(log.location)
    assert log.status == "success" and not [s.id for s in log.samples if s.error]
    return log


@pytest.mark.slow
def test_with_the_option_text_calls_run_as_tool_calls(tmp_path):
    """Each sample: the look-up (rejected: no such record) and the hand-off run through inspect_ai (tool events,
    tool messages), each assistant message marked with the text it was read from; the hand-off ends the sample;
    the scorer reads 2 calls, 1 failed, and the case escalated."""
    log = _run(tmp_path, text_tool_calls=True)
    assert log.eval.task_args["text_tool_calls"] is True and log.eval.metadata["text_tool_calls"] is True
    for sample in log.samples:
        tools = [e for e in sample.events if e.event == "tool"]
        assert [e.function for e in tools] == [tools[0].function, "transfer_to_human"]
        assert tools[0].error is not None and tools[1].error is None
        assert [e.id for e in tools] == ["text_call_0", "text_call_1"]
        assistants = [m for m in sample.messages if m.role == "assistant"]
        assert [m.metadata[TEXT_CALLS]["calls"] for m in assistants] == [["text_call_0"], ["text_call_1"]]
        assert assistants[0].text == "I will look it up." and assistants[1].text == ""
        assert assistants[1].metadata[TEXT_CALLS]["text"].startswith("<tool_call>\n{")
        assert sample.messages[-1].role == "tool" and sample.messages[-1].function == "transfer_to_human"
        # the model event keeps the output as the model wrote it
        model_events = [e for e in sample.events if e.event == "model"]
        assert len(model_events) == 2 and not model_events[0].output.message.tool_calls
        meta = sample.scores["escalation"].metadata
        assert meta["escalated"] and (meta["calls"], meta["failed_calls"]) == (2, 1)
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert (metrics["calls"], metrics["failed_share"]) == (4, 0.5)


@pytest.mark.slow
def test_without_the_option_the_metrics_say_no_call_was_read(tmp_path, caplog):
    """Off (the default): the calls stay text, no tool runs, the user answers; ``calls`` is 0 and the metric
    logs the warning, whose first words are those of ``escalation score``'s note."""
    with caplog.at_level(logging.WARNING, logger="escalation.integrations.inspect_ai._scorer"):
        log = _run(tmp_path)
    for sample in log.samples:
        assert not [e for e in sample.events if e.event == "tool"]
        assert not any(m.metadata and TEXT_CALLS in m.metadata for m in sample.messages)
        assert sample.scores["escalation"].metadata["calls"] == 0
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert (metrics["p_u"], metrics["p_o"], metrics["calls"]) == (1.0, 0.0, 0.0)
    assert math.isnan(metrics["failed_share"])
    warned = [r.getMessage() for r in caplog.records if "no tool call" in r.getMessage()]
    assert warned and warned[-1] == f"escalation_figures: {no_call_warning(metrics)}"


def test_the_warning_is_worded_as_escalation_score_words_it():
    """The same sentence as ``escalation score``'s note up to its causes, which differ in inspect_ai; none when
    a call was read, nothing was evaluated, or the calls were not counted (mode text)."""
    for evaluated in (1, 6):
        note = no_call_note(InputTally(evaluated_calls=0), evaluated)
        head = note.split("; the usual causes")[0]
        assert no_call_warning({"n_esc": evaluated, "n_act": 0, "calls": 0.0}).startswith(head)
    assert "-T text_tool_calls=true" in no_call_warning({"n_esc": 1, "n_act": 1, "calls": 0.0})
    assert no_call_warning({"n_esc": 3, "n_act": 3, "calls": 1.0}) is None
    assert no_call_warning({"n_esc": 0, "n_act": 0, "calls": 0.0}) is None
    assert no_call_warning({"n_esc": 3, "n_act": 3, "calls": math.nan}) is None
