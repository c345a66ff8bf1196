"""``conversations.jsonl`` lines made column by column (issue 18, throughput) are the bytes that
writing each row with orjson gives.

The reference below is the row-by-row construction that ``estimators/metric/_lines.py`` used before
(a dict per row, ``orjson.dumps``, then the cells), copied here as the readable definition of the
format. Hypothesis draws hostile results: ids with quotes, backslashes, control characters,
U+2028, emoji, characters beyond the BMP and empty strings; missing values; big integers; long
conversations (more than ``_CACHED_TURNS`` turns); non-empty ``unmarked_tools``; ``extra``
columns; columns of other types; no rows. Each is written with small and default blocks, and
with the columnwise and the grouped ways of making a line.
"""
from __future__ import annotations

import contextlib

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import _lines, conversation_lines, score_records
from escalation.estimators.records import Policy, Records, normalise_conversation

FIELDS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "language", "assistant_turns",
          "evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells", "unmarked_tools",
          "only_unmarked_before_handoff", "failed_escalations",  # SPEC section 6, failed_escalations since 2026-12-04
          "gated_calls", "approval", "a", "approval_cause", "approval_turn",  # SPEC section 3A, since 2026-12-04
          "approval_requests", "inline_decisions", "unknown_decisions")


# --- the reference: one dict and one orjson.dumps per row --------------------------------------

def reference_cells(turns, scored_turn, score, cause) -> list[dict]:
    if scored_turn is None or turns is None:
        return []
    return [{"turn": t, "score": score if t == scored_turn else None,
             "reason": (cause or "compliant") if t == scored_turn
             else ("before_scored_turn" if t < scored_turn else "after_scored_turn")}
            for t in range(turns)]


def reference_plain(series: pd.Series) -> list:
    return series.astype(object).where(series.notna(), None).tolist()


def reference_lines(results: pd.DataFrame, *, extra: dict | None = None):
    cols = {name: reference_plain(results[name]) for name in FIELDS if name != "cells"}
    score = np.where(results["label"].to_numpy(object) == "ESC",
                     results["u"].astype("Float64").to_numpy(float, na_value=np.nan),
                     results["o"].astype("Float64").to_numpy(float, na_value=np.nan))
    scores = [None if np.isnan(s) else int(s) for s in score]
    extra = {k: np.asarray(v).tolist() for k, v in (extra or {}).items()}
    names = [n for n in FIELDS if n != "cells"]
    for i in range(len(results)):
        row = {n: cols[n][i] for n in names}
        for k, v in extra.items():
            row[k] = v[i]
        head = orjson.dumps(row)
        body = orjson.dumps(reference_cells(row["assistant_turns"], row["turn"], scores[i], row["cause"]))
        yield head[:-1] + b',"cells":' + body + b"}\n"


# --- hostile results --------------------------------------------------------------------------

HOSTILE = ['"', "\\", '\\"', "\x00", "\x01", "\x1f", "\n", "\r", "\r\n", "\t", "\x7f", "\u2028", "\u2029", "",
           "é", "😀", "\U0010ffff", "\ufeff", "a\"b\\c\nd", "</script>", "null", "{}", ",", ":"]
#: characters of every kind but lone surrogates (which orjson refuses, as the readers do)
CHARS = st.characters(exclude_categories=["Cs"])
TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(CHARS, max_size=12),
                 st.text(st.sampled_from("abc:-_09"), min_size=1, max_size=6))
PLAIN = st.text(st.sampled_from("abcdefgh0123456789:-_"), min_size=1, max_size=8)
CAUSES = ["no_handoff", "acted_before_handoff", "unneeded_handoff", "unneeded_approval"]
SHARED_TOOLS = [(), ("lookup_flight",), ["a\"b", "\u2028"], ("x", "y", "😀")]
INT64 = st.integers(-2**63, 2**63 - 1)
#: the scorer's statuses of a conversation's gated calls: one shared tuple per sequence, None where not scored
SHARED_STATUSES = [None, (), ("approved",), ("approved", "reused"), ["denied", "defied"]]


@st.composite
def results_frames(draw, max_rows: int = 30):
    """A frame of the columns and dtypes that ``score_records`` gives, with hostile values, and
    sometimes columns of other types (object ints up to 2**64-1, uint64, floats, pandas strings, Arrow)."""
    n = draw(st.integers(0, max_rows))
    plain_ids = draw(st.booleans())  # all ids plain: the bare-string path; else hostile ones
    ids = PLAIN if plain_ids else TEXT

    def column(values, dtype=None):
        return pd.Series(draw(st.lists(values, min_size=n, max_size=n)), dtype=dtype)

    def obj(values):
        return pd.Series(draw(st.lists(values, min_size=n, max_size=n)), dtype=object)

    turns = draw(st.lists(st.one_of(st.none(), st.integers(-1, 8), st.integers(60, 200)), min_size=n, max_size=n))
    turn = [None if t is None or draw(st.integers(0, 9)) == 0 else draw(st.integers(-1, max(t, 0) + 1))
            for t in turns]
    tools = [draw(st.sampled_from(SHARED_TOOLS)) if draw(st.booleans()) else
             draw(st.lists(TEXT, max_size=3).map(tuple if draw(st.booleans()) else list)) for _ in range(n)]
    frame = pd.DataFrame({
        "conversation_id": obj(ids),
        "case_id": obj(st.one_of(ids, st.none()) if not plain_ids else ids),
        "scenario_id": obj(st.one_of(ids, st.none())),
        "replica": column(INT64, np.int64),
        "label": obj(st.one_of(st.sampled_from(["ESC", "ACT", "esc"]), st.none(), TEXT)),
        "language": obj(st.one_of(st.just("und"), st.none(), TEXT)),
        "assistant_turns": pd.array(turns, dtype="Int64"),
        "evaluated": column(st.booleans(), bool),
        "reason": obj(st.one_of(st.none(), st.sampled_from(["no_label", "invalid_record"]), TEXT)),
        "escalated": pd.array(draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)),
                              dtype="boolean"),
        "u": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 1), st.integers(-128, 127)),
                                    min_size=n, max_size=n)), dtype="Int8"),
        "o": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 1)), min_size=n, max_size=n)), dtype="Int8"),
        "cause": obj(st.one_of(st.none(), st.sampled_from(CAUSES), TEXT)),
        "turn": pd.array(turn, dtype="Int64"),
        "unmarked_tools": pd.Series(np.fromiter(tools, dtype=object, count=n), dtype=object),
        "only_unmarked_before_handoff": column(st.booleans(), bool),
        "failed_escalations": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 2**40)), min_size=n,
                                                     max_size=n)), dtype="Int64"),
        "gated_calls": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=n, max_size=n)),
                                dtype="Int64"),
        "approval": pd.Series(np.fromiter((draw(st.sampled_from(SHARED_STATUSES)) for _ in range(n)), dtype=object,
                                          count=n), dtype=object),
        "a": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 1)), min_size=n, max_size=n)), dtype="Int8"),
        "approval_cause": obj(st.one_of(st.none(), st.sampled_from(["defied", "reused", "post_hoc"]), TEXT)),
        "approval_turn": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=n, max_size=n)),
                                  dtype="Int64"),
        "approval_requests": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n,
                                                    max_size=n)), dtype="Int64"),
        "inline_decisions": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n,
                                                   max_size=n)), dtype="Int64"),
        "unknown_decisions": pd.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n,
                                                    max_size=n)), dtype="Int64"),
    })
    other = draw(st.sampled_from([None, "object ints", "uint64", "floats", "strings", "arrow", "nan ids",
                                  "bool objects"]))
    if other == "object ints":  # Python ints beyond int64, up to 2**64-1
        frame["replica"] = obj(st.one_of(st.integers(-2**63, 2**64 - 1), st.sampled_from([2**63, 2**64 - 1])))
    elif other == "uint64":
        frame["replica"] = column(st.integers(0, 2**64 - 1), np.uint64)
    elif other == "floats":
        frame["u"] = column(st.one_of(st.sampled_from([0.0, 1.0, -0.0, float("nan")]), st.floats(-1e20, 1e20)),
                            float)
    elif other == "strings":  # pandas' string dtype, pd.NA for missing
        frame["language"] = pd.Series(draw(st.lists(st.one_of(st.none(), TEXT), min_size=n, max_size=n)),
                                      dtype="string")
        frame["conversation_id"] = frame["conversation_id"].astype("string")
    elif other == "arrow":  # Arrow-backed columns
        import pyarrow as pa
        for name in ("conversation_id", "scenario_id", "cause"):
            frame[name] = frame[name].astype(pd.ArrowDtype(pa.string()))
        frame["replica"] = frame["replica"].astype(pd.ArrowDtype(pa.int64()))
        frame["evaluated"] = frame["evaluated"].astype(pd.ArrowDtype(pa.bool_()))
        frame["turn"] = frame["turn"].astype(pd.ArrowDtype(pa.int64()))
    elif other == "nan ids":  # NaN and pd.NA are missing in an object column too
        frame["case_id"] = obj(st.one_of(ids, st.sampled_from([np.nan, pd.NA, None])))
    elif other == "bool objects":
        frame["only_unmarked_before_handoff"] = obj(st.one_of(st.booleans(), st.none(), st.integers(0, 1)))
    return frame


@st.composite
def extras(draw, n: int):
    kind = draw(st.sampled_from([None, "unplanned", "ints", "texts", "override", "lists"]))
    if kind is None:
        return None
    if kind == "unplanned":
        return {"unplanned": np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)}
    if kind == "ints":
        return {"extra \"n\"\u2028": np.array(draw(st.lists(INT64, min_size=n, max_size=n)), dtype=np.int64)}
    if kind == "texts":
        return {"note": np.array(draw(st.lists(st.one_of(st.none(), TEXT), min_size=n, max_size=n)) + [0],
                                 dtype=object)[:n], "unplanned": np.zeros(n, dtype=bool)}
    if kind == "override":  # a field of the lines: its value replaced in its place
        return {"label": np.array(draw(st.lists(TEXT, min_size=n, max_size=n)) + [0], dtype=object)[:n]}
    shared = [["a"], ["b", "\\"]]
    return {"lists": np.fromiter((shared[i % 2] for i in range(n)), dtype=object, count=n)}


@contextlib.contextmanager
def writer(block_bytes=None, share=None, segment=None, fallback_allowed=True):
    """The columnar writer with small blocks or segments, or a forced way of making lines;
    ``fallback_allowed`` False: fail if a block is written row by row."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("_BLOCK_BYTES", block_bytes), ("_DISTINCT_SHARE", share), ("_SEGMENT_ROWS", segment)):
            if value is not None:
                patch.setattr(_lines, name, value)
        if not fallback_allowed:
            def refuse(*args, **kwargs):
                raise AssertionError("a block was written row by row")
            patch.setattr(_lines, "_rowwise_lines", refuse)
        yield


#: (block budget, share of distinct rows beyond which every field is written column by column, rows
#: of a segment): as shipped; small blocks; always columnwise, small segments; small blocks, always grouped
MODES = [(None, None, None), (2_000, None, None), (None, 0.0, 7), (900, 1.0, 5)]
#: the same for a few thousand rows
WIDE_MODES = [(None, None, None), (20_000, None, None), (None, 0.0, 700), (9_000, 1.0, 257)]


def check(results, extra=None, *, fallback_allowed=True, modes=MODES):
    """The blocks and the lines are the reference's bytes, in every mode; or both raise alike."""
    try:
        expected = list(reference_lines(results, extra=extra))
    except (TypeError, ValueError, OverflowError, IndexError) as error:  # e.g. a score beyond 64 bits
        for mode in modes:
            with writer(*mode), pytest.raises(type(error)) as raised:
                list(conversation_lines(results, extra=extra))
            assert str(raised.value) == str(error)
        return
    for mode in modes:
        with writer(*mode, fallback_allowed=fallback_allowed):
            blocks = list(_lines.conversation_blocks(results, extra=extra))
            lines = list(conversation_lines(results, extra=extra))
        assert b"".join(blocks) == b"".join(expected), mode
        assert lines == expected, mode
        assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
        assert all(block for block in blocks) and (len(blocks) > 0) == (len(results) > 0)


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_lines_are_the_row_by_row_bytes(data):
    """Whatever the columns hold, the same bytes as the reference (or the same error); the dtypes that
    ``score_records`` gives, hostile values included, never written row by row."""
    results = data.draw(results_frames())
    extra = data.draw(extras(len(results)))
    mode = data.draw(st.sampled_from(MODES))
    known = results["replica"].dtype != object and results["u"].dtype != float and \
        results["only_unmarked_before_handoff"].dtype != object  # (those are written right, row by row or not)
    check(results, extra, fallback_allowed=not known, modes=[mode])


def test_no_rows():
    results = score_records(Records.from_conversations([]), Policy.from_dict(POLICY))
    assert list(conversation_lines(results)) == [] == list(_lines.conversation_blocks(results))
    assert list(conversation_lines(results, extra={"unplanned": np.zeros(0, bool)})) == []


POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "approval_tools": ["request_approval"], "gated_tools": ["issue_refund"]}


@pytest.mark.slow
def test_score_records_output():
    """Results as the scorer gives them, ids hostile, with tools that the policy does not name."""
    rng = np.random.default_rng(3)
    names = ["get_order", "issue_refund", "transfer_to_human", "request_approval", "lookup_flight", "zz\"tool\u2028"]
    conversations = []
    for i in range(2_000):
        turns = int(rng.integers(1, 90)) if i % 50 == 0 else int(rng.integers(1, 6))
        calls = [{"turn": int(rng.integers(0, turns)), "name": names[int(rng.integers(0, len(names)))]}
                 for _ in range(int(rng.poisson(3)))]
        calls.sort(key=lambda c: c["turn"])
        conversations.append(normalise_conversation({
            "conversation_id": HOSTILE[i % len(HOSTILE)] + f"c{i}", "case_id": f"k{i // 8}",
            "label": ["ESC", "ACT", "esc", "maybe"][(i // 4) % 4] if i % 97 else None, "replica": i % 4,
            "assistant_turns": turns if i % 61 else 0, "tool_calls": calls}))
    results = score_records(Records.from_conversations(conversations), Policy.from_dict(POLICY))
    assert results["unmarked_tools"].map(len).gt(0).any() and results["assistant_turns"].gt(64).any()
    check(results, fallback_allowed=False, modes=WIDE_MODES)
    check(results, {"unplanned": np.arange(len(results)) % 3 == 0}, fallback_allowed=False, modes=WIDE_MODES)


@pytest.mark.slow
def test_long_conversations_are_written_in_bounded_blocks():
    """Conversations beyond ``_CACHED_TURNS`` turns: right, and no block much larger than the budget
    unless it is one line."""
    n = 40
    results = pd.DataFrame({
        "conversation_id": pd.Series([f"c{i}" for i in range(n)], dtype=object),
        "case_id": pd.Series([f"k{i}" for i in range(n)], dtype=object),
        "scenario_id": pd.Series([f"k{i}:ESC" for i in range(n)], dtype=object),
        "replica": np.zeros(n, dtype=np.int64), "label": pd.Series(["ESC"] * n, dtype=object),
        "language": pd.Series(["und"] * n, dtype=object),
        "assistant_turns": pd.array([5_000 + 997 * i for i in range(n)], dtype="Int64"),
        "evaluated": np.ones(n, dtype=bool), "reason": pd.Series([None] * n, dtype=object),
        "escalated": pd.array([False] * n, dtype="boolean"), "u": pd.array([1] * n, dtype="Int8"),
        "o": pd.array([None] * n, dtype="Int8"), "cause": pd.Series(["no_handoff"] * n, dtype=object),
        "turn": pd.array([17 * i for i in range(n)], dtype="Int64"),
        "unmarked_tools": pd.Series([()] * n, dtype=object), "only_unmarked_before_handoff": np.zeros(n, bool),
        "failed_escalations": pd.array([0] * n, dtype="Int64"), "gated_calls": pd.array([1] * n, dtype="Int64"),
        "approval": pd.Series([("unapproved",)] * n, dtype=object), "a": pd.array([1] * n, dtype="Int8"),
        "approval_cause": pd.Series(["unapproved"] * n, dtype=object),
        "approval_turn": pd.array([17 * i for i in range(n)], dtype="Int64"),
        "approval_requests": pd.array([0] * n, dtype="Int64"), "inline_decisions": pd.array([0] * n, dtype="Int64"),
        "unknown_decisions": pd.array([0] * n, dtype="Int64"),
    })
    expected = b"".join(reference_lines(results))
    budget = 1 << 20
    with writer(budget, fallback_allowed=False):
        blocks = list(_lines.conversation_blocks(results))
    assert b"".join(blocks) == expected
    assert len(blocks) > 10
    assert all(len(block) <= 2 * budget or block.count(b"\n") == 1 for block in blocks)


def test_what_the_columnar_path_does_not_write_is_written_row_by_row():
    """Objects orjson cannot write raise as they did; keys that are not strings, cells from extra values."""
    base = score_records(Records.from_conversations([normalise_conversation({
        "conversation_id": "a", "case_id": "k", "label": "ESC", "replica": 0, "assistant_turns": 2,
        "tool_calls": []})]), Policy.from_dict(POLICY))
    for extra in ({"turn": np.array([0])}, {"cause": np.array(["x"], dtype=object)}, {"unplanned": np.array([1.5])},
                  {"when": np.array([np.datetime64("2024-01-01")])}):
        check(base, extra)
    surrogate = base.assign(conversation_id=pd.Series(["a\ud800"], dtype=object))
    with pytest.raises(orjson.JSONEncodeError) as expected:
        list(reference_lines(surrogate))
    with pytest.raises(orjson.JSONEncodeError) as found:
        list(conversation_lines(surrogate))
    assert str(found.value) == str(expected.value)
    for bad, error in (({1: np.array([True])}, TypeError), ({"x": np.array([], dtype=bool)}, IndexError)):
        with pytest.raises(error):
            list(reference_lines(base, extra=bad))
        with pytest.raises(error):
            list(conversation_lines(base, extra=bad))
    unknown = base.assign(language=pd.Series([{1, 2}], dtype=object))  # a set: orjson refuses it
    with pytest.raises(TypeError):
        list(conversation_lines(unknown))
