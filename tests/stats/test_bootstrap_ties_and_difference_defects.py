"""The defects of the difference intervals found on 2026-12-04 (issue 36, point 6): BCa's ties in the paired
bootstrap, Newcombe's continuity correction on clusters, and the test a power plan is for."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from escalation.estimators.stats import (
    clustered_interval,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_correlation,
    plan_difference,
)
from escalation.estimators.stats._bootstrap import _multiplicities, _ties_counted_exactly


def test_a_draw_equal_to_the_estimate_as_a_fraction_is_equal_to_it():
    # the estimate 3/10 - 1/10 and planted draws computed by the same expression on other sums
    totals = np.array([[3.0], [10.0], [1.0], [10.0]])  # Y_b, N_b, Y_a, N_a
    estimate = totals[0] / totals[1] - totals[2] / totals[3]
    sums = np.array([[[4.0, 2.0, 3.0, 5.0, 1e15]], [[10.0, 10.0, 10.0, 10.0, 3e15 + 1]],
                     [[2.0, 0.0, 1.0, 2.0, 0.0]], [[10.0, 10.0, 10.0, 10.0, 1.0]]])
    draws = sums[0] / sums[1] - sums[2] / sums[3]
    assert estimate[0] == 0.19999999999999998 and draws[0, 0] == draws[0, 1] == 0.2  # equal fractions, unequal floats
    fixed = _ties_counted_exactly(draws, sums, estimate, totals)
    assert fixed[0, :3].tolist() == [estimate[0]] * 3  # 4/10 - 2/10, 2/10 - 0, 3/10 - 1/10: ties
    assert fixed[0, 3] == draws[0, 3] == 0.3  # 5/10 - 2/10 is no tie and far: untouched
    # 1e15 / (3e15 + 1) - 0 lies below 1/3 - 0 by 1e-16, within rounding: ordered by integer arithmetic
    third = np.array([[1.0], [3.0], [0.0], [1.0]])
    one_third = third[0] / third[1] - third[2] / third[3]
    assert _ties_counted_exactly(draws[:, 4:], sums[:, :, 4:], one_third, third)[0, 0] < one_third[0]


def test_bca_counts_the_paired_bootstraps_ties_exactly():
    # 10 scenarios of one conversation: B - A resamples to 2/10 in about 30% of the draws, by many expressions
    y_a, y_b, n = np.array([1] + [0] * 9), np.array([1, 1, 1] + [0] * 7), np.ones(10)
    result = paired_cluster_bootstrap(y_a, n, y_b, n, n_resamples=2000, rng=np.random.default_rng(1))[0]
    rng = np.random.default_rng(1)  # the same multiplicities, drawn again, and the draws as fractions
    weights = np.concatenate([w[:, 0] for w in _multiplicities(np.array([10]), np.full((1, 10), 0.1), 2000, rng)])
    exact = [Fraction(int(w @ y_b), int(w @ n)) - Fraction(int(w @ y_a), int(w @ n)) for w in weights]
    truth = Fraction(2, 10)
    assert int((result.support == result.estimate).sum()) == sum(d == truth for d in exact) > 500
    assert int((result.support < result.estimate).sum()) == sum(d < truth for d in exact)


def test_the_continuity_correction_is_applied_to_the_paired_table_only():
    # one conversation a scenario (the 2x2 table): AD - BC less N / 2, i.e. sum e_a e_b less 1/2
    a, b = np.array([1, 1, 0, 0, 1, 0, 1, 0]), np.array([1, 1, 0, 1, 1, 0, 0, 0])
    ea, eb = a - a.mean(), b - b.mean()
    scale = math.sqrt((ea @ ea) * (eb @ eb))
    ones = np.ones(8)
    assert paired_correlation(a, ones, b, ones) == pytest.approx((ea @ eb - 0.5) / scale)
    # three replicas a scenario: no source gives a clustered correction; none is applied
    ya, yb, sizes = a * 3 - np.array([0, 1, 0, 0, 1, 0, 0, 0]), b * 3, np.full(8, 3)
    assert paired_correlation(ya, sizes, yb, sizes) == paired_correlation(ya, sizes, yb, sizes, continuity=False)


def test_a_paired_plan_names_the_compare_interval_whose_test_it_plans():
    paired = {"rho": 0.2, "replicas": 3, "power": 0.8, "correlation": 0.0}
    assert plan_difference(0.1, 0.3, **paired).compare_interval == "wilson-kish-t"
    assert plan_difference(0.1, 0.3, test="z", **paired).compare_interval == "wilson-kish"
    unpaired = plan_difference(0.1, 0.3, rho=0.2, replicas=3, power=0.8, design="unpaired")
    assert unpaired.compare_interval is None and unpaired.to_dict()["compare_interval"] is None


@pytest.mark.slow
def test_newcombe_with_t_limits_has_the_power_the_t_plan_promises():
    # the differences study's model (independent beta scenario rates, replicas binomial), at the planned K
    plan = plan_difference(0.1, 0.3, rho=0.2, replicas=3, power=0.8, correlation=0.0)
    K, m, nsim = plan.scenarios, 3, 4000
    rng = np.random.default_rng(11)

    def rates(p):
        return rng.beta(p * 4, (1 - p) * 4, (nsim, K))  # rho = 1 / (alpha + beta + 1) = 0.2

    y_a, y_b = rng.binomial(m, rates(0.1)), rng.binomial(m, rates(0.3))
    limits_a = clustered_interval(y_a, m, plan.compare_interval)
    limits_b = clustered_interval(y_b, m, plan.compare_interval)
    sizes = np.full(K, m)
    rejected = 0
    for i in range(nsim):
        psi = paired_correlation(y_a[i], sizes, y_b[i], sizes)
        low, high = newcombe_paired_interval(y_a[i].mean() / m, (limits_a[0][i], limits_a[1][i]), y_b[i].mean() / m,
                                             (limits_b[0][i], limits_b[1][i]), psi)
        rejected += low > 0 or high < 0
    # Newcombe's interval is the t test to first order: its power is 0 to 0.02 below the plan (MCSE 0.0064)
    assert abs(rejected / nsim - plan.achieved_power) < 0.03
