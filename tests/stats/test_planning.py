"""Sample-size plans (estimators.stats._planning): reference values, round trips, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from escalation.estimators.stats import (
    plan_difference,
    plan_interval,
    plan_paired_figure,
    scenarios_needed,
    size_weighted_mean,
    wilson_interval,
    wilson_kish_interval,
    wilson_sample_size,
    z_value,
)

from .._reference import values

PLAN = values("planning")  # tests/reference/planning.csv
DEFF = values("design_effect")  # tests/reference/design_effect.csv


def _half_width(p, k, m, rho, confidence=0.95):
    n = k * m
    low, high = wilson_kish_interval(p * n, n, m, rho, confidence).interval
    return (high - low) / 2


# ------------------------------------------------------------------ reference values

def test_normal_rule_matches_statsmodels_for_one_replica_without_correlation():
    # statsmodels.stats.proportion.samplesize_confint_proportion(0.1, 0.05) = 138.29
    # (its docstring and tests: z^2 p (1-p) / h^2 with z = 1.959964)
    plan = plan_interval(0.1, rho=0.0, replicas=1, half_width=0.05)
    assert plan.scenarios_normal == pytest.approx(PLAN["normal_rule_p01_h005"], rel=1e-7)
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
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired", test="z")
    assert plan.scenarios_exact == pytest.approx(28.452189, rel=1e-6)
    assert plan.scenarios == 29 and plan.conversations == 2 * 29 * 10
    assert plan.achieved_power >= 0.8 and plan.test == "z" and math.isnan(plan.df)


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
    with pytest.raises(ValueError, match=r"no number of replicas .* `scenarios`=14: .* floor of 14\.10"):
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
    unpaired = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired", test="z")
    zero = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.0, test="z")
    assert zero.scenarios_exact == pytest.approx(unpaired.scenarios_exact)
    better = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.8)
    assert better.scenarios < plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired").scenarios
    # with t, the same variance on K - 1 degrees of freedom (paired) needs more scenarios than on 2K - 2
    t_zero = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.0)
    t_unpaired = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired")
    assert t_zero.scenarios_exact > t_unpaired.scenarios_exact > unpaired.scenarios_exact


def test_power_from_the_normal_rule():
    # Phi(sqrt(K Delta^2 / V) - z_{0.975}) with V = 0.25 * 1.45 / 10 and K = 29 (hand-computed)
    from scipy.stats import norm
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, scenarios=29, design="unpaired", test="z")
    assert plan.power == pytest.approx(norm.cdf(math.sqrt(29 * 0.01 / (0.25 * 1.45 / 10))
                                                 - norm.ppf(0.975)), rel=1e-12)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("kwargs, message", [
    (dict(replicas=5), r"exactly one of scenarios, replicas, half_width must be None .* got 2 None"),
    (dict(replicas=5, half_width=0.05, scenarios=10), r"exactly one .* got 0 None"),
    (dict(replicas=0, half_width=0.05), r"`replicas` must be a whole number >= 1; got 0"),
    (dict(replicas=2.5, half_width=0.05), r"`replicas` must be a whole number >= 1; got 2.5"),
    (dict(replicas=5, half_width=0.5), r"`half_width` must lie in \(0, 0.5\)"),
])
def test_interval_plan_errors_name_the_parameter(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan_interval(0.1, rho=0.1, **kwargs)


def test_rate_and_rho_out_of_range():
    with pytest.raises(ValueError, match=r"`p` must lie in \(0, 1\); got 0$"):
        plan_interval(0.0, rho=0.1, replicas=5, half_width=0.05)
    with pytest.raises(ValueError, match=r"`rho` must lie in \[0, 1\]; got 1.5$"):
        plan_interval(0.1, rho=1.5, replicas=5, half_width=0.05)


@pytest.mark.parametrize("kwargs, message", [
    (dict(replicas=5, design="unpaired"), r"exactly one of scenarios, replicas, power"),
    (dict(replicas=5, power=0.8, design="crossed"), r"`design` must be one of paired, unpaired; got 'crossed'"),
    (dict(replicas=5, power=0.8), r"`correlation` .* is required for `design`='paired'"),
    (dict(replicas=5, power=0.8, design="unpaired", correlation=0.2), r"`correlation` applies only"),
    (dict(replicas=5, power=0.8, correlation=1.2), r"`correlation` must lie in \[-1, 1\]; got 1.2"),
    (dict(scenarios=3, power=0.99, design="unpaired"), r"no number of replicas reaches `power`=0.99"),
])
def test_difference_plan_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan_difference(0.1, 0.2, rho=0.2, **kwargs)
    with pytest.raises(ValueError, match="`p_a` and `p_b` must differ"):
        plan_difference(0.1, 0.1, rho=0.2, replicas=3, power=0.8, design="unpaired")


def test_to_dict_is_plain_json():
    import orjson
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired", test="z")
    d = orjson.loads(orjson.dumps(plan.to_dict()))
    assert d["correlation"] is None and d["scenarios"] == 29 and d["solved_for"] == "scenarios"
    assert d["df"] is None and d["test"] == "z" and d["m_bar"] == 10.0 and d["size_cv"] == 0.0
    t = orjson.loads(orjson.dumps(plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8,
                                                  design="unpaired").to_dict()))
    assert t["test"] == "t" and t["df"] == 2 * t["scenarios"] - 2


# ------------------------------------------------------------------ unequal scenario sizes (SPEC 5 as changed)

def _wilson_half_width(p, n_eff, crit):
    """Wilson half-width at p_hat = p written out (Brown, Cai & DasGupta 2001, eq. 4), any critical value."""
    return crit / (1 + crit**2 / n_eff) * math.sqrt(p * (1 - p) / n_eff + crit**2 / (4 * n_eff**2))


def test_unequal_sizes_enter_the_design_effect_as_eldridge_ashby_kerry():
    # Eldridge, Ashby & Kerry (2006): deff = 1 + ((cv^2 + 1) m - 1) rho = 1 + (1.25 * 10 - 1) 0.1 = 2.15 by hand
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, size_cv=0.5)
    assert plan.m_bar == pytest.approx(12.5) and plan.deff == pytest.approx(DEFF["deff_eldridge_m10_rho01_cv05"]) \
        and plan.size_cv == 0.5
    z = 1.959963984540054
    assert plan.scenarios_normal == pytest.approx(z * z * 0.09 * 2.15 / (10 * 0.05**2))  # 29.73
    assert plan.floor == pytest.approx(z * z * 0.09 * 0.1 * 1.25 / 0.05**2)  # 17.29
    # the smallest K whose Wilson interval at n_eff = 10 K / 2.15 is narrow enough, by enumeration: 31
    k = next(k for k in range(1, 200) if _wilson_half_width(0.1, 10 * k / 2.15, z) <= 0.05)
    assert k == plan.scenarios == 31
    assert plan.scenarios > plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05).scenarios == 27


def test_sizes_give_m_bar_by_the_size_weighted_mean():
    # sizes 5, 10, 15: m_bar = (25 + 100 + 225) / 30 = 11.667 (SPEC 5), with replicas their mean 10
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, sizes=[5, 10, 15])
    assert plan.m_bar == pytest.approx(350 / 30) == pytest.approx(float(size_weighted_mean([5, 10, 15])))
    # the same plan as their population coefficient of variation, sqrt(50/3) / 10
    cv = float(np.std([5, 10, 15]) / 10)
    assert plan.size_cv == pytest.approx(cv)
    same = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, size_cv=cv)
    assert same.scenarios == plan.scenarios and same.deff == pytest.approx(plan.deff)
    # the sizes are a pattern: scaled to another mean, m_bar scales with it
    assert plan_interval(0.1, rho=0.1, replicas=20, half_width=0.05, sizes=[5, 10, 15]).m_bar == pytest.approx(700 / 30)
    assert plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, sizes=[5, 5, 5]).m_bar == 5.0


def test_equal_sizes_are_the_default_plan():
    for kwargs in (dict(replicas=10, half_width=0.05), dict(scenarios=30, half_width=0.05),
                   dict(scenarios=30, replicas=10)):
        default = plan_interval(0.1, rho=0.1, **kwargs)
        assert default == plan_interval(0.1, rho=0.1, size_cv=0.0, **kwargs)
        assert default.m_bar == default.replicas and default.deff == pytest.approx(1 + (default.replicas - 1) * 0.1)


@settings(max_examples=30, deadline=None)
@given(p=st.floats(0.02, 0.98), h=st.floats(0.02, 0.2), rho=st.floats(0.0, 0.5), m=st.integers(2, 20),
       cv=st.floats(0.0, 1.5))
def test_unequal_plans_are_minimal_and_solve_back(p, h, rho, m, cv):
    plan = plan_interval(p, rho=rho, replicas=m, half_width=h, size_cv=cv)
    deff = 1 + (m * (1 + cv * cv) - 1) * rho
    z = z_value(0.95)
    assert _wilson_half_width(p, plan.scenarios * m / deff, z) <= h * (1 + 1e-9)
    if plan.scenarios > 1:
        assert _wilson_half_width(p, (plan.scenarios - 1) * m / deff, z) > h
    solved = plan_interval(p, rho=rho, scenarios=plan.scenarios, half_width=h, size_cv=cv)
    assert solved.replicas <= m and solved.achieved_half_width <= h


def test_the_floor_grows_with_the_spread_of_sizes():
    # K > n* rho (1 + cv^2): with cv = 1 the floor of p = 0.1, h = 0.05, rho = 0.1 doubles to 28.2
    with pytest.raises(ValueError, match=r"floor of 28\.19"):
        plan_interval(0.1, rho=0.1, scenarios=28, half_width=0.05, size_cv=1.0)
    assert plan_interval(0.1, rho=0.1, scenarios=29, half_width=0.05, size_cv=1.0).replicas > 100


def test_paired_figure_and_difference_take_the_spread_too():
    figure = plan_paired_figure(0.8, rho=0.1, replicas=3, half_width=0.05, size_cv=0.5)
    assert figure.cases == plan_interval(0.8, rho=0.1, replicas=3, half_width=0.05, size_cv=0.5).scenarios
    assert figure.m_bar == pytest.approx(3.75)
    # unpaired, z: (z + z)^2 (p_a q_a + p_b q_b) (1 + (m (1 + cv^2) - 1) rho) / (m Delta^2), by hand 32.38
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=10, power=0.8, design="unpaired", size_cv=0.5, test="z")
    z = (1.959963984540054 + 0.8416212335729143) ** 2
    assert plan.scenarios_exact == pytest.approx(z * 0.25 * (1 + 11.5 * 0.05) / (10 * 0.01))
    assert plan.deff == pytest.approx(1.575) and plan.m_bar == pytest.approx(12.5)


# ------------------------------------------------------------------ t plans

def _t_power(df, nc, alpha=0.05):
    """Two-sided t power, as statsmodels' TTestPower writes it, with scipy.stats (independent of the planner)."""
    c = stats.t.ppf(1 - alpha / 2, df)
    return stats.nct.sf(c, df, nc) + stats.nct.cdf(-c, df, nc)


def test_t_plans_match_the_textbook_values_for_an_effect_of_one_half():
    # statsmodels: TTestPower().solve_power(0.5, power=0.8, alpha=0.05) = 33.367 (paired / one-sample) and
    # TTestIndPower().solve_power(0.5, power=0.8, alpha=0.05) = 63.766 per group (Cohen 1988: 34 and 64).
    # m = 1, rho = 0: p = 1/3 against 2/3 gives a paired effect Delta / sd(d) = (1/3) / sqrt(4/9) = 0.5;
    # p = 0.5 -+ sqrt(1/68) gives an unpaired effect Delta / sd = 0.5
    paired = plan_difference(1 / 3, 2 / 3, rho=0.0, replicas=1, power=0.8, correlation=0.0)
    assert (paired.scenarios_exact == pytest.approx(PLAN["t_paired_effect05_power08"], rel=1e-6)
            and paired.scenarios == 34)
    assert paired.df == 33
    x = math.sqrt(1 / 68)
    unpaired = plan_difference(0.5 - x, 0.5 + x, rho=0.0, replicas=1, power=0.8, design="unpaired")
    assert (unpaired.scenarios_exact == pytest.approx(PLAN["t_unpaired_effect05_power08"], rel=1e-6)
            and unpaired.scenarios == 64)
    assert unpaired.df == 126


@pytest.mark.parametrize("design, correlation, rho, m", [("paired", 0.5, 0.05, 10), ("paired", 0.3, 0.2, 5),
                                                         ("unpaired", None, 0.05, 10), ("unpaired", None, 0.2, 1)])
def test_t_scenarios_by_an_independent_iteration(design, correlation, rho, m):
    # the smallest K with noncentral-t power >= 0.8, df = K - 1 (paired) or 2K - 2 (unpaired), iterated over K
    # with scipy.stats; V(m) = (c0 + c1 / m) of one scenario's difference written out
    p_a, p_b = 0.1, 0.4
    va, vb = p_a * (1 - p_a), p_b * (1 - p_b)
    c0 = (va + vb) * rho - (2 * correlation * rho * math.sqrt(va * vb) if design == "paired" else 0.0)
    v = c0 + (va + vb) * (1 - rho) / m
    k = next(k for k in range(2, 500)
             if _t_power(k - 1 if design == "paired" else 2 * k - 2, math.sqrt(k * 0.09 / v)) >= 0.8)
    plan = plan_difference(p_a, p_b, rho=rho, replicas=m, power=0.8, design=design, correlation=correlation)
    assert plan.scenarios == k
    assert plan.achieved_power == pytest.approx(_t_power(plan.df, math.sqrt(k * 0.09 / v)), rel=1e-9)
    z_plan = plan_difference(p_a, p_b, rho=rho, replicas=m, power=0.8, design=design, correlation=correlation,
                             test="z")
    assert plan.scenarios >= z_plan.scenarios
    # solved back: the power of that K, and the replicas for that K and power
    back = plan_difference(p_a, p_b, rho=rho, scenarios=k, replicas=m, design=design, correlation=correlation)
    assert back.power == pytest.approx(plan.achieved_power)
    fewer = plan_difference(p_a, p_b, rho=rho, scenarios=k, power=0.8, design=design, correlation=correlation)
    assert fewer.replicas <= m and fewer.achieved_power >= 0.8


def test_wilson_kish_t_plan_steps_up_from_the_z_plan():
    # p = 0.1, rho = 0.1, m = 10, h = 0.05: the z plan has K = 27; with t on K - 1 df the interval at
    # n_eff = 10 K / 1.9 first fits at K = 30 (Wilson formula with scipy's t quantile)
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, method="wilson-kish-t")
    k = next(k for k in range(2, 200) if _wilson_half_width(0.1, 10 * k / 1.9, stats.t.ppf(0.975, k - 1)) <= 0.05)
    assert plan.scenarios == k == 30 and plan.method == "wilson-kish-t"
    assert int(scenarios_needed(0.1, 0.05, 0.1, 10, method="wilson-kish-t")) == 30
    # its floor: the K that equals t_{K-1}^2 p q rho / h^2
    t = stats.t.ppf(0.975, plan.floor - 1)
    assert plan.floor == pytest.approx(t * t * 0.09 * 0.1 / 0.05**2, rel=1e-8)
    assert plan.floor > plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05).floor
    back = plan_interval(0.1, rho=0.1, scenarios=30, replicas=10, method="wilson-kish-t")
    assert back.half_width == pytest.approx(plan.achieved_half_width)
    small = plan_interval(0.2, rho=0.2, replicas=10, half_width=0.1, method="wilson-kish-t")
    assert small.scenarios > plan_interval(0.2, rho=0.2, replicas=10, half_width=0.1).scenarios


@pytest.mark.parametrize("call, message", [
    (lambda: plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, size_cv=-0.5),
     r"`size_cv` must lie in \[0, 100\]; got -0.5"),
    (lambda: plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, sizes=[3, 0]), r"`sizes` must be whole numbers"),
    (lambda: plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, sizes=[3, 2.5]), r"`sizes` must be whole"),
    (lambda: plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, size_cv=0.5, sizes=[3, 4]), r"not both"),
    (lambda: plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05, method="wald"), r"`method` must be one of"),
    (lambda: plan_interval(0.1, rho=0.1, scenarios=1, replicas=5, method="wilson-kish-t"),
     r"`scenarios` must be a whole number >= 2; got 1"),
    (lambda: plan_paired_figure(0.8, rho=0.1, cases=1, replicas=5, method="wilson-kish-t"),
     r"`cases` must be a whole number >= 2; got 1"),
    (lambda: plan_difference(0.1, 0.2, rho=0.1, replicas=5, power=0.8, design="unpaired", test="f"),
     r"`test` must be one of t, z; got 'f'"),
    (lambda: plan_difference(0.1, 0.2, rho=0.1, scenarios=1, replicas=5, design="unpaired"),
     r"`scenarios` must be a whole number >= 2; got 1"),
    (lambda: plan_difference(0.1, 0.2, rho=0.1, replicas=5, power=0.04, design="unpaired"),
     r"`power` must exceed alpha = 0.05 with `test`=t; got 0.04"),
])
def test_spread_and_t_errors_name_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
