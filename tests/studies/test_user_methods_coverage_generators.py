"""The coverage study's data-generating models besides the beta-binomial (issue 35): the logit-normal with its
latent ICC, the rates of a scored run (``--from-run``), and a researcher's generator ``g(rng, sizes, row)``."""
from __future__ import annotations

import math

import numpy as np
import orjson
import pandas as pd
import pytest

from escalation.cli.commands._study_options import Generator
from escalation.estimators.records import InputError
from escalation.estimators.stats import anova_icc
from escalation.studies import cell_seed
from escalation.studies._user_methods import UserFunction, function_identity, read_grid
from escalation.studies.coverage._coverage import (
    _FROM_RUN_KEYS,
    _FROM_RUN_REFUSED,
    GRID_KEYS,
    METHODS,
    beta_binomial,
    build_design,
    cell_sizes,
    run_cell,
    run_coverage_study,
)
from escalation.studies.coverage._generators import (
    GENERATORS,
    RunRates,
    _logit_normal_rates,
    logit_normal,
    logit_normal_parameters,
    observed_icc,
)

from .._helpers import run_cli

GRID = {"p": [0.1], "rho": [0.3], "scenarios": [10], "replicas": [5], "size_cv": [0.0], "estimand": ["p_u", "pi"]}


def test_the_command_line_names_the_generators_of_the_study():
    assert tuple(g.value for g in Generator) == GENERATORS


@pytest.mark.parametrize("p, rho", [(0.1, 0.2), (0.02, 0.5), (0.5, 0.05)])
def test_logit_normal_has_mean_p_and_latent_icc_rho(p, rho):
    mu, sigma = logit_normal_parameters(p, rho)
    assert sigma**2 / (sigma**2 + math.pi**2 / 3) == pytest.approx(rho, abs=1e-12)
    # at a fixed seed, 200,000 scenario rates: their mean, the variance of their logits (sigma^2, normal) and the
    # 0/1 outcome's ICC lie within 4 Monte Carlo standard errors of the model's
    q = _logit_normal_rates(p, rho, 200_000, np.random.default_rng(20240501))
    n = q.size
    assert abs(q.mean() - p) <= 4 * q.std() / math.sqrt(n)
    logits = np.log(q / (1 - q))
    assert abs(logits.var(ddof=1) - sigma**2) <= 4 * sigma**2 * math.sqrt(2 / (n - 1))
    variance_mcse = ((q - q.mean()) ** 2).std() / math.sqrt(n)  # of a variance: sqrt((m4 - var^2) / n)
    assert abs(q.var() / (p * (1 - p)) - observed_icc(p, rho)) <= 4 * variance_mcse / (p * (1 - p))
    assert observed_icc(p, rho) < rho  # the 0/1 scale's correlation is below the latent one


def test_logit_normal_outcome_icc_matches_rho_outcome_in_the_data():
    """The ANOVA estimate of the outcome's ICC over 400 data sets of 200 scenarios of 10: within 4 MCSE (the
    standard error of the mean of the 400 estimates) of ``rho_outcome``."""
    row = build_design(grid=read_grid(GRID, GRID_KEYS), generator=logit_normal).iloc[0].to_dict()
    sizes = np.full((400, 200), 10)
    totals = logit_normal(np.random.default_rng(7), sizes, row)
    estimates = anova_icc(totals, sizes, truncate=False)
    mcse = estimates.std(ddof=1) / math.sqrt(len(estimates))
    assert abs(estimates.mean() - row["rho_outcome"]) <= 4 * mcse
    rates = totals.sum(axis=1) / sizes.sum(axis=1)
    assert abs(rates.mean() - row["p"]) <= 4 * rates.std(ddof=1) / math.sqrt(len(rates))
    assert row["rho_outcome"] == pytest.approx(observed_icc(0.1, 0.3)) and row["rho"] == 0.3


def test_the_generator_changes_the_data_and_leaves_exact_coverage_to_the_beta_binomial():
    design = build_design(grid=read_grid(GRID, GRID_KEYS), nsim=200)
    logit = build_design(grid=read_grid(GRID, GRID_KEYS), nsim=200, generator=logit_normal)
    assert (logit["rho_outcome"] < design["rho_outcome"]).all()
    row = design.iloc[0].to_dict()
    beta = pd.DataFrame(run_cell(row, cell_seed(3, 0)))
    other = pd.DataFrame(run_cell(logit.iloc[0].to_dict(), cell_seed(3, 0), generator=logit_normal))
    assert beta["exact_coverage"].notna().any() and other["exact_coverage"].isna().all()
    assert not np.array_equal(beta["mean_width"], other["mean_width"])


def test_a_researchers_generator_meets_the_contract():
    """The beta-binomial given as a researcher's function draws the study's very data."""
    origin, digest = function_identity(beta_binomial)
    own = UserFunction("generator", beta_binomial, origin, digest)
    row = build_design(grid=read_grid(GRID, GRID_KEYS), nsim=120).iloc[1].to_dict()
    plain = pd.DataFrame(run_cell(row, cell_seed(5, 1)))
    drawn = pd.DataFrame(run_cell(row, cell_seed(5, 1), generator=own))
    pd.testing.assert_frame_equal(plain.drop(columns=[c for c in plain if c.startswith("exact")]),
                                  drawn.drop(columns=[c for c in drawn if c.startswith("exact")]))
    assert origin.endswith("_coverage:beta_binomial") and len(cell_sizes(row)) == 10


@pytest.mark.parametrize("bad, says", [
    (lambda rng, sizes, row: sizes[:, :2], "totals of shape (2, 2)"),
    (lambda rng, sizes, row: sizes + 1, "outside 0 .. sizes"),
    (lambda rng, sizes, row: sizes / 3, "not whole numbers"),
])
def test_a_bad_generator_stops_before_anything_is_written(tmp_path, bad, says):
    out = tmp_path / "never"
    with pytest.raises(InputError, match=r"^generator 'generator': .*" + says.replace("(", r"\(").replace(")", r"\)")):
        run_coverage_study(out, grid=GRID, generator=bad, progress=False)
    assert not out.exists()
    with pytest.raises(InputError, match="unknown generator 'normal'"):
        run_coverage_study(out, grid=GRID, generator="normal", progress=False)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A scored folder: 30 cases of 4 replicas of an assistant that errs often, simulated and scored."""
    folder = tmp_path_factory.mktemp("run")
    monkeypatch = pytest.MonkeyPatch()
    try:
        assert run_cli(monkeypatch, "simulate", "--profile", "invents_actions", "--cases", 30, "--replicas", 4,
                       "--rho", 0.2, "--mode", "record", "--seed", 1, "--out", folder / "sim") == 0
        assert run_cli(monkeypatch, "score", folder / "sim" / "records.jsonl", "--policy",
                       folder / "sim" / "policy.json", "--out", folder / "scored") == 0
    finally:
        monkeypatch.undo()
    return folder / "scored"


def test_from_run_draws_the_runs_scenario_rates(scored):
    rates = RunRates.read(scored)
    lines = [orjson.loads(line) for line in (scored / "conversations.jsonl").read_bytes().splitlines()]
    esc = pd.DataFrame([line for line in lines if line["label"] == "ESC" and line["evaluated"]])
    expected = esc.groupby("scenario_id")["u"].mean()
    assert rates.rates == tuple(expected.sort_index()) and rates.p == pytest.approx(expected.mean())
    assert rates.rho == pytest.approx(expected.var(ddof=0) / (rates.p * (1 - rates.p)))
    # each scenario's rate is one of the run's: with 1000 replicas a scenario's share lies near one of them
    totals = rates(np.random.default_rng(1), np.full((50, 20), 1000), {})
    nearest = np.abs(totals[..., None] / 1000 - np.array(rates.rates)).min(axis=-1)
    assert nearest.max() < 0.07
    design = build_design(smoke=True, generator=rates)
    assert set(design["estimand"]) == {"p_u"} and set(design["p"]) == {rates.p}
    assert set(design["rho_outcome"]) == {rates.rho}
    with pytest.raises(InputError, match="field 'p': comes from the run of --from-run"):
        read_grid(GRID, _FROM_RUN_KEYS, refused=_FROM_RUN_REFUSED)


@pytest.mark.slow
def test_from_run_on_the_command_line(tmp_path, scored, monkeypatch):
    out = tmp_path / "world"
    grid = tmp_path / "grid.toml"
    grid.write_text("scenarios = [6]\nreplicas = [4]\nsize_cv = [0.0]\nnsim = 60\n")
    assert run_cli(monkeypatch, "study", "coverage", "--out", out, "--grid", grid, "--from-run", scored) == 0
    args = orjson.loads((out / "run-args.json").read_bytes())
    generator = args["generator"]
    assert generator["from_run"] == str(scored.resolve()) and len(generator["conversations_sha256"]) == 64
    table = pd.read_csv(out / "coverage.csv")
    assert len(table) == len(METHODS) and table["exact_coverage"].isna().all()
    report = (out / "report.md").read_text()
    assert "from the per-scenario under-escalation rates of the run's 30 ESC scenarios" in report
    assert "every method is Monte Carlo" in report and "No exact value to check the simulation against" in report
    assert run_cli(monkeypatch, "study", "coverage", "--out", tmp_path / "never", "--from-run", scored,
                   "--generator", "logit-normal") == 2
    assert not (tmp_path / "never").exists()
