"""``--interval auto`` (issue 36, point 3): the shipped table of ``escalation study coverage`` and the choice
read off it. The table's numbers come from the default run named in ``INTERVAL_CHOICE_SOURCE``; these tests check
that the choice follows the study's rule on them, at every boundary of the design groups."""
from __future__ import annotations

import csv
from importlib.resources import files

import pytest

from escalation.estimators.stats import (
    AUTO_INTERVAL,
    DEFAULT_INTERVAL,
    INTERVAL_CHOICES,
    INTERVAL_METHODS,
    SCENARIO_RANGES,
    choose_interval,
    design_group,
    group_coverage,
    resolve_interval,
)

#: The study's rule (studies/coverage/_report.py): the floor, the mean level.
FLOOR, MEAN_LEVEL = 0.93, 0.945
GROUPS = [(replicas, label) for replicas in (False, True) for label, _, _ in SCENARIO_RANGES]


def _rows():
    with files("escalation.estimators.stats").joinpath("interval_choice.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_shipped_table_covers_every_group_and_method_of_the_study():
    rows = _rows()
    seen = {(r["replicas"], r["scenarios"]) for r in rows}
    assert seen == {("m > 1" if m else "m = 1", label) for m, label in GROUPS}
    for group in seen:
        methods = [r["method"] for r in rows if (r["replicas"], r["scenarios"]) == group]
        assert sorted(methods) == sorted(INTERVAL_METHODS), group  # every interval, no oracle


@pytest.mark.parametrize("replicas,label", GROUPS)
def test_each_group_recommends_the_narrowest_interval_that_holds(replicas, label):
    fewest = max(3, next(low for name, low, _ in SCENARIO_RANGES if name == label))  # the study ran K >= 3
    rows = group_coverage(fewest, replicas)
    holding = [r for r in rows.values() if r.holds]
    for r in rows.values():  # "holds" is the study's rule on the numbers shipped with it
        assert r.holds == (r.mean_coverage >= MEAN_LEVEL and r.lowest_bound >= FLOOR), r
        assert r.lowest_bound >= r.min_coverage
    recommended = [r for r in rows.values() if r.recommended]
    assert len(recommended) == 1, "issue 36 point 3: every design group has an interval that holds"
    best = recommended[0]
    assert best.holds and best.relative_width == min(r.relative_width for r in holding)
    choice = choose_interval(fewest, replicas)
    assert choice.method == best.method
    assert f"{best.cells} cells" in choice.reason and f"{best.min_coverage:.3f}" in choice.reason


@pytest.mark.parametrize("clusters,label", [(1, "K < 10"), (9, "K < 10"), (10, "10-29"), (29, "10-29"),
                                            (30, "30-99"), (99, "30-99"), (100, "K >= 100"), (10**6, "K >= 100")])
def test_the_groups_meet_at_the_study_s_boundaries(clusters, label):
    assert design_group(clusters, False) == ("m = 1", label)
    assert design_group(clusters, True) == ("m > 1", label)


def test_a_fixed_rho_no_data_or_one_scenario_takes_the_paper_s_interval():
    choice = choose_interval(40, True, rho_fixed=0.1)
    assert choice.method == DEFAULT_INTERVAL and "--rho" in choice.reason
    assert choose_interval(0, False).method == DEFAULT_INTERVAL
    one = choose_interval(1, True)  # the t and cluster-variance intervals are undefined on one scenario
    assert one.method == DEFAULT_INTERVAL and "one scenario" in one.reason


def test_resolve_keeps_a_chosen_method_and_refuses_an_unknown_one():
    assert AUTO_INTERVAL in INTERVAL_CHOICES and set(INTERVAL_METHODS) < set(INTERVAL_CHOICES)
    assert resolve_interval("wilson-kish-t", 3, True) == ("wilson-kish-t", "chosen (--interval)")
    assert resolve_interval(AUTO_INTERVAL, 3, True) == choose_interval(3, True)
    with pytest.raises(ValueError, match="auto or one of"):
        resolve_interval("wilson", 3, True)
