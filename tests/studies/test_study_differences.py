"""The differences study: outputs, reproducibility across n_jobs, and Monte Carlo checks at fixed seeds."""
from __future__ import annotations

import math
import warnings

import numpy as np
import orjson
import pandas as pd
import pytest
from typer.testing import CliRunner

from escalation.cli import app
from escalation.estimators.stats import (
    DegenerateIntervalWarning,
    anova_icc,
    clustered_interval,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_correlation,
)
from escalation.studies import DIFFERENCES_SEED, cell_seed, run_differences_study
from escalation.studies.differences._differences import (
    DIFFERENCE_COLUMNS,
    DIFFERENCE_METHODS,
    MODE_B_COLUMNS,
    MODE_B_METHODS,
    _stacked,
    build_design,
    difference_intervals,
    run_cell,
    simulate_mode_b,
    simulate_pairs,
)

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


SEED = 5
NSIM = 40  # the smoke grid with fewer data sets: the files, not the numbers, are checked here


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """The smoke study run twice: from Python with one worker, and by the command with two."""
    one, two = tmp_path_factory.mktemp("jobs1"), tmp_path_factory.mktemp("jobs2")
    run_differences_study(one, smoke=True, nsim=NSIM, n_jobs=1, seed=SEED, progress=False)
    result = CliRunner().invoke(app, ["study", "differences", "--out", str(two), "--smoke", "--nsim", str(NSIM),
                                      "--n-jobs", "2", "--seed", str(SEED)])
    assert result.exit_code == 0, result.output
    assert "differences study:" in result.output
    return one, two


def test_tables_are_byte_identical_for_one_and_two_workers(smoke_runs):
    one, two = smoke_runs
    for name in ("design", "differences", "mode_b", "summary", "by_scenarios", "failures", "recommendation"):
        assert (one / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name


def test_outputs(smoke_runs):
    out, _ = smoke_runs
    differences = pd.read_csv(out / "differences.csv")
    mode_b = pd.read_csv(out / "mode_b.csv")
    assert tuple(differences.columns) == ("cell", *DIFFERENCE_COLUMNS)
    assert tuple(mode_b.columns) == ("cell", *MODE_B_COLUMNS)
    assert set(differences["method"]) == set(DIFFERENCE_METHODS) and set(mode_b["method"]) == set(MODE_B_METHODS)
    design = pd.read_csv(out / "design.csv")
    parts = design["part"].value_counts()
    assert (len(differences), len(mode_b)) == (parts["difference"] * len(DIFFERENCE_METHODS),
                                               parts["mode_b"] * len(MODE_B_METHODS))
    for table in (differences, mode_b):
        assert (table["nsim"] == NSIM).all()
        np.testing.assert_allclose(table["coverage"] + table["miss_below"] + table["miss_above"] + table["undefined"],
                                   1.0, atol=1e-9)
    # only BCa leaves intervals undefined among the differences
    assert (differences.loc[differences["method"] != "bootstrap_bca", "undefined"] == 0).all()
    for stem in ("differences_coverage", "mode_b_coverage"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.pdf").stat().st_size > 0
    for name in ("differences", "mode_b", "summary", "by_scenarios", "failures", "recommendation"):
        assert (out / f"{name}.md").read_text().startswith("# ")
    report = (out / "report.md").read_text()
    for heading in ("## Design (ADEMP)", "## Validation", "## Findings", "## Recommendation", "## Summary by method"):
        assert heading in report
    facts = orjson.loads((out / "run.json").read_bytes())
    assert facts["study"] == "differences" and facts["seed"] == SEED and facts["nsim"] == NSIM


def test_design_grid():
    full = build_design()
    assert DIFFERENCES_SEED == 20261201
    diff = full[full["part"] == "difference"]
    assert sorted(diff["scenarios"].unique()) == [5, 10, 30, 100] and sorted(diff["replicas"].unique()) == [1, 3, 8]
    assert set(zip(diff["rho"], diff["between"])) == {(0.0, 0.0), (0.2, 0.0), (0.2, 0.5)}
    assert ((diff["p_a"] == diff["p_b"]).any() and (diff["p_a"] != diff["p_b"]).any()
            and (diff[["p_a", "p_b"]].min(axis=1) <= 0.02).any())
    assert set(full["part"]) == {"difference", "mode_b"} and len(build_design(smoke=True)) < len(full) / 5


def test_the_study_computes_the_intervals_of_compare():
    # Newcombe with each rate's Wilson-Kish limits and psi of the scenario totals, as compare does, one data
    # set at a time; and the stacked bootstrap equals each figure's own interval
    row = {"scenarios": 12, "replicas": 3, "rho": 0.2, "between": 0.5, "p_a": 0.1, "p_b": 0.2}
    y_a, y_b = simulate_pairs(row, np.random.default_rng(1), 6)
    got = difference_intervals(y_a, y_b, 3, np.random.default_rng(2), n_resamples=199)
    sizes = np.full(12, 3)
    for i in range(6):
        a, b = y_a[i].sum() / 36, y_b[i].sum() / 36
        psi = paired_correlation(y_a[i], sizes, y_b[i], sizes)
        ci = newcombe_paired_interval(a, clustered_interval(y_a[i], sizes), b, clustered_interval(y_b[i], sizes), psi)
        assert (got["newcombe_wilson_kish"][0][i], got["newcombe_wilson_kish"][1][i]) == pytest.approx(tuple(ci))
        assert got["psi"][i] == pytest.approx(psi)
    boots = paired_cluster_bootstrap(y_a, np.broadcast_to(sizes, y_a.shape), y_b, np.broadcast_to(sizes, y_b.shape),
                                     n_resamples=199, rng=np.random.default_rng(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        stacked = _stacked(boots).confidence_interval("bca", 0.95)
        for i, boot in enumerate(boots):
            np.testing.assert_allclose(tuple(boot.confidence_interval("bca", 0.95)), (stacked[0][i], stacked[1][i]))


def test_the_simulated_pairs_have_the_rates_and_correlations_drawn():
    row = {"scenarios": 50, "replicas": 8, "rho": 0.2, "between": 0.5, "p_a": 0.1, "p_b": 0.3}
    y_a, y_b = simulate_pairs(row, np.random.default_rng(4), 200)
    n = 200 * 50 * 8
    assert abs(y_a.sum() / n - 0.1) < 4 * math.sqrt(0.1 * 0.9 * (1 + 7 * 0.2) / n)
    assert abs(y_b.sum() / n - 0.3) < 4 * math.sqrt(0.3 * 0.7 * (1 + 7 * 0.2) / n)
    assert np.nanmean(anova_icc(y_a, 8)) == pytest.approx(0.2, abs=0.03)
    assert np.corrcoef(y_a.ravel(), y_b.ravel())[0, 1] > 0.15  # scenarios hard for A are hard for B
    counts = simulate_mode_b({"scenarios": 20, "replicas": 5, "p": 0.3, "rho": 0.2, "sensitivity": 0.75,
                              "specificity": 0.95, "validation_share": 0.3}, np.random.default_rng(5), 7)
    assert (counts["flag"] + counts["clear"]).sum(axis=1).tolist() == [30] * 7  # the validation subsample
    assert ((counts["main"] + counts["flag"] + counts["clear"]) == 5).all()
    assert (counts["err"] == counts["flag_err"] + counts["clear_err"]).all()


def _cell(**conditions) -> dict:
    design = build_design(nsim=800)
    design.insert(0, "cell", range(len(design)))
    mask = np.ones(len(design), dtype=bool)
    for key, value in conditions.items():
        mask &= np.isclose(design[key], value) if isinstance(value, float) else design[key] == value
    return design[mask].iloc[0].to_dict()


def test_bootstrap_and_newcombe_hold_their_level_with_many_scenarios():
    # Monte Carlo at a fixed seed: 100 clustered scenarios, 800 data sets: within 4 MCSE of 0.95
    row = _cell(part="difference", p_a=0.1, p_b=0.3, rho=0.2, between=0.5, scenarios=100, replicas=3)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    for method in ("bootstrap_percentile", "newcombe_wilson_kish"):
        assert abs(results[method]["coverage"] - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / 800), method
    assert results["bootstrap_percentile"]["mean_psi"] > 0.05  # the pairing is seen


def test_mode_b_wald_fails_with_replicas_and_the_cluster_interval_does_not():
    row = _cell(part="mode_b", p=0.3, rho=0.5, scenarios=100, replicas=10)
    results = {r["method"]: r for r in run_cell(row, cell_seed(SEED, row["cell"]))}
    mcse = math.sqrt(0.95 * 0.05 / 800)
    assert results["predictive_values_wald"]["coverage"] < 0.95 - 6 * mcse
    assert results["rogan_gladen_wald"]["coverage"] < 0.95 - 4 * mcse
    for method in ("predictive_values_cluster", "rogan_gladen_cluster"):
        assert results[method]["undefined"] == 0
        assert abs(results[method]["coverage"] - 0.95) <= 4 * mcse, method

