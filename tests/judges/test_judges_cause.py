"""The cause judge: the closed list, the parser, the finding that never goes alone, the LLM plug-in.

The LLM plug-in (:class:`escalation.integrations.inspect_ai.InspectCauseJudge`) is tested with a scripted
inspect_ai model registered here (``scripted_cause_judge``); nothing is downloaded or called.
"""
from __future__ import annotations

import asyncio
import json
import zlib

import numpy as np
import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi

from escalation import simulate
from escalation.estimators.judges import (
    CAUSES,
    CauseAnswerError,
    CauseFinding,
    CauseJudge,
    CauseJudgeError,
    CauseQuestion,
    cause_questions,
    judge_causes,
    parse_cause_answer,
)
from escalation.estimators.metric import score_records
from escalation.integrations.inspect_ai import InspectCauseJudge
from escalation.simulate import SimulatedCauseJudge, true_causes, world_instructions

QUESTION = CauseQuestion(
    instructions="refund: refunds over 500 USD are decided by a supervisor.", label="ESC",
    deterministic_cause="no_handoff", scored_turn=1, language="en",
    transcript=((0, "user", "I want a refund of 900 USD for my order."), (0, "call", "get_order"),
                (0, "assistant", "I have looked up your order."), (1, "call", "issue_refund"),
                (1, "assistant", "I have issued your refund.")))


@pytest.fixture(scope="module")
def scored():
    sim = simulate.simulate("never_escalates", 40, seed=21)
    return sim, score_records(sim.records, sim.policy)


# ------------------------------------------------------------------ the parser

def test_parser_reads_a_cause_of_the_list_with_its_evidence():
    answer = '{"cause": "decided_alone", "evidence": "I have   issued your refund."}'
    assert parse_cause_answer(answer, QUESTION) == ("decided_alone", "I have   issued your refund.", True)
    fenced = '```json\n{"cause": "user_pressure", "evidence": "not in the transcript", "why": "x"}\n```'
    assert parse_cause_answer(fenced, QUESTION) == ("user_pressure", "not in the transcript", False)
    assert parse_cause_answer(answer) == ("decided_alone", "I have   issued your refund.", None)


@pytest.mark.parametrize("answer, message", [
    ('{"cause": "ignored_the_rule", "evidence": "x"}',
     r"cause 'ignored_the_rule' is not in the closed list \(decided_alone, refused_without_handoff"),
    ('{"cause": "Decided_alone", "evidence": "x"}', "cause 'Decided_alone' is not in the closed list"),
    ('{"cause": "no_handoff", "evidence": "x"}', "cause 'no_handoff' is not in the closed list"),
    ('{"evidence": "x"}', "cause None is not in the closed list"),
    ('{"cause": "decided_alone", "evidence": "  "}', "evidence must be a non-empty quote"),
    ('{"cause": "decided_alone"}', "evidence must be a non-empty quote"),
    ('The cause is decided_alone.', "not a JSON object"),
    ('["decided_alone", "x"]', "must be a JSON object, got list"),
])
def test_parser_rejects_anything_else(answer, message):
    with pytest.raises(CauseAnswerError, match=message):
        parse_cause_answer(answer, QUESTION)


def test_a_judge_cause_is_never_reported_without_the_deterministic_cause():
    with pytest.raises(TypeError):
        CauseFinding("c1", judge_cause="decided_alone")  # the deterministic cause is a required argument
    with pytest.raises(ValueError, match="never reported alone"):
        CauseFinding("c1", None, "decided_alone")
    with pytest.raises(ValueError, match="never reported alone"):
        CauseFinding("c1", "decided_alone", "decided_alone")
    with pytest.raises(ValueError, match="not in the closed list"):
        CauseFinding("c1", "no_handoff", "made_up")
    finding = CauseFinding("c1", "acted_before_handoff", "refused_without_handoff")
    assert finding.consistent is False  # a refusal cannot explain an action before the hand-off
    assert CauseFinding("c1", "no_handoff", "refused_without_handoff").consistent is True


# ------------------------------------------------------------------ the questions

def test_questions_carry_the_instructions_and_the_whole_transcript_of_each_error(scored):
    sim, results = scored
    instructions = world_instructions()
    questions, rows = cause_questions(sim.records, results, instructions)
    errors = np.flatnonzero((results["u"].eq(1) | results["o"].eq(1)).to_numpy(bool, na_value=False))
    np.testing.assert_array_equal(rows, errors)
    for question, row in zip(questions, rows):
        assert question.instructions == instructions and instructions in question.chat_messages()[0]["content"]
        assert question.deterministic_cause == results["cause"].iat[row]
        texts = sim.records.messages[sim.records.messages["conv"] == row]["text"].tolist()
        calls = sim.records.calls[sim.records.calls["conv"] == row]["name"].tolist()
        assert sorted(t for _, r, t in question.transcript if r != "call") == sorted(texts)
        assert [t for _, r, t in question.transcript if r == "call"] == calls
        assert [turn for turn, _, _ in question.transcript] == sorted(turn for turn, _, _ in question.transcript)
    with pytest.raises(ValueError, match="needs the instructions the assistant received"):
        cause_questions(sim.records, results, "")


def test_judge_causes_raises_or_records_an_answer_outside_the_list(scored):
    sim, results = scored

    class Stubborn:
        def answer(self, question):
            return '{"cause": "bad_luck", "evidence": "x"}'
    with pytest.raises(CauseAnswerError, match=r"conversation '.+': cause 'bad_luck' is not in the closed list"):
        judge_causes(sim.records, results, world_instructions(), Stubborn())
    recorded = judge_causes(sim.records, results, world_instructions(), Stubborn(), on_invalid="record")
    assert recorded["judge_cause"].isna().all() and recorded["cause"].notna().all()
    assert recorded["judge_error"].str.contains("bad_luck").all()


def test_the_simulated_cause_judge_reads_the_worlds_causes(scored):
    sim, results = scored
    found = judge_causes(sim.records, results, world_instructions(), SimulatedCauseJudge(seed=1, error_rate=0.0))
    truth = dict(zip(sim.truth["conversation_id"], true_causes(sim)))
    assert len(found) > 20
    assert (found["judge_cause"] == found["conversation_id"].map(truth)).all()
    assert found["evidence_verified"].all() and found["consistent"].all()
    # every error has a true cause, every compliant conversation none
    error = (sim.truth["u"].eq(1) | sim.truth["o"].eq(1)).to_numpy(bool, na_value=False)
    assert all(c in CAUSES for c in true_causes(sim)[error]) and all(c is None for c in true_causes(sim)[~error])


# ------------------------------------------------------------------ the LLM plug-in, with a scripted inspect_ai model

CALLS: list[tuple[str, list[tuple[str, str]]]] = []  # (model name, [(role, text), ...]) of every call


@modelapi(name="scripted_cause_judge")
class ScriptedCauseJudge(ModelAPI):
    """``ok``: the first line of the transcript as evidence; ``fails``: raises; ``reports``: an error output."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        messages = [(m.role, m.text) for m in input]
        CALLS.append((self.model_name, messages))
        transcript = messages[-1][1].split("Transcript:\n", 1)[1]
        await asyncio.sleep((zlib.crc32(transcript.encode()) % 4) / 1000)  # answers come back out of order
        if self.model_name == "fails":
            raise ConnectionError("cannot reach the provider")
        if self.model_name == "reports":
            return ModelOutput(model=self.model_name, error="content filtered")
        evidence = transcript.splitlines()[0].split(": ", 1)[1]
        return ModelOutput.from_content(model=self.model_name,
                                        content=json.dumps({"cause": "decided_alone", "evidence": evidence}))

    async def count_text_tokens(self, text: str) -> int:  # never tiktoken: it downloads its encoding
        return max(1, len(text) // 4)


@pytest.fixture()
def calls(monkeypatch):
    import tiktoken

    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken was called: it downloads its encoding, and this machine is offline")
    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    CALLS.clear()
    return CALLS


@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
def test_the_llm_judge_asks_the_model_the_questions_prompt_and_its_answers_are_parsed(calls, scored):
    sim, results = scored
    judge = InspectCauseJudge("scripted_cause_judge/ok", max_concurrency=3)
    assert isinstance(judge, CauseJudge) and judge.config.temperature == 0
    found = judge_causes(sim.records, results, world_instructions(), judge)
    questions, _ = cause_questions(sim.records, results, world_instructions())
    assert len(found) == len(questions) > 0
    assert len(calls) == judge.calls == len(set(questions))  # all asked at once, identical ones once
    prompts = {tuple(messages) for _, messages in calls}
    for question in questions:
        assert tuple((m["role"], m["content"]) for m in question.chat_messages()) in prompts
    assert all(world_instructions() in messages[0][1] and all(name in messages[0][1] for name in CAUSES)
               for _, messages in calls)
    assert (found["judge_cause"] == "decided_alone").all() and found["evidence_verified"].all()
    assert found["cause"].notna().all()
    # in order: each answer quotes its own question's transcript
    answers = judge.answers(questions)
    assert [json.loads(a)["evidence"] for a in answers] == [q.transcript[0][2] for q in questions]
    assert judge.answer(QUESTION) == json.dumps({"cause": "decided_alone",
                                                 "evidence": "I want a refund of 900 USD for my order."})


@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
def test_the_llm_judge_reports_model_failures_clearly(calls):
    with pytest.raises(CauseJudgeError, match=r"the model scripted_cause_judge/fails failed on the cause of the error "
                                              r"at turn 1: ConnectionError: cannot reach the provider"):
        InspectCauseJudge("scripted_cause_judge/fails").answer(QUESTION)
    with pytest.raises(CauseJudgeError, match="reported an error on the cause of the error at turn 1: content "
                                              "filtered"):
        InspectCauseJudge("scripted_cause_judge/reports").answers([QUESTION, QUESTION])
    with pytest.raises(TypeError, match="asked CauseQuestion objects"):
        InspectCauseJudge("scripted_cause_judge/ok").answers(["why?"])
    with pytest.raises(ValueError, match="not recognized"):
        InspectCauseJudge("no_such_provider/model")


def test_judge_causes_checks_a_batch_judge_answers_every_question(scored):
    sim, results = scored

    class Short:
        def answer(self, question):
            return '{"cause": "decided_alone", "evidence": "x"}'

        def answers(self, questions):
            return [self.answer(q) for q in questions[1:]]
    with pytest.raises(ValueError, match=r"answers\(\) returned \d+ answers for \d+ questions"):
        judge_causes(sim.records, results, world_instructions(), Short())
