"""Careless and hostile input (issue 17): errors that name the file's own place, and the turn limit.

Each test is a reproduction of the issue, made small: the error names the line (SPEC section 6)
and the field the log itself holds (``trial``, ``epoch``, ``id``), a compressed or BOM-marked file
is treated as a person means it, an empty log is one with no conversation, labels files that
conflict or label nothing are said so, and ``assistant_turns`` is bounded (SPEC section 3).
"""
from __future__ import annotations

import gzip
import json
import time
import tracemalloc

import orjson
import pytest

from escalation.estimators.metric import score_conversation, score_file, score_records
from escalation.estimators.records import (
    InputError,
    Policy,
    Records,
    iter_records,
    load_labels,
    load_plan,
    load_policy,
    normalise_conversation,
    read_conversations,
    read_jsonl,
)

from .._helpers import run_cli_output

POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]})
BOM = b"\xef\xbb\xbf"


def _line(**fields) -> str:
    return json.dumps({"conversation_id": "a", "label": "ESC", "tool_calls": [], **fields})


def _score(monkeypatch, capsys, tmp_path, log, *options):
    """``escalation score LOG`` with the policy, into ``tmp_path/out``: (exit code, stderr, out folder)."""
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY.to_dict()))
    out = tmp_path / "out"
    code, _, err = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", out, "--json",
                                  *options)
    return code, err, out


# --- the turn limit of SPEC section 3 -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("turns", ["10000000", "1e8", str(2**62 - 1), "100001"])
def test_too_many_assistant_turns_is_an_invalid_record_and_builds_no_cell(monkeypatch, capsys, tmp_path, turns):
    log = tmp_path / "log.jsonl"
    log.write_text(f'{{"conversation_id": "a", "label": "ESC", "assistant_turns": {turns}, "tool_calls": []}}\n')
    tracemalloc.start()
    started = time.perf_counter()
    try:
        code, err, out = _score(monkeypatch, capsys, tmp_path, log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 30 and peak < 100 << 20  # an 88-byte line once took 3 GB
    assert code == 3, err
    assert "assistant_turns not an integer in 1..100000 1" in err
    line = orjson.loads((out / "conversations.jsonl").read_bytes())
    assert (line["reason"], line["assistant_turns"], line["cells"]) == ("invalid_record", None, [])
    assert (out / "conversations.jsonl").stat().st_size < 1000


def test_the_limit_holds_on_every_path(tmp_path):
    rows = [_line(conversation_id="allowed", assistant_turns=100_000),
            _line(conversation_id="above", assistant_turns=100_001),
            _line(conversation_id="derived", tool_calls=[{"turn": 10**7, "name": "get_order"}])]  # T = 1 + 10**7
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(rows) + "\n")
    conversations = read_jsonl(log)
    assert [c["assistant_turns"] for c in conversations] == [100_000, None, None]
    fast = next(iter(iter_records(log, messages=False)))
    assert fast.conversations["assistant_turns"].tolist() == [100_000, -1, -1]
    for records in (fast, Records.from_conversations(conversations)):
        assert score_records(records, POLICY)["reason"].tolist() == [None, "invalid_record", "invalid_record"]
    assert [score_conversation(c, POLICY)["reason"] for c in conversations] == [None, "invalid_record",
                                                                              "invalid_record"]
    assert len(score_conversation(conversations[0], POLICY)["cells"]) == 100_000
    # a hand-made conversation is held to the limit too, in both modes
    huge = {**normalise_conversation(json.loads(rows[0])), "assistant_turns": 10**7,
            "messages": [{"turn": 0, "role": "assistant", "text": "I pass you to a person."}]}
    assert score_conversation(huge, POLICY)["reason"] == "invalid_record"
    assert score_conversation(huge, POLICY, mode="text")["reason"] == "invalid_record"
    assert score_records(Records.from_conversations([huge]), POLICY, mode="text")["reason"].tolist() == [
        "invalid_record"]


# --- the line and the field the log holds ----------------------------------------------------------

def test_a_null_line_is_named_by_its_line_with_auto_detection(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(_line() + "\nnull\n")
    for format in ("auto", "jsonl"):
        with pytest.raises(InputError) as caught:
            score_file(log, POLICY, format=format)
        assert str(caught.value) == f"{log}:2: a record must be a JSON object, got NoneType"
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"conversation_id": "a", "messages": [{"role": "user", "content": "hi"}]})
                    + "\n[]\n")
    with pytest.raises(InputError, match=r"chat\.jsonl:2: a record must be a JSON object, got list$"):
        read_conversations(chat)


TAU_BENCH = [{"task_id": 0, "trial": -1, "info": {"task": {"actions": [{"name": "transfer_to_human"}]}},
              "traj": [{"role": "user", "content": "hi"}]}]
TAU2_BENCH = {"info": {}, "tasks": [{"id": "3"}],
              "simulations": [{"id": "s1", "task_id": "3", "trial": "x",
                               "messages": [{"role": "user", "content": "hi"}]}]}


def _inspect_log(**sample):
    return {"eval": {"task": "t"}, "samples": [{"id": 1, "epoch": 1, "messages": [{"role": "user", "content": "hi"}],
                                                **sample}]}


@pytest.mark.parametrize("data, field", [
    (TAU_BENCH, "[0].trial"),
    (TAU2_BENCH, "simulations[0].trial"),
    (_inspect_log(epoch=0), "samples[0].epoch"),
    (_inspect_log(id=1.5), "samples[0].id"),
    (_inspect_log(metadata={"case_id": [1]}), "samples[0].metadata.case_id"),
])
def test_an_error_names_the_field_of_the_log_not_the_canonical_one(tmp_path, data, field):
    log = tmp_path / "log.json"
    log.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_conversations(log, policy=POLICY)
    assert caught.value.field == field and f"field '{field}': " in str(caught.value)


def test_a_repeat_in_a_json_document_names_json_paths_not_lines(tmp_path):
    chat = {"conversation_id": "a", "messages": [{"role": "user", "content": "hi"}]}
    run = {"task_id": 0, "trial": 0, "traj": []}
    sample = {"id": 1, "epoch": 1, "messages": [{"role": "user", "content": "hi"}]}
    for data, message in (([chat, chat], "field '[1].conversation_id': 'a' repeats the conversation at [0]"),
                          ([run, run], "field '[1].conversation_id': '0:0' repeats the conversation at [0]"),
                          ({"eval": {"task": "t"}, "samples": [sample, {**sample, "id": 2}, sample]},
                           "field 'samples[2].conversation_id': '1:1' repeats the conversation at samples[0]")):
        log = tmp_path / "log.json"
        log.write_text(json.dumps(data))
        with pytest.raises(InputError) as caught:
            read_conversations(log, policy=POLICY)
        assert str(caught.value) == f"{log}: {message}"
    folder = tmp_path / "results"
    (folder / "simulations").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"info": {}, "tasks": [{"id": "3"}]}))
    for name in ("a.json", "b.json"):
        (folder / "simulations" / name).write_text(json.dumps({"task_id": "3", "trial": 0, "messages": []}))
    with pytest.raises(InputError) as caught:
        read_conversations(folder, policy=POLICY)
    assert str(caught.value) == (f"{folder}: field 'simulations/b.json.conversation_id': '3:0' repeats the "
                                 "conversation at simulations/a.json")


def test_an_epoch_is_refused_with_the_range_inspect_counts_in(tmp_path):
    log = tmp_path / "log.json"
    log.write_text(json.dumps(_inspect_log(epoch=0)))
    with pytest.raises(InputError) as caught:
        read_conversations(log)
    assert str(caught.value) == (f"{log}: field 'samples[0].epoch': must be an integer >= 1 (inspect_ai counts "
                                 "epochs from 1), got 0")


# --- compressed files, byte order marks ---------------------------------------------------------

def test_a_gzip_file_is_named_as_one(monkeypatch, capsys, tmp_path):
    log = tmp_path / "log.jsonl.gz"
    log.write_bytes(gzip.compress((_line() + "\n").encode()))
    for options in ((), ("--format", "jsonl"), ("--format", "openai")):
        code, err, out = _score(monkeypatch, capsys, tmp_path, log, *options)
        assert (code, err) == (2, f"error: {log}: is a gzip file: decompress it first (gunzip)\n")
        assert not (out / "conversations.jsonl").exists()
    for name, load in (("labels.csv.gz", load_labels), ("policy.json.gz", load_policy)):
        (tmp_path / name).write_bytes(gzip.compress(b"conversation_id,label\n"))
        with pytest.raises(InputError, match=r"\.gz: is a gzip file: decompress it first \(gunzip\)$"):
            load(tmp_path / name)


def _same_result(tmp_path, name, text: bytes, reader):
    """``reader(path)`` of the file with and without a byte order mark: equal."""
    plain, marked = tmp_path / f"plain-{name}", tmp_path / f"marked-{name}"
    plain.write_bytes(text)
    marked.write_bytes(BOM + text)
    assert reader(marked) == reader(plain)


def test_a_byte_order_mark_is_read_past_everywhere(tmp_path):
    log = (_line(conversation_id="a") + "\n" + _line(conversation_id="b") + "\n").encode()
    arrow = lambda path: [r.conversations.to_dict("list") for r in iter_records(path, messages=False)]  # noqa: E731
    _same_result(tmp_path, "log.jsonl", log, arrow)
    _same_result(tmp_path, "log.jsonl", log, read_jsonl)
    _same_result(tmp_path, "log.jsonl", log, lambda path: read_conversations(path)[0])
    _same_result(tmp_path, "labels.csv", b"conversation_id,label\na,ACT\n", lambda p: load_labels(p).by_conversation)
    _same_result(tmp_path, "labels.json", b'[{"case_id": "k", "label": "ACT"}]', lambda p: load_labels(p).by_case)
    _same_result(tmp_path, "policy.toml", b'escalation_tools = ["transfer_to_human"]\n',
                 lambda p: load_policy(p).escalation_tools)
    _same_result(tmp_path, "policy.json", b'{"escalation_tools": ["transfer_to_human"]}',
                 lambda p: load_policy(p).escalation_tools)
    _same_result(tmp_path, "plan.csv", b"case_id,label,replicas\nk,ESC,2\n", lambda p: load_plan(p).to_dict("list"))


# --- empty logs ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n  \n", "[]", " [ ]\n"])
def test_an_empty_log_holds_no_conversation(monkeypatch, capsys, tmp_path, text):
    log = tmp_path / "log.json"
    log.write_text(text)
    code, err, out = _score(monkeypatch, capsys, tmp_path, log)
    assert code == 3 and "the log holds no conversation" in err
    assert (out / "conversations.jsonl").read_bytes() == b""


# --- labels files -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, text, message", [
    ("labels.csv", "conversation_id,label\na,ESC\nb,ACT\n\na,act\n",
     ":5: field 'label': conversation_id 'a' is labelled 'act' here and 'ESC' at line 2; an id has one label"),
    ("labels.json", '[{"case_id": "k", "label": "ESC"}, {"case_id": "k", "label": "ACT"}]',
     ": field '[1].label': case_id 'k' is labelled 'ACT' here and 'ESC' at [0]; an id has one label"),
    ("labels.json", '{"conversation_id": {"a": "ESC", "a": "ACT"}}',
     ": 'a' is given twice in one object, with 'ESC' and 'ACT'"),
])
def test_a_labels_file_that_labels_an_id_twice_differently_is_refused(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_labels(path)
    assert str(caught.value) == f"{path}{message}"


def test_the_same_label_twice_is_one_label(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("conversation_id,label\na,ESC\na,esc\n")
    assert load_labels(path).by_conversation == {"a": "esc"}


def test_a_labels_file_nested_deeply_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    labels = tmp_path / "labels.json"
    labels.write_text("[" * 100_000 + "]" * 100_000)  # deeper than any stack: 1,000 parses where the stack is short
    log = tmp_path / "log.jsonl"
    log.write_text(_line() + "\n")
    code, err, _ = _score(monkeypatch, capsys, tmp_path, log, "--labels", labels)
    assert (code, err) == (2, f"error: {labels}: not valid JSON: nested too deeply (a labels file is a list of "
                              "objects, or an object of ids)\n")


def test_a_labels_file_that_labels_nothing_is_a_warning(monkeypatch, capsys, tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,label\nrun-1,ESC\nrun-2,ACT\n")
    log = tmp_path / "log.jsonl"
    log.write_text('{"conversation_id": "c1", "case_id": "k1", "tool_calls": []}\n'
                   '{"conversation_id": "c2", "tool_calls": []}\n')
    code, err, out = _score(monkeypatch, capsys, tmp_path, log, "--labels", labels)
    note = ("the labels file labels none of the 2 conversations: its keys look like conversation_id 'run-1', 'run-2', "
            "the log's ids like conversation_id 'c1', 'c2' and case_id 'k1' (a label is matched by conversation_id, "
            "else by case_id)")
    assert code == 3
    assert json.loads((out / "summary.json").read_text())["warnings"][0] == note
    assert f"warning: {note}\n" in err
    labels.write_text("conversation_id,label\nc2,ESC\n")  # one labelled: no such note
    code, err, out = _score(monkeypatch, capsys, tmp_path, log, "--labels", labels)
    assert "labels none" not in err and not any("labels none" in w for w in
                                                json.loads((out / "summary.json").read_text())["warnings"])


# --- a JSON document too deep for the standard library ---------------------------------------------

def test_a_deep_document_with_nan_is_a_one_line_error(tmp_path):
    log = tmp_path / "log.json"
    log.write_text("[" * 100_000 + "NaN" + "]" * 100_000)  # NaN: parsed by the standard library's json
    with pytest.raises(InputError, match=r"log\.json:1: not valid JSON"):
        read_conversations(log)
