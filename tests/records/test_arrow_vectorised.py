"""The column steps of the Arrow reader (``estimators.records._arrow``) that replaced row-by-row or slower
forms give what those forms give, on hostile columns: the default scenario ids, the maximum turn
of each row, and the codes of lists of strings."""
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.records import _arrow, normalise_labels, scenario_ids
from escalation.estimators.records._arrow import FastPathUnavailable

text = st.one_of(st.text(max_size=5), st.sampled_from(["", "None", "a:b", ":", "esc", " Act ", "ESC", "ACT", "é"]))
maybe_text = st.one_of(st.none(), text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(maybe_text, maybe_text, st.booleans()), max_size=40))
def test_default_scenarios_are_scenario_ids(rows):
    cases = _arrow._coded_strings(pa.array([case for case, _, _ in rows], pa.string()))
    labels = _arrow._coded_strings(pa.array([label for _, label, _ in rows], pa.string()), normalise_labels)
    ids = np.array([f"c{i}" for i in range(len(rows))], dtype=object)
    at = np.flatnonzero(np.array([missing for _, _, missing in rows], dtype=bool))
    case_id, label = (values[codes] for values, codes in (cases, labels))
    got = _arrow._default_scenarios(cases, labels, ids, at)
    expected = scenario_ids(case_id[at], label[at], ids[at])
    assert got.dtype == object and [type(x) for x in got] == [str] * len(at)
    assert got.tolist() == expected.tolist()


def reference_max_turn_per_row(lists, n: int) -> np.ndarray:
    """The largest non-negative turn of each row (-1 where none), one ``maximum.at`` over the values."""
    turns = _arrow._ints(pa.compute.list_flatten(lists).field("turn"), -1)
    parents = pa.compute.list_parent_indices(lists).to_numpy().astype(np.int64)
    out = np.full(n, -1, dtype=np.int64)
    np.maximum.at(out, parents, turns)
    return out


turn = st.one_of(st.none(), st.integers(-5, 5), st.integers(-2**63, 2**63 - 1))
calls = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.fixed_dictionaries({"turn": turn})), max_size=4))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(calls, max_size=30), st.integers(0, 3), st.integers(0, 3))
def test_max_turn_per_row_is_the_maximum_at_each_row(rows, start, stop):
    lists = pa.array(rows, pa.list_(pa.struct([("turn", pa.int64())])))
    lists = lists.slice(min(start, len(lists)), max(len(lists) - start - stop, 0))  # an offset, as a slice has
    assert (_arrow._max_turn_per_row(lists, len(lists)).tolist()
            == reference_max_turn_per_row(lists, len(lists)).tolist())


def reference_list_codes(lists, longest: int = 8):
    """``_list_codes`` with its rows grouped by ``numpy.unique(axis=0)`` on the matrix itself."""
    import pandas as pd
    import pyarrow.compute as pc
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if lengths.max(initial=0) > longest:
        codes, distinct = pd.factorize(pd.Series([tuple(x) for x in lists.to_pylist()], dtype=object))
        return codes, pd.Index(distinct, dtype=object, tupleize_cols=False)
    values = pc.dictionary_encode(pc.list_flatten(lists))
    value_codes = values.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    parents = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    position = np.arange(value_codes.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    key = np.full((len(lists), lengths.max(initial=0) + 1), -2, dtype=np.int64)
    key[:, 0] = lengths
    key[parents, 1 + position] = value_codes
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    distinct = [tuple(x) for x in lists.take(first).to_pylist()]
    return inverse.ravel(), pd.Index(distinct, dtype=object, tupleize_cols=False)


names = st.one_of(st.none(), st.sampled_from(["a", "b", "", "act"]), st.text(max_size=3))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(names, max_size=5), min_size=1, max_size=30), st.integers(1, 8))
def test_list_codes_are_those_of_the_matrix(rows, longest):
    lists = pa.array(rows, pa.list_(pa.string()))
    codes, distinct = _arrow._list_codes(lists, longest)
    want_codes, want_distinct = reference_list_codes(lists, longest)
    assert codes.tolist() == want_codes.tolist()
    assert distinct.equals(want_distinct) and distinct.dtype == want_distinct.dtype


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(-2, 2**20), min_size=1, max_size=6), min_size=1, max_size=30))
def test_packed_rows_sort_as_the_rows(rows):
    width = max(map(len, rows))
    key = np.array([row + [-2] * (width - len(row)) for row in rows], np.int64)
    _, first, inverse = np.unique(_arrow._packed_rows(key), axis=0, return_index=True, return_inverse=True)
    _, want_first, want_inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    assert first.tolist() == want_first.tolist() and inverse.ravel().tolist() == want_inverse.ravel().tolist()


def reference_lines_opening_objects(text, rows: int) -> int:
    """``_lines_opening_objects`` with its own scan of the bytes (the newlines not shared)."""
    chars = np.frombuffer(text, np.uint8)
    at_start = int(np.count_nonzero((chars[:-1] == ord("\n")) & (chars[1:] == ord("{")))) + int(chars[0] == ord("{"))
    if at_start == rows:
        return rows
    return pa.compute.count_substring_regex(_arrow._as_one_value(text, pa.large_binary()),
                                            r"(?m)^[ \t\r]*\{")[0].as_py()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"{", b"}", b"\n", b" ", b"\t", b"\r", b"[", b'{"a": 1}', b"x"]), min_size=1,
                max_size=40).map(b"".join), st.integers(0, 12))
def test_line_starts_from_the_chunks_newlines(data, rows):
    """The line-start check and count from the newline positions against a split of the lines:
    a line that is not blank and does not open an object (after blanks) is refused; else the
    count is of the lines whose first byte is ``{``, and the lines that open objects are counted
    as the reference does."""
    text = memoryview(data)
    newlines = _arrow._newlines(text)
    assert newlines.tolist() == [i for i, byte in enumerate(data) if byte == ord("\n")]
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    if any(line.strip(b" \t\r") and not line.lstrip(b" \t\r").startswith(b"{") for line in lines):
        with pytest.raises(FastPathUnavailable):
            _arrow._lines_starting_objects(text, newlines)
        return
    at_start = _arrow._lines_starting_objects(text, newlines)
    assert at_start == sum(line.startswith(b"{") for line in lines)
    assert _arrow._lines_opening_objects(text, rows, at_start) == reference_lines_opening_objects(text, rows)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(alphabet="NaIf:,[ x", max_size=30).map(str.encode))
def test_the_nan_pre_test_finds_what_a_substring_search_finds(data):
    assert _arrow._holds_nan_or_inf(memoryview(data)) == (b"NaN" in data or b"Inf" in data)
