"""Sample-size plans (estimators._planning): reference values, round trips, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from escalation.estimators import (plan_difference, plan_interval, plan_paired_figure, scenarios_needed,
                                   wilson_interval, wilson_kish_interval, wilson_sample_size, z_value)


def _half_width(p, k, m, rho, confidence=0.95):
    n = k * m
    low, high = wilson_kish_interval(p * n, n, m, rho, confidence).interval
    return (high - low) / 2


# ------------------------------------------------------------------ reference values

def test_normal_rule_matches_statsmodels_for_one_replica_without_correlation():
    # statsmodels.stats.proportion.samplesize_confint_proportion(0.1, 0.05) = 138.29
    # (its docstring and tests: z^2 p (1-p) / h^2 with z = 1.959964)
    plan = plan_interval(0.1, rho=0.0, replicas=1, half_width=0.05)
    assert plan.scenarios_normal == pytest.approx(138.2925175, rel=1e-7)
    assert plan.deff == 1.0 and plan.floor == 0.0


@pytest.mark.parametrize("rho, expected", [(0.0, 28), (0.05, 34), (0.1, 39), (0.2, 50)])
def test_normal_rule_table_for_five_replicas(rho, expected):
    # ceil(138.2925 * (1 + 4 rho) / 5): 27.66 -> 28, 33.19 -> 34, 38.72 -> 39, 49.79 -> 50
    # (issue 6 table, hand-computed from the normal rule)
    plan = plan_interval(0.1, rho=rho, replicas=5, half_width=0.05)
    assert math.ceil(plan.scenarios_normal) == expected


def test_donner_klar_clusters_per_arm():
    # Donner & Klar (2000) section 5.2: (1.96 + 0.8416)^2 (0.16 + 0.09) (1 + 9 * 0.05) / (10 * 0.01)
    # = 28.45 clusters per arm for p = 0.2 against 0.1, m = 10, rho = 0.05, 80% power
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired")
    assert plan.scenarios_exact == pytest.approx(28.452189, rel=1e-6)
    assert plan.scenarios == 29 and plan.conversations == 2 * 29 * 10
    assert plan.achieved_power >= 0.8


def test_exact_scenarios_match_enumeration_of_the_wilson_interval():
    # exact enumeration: the smallest n whose Wilson interval at p_hat = p has half-width <= h
    for p, h in [(0.1, 0.05), (0.3, 0.08), (0.02, 0.02), (0.5, 0.1)]:
        n = np.arange(1, 20000)
        low, high = wilson_interval(p, n)
        first = int(n[np.argmax((high - low) / 2 <= h)])
        assert scenarios_needed(p, h, 0.0, 1) == first
        assert wilson_sample_size(p, h) == pytest.approx(first, abs=1.0)
        # the root solves the Wilson half-width equation itself
        low, high = wilson_interval(p, wilson_sample_size(p, h))
        assert (high - low) / 2 == pytest.approx(h, rel=1e-9)


def test_floor_is_the_limit_of_many_replicas():
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05)
    z = z_value(0.95)
    assert plan.floor == pytest.approx(z * z * 0.09 * 0.1 / 0.05**2)
    huge = plan_interval(0.1, rho=0.1, replicas=10**6, half_width=0.05)
    assert huge.scenarios_normal == pytest.approx(plan.floor, rel=1e-4)
    assert huge.floor_wilson <= huge.scenarios <= math.ceil(huge.floor_wilson) + 1


# ------------------------------------------------------------------ round trips and minimality

@settings(max_examples=60, deadline=None)
@given(p=st.floats(0.01, 0.99), h=st.floats(0.01, 0.2), rho=st.floats(0.0, 0.6),
       m=st.integers(1, 30))
def test_round_trip_and_minimality(p, h, rho, m):
    plan = plan_interval(p, rho=rho, replicas=m, half_width=h)
    k = plan.scenarios
    assert plan.achieved_half_width <= h
    if k > 1:
        assert _half_width(p, k - 1, m, rho) > h
    back = plan_interval(p, rho=rho, scenarios=k, replicas=m)
    assert back.half_width == pytest.approx(plan.achieved_half_width)
    assert plan_interval(p, rho=rho, replicas=m, half_width=back.half_width).scenarios == k


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0.02, 0.98), h=st.floats(0.02, 0.2), rho=st.floats(0.0, 0.5),
       m=st.integers(2, 30))
def test_solving_for_replicas_gives_the_smallest_sufficient_m(p, h, rho, m):
    k = plan_interval(p, rho=rho, replicas=m, half_width=h).scenarios
    solved = plan_interval(p, rho=rho, scenarios=k, half_width=h)
    assert solved.replicas <= m
    assert _half_width(p, k, solved.replicas, rho) <= h
    if solved.replicas > 1:
        assert _half_width(p, k, solved.replicas - 1, rho) > h


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0.02, 0.98), h=st.floats(0.02, 0.2), rho=st.floats(0.0, 0.5),
       m=st.integers(1, 20))
def test_plans_move_the_right_way(p, h, rho, m):
    k = plan_interval(p, rho=rho, replicas=m, half_width=h).scenarios
    assert plan_interval(p, rho=rho, replicas=m + 1, half_width=h).scenarios <= k
    assert plan_interval(p, rho=min(rho + 0.1, 1.0), replicas=m, half_width=h).scenarios >= k
    assert plan_interval(p, rho=rho, replicas=m, half_width=h, confidence=0.99).scenarios >= k


def test_scenarios_needed_is_vectorised_like_the_scalar_plan():
    p = np.array([0.05, 0.1, 0.3])[:, None]
    rho = np.array([0.0, 0.1, 0.3])[None, :]
    grid = scenarios_needed(p, 0.05, rho, 5)
    assert grid.shape == (3, 3)
    for i in range(3):
        for j in range(3):
            assert grid[i, j] == plan_interval(float(p[i, 0]), rho=float(rho[0, j]), replicas=5,
                                               half_width=0.05).scenarios


def test_below_the_floor_no_replicas_suffice():
    # floor_wilson = n* rho = 14.1 scenarios for p = 0.1, h = 0.05, rho = 0.1
    with pytest.raises(ValueError, match=r"no number of replicas .* scenarios=14: .* floor of 14\.10"):
        plan_interval(0.1, rho=0.1, scenarios=14, half_width=0.05)
    assert plan_interval(0.1, rho=0.1, scenarios=15, half_width=0.05).replicas > 100


def test_paired_figure_uses_cases_as_clusters():
    plan = plan_paired_figure(0.8, rho=0.1, replicas=3, half_width=0.05)
    same = plan_interval(0.8, rho=0.1, replicas=3, half_width=0.05)
    assert plan.cases == same.scenarios and plan.achieved_half_width == same.achieved_half_width
    assert plan.pairs == 3 * plan.cases and plan.conversations == 6 * plan.cases
    assert plan.solved_for == "cases"
    assert set(plan.to_dict()) >= {"pi", "cases", "cases_normal", "pairs", "conversations", "floor"}
    with pytest.raises(ValueError, match="exactly one of cases, replicas, half_width"):
        plan_paired_figure(0.8, rho=0.1, half_width=0.05)


# ------------------------------------------------------------------ power plans

@pytest.mark.parametrize("design, correlation", [("unpaired", None), ("paired", 0.5), ("paired", -0.3)])
def test_power_round_trip_and_minimality(design, correlation):
    kw = dict(rho=0.1, design=design, correlation=correlation)
    plan = plan_difference(0.3, 0.2, replicas=4, power=0.9, **kw)
    assert plan.achieved_power >= 0.9
    back = plan_difference(0.3, 0.2, replicas=4, scenarios=plan.scenarios, **kw)
    assert back.power == pytest.approx(plan.achieved_power)
    smaller = plan_difference(0.3, 0.2, replicas=4, scenarios=plan.scenarios - 1, **kw)
    assert smaller.power < 0.9
    replicas = plan_difference(0.3, 0.2, scenarios=plan.scenarios, power=0.9, **kw)
    assert replicas.replicas <= 4 and replicas.achieved_power >= 0.9


def test_pairing_with_zero_correlation_is_the_unpaired_plan_and_positive_correlation_helps():
    unpaired = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired")
    zero = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.0)
    assert zero.scenarios_exact == pytest.approx(unpaired.scenarios_exact)
    better = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.8)
    assert better.scenarios < unpaired.scenarios


def test_power_from_the_normal_rule():
    # Phi(sqrt(K Delta^2 / V) - z_{0.975}) with V = 0.25 * 1.45 / 10 and K = 29 (hand-computed)
    from scipy.stats import norm
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, scenarios=29, design="unpaired")
    assert plan.power == pytest.approx(norm.cdf(math.sqrt(29 * 0.01 / (0.25 * 1.45 / 10))
                                                 - norm.ppf(0.975)), rel=1e-12)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("kwargs, message", [
    (dict(replicas=5), r"exactly one of scenarios, replicas, half_width must be None .* got 2 None"),
    (dict(replicas=5, half_width=0.05, scenarios=10), r"exactly one .* got 0 None"),
    (dict(replicas=0, half_width=0.05), r"replicas must be a whole number >= 1, got 0"),
    (dict(replicas=2.5, half_width=0.05), r"replicas must be a whole number >= 1, got 2.5"),
    (dict(replicas=5, half_width=0.5), r"half_width must lie in \(0, 0.5\)"),
])
def test_interval_plan_errors_name_the_parameter(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan_interval(0.1, rho=0.1, **kwargs)


def test_rate_and_rho_out_of_range():
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\), got 0.0"):
        plan_interval(0.0, rho=0.1, replicas=5, half_width=0.05)
    with pytest.raises(ValueError, match=r"rho must lie in \[0, 1\], got 1.5"):
        plan_interval(0.1, rho=1.5, replicas=5, half_width=0.05)


@pytest.mark.parametrize("kwargs, message", [
    (dict(replicas=5, design="unpaired"), r"exactly one of scenarios, replicas, power"),
    (dict(replicas=5, power=0.8, design="crossed"), r"design must be one of \('paired', 'unpaired'\)"),
    (dict(replicas=5, power=0.8), r"correlation .* is required for design='paired'"),
    (dict(replicas=5, power=0.8, design="unpaired", correlation=0.2), r"correlation applies only"),
    (dict(replicas=5, power=0.8, correlation=1.2), r"correlation must lie in \[-1, 1\], got 1.2"),
    (dict(scenarios=3, power=0.99, design="unpaired"), r"no number of replicas reaches power=0.99"),
])
def test_difference_plan_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan_difference(0.1, 0.2, rho=0.2, **kwargs)
    with pytest.raises(ValueError, match="p_a and p_b must differ"):
        plan_difference(0.1, 0.1, rho=0.2, replicas=3, power=0.8, design="unpaired")


def test_to_dict_is_plain_json():
    import orjson
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired")
    d = orjson.loads(orjson.dumps(plan.to_dict()))
    assert d["correlation"] is None and d["scenarios"] == 29 and d["solved_for"] == "scenarios"
