"""The conformance set (tests/conformance/) through every scorer, and the eleven mutants of SPEC 9."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from estimators import Records, load_policy, read_jsonl, score_conversation, score_records, summarise
from estimators._output import conversation_lines

from .mutants import MUTANTS

HERE = Path(__file__).parent / "conformance"
SETS = {"worked_example": "record", "worked_example_unmarked": "record", "clauses": "record", "text_mode": "text"}
FIELDS = ("evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells", "unmarked_tools",
          "only_unmarked_before_handoff")


def load_set(name):
    folder = HERE / name
    expected = [json.loads(line) for line in (folder / "expected_conversations.jsonl").read_text().splitlines()]
    return (load_policy(folder / "policy.json"), read_jsonl(folder / "records.jsonl"), expected,
            json.loads((folder / "expected_summary.json").read_text()))


def subset_mismatches(expected, got, path=""):
    """Paths where ``got`` differs from ``expected`` (numbers to 1e-4; only expected keys)."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [path]
        return [m for k, v in expected.items() for m in subset_mismatches(v, got.get(k, "<absent>"), f"{path}.{k}")]
    if isinstance(expected, list) and expected and isinstance(expected[0], float | int) and not isinstance(expected[0], bool):
        if not isinstance(got, list) or len(got) != len(expected):
            return [path]
        return [m for i, (e, g) in enumerate(zip(expected, got)) for m in subset_mismatches(e, g, f"{path}[{i}]")]
    if isinstance(expected, float) and isinstance(got, int | float) and not isinstance(got, bool):
        return [] if abs(expected - got) <= 1e-4 else [path]
    return [] if expected == got else [path]


def conversation_mismatches(expected_rows, got_rows):
    return [f"{e['conversation_id']}.{k}: expected {e[k]!r}, got {g.get(k)!r}"
            for e, g in zip(expected_rows, got_rows, strict=True) for k in FIELDS if e[k] != g.get(k)]


def reference_results(scorer, policy, conversations, mode):
    return [scorer(c, policy, mode=mode) for c in conversations]


def summary_of(rows, mode):
    frame = pd.DataFrame(rows)
    frame["u"] = pd.array(frame["u"], dtype="Int8")
    frame["o"] = pd.array(frame["o"], dtype="Int8")
    return summarise(frame, mode=mode).to_dict()


@pytest.mark.parametrize("name", SETS)
def test_reference_scorer_conforms(name):
    policy, conversations, expected, expected_summary = load_set(name)
    rows = reference_results(score_conversation, policy, conversations, SETS[name])
    assert conversation_mismatches(expected, rows) == []
    assert subset_mismatches(expected_summary, summary_of(rows, SETS[name])) == []


@pytest.mark.parametrize("name", SETS)
def test_vectorised_scorer_conforms(name):
    policy, conversations, expected, expected_summary = load_set(name)
    results = score_records(Records.from_conversations(conversations), policy, mode=SETS[name])
    rows = [json.loads(line) for line in conversation_lines(results)]
    assert conversation_mismatches(expected, rows) == []
    assert subset_mismatches(expected_summary, summarise(results, mode=SETS[name]).to_dict()) == []


@pytest.mark.parametrize("name", SETS)
def test_command_line_conforms(name, tmp_path):
    """``escalation score`` end to end: one output line per input conversation, in input order."""
    folder = HERE / name
    run = subprocess.run([sys.executable, "-m", "escalation", "score", str(folder / "records.jsonl"), "--policy",
                          str(folder / "policy.json"), "--mode", SETS[name], "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    _, _, expected, expected_summary = load_set(name)
    rows = [json.loads(line) for line in (tmp_path / "conversations.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == [e["conversation_id"] for e in expected]
    assert conversation_mismatches(expected, rows) == []
    assert subset_mismatches(expected_summary, json.loads((tmp_path / "summary.json").read_text())) == []


def run_mutant(scorer, post):
    """All mismatches of one faulty scorer over the record-mode sets."""
    found = []
    for name, mode in SETS.items():
        if mode != "record":
            continue
        policy, conversations, expected, expected_summary = load_set(name)
        rows = reference_results(scorer, policy, conversations, mode)
        if post is not None:
            rows = post(rows)
        found += [f"{name}/{m}" for m in conversation_mismatches(expected, rows)]
        found += [f"{name}/summary{m}" for m in subset_mismatches(expected_summary, summary_of(rows, mode))]
    return found


@pytest.mark.parametrize("mutant", MUTANTS)
def test_conformance_set_catches_mutant(mutant):
    scorer, post = MUTANTS[mutant]
    assert run_mutant(scorer, post), f"the conformance set does not catch mutant {mutant!r}"


def test_real_scorer_is_not_a_mutant():
    assert run_mutant(score_conversation, None) == []
