"""The at-risk trigger of the intervals (:func:`interval_at_risk`): the minority spread and the design group of
hand-built data sets, counted by hand; the trigger against the table of thresholds; the reason's text."""
from __future__ import annotations

import math

import numpy as np
import pytest

from escalation.estimators.stats import (
    RISK_THRESHOLDS,
    SCENARIO_RANGES,
    SUMS_METHODS,
    interval_at_risk,
    minority_spread,
    risk_group,
    risk_reason,
)


def _errors_in(scenarios: int, size: int, hit: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``scenarios`` of ``size`` conversations each, errors ``hit[j]`` in scenario ``j``, none elsewhere."""
    totals = np.zeros(scenarios, dtype=int)
    for j, y in hit.items():
        totals[j] = y
    return totals, np.full(scenarios, size)


def test_minority_spread_counts_the_scenarios_of_the_rarer_outcome():
    # scenario by scenario: errors in 1 of 3 (the third), non-errors in 2 of 3: the rarer occurs in 1
    assert minority_spread([0, 0, 3], [3, 3, 3]) == 1
    # all but one scenario all-error: non-errors occur in one scenario only (pi near 1 looks like this)
    assert minority_spread([3, 3, 2, 3], [3, 3, 3, 3]) == 1
    # a mixed scenario counts for both outcomes; an absent scenario (size 0) for neither
    assert minority_spread([1, 0, 0, 0], [3, 3, 3, 0]) == 1
    assert minority_spread([0, 0], [0, 0]) == 0
    # leading axes are data sets
    np.testing.assert_array_equal(minority_spread([[0, 1, 1], [2, 2, 0]], [2, 2, 2]), [2, 1])


def test_risk_group_reads_replicas_and_the_scenarios_with_data():
    replicas, group = risk_group([[0] * 12, [0] * 12], [[1] * 12, [1] * 11 + [2]])
    np.testing.assert_array_equal(replicas, [False, True])
    np.testing.assert_array_equal(group, [1, 1])  # 12 scenarios: the group 10-29
    # absent scenarios do not count: 10 scenarios listed, 9 with data -> K < 10
    assert risk_group([0] * 10, [3] * 9 + [0])[1] == 0
    assert [risk_group([0] * k, [1] * k)[1] for k in (9, 10, 29, 30, 99, 100, 200)] == [0, 1, 1, 2, 2, 3, 3]
    assert risk_group([0, 0], [0, 0])[1] == -1


def test_the_table_covers_every_method_of_the_sums_and_every_group():
    labels = [label for label, _, _ in SCENARIO_RANGES]
    assert set(RISK_THRESHOLDS) == set(SUMS_METHODS)
    for table in RISK_THRESHOLDS.values():
        assert sorted(table) == sorted((r, g) for r in (False, True) for g in labels)
        for rule in table.values():
            assert rule.fewer_than == math.inf or (rule.fewer_than == int(rule.fewer_than) and rule.fewer_than >= 0)


def test_one_error_among_20_scenarios_with_replicas_is_at_risk_for_wilson_kish():
    c = RISK_THRESHOLDS["wilson-kish"][(True, "10-29")].fewer_than
    assert 1 < c < 20  # the threshold this test is about: below it warned, at it silent
    one = _errors_in(20, 3, {0: 1})  # one error: rho estimated 0, the interval of 60 independent conversations
    spread_at = _errors_in(20, 3, {j: 1 for j in range(int(c))})  # errors in exactly c scenarios
    below = _errors_in(20, 3, {j: 1 for j in range(int(c) - 1)})
    assert interval_at_risk(*one, "wilson-kish")
    assert interval_at_risk(*below, "wilson-kish")
    assert not interval_at_risk(*spread_at, "wilson-kish")


def test_the_trigger_is_symmetric_in_the_outcomes():
    # the complement of a data set (non-errors for errors): the same spread, the same warning
    totals, sizes = _errors_in(20, 3, {0: 2, 4: 1})
    assert interval_at_risk(totals, sizes, "wilson-kish") == interval_at_risk(sizes - totals, sizes, "wilson-kish")


def test_threshold_0_never_warns_and_inf_always_warns():
    never = [(m, key) for m, t in RISK_THRESHOLDS.items() for key, rule in t.items() if rule.fewer_than == 0]
    always = [(m, key) for m, t in RISK_THRESHOLDS.items() for key, rule in t.items() if rule.fewer_than == math.inf]
    assert never and always  # the table has both kinds, else this test proves nothing
    sizes_for = {"K < 10": 5, "10-29": 20, "30-99": 50, "K >= 100": 150}
    for pairs, expected in ((never, False), (always, True)):
        for method, (replicas, label) in pairs:
            k = sizes_for[label]
            sizes = np.full(k, 3 if replicas else 1)
            nothing, one = np.zeros(k, dtype=int), np.eye(1, k, dtype=int)[0]
            assert interval_at_risk(np.stack([nothing, one]), sizes, method).tolist() == [expected] * 2, method


def test_no_conversation_is_not_at_risk_and_shapes_follow_the_data_sets():
    assert not interval_at_risk([0, 0, 0], [0, 0, 0], "wilson-kish")
    totals = np.zeros((2, 3, 30), dtype=int)
    assert interval_at_risk(totals, np.full(30, 3), "wilson-kish-t").shape == (2, 3)


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="`method` must be one of"):
        interval_at_risk([0, 1], [1, 1], "bootstrap-bca")


def test_the_reason_names_the_risk_the_measured_coverage_and_the_advice():
    rule = RISK_THRESHOLDS["wilson-kish"][(True, "10-29")]
    totals, sizes = _errors_in(20, 3, {0: 1})
    text = risk_reason(totals, sizes, "wilson-kish", instead="wilson-kish-t", figure="pi", unit="cases")
    assert text is not None and "\n" not in text
    assert text.startswith("pi: the wilson-kish interval is at risk")
    assert f"occurs in 1 of the 20 cases, fewer than {rule.fewer_than:g}" in text
    assert f"such data sets covered {rule.warned_coverage:.2f}, down to {rule.warned_lowest:.2f} in one cell" in text
    assert text.endswith("use --interval wilson-kish-t")
    spread = _errors_in(20, 3, {j: 1 for j in range(19)})
    assert risk_reason(*spread, "wilson-kish", instead="wilson-kish-t") is None


def test_the_reason_of_a_group_warned_whole():
    totals, sizes = _errors_in(5, 1, {0: 1, 1: 1, 2: 1})
    assert RISK_THRESHOLDS["wilson-kish"][(False, "K < 10")].fewer_than == math.inf
    text = risk_reason(totals, sizes, "wilson-kish", instead="korn-graubard")
    assert text is not None and "every data set with K < 10 scenarios, one conversation each" in text
