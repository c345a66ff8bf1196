"""The sample-size study: its data-generating mechanism, the validation of plans, the run."""
from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest

from escalation.cli import main
from escalation.estimators import anova_icc, plan_difference, plan_interval
from escalation.studies._sample_size import (design_grid, draw_cluster_totals, draw_paired_rates, planning_tables,
                                 run_cell, run_study)

NOMINAL = 0.95


def _row(**kw):
    base = dict(p_b=np.nan, correlation=np.nan, design="", power=np.nan, alpha=np.nan,
                half_width=0.05, confidence=NOMINAL, nsim=1000)
    return base | kw


def _by(rows, method, stat):
    (row,) = [r for r in rows if r["method"] == method and r["stat"] == stat]
    return row


# ------------------------------------------------------------------ data-generating mechanism

@pytest.mark.parametrize("rho, m", [(0.05, 5), (0.2, 3), (0.5, 8)])
def test_realised_icc_matches_rho(rho, m):
    # one data set of 20,000 clusters; SE of the ANOVA ICC (Fisher 1925; Donner 1986):
    # sqrt(2 (1 - rho)^2 (1 + (m - 1) rho)^2 / (m (m - 1) (K - 1))); tolerance 4 SE
    k = 20_000
    totals = draw_cluster_totals(0.3, rho, 1, k, m, rng=np.random.default_rng(11))
    estimate = float(anova_icc(totals, m, truncate=False)[0])
    se = math.sqrt(2 * (1 - rho) ** 2 * (1 + (m - 1) * rho) ** 2 / (m * (m - 1) * (k - 1)))
    assert abs(estimate - rho) < 4 * se
    assert abs(totals.mean() / m - 0.3) < 4 * math.sqrt(0.21 * (1 + (m - 1) * rho) / (k * m))


@pytest.mark.parametrize("correlation", [0.5, -0.3, 0.9])
def test_paired_rates_have_the_target_correlation_and_marginals(correlation):
    # 20 batches of 10,000 pairs: the mean of the batch correlations is within 4 standard
    # errors (sd of the batches / sqrt(20)) of the target; batch means, because the mixture
    # is far from normal and the normal-theory SE (1 - r^2) / sqrt(N) is too small for it
    batches, size = 20, 10_000
    n = batches * size
    a, b = draw_paired_rates(0.1, 0.2, 0.2, correlation, batches, size, rng=np.random.default_rng(3))
    r = np.array([np.corrcoef(a[i], b[i])[0, 1] for i in range(batches)])
    assert abs(r.mean() - correlation) < 4 * r.std(ddof=1) / math.sqrt(batches)
    # marginals keep mean p and variance rho p (1 - p) (beta with ICC rho)
    for theta, p in ((a, 0.1), (b, 0.2)):
        assert abs(theta.mean() - p) < 4 * math.sqrt(0.2 * p * (1 - p) / n)
        assert theta.var() == pytest.approx(0.2 * p * (1 - p), rel=0.03)


def test_paired_rates_refuse_an_impossible_correlation():
    with pytest.raises(ValueError, match=r"correlation=-0.99 is beyond the -0.9"):
        draw_paired_rates(0.1, 0.2, 0.05, -0.99, 1, 10, rng=np.random.default_rng(0))


# ------------------------------------------------------------------ validation of the plans

@pytest.mark.parametrize("kind, p, rho, m", [("rate", 0.1, 0.1, 5), ("rate", 0.2, 0.0, 10),
                                              ("pi", 0.6, 0.05, 3)])
def test_interval_plans_deliver_their_half_width_and_coverage(kind, p, rho, m):
    rows = run_cell(_row(kind=kind, p=p, rho=rho, replicas=m), np.random.SeedSequence(606))
    k = rows[0]["scenarios"]
    assert k == plan_interval(p, rho=rho, replicas=m, half_width=0.05).scenarios
    for method in ("wilson_kish_true_rho", "wilson_kish_est_rho"):
        coverage = _by(rows, method, "coverage")
        exact = _by(rows, method, "exact_coverage")["est"]
        # the simulation agrees with the exact coverage (estimators._exact) within 3 MCSE
        assert abs(coverage["est"] - exact) <= 3 * coverage["mcse"]
        misses = _by(rows, method, "miss_below")["est"] + _by(rows, method, "miss_above")["est"]
        assert coverage["est"] + misses == pytest.approx(1.0)
    # issue 6 checks, with the planned (true) rho: median half-width <= h, coverage >= nominal - 2 MCSE
    true = _by(rows, "wilson_kish_true_rho", "coverage")
    assert true["est"] >= NOMINAL - 2 * true["mcse"]
    assert _by(rows, "wilson_kish_true_rho", "median_half_width")["est"] <= 0.05


@pytest.mark.parametrize("design, correlation", [("unpaired", np.nan), ("paired", 0.5)])
def test_power_plans_reach_their_power(design, correlation):
    row = _row(kind="difference", p=0.1, p_b=0.2, rho=0.05, replicas=5, design=design,
               correlation=correlation, power=0.8, alpha=0.05, half_width=np.nan, confidence=np.nan)
    rows = run_cell(row, np.random.SeedSequence(707))
    plan = plan_difference(0.1, 0.2, rho=0.05, replicas=5, power=0.8, design=design,
                           correlation=None if design == "unpaired" else 0.5)
    assert rows[0]["scenarios"] == plan.scenarios and rows[0]["planned"] == plan.achieved_power
    methods = {"unpaired": ("cluster_z", "donner_klar"), "paired": ("paired_z",)}[design]
    assert {r["method"] for r in rows} == set(methods)
    for method in methods:
        power = _by(rows, method, "power")
        # realised power within 3 MCSE of the plan's normal-rule power (MCSE at 1000 reps: 0.0125)
        assert abs(power["est"] - plan.achieved_power) <= 3 * power["mcse"]
        assert power["est"] >= 0.8 - 2 * power["mcse"]


def test_planning_tables_respect_the_floor_and_the_planner():
    tables = planning_tables()
    grid, by_m = tables["scenarios_grid"], tables["scenarios_by_replicas"]
    assert (grid.groupby("p")["scenarios"].apply(lambda s: s.is_monotonic_increasing)).all()
    row = grid[(grid["p"] == 0.1) & (grid["rho"] == 0.1)].iloc[0]
    assert row["scenarios"] == plan_interval(0.1, rho=0.1, replicas=5, half_width=0.05).scenarios
    # K m / deff >= n* and deff / m >= rho give K >= n* rho, the Wilson floor, for every m
    assert (by_m["scenarios"] >= by_m["floor_wilson"]).all()
    assert (by_m.groupby("rho")["scenarios"].apply(lambda s: s.is_monotonic_decreasing)).all()


def test_design_grid_sizes():
    full, smoke = design_grid(), design_grid(smoke=True)
    assert (full["nsim"] >= 2000).all() and len(full) == 64
    assert set(smoke["kind"]) == {"rate", "pi", "difference"} and (smoke["nsim"] == 200).all()


# ------------------------------------------------------------------ the run

def test_study_is_identical_for_any_number_of_workers(tmp_path):
    one = run_study(tmp_path / "one", smoke=True, nsim=60, n_jobs=1, seed=5, progress=False)
    two = run_study(tmp_path / "two", smoke=True, nsim=60, n_jobs=2, seed=5, progress=False)
    for name in ("validation.csv", "intervals.csv", "power.csv", "scenarios_grid.csv", "design.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    pd.testing.assert_frame_equal(one["validation"], two["validation"])
    for stem in ("scenarios_grid", "scenarios_by_replicas", "intervals", "power"):
        assert (tmp_path / "one" / f"{stem}.png").stat().st_size > 0
        assert (tmp_path / "one" / f"{stem}.pdf").stat().st_size > 0
        assert (tmp_path / "one" / f"{stem}.md").read_text().startswith("# ")
    report = (tmp_path / "one" / "report.md").read_text()
    assert "60 replications per plan" in report and "floor" in report


def test_cli_runs_the_smoke_study_and_rejects_bad_options(tmp_path, monkeypatch, capsys):
    def run(*args):
        monkeypatch.setattr(sys, "argv", ["escalation", "study", "sample-size", *map(str, args)])
        try:
            main()
        except SystemExit as exit_:
            return exit_.code
        return 0
    assert run("--out", tmp_path / "s", "--smoke", "--nsim", "40", "--seed", "3") == 0
    assert (tmp_path / "s" / "run.json").exists() and (tmp_path / "s" / "intervals.md").exists()
    capsys.readouterr()
    assert run("--out", tmp_path / "t", "--nsim", "1") == 2
    err = capsys.readouterr().err
    assert err == "error: escalation study sample-size: --nsim must be at least 2, got 1\n"
    assert not (tmp_path / "t").exists()
