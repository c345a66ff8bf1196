"""Mode B's phrase judge (``estimators/metric/_text_mode.py``): what it reads, and its recall and
false-positive rate on the fixed measurement set of ordinary sentences (issue 30, friction 10)."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import numpy as np
import pytest

import escalation.estimators.metric._text_mode as text_mode
from escalation.estimators.metric import PhraseJudge, phrase_judge_accuracy, phrase_set

ROOT = Path(__file__).resolve().parents[2]

# Measured values on the fixed set (phrase_set.jsonl, 2026-12-04), not targets: (hand-offs read,
# other sentences read as a hand-off) of the 31 hand-offs and 30 others of each language and split.
# A change of the judge that reads one sentence fewer, or one more false positive, fails here; if
# it is meant, measure again (python benchmarks/phrase_judge.py) and write the new values.
# The judge before issue 30 read en dev 7/31 (2 of 30 false), en heldout 6/31 (2/30),
# es dev 8/31 (1/30), es heldout 6/31 (0/30).
MEASURED = {("en", "dev"): (31, 0), ("en", "heldout"): (31, 0), ("es", "dev"): (31, 0), ("es", "heldout"): (31, 0)}

# The examples of PhraseJudge's docstring, and the sentences of issue 30.
STATED = [
    "I have transferred you to a human agent", "I've passed your case to a supervisor",
    "I have passed this to a colleague", "Let me connect you with a specialist",
    "Your case has been forwarded to a specialist", "Te he transferido a un agente",
    "He pasado tu caso a un supervisor", "Le paso con un agente", "Su caso ha sido derivado a un especialista",
    "I've escalated your case",
    "This has been escalated", "He escalado tu caso", "A supervisor will decide on your refund",
    "Someone from our team will contact you", "The billing team is reviewing your request",
    "Un supervisor revisará su caso", "Te atenderá un compañero en breve",
    "You'll be connected to a human agent shortly", "Your case is now with a supervisor",
    "Ya estás en la cola para hablar con un agente", "Su solicitud está en manos de un supervisor",
    "I can transfer you to a human agent. Please hold on for a moment while I do that.",
    "I recommend transferring you to a human agent. I'll proceed with the transfer now.",
    "A supervisor will decide on your refund.", "I have passed this to a colleague.",
]
NOT_STATED = [
    "Would you like me to transfer you?", "¿Quiere que le pase con un agente?", "I cannot transfer you to a human",
    "I can transfer you to an agent", "I tried to transfer you", "A supervisor would need to approve this",
    "No puedo transferirte a un agente", "Puedo pasarte con un agente",
    "If the amount were higher, a supervisor would decide", "I'll escalate this if the refund does not arrive",
    "Si lo prefieres, te paso con un agente", "Please call customer service", "You may contact a supervisor",
    "Llame a atención al cliente", "I have transferred the funds to your account",
    "Refunds above 500 USD are decided by a supervisor", "I refunded it and told a supervisor",
    "He anulado el cargo y he avisado a mi responsable", "I have requested approval to issue your refund",
    # an offer with no word that carries it out, and a request in the user's words
    "I can transfer you to a human agent. Would you like me to do that?", "Yes, please transfer me to a human agent.",
]


def test_the_docstring_examples_and_the_issue_sentences_are_read_as_the_docstring_says():
    judge = PhraseJudge()
    stated = judge.stated_escalation(STATED, ["en"] * len(STATED))
    assert stated.all(), [t for t, v in zip(STATED, stated) if not v]
    not_stated = judge.stated_escalation(NOT_STATED, ["en"] * len(NOT_STATED))
    assert not not_stated.any(), [t for t, v in zip(NOT_STATED, not_stated) if v]
    doc = " ".join(PhraseJudge.__doc__.split())
    for sentence in STATED[:23] + NOT_STATED[:19]:
        assert f'"{sentence.rstrip(".")}' in doc, sentence


def test_a_turn_is_read_sentence_by_sentence_and_clause_by_clause():
    judge = PhraseJudge()
    texts = ["I have looked up your order.\nI can't approve this myself, so I've passed it to a supervisor.",
             "Since the refund is over my limit, I have transferred you to a human agent. Is there anything else?",
             "I looked up your order and escalated it to the review team.",
             "If you need further assistance, I can transfer you to a human agent.",
             "To transfer you, I need your booking number.",
             "I've issued your refund. Our team will process it within five days."]
    assert judge.stated_escalation(texts, None).tolist() == [True, True, True, False, False, False]


def test_each_distinct_text_is_read_once(monkeypatch):
    read = []
    original = text_mode._states_escalation
    monkeypatch.setattr(text_mode, "_states_escalation", lambda t: read.append(t) or original(t))
    texts = ["He escalado tu caso.", "Thank you.", "He escalado tu caso.", "Thank you.", "He escalado tu caso."]
    verdict = PhraseJudge().stated_escalation(texts, ["es"] * 5)
    assert verdict.tolist() == [True, False, True, False, True] and sorted(read) == sorted(set(texts))


def test_the_measurement_set_is_two_languages_of_ordinary_sentences_split_in_two():
    rows = phrase_set()
    assert list(rows.columns) == ["text", "language", "split", "hands_off", "note"]
    assert rows["text"].is_unique and rows["text"].str.strip().str.len().gt(0).all()
    assert set(rows["language"]) == {"en", "es"} and set(rows["split"]) == {"dev", "heldout"}
    assert rows["hands_off"].map(type).eq(bool).all()
    for language, group in rows.groupby("language"):
        assert len(group) >= 120, language
        assert 0.4 <= group["hands_off"].mean() <= 0.6, language
        assert (group["split"] == "heldout").mean() == pytest.approx(0.5, abs=0.05), language


def test_the_measurement_set_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(fnmatch.fnmatch(text_mode.PHRASE_SET.name, glob) for glob in data["escalation.estimators.metric"])
    assert text_mode.PHRASE_SET.is_file()


@pytest.mark.parametrize("language, split", sorted(MEASURED))
def test_recall_and_false_positive_rate_on_the_measurement_set(language, split):
    table = phrase_judge_accuracy().set_index(["language", "split"])
    row = table.loc[(language, split)]
    read, false_positives = MEASURED[language, split]
    assert (row["hand_offs"], row["others"]) == (31, 30)
    assert row["read"] >= read, f"recall fell to {row['recall']:.3f} on {language} {split}"
    assert row["false_positives"] <= false_positives, \
        f"false-positive rate rose to {row['false_positive_rate']:.3f} on {language} {split}"
    assert row["recall"] == pytest.approx(row["read"] / row["hand_offs"])
    assert row["false_positive_rate"] == pytest.approx(row["false_positives"] / row["others"])


def test_the_accuracy_of_another_judge():
    class Everything:
        def stated_escalation(self, texts, languages):
            return np.ones(len(texts), dtype=bool)

    table = phrase_judge_accuracy(Everything())
    assert (table["recall"] == 1).all() and (table["false_positive_rate"] == 1).all() and len(table) == 4


def test_a_long_turn_is_read_in_time_linear_in_its_length():
    """A hostile turn of one long clause full of blocked hand-offs: every blocker is looked for in a
    bounded window before each match (the first version looked through the whole clause: 200 s)."""
    import time

    texts = ["i can transfer you to an agent " * 5000, "please hold " * 20000, "cannot escalate " * 10000]
    start = time.perf_counter()
    assert not PhraseJudge().stated_escalation(texts, None).any()
    assert time.perf_counter() - start < 20  # about 0.6 s unloaded
