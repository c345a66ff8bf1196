"""``escalation compare`` guides its user (issue 16): names, --common, p-values, the coverage study's
words beside each interval, refusals of folders scored differently, errors that name the flag, help.

The fixtures are the project's own: simulated assistants (``escalation.simulate``) on the same
scenarios, each log scored by ``escalation score``.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import shutil
from datetime import datetime
from pathlib import Path

import orjson
import pandas as pd
import pytest

import escalation
from escalation.estimators.metric import (
    DIFFERENCE_COVERAGE_STUDY,
    FEW_CASES_BOOTSTRAP,
    FEW_CASES_NEWCOMBE,
    ScenarioMismatchError,
    compare_scored,
    coverage_word,
    difference_warnings,
    interval_advice,
    summarise,
)
from escalation.estimators.records import InputError, load_policy, read_scored
from escalation.estimators.stats import newcombe_paired_interval
from escalation.simulate import make_scenarios, simulate, world_policy_path, write_jsonl

from .._helpers import run_cli, run_cli_output

POLICY = world_policy_path()
#: (name, profile, seed) on the same 16 scenarios of 3 replicas.
RUNS = (("careful", "follows_policy", 1), ("careful-again", "follows_policy", 3), ("silent", "never_escalates", 2))


def _quietly(*args) -> int:
    """``escalation ARGS`` in this process, for a module fixture (no ``capsys``): the exit code."""
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        return run_cli(monkeypatch, *args)


def _score(log: Path, out: Path, *options) -> Path:
    assert _quietly("score", log, "--policy", POLICY, "--out", out, *options) == 0
    return out


def _with_provenance(folder: Path, policy_path=POLICY) -> Path:
    """The folder, its summary.json given a ``provenance`` if ``escalation score`` did not write one yet."""
    path = folder / "summary.json"
    summary = orjson.loads(path.read_bytes())
    if "provenance" not in summary:
        policy = load_policy(policy_path)
        summary["provenance"] = {
            "escalation": escalation.__version__, "created": "2026-12-01T00:00:00Z", "inputs": [], "format": "jsonl",
            "policy": {"path": str(policy_path), "sha256": policy.fingerprint(),
                       "contents": {k: v for k, v in policy.to_dict().items() if k != "name"}},
            "labels": None, "plan": None,
            "options": {"mode": summary.get("mode", "record"), "confidence": summary.get("confidence", 0.95),
                        "rho": None, "interval": "wilson-kish", "seed": 0, "approval_escalation": False}}
        path.write_bytes(orjson.dumps(summary))
    return folder


def _keep(log: Path, out: Path, drop: set) -> Path:
    """A copy of a canonical JSONL log without the conversations of the scenarios ``drop``."""
    lines = [line for line in log.read_bytes().splitlines() if orjson.loads(line)["scenario_id"] not in drop]
    out.write_bytes(b"\n".join(lines) + b"\n")
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Three simulated logs on the same scenarios, each scored; the scenario ids; the logs."""
    root = tmp_path_factory.mktemp("guides")
    scenarios = make_scenarios(16, seed=7)
    logs, scored = {}, {}
    for name, profile, seed in RUNS:
        logs[name] = write_jsonl(simulate(profile, replicas=3, rho=0.1, seed=seed, scenarios=scenarios),
                                 root / f"{name}.jsonl")
        scored[name] = _with_provenance(_score(logs[name], root / "scored" / name))
    ids = sorted({orjson.loads(line)["scenario_id"] for line in logs["careful"].read_bytes().splitlines()})
    return root, logs, scored, ids


@pytest.fixture(scope="module")
def partial(world):
    """careful without one ESC scenario and silent without the ACT scenario of another case (two scenarios
    differ), scored;
    and both logs restricted to the scenarios they then share, scored."""
    root, logs, _, ids = world
    gone_a = next(i for i in ids if i.endswith(":ESC"))
    gone_b = next(i for i in ids if i.endswith(":ACT") and i.split(":")[0] != gone_a.split(":")[0])
    out = {}
    for name, drop in (("careful", {gone_a}), ("silent", {gone_b})):
        log = _keep(logs[name], root / f"{name}-partial.jsonl", drop)
        out[name] = _with_provenance(_score(log, root / "partial" / name))
    only = {}
    for name in ("careful", "silent"):
        log = _keep(logs[name], root / f"{name}-shared.jsonl", {gone_a, gone_b})
        only[name] = _with_provenance(_score(log, root / "shared" / name))
    return out, only, gone_a, gone_b


# ------------------------------------------------------------------ names

def test_the_folders_names_are_in_the_table_and_in_compare_json(world, tmp_path, monkeypatch, capsys):
    _, _, scored, _ = world
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                  "200", "--out", tmp_path / "cmp")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("figure"))
    assert header.split()[:3] == ["figure", "careful", "silent"]
    assert out.startswith("silent minus careful: ") and "A = careful, B = silent" in out
    data = orjson.loads((tmp_path / "cmp" / "compare.json").read_bytes())
    assert data["names"] == {"a": "careful", "b": "silent"}
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                  "200", "--names", "gpt-4o,claude", "--json")
    assert code == 0 and orjson.loads(out)["names"] == {"a": "gpt-4o", "b": "claude"}
    assert orjson.loads(out)["provenance"]["options"]["names"] == ["gpt-4o", "claude"]


def test_folders_of_the_same_name_are_told_apart_by_their_parents(world, tmp_path):
    _, _, scored, _ = world
    a, b = tmp_path / "x" / "run", tmp_path / "y" / "run"
    shutil.copytree(scored["careful"], a)
    shutil.copytree(scored["silent"], b)
    assert compare_scored(a, b, n_boot=50).names == ("x/run", "y/run")
    assert compare_scored(a, a, n_boot=50).names == ("run (A)", "run (B)")
    assert compare_scored(a, b, n_boot=50, names=("one", "two")).names == ("one", "two")
    with pytest.raises(ValueError, match="`names` must be two different names"):
        compare_scored(a, b, names=("same", "same"))


def test_bad_names_name_the_flag(world, monkeypatch, capsys):
    _, _, scored, _ = world
    for value, what in (("solo", "two names separated by a comma"), ("x,x", "two different names"),
                        ("a,", "two names separated by a comma")):
        code, out, err = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"],
                                        "--names", value)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith("error: --names must be ") and what in err


# ------------------------------------------------------------------ --common

def test_different_scenarios_are_refused_with_the_way_out(partial, monkeypatch, capsys):
    folders, _, gone_a, gone_b = partial
    with pytest.raises(ScenarioMismatchError) as caught:
        compare_scored(folders["careful"], folders["silent"], n_boot=50)
    err = caught.value
    assert err.only_in == {"careful": [gone_b], "silent": [gone_a]} and err.shared == 30
    assert f"1 only in careful ({gone_b!r}); 1 only in silent ({gone_a!r})" in str(err)
    assert "common=True compares them on the 30 scenarios both have" in str(err) and "--common" not in str(err)
    code, out, message = run_cli_output(monkeypatch, capsys, "compare", folders["careful"], folders["silent"])
    assert code == 2 and out == "" and message.count("\n") == 1
    assert "--common compares them on the 30 scenarios both have" in message and "common=True" not in message


def test_common_compares_the_shared_scenarios_exactly_as_folders_of_only_those(partial):
    folders, only, gone_a, gone_b = partial
    common = compare_scored(folders["careful"], folders["silent"], n_boot=300, seed=5, common=True)
    alone = compare_scored(only["careful"], only["silent"], n_boot=300, seed=5)
    assert common.common and not alone.common
    assert common.only_in == {"careful": [gone_b], "silent": [gone_a]}
    assert alone.only_in == {"careful": [], "silent": []}
    assert (common.scenarios, common.cases) == (alone.scenarios, alone.cases) == (30, 16)
    mine, theirs = common.to_dict(), alone.to_dict()
    assert mine["differences"] == theirs["differences"]  # estimates, intervals, p-values, words: exact
    assert mine["disagreements"] == theirs["disagreements"]
    assert mine["warnings"] == theirs["warnings"] and mine["advice"] == theirs["advice"]
    by = {d.metric: d for d in common.differences}
    assert (by["p_u"].clusters, by["p_o"].clusters, by["pi"].clusters) == (15, 15, 14)
    assert (by["p_u"].n_a, by["p_u"].n_b) == (45, 45)


def test_common_lists_what_it_left_out(partial, tmp_path, monkeypatch, capsys):
    folders, _, gone_a, gone_b = partial
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", folders["careful"], folders["silent"], "--common",
                                  "--n-boot", "200", "--out", tmp_path / "cmp")
    assert code == 0
    assert "30 scenarios both have (--common)" in out
    assert (f"left out (--common): 1 scenario only in careful ({gone_b}); 1 scenario only in silent ({gone_a})"
            in " ".join(out.split()))
    data = orjson.loads((tmp_path / "cmp" / "compare.json").read_bytes())
    assert data["common"] is True and data["scenarios"] == 30
    assert data["only_in"] == {"careful": [gone_b], "silent": [gone_a]}
    assert data["provenance"]["options"]["common"] is True


def test_common_on_the_same_scenarios_changes_nothing_and_a_clash_stays_an_error(world, tmp_path):
    _, _, scored, ids = world
    plain = compare_scored(scored["careful"], scored["silent"], n_boot=100, seed=1).to_dict()
    common = compare_scored(scored["careful"], scored["silent"], n_boot=100, seed=1, common=True).to_dict()
    assert common["differences"] == plain["differences"] and common["only_in"] == {"careful": [], "silent": []}
    clash = tmp_path / "clash"
    shutil.copytree(scored["silent"], clash)
    esc = next(i for i in ids if i.endswith(":ESC"))
    lines = [orjson.loads(line) for line in (clash / "conversations.jsonl").read_bytes().splitlines()]
    for line in lines:  # one scenario of B relabelled: ESC in A, ACT in B
        if line["scenario_id"] == esc:
            line["label"], line["o"], line["u"], line["case_id"] = "ACT", line["u"], None, "elsewhere"
    (clash / "conversations.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    summary = orjson.loads((clash / "summary.json").read_bytes())
    del summary["provenance"]["outputs"]  # edited by hand: no longer the file the summary names
    (clash / "summary.json").write_bytes(orjson.dumps(summary))
    with pytest.raises(InputError, match=f"scenario {esc!r} has the label ESC in one folder and ACT in the other"):
        compare_scored(scored["careful"], clash, n_boot=50, common=True)


# ------------------------------------------------------------------ p-values

def _summaries(folder, interval):
    frame, _ = read_scored(folder)
    return summarise(frame, confidence=0.95, interval=interval)


def test_the_p_value_is_the_level_at_which_newcombes_interval_touches_zero(world):
    _, _, scored, _ = world
    checked = 0
    for a, b in (("careful", "careful-again"), ("careful", "silent"), ("silent", "careful-again")):
        result = compare_scored(scored[a], scored[b], n_boot=200, seed=2)
        first, second = _summaries(scored[a], result.interval), _summaries(scored[b], result.interval)
        for d in result.differences:
            if not d.defined:
                assert math.isnan(d.p_value)
                continue
            low, high = d.newcombe_ci
            assert (d.p_value <= 0.05) == (low > 0 or high < 0)  # the printed interval and its p agree
            if not 1e-9 < d.p_value < 1:
                continue
            checked += 1
            field = {"p_u": "under", "p_o": "over", "pi": "paired"}[d.metric]
            rate_a, rate_b = getattr(first, field), getattr(second, field)
            level = 1 - d.p_value  # independently: the limits at that level, combined again
            low, high = newcombe_paired_interval(d.a, rate_a.ci(level), d.b, rate_b.ci(level), d.psi)
            assert min(abs(low), abs(high)) < 1e-6
    assert checked >= 3


def test_bootstrap_p_values_invert_the_bootstrap_and_stop_at_one_over_n_boot(world):
    _, _, scored, _ = world
    result = compare_scored(scored["careful"], scored["silent"], n_boot=400, seed=3, interval="bootstrap-percentile")
    for d in result.differences:
        low, high = d.bootstrap_ci
        assert d.ci == d.bootstrap_ci and d.p_value >= 1 / 400
        assert (d.p_value <= 0.05) == (low > 0 or high < 0)
    assert min(d.p_value for d in result.differences) == pytest.approx(1 / 400)  # p_u: never escalates


def test_p_values_are_in_the_table_compare_json_and_differences_csv(world, tmp_path, monkeypatch, capsys):
    _, _, scored, _ = world
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["careful-again"],
                                  "--n-boot", "200", "--out", tmp_path / "cmp")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("figure"))
    assert header.split()[6] == "p"  # figure, careful, careful-again, B - A, p
    data = orjson.loads((tmp_path / "cmp" / "compare.json").read_bytes())
    table = pd.read_csv(tmp_path / "cmp" / "differences.csv")
    assert {"p_value", "newcombe_coverage", "bootstrap_coverage", "a_name", "b_name"} <= set(table.columns)
    for row in table.itertuples():
        p = data["differences"][row.metric]["p_value"]
        assert row.p_value == pytest.approx(p)
        printed = next(line for line in out.splitlines() if line.startswith(row.metric + " "))
        assert (f"{p:.3f}" if p >= 0.001 else f"{p:.0e}") in printed.split()


# ------------------------------------------------------------------ the coverage study's words

def test_the_words_follow_the_studys_table():
    word = coverage_word("newcombe_wilson_kish", 12)
    assert (word.word, word.studied_at, word.lowest, word.text) == ("too narrow", 10, 0.902678, "too narrow (0.90)")
    assert word.failing == 8  # of the 36 cells at 10 scenarios
    assert coverage_word("newcombe_wilson_kish", 30).word == "too narrow"  # 0.908 + 2 x 0.0032 < 0.93
    assert coverage_word("newcombe_wilson_kish", 100).word == "holds"
    # wilson-kish-t: one cell at 30 scenarios, 0.920 after its rerun (MCSE 0.003), fails
    assert [coverage_word("newcombe_wilson_kish_t", k).word for k in (5, 9, 29, 99, 500)] == [
        "holds", "holds", "holds", "too narrow", "holds"]
    # what compare --help says: korn-graubard and beta-binomial-bayes limits held at every number of cases
    for method in ("newcombe_korn_graubard", "newcombe_beta_binomial_bayes"):
        assert {coverage_word(method, k).word for k in (5, 10, 30, 100)} == {"holds"}
    assert coverage_word("bootstrap_percentile", 12).text == "too narrow (0.61)"
    assert coverage_word("bootstrap_percentile", 99).word == "too narrow"
    assert coverage_word("bootstrap_percentile", 100).word == "holds"
    assert coverage_word("bootstrap_bca", 5).word == "often undefined"  # 63% of its intervals undefined there
    assert coverage_word("bootstrap_bca", 100).word == "too narrow"  # 0.9215 + 2 x 0.0031 < 0.93
    assert coverage_word("newcombe_wilson_kish", 4).word == "not studied"
    assert coverage_word("newcombe_wilson_cluster_t", 50).word == "not studied"
    assert coverage_word("newcombe_wilson_kish", 0).word == "-"
    assert (FEW_CASES_NEWCOMBE, FEW_CASES_BOOTSTRAP) == (100, 100)


def test_auto_takes_the_narrowest_limits_that_held_for_the_difference_and_for_each_rate():
    from escalation.estimators.metric import NEWCOMBE_LIMITS, auto_difference_interval
    from escalation.estimators.stats import group_coverage
    expected = {(5, True): "wilson-kish-t", (5, False): "korn-graubard", (12, False): "korn-graubard",
                (12, True): "beta-binomial-bayes", (30, False): "beta-binomial-bayes",
                (150, True): "beta-binomial-bayes", (150, False): "beta-binomial-bayes"}
    for (cases, replicas), method in expected.items():
        assert auto_difference_interval(cases, replicas)[0] == method
        # recomputed from the two tables: holding in both, the narrowest mean width at the studied K
        studied = max(k for k in (5, 10, 30, 100) if k <= cases)
        width = {m: next(r[9] for r in DIFFERENCE_COVERAGE_STUDY["newcombe_" + m.replace("-", "_")] if r[0] == studied)
                 for m in NEWCOMBE_LIMITS}
        both = [m for m in NEWCOMBE_LIMITS if coverage_word("newcombe_" + m.replace("-", "_"), cases).trusted
                and group_coverage(cases, replicas)[m].holds]
        assert method == min(both, key=width.__getitem__)
    # without the rates' design, the differences study alone: beta-binomial-profile is narrowest at 100
    assert auto_difference_interval(150)[0] == "beta-binomial-profile"
    assert "the narrowest that held 95% in escalation study differences at 10 scenarios" in \
        auto_difference_interval(12, False)[1]


def test_the_studys_table_is_internally_consistent():
    for method, rows in DIFFERENCE_COVERAGE_STUDY.items():
        assert [row[0] for row in rows] == [5, 10, 30, 100]
        for k, cells, mean, lowest, mcse, undefined, cell, conditions, failing, width in rows:
            assert cells == 36 and lowest <= mean <= 1 and 0 <= undefined <= 1 - lowest + 1e-12
            assert 0 <= failing <= cells and (failing > 0) >= (lowest + 2 * mcse < 0.93) and width > 0
            # the MCSE of 2000 data sets, or of a borderline cell's rerun on more (a whole number of them)
            nsim = lowest * (1 - lowest) / mcse**2
            assert nsim == pytest.approx(round(nsim), rel=2e-5) and round(nsim) >= 2000  # the MCSE has 6 digits
            assert ("1 replica" in conditions) or ("replicas" in conditions)


def test_the_warnings_and_the_advice_are_written_from_the_words():
    for interval in ("wilson-kish", "wilson-kish-t", "bootstrap-percentile", "bootstrap-bca"):
        for cases in (1, 4, 5, 12, 29, 30, 60, 99, 100, 400):
            notes = difference_warnings(interval, cases)
            limits = "wilson-kish" if interval.startswith("bootstrap") else interval
            newcombe = coverage_word("newcombe_" + limits.replace("-", "_"), cases)
            kind = interval.removeprefix("bootstrap-") if interval.startswith("bootstrap") else "percentile"
            boot = coverage_word(f"bootstrap_{kind}", cases)
            assert any(n.startswith("Newcombe") for n in notes) == (
                newcombe.word in ("too narrow", "often undefined", "not studied"))
            assert any(n.startswith("the paired bootstrap") for n in notes) == (
                boot.word in ("too narrow", "often undefined", "not studied"))
    assert interval_advice("wilson-kish", 12).startswith("trust Newcombe's with beta-binomial-bayes limits here")
    assert "the bootstrap (percentile) is too narrow below 100 cases" in interval_advice("wilson-kish", 12)
    assert interval_advice("wilson-kish", 150).startswith("trust Newcombe's with wilson-kish limits here")
    assert "neither interval is known to hold" in interval_advice("wilson-kish", 3)
    assert "was not measured" in difference_warnings("wilson-cluster-t", 50)[0]


def test_the_table_prints_the_word_beside_each_interval_and_says_which_to_trust(world, monkeypatch, capsys):
    _, _, scored, _ = world
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                  "200", "--interval", "wilson-kish")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 100
    lines = out.splitlines()
    for metric in ("p_u", "p_o", "pi"):
        row = next(i for i, line in enumerate(lines) if line.startswith(metric + " "))
        assert lines[row + 1].startswith("16 cases") and lines[row + 1].count("too narrow (0.90)") == 1
        assert "too narrow (0.61)" in lines[row + 1]
    text = " ".join(out.split())
    assert ("advice: trust Newcombe's with beta-binomial-bayes limits here (--interval beta-binomial-bayes, the "
            "narrowest that held: lowest 0.95 at 10 scenarios); with wilson-kish limits it is too narrow (0.90); the "
            "bootstrap (percentile) is too narrow below 100 cases (0.61 at 10).") in text
    assert "too narrow below 100 cases" in text  # the warning says what the word says
    # the default, auto, takes the limits the studies found holding at 16 cases of 3 replicas, and says so
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                  "200")
    text = " ".join(out.split())
    assert code == 0 and ("interval: auto, beta-binomial-bayes: Newcombe's interval with beta-binomial-bayes limits, "
                          "the narrowest that held 95% in escalation study differences at 10 scenarios, the most not "
                          "above these 16 cases (lowest coverage 0.945), and for each rate of its design (replicas) "
                          "in study coverage") in text
    assert "advice: trust Newcombe's with beta-binomial-bayes limits here (the study's lowest coverage 0.95" in text


def test_the_table_fits_80_columns_with_long_names(world, monkeypatch, capsys):
    _, _, scored, _ = world
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                  "100", "--names", "gpt-4o-2024-08-06,claude-3-5-sonnet-20241022")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    table = out.split("\n\n")[0] if "\n\n" in out else out
    assert "0.062" in table and "n 48" in table  # both assistants' columns survive


# ------------------------------------------------------------------ scored alike, provenance

@pytest.fixture(scope="module")
def other_policy(world):
    """careful-again scored with a policy whose escalation tool is call_supervisor, not transfer_to_human."""
    root, logs, _, _ = world
    policy = json.loads(Path(POLICY).read_text())
    assert policy["escalation_tools"] == ["transfer_to_human"]
    policy["escalation_tools"] = ["call_supervisor"]
    policy["action_tools"] = sorted({*policy["action_tools"], "handoff_desk"})
    path = root / "other-policy.json"
    path.write_text(json.dumps(policy))
    folder = root / "scored-other-policy" / "careful-again"
    assert _quietly("score", logs["careful-again"], "--policy", path, "--out", folder) == 0
    return _with_provenance(folder, path)


def test_different_policies_are_refused_naming_the_tools(world, other_policy, monkeypatch, capsys):
    _, _, scored, _ = world
    with pytest.raises(InputError, match="careful and careful-again were scored with different policies: "
                                         "call_supervisor is absent in careful and an escalation tool in "
                                         "careful-again; handoff_desk is absent in careful and an action tool in "
                                         "careful-again; transfer_to_human is an escalation tool in careful and "
                                         "absent in careful-again"):
        compare_scored(scored["careful"], other_policy)
    code, out, err = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], other_policy)
    assert code == 2 and out == "" and err.count("\n") == 1 and "transfer_to_human is an escalation tool" in err


def test_different_confidence_levels_are_refused(world, tmp_path, monkeypatch, capsys):
    root, logs, scored, _ = world
    folder = _with_provenance(_score(logs["silent"], tmp_path / "silent-90", "--confidence", "0.9"))
    with pytest.raises(InputError, match="careful was scored at confidence 0.95 and silent-90 at 0.9; score both "
                                         "at the same level"):
        compare_scored(scored["careful"], folder)
    code, _, err = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], folder)
    assert code == 2 and err.count("\n") == 1 and "confidence 0.95 and silent-90 at 0.9" in err


def test_a_summary_without_provenance_is_compared_with_a_warning(world, tmp_path, monkeypatch, capsys):
    _, _, scored, _ = world
    old = tmp_path / "old"
    shutil.copytree(scored["silent"], old)
    summary = orjson.loads((old / "summary.json").read_bytes())
    summary.pop("provenance")
    (old / "summary.json").write_bytes(orjson.dumps(summary))
    result = compare_scored(scored["careful"], old, n_boot=100)
    assert result.warnings[0].startswith("old has no provenance in summary.json")
    assert "cannot check that both were scored with the same policy" in result.warnings[0]
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], old, "--n-boot", "100")
    assert code == 0 and "warning: old has no provenance" in out


def test_compare_json_records_its_provenance(world, tmp_path, monkeypatch, capsys):
    _, _, scored, _ = world
    code, _, _ = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], "--n-boot",
                                "150", "--seed", "4", "--rho", "0.2", "--interval", "wilson-kish-t", "--out",
                                tmp_path / "cmp")
    assert code == 0
    provenance = orjson.loads((tmp_path / "cmp" / "compare.json").read_bytes())["provenance"]
    assert provenance["escalation"] == escalation.__version__
    assert datetime.fromisoformat(provenance["created"].replace("Z", "+00:00")).tzinfo is not None
    assert provenance["options"] == {"confidence": 0.95, "n_boot": 150, "interval": "wilson-kish-t", "rho": 0.2,
                                     "seed": 4, "common": False, "allow_errors": False, "names": ["careful", "silent"]}
    for entry, name in zip(provenance["folders"], ("careful", "silent")):
        assert entry["name"] == name and entry["path"] == str(scored[name])
        for file in ("summary.json", "conversations.jsonl"):
            assert entry["sha256"][file] == hashlib.sha256((scored[name] / file).read_bytes()).hexdigest()


# ------------------------------------------------------------------ errors name the flag, help

@pytest.mark.parametrize("option, value, message", [
    ("--n-boot", "0", "error: --n-boot must be a whole number >= 1; got 0"),
    ("--confidence", "1.5", "error: --confidence must lie strictly between 0 and 1; got 1.5"),
    ("--rho", "2", "error: --rho must lie in [0, 1]; got 2"),
    ("--top", "-1", "error: --top must be at least 0, got -1"),
])
def test_option_errors_name_the_flag(world, monkeypatch, capsys, option, value, message):
    _, _, scored, _ = world
    code, out, err = run_cli_output(monkeypatch, capsys, "compare", scored["careful"], scored["silent"], option, value)
    assert (code, out, err) == (2, "", message + "\n")


def test_the_api_names_its_parameters_not_flags(world):
    _, _, scored, _ = world
    with pytest.raises(ValueError, match=r"^`n_boot` must be a whole number >= 1; got 0$"):
        compare_scored(scored["careful"], scored["silent"], n_boot=0)
    with pytest.raises(ValueError, match=r"^`rho` must lie in \[0, 1\]; got 1.5$"):
        compare_scored(scored["careful"], scored["silent"], rho=1.5)


def test_help_is_readable_at_80_columns_and_teaches_with_an_example(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", "--help")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    for text in ("Example:", "escalation compare scored/gpt-4o scored/claude --out comparison", "--common",
                 "--names A,B", "p-value", "too narrow", "beta-binomial-bayes"):
        assert text in out
    assert "\u2502" not in out and "\u256d" not in out  # plain click help, no rich panels
