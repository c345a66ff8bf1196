"""The per-cluster totals that ``estimators.metric._aggregate.SummaryAccumulator`` keeps as chunks come."""
import numpy as np

from escalation.estimators.metric._aggregate import _ClusterTotals


def test_clusters_come_out_in_order_of_their_first_conversation():
    """Whatever the chunks, clusters are numbered by first appearance, so the floating-point
    sums over clusters do not depend on the chunking; a cluster with no member is left out."""
    totals = _ClusterTotals()
    totals.add(totals.codes(np.array(["b", "a"], object)), np.array([1, 0]))
    codes = totals.codes(np.array(["c", "c", "a", "d"], object))
    totals.add(codes[:3], np.array([1, 0, 1]))  # "d" is numbered but gets no member
    ids, ones, sizes = totals.totals()
    assert codes.tolist() == [2, 2, 1, 3]
    assert ids.tolist() == ["b", "a", "c"] and ones.tolist() == [1, 1, 1] and sizes.tolist() == [1, 2, 2]
