"""The gate study (``escalation study gate``): the fixed rule against an exact enumeration, the first look
against the Wilson interval of a binomial total, the sequential rule's level and the naive rule's inflation at a
fixed seed (tolerances from the MCSE), bit-identical tables for one and two workers, the command's files, a
resumed run and bad options."""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
from statistics import NormalDist

import numpy as np
import orjson
import pandas as pd
import pytest
from scipy import stats

from escalation.estimators.metric import look_confidence
from escalation.estimators.records import InputError
from escalation.estimators.stats import ClusterSums, choose_interval, clustered_interval, exact_coverage
from escalation.studies import GATE_SEED, TOKENS_PER_SAMPLE, cell_seed, run_gate_study
from escalation.studies.gate._gate import (
    EPOCHS,
    NOMINAL,
    RULES,
    THRESHOLD,
    build_design,
    first_look_exact,
    look_levels,
    look_method,
    run_cell,
)

from .._helpers import run_cli_output

SEED = 11
NSIM = 4000
#: The tables of a run, compared byte for byte.
TABLES = ("design", "cells", "rules", "summary", "levels", "validation")


def _row(k: int, rho: float, p: float, nsim: int = NSIM, interval: str = "wilson-kish") -> dict:
    """A cell of the study; the paper's interval unless given, so that the rules are checked against Wilson's
    written out."""
    row = build_design(nsim=nsim, interval=interval).iloc[0].to_dict()
    return row | {"scenarios": k, "samples_per_epoch": 2 * k, "rho": rho, "truth": p}


def _counts(row: dict, cell: int = 0) -> dict:
    """``{rule: {"pass": n, "fail": n, "pass_1": n, ...}}`` of one cell run at :data:`SEED`."""
    out = {}
    for r in run_cell(row, cell_seed(SEED, cell)):
        r = dict(r)
        r["pass"] = sum(r[f"pass_{k}"] for k in range(1, EPOCHS + 1))
        r["fail"] = sum(r[f"fail_{k}"] for k in range(1, EPOCHS + 1))
        out[r["rule"]] = r
    return out


def _within(count: int, n: int, exact: float, mcses: float = 4.0) -> bool:
    """The simulated share ``count / n`` within ``mcses`` MCSE of the exact probability (MCSE of the exact value,
    ``sqrt(q (1 - q) / n)``), or off by one data set where the exact value is nearly 0 or 1."""
    mcse = math.sqrt(exact * (1 - exact) / n)
    return abs(count / n - exact) <= max(mcses * mcse, 1.0 / n)


def _cluster_pmf(p: float, rho: float, m: int) -> np.ndarray:
    """A scenario's total of ``m`` conversations: Binomial(m, p) for rho = 0, else beta-binomial with mean ``p`` and
    intra-cluster correlation ``rho = 1 / (a + b + 1)`` (Ridout, Demetrio & Firth 1999, Biometrics 55:137)."""
    t = np.arange(m + 1)
    if rho == 0:
        return stats.binom.pmf(t, m, p)
    s = (1 - rho) / rho
    return stats.betabinom.pmf(t, m, p * s, (1 - p) * s)


def _fixed_exact(p: float, rho: float, k: int) -> tuple[float, float]:
    """``(P(pass), P(fail))`` of the fixed rule, exactly, by enumerating ``(Y, S) = (sum y_j, sum y_j^2)`` of ``k``
    i.i.d. scenario totals of 4 conversations (a convolution written out, one scenario at a time): the Wilson-Kish
    interval with rho estimated is a function of them (SPEC section 5, the ANOVA estimator of equal sizes)."""
    m = EPOCHS
    pmf = _cluster_pmf(p, rho, m)
    prob = np.zeros((k * m + 1, k * m * m + 1))
    prob[0, 0] = 1.0
    for _ in range(k):
        new = np.zeros_like(prob)
        for t in range(m + 1):
            new[t:, t * t:] += pmf[t] * prob[: prob.shape[0] - t, : prob.shape[1] - t * t]
        prob = new
    y, s = np.nonzero(prob > 1e-18)
    low, high = clustered_interval(ClusterSums.balanced(y, s, k, m), None, "wilson-kish", confidence=0.95)
    weights = prob[y, s]
    return float(weights[high <= THRESHOLD].sum()), float(weights[low > THRESHOLD].sum())


def _wilson(y, n: int, confidence: float):
    """The Wilson score interval (Wilson 1927; Agresti & Coull 1998, eq. 2), written out."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = np.asarray(y) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# ------------------------------------------------------------------ the design and the rules


def test_design_and_levels():
    design = build_design()
    assert GATE_SEED == 20261203 and len(design) == 30 and (design["nsim"] == 4000).all()
    assert sorted(design["scenarios"].unique()) == [48, 288] and sorted(design["rho"].unique()) == [0.0, 0.2, 0.5]
    assert sorted(design["truth"].unique()) == [0.02, 0.035, 0.05, 0.065, 0.08]
    assert set(design.loc[design["scenarios"] == 288, "samples_per_epoch"]) == {576}  # the default suite's epoch
    assert len(build_design(smoke=True)) <= 6 and (build_design(smoke=True)["nsim"] == 200).all()
    # the sequential levels are escalation gate --look K --of 4's (docs/tutorials/gate-a-release.md's table)
    assert [round(x, 4) for x in look_levels("sequential")] == [0.9999, 0.9945, 0.9819, 0.9736]
    assert look_levels("naive") == (0.95,) * 4
    assert math.isnan(look_levels("fixed")[0]) and look_levels("fixed")[-1] == 0.95
    # the errors the sequential rule spends add up to 5% (2.5% a side)
    assert sum(1 - look_confidence(k, 4, 0.95) for k in range(1, 5)) == pytest.approx(0.05, abs=1e-12)


# ------------------------------------------------------------------ exact references


@pytest.mark.parametrize("p", [0.035, 0.05, 0.065])
@pytest.mark.parametrize("rho", [0.0, 0.2])
def test_the_fixed_rule_matches_an_exact_enumeration(p, rho):
    """K = 48: the fixed rule's P(pass) and P(fail) by enumerating the scenario totals' sums, against the study's
    simulation (within 4 MCSE) and, at the threshold, against ``exact_coverage``'s one-sided misses."""
    k = 48
    e_pass, e_fail = _fixed_exact(p, rho, k)
    fixed = _counts(_row(k, rho, p))["fixed"]
    assert fixed["pass_1"] == fixed["fail_3"] == 0  # one look, after epoch 4
    assert _within(fixed["pass"], NSIM, e_pass), (fixed["pass"] / NSIM, e_pass)
    assert _within(fixed["fail"], NSIM, e_fail), (fixed["fail"] / NSIM, e_fail)
    if p == THRESHOLD:
        exact = exact_coverage(_cluster_pmf(p, rho, EPOCHS), k, method="wilson-kish", confidence=0.95)
        assert (e_pass, e_fail) == pytest.approx((exact.miss_low, exact.miss_high), abs=1e-9)


@pytest.mark.parametrize("k, rho, p", [(288, 0.2, 0.02), (48, 0.5, 0.08), (288, 0.5, 0.05)])
def test_the_first_look_is_wilson_on_a_binomial_total(k, rho, p):
    """One conversation a scenario: its total is Binomial(K, p) whatever rho, and the Wilson-Kish interval is
    Wilson's (design effect 1); the first look's decisions of the naive and sequential rules, exactly."""
    counts = _counts(_row(k, rho, p))
    y = np.arange(k + 1)
    pmf = stats.binom.pmf(y, k, p)
    for rule in ("naive", "sequential"):
        low, high = _wilson(y, k, look_levels(rule)[0])
        e_pass, e_fail = float(pmf[high <= THRESHOLD].sum()), float(pmf[low > THRESHOLD].sum())
        assert first_look_exact(p, k, look_levels(rule)[0], "wilson-kish") == pytest.approx((e_pass, e_fail),
                                                                                          abs=1e-12)
        assert _within(counts[rule]["pass_1"], NSIM, e_pass), (rule, counts[rule]["pass_1"] / NSIM, e_pass)
        assert _within(counts[rule]["fail_1"], NSIM, e_fail), (rule, counts[rule]["fail_1"] / NSIM, e_fail)
    # the naive rule's first look decides at least as often as the sequential one's (95% inside 99.99%)
    assert counts["naive"]["pass_1"] + counts["naive"]["fail_1"] >= counts["sequential"]["pass_1"] + \
        counts["sequential"]["fail_1"]


def test_the_sequential_rule_holds_its_level_and_the_naive_rule_does_not():
    """The default suite at the threshold (p_u = 0.05, rho = 0.2): the sequential rule's P(fail) and P(pass) are
    at most the nominal 2.5% within 3 MCSE (here the interval after 4 epochs misses 2.7% and 2.6% a side, exact),
    the naive rule's are above it by more than 4 MCSE, and the sequential rule stops no later than the fixed one."""
    counts = _counts(_row(288, 0.2, THRESHOLD))
    mcse = math.sqrt(NOMINAL * (1 - NOMINAL) / NSIM)
    for side in ("fail", "pass"):
        assert counts["sequential"][side] / NSIM <= NOMINAL + 3 * mcse, (side, counts["sequential"][side])
        assert counts["naive"][side] / NSIM > NOMINAL + 4 * mcse, (side, counts["naive"][side])
    assert counts["fixed"]["undecided"] + counts["fixed"]["pass"] + counts["fixed"]["fail"] == NSIM


def test_a_clear_case_saves_samples():
    """Far below the threshold (p_u = 0.02, K = 288, rho = 0): the sequential rule passes in nearly every run and
    stops at look 2 or 3 most of the time; it never fails."""
    counts = _counts(_row(288, 0.0, 0.02))
    seq = counts["sequential"]
    assert seq["fail"] == 0 and seq["pass"] / NSIM > 0.99
    epochs = sum(k * (seq[f"pass_{k}"] + seq[f"fail_{k}"]) for k in range(1, 5)) + 4 * seq["undecided"]
    assert epochs / NSIM < 3.0


def test_auto_takes_at_each_look_the_interval_escalation_gate_would():
    """With --interval auto (the default), each look computes the interval that `escalation gate` picks for the
    run so far: one conversation a scenario at the first look, replicas after (issue 37). The first look's
    decisions against their exact value (a Binomial(K, p) total through that interval), within 4 MCSE."""
    for k in (48, 288):
        assert look_method("auto", k, 1) == choose_interval(k, False).method
        assert {look_method("auto", k, e) for e in (2, 3, 4)} == {choose_interval(k, True).method}
    assert look_method("wilson-kish-t", 48, 1) == "wilson-kish-t"
    n = 1000
    counts = _counts(_row(48, 0.2, 0.02, nsim=n, interval="auto"))
    for rule in ("naive", "sequential"):
        e_pass, e_fail = first_look_exact(0.02, 48, look_levels(rule)[0], "auto")
        assert _within(counts[rule]["pass_1"], n, e_pass), (rule, counts[rule]["pass_1"] / n, e_pass)
        assert _within(counts[rule]["fail_1"], n, e_fail), (rule, counts[rule]["fail_1"] / n, e_fail)


# ------------------------------------------------------------------ the runs


@pytest.mark.slow
def test_run_files_workers_and_resume(tmp_path):
    """The smoke study from Python with one worker and by the command with two: the same tables byte for byte;
    every file; and a run stopped after all but one cell resumes to the same tables."""
    one, two = tmp_path / "one", tmp_path / "two"
    tables = run_gate_study(one, smoke=True, n_jobs=1, seed=SEED, progress=False)
    # a process of its own, as a user runs it: its workers import the package from that process's path
    done = subprocess.run([sys.executable, "-m", "escalation", "study", "gate", "--out", str(two), "--smoke",
                           "--n-jobs", "2", "--seed", str(SEED)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "gate study in" in done.stdout and "a smoke run" in " ".join(done.stdout.split())
    for name in TABLES:
        assert (one / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name
    for name in ("rules", "summary", "levels", "validation"):
        assert (two / f"{name}.md").read_text(encoding="utf-8").startswith("# ")
    assert (two / "gate_rules.png").read_bytes()[:4] == b"\x89PNG"
    assert (two / "gate_rules.pdf").read_bytes()[:4] == b"%PDF"
    report = (two / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Gate study")
    for heading in ("## Design (ADEMP)", "## What each rule promises", "## Validation", "## Findings\n\nNot drawn "
                    "from a smoke run", "## Wrong decisions and expected epochs", "## At the threshold"):
        assert heading in report, heading
    assert "report.html" in orjson.loads((two / "run.json").read_bytes())["outputs"]
    facts = orjson.loads((two / "run.json").read_bytes())
    assert facts["study"] == "gate" and facts["seed"] == SEED and facts["interval"] == "auto"
    # the tables agree with each other
    rules = tables["rules"]
    np.testing.assert_allclose(rules["p_pass"] + rules["p_fail"] + rules["p_undecided"], 1.0, atol=1e-12)
    assert set(rules["rule"]) == set(RULES) and (rules.loc[rules["rule"] == "fixed", "expected_epochs"] == 4).all()
    np.testing.assert_allclose(rules["expected_tokens"], rules["expected_samples"] * TOKENS_PER_SAMPLE)
    assert tables["validation"]["agrees"].all()
    # resume: the folder of a run stopped before its last cell, and its outputs gone
    three = tmp_path / "three"
    shutil.copytree(one, three)
    (three / "cells" / "000003.json").unlink()
    for name in ("rules.csv", "report.md"):
        (three / name).unlink()
    run_gate_study(three, smoke=True, n_jobs=1, seed=SEED, progress=False)
    assert orjson.loads((three / "run.json").read_bytes())["cells_resumed"] == len(tables["cells"]) // 3 - 1
    for name in TABLES:
        assert (one / f"{name}.csv").read_bytes() == (three / f"{name}.csv").read_bytes(), name


@pytest.mark.slow
def test_tokens_per_sample_changes_only_the_tokens(tmp_path):
    out = tmp_path / "g"
    first = run_gate_study(out, smoke=True, nsim=20, seed=SEED, progress=False)["rules"]
    again = run_gate_study(out, smoke=True, nsim=20, seed=SEED, progress=False, tokens_per_sample=1000.0)["rules"]
    assert orjson.loads((out / "run.json").read_bytes())["cells_resumed"] == len(build_design(smoke=True))
    pd.testing.assert_series_equal(first["expected_epochs"], again["expected_epochs"])
    np.testing.assert_allclose(again["expected_tokens"], again["expected_samples"] * 1000.0)


@pytest.mark.parametrize("args, flag", [(["--interval", "bootstrap-bca"], "--interval"),
                                        (["--tokens-per-sample", "0"], "--tokens-per-sample"),
                                        (["--nsim", "1"], "--nsim")])
def test_a_bad_option_names_its_flag_and_creates_no_folder(tmp_path, monkeypatch, capsys, args, flag):
    out = tmp_path / "x" / "y"
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "gate", *args, "--out", out)
    assert code == 2 and flag in err, err
    assert not (tmp_path / "x").exists()


def test_an_interval_of_the_bootstrap_is_refused():
    with pytest.raises(InputError, match="a bootstrap would resample"):
        run_gate_study("unused", interval="bootstrap-percentile")
