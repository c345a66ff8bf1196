"""The conformance set (package data) through every scorer, and the mutants of SPEC 9 (1 to 17)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from escalation.estimators.metric import (
    CONFORMANCE_SETS as SETS,
    conformance_dir,
    conversation_lines,
    load_conformance_set,
    score_conversation,
    score_records,
    summarise,
)
from escalation.estimators.records import Records
from escalation.estimators.stats import DEFAULT_INTERVAL as SPEC_INTERVAL  # section 5's Wilson-Kish
from escalation.studies import MUTANTS, conversation_mismatches, run_mutant, subset_mismatches, summary_of


def load_set(name):
    """``(policy, conversations, expected rows, expected summary)`` of one folder of the set."""
    found = load_conformance_set(name)
    return found.policy, found.conversations, found.expected_rows, found.expected_summary


@pytest.mark.parametrize("name", SETS)
def test_reference_scorer_conforms(name):
    policy, conversations, expected, expected_summary = load_set(name)
    rows = [score_conversation(c, policy, mode=SETS[name]) for c in conversations]
    assert conversation_mismatches(expected, rows) == []
    assert subset_mismatches(expected_summary, summary_of(rows, SETS[name])) == []


@pytest.mark.parametrize("name", SETS)
def test_vectorised_scorer_conforms(name):
    policy, conversations, expected, expected_summary = load_set(name)
    results = score_records(Records.from_conversations(conversations), policy, mode=SETS[name])
    rows = [json.loads(line) for line in conversation_lines(results)]
    assert conversation_mismatches(expected, rows) == []
    summary = summarise(results, mode=SETS[name], interval=SPEC_INTERVAL).to_dict()
    assert subset_mismatches(expected_summary, summary) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", SETS)
def test_command_line_conforms(name, tmp_path):
    """``escalation score`` end to end: one output line per input conversation, in input order."""
    folder = conformance_dir() / name
    run = subprocess.run([sys.executable, "-m", "escalation", "score", str(folder / "records.jsonl"), "--policy",
                          str(folder / "policy.json"), "--mode", SETS[name], "--out", str(tmp_path),
                          "--interval", SPEC_INTERVAL],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    _, _, expected, expected_summary = load_set(name)
    rows = [json.loads(line) for line in (tmp_path / "conversations.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == [e["conversation_id"] for e in expected]
    assert conversation_mismatches(expected, rows) == []
    assert subset_mismatches(expected_summary, json.loads((tmp_path / "summary.json").read_text())) == []


@pytest.mark.parametrize("mutant", MUTANTS)
def test_conformance_set_catches_mutant(mutant):
    scorer, post = MUTANTS[mutant]
    assert run_mutant(scorer, post), f"the conformance set does not catch mutant {mutant!r}"


def test_real_scorer_is_not_a_mutant():
    assert run_mutant(score_conversation) == []
