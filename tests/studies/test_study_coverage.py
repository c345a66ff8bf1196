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

from escalation.estimators.stats import LIKELIHOOD_METHODS, SUMS_METHODS
from escalation.studies import cell_seed, run_cells
from escalation.studies.coverage._coverage import (
    BOOTSTRAP_METHODS,
    CHUNK,
    COLUMNS,
    FIXED_RHO_METHODS,
    METHODS,
    _simulate,
    build_design,
    cell_intervals,
    cell_sizes,
    pair_cluster_pmf,
    pair_outcome_icc,
    replay_replication,
    run_cell,
    run_coverage_study as run_study,
)

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


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


def test_outputs_are_byte_identical_for_one_and_two_workers(smoke_runs):
    one, two = smoke_runs
    for name in ("coverage.csv", "design.csv", "summary.csv", "recommendation.csv", "report.md"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_outputs_and_columns(smoke_runs):
    out, _ = smoke_runs
    table = pd.read_csv(out / "coverage.csv", keep_default_na=False)
    assert tuple(table.columns) == COLUMNS
    assert set(table["method"]) == set(METHODS) and set(table["estimand"]) == {"p_u", "pi"}
    design = pd.read_csv(out / "design.csv")
    assert list(design.columns[:2]) == ["cell", "estimand"] and len(design) * len(METHODS) == len(table)
    # equal and unequal sizes, rho = 0 and clustered cells, and m = 1 only with rho = 0
    assert set(design["size_cv"]) == {0.0, 1.0} and (design["m_bar"] > design["replicas"]).any()
    assert ((design["rho"] > 0) & (design["replicas"] > 1)).any()
    assert (design.loc[design["replicas"] == 1, "rho"] == 0).all()
    boot = table[table["method"].isin(BOOTSTRAP_METHODS)]
    monte_carlo_only = table["method"].isin(BOOTSTRAP_METHODS + LIKELIHOOD_METHODS)
    assert (table.loc[monte_carlo_only, "exact_coverage"] == "").all()  # never exact
    equal = table["size_cv"] == 0
    wilson_type = ~monte_carlo_only
    assert pd.to_numeric(table.loc[equal & wilson_type, "exact_coverage"]).between(0, 1).all()
    fixed = table["method"].isin(FIXED_RHO_METHODS)
    assert pd.to_numeric(table.loc[~equal & fixed, "exact_coverage"]).between(0, 1).all()
    # rho read from the data with unequal sizes: exact within the enumeration's budget, which every K <= 10 cell fits
    few = table["scenarios"] <= 10
    assert pd.to_numeric(table.loc[~equal & wilson_type & few, "exact_coverage"]).between(0, 1).all()
    assert not table["rerun"].any() and facts_rerun_off(out)  # a smoke run reruns no cell
    # the bootstraps with unequal sizes: 200 replications up to K = 10, not run beyond
    unequal_boot = boot[boot["size_cv"] != 0]
    assert set(unequal_boot.loc[unequal_boot["scenarios"] == 3, "nsim"]) == {200}
    assert set(unequal_boot.loc[unequal_boot["scenarios"] == 30, "nsim"]) == {0}
    assert (unequal_boot.loc[unequal_boot["scenarios"] == 30, "coverage"] == "").all()
    facts = orjson.loads((out / "run.json").read_bytes())
    assert facts["seed"] == SEED and facts["n_jobs"] == 1 and facts["version"] and facts["started"]
    assert facts["nsim"] == 200 and "elapsed_seconds" in facts
    for stem in ("coverage_by_scenarios_p_u", "coverage_by_p_pi", "width_against_coverage", "misses_by_method"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.pdf").stat().st_size > 0
    report = (out / "report.md").read_text()
    for heading in ("## Design (ADEMP)", "## Validation", "## Findings", "## Summary by method", "## Recommendation"):
        assert heading in report
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["method"]) == list(METHODS)
    assert (summary["min_coverage"] <= summary["mean_coverage"]).all()
    assert (out / "summary.md").read_text().startswith("# ") and (out / "recommendation.md").exists()


def facts_rerun_off(out) -> bool:
    return orjson.loads((out / "run.json").read_bytes())["rerun"] is False


def test_miss_shares_and_coverage_are_consistent(smoke_runs):
    table = pd.read_csv(smoke_runs[0] / "coverage.csv")
    run = table[table["nsim"] > 0]
    undefined = 1 - run["coverage"] - run["miss_low"] - run["miss_high"]
    assert (undefined > -1e-9).all()
    assert (undefined[run["method"] != "bootstrap-bca"].abs() < 1e-9).all()  # only BCa is ever undefined
    np.testing.assert_allclose(run["coverage_mcse"], np.sqrt(run["coverage"] * (1 - run["coverage"]) / run["nsim"]),
                               rtol=1e-5)
    exact = table[table["exact_coverage"].notna()]
    np.testing.assert_allclose(exact["exact_coverage"] + exact["exact_miss_low"] + exact["exact_miss_high"], 1.0,
                               atol=2e-6)  # coverage.csv holds 6 significant digits


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
    return design[mask].iloc[0].to_dict()


def _full_design(nsim):
    design = build_design(nsim=nsim)
    design.insert(0, "cell", range(len(design)))
    return design


def _within_mcse(result, nsim, z=3.5):
    exact = result["exact_coverage"]
    return abs(result["coverage"] - exact) <= z * math.sqrt(exact * (1 - exact) / nsim)


@pytest.mark.parametrize("conditions", [
    {"estimand": "p_u", "p": 0.05, "rho": 0.0, "scenarios": 30, "replicas": 1, "size_cv": 0.0},
    {"estimand": "pi", "p": 0.9, "rho": 0.0, "scenarios": 10, "replicas": 1, "size_cv": 0.0},
])
def test_wilson_monte_carlo_coverage_matches_exact_without_clustering(conditions):
    # with rho = 0 and m = 1 the Monte Carlo coverage of every Wilson-type interval lies within 3.5 MCSE of
    # its exact coverage (fixed seed; MCSE from the exact value)
    design = _full_design(3000)
    row = _row(design, **conditions)
    for result in run_cell(row, cell_seed(SEED, row["cell"])):
        if result["method"] not in BOOTSTRAP_METHODS + LIKELIHOOD_METHODS:  # Monte Carlo only
            assert _within_mcse(result, 3000), result


def test_estimated_rho_monte_carlo_coverage_matches_exact_with_clustering():
    # the same where the exact value comes from the (Y, S) enumeration: clustered data, rho read from the data
    design = _full_design(3000)
    row = _row(design, estimand="p_u", p=0.1, rho=0.2, scenarios=10, replicas=8, size_cv=0.0)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    for method in METHODS:
        if method not in BOOTSTRAP_METHODS + LIKELIHOOD_METHODS:  # Monte Carlo only
            assert _within_mcse(results[method], 3000), method
    # the bootstraps ran on every replication and have no exact value
    assert all(results[m]["nsim"] == 3000 and math.isnan(results[m]["exact_coverage"]) for m in BOOTSTRAP_METHODS)


@pytest.mark.parametrize("estimand, p", [("p_u", 0.1), ("pi", 0.9)])
def test_fixed_rho_monte_carlo_coverage_matches_exact_with_unequal_sizes(estimand, p):
    # unequal sizes: the per-cluster pmfs (beta-binomial, or the hypergeometric pair law) against the simulation
    design = _full_design(3000)
    row = _row(design, estimand=estimand, p=p, rho=0.2, scenarios=30, replicas=8, size_cv=1.0)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    for method in FIXED_RHO_METHODS:
        assert _within_mcse(results[method], 3000), method
    # the oracle with the true rho and m_bar = sum n_j^2 / N keeps its level; ignoring clustering does not
    assert results["wilson-kish-true-rho"]["exact_coverage"] > 0.94 > results["wilson"]["exact_coverage"]
    # rho read from the data: 30 clusters of 1 to 33 lie beyond the enumeration's budget (MAX_UNEQUAL_STATES)
    for method in set(METHODS) - set(FIXED_RHO_METHODS):
        assert math.isnan(results[method]["exact_coverage"])


@pytest.mark.parametrize("estimand, p", [("p_u", 0.1), ("pi", 0.9)])
def test_estimated_rho_monte_carlo_coverage_matches_exact_with_unequal_sizes(estimand, p):
    # the largest unequal cells with K <= 10 (sizes 3 .. 16): every method of the cluster sums exact (issue 36),
    # each within 3.5 MCSE of the simulation
    design = _full_design(3000)
    row = _row(design, estimand=estimand, p=p, rho=0.2, scenarios=10, replicas=8, size_cv=0.5)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    for method in SUMS_METHODS:
        assert _within_mcse(results[method], 3000), method
    for method in BOOTSTRAP_METHODS + LIKELIHOOD_METHODS:
        assert math.isnan(results[method]["exact_coverage"])


def test_replay_reproduces_any_replication(tmp_path):
    design = build_design(smoke=True, nsim=2 * CHUNK + 100)  # three chunks of replications
    design.insert(0, "cell", range(len(design)))
    design.to_csv(tmp_path / "design.csv", index=False)
    from_csv = pd.read_csv(tmp_path / "design.csv")
    for conditions in ({"estimand": "pi", "p": 0.8, "rho": 0.2, "scenarios": 3, "replicas": 3, "size_cv": 1.0},
                       {"estimand": "p_u", "p": 0.2, "rho": 0.2, "scenarios": 30, "replicas": 3, "size_cv": 0.0}):
        row = _row(design, **conditions)
        bootstrapped = int(row["nsim_bootstrap"])
        intervals = cell_intervals(row, cell_seed(SEED, row["cell"]))
        csv_row = from_csv.iloc[int(row["cell"])].to_dict()
        for replication in (0, 17, CHUNK - 1, CHUNK, 2 * CHUNK + 99):
            replay = replay_replication(csv_row, seed=SEED, replication=replication)
            expected = [m for m in METHODS if m not in BOOTSTRAP_METHODS or replication < bootstrapped]
            assert sorted(replay["intervals"]) == sorted(expected)
            for method in expected:  # bit-identical, NaN (undefined BCa) included
                np.testing.assert_equal(replay["intervals"][method],
                                        (intervals[method][0][replication], intervals[method][1][replication]))
            np.testing.assert_array_equal(replay["sizes"], cell_sizes(row))
            assert replay["totals"].shape == (row["scenarios"],) and np.all(replay["totals"] <= replay["sizes"])
        with pytest.raises(ValueError, match=f"replication must lie in 0 .. {2 * CHUNK + 99}"):
            replay_replication(csv_row, seed=SEED, replication=2 * CHUNK + 100)


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
    # the simulated pair totals (a binomial given q_u and q_o) follow the hypergeometric derivation of the pmf
    row = {"estimand": "pi", "p": pi, "rho": rho}
    totals = _simulate(row, np.full(50, m), np.random.default_rng(1), 400).ravel()
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
