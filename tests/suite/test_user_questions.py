"""The scripted user measured on labelled assistant turns (``tests/data/suite/user_questions.jsonl``).

The set (its ``README.md`` says how it was made) holds 251 assistant turns, 179 in English and 72 in Spanish:
direct, indirect and compound questions, requests without a question mark, identity checks, go-ahead
questions, offers to pass the case to a person, open questions, statements, and texts whose only ``?`` is in
a tool call written as JSON, a URL or a quoted title. 53 are real model outputs copied from the repository's
data (49 of gpt-4o in tau-bench's airline domain), 5 the profile models' phrases, 193 written for the set.
The user's rules were fitted on the 201 ``dev`` items; the 50 ``test`` items were written after the rules
were frozen.

Measured (2026-12-04): 244 of 251 right (97.2 %): dev 198 / 201 (98.5 %), test 46 / 50 (92.0 %), real
model outputs 51 / 53. The rules of suite 1.1.0 (the last question only, matched by the intents) got 139 of
251 (55.4 %): dev 110 / 201, test 29 / 50, real model outputs 21 / 53. The floors below leave room for a
change that costs an item or two, not for a regression.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from escalation.suite import PRESSURES, ScriptedUser, load_suite

DATA = Path(__file__).parents[1] / "data" / "suite"
_spec = importlib.util.spec_from_file_location("measure_user", DATA / "measure_user.py")
measure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(measure)

SUITE = load_suite()
ITEMS = measure.load_items()
#: The accuracy floors: all items, and the items written after the rules were frozen.
FLOOR, HELD_OUT_FLOOR = 0.95, 0.90
EXPECT = {"none", "neutral", "id", "identity", "confirm", "identity+id"}
#: What would tell the assistant the label: the label's name, or words of the rule's outcome.
LABEL_WORDS = re.compile(r"\b(ESC|ACT|escalat\w*|supervisor|reserved)\b", re.IGNORECASE)


def test_the_items_are_well_formed():
    assert len({i["id"] for i in ITEMS}) == len(ITEMS) == 251
    for item in ITEMS:
        assert item["language"] in SUITE.languages and item["expect"] in EXPECT and item["split"] in ("dev", "test")
        cases = SUITE.domain(item["domain"]).cases
        wanted = set(item["expect"].split("+")) - {"none", "neutral", "confirm"}
        assert all(wanted <= set(c.user.get("answers") or {}) for c in cases), item["id"]  # the domain has them


def test_the_real_items_are_copied_verbatim_from_their_source():
    root = Path(__file__).parents[2]
    real = [i for i in ITEMS if i["source"] != "written"]
    assert len(real) == 58
    tau = json.loads((root / "examples/data/tau-bench/gpt-4o-airline.json").read_text(encoding="utf-8"))
    suite_file = json.loads((root / "escalation/suite/data/suite.json").read_text(encoding="utf-8"))
    for item in real:
        path, _, where = item["source"].partition("#")
        if path.endswith("gpt-4o-airline.json"):
            sample, message = map(int, where.split("/"))
            assert tau[sample]["traj"][message] == {"role": "assistant", "content": item["text"]}, item["id"]
        elif path.endswith("suite.json"):
            node = suite_file
            for key in where.split("."):
                node = node[key]
            assert node == item["text"], item["id"]
        else:
            text = (root / path).read_text(encoding="utf-8")
            assert item["text"] in text or json.dumps(item["text"])[1:-1] in text, item["id"]


def test_the_scripted_user_is_right_on_the_labelled_turns():
    results = measure.evaluate(ITEMS, SUITE)
    overall = measure.accuracy(results)["all"]
    held_out = measure.accuracy(results, "split")["test"]
    wrong = [(r["id"], r["text"][:60], r["got"]) for r in results if not r["right"]]
    assert overall[0] / overall[1] >= FLOOR, wrong
    assert held_out[0] / held_out[1] >= HELD_OUT_FLOOR, wrong
    not_questions = [r for r in results if r["category"] == "not_a_question" and r["expect"] == "none"]
    assert all(r["right"] for r in not_questions), wrong  # a "?" in JSON, a URL or a quoted title is never answered


def test_the_measure_prints_its_figures(tmp_path, capsys):
    two = tmp_path / "two.jsonl"
    two.write_text("".join(json.dumps({**item, "expect": expect}) + "\n"
                           for item, expect in ((ITEMS[0], "id"), (ITEMS[1], "none"))), encoding="utf-8")
    assert measure.main([str(two)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"overall\s+all\s+1 / 2\s+50.0%", out) and f"wrong {ITEMS[1]['id']}" in out


def _as_act(reply: str, esc, act) -> str:
    """``reply`` with each text the ESC twin's user can say (its answers, its default answer) replaced by the ACT
    twin's text for the same intent."""
    for intent, text in esc.answers.items():
        reply = reply.replace(text, act.answers[intent])
    return reply.replace(esc.default_answer, act.default_answer)


@pytest.mark.parametrize("language", ["en", "es"])
def test_a_reply_never_tells_the_twins_apart(language):
    """For every item and every case of its domain, in every pressure: the ACT twin's reply is the ESC twin's
    with each of the ESC user's texts (answers, default answer) replaced by the ACT user's text for the same
    intent, so a reply differs between twins only where a case's answer does (the audit's minimal-pair check
    lets those differ only where the twin fact's value is written); the default (neutral) and go-ahead
    answers are the same text in both twins; and no reply holds a word of the label or of the rule's
    outcome."""
    settings = SUITE.settings["user"]
    scenarios = SUITE.scenarios(languages=[language], pressures=PRESSURES)
    pairs = list(zip(scenarios[::2], scenarios[1::2]))
    assert all((esc.case, esc.label, act.label) == (act.case, "ESC", "ACT") for esc, act in pairs)
    for esc, act in pairs:
        assert esc.default_answer == act.default_answer and esc.answers["confirm"] == act.answers["confirm"]
        esc_user, act_user = (ScriptedUser(s, settings, late_said=True) for s in (esc, act))
        for item in (i for i in ITEMS if i["language"] == language and i["domain"] == esc.domain.name):
            replies = [esc_user.answer(item["text"]), act_user.answer(item["text"])]
            assert (replies[0] is None) == (replies[1] is None), item["id"]
            if replies[0] is not None:
                assert replies[1] == _as_act(replies[0], esc, act), (item["id"], esc.sample_id)
                assert not LABEL_WORDS.search(" ".join(replies)), (item["id"], replies)
