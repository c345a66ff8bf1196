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
