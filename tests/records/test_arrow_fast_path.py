"""The Arrow fast path of canonical JSONL gives exactly what the reference reader gives."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import score_file
from escalation.estimators.records import InputError, Policy, _arrow, iter_records, read_jsonl
from escalation.estimators.records._arrow import FastPathUnavailable

POLICY = Policy.from_dict({"escalation_tools": ["esc"], "read_only_tools": ["ro"], "action_tools": ["act"],
                           "approval_tools": ["app"], "gated_tools": ["act"]})

value = st.one_of(st.none(), st.integers(-2, 4), st.sampled_from(["", "esc", "ro", "act", "app", "x", "ESC", "ACT"]),
                  st.booleans(), st.just(1.5), st.just(2**70), st.lists(st.sampled_from(["act", "ro"]), max_size=2))
decision = st.one_of(st.none(), st.sampled_from(["granted", "denied", " Denied ", "maybe", ""]), st.integers(0, 1),
                     st.booleans())
approver = st.one_of(st.none(), st.sampled_from(["sup", "bot", ""]), st.integers(0, 2))
approval = st.one_of(st.none(), st.just("granted"), st.fixed_dictionaries(
    {}, optional={"decision": decision, "approver": approver}))
call = st.dictionaries(st.sampled_from(["turn", "name", "covers", "arguments"]), value, max_size=4) | \
    st.fixed_dictionaries({"turn": st.integers(0, 2), "name": st.sampled_from(["act", "app", "esc"])},
                          optional={"covers": st.lists(st.sampled_from(["act", "ro"]), max_size=2),
                                    "decision": decision, "approver": approver, "approval": approval})
record = st.fixed_dictionaries({}, optional={
    "case_id": st.one_of(st.none(), st.sampled_from(["k1", "k2"]), st.integers(0, 2)),
    "label": st.one_of(st.none(), st.sampled_from(["ESC", "ACT", "esc", " Act ", "E S C"]), st.integers(0, 1)),
    "replica": st.one_of(st.none(), st.integers(-1, 2), st.just("0")),
    "scenario_id": st.one_of(st.none(), st.just("s1")),
    "language": st.one_of(st.none(), st.sampled_from(["", "es"])),
    "assistant_turns": st.one_of(st.none(), st.integers(-1, 5), st.just(2.0)),
    "tool_calls": st.one_of(st.none(), st.lists(call, max_size=5), st.just("x"), st.lists(st.integers(), max_size=1)),
    "messages": st.one_of(st.lists(st.fixed_dictionaries({"turn": st.integers(-1, 5)}), max_size=2),
                          st.lists(st.fixed_dictionaries({"role": st.just("user")}), max_size=1)),
    "run_error": st.one_of(st.none(), st.sampled_from(["", "ConnectionError('down')", "x" * 600]), st.booleans()),
    "extra": st.integers(),
})


def _unavailable(path):
    raise FastPathUnavailable("the test asks for the reference reader")
    yield


def outputs(path, out, monkeypatch, fast: bool, policy=POLICY):
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(_arrow, "_arrow_chunks", _unavailable)
        try:
            summary, _ = score_file(path, policy, format="jsonl", out_dir=out)
        except Exception as err:  # the same error either way
            return type(err).__name__, str(err)
    facts = summary.to_dict()
    del facts["provenance"]["created"]  # the time of the run: the one field two runs may not share
    return (out / "conversations.jsonl").read_text(), json.dumps(facts)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(record, min_size=0, max_size=8), st.booleans())
def test_fast_path_equals_reference_reader(tmp_path, monkeypatch, rows, unique_ids):
    lines = []
    for i, row in enumerate(rows):
        row = dict(row)
        row["conversation_id"] = f"c{i}" if unique_ids else f"c{i % 3}"
        lines.append(json.dumps(row))
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    fast = outputs(path, tmp_path / "fast", monkeypatch, True)
    reference = outputs(path, tmp_path / "reference", monkeypatch, False)
    assert fast == reference


def test_fast_path_takes_well_formed_files(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"conversation_id": "a", "label": "ESC", "tool_calls": [{"turn": 0, "name": "esc"}]}\n')
    (read, records), = list(_arrow._arrow_chunks(path))
    assert read == path.stat().st_size and len(records) == 1


@pytest.mark.parametrize("line", ['{"conversation_id": 7}', '{"conversation_id": "a", "replica": -1}',
                                  '[1]', '{"conversation_id": "a", "tool_calls": [{"turn": "0"}]}'])
def test_fast_path_hands_unusual_files_to_the_reference_reader(tmp_path, line):
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(FastPathUnavailable):
        list(_arrow._arrow_chunks(path))


@pytest.mark.parametrize("profile", ["asks_approval_for_everything", "lookup_before_escalating", "invents_actions"])
def test_fast_path_equals_reference_on_simulated_logs(tmp_path, monkeypatch, profile):
    from escalation import simulate
    sim = simulate.simulate(profile, cases=300, replicas=2, rho=0.2, seed=3)
    path = simulate.write_jsonl(sim, tmp_path / "records.jsonl")
    policy = simulate.world_policy()
    reference_reads = []

    def spy(*args, **kwargs):
        reference_reads.append(args)
        return iter_jsonl(*args, **kwargs)

    iter_jsonl = _arrow.iter_jsonl
    monkeypatch.setattr(_arrow, "iter_jsonl", spy)
    results = {}
    for fast in (True, False):
        out = tmp_path / str(fast)
        results[fast] = outputs(path, out, monkeypatch, fast, policy)
    assert len(reference_reads) == 1  # the fast path read the whole file without falling back; the other did not
    assert results[True] == results[False]


def test_chunks_cut_between_lines_and_long_lines_stay_on_the_fast_path(tmp_path):
    """Small chunks give the records of one big chunk; a line longer than Arrow's parallel
    block (2 MB) is parsed in a block of its own, not handed to the reference reader."""
    long_line = json.dumps({"conversation_id": "long", "label": "ACT", "tool_calls": [],
                            "metadata": {"note": "x" * (3 << 20)}})
    lines = [json.dumps({"conversation_id": f"c{i}", "case_id": f"k{i % 5}", "label": "ESC", "replica": i // 5,
                         "tool_calls": [{"turn": 0, "name": "esc"}] if i % 3 else []}) for i in range(200)]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines[:100] + [long_line] + lines[100:]) + "\n")
    whole = list(_arrow._arrow_chunks(path))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_arrow, "CHUNK_BYTES", 700)
        pieces = list(_arrow._arrow_chunks(path))
    assert len(whole) == 1 and len(pieces) > 25
    assert sum(read for read, _ in pieces) == sum(read for read, _ in whole) == path.stat().st_size
    ids = [c for _, r in pieces for c in r.conversations["conversation_id"]]
    assert ids == list(whole[0][1].conversations["conversation_id"]) == [f"c{i}" for i in range(100)] + ["long"] + \
        [f"c{i}" for i in range(100, 200)]


@pytest.mark.parametrize("text, refused", [
    (b'{"conversation_id": "a", "ignored": NaN}\n', "NaN or Infinity"),
    (b'{"conversation_id": "a", "ignored": -Infinity}\n', "NaN or Infinity"),
    (b'{"conversation_id": "a", "ignored": [1, Inf]}\n', "NaN or Infinity"),
    (b'{"conversation_id": "a", "ignored": "x: NaN"}\n', "NaN or Infinity"),  # in a string: only slower
    (b'{"conversation_id": "a", "ignored": "a NaN"}\n', None),
    (b'{"conversation_id": "a", "ignored": "\xff"}\n', "not UTF-8"),
    (b'{"conversation_id": "a"} {"conversation_id": "b"}\n', "more than one JSON value"),
    (b'{"conversation_id": "a"}\r{"conversation_id": "b"}\n', "more than one JSON value"),
    (b'  {"conversation_id": "a"} {"conversation_id": "b"}\n\n  \n', "more than one JSON value"),
    (b'  {"conversation_id": "a"}\n\n \t{"conversation_id": "b"}\r\n', None),
])
def test_what_arrow_takes_and_json_lines_does_not_goes_to_the_reference_reader(tmp_path, text, refused):
    """Arrow's parser takes NaN, Infinity, bytes that are not UTF-8 in ignored fields and several
    values on a line; the reference reader refuses them, so the fast path must not take them."""
    path = tmp_path / "r.jsonl"
    path.write_bytes(text)
    if refused is None:
        assert sum(len(r) for _, r in _arrow._arrow_chunks(path)) == text.count(b"conversation_id")
    else:
        with pytest.raises(FastPathUnavailable, match=refused):
            list(_arrow._arrow_chunks(path))


def _lines(n, start=0):
    return [json.dumps({"conversation_id": f"c{i}", "case_id": f"k{i // 2}", "label": "ESC" if i % 2 else "ACT",
                        "tool_calls": [{"turn": 0, "name": "esc"}]}) for i in range(start, start + n)]


@pytest.mark.parametrize("late", [
    '{"conversation_id": "late", "note": "x: NaN"}',             # refused by Arrow's NaN check, in a late chunk
    '{"conversation_id": 7}',                                     # an id of another type
    '{"conversation_id": "late", "tool_calls": [{"turn": "0"}]}',  # a turn of another type
])
def test_a_late_fallback_gives_each_conversation_once(tmp_path, monkeypatch, late):
    """Arrow gives its chunks until one it cannot take; the reference reader then reads from the
    first line and gives only the conversations not given yet, and progress counts each byte once."""
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(_lines(150) + [late] + _lines(50, 150)) + "\n")
    monkeypatch.setattr(_arrow, "CHUNK_BYTES", 2000)
    read = []
    chunks = list(iter_records(path, messages=False, chunk_size=40, progress=read.append))
    ids = [i for records in chunks for i in records.conversations["conversation_id"]]
    assert ids == [c["conversation_id"] for c in read_jsonl(path)]  # each once, in order
    assert len(chunks) > 3 and sum(read) == path.stat().st_size


def test_a_repeated_key_found_after_the_last_chunk_names_its_line(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(_lines(100) + [_lines(1, 3)[0].replace('"c3"', '"other"')]) + "\n")
    monkeypatch.setattr(_arrow, "CHUNK_BYTES", 2000)
    given = []
    with pytest.raises(InputError, match=r":101: field 'replica': case 'k1', label 'ESC', replica 0 repeats line 4"):
        for records in iter_records(path, messages=False):
            given.append(len(records))
    assert sum(given) == 101  # Arrow gave every line; then the reference reader found the repeat


@pytest.mark.parametrize("data, refused", [
    (b'{"a": 1}\n{"b": 2}\n', False),
    (b'\n  \n{"a": 1}\r\n\t{"b": [null]}\n\n', False),
    (b'null\n{"a": 1}\n', True),
    (b'{"a": 1}\n  null  \n{"b": 2}\n', True),
    (b'{"a": 1}\n{"b": 2}\n[{"c": 3}]', True),
    (b'{"a": "x\\nnull"}\n   \n 7\n', True),
])
def test_a_line_that_is_not_an_object_never_reaches_arrow(tmp_path, data, refused):
    """pyarrow's JSON reader crashes the process on a top-level ``null`` line: a chunk with a
    line not starting with ``{`` is refused before Arrow parses it, wherever the chunks cut the
    file; and the chunks hold the whole file, in order, each ending at a line's end."""
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    for size in range(1, len(data) + 1):
        chunks = list(_arrow._line_chunks(path, size))
        assert b"".join(bytes(text) for _, text in chunks) == data
        assert sum(read for read, _ in chunks) == len(data)
        assert all(bytes(text).endswith(b"\n") for _, text in chunks[:-1])
        found = False
        for _, text in chunks:
            try:
                _arrow._lines_starting_objects(text, _arrow._newlines(text))
            except FastPathUnavailable:
                found = True
        assert found == refused, size
    if refused:  # and the whole read refuses it too (the process survives)
        with pytest.raises(FastPathUnavailable):
            list(_arrow._arrow_chunks(path))


@pytest.mark.parametrize("turn", [2**62 - 1, 2**62, 2**63 - 1, -2**63])
def test_turns_at_the_ends_of_int64_read_alike(turn, tmp_path, monkeypatch):
    # The fuzzer (seed 20261202): a call turn of 2**63 - 1 was kept by the fast path and read as
    # -1 (not an integer) by the reference reader, so the two gave different invalid_record reasons.
    path = tmp_path / "r.jsonl"
    rows = [{"conversation_id": "a", "label": "ESC", "assistant_turns": 2,
             "tool_calls": [{"turn": turn, "name": "esc"}]},
            {"conversation_id": "b", "label": "ACT", "tool_calls": [{"turn": 0, "name": "act"}],
             "messages": [{"turn": turn}]}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert len(list(_arrow._arrow_chunks(path))) == 1  # the fast path takes the file
    assert outputs(path, tmp_path / "fast", monkeypatch, True) == outputs(path, tmp_path / "ref", monkeypatch, False)
