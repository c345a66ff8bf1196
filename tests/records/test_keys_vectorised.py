"""The key hashes of ``estimators.records._keys``, computed a column at a time, are those of the readable
rule they replace: ``hash(conversation_id)``, and ``hash((case, label, replica))`` of every
conversation with a case and a string label, on hostile columns."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.records import _keys


def reference_key_hashes(conversation_id, case_id, label, replica):
    """The rule row by row, as ``key_hashes`` was first written."""
    replica = replica.tolist() if isinstance(replica, np.ndarray) else list(replica)
    rows = [i for i, (c, lab) in enumerate(zip(case_id, label)) if c is not None and lab.__class__ is str]
    pairs = ((case_id[i], label[i], replica[i]) for i in rows)
    n = len(replica)
    return {"conversation_id": (np.arange(n), np.fromiter(map(hash, conversation_id), np.int64, n)),
            "replica": (np.array(rows, dtype=np.int64), np.fromiter(map(hash, pairs), np.int64, len(rows)))}


class Text(str):
    """A string of a subclass: not a label (its class is not ``str``)."""


text = st.text(max_size=6)
ident = st.one_of(text, st.sampled_from(["", "k", "None", "a:b", "\udc80", "é"]))
scalar = st.one_of(st.none(), text, st.integers(), st.booleans(), st.floats(allow_nan=True), st.just(math.nan),
                   st.builds(Text, text), st.tuples(st.integers(), text))
replica = st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(), st.booleans(), st.floats(allow_nan=False))


def objects(values) -> np.ndarray:
    """A list as a one-dimensional object array (tuples stay elements)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def assert_same(got, expected):
    assert got.keys() == expected.keys()
    for field in expected:
        (rows, hashes), (want_rows, want_hashes) = got[field], expected[field]
        assert rows.dtype == want_rows.dtype == np.int64 and hashes.dtype == want_hashes.dtype == np.int64
        assert rows.tolist() == want_rows.tolist(), field
        assert hashes.tolist() == want_hashes.tolist(), field


def test_this_interpreter_hashes_tuples_column_by_column():
    assert _keys._VECTORISED


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ident, st.one_of(scalar, ident), st.one_of(scalar, ident), replica), max_size=30),
       st.sampled_from(["list", "array"]))
def test_key_hashes_are_those_of_the_row_by_row_rule(rows, container):
    columns = [list(column) for column in zip(*rows)] if rows else [[], [], [], []]
    if container == "array":
        columns = [objects(column) for column in columns]
    assert_same(_keys.key_hashes(*columns), reference_key_hashes(*columns))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(scalar, ident), max_size=6), st.lists(st.one_of(scalar, ident), max_size=4),
       st.lists(st.tuples(ident, st.integers(-1, 8), st.integers(-1, 8), st.integers(-2**63, 2**63 - 1)),
                max_size=30))
def test_coded_key_hashes_are_those_of_the_decoded_columns(cases, labels, rows):
    """Columns as codes into their values (the last value is where a code of -1 points)."""
    case_values, label_values = objects(cases + [None]), objects(labels + [None])
    ids = [row[0] for row in rows]
    case_codes = np.array([c if c < len(case_values) else -1 for _, c, _, _ in rows], np.int64)
    label_codes = np.array([c if c < len(label_values) else -1 for _, _, c, _ in rows], np.int64)
    replicas = np.array([row[3] for row in rows], np.int64)
    got = _keys.coded_key_hashes(ids, (case_values, case_codes), (label_values, label_codes), replicas)
    assert_same(got, reference_key_hashes(ids, case_values[case_codes], label_values[label_codes], replicas))


@pytest.mark.slow
@given(st.lists(st.tuples(st.one_of(scalar, ident), st.one_of(text, st.builds(Text, text)), replica), max_size=20))
def test_one_key_is_hashed_as_its_column(keys):
    """``UniqueKeys._confirm`` hashes one key: the same hash as ``key_hashes`` gives it."""
    for key in keys:
        assert _keys._key_hash(key, "replica") == hash(key)
        assert _keys._key_hash(key[0], "conversation_id") == hash(key[0])


def test_a_fake_hash_reaches_every_hash(monkeypatch):
    """The collision tests make every key share a hash by replacing ``hash`` in the module: the
    column-wise hashes, the coded ones and those of one key then agree."""
    monkeypatch.setattr(_keys, "hash", lambda key: 7, raising=False)
    columns = (["a", "b", "c"], ["k", "k", None], ["ESC", "ACT", "ESC"], np.array([0, 1, 0]))
    pairs = _keys.key_hashes(*columns)["replica"][1]
    coded = _keys.coded_key_hashes(columns[0], (np.array(["k", None], object), np.array([0, 0, -1])),
                                   (np.array(["ESC", "ACT", None], object), np.array([0, 1, 0])), columns[3])
    assert pairs.tolist() == coded["replica"][1].tolist() == [_keys._key_hash(("k", "ESC", 0), "replica")] * 2
    assert _keys.key_hashes(*columns)["conversation_id"][1].tolist() == [7, 7, 7]


@pytest.mark.parametrize("bad", [[["list"]], [{"a": 1}]])
def test_an_unhashable_case_fails_as_before(bad):
    columns = (["a"], bad, ["ESC"], [0])
    with pytest.raises(TypeError):
        reference_key_hashes(*columns)
    with pytest.raises(TypeError):
        _keys.key_hashes(*columns)
