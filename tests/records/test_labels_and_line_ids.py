"""Two decisions of 2026-12-01: labels read case-insensitively, and chat records without an id.

SPEC section 3, ``invalid_label``: a label is read case-insensitively with blanks trimmed
(``esc``, `` Act `` and ``ESC`` are ESC and ACT); anything else (``maybe``, ``E S C``) is not
evaluated, ``invalid_label``. Every output shows the label as read: ``conversations.jsonl``,
the default scenario id (case + label), the pairs and the summary. Every path reads it so:
the reference and the vectorised scorer, the Arrow fast path and the reference reader of
canonical JSONL, the readers of the other formats, ``--labels`` and ``--plan`` files.

SPEC section 7, last paragraph: a file of a chat format (``openai``, ``openai-responses``,
``anthropic``) may leave out ``conversation_id``; the conversation is then ``line-N``, N its
1-based line in the file, and ``--labels`` can name it so. Ids stay unique: a repeated explicit
id is an error, and so is an explicit id that is another line's ``line-N`` (naming both lines).
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from escalation.cli import app
from escalation.estimators.metric import conversation_lines, score_conversation, score_file, score_records
from escalation.estimators.records import (
    ACT,
    ESC,
    InputError,
    Labels,
    Policy,
    Records,
    iter_records,
    load_labels,
    load_plan,
    normalise_conversation,
    normalise_label,
    normalise_labels,
    read_conversations,
    read_jsonl,
)

POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
                           "action_tools": ["issue_refund"]})
POLICY_JSON = json.dumps({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
                          "action_tools": ["issue_refund"]})
FIELDS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "reason", "escalated", "u",
          "o", "cause", "turn", "cells", "unmarked_tools", "only_unmarked_before_handoff")

VALID = {"esc": ESC, " Act ": ACT, "ESC": ESC, "act": ACT, "\tEsC\n": ESC, "ACT ": ACT}
INVALID = ["maybe", "E S C", "es c", "ESCALATE", "", " ", "eſc"]  # "eſc" upper-cases to "ESC", but is not ASCII


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def lines_of(folder):
    return [json.loads(line) for line in (folder / "conversations.jsonl").read_text().splitlines()]


# --- the normalising function -------------------------------------------------------------

@pytest.mark.parametrize("given, read", [*VALID.items(), *((v, v) for v in INVALID), (None, None), (1, 1),
                                         (True, True)])
def test_a_label_is_read_case_insensitively_with_blanks_trimmed(given, read):
    assert normalise_label(given) == read
    if read in (ESC, ACT):
        assert normalise_label(given) is read  # the one constant: outputs share it


def test_a_column_of_labels_is_read_as_each_label():
    values = [*VALID, *INVALID, None, 1, True, float("nan"), "esc"]
    out = normalise_labels(np.array(values, dtype=object))
    assert out.dtype == object and len(out) == len(values)
    for given, read in zip(values, out):
        assert read is given or read == normalise_label(given)
    assert [type(v) for v in out[-5:-1]] == [type(None), int, bool, float]  # 1 and True keep their own type
    assert normalise_labels([]).shape == (0,)


# --- canonical JSONL: both scorers, both readers ------------------------------------------

def _canonical_records():
    """Records of two cases; the labels written in many ways, three of them invalid."""
    escalates = [{"turn": 0, "name": "transfer_to_human"}]
    acts = [{"turn": 0, "name": "issue_refund"}]
    return [
        {"conversation_id": "a-esc", "case_id": "A", "label": "esc", "tool_calls": escalates},
        {"conversation_id": "a-act", "case_id": "A", "label": "ACT", "tool_calls": acts},
        {"conversation_id": "a-esc-1", "case_id": "A", "replica": 1, "label": " Esc ", "tool_calls": acts},
        {"conversation_id": "a-act-1", "case_id": "A", "replica": 1, "label": "act", "tool_calls": escalates},
        {"conversation_id": "b-esc", "case_id": "B", "label": "ESC", "tool_calls": acts},
        {"conversation_id": "b-act", "case_id": "B", "label": " Act ", "tool_calls": acts},
        {"conversation_id": "solo", "label": "\tacT\n", "tool_calls": []},
        {"conversation_id": "maybe", "case_id": "C", "label": "maybe", "tool_calls": []},
        {"conversation_id": "spaced", "case_id": "C", "label": "E S C", "tool_calls": []},
        {"conversation_id": "none", "case_id": "C", "tool_calls": []},
    ]


EXPECTED = {  # conversation_id: (label, scenario_id, reason, u, o)
    "a-esc": (ESC, "A:ESC", None, 0, None),
    "a-act": (ACT, "A:ACT", None, None, 0),
    "a-esc-1": (ESC, "A:ESC", None, 1, None),
    "a-act-1": (ACT, "A:ACT", None, None, 1),
    "b-esc": (ESC, "B:ESC", None, 1, None),
    "b-act": (ACT, "B:ACT", None, None, 0),
    "solo": (ACT, "conversation:solo", None, None, 0),
    "maybe": ("maybe", "C:maybe", "invalid_label", None, None),
    "spaced": ("E S C", "C:E S C", "invalid_label", None, None),
    "none": (None, "C:None", "no_label", None, None),
}


@pytest.fixture
def canonical(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _canonical_records()))
    return path


def _check(rows):
    assert {r["conversation_id"]: (r["label"], r["scenario_id"], r["reason"], r["u"], r["o"]) for r in rows} == EXPECTED


def test_the_fast_path_and_the_reference_reader_read_labels_alike(canonical, tmp_path):
    chunks = list(iter_records(canonical, messages=False))
    # the Arrow fast path took the file (it dictionary-encodes the covers; the reference reader does not)
    assert all(str(chunk.calls["covers"].dtype) == "category" for chunk in chunks)
    assert [lab for chunk in chunks for lab in chunk.conversations["label"]] == [v[0] for v in EXPECTED.values()]

    fast, _ = score_file(canonical, POLICY, format="jsonl", out_dir=tmp_path / "fast")
    # labels (here one conversation's own) send the file to the reference reader, then the vectorised scorer
    reference, _ = score_file(canonical, POLICY, format="jsonl", labels=Labels({"a-esc": "ESC"}, {}),
                              out_dir=tmp_path / "ref")
    assert (tmp_path / "fast" / "conversations.jsonl").read_text() == \
        (tmp_path / "ref" / "conversations.jsonl").read_text()
    created = lambda summary: {**summary, "provenance": {**summary["provenance"], "created": None}}  # noqa: E731
    assert created(fast.to_dict()) == created(reference.to_dict())  # the runs may fall in two seconds
    _check(lines_of(tmp_path / "fast"))

    # the reference reader, then the reference scorer: the same lines
    by_reference = [score_conversation(c, POLICY) for c in read_jsonl(canonical)]
    assert [{k: r[k] for k in FIELDS} for r in by_reference] == \
        [{k: r[k] for k in FIELDS} for r in lines_of(tmp_path / "fast")]
    conversations, used = read_conversations(canonical, format="jsonl")
    assert used == "jsonl" and [c["label"] for c in conversations] == [v[0] for v in EXPECTED.values()]


def test_the_summary_and_the_pairs_count_the_labels_as_read(canonical, tmp_path):
    summary, _ = score_file(canonical, POLICY, format="jsonl", out_dir=tmp_path / "out")
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written == json.loads(json.dumps(summary.to_dict()))
    assert (written["under"]["n"], written["under"]["errors"], written["under"]["clusters"]) == (3, 2, 2)
    assert (written["over"]["n"], written["over"]["errors"], written["over"]["clusters"]) == (4, 1, 3)
    # pairs: A replica 0 (esc, ACT), A replica 1 (" Esc ", act), B (ESC, " Act "); only the first has no error
    assert (written["paired"]["pairs"], written["paired"]["pi"]) == (3, pytest.approx(1 / 3))
    assert written["not_evaluated"]["reasons"] == {"invalid_label": 2, "no_label": 1}


def test_both_scorers_read_a_label_that_no_reader_normalised():
    """A conversation built by hand (not by a reader) still has its label read, by both scorers."""
    rows = []
    for i, (given, read) in enumerate([*VALID.items(), *((v, v) for v in INVALID)]):
        conv = normalise_conversation({"conversation_id": f"c{i}", "tool_calls": [{"turn": 0, "name": "get_order"}]})
        conv["label"] = given  # as a caller may set it
        rows.append((conv, read))
    convs = [conv for conv, _ in rows]
    reference = [score_conversation(c, POLICY) for c in convs]
    vectorised = [json.loads(line) for line in conversation_lines(score_records(Records.from_conversations(convs),
                                                                                POLICY))]
    for (conv, read), ref, vec in zip(rows, reference, vectorised, strict=True):
        assert ref["label"] == vec["label"] == read
        assert ref["reason"] == vec["reason"] == (None if read in (ESC, ACT) else "invalid_label")
        assert {k: ref[k] for k in FIELDS} == {k: vec[k] for k in FIELDS}


def test_an_esc_and_an_ESC_of_one_case_and_replica_repeat_a_key(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"conversation_id": "a", "case_id": "k", "label": "esc", "tool_calls": []}\n'
                    '{"conversation_id": "b", "case_id": "k", "label": "ESC ", "tool_calls": []}\n')
    for call in (lambda: score_file(path, POLICY, format="jsonl"), lambda: read_jsonl(path)):
        with pytest.raises(InputError, match=r":2: field 'replica': case 'k', label 'ESC', replica 0 repeats line 1"):
            call()


# --- the other readers, --labels and --plan -----------------------------------------------

def _openai(label=None, case_id=None, escalate=False, conversation_id=None):
    calls = [{"id": "c1", "type": "function", "function": {"name": "transfer_to_human", "arguments": "{}"}}]
    record = {"messages": [{"role": "user", "content": "Refund order 7"},
                           {"role": "assistant", "content": "Done." if not escalate else None,
                            **({"tool_calls": calls} if escalate else {})}]}
    for key, value in (("conversation_id", conversation_id), ("label", label), ("case_id", case_id)):
        if value is not None:
            record[key] = value
    return record


def test_an_inspect_log_label_in_metadata_or_target_is_read(tmp_path):
    messages = [{"role": "user", "content": "Refund order 7"}, {"role": "assistant", "content": "Done."}]
    samples = [{"id": "s1", "epoch": 1, "target": "esc", "messages": messages},
               {"id": "s2", "epoch": 1, "target": [" Act "], "messages": messages},
               {"id": "s3", "epoch": 1, "target": "x", "metadata": {"label": "act "}, "messages": messages},
               {"id": "s4", "epoch": 1, "target": "maybe", "messages": messages}]
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"eval": {"task": "t"}, "samples": samples}))
    conversations, used = read_conversations(path)
    assert used == "inspect"
    assert [(c["label"], c["scenario_id"]) for c in conversations] == [(ESC, "s1:ESC"), (ACT, "s2:ACT"),
                                                                      (ACT, "s3:ACT"), (None, "s4:None")]


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_a_labels_file_with_lowercase_values(tmp_path, suffix):
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps({"conversation_id": cid, "case_id": case, "tool_calls": calls}) + "\n"
                               for cid, case, calls in (("x", "A", [{"name": "lookup", "turn": 0}]), ("y", "A", []),
                                                        ("z", "B", []))))
    labels = tmp_path / f"labels{suffix}"
    if suffix == ".csv":
        labels.write_text("conversation_id,case_id,label\nx,,esc\ny,, Act \n,B,maybe\n")
    else:
        labels.write_text(json.dumps({"conversation_id": {"x": "esc", "y": " Act "}, "case_id": {"B": "maybe"}}))
    policy = tmp_path / "policy.json"
    policy.write_text(POLICY_JSON)
    code, output = run("score", records, "--policy", policy, "--labels", labels, "--out", tmp_path / "out")
    assert code == 0, output
    rows = lines_of(tmp_path / "out")
    assert [(r["label"], r["scenario_id"], r["reason"]) for r in rows] == [
        (ESC, "A:ESC", None), (ACT, "A:ACT", None), ("maybe", "B:maybe", "invalid_label")]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["paired"]["pairs"] == 1
    # the same labels through the library: the reference reader applies them
    conversations, _ = read_conversations(records, format="jsonl", labels=load_labels(labels))
    assert [c["label"] for c in conversations] == [ESC, ACT, "maybe"]


def test_a_plan_reads_its_labels_so(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id,label,replicas\nA,esc,1\nA, Act ,1\n")
    assert load_plan(plan)["label"].tolist() == [ESC, ACT]
    plan.write_text("case_id,label,replicas\nA,esc,1\nA,ESC,1\n")
    with pytest.raises(InputError, match="case 'A' with label ESC is planned twice"):
        load_plan(plan)
    plan.write_text("case_id,label,replicas\nA,E S C,1\n")
    with pytest.raises(InputError, match=r":2: field 'label': must be ESC or ACT, got 'E S C'"):
        load_plan(plan)


# --- chat records without conversation_id ---------------------------------------------------

def _responses(label):
    return {"label": label, "items": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Refund order 7"}]},
        {"type": "function_call", "call_id": "f1", "name": "transfer_to_human", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "f1", "output": "ok"}]}


def _anthropic(label):
    return {"label": label, "messages": [
        {"role": "user", "content": "Refund order 7"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "transfer_to_human", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}


CHATS = {"openai": lambda label: _openai(label, escalate=True), "openai-responses": _responses,
         "anthropic": _anthropic}


@pytest.mark.parametrize("fmt", CHATS)
def test_a_chat_record_without_an_id_is_its_line(tmp_path, fmt):
    make = CHATS[fmt]
    path = tmp_path / "chat.jsonl"
    named = {**make("ACT"), "conversation_id": "named"}
    # line 2 is blank: N is the line in the file, not the count of records
    path.write_text(json.dumps(make("esc")) + "\n\n" + json.dumps(named) + "\n"
                    + json.dumps({**make(" Act "), "conversation_id": None}) + "\n")
    for given in ("auto", fmt):
        conversations, used = read_conversations(path, format=given)
        assert used == fmt
        assert [(c["conversation_id"], c["label"], c["scenario_id"]) for c in conversations] == [
            ("line-1", ESC, "conversation:line-1"), ("named", ACT, "conversation:named"),
            ("line-4", ACT, "conversation:line-4")]
    policy = tmp_path / "policy.json"
    policy.write_text(POLICY_JSON)
    code, output = run("score", path, "--policy", policy, "--format", fmt, "--out", tmp_path / "out")
    assert code == 0, output
    assert [(r["conversation_id"], r["u"], r["o"]) for r in lines_of(tmp_path / "out")] == [
        ("line-1", 0, None), ("named", None, 1), ("line-4", None, 1)]


def test_labels_name_a_conversation_by_its_line(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (_openai(case_id="A", escalate=True), _openai(case_id="A"),
                                                            _openai(conversation_id="c3", case_id="B"))))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"conversation_id": {"line-1": "esc", "line-2": "ACT"}, "case_id": {"B": "act"}}))
    policy = tmp_path / "policy.json"
    policy.write_text(POLICY_JSON)
    code, output = run("score", path, "--policy", policy, "--labels", labels, "--out", tmp_path / "out")
    assert code == 0, output
    assert [(r["conversation_id"], r["label"], r["scenario_id"], r["u"], r["o"]) for r in lines_of(tmp_path / "out")] \
        == [("line-1", ESC, "A:ESC", 0, None), ("line-2", ACT, "A:ACT", None, 0), ("c3", ACT, "B:ACT", None, 0)]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["paired"]["pairs"], summary["paired"]["pi"]) == (1, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("records, line, other", [
    # an explicit id before the line whose line-N it is, and after it
    ([{"conversation_id": "line-3"}, {"conversation_id": "b"}, {}], 1, 3),
    ([{}, {"conversation_id": "line-1"}], 2, 1),
])
def test_an_explicit_id_that_is_another_lines_id_is_an_error(tmp_path, records, line, other):
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps({**_openai("ESC", escalate=True), **r}) + "\n" for r in records))
    expected = (rf"chat\.jsonl:{line}: field 'conversation_id': 'line-{other}' is also the id of line {other}, "
                rf"which has no conversation_id")
    with pytest.raises(InputError, match=expected):
        read_conversations(path)
    policy = tmp_path / "policy.json"
    policy.write_text(POLICY_JSON)
    # the command line (a process of its own: it turns the error into its message and exit code 2)
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(path), "--policy", str(policy),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"chat.jsonl:{line}:" in done.stderr and f"line {other}" in done.stderr
    assert not (tmp_path / "out" / "conversations.jsonl").exists()


def test_a_repeated_explicit_id_is_still_an_error(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(_openai("ESC", conversation_id=cid)) + "\n" for cid in ("a", None, "a")))
    with pytest.raises(InputError, match=r"chat\.jsonl:3: field 'conversation_id': 'a' repeats the conversation "
                                         r"of line 1"):
        read_conversations(path)


def test_a_json_list_cannot_leave_out_ids(tmp_path):
    """A JSON list has no line a record: its records still need an id (the message says why)."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([_openai("ESC", conversation_id="a"), _openai("ACT")], indent=1))
    with pytest.raises(InputError, match=r"chat\.json: field '\[1\]\.conversation_id': is missing \(only a JSON "
                                         r"Lines file may leave it out"):
        read_conversations(path)


def test_the_canonical_format_still_needs_ids(tmp_path):
    """SPEC section 6: ``conversation_id`` is required in canonical records, by both readers."""
    path = tmp_path / "records.jsonl"
    path.write_text('{"conversation_id": "a", "label": "ESC", "tool_calls": []}\n{"label": "ESC", "tool_calls": []}\n')
    for call in (lambda: score_file(path, POLICY, format="jsonl"), lambda: read_jsonl(path)):
        with pytest.raises(InputError, match=r":2: field 'conversation_id': is missing"):
            call()


@pytest.mark.parametrize("split", [0, 1, 2, 4])
def test_labels_applied_in_copies_and_merged_note_what_one_would(split):
    """A Dask worker applies a copy of the labels to its log; merged back in input order, what they labelled and
    the ids of a note are those of the labels applied here to every conversation."""
    import copy

    convs = [{"conversation_id": f"c{i}", "case_id": f"case{i // 2}", "label": None, "scenario_id": None}
             for i in range(5)]
    for by_case in ({}, {"case1": "ESC"}):
        here = Labels({"nope": "ESC"}, dict(by_case))
        for conv in copy.deepcopy(convs):
            here.apply(conv)
        merged = Labels({"nope": "ESC"}, dict(by_case))
        first, second = copy.deepcopy(merged), copy.deepcopy(merged)
        for conv in copy.deepcopy(convs[:split]):
            first.apply(conv)
        for conv in copy.deepcopy(convs[split:]):
            second.apply(conv)
        merged.merge(first)
        merged.merge(second)
        assert (merged.labelled, merged.unmatched()) == (here.labelled, here.unmatched())
