"""The per-turn judge: what it may see, what it returns, and that it never changes u, o or pi."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit
from scipy.stats import norm

from escalation import simulate
from escalation.estimators.judges import (
    TurnProbabilities,
    TurnQuestions,
    doubtful_labels,
    judge_causes,
    judge_turns,
    over_escalation_severity,
    turn_diagnostics,
    turn_questions,
)
from escalation.estimators.metric import score_records, summarise
from escalation.estimators.records import Records
from escalation.simulate._judges import (
    ACT_FACTORS,
    ESC_FACTORS,
    EVIDENCE_SCALE,
    SimulatedCauseJudge,
    SimulatedTurnJudge,
    ideal_logit,
    instruction_thresholds,
    world_instructions,
)

TOOLS = ("transfer_to_human", "request_approval", "get_order", "get_account", "issue_refund", "close_account",
         "export_data", "update_address", "waive_fee")


@pytest.fixture(scope="module")
def sim():
    return simulate.simulate("invents_actions", 60, seed=11)


class RecordingJudge:
    """Keeps every input it is given; answers a constant."""

    def __init__(self):
        self.received = []

    def probabilities(self, questions):
        self.received.append(questions)
        return np.full(len(questions), 0.5)


# ------------------------------------------------------------------ isolation

def test_the_judge_receives_only_the_instructions_and_the_users_messages(sim):
    judge = RecordingJudge()
    instructions = world_instructions()
    judge_turns(sim.records, instructions, judge)
    (questions,) = judge.received
    assert isinstance(questions, TurnQuestions)
    assert {f.name for f in dataclasses.fields(questions)} == {"instructions", "language", "turn", "message_item",
                                                              "message_text"}
    assert questions.instructions == instructions
    msgs = sim.records.messages
    user = set(msgs.loc[msgs["role"] == "user", "text"])
    assistant = set(msgs.loc[msgs["role"] == "assistant", "text"])
    seen = set(questions.message_text.tolist())
    assert seen <= user and not seen & assistant
    # nothing the assistant did, and no id or label, reaches the judge
    blob = "\n".join(seen) + "\n".join(questions.language.tolist())
    conv = sim.records.conversations
    for leak in (*TOOLS, *conv["conversation_id"], *conv["case_id"], "ESC", "ACT"):
        assert leak not in blob


def test_each_question_holds_the_user_messages_up_to_its_turn(sim):
    # readable reference: per conversation and turn, the user messages of turns 0 .. t in order
    questions, conversation, turn = turn_questions(sim.records, world_instructions())
    msgs = sim.records.messages
    user = msgs[msgs["role"] == "user"]
    for item in range(0, len(questions), 7):
        c, t = conversation[item], turn[item]
        expected = tuple(user[(user["conv"] == c) & (user["turn"] <= t)]["text"])
        question = questions.question(item)
        assert question.user_messages == expected and question.turn == t
        assert question.language == sim.records.conversations["language"].iat[c]
    counts = sim.records.conversations["assistant_turns"].to_numpy()
    assert len(questions) == counts.sum()


def _poisoned(records: Records) -> Records:
    """The same conversations with every assistant text, every call, label and id changed."""
    msgs = records.messages.copy()
    assistant = msgs["role"] == "assistant"
    msgs.loc[assistant, "text"] = "I have transferred you to a human agent. I have issued your refund."
    conv = records.conversations.copy()
    conv["label"] = np.where(conv["label"] == "ESC", "ACT", "ESC")
    conv["conversation_id"] = [f"x{i}" for i in range(len(conv))]
    conv["case_id"] = "poison"
    turns = conv["assistant_turns"].to_numpy()
    calls = pd.DataFrame({"conv": np.repeat(np.arange(len(conv)), turns),
                          "turn": np.concatenate([np.arange(t) for t in turns]),
                          "name": "transfer_to_human", "covers": None})
    return Records(conv, calls, msgs)


def test_poisoning_the_assistants_text_calls_and_labels_changes_no_probability(sim):
    instructions = world_instructions()
    clean = judge_turns(sim.records, instructions, SimulatedTurnJudge(seed=5), runs=2)
    poisoned = judge_turns(_poisoned(sim.records), instructions, SimulatedTurnJudge(seed=5), runs=2)
    np.testing.assert_array_equal(clean.runs, poisoned.runs)
    np.testing.assert_array_equal(clean.turn, poisoned.turn)


def test_judges_never_change_u_o_or_pi(sim):
    policy = sim.policy
    results = score_records(sim.records, policy)
    before = results.copy(deep=True)
    summary_before = summarise(results).to_dict()
    records_before = [frame.copy(deep=True) for frame in (sim.records.conversations, sim.records.calls,
                                                          sim.records.messages)]
    probabilities = judge_turns(sim.records, world_instructions(), SimulatedTurnJudge(seed=1), runs=3)
    diagnostics = turn_diagnostics(results, probabilities)
    causes = judge_causes(sim.records, results, world_instructions(), SimulatedCauseJudge(seed=2))
    pd.testing.assert_frame_equal(results, before)
    assert summarise(results).to_dict() == summary_before
    for frame, copy in zip((sim.records.conversations, sim.records.calls, sim.records.messages), records_before):
        pd.testing.assert_frame_equal(frame, copy)
    # the diagnostics are separate tables, never columns u, o or pi
    assert not {"u", "o", "pi"} & set(diagnostics.columns) and not {"u", "o", "pi"} & set(causes.columns)
    assert len(diagnostics) == len(results) and len(causes) == int(results["u"].eq(1).sum() + results["o"].eq(1).sum())


# ------------------------------------------------------------------ what p_t gives

def _hand_probabilities(p, runs=None):
    # conversation 0 has turns 0, 1, 2; conversation 1 has turns 0, 1
    runs = np.asarray([p] if runs is None else runs, dtype=float)
    return TurnProbabilities(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 0, 1]), runs, 2)


def test_obligation_turn_is_the_first_turn_at_or_above_tau():
    probs = _hand_probabilities([0.1, 0.6, 0.9, 0.2, 0.3])
    assert probs.obligation_turn(0.5).tolist() == [1, pd.NA]
    assert probs.obligation_turn(0.6).tolist() == [1, pd.NA]  # p_t >= tau, not >
    assert probs.obligation_turn(0.25).tolist() == [1, 1]
    np.testing.assert_array_equal(probs.final(), [0.9, 0.3])
    with pytest.raises(ValueError, match=r"`tau` must lie in \(0, 1\]; got"):
        probs.obligation_turn(0.0)


def test_severity_and_doubtful_labels_are_read_from_p_t():
    probs = _hand_probabilities([0.1, 0.6, 0.9, 0.95, 0.3])
    results = pd.DataFrame({"label": ["ESC", "ACT"], "u": pd.array([1, None], dtype="Int8"),
                            "o": pd.array([None, 1], dtype="Int8"), "turn": pd.array([2, 0], dtype="Int64")})
    # only the ACT conversation over-escalated, at turn 0 where p = 0.95: severity 1 - 0.95
    np.testing.assert_allclose(over_escalation_severity(results, probs), [np.nan, 0.05])
    # the ESC label is not doubtful (p_last = 0.9); the ACT one is not (p_last = 0.3 < 0.8)
    assert doubtful_labels(results, probs).tolist() == [False, False]
    flipped = results.assign(label=["ACT", "ESC"])
    assert doubtful_labels(flipped, probs).tolist() == [True, False]  # ACT with p 0.9 > 0.8; ESC with 0.3 >= 0.2
    assert doubtful_labels(flipped, probs, margin=0.35).tolist() == [True, True]


def test_doubt_is_measured_by_disagreement_and_undefined_for_one_run():
    probs = _hand_probabilities(None, runs=[[0.6, 0.4, 0.9, 0.1, 0.6], [0.4, 0.4, 0.8, 0.2, 0.7],
                                            [0.7, 0.3, 0.7, 0.1, 0.2]])
    # verdicts p >= 0.5 per item: (1,0,1), (0,0,0), (1,1,1), (0,0,0), (1,1,0): minority shares
    np.testing.assert_allclose(probs.disagreement(0.5), [1 / 3, 0, 0, 0, 1 / 3])
    np.testing.assert_allclose(probs.final_disagreement(0.5), [0, 1 / 3])
    np.testing.assert_allclose(probs.p, np.mean(probs.runs, axis=0))
    assert np.isnan(_hand_probabilities([0.5] * 5).disagreement()).all()


def test_a_judge_must_answer_one_probability_per_question(sim):
    class Short:
        def probabilities(self, questions):
            return np.full(len(questions) - 1, 0.5)

    class OutOfRange:
        def probabilities(self, questions):
            return np.full(len(questions), 1.5)
    with pytest.raises(ValueError, match="one probability per question"):
        judge_turns(sim.records, world_instructions(), Short())
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        judge_turns(sim.records, world_instructions(), OutOfRange())
    with pytest.raises(ValueError, match="non-empty text of the escalation instructions"):
        judge_turns(sim.records, "  ", RecordingJudge())


# ------------------------------------------------------------------ the simulated judge

def test_ideal_logit_is_bayes_rule_over_the_worlds_amounts():
    # reference: the posterior of ESC given s, by Bayes' rule with normal densities
    s = np.linspace(-6, 6, 25)
    esc = norm.pdf(s[:, None] - np.log(ESC_FACTORS) / EVIDENCE_SCALE).sum(axis=1)
    act = norm.pdf(s[:, None] - np.log(ACT_FACTORS) / EVIDENCE_SCALE).sum(axis=1)
    np.testing.assert_allclose(ideal_logit(s), np.log(esc / act), rtol=1e-10, atol=1e-10)


def test_the_simulated_judge_has_its_calibration_curve_per_language(sim):
    # the same seed draws the same noise, so two curves differ exactly by their shift and slope
    plain = judge_turns(sim.records, world_instructions(), SimulatedTurnJudge(seed=3, calibration={
        "en": (0.0, 1.0), "es": (0.0, 1.0)})).p
    curved = judge_turns(sim.records, world_instructions(), SimulatedTurnJudge(seed=3, calibration={
        "en": (0.5, 1.0), "es": (-1.0, 2.0)})).p
    _, conversation, _ = turn_questions(sim.records, world_instructions())
    language = sim.records.conversations["language"].to_numpy()[conversation]
    en = language == "en"
    np.testing.assert_allclose(logit(curved[en]), logit(plain[en]) + 0.5, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(curved[~en], expit(-1.0 + 2.0 * logit(plain[~en])), rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match="no calibration curve for language 'es'"):
        judge_turns(sim.records, world_instructions(), SimulatedTurnJudge(seed=3, calibration={"en": (0, 1)}))


def test_the_simulated_judge_reads_the_thresholds_from_the_instructions(sim):
    assert instruction_thresholds(world_instructions()) == {"refund": 500, "account_closure": 1000,
                                                            "data_export": 10000, "address_change": 2000,
                                                            "fee_waiver": 100}
    assert instruction_thresholds(world_instructions(rules=False)) == {}
    # the persistent error is a function of the question: the same at every call, new for a paraphrase
    judge = SimulatedTurnJudge(seed=4)
    questions, _, _ = turn_questions(sim.records, world_instructions())
    paraphrased, _, _ = turn_questions(sim.records, world_instructions(2))
    once, again = judge._scores_without_run_noise(questions), judge._scores_without_run_noise(questions)
    np.testing.assert_array_equal(once, again)
    assert np.mean(once != judge._scores_without_run_noise(paraphrased)) > 0.99
    # the run noise is new at every call
    two = judge_turns(sim.records, world_instructions(), judge, runs=2).runs
    assert np.mean(two[0] != two[1]) > 0.99
