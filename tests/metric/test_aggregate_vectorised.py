"""The steps of ``estimators.metric._aggregate`` that replaced row-by-row forms give what those forms
give, on hostile values: the numbering of clusters as chunks come, and the count of unmarked tools."""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.metric._aggregate import _ClusterTotals, _tool_counts


class ReferenceClusterNumbers:
    """``_ClusterTotals.codes`` as first written: ``setdefault`` for each distinct id of a chunk."""

    def __init__(self):
        self.index = {}

    def codes(self, cluster):
        local, uniques = pd.factorize(pd.Series(cluster, dtype=object))
        index = self.index
        numbers = np.fromiter((index.setdefault(key, len(index)) for key in uniques), np.int64, len(uniques))
        return numbers[local]


def objects(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


cluster = st.one_of(st.text(max_size=3), st.sampled_from(["a", "b", "k:ESC"]), st.integers(-2, 2), st.booleans(),
                    st.sampled_from([1.0, 0.0, -0.0]), st.tuples(st.integers(0, 1)), st.none(), st.just(math.nan))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(cluster, min_size=1, max_size=12), max_size=5))
def test_clusters_are_numbered_as_setdefault_numbers_them(chunks):
    totals, reference = _ClusterTotals(), ReferenceClusterNumbers()
    for chunk in chunks:
        column = objects(chunk)
        got, expected = outcome(totals.codes, column), outcome(reference.codes, column)
        assert got == expected  # a chunk of missing ids alone fails alike (never given: ids are not missing)
        assert list(totals.index.items()) == list(reference.index.items())
        assert len(totals.sizes) == len(totals.ones) == len(totals.index)


def outcome(codes, column):
    try:
        return codes(column).tolist()
    except IndexError as err:
        return type(err)


def reference_tool_counts(tools) -> dict:
    called = np.fromiter(map(len, tools), dtype=np.int64, count=len(tools)) > 0
    return dict(pd.Series(tools[called], dtype=object).explode().dropna().value_counts().items())


name = st.one_of(st.sampled_from(["lookup", "get_order", "", "a"]), st.text(max_size=3), st.none(), st.just(math.nan))
tools = st.one_of(st.lists(name, max_size=4), st.lists(name, max_size=3).map(tuple))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(tools, st.just(()), st.just([])), max_size=20),
       st.lists(st.one_of(st.text(min_size=1, max_size=3), st.sets(st.sampled_from(["a", "b"]), min_size=1)),
                max_size=2))
def test_tool_counts_are_those_of_explode(lists, others):
    for column in (objects(lists), objects(lists + others)):  # a string or a set: pandas' own way
        assert dict(_tool_counts(column).items()) == reference_tool_counts(column)
