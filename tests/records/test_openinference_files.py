"""``--format openinference``: Arize Phoenix span exports read from a file (``tests/data/readers/phoenix/``, written
by a real Phoenix server and its client: ``tests/data/readers/make_phoenix_exports.py``).

Each file is checked against a count made here by walking its raw JSON without the reader (the TOOL spans of each
trace, their names and status; the root span's labels and status; the user messages of the LLM spans' inputs), and
against the truth of the scenarios the script ran; every shape of the same traces gives the same conversations.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, detect_format, read_conversations

READERS = Path(__file__).parents[1] / "data" / "readers"
PHOENIX = READERS / "phoenix"
FILES = ["rest.json", "spans.jsonl", "dataframe.jsonl", "dataframe.json"]
POLICY = ('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'
          'gated_tools = ["issue_refund"]\n')
#: (case, replica): the calls in order as (name, failed), the user turns, whether the run failed (the script's
#: SCENARIOS).
TRUTH = {
    ("c-charged-twice", 0): ([("transfer_to_human", False)], 1, False),
    ("c-charged-twice", 1): ([("get_order", False), ("issue_refund", False), ("transfer_to_human", False)], 1, False),
    ("c-late-parcel", 0): ([("get_order", False), ("issue_refund", False)], 1, False),
    ("c-late-parcel", 1): ([("get_order", False), ("transfer_to_human", True), ("issue_refund", False)], 2, False),
    ("c-lost-parcel", 0): ([("get_order", True)], 1, True),
}


def _raw(name: str) -> list[dict]:
    """The file's spans as its JSON holds them: the REST page's ``data``, a JSON list, or one a line."""
    text = (PHOENIX / name).read_text()
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines()]
    value = json.loads(text)
    return value["data"] if isinstance(value, dict) else value


def _plain(span: dict) -> dict:
    """What the count reads of a span of either shape: the REST span's fields, or the dataframe row's columns."""
    if "context" in span:
        attrs = span["attributes"]
        labels = {key: attrs[f"escalation.{key}"] for key in ("case_id", "label", "replica")
                  if f"escalation.{key}" in attrs}
        users = {key for key, value in attrs.items()
                 if key.startswith("llm.input_messages.") and key.endswith(".message.role") and value == "user"}
        return {"trace": span["context"]["trace_id"], "kind": span["span_kind"], "parent": span["parent_id"],
                "start": span["start_time"], "status": span["status_code"], "message": span["status_message"],
                "tool": attrs.get("tool.name"), "labels": labels, "users": len(users)}
    inputs = span.get("attributes.llm.input_messages") or []
    return {"trace": span["context.trace_id"], "kind": span["span_kind"], "parent": span["parent_id"],
            "start": span["start_time"], "status": span["status_code"], "message": span["status_message"],
            "tool": span.get("attributes.tool.name"), "labels": span.get("attributes.escalation") or {},
            "users": sum(message["message.role"] == "user" for message in inputs)}


def _count(name: str) -> dict[str, dict]:
    """Per trace with an LLM or TOOL span: its calls by name, the failed ones, the labels of its root, its root's
    error, and the user messages of its longest model input."""
    traces: dict[str, list] = {}
    for span in map(_plain, _raw(name)):
        traces.setdefault(span["trace"], []).append(span)
    out = {}
    for trace, spans in traces.items():
        if not any(s["kind"] in ("LLM", "TOOL") for s in spans):
            continue
        (root,) = [s for s in spans if s["parent"] is None]
        tools = [s for s in spans if s["kind"] == "TOOL"]
        out[trace] = {"calls": Counter(s["tool"] for s in tools),
                      "failed": Counter(s["tool"] for s in tools if s["status"] == "ERROR"),
                      "labels": root["labels"], "run_error": root["message"] if root["status"] == "ERROR" else None,
                      "users": max(s["users"] for s in spans), "calls in order": [
                          (s["tool"], s["status"] == "ERROR") for s in sorted(tools, key=lambda s: s["start"])]}
    return out


def _read(path: Path) -> dict[str, dict]:
    conversations, fmt = read_conversations(path)
    assert fmt == "openinference"
    return {c["conversation_id"]: c for c in conversations}


@pytest.mark.parametrize("name", FILES)
def test_counts_match_the_raw_file(name):
    assert detect_format(PHOENIX / name) == "openinference"
    counted, read = _count(name), _read(PHOENIX / name)
    assert list(read) == list(counted)  # one conversation a trace, in the order of their first span
    assert len(read) == 5  # the health check's trace is no conversation
    for trace, expected in counted.items():
        conv = read[trace]
        assert Counter(c["name"] for c in conv["tool_calls"]) == expected["calls"], trace
        assert Counter(c["name"] for c in conv["tool_calls"] if c.get("failed")) == expected["failed"], trace
        assert {key: conv[key] for key in expected["labels"]} == expected["labels"]
        assert conv["run_error"] == expected["run_error"]
        assert conv["assistant_turns"] == expected["users"]
        assert conv["metadata"]["otel"]["trace_id"] == trace


@pytest.mark.parametrize("name", FILES)
def test_the_scenarios_truth(name):
    """The calls in order, the turns and the failed run of each scenario that the generating script ran."""
    read = {(c["case_id"], c["replica"]): c for c in _read(PHOENIX / name).values()}
    assert set(read) == set(TRUTH)
    for key, (calls, turns, crashed) in TRUTH.items():
        conv = read[key]
        assert [(c["name"], c.get("failed", False)) for c in conv["tool_calls"]] == calls, key
        assert conv["assistant_turns"] == turns
        assert bool(conv["run_error"]) == crashed
    if name != "dataframe.jsonl":  # its times are milliseconds: tools run within one may tie
        for trace, counted in _count(name).items():
            assert counted["calls in order"] == [(c["name"], c.get("failed", False))
                                                 for c in _read(PHOENIX / name)[trace]["tool_calls"]]


def test_every_shape_gives_the_same_conversations():
    first = _read(PHOENIX / FILES[0])
    for name in FILES[1:]:
        assert _read(PHOENIX / name) == first, name


def _write_lines(path: Path, values) -> Path:
    path.write_text("".join(json.dumps(value) + "\n" for value in values))
    return path


def test_spans_anywhere_in_the_file_pages_and_lists(tmp_path):
    """The spans reversed, as a JSON list; the REST pages one a line; dataframe rows shuffled: the same."""
    spans = _raw("rest.json")
    expected = _read(PHOENIX / "rest.json")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(spans[::-1], indent=1))
    pages = _write_lines(tmp_path / "pages.jsonl", [{"data": spans[i:i + 7], "next_cursor": None}
                                                    for i in range(0, len(spans), 7)])
    rows = _raw("dataframe.jsonl")
    shuffled = _write_lines(tmp_path / "rows.jsonl", rows[1::2] + rows[::2])
    for path in (listed, pages, shuffled):
        read = _read(path)
        assert {key: read[key] for key in expected} == expected, path.name


def test_a_large_file_is_read_a_line_at_a_time(tmp_path):
    """Past the head that detection reads (4 MiB), the lines are parsed as they are read."""
    spans = _raw("spans.jsonl")
    path = tmp_path / "large.jsonl"
    with path.open("w") as out:
        for copy in range(90):  # each copy its own traces and replicas
            for span in spans:
                span = {**span, "context": {**span["context"], "trace_id": f"{copy:03d}{span['context']['trace_id']}"}}
                if "escalation.replica" in span["attributes"]:
                    span["attributes"] = {**span["attributes"], "escalation.replica": 2 * copy +
                                          span["attributes"]["escalation.replica"]}
                out.write(json.dumps(span) + "\n")
    assert path.stat().st_size > 4 << 20  # past the head that detection reads: the file is read a line at a time
    read = _read(path)
    assert len(read) == 90 * 5
    assert sum(len(c["tool_calls"]) for c in read.values()) == 90 * 10


def test_no_model_or_tool_span_is_refused_in_one_line(tmp_path):
    path = tmp_path / "health.json"
    path.write_text(json.dumps({"data": [s for s in _raw("rest.json") if s["span_kind"] == "CHAIN"]}))
    assert detect_format(path) == "openinference"
    with pytest.raises(InputError, match=r"holds 1 spans in 1 traces, and no model or tool call .*span kinds found: "
                                         r"CHAIN; span names found: health-check") as err:
        read_conversations(path)
    assert "\n" not in str(err.value)


def test_bad_spans_are_named_by_their_line(tmp_path):
    lines = _raw("spans.jsonl")
    lines[3]["context"]["span_id"] = ["not", "an", "id"]
    with pytest.raises(InputError, match=r"bad_id\.jsonl:4: field 'context\.span_id': must be a non-empty string"):
        read_conversations(_write_lines(tmp_path / "bad_id.jsonl", lines))
    mixed = _raw("spans.jsonl")[:2] + [{"conversation_id": "c1", "tool_calls": []}]
    with pytest.raises(InputError, match=r"mixed\.jsonl:3: expected a Phoenix span .*found keys conversation_id, "
                                         r"tool_calls"):
        read_conversations(_write_lines(tmp_path / "mixed.jsonl", mixed))


def test_other_formats_files_are_not_taken(tmp_path):
    """Detection leaves every other fixture of the readers to its own format (or to none)."""
    for path in sorted(READERS.rglob("*")):
        if PHOENIX in path.parents or path.suffix not in (".json", ".jsonl", ".eval"):
            continue
        try:
            assert detect_format(path) != "openinference", path
        except InputError:
            pass


def test_score_end_to_end(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(PHOENIX / "dataframe.jsonl"),
                           "--policy", str(policy), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(openinference)" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    # ESC: handoff hands off at once, refund-first refunds first: p_u 1/2. ACT: refund never hands off, and
    # failed-handoff's hand-off failed (no escalation): p_o 0/2. crash is run_error, not evaluated.
    assert (summary["under"]["errors"], summary["under"]["n"]) == (1, 2)
    assert (summary["over"]["errors"], summary["over"]["n"]) == (0, 2)
    assert summary["not_evaluated"]["reasons"] == {"run_error": 1}
