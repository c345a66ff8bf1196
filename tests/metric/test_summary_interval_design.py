"""summary.json's ``rho_used``, ``deff`` and ``n_eff`` are what the chosen interval used; the point estimate's
design is ``rho_point`` and ``deff_point`` (issue 36, point 5). Each interval is recomputed from what the summary
reports of it."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from escalation.cli.commands.score import print_summary
from escalation.estimators.metric import RESULT_COLUMNS, clustered_rate, summarise
from escalation.estimators.stats import (
    beta_binomial_fit,
    choose_interval,
    cluster_design,
    critical_value,
    korn_graubard_size,
    rho_upper_bound,
    wilson_interval,
)

#: 8 scenarios of 5 replicas, errors concentrated in a few (the estimate of rho understates the bound's)
ERRORS = [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [0] * 5, [0] * 5, [1, 1, 0, 0, 0], [0] * 5, [0] * 5, [0] * 5]
OUTCOME = [e for errors in ERRORS for e in errors]
CLUSTER = [j for j, errors in enumerate(ERRORS) for _ in errors]
TOTALS, SIZES = [sum(e) for e in ERRORS], [len(e) for e in ERRORS]


def _rate(interval):
    return clustered_rate(OUTCOME, CLUSTER, interval=interval, seed=3)


def test_the_point_design_is_reported_under_its_own_names():
    point = cluster_design(TOTALS, SIZES)
    for interval in ("wilson-kish", "wilson-kish-ucb", "korn-graubard", "bootstrap-bca"):
        r = _rate(interval)
        assert (r.rho, r.rho_point, r.deff_point) == (point.rho, point.rho_used, point.deff)
        d = r.to_dict()
        assert (d["rho_point"], d["deff_point"]) == (point.rho_used, point.deff)
    r = _rate("wilson-kish")
    assert (r.rho_used, r.deff, r.n_eff) == (point.rho_used, point.deff, point.n_eff)


def test_wilson_kish_ucb_reports_the_bound_it_used():
    r = _rate("wilson-kish-ucb")
    bound = rho_upper_bound(TOTALS, SIZES)
    assert r.rho_used == bound > r.rho_point
    assert r.deff == pytest.approx(1 + (5 - 1) * bound) and r.n_eff == pytest.approx(40 / r.deff)
    assert r.ci() == pytest.approx(tuple(wilson_interval(r.rate, r.n_eff)), rel=1e-12)


def test_the_cluster_variance_intervals_report_their_effective_size():
    size = korn_graubard_size(TOTALS, SIZES)
    r = _rate("wilson-cluster-t")
    assert r.rho_used != r.rho_used and r.n_eff == pytest.approx(min(size, 40)) and r.deff == 40 / r.n_eff
    assert r.ci() == pytest.approx(tuple(wilson_interval(r.rate, r.n_eff, df=7)), rel=1e-12)
    r = _rate("korn-graubard")
    assert r.n_eff == pytest.approx(size) and r.to_dict()["rho_used"] is None
    # Clopper-Pearson at n_eff times (t_{N-1} / t_{K-1})^2, capped at N
    df_size = min(40, r.n_eff * (critical_value(0.95, 39) / critical_value(0.95, 7)) ** 2)
    x = df_size * r.rate
    assert r.ci() == pytest.approx((stats.beta.ppf(0.025, x, df_size - x + 1),
                                    stats.beta.ppf(0.975, x + 1, df_size - x)), rel=1e-10)


@pytest.mark.parametrize("interval", ["beta-binomial-profile", "beta-binomial-bayes"])
def test_the_beta_binomial_intervals_report_their_rho(interval):
    r = _rate(interval)
    fit = beta_binomial_fit(TOTALS, SIZES, interval)
    assert r.rho_used == pytest.approx(float(fit.rho)) and r.deff == pytest.approx(1 + 4 * r.rho_used)
    assert r.ci() == pytest.approx((float(fit.low), float(fit.high)))


def test_a_bootstrap_reports_no_design_and_says_so(capsys):
    r = _rate("bootstrap-percentile")
    d = r.to_dict()
    assert d["rho_used"] is d["deff"] is d["n_eff"] is None and d["deff_point"] == pytest.approx(r.deff_point)
    assert all(math.isnan(x) for x in (r.rho_used, r.deff, r.n_eff))
    # the printed summary: a rho_used column, and what it means for the chosen interval
    rows = [{"conversation_id": f"{j}-{i}", "case_id": f"c{j}", "scenario_id": f"c{j}:ESC", "replica": i,
             "label": "ESC", "evaluated": True, "reason": None, "u": e, "o": None,
             "cause": "no_handoff" if e else None} for j, errors in enumerate(ERRORS) for i, e in enumerate(errors)]
    frame = pd.DataFrame(rows).reindex(columns=RESULT_COLUMNS)
    frame["unmarked_tools"] = [[] for _ in rows]
    for interval, phrase in (("bootstrap-percentile", "the bootstrap uses no rho"),
                             ("wilson-kish-ucb", "rho_used is the upper confidence bound of rho")):
        summary = summarise(frame, interval=interval, seed=1).to_dict()
        print_summary(summary, records="x.jsonl", fmt="jsonl", out_dir=None)
        out = capsys.readouterr().out
        assert "rho_used" in out.splitlines()[1] and phrase in " ".join(out.split())
    ucb = summarise(frame, interval="wilson-kish-ucb").to_dict()["under"]
    assert ucb["rho_used"] == pytest.approx(rho_upper_bound(TOTALS, SIZES))
    assert np.isclose(ucb["deff"], 1 + 4 * ucb["rho_used"]) and ucb["rho_point"] == pytest.approx(
        cluster_design(TOTALS, SIZES).rho_used)


def _by_hand(method: str, totals, sizes) -> tuple[float, float]:
    """The interval of ``method`` recomputed from its formula (the sources of ``estimators.clustered_interval``),
    not by the package's function: Wilson (1927) at Kish's n_eff, t on K - 1 df, the 0.9 upper bound of rho, the
    cluster variance's n*, Korn & Graubard's Clopper-Pearson; the beta-binomial fits by their own function."""
    y, n = np.asarray(totals, float), np.asarray(sizes, float)
    N, K, p = n.sum(), len(n), y.sum() / n.sum()
    design = cluster_design(totals, sizes)
    if method in ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb"):
        rho = rho_upper_bound(totals, sizes) if method == "wilson-kish-ucb" else design.rho_used
        m_bar = (n ** 2).sum() / N
        return tuple(wilson_interval(p, N / (1 + (m_bar - 1) * rho), df=K - 1 if method == "wilson-kish-t" else None))
    size = korn_graubard_size(totals, sizes)
    if method == "wilson-cluster-t":
        return tuple(wilson_interval(p, min(size, N), df=K - 1))
    if method == "korn-graubard":
        df_size = min(N, size * (critical_value(0.95, N - 1) / critical_value(0.95, K - 1)) ** 2)
        x = df_size * p
        return stats.beta.ppf(0.025, x, df_size - x + 1), stats.beta.ppf(0.975, x + 1, df_size - x)
    fit = beta_binomial_fit(totals, sizes, method)
    return float(fit.low), float(fit.high)


@pytest.mark.parametrize("replicas", [1, 5])
@pytest.mark.parametrize("scenarios", [8, 20, 40, 120])
def test_auto_computes_the_group_s_interval_and_prints_wilson_kish_beside(scenarios, replicas):
    """Issue 36 point 3: a hand-built data set of each design group goes through the summary with ``auto``; its
    interval is the one the study recommends there, recomputed by hand, and Wilson-Kish is reported beside it."""
    rng = np.random.default_rng(scenarios * 10 + replicas)
    totals = rng.binomial(replicas, rng.beta(0.5, 4.5, scenarios))  # errors spread unevenly over the scenarios
    sizes = np.full(scenarios, replicas)
    outcome = [int(i < t) for t in totals for i in range(replicas)]
    cluster = [j for j in range(scenarios) for _ in range(replicas)]
    r = clustered_rate(outcome, cluster)  # the default: auto
    chosen = choose_interval(scenarios, replicas > 1)
    assert (r.requested, r.interval, r.interval_reason) == ("auto", chosen.method, chosen.reason)
    assert r.ci() == pytest.approx(_by_hand(chosen.method, totals, sizes), rel=1e-9, abs=1e-12)
    d = r.to_dict()
    assert d["interval"] == chosen.method and d["ci"] == pytest.approx(list(r.ci()))
    assert d["ci_wilson_kish"] == pytest.approx(list(_by_hand("wilson-kish", totals, sizes)), rel=1e-9)
    assert d["interval_reason"].startswith("auto: the narrowest interval that held 95%")
