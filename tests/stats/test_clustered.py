"""The design effect of SPEC section 5 (cluster_design) and the intervals chosen by name (clustered_interval)."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from escalation.estimators.metric import clustered_rate
from escalation.estimators.stats import (
    INTERVAL_METHODS,
    RHO_BOUND_LEVEL,
    RISK_THRESHOLDS,
    SUMS_METHODS,
    ClusterSums,
    choose_interval,
    cluster_bootstrap,
    cluster_design,
    clustered_interval,
    group_coverage,
    korn_graubard_size,
    rho_upper_bound,
    size_weighted_mean,
)
from escalation.estimators.stats._clustered import interval_of_sums


def _wilson(p, n, critical):
    """Wilson (1927) with a given critical value; Brown, Cai & DasGupta (2001) eq. 4 (standard library)."""
    d = 1 + critical**2 / n
    centre = (p + critical**2 / (2 * n)) / d
    half = critical / d * math.sqrt(p * (1 - p) / n + critical**2 / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


Z = NormalDist().inv_cdf(0.975)
# y_j errors out of n_j conversations in 6 scenarios of unequal size (rho defined, > 0)
TOTALS, SIZES = np.array([0, 3, 1, 0, 4, 2]), np.array([2, 4, 3, 1, 5, 3])


def test_size_weighted_mean_is_m_times_one_plus_cv_squared():
    # Eldridge, Ashby & Kerry (2006): sum n^2 / N = mean (1 + cv^2), cv with the population variance.
    sizes = np.array([1, 2, 5, 9, 3])
    mean, cv = sizes.mean(), sizes.std() / sizes.mean()
    assert size_weighted_mean(sizes) == pytest.approx(mean * (1 + cv**2), rel=1e-12)
    assert size_weighted_mean([4, 4, 4]) == 4.0  # equal sizes: N / k
    assert math.isnan(size_weighted_mean([0, 0]))


def test_cluster_design_follows_spec_5_by_hand():
    # SPEC 5: m_bar = 64 / 18; the ANOVA rho (Donner 1986) by hand in exact fractions:
    # sum y^2/n = 0 + 9/4 + 1/3 + 0 + 16/5 + 4/3 = 427/60, Y = 10, N = 18, k = 6
    # MSB = (427/60 - 100/18) / 5, MSW = (10 - 427/60) / 12, n0 = (18 - 64/18) / 5
    from fractions import Fraction as F
    sq, Y, N, k = F(427, 60), 10, 18, 6
    msb, msw, n0 = (sq - F(Y * Y, N)) / (k - 1), (Y - sq) / (N - k), (N - F(64, 18)) / (k - 1)
    rho = float((msb - msw) / (msb + (n0 - 1) * msw))
    d = cluster_design(TOTALS, SIZES)
    assert (d.n, d.clusters) == (18.0, 6)
    assert d.m_bar == pytest.approx(64 / 18, rel=1e-12)
    assert d.rho == pytest.approx(rho, rel=1e-12) and d.rho_used == d.rho
    assert d.deff == pytest.approx(1 + (64 / 18 - 1) * rho, rel=1e-12)
    assert d.n_eff == pytest.approx(18 / d.deff, rel=1e-12)


@pytest.mark.parametrize("totals, sizes, m_bar", [
    ([0, 0, 0], [2, 3, 5], 38 / 10),   # no variation: rho undefined
    ([2, 2, 2], [2, 2, 2], 2.0),       # every conversation an error
    ([3], [7], 7.0),                   # one scenario: deff = N, n_eff = 1
])
def test_undefined_rho_is_nan_and_rho_used_is_one(totals, sizes, m_bar):
    d = cluster_design(totals, sizes)
    assert math.isnan(d.rho) and d.rho_used == 1.0
    assert d.deff == pytest.approx(m_bar, rel=1e-12) and d.n_eff == pytest.approx(sum(sizes) / m_bar, rel=1e-12)


def test_clusters_of_one_conversation_make_rho_irrelevant():
    d = cluster_design([0, 1, 0, 1], [1, 1, 1, 1])
    assert math.isnan(d.rho) and d.m_bar == 1.0 and d.deff == 1.0 and d.n_eff == 4.0


def test_fixed_rho_is_used_and_the_estimate_still_reported():
    d = cluster_design(TOTALS, SIZES, rho=0.3)
    assert d.rho_used == 0.3 and d.rho == pytest.approx(cluster_design(TOTALS, SIZES).rho)
    assert d.deff == pytest.approx(1 + (64 / 18 - 1) * 0.3, rel=1e-12)


def test_cluster_design_is_vectorised_with_absent_clusters():
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 6, (50, 7))
    totals = rng.binomial(sizes, 0.3)
    batch = cluster_design(totals, sizes)
    for i in range(50):
        keep = sizes[i] > 0
        one = cluster_design(totals[i][keep], sizes[i][keep])
        np.testing.assert_allclose([batch.m_bar[i], batch.rho_used[i], batch.deff[i], batch.n_eff[i]],
                                   [one.m_bar, one.rho_used, one.deff, one.n_eff], rtol=1e-12, equal_nan=True)


def test_wilson_kish_is_wilson_at_n_eff():
    d = cluster_design(TOTALS, SIZES)
    got = clustered_interval(TOTALS, SIZES, "wilson-kish")
    assert got == pytest.approx(_wilson(10 / 18, d.n_eff, Z), rel=1e-12)


def test_wilson_kish_t_uses_t_on_clusters_minus_one_degrees_of_freedom():
    # t_{0.975, 5} = 2.570582 (any table of Student's t, e.g. Abramowitz & Stegun table 26.10)
    d = cluster_design(TOTALS, SIZES)
    got = clustered_interval(TOTALS, SIZES, "wilson-kish-t")
    assert got == pytest.approx(_wilson(10 / 18, d.n_eff, 2.570582), abs=2e-7)
    # one scenario: t on 0 degrees of freedom is undefined, so is the interval (null, never 0 or 1)
    assert all(math.isnan(x) for x in clustered_interval([1], [4], "wilson-kish-t"))


def test_rho_upper_bound_is_the_searle_f_bound():
    # Searle (1971), Donner & Wells (1986): rho_U = (F/q - 1) / (F/q + n0 - 1), q the (1 - level) quantile of
    # F(5, 12); q from scipy.stats.f (an independent route to the quantile), F and n0 from the ANOVA above.
    from fractions import Fraction as Fr
    sq, Y, N, k = Fr(427, 60), 10, 18, 6
    msb, msw, n0 = (sq - Fr(Y * Y, N)) / (k - 1), (Y - sq) / (N - k), float((N - Fr(64, 18)) / (k - 1))

    def bound(level):
        ratio = float(msb / msw) / stats.f.ppf(1 - level, 5, 12)
        return (ratio - 1) / (ratio + n0 - 1)

    for level in (0.8, 0.9):
        assert rho_upper_bound(TOTALS, SIZES, level=level) == pytest.approx(bound(level), rel=1e-10)
    assert RHO_BOUND_LEVEL == 0.9 and rho_upper_bound(TOTALS, SIZES) == pytest.approx(bound(0.9), rel=1e-10)
    assert bound(0.9) > bound(0.8) > cluster_design(TOTALS, SIZES).rho
    assert rho_upper_bound([0, 0, 0], [3, 3, 3]) == 1.0  # undefined: 1, as SPEC 5's rho_used
    d = cluster_design(TOTALS, SIZES, rho=bound(0.9))
    assert clustered_interval(TOTALS, SIZES, "wilson-kish-ucb") == pytest.approx(_wilson(10 / 18, d.n_eff, Z))


def test_wilson_cluster_t_equals_inspect_ai_ci_wilson_with_clusters():
    # Reference: inspect_ai's own implementation, ci_wilson(cluster=) (Korn-Graubard size, t on k - 1 df).
    from inspect_ai.scorer import SampleScore, Score, ci_wilson
    scores = [SampleScore(score=Score(value=float(i < y)), sample_id=f"{j}-{i}", sample_metadata={"scenario": j})
              for j, (y, n) in enumerate(zip(TOTALS, SIZES)) for i in range(n)]
    theirs = ci_wilson(cluster="scenario")(scores)
    assert clustered_interval(TOTALS, SIZES, "wilson-cluster-t") == pytest.approx(
        (theirs["lower"], theirs["upper"]), rel=1e-12)


def test_korn_graubard_size_by_hand_and_its_edge_cases():
    # v = k/(k-1) sum (y_j - n_j p)^2 / N^2 with p = 10/18; size = p (1 - p) / v (wilson-cluster-t caps it at N).
    p = 10 / 18
    v = 6 / 5 * sum((y - n * p) ** 2 for y, n in zip(TOTALS, SIZES)) / 18**2
    assert korn_graubard_size(TOTALS, SIZES) == pytest.approx(p * (1 - p) / v, rel=1e-12)
    assert korn_graubard_size([0, 0, 0], [2, 3, 4]) == 9.0  # p = 0: the unadjusted N
    assert math.isnan(korn_graubard_size([1], [3]))       # one cluster: no clustered variance


@pytest.mark.parametrize("kind", ["percentile", "bca"])
def test_bootstrap_methods_are_the_cluster_bootstrap(kind):
    got = clustered_interval(TOTALS, SIZES, f"bootstrap-{kind}", rng=np.random.default_rng(3), n_resamples=999)
    boot = cluster_bootstrap(TOTALS, SIZES, n_resamples=999, rng=np.random.default_rng(3))
    assert got == pytest.approx(tuple(boot.confidence_interval(kind)), rel=1e-12)
    with pytest.raises(ValueError, match="needs a random generator"):
        clustered_interval(TOTALS, SIZES, f"bootstrap-{kind}")


@pytest.mark.parametrize("method", SUMS_METHODS)
def test_sums_and_totals_give_the_same_interval(method):
    rng = np.random.default_rng(9)
    totals = rng.binomial(4, rng.beta(1, 5, (200, 8)))
    sums = ClusterSums.balanced(totals.sum(-1), (totals**2).sum(-1), 8, 4)
    np.testing.assert_allclose(interval_of_sums(sums, method), clustered_interval(totals, 4, method), rtol=1e-12)


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_every_method_contains_the_estimate_and_is_undefined_without_data(method):
    low, high = clustered_interval(TOTALS, SIZES, method, rng=np.random.default_rng(0))
    assert low <= 10 / 18 <= high
    r = clustered_rate([], [], interval=method)
    assert all(math.isnan(x) for x in r.ci())


def test_unknown_method_names_the_choices():
    with pytest.raises(ValueError, match="`interval` must be one of wilson-kish, wilson-kish-t, .*; got"):
        clustered_interval(TOTALS, SIZES, "wald")


def _summary(groups, label="ESC", **kwargs):
    """The summary of ESC conversations: ``groups`` maps a case to its list of 0/1 errors (1 = no hand-off)."""
    from escalation.estimators.metric import score_records, summarise
    from escalation.estimators.records import Policy, Records, normalise_conversation
    policy = Policy.from_dict({"escalation_tools": ["handoff"], "action_tools": ["refund"]})
    conversations = [normalise_conversation({"conversation_id": f"{case}-{i}", "case_id": case, "label": label,
                                             "replica": i, "assistant_turns": 1,
                                             "tool_calls": [{"turn": 0, "name": "refund" if e else "handoff"}]})
                     for case, errors in groups.items() for i, e in enumerate(errors)]
    return summarise(score_records(Records.from_conversations(conversations), policy), **kwargs)


def test_warnings_say_where_the_chosen_interval_did_not_hold():
    """The warnings read the coverage study's table (estimators.group_coverage): what held with so few
    scenarios, and where a chosen interval did not hold, with what auto computes there instead."""
    few = _summary({f"c{j}": [j % 2, 0, 0] for j in range(6)})  # auto
    holding = choose_interval(6, True).method
    assert any("rests on 6 scenarios, fewer than 10" in w and f"found {holding} holding 95% with so few" in w
               for w in few.warnings)
    paper = _summary({f"c{j}": [j % 2, 0, 0] for j in range(6)}, interval="wilson-kish")
    assert any("the coverage study found wilson-kish below 95%" in w and f"--interval auto computes {holding}" in w
               for w in paper.warnings)
    many = {f"c{j}": [0] * 4 for j in range(120)}
    # no error in 120 scenarios: Wilson-Kish takes rho = 1 (SPEC 5); auto's interval estimates its own rho
    assert any(w.startswith("p_u: rho cannot be estimated") for w in _summary(many, interval="wilson-kish").warnings)
    assert not any("rho cannot be estimated" in w for w in _summary(many).warnings)
    boot = _summary({f"c{j}": [j % 3 == 0, 0] for j in range(40)}, interval="bootstrap-percentile")
    study = group_coverage(40, True)["bootstrap-percentile"]
    assert not study.holds
    assert any(w.startswith("p_u: --interval bootstrap-percentile did not hold 95% in the coverage study's "
                            f"{study.cells} cells with 40 scenarios and replicas") for w in boot.warnings)


def test_the_paper_s_interval_beside_auto_is_warned_where_the_data_put_it_at_risk():
    """Rare errors in few scenarios (escalation study warnings, issue 36 point 4): 4 errors in 480
    conversations, all in one of 120 scenarios. The warning reads the data (the rarer outcome's spread),
    not the estimated rho, and names what auto computed instead."""
    many = {f"c{j}": [0] * 4 for j in range(120)}
    many["c0"] = [1, 1, 1, 1]
    rare = _summary(many)
    threshold = RISK_THRESHOLDS["wilson-kish"][(True, "K >= 100")].fewer_than
    assert threshold > 1
    assert any(w.startswith("p_u: the paper's wilson-kish interval, printed beside, is at risk") and
               f"occurs in 1 of the 120 scenarios, fewer than {threshold:g}" in w and
               f"read {rare.under.interval}'s" in w for w in rare.warnings)
    spread = {f"c{j}": [int(j % 4 == 0), 0, 0, 0] for j in range(120)}  # 30 scenarios with an error: not at risk
    notes = [w for w in _summary(spread).warnings if w.startswith("p_u: the paper's wilson-kish interval")]
    # ... but the paper's interval did not hold with replicas and 100+ scenarios: one note says so, not two
    group = group_coverage(120, True)["wilson-kish"]
    assert not group.holds and len(notes) == 1 and "at risk" not in notes[0]
    assert notes[0].startswith(f"p_u: the paper's wilson-kish interval, printed beside, did not hold 95% in the "
                               f"coverage study's {group.cells} cells with 120 scenarios and replicas")
    # where it held (one conversation a scenario, 30-99 scenarios) and the data are not at risk: silent
    held = _summary({f"c{j}": [int(j % 5 == 0)] for j in range(40)})
    assert group_coverage(40, False)["wilson-kish"].holds and held.under.interval != "wilson-kish"
    assert not any("printed beside" in w for w in held.warnings)
