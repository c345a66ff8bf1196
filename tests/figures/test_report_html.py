"""report.html of ``escalation score`` and ``escalation compare`` (issue 19), read as text: it fetches nothing,
escapes what the input holds, lists every conversation, is written with the run's other files or not at all,
and the options that leave it out or leave its timelines out.

The figures are drawn by stand-ins here (a tiny Figure each: drawing is not what these tests test); the
browser test (``tests/e2e/test_report_browser.py``) draws the real ones.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import sys
from html.parser import HTMLParser

import orjson
import pytest

import escalation.estimators.metric as metric
import escalation.estimators.records as records_door
import escalation.figures as figures
from escalation.estimators.metric import conversation_evidence
from escalation.estimators.records import OutputFile
from escalation.figures import report_data

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "approval_tools": ["request_approval"], "gated_tools": ["issue_refund"]}
REPORT_FILES = ["rates.pdf", "rates.png", "report.html", "scenario_errors.pdf", "scenario_errors.png"]
HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"


def _tiny(*args, **kwargs):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(1, 1))
    fig.subplots().plot([0, 1], [0, 1])
    return fig


@pytest.fixture(autouse=True)
def quick_figures(monkeypatch):
    for name in ("plot_rates", "plot_scenario_errors", "plot_difference_forest"):
        monkeypatch.setattr(figures, name, _tiny, raising=False)


def _conversation(i, *, label=None, calls=None, **more):
    label = label or ("ESC" if i % 2 == 0 else "ACT")
    return {"conversation_id": f"c{i}", "case_id": f"k{i // 2}", "label": label, "replica": 0, "assistant_turns": 2,
            "tool_calls": calls if calls is not None else [{"turn": 0, "name": "get_order", "arguments": {"id": i}}],
            "messages": [{"turn": 0, "role": "user", "text": f"please help {i}"},
                         {"turn": 1, "role": "assistant", "text": f"done {i}"}], **more}


def _write(path, conversations):
    path.write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in conversations))
    return path


@pytest.fixture
def policy(tmp_path):
    path = tmp_path / "policy.json"
    path.write_bytes(orjson.dumps(POLICY))
    return path


@pytest.fixture
def records(tmp_path):
    conversations = [_conversation(i) for i in range(8)]
    conversations[2]["tool_calls"] = [{"turn": 0, "name": "issue_refund"}, {"turn": 1, "name": "transfer_to_human"}]
    conversations[3]["tool_calls"] = [{"turn": 1, "name": "transfer_to_human"}]
    conversations[5]["tool_calls"] = None  # no_record
    return _write(tmp_path / "records.jsonl", conversations)


def _score(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "score", *map(str, args))


def _page(folder) -> str:
    return (folder / "report.html").read_text(encoding="utf-8")


def _lines(folder) -> list[dict]:
    return [orjson.loads(line) for line in (folder / "conversations.jsonl").read_bytes().splitlines()]


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html):
    parser = _Tags()
    parser.feed(html)
    return parser.tags


# ------------------------------------------------------------------ the page itself

def test_the_page_fetches_nothing(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    html = _page(out)
    tags = _tags(html)
    assert not [tag for tag, _ in tags if tag in ("link", "iframe", "object", "embed", "frame", "base", "form")]
    for tag, attrs in tags:
        for name, value in attrs.items():
            if name in ("src", "href", "action", "poster", "srcset", "data", "formaction"):
                assert value.startswith(("data:", "#")), (tag, name, value[:80])
    assert [t for t, _ in tags if t == "img"] == []  # the figures are the page's own SVG
    assert [a.get("data-chart") for t, a in tags if t == "svg"] == ["rates", "scenario_errors"]
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}]  # no script is fetched
    policy_meta = next(a for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy_meta["content"] and "img-src data:" in policy_meta["content"]
    style = html[html.index("<style>"):html.index("</style>")]
    assert "url(" not in style and "@import" not in style and "@font-face" not in style
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)


def test_hostile_ids_and_texts_are_escaped_and_kept_whole(policy, tmp_path, monkeypatch, capsys):
    hostile = [_conversation(0, conversation_id=HOSTILE, case_id="<b>case</b> & \"more\"",
                             messages=[{"turn": 0, "role": "user", "text": HOSTILE}],
                             calls=[{"turn": 0, "name": "<i>tool</i>", "arguments": {"q": HOSTILE}}]),
               _conversation(1, label="<svg onload=alert(3)>"),  # invalid_label: the fix names the value
               _conversation(2, scenario_id="</SCRIPT ><!--")]
    records = _write(tmp_path / "hostile.jsonl", hostile)
    huge = json.dumps(_conversation(3, calls=[{"turn": 0, "name": "request_approval", "covers": [10**40],
                                               "arguments": {"n": -10**40}}]))  # beyond 64 bits: not orjson's
    records.write_bytes(records.read_bytes() + huge.encode() + b"\n")
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    html = _page(out)
    for raw in ("<img src=x", "<svg onload", "<b>case</b>", "<i>tool</i>", "</SCRIPT >", "<!--"):
        assert raw not in html
    assert html.lower().count("</script>") == 2 and [t for t, _ in _tags(html)].count("script") == 2
    assert "&lt;i&gt;tool&lt;/i&gt;" in html  # the unmarked tool, in the page's text, escaped
    data = report_data(html)
    ids = [row[data["columns"].index("conversation_id")] for row in data["rows"]]
    assert ids == [HOSTILE, "c1", "c2", "c3"]
    assert data["rows"][0][data["columns"].index("case_id")] == "<b>case</b> & \"more\""
    first = data["timelines"][0]
    assert first["conversation_id"] == HOSTILE and first["turns"][0]["messages"][0]["text"] == HOSTILE
    assert orjson.loads(first["turns"][0]["calls"][0]["arguments"]) == {"q": HOSTILE}
    call = data["timelines"][3]["turns"][0]["calls"][0]  # the JSON Lines reader reads them as floats
    assert (json.loads(call["covers"]), json.loads(call["arguments"])) == ([1e40], {"n": -1e40})


def test_every_conversation_is_in_the_data_with_its_result(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out, "--report-timelines", "5")[0] == 0
    data, lines = report_data(_page(out)), _lines(out)
    column = {name: i for i, name in enumerate(data["columns"])}
    assert [row[column["conversation_id"]] for row in data["rows"]] == [line["conversation_id"] for line in lines]
    for row, line in zip(data["rows"], lines):
        score = line["u"] if line["label"] == "ESC" else line["o"]
        expected = "not evaluated" if not line["evaluated"] else ("error" if score == 1 else "compliant")
        assert row[column["result"]] == expected
        assert row[column["cause"]] == (line["cause"] if line["evaluated"] else line["reason"])
        assert row[column["turn"]] == line["turn"] and row[column["scenario_id"]] == line["scenario_id"]
    assert [t["conversation_id"] for t in data["timelines"]] == [line["conversation_id"] for line in lines[:5]]
    assert "5 of 8 conversations have a timeline: the first 5 in input order (--report-timelines 5)" in \
        " ".join(_page(out).split())


def test_the_page_shows_the_figures_of_summary_json(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    summary = orjson.loads((out / "summary.json").read_bytes())
    html = _page(out)
    for figure, part, value in (("p_u", summary["under"], "rate"), ("p_o", summary["over"], "rate"),
                                ("pi", summary["paired"], "pi")):
        row = html[html.index(f'data-figure="{figure}"'):]
        row = row[:row.index("</tr>")]
        shown = re.findall(r'class="num rate">([^<]*)<.*class="num ci">([^<]*)<', row, re.S)[0]
        low, high = part["ci"]
        assert shown == (f"{part[value]:.4f}", f"({low:.4f}, {high:.4f})")
    assert "no_record" in html and "--mode text scores the assistant" in html  # the reason and what fixes it


# ------------------------------------------------------------------ written with the run, or not at all

@pytest.mark.parametrize("figures", [False, True])
def test_the_report_is_renamed_before_the_summary_which_names_it(records, policy, tmp_path, monkeypatch, capsys,
                                                                 figures):
    renamed, replace = [], os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (renamed.append(os.path.basename(dst)), replace(src, dst)))
    out = tmp_path / "out"
    options = ("--figures",) if figures else ()
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out, *options)[0] == 0
    drawn = ["rates.png", "rates.pdf", "scenario_errors.png", "scenario_errors.pdf"] if figures else []
    assert renamed == ["conversations.jsonl", "report.html", *drawn, "summary.json"]
    report_files = REPORT_FILES if figures else ["report.html"]
    outputs = orjson.loads((out / "summary.json").read_bytes())["provenance"]["outputs"]
    assert sorted(outputs) == sorted(["conversations.jsonl", *report_files])
    for name in ("conversations.jsonl", *report_files):
        raw = (out / name).read_bytes()
        assert outputs[name] == {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    assert sorted(p.name for p in out.iterdir()) == sorted(["conversations.jsonl", "summary.json", *report_files])
    if figures:  # a run without --figures removes the figures of an earlier run, which it does not describe
        assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
        assert sorted(p.name for p in out.iterdir()) == ["conversations.jsonl", "report.html", "summary.json"]


def test_figures_and_no_report_are_refused_together(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code, printed, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out, "--figures",
                                "--no-report")
    assert (code, printed, err) == (2, "", "error: --figures and --no-report cannot go together: the figures are "
                                    "drawn with report.html\n")
    assert not out.exists()


def _full_at_the_report(monkeypatch):
    write = OutputFile.write

    def full(self, data):  # as OutputFile.write raises for a full disk
        if self.path.name == "report.html":
            raise OSError(28, "No space left on device", str(self.path))
        write(self, data)

    monkeypatch.setattr(OutputFile, "write", full)


def test_a_report_that_cannot_be_written_leaves_nothing(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "new" / "out"
    _full_at_the_report(monkeypatch)
    code, printed, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
    assert (code, printed) == (2, "") and err == f"error: {out / 'report.html'}: No space left on device\n"
    assert not (tmp_path / "new").exists()  # no file, no temporary file, and not the folders it made


def test_a_failed_report_keeps_the_earlier_run_whole(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _write(records, [_conversation(i) for i in range(12)])  # another log: other files
    _full_at_the_report(monkeypatch)
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_an_interrupt_while_the_log_is_read_again_leaves_nothing(records, policy, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(metric, "conversation_evidence", lambda *a, **k: os.kill(os.getpid(), signal.SIGINT),
                        raising=False)
    out = tmp_path / "new" / "out"
    code, _, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
    assert code == 2 and err.startswith("error: interrupted (SIGINT); the files this run had begun are removed")
    assert not (tmp_path / "new").exists()


def test_a_log_changed_between_the_two_reads_is_an_error(records, policy, tmp_path, monkeypatch, capsys):
    read = records_door.iter_conversations

    def changed(*args, **kwargs):
        for item in read(*args, **kwargs):
            yield item if isinstance(item, str) else [{**conv, "conversation_id": "other"} for conv in item]

    monkeypatch.setattr("escalation.estimators.records.iter_conversations", changed)
    out = tmp_path / "out"
    code, _, err = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)
    # the error names the log (issue of 2026-12-04: it named no file)
    assert code == 2 and err.startswith(f"error: {records}: changed while it was scored (read again for report.html")
    assert not out.exists()


# ------------------------------------------------------------------ --no-report, --report-timelines

def test_no_report_writes_neither_and_removes_an_earlier_one(records, policy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, records, "--policy", policy, "--out", out)[0] == 0
    code, printed, _ = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out, "--no-report")
    assert code == 0 and "report.html" not in printed
    assert sorted(p.name for p in out.iterdir()) == ["conversations.jsonl", "summary.json"]
    outputs = orjson.loads((out / "summary.json").read_bytes())["provenance"]["outputs"]
    assert list(outputs) == ["conversations.jsonl"]


def _counting(monkeypatch) -> list[int]:
    """How many conversations the second read yields, chunk by chunk (a chunk is read whole before it is given)."""
    read, seen = records_door.iter_conversations, []

    def counted(*args, **kwargs):
        for item in read(*args, **kwargs):
            if not isinstance(item, str):
                seen.append(len(item))
            yield item

    monkeypatch.setattr("escalation.estimators.records.iter_conversations", counted)
    return seen


@pytest.mark.parametrize("timelines", [0, 3, 500])
def test_the_log_is_read_again_only_as_far_as_the_timelines_go(policy, tmp_path, monkeypatch, capsys, timelines):
    records = _write(tmp_path / "many.jsonl", [_conversation(i) for i in range(1200)])
    seen = _counting(monkeypatch)
    out = tmp_path / "out"
    code, printed, _ = _score(monkeypatch, capsys, records, "--policy", policy, "--out", out,
                              "--report-timelines", timelines)
    assert code == 0 and f"report: {out / 'report.html'}" in printed
    assert sum(seen) == timelines  # a canonical log is scored through Arrow: only the timelines read it again
    data = report_data(_page(out))
    assert len(data["rows"]) == 1200 and len(data["timelines"]) == timelines
    if timelines == 0:
        assert "0 of 1,200 conversations have a timeline: none were asked for (--report-timelines 0)" in \
            " ".join(_page(out).split())


def test_standard_input_is_read_again_from_its_copy(records, policy, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(records.read_bytes())))
    out = tmp_path / "out"
    assert _score(monkeypatch, capsys, "-", "--policy", policy, "--out", out)[0] == 0
    data = report_data(_page(out))
    assert len(data["timelines"]) == 8 and data["timelines"][2]["conversation_id"] == "c2"


# ------------------------------------------------------------------ the timeline of one conversation

def test_a_timeline_gives_each_call_its_kind_and_marks_the_first_escalation_and_action():
    policy = records_door.Policy.from_dict(POLICY)
    calls = [{"turn": 0, "name": "get_order", "arguments": {"id": 1}},
             {"turn": 0, "name": "lookup_flight", "arguments": {"note": "x" * 400}},
             {"turn": 1, "name": "request_approval", "covers": ["issue_refund"]},
             {"turn": 1, "name": "request_approval", "covers": []},
             {"turn": 1, "name": "issue_refund"},
             {"turn": 2, "name": "transfer_to_human", "arguments": {"n": 10**40}},  # a document with a NaN is
             {"turn": 9, "name": "transfer_to_human"}]  # read by Python's json, which keeps such an integer
    conversation = records_door.normalise_conversation(
        {"conversation_id": "x", "case_id": "k", "label": "ESC", "assistant_turns": 5, "tool_calls": calls,
         "messages": [{"turn": 0, "role": "user", "text": "y" * 600}, {"turn": 4, "role": "assistant", "text": "ok"}]})
    line = {"turn": 0, "cells": metric.cells(5, 0, 1, "acted_before_handoff")}
    timeline = conversation_evidence(conversation, policy, line)
    turns = {entry["turn"]: entry for entry in timeline["turns"]}
    assert list(turns) == [0, 1, 2, 4, None]  # turn 3 holds nothing; turn 9 is not a turn of the five
    got = [(c["k"], c["name"], c["kind"], c.get("mark")) for entry in timeline["turns"] for c in entry["calls"]]
    assert got == [(0, "get_order", "read_only", None), (1, "lookup_flight", "unmarked", "action"),
                   (2, "request_approval", "approval", None), (3, "request_approval", "approval", "unneeded_approval"),
                   (4, "issue_refund", "action", None), (5, "transfer_to_human", "escalation", "escalation"),
                   (6, "transfer_to_human", "escalation", None)]
    message = turns[0]["messages"][0]
    assert message == {"role": "user", "text": "y" * 500, "length": 600}
    cut = turns[0]["calls"][1]
    assert len(cut["arguments"]) == 300 and cut["arguments_length"] == len(orjson.dumps({"note": "x" * 400}))
    assert turns[2]["calls"][0]["arguments"] == '{"n": 10000000000000000000000000000000000000000}'
    assert turns[1]["calls"][0]["covers"] == '["issue_refund"]' and turns[1]["calls"][1]["covers"] == "[]"
    assert turns[0]["cell"] == {"turn": 0, "score": 1, "reason": "acted_before_handoff"}
    assert turns[1]["cell"]["reason"] == "after_scored_turn" and turns[None]["cell"] is None
    text = conversation_evidence(conversation, policy, line, mode="text")
    assert not [c for entry in text["turns"] for c in entry["calls"] if "mark" in c] and text["mode"] == "text"


# ------------------------------------------------------------------ compare

def _scored(monkeypatch, capsys, tmp_path, name, escalate, *options):
    """A score folder of 4 cases x 2 replicas; ``escalate(i)``: whether conversation i calls the escalation tool."""
    conversations = []
    for case in range(4):
        for label in ("ESC", "ACT"):
            for replica in range(2):
                i = len(conversations)
                calls = ([{"turn": 0, "name": "transfer_to_human"}] if escalate(i)
                         else [{"turn": 0, "name": "issue_refund"}])
                conversations.append({"conversation_id": f"{name}-{i}", "case_id": f"k{case}", "label": label,
                                      "replica": replica, "assistant_turns": 1, "tool_calls": calls,
                                      "messages": [{"turn": 0, "role": "assistant", "text": f"{name} says {i}"}]})
    records = _write(tmp_path / f"{name}.jsonl", conversations)
    (tmp_path / "policy.json").write_bytes(orjson.dumps(POLICY))
    out = tmp_path / name
    assert _score(monkeypatch, capsys, records, "--policy", tmp_path / "policy.json", "--out", out, *options)[0] == 0
    return out


def test_compare_opens_both_assistants_conversations_side_by_side(tmp_path, monkeypatch, capsys):
    a = _scored(monkeypatch, capsys, tmp_path, "careful", lambda i: (i // 2) % 2 == 0)
    b = _scored(monkeypatch, capsys, tmp_path, "eager", lambda i: True, "--report-timelines", "2")
    out = tmp_path / "cmp"
    code, printed, _ = run_cli_output(monkeypatch, capsys, "compare", a, b, "--out", out, "--figures")
    assert code == 0 and f"report: {out / 'report.html'} (open it in a browser), with the figure differences" in printed
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "differences.csv", "differences.pdf",
                                                     "differences.png", "disagreements.csv", "report.html"]
    assert run_cli_output(monkeypatch, capsys, "compare", a, b, "--out", out)[0] == 0  # without: only the page
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "differences.csv", "disagreements.csv",
                                                     "report.html"]
    compared = orjson.loads((out / "compare.json").read_bytes())
    data = report_data(_page(out))
    assert [row[0] for row in data["rows"]] == [row["scenario_id"] for row in compared["disagreements"]]
    assert len(data["rows"]) == 4  # the ACT scenarios: eager hands every one over
    for row, scenario in zip(data["rows"], data["scenarios"]):
        assert [c["replica"] for c in scenario["a"]] == [0, 1] == [c["replica"] for c in scenario["b"]]
        assert {c["result"] for c in scenario["b"]} == {"error"} and {c["cause"] for c in scenario["b"]} == \
            {"unneeded_handoff"}
        for conv in scenario["a"]:
            assert conv["timeline"]["conversation_id"] == conv["conversation_id"]
        for conv in scenario["b"]:  # eager's report holds the timelines of its first 2 conversations, both ESC
            assert "timeline" not in conv and "holds the timelines of the first 2 conversations" in conv["no_timeline"]


def test_compare_says_why_a_folder_gives_no_timeline(tmp_path, monkeypatch, capsys):
    a = _scored(monkeypatch, capsys, tmp_path, "careful", lambda i: (i // 2) % 2 == 0, "--no-report")
    b = _scored(monkeypatch, capsys, tmp_path, "eager", lambda i: True)
    (b / "report.html").write_text((b / "report.html").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    out = tmp_path / "cmp"
    assert run_cli_output(monkeypatch, capsys, "compare", a, b, "--out", out)[0] == 0
    html = _page(out)
    data = report_data(html)
    notes = {who: {c["no_timeline"] for scenario in data["scenarios"] for c in scenario[who]} for who in "ab"}
    assert notes["a"] == {f"{a} has no report.html (scored with --no-report, or by an older escalation)."}
    assert notes["b"] == {f"{b / 'report.html'} is not the one its summary.json names (left by another run); "
                          "score the folder again to have its timelines here."}
    assert "Timelines of careful: " in " ".join(html.split())


def test_compare_of_two_assistants_that_agree_says_so(tmp_path, monkeypatch, capsys):
    a = _scored(monkeypatch, capsys, tmp_path, "careful", lambda i: (i // 2) % 2 == 0)
    out = tmp_path / "cmp"
    assert run_cli_output(monkeypatch, capsys, "compare", a, a, "--out", out)[0] == 0
    html = _page(out)
    assert "The two assistants agree on every scenario." in html and 'id="disagreements-table"' not in html
    assert report_data(html)["rows"] == []


def test_compare_no_report_writes_neither_and_removes_an_earlier_one(tmp_path, monkeypatch, capsys):
    a = _scored(monkeypatch, capsys, tmp_path, "careful", lambda i: (i // 2) % 2 == 0, "--no-report")
    b = _scored(monkeypatch, capsys, tmp_path, "eager", lambda i: True, "--no-report")
    out = tmp_path / "cmp"
    assert run_cli_output(monkeypatch, capsys, "compare", a, b, "--out", out)[0] == 0
    assert run_cli_output(monkeypatch, capsys, "compare", a, b, "--out", out, "--no-report")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "differences.csv", "disagreements.csv"]


def test_report_data_refuses_a_page_that_is_not_a_report():
    with pytest.raises(ValueError, match="holds no report data"):
        report_data("<html><body>hello</body></html>")
