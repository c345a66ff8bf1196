"""The Arrow fast path of canonical JSONL gives exactly what the reference reader gives."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from escalation.estimators import Policy, _pipeline
from escalation.estimators._arrow import FastPathUnavailable, arrow_available, iter_records_arrow

pytestmark = pytest.mark.skipif(not arrow_available(), reason="pyarrow is not installed")
POLICY = Policy.from_dict({"escalation_tools": ["esc"], "read_only_tools": ["ro"], "action_tools": ["act"],
                           "approval_tools": ["app"], "gated_tools": ["act"]})

value = st.one_of(st.none(), st.integers(-2, 4), st.sampled_from(["", "esc", "ro", "act", "app", "x", "ESC", "ACT"]),
                  st.booleans(), st.just(1.5), st.just(2**70), st.lists(st.sampled_from(["act", "ro"]), max_size=2))
call = st.dictionaries(st.sampled_from(["turn", "name", "covers", "arguments"]), value, max_size=4)
record = st.fixed_dictionaries({}, optional={
    "case_id": st.one_of(st.none(), st.sampled_from(["k1", "k2"]), st.integers(0, 2)),
    "label": st.one_of(st.none(), st.sampled_from(["ESC", "ACT", "esc"]), st.integers(0, 1)),
    "replica": st.one_of(st.none(), st.integers(-1, 2), st.just("0")),
    "scenario_id": st.one_of(st.none(), st.just("s1")),
    "language": st.one_of(st.none(), st.sampled_from(["", "es"])),
    "assistant_turns": st.one_of(st.none(), st.integers(-1, 5), st.just(2.0)),
    "tool_calls": st.one_of(st.none(), st.lists(call, max_size=5), st.just("x"), st.lists(st.integers(), max_size=1)),
    "messages": st.one_of(st.lists(st.fixed_dictionaries({"turn": st.integers(-1, 5)}), max_size=2),
                          st.lists(st.fixed_dictionaries({"role": st.just("user")}), max_size=1)),
    "extra": st.integers(),
})


def outputs(path, out, monkeypatch, fast: bool):
    monkeypatch.setattr(_pipeline, "arrow_available", lambda: fast)
    try:
        summary, _ = _pipeline.score_file(path, POLICY, format="jsonl", out_dir=out)
    except Exception as err:  # the same error either way
        return type(err).__name__, str(err)
    return (out / "conversations.jsonl").read_text(), json.dumps(summary.to_dict())


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
    (read, records), = list(iter_records_arrow(path))
    assert read == path.stat().st_size and len(records) == 1


@pytest.mark.parametrize("line", ['{"conversation_id": 7}', '{"conversation_id": "a", "replica": -1}',
                                  '[1]', '{"conversation_id": "a", "tool_calls": [{"turn": "0"}]}'])
def test_fast_path_hands_unusual_files_to_the_reference_reader(tmp_path, line):
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(FastPathUnavailable):
        list(iter_records_arrow(path))


@pytest.mark.parametrize("profile", ["asks_approval_for_everything", "lookup_before_escalating", "invents_actions"])
def test_fast_path_equals_reference_on_simulated_logs(tmp_path, monkeypatch, profile):
    from escalation import simulate
    sim = simulate.simulate(profile, cases=300, replicas=2, rho=0.2, seed=3)
    path = simulate.write_jsonl(sim, tmp_path / "records.jsonl")
    policy = simulate.world_policy()
    finished = []

    def spy(p):
        yield from iter_records_arrow(p)
        finished.append(p)

    monkeypatch.setattr(_pipeline, "iter_records_arrow", spy)
    results = {}
    for fast in (True, False):
        monkeypatch.setattr(_pipeline, "arrow_available", lambda fast=fast: fast)
        out = tmp_path / str(fast)
        summary, _ = _pipeline.score_file(path, policy, format="jsonl", out_dir=out)
        results[fast] = ((out / "conversations.jsonl").read_bytes(), summary.to_dict())
    assert finished == [path]  # the fast path read the whole file, without falling back
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
    whole = list(iter_records_arrow(path))
    pieces = list(iter_records_arrow(path, chunk_bytes=700))
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
        assert sum(len(r) for _, r in iter_records_arrow(path)) == text.count(b"conversation_id")
    else:
        with pytest.raises(FastPathUnavailable, match=refused):
            list(iter_records_arrow(path))
