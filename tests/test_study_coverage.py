"""The coverage study: outputs, reproducibility across n_jobs, replay, validation against exact coverage."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import orjson
import pandas as pd
import pytest
from scipy import stats

from escalation.studies import cell_seed, run_cells
from escalation.studies._coverage import (COLUMNS, METHODS, _simulate, build_design, cell_intervals, pair_cluster_pmf,
                              pair_outcome_icc, replay_replication, run_cell, run_study)

SEED = 7


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """The smoke study run twice, with one and with two workers."""
    one = tmp_path_factory.mktemp("jobs1")
    two = tmp_path_factory.mktemp("jobs2")
    run_study(one, smoke=True, n_jobs=1, seed=SEED, progress=False)
    result = subprocess.run([sys.executable, "-m", "escalation", "study", "coverage", "--out", str(two), "--smoke",
                             "--n-jobs", "2", "--seed", str(SEED)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return one, two


def test_coverage_csv_is_byte_identical_for_one_and_two_workers(smoke_runs):
    one, two = smoke_runs
    assert (one / "coverage.csv").read_bytes() == (two / "coverage.csv").read_bytes()
    assert (one / "design.csv").read_bytes() == (two / "design.csv").read_bytes()


def test_outputs_and_columns(smoke_runs):
    out, _ = smoke_runs
    table = pd.read_csv(out / "coverage.csv", keep_default_na=False)
    assert tuple(table.columns) == COLUMNS
    assert set(table["method"]) == set(METHODS) and set(table["estimand"]) == {"p_u", "pi"}
    boot = table[table["method"].str.startswith("bootstrap")]
    assert (boot["exact_coverage"] == "").all()  # empty where not computable
    wilson = table[~table["method"].str.startswith("bootstrap")]
    assert pd.to_numeric(wilson["exact_coverage"]).between(0, 1).all()
    design = pd.read_csv(out / "design.csv")
    assert list(design.columns[:2]) == ["cell", "estimand"] and len(design) * len(METHODS) == len(table)
    # the smoke keeps an unclustered cell and a clustered one
    assert ((design["rho"] == 0) & (design["replicas"] == 1)).any()
    assert ((design["rho"] > 0) & (design["replicas"] > 1)).any()
    facts = orjson.loads((out / "run.json").read_bytes())
    assert facts["seed"] == SEED and facts["n_jobs"] == 1 and facts["version"] and facts["started"]
    assert "elapsed_seconds" in facts
    for stem in ("coverage_by_p_p_u_m1", "coverage_by_p_pi_m3", "coverage_by_scenarios_p_u", "width_against_coverage"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.pdf").stat().st_size > 0
    report = (out / "report.md").read_text()
    for heading in ("## Design (ADEMP)", "## Validation", "## Findings", "## Summary by method"):
        assert heading in report


def test_miss_shares_and_coverage_are_consistent(smoke_runs):
    table = pd.read_csv(smoke_runs[0] / "coverage.csv")
    undefined = 1 - table["coverage"] - table["miss_low"] - table["miss_high"]
    assert (undefined > -1e-9).all()
    # only BCa has undefined intervals
    assert (undefined[table["method"] != "bootstrap_bca"].abs() < 1e-9).all()
    np.testing.assert_allclose(table["coverage_mcse"],
                               np.sqrt(table["coverage"] * (1 - table["coverage"]) / table["nsim"]), rtol=1e-5)


def test_design_is_written_before_the_cells_run(tmp_path):
    design = pd.DataFrame({"a": [1, 2]})

    def cell(row, seed_seq):
        assert (tmp_path / "design.csv").exists()
        return [{"value": row["a"] * 10, "draw": np.random.default_rng(seed_seq).random()}]

    table = run_cells(design, cell, seed=3, n_jobs=1, out_dir=tmp_path, progress=False)
    assert list(table.columns) == ["cell", "a", "value", "draw"]
    assert list(table["value"]) == [10, 20]
    assert table["draw"].iloc[1] == np.random.default_rng(np.random.SeedSequence(3).spawn(2)[1]).random()


def test_cell_seed_is_the_spawned_child():
    children = np.random.SeedSequence(11).spawn(5)
    for i, child in enumerate(children):
        assert cell_seed(11, i).generate_state(4).tolist() == child.generate_state(4).tolist()


def _row(design, **conditions):
    mask = np.ones(len(design), dtype=bool)
    for key, value in conditions.items():
        mask &= np.isclose(design[key], value) if isinstance(value, float) else design[key] == value
    row = design[mask].iloc[0].to_dict()
    return row


@pytest.mark.parametrize("conditions", [
    {"estimand": "p_u", "p": 0.05, "rho": 0.0, "scenarios": 30, "replicas": 1},
    {"estimand": "pi", "p": 0.9, "rho": 0.0, "scenarios": 10, "replicas": 1},
])
def test_wilson_monte_carlo_coverage_matches_exact_without_clustering(conditions):
    # Validation of the issue: with rho = 0 and m = 1 the Monte Carlo coverage of the Wilson interval lies
    # within 3 MCSE of its exact coverage (fixed seed; MCSE from the exact value).
    design = build_design(nsim=4000)
    design.insert(0, "cell", range(len(design)))
    row = _row(design, **conditions)
    result = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}["wilson"]
    se = math.sqrt(result["exact_coverage"] * (1 - result["exact_coverage"]) / 4000)
    assert abs(result["coverage"] - result["exact_coverage"]) <= 3 * se


def test_estimated_rho_monte_carlo_coverage_matches_exact_with_clustering():
    # The same check where the exact value comes from the (Y, S) enumeration: clustered data, rho estimated.
    design = build_design(nsim=4000)
    design.insert(0, "cell", range(len(design)))
    row = _row(design, estimand="p_u", p=0.1, rho=0.2, scenarios=10, replicas=8)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    for method in ("wilson", "wilson_kish_true_rho", "wilson_kish_est_rho"):
        exact = results[method]["exact_coverage"]
        assert abs(results[method]["coverage"] - exact) <= 3 * math.sqrt(exact * (1 - exact) / 4000)


def test_replay_reproduces_any_replication(tmp_path):
    design = build_design(smoke=True, nsim=1200)  # two chunks of replications
    design.insert(0, "cell", range(len(design)))
    design.to_csv(tmp_path / "design.csv", index=False)
    row = _row(design, estimand="pi", p=0.8, rho=0.2, scenarios=5, replicas=3)
    intervals = cell_intervals(row, cell_seed(SEED, row["cell"]))
    from_csv = pd.read_csv(tmp_path / "design.csv").iloc[int(row["cell"])].to_dict()
    for replication in (0, 17, 999, 1000, 1199):
        replay = replay_replication(from_csv, seed=SEED, replication=replication)
        for method in METHODS:  # bit-identical, NaN (undefined BCa) included
            np.testing.assert_equal(replay["intervals"][method],
                                    (intervals[method][0][replication], intervals[method][1][replication]))
        assert replay["totals"].shape == (5,) and replay["u"].shape == (5, 3)
        np.testing.assert_array_equal(replay["totals"], ((1 - replay["u"]) * (1 - replay["o"])).sum(axis=-1))
    with pytest.raises(ValueError, match="replication must lie in 0 .. 1199"):
        replay_replication(from_csv, seed=SEED, replication=1200)


@pytest.mark.parametrize("pi, rho, m", [(0.9, 0.2, 3), (0.5, 0.5, 8), (0.98, 0.05, 1)])
def test_pair_cluster_pmf_mean_correlation_and_simulation(pi, rho, m):
    pmf = pair_cluster_pmf(pi, rho, m)
    t = np.arange(m + 1)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert t @ pmf / m == pytest.approx(pi, rel=1e-10)
    if m > 1:
        # Var(T) = m pi (1 - pi) (1 + (m - 1) rho_outcome) for an exchangeable 0/1 cluster
        variance = (t**2) @ pmf - (t @ pmf) ** 2
        assert variance == pytest.approx(m * pi * (1 - pi) * (1 + (m - 1) * pair_outcome_icc(pi, rho)), rel=1e-9)
    # the simulated pair totals follow the pmf (chi-square goodness of fit at a fixed seed)
    row = {"estimand": "pi", "p": pi, "rho": rho, "scenarios": 50, "replicas": m}
    totals = _simulate(row, np.random.default_rng(1), 400)["totals"].ravel()
    observed = np.bincount(totals, minlength=m + 1)
    keep = pmf * totals.size >= 5
    expected = pmf[keep] * totals.size
    statistic = (((observed[keep] - expected) ** 2) / expected).sum() + 0.0
    assert stats.chi2.sf(statistic, max(keep.sum() - 1, 1)) > 1e-3


def test_bad_nsim_is_a_one_line_error_without_output(tmp_path):
    out = tmp_path / "never"
    result = subprocess.run([sys.executable, "-m", "escalation", "study", "coverage", "--out", str(out), "--nsim", "0"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "--nsim must be at least 1" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
