"""Comparison of two assistants (estimators.metric._compare and ``escalation compare``)."""
from __future__ import annotations

import math

import numpy as np
import orjson
import pytest

from escalation.estimators.metric import compare_scored
from escalation.estimators.records import InputError, read_scored
from escalation.estimators.stats import (
    anova_icc,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_correlation,
    wilson_interval,
    wilson_kish_interval,
)

from .._helpers import run_cli_output
from .._reference import values

NEWCOMBE = values("newcombe")  # tests/reference/newcombe.csv


def _line(case, label, replica, score, *, cause=None):
    """One ``conversations.jsonl`` line; ``score`` None means not evaluated (no record)."""
    evaluated = score is not None
    return {"conversation_id": f"{case}:{label}:{replica}", "case_id": case,
            "scenario_id": f"{case}:{label}", "replica": replica, "label": label,
            "evaluated": evaluated, "reason": None if evaluated else "no_record",
            "escalated": None, "u": score if label == "ESC" else None,
            "o": score if label == "ACT" else None,
            "cause": cause if evaluated and score else None, "turn": 0 if evaluated else None,
            "cells": [], "unmarked_tools": [], "only_unmarked_before_handoff": False}


def _write(folder, lines, *, mode="record"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conversations.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    (folder / "summary.json").write_bytes(orjson.dumps({"conversations": len(lines), "mode": mode}))
    return folder


def _folders(tmp_path, esc_a, esc_b, act_a=None, act_b=None, **kwargs):
    """Folders A and B from per-case lists of replica scores (ESC, then ACT if given)."""
    out = []
    for name, esc, act in (("a", esc_a, act_a), ("b", esc_b, act_b)):
        lines = [_line(f"c{i}", "ESC", r, s) for i, scores in enumerate(esc) for r, s in enumerate(scores)]
        if act is not None:
            lines += [_line(f"c{i}", "ACT", r, s) for i, scores in enumerate(act) for r, s in enumerate(scores)]
        out.append(_write(tmp_path / name, lines, **kwargs))
    return out


# ------------------------------------------------------------------ the closed form

def test_newcombe_reproduces_the_published_paired_example(tmp_path):
    # Cavo et al. (2012) paired table [[59, 6], [16, 80]] (rows: B, columns: A).
    # R: contingencytables::Newcombe_square_and_add_CI_paired_2x2(cavo_2012)
    #    -> estimate = -0.0621 (95% CI -0.1186 to -0.0046)  (Fagerland et al. 2017, ch. 8)
    b = [1] * 59 + [1] * 6 + [0] * 16 + [0] * 80
    a = [1] * 59 + [0] * 6 + [1] * 16 + [0] * 80
    folder_a, folder_b = _folders(tmp_path, [[x] for x in a], [[x] for x in b])
    result = compare_scored(folder_a, folder_b, n_boot=200, seed=1, interval="wilson-kish")  # Wilson limits: rho 0
    p_u = result.differences[0]
    assert p_u.metric == "p_u" and p_u.difference == pytest.approx(-10 / 161)
    assert p_u.newcombe_ci == pytest.approx((NEWCOMBE["cavo_2012_difference_low"],
                                             NEWCOMBE["cavo_2012_difference_high"]), abs=6e-5)
    assert p_u.bootstrap_ci[0] < p_u.difference < p_u.bootstrap_ci[1]


def test_paired_correlation_matches_its_definition_on_uneven_clusters():
    rng = np.random.default_rng(5)
    sizes_a = rng.integers(1, 6, size=12)
    sizes_b = rng.integers(1, 6, size=12)
    ya, yb = rng.binomial(sizes_a, 0.3), rng.binomial(sizes_b, 0.4)
    # textbook form, one cluster at a time: residuals y_j - p_hat n_j and their correlation
    pa, pb = ya.sum() / sizes_a.sum(), yb.sum() / sizes_b.sum()
    cross = sum((ya[j] - pa * sizes_a[j]) * (yb[j] - pb * sizes_b[j]) for j in range(12))
    ss_a = sum((ya[j] - pa * sizes_a[j]) ** 2 for j in range(12))
    ss_b = sum((yb[j] - pb * sizes_b[j]) ** 2 for j in range(12))
    assert paired_correlation(ya, sizes_a, yb, sizes_b, continuity=False) == pytest.approx(
        cross / math.sqrt(ss_a * ss_b))
    # Newcombe's continuity correction belongs to the paired 2x2 table (one conversation a cluster): not here
    assert paired_correlation(ya, sizes_a, yb, sizes_b) == paired_correlation(ya, sizes_a, yb, sizes_b,
                                                                              continuity=False)
    assert paired_correlation([0, 0], [2, 3], [1, 2], [2, 3]) == 0.0  # no variation in A


def test_clustered_limits_use_the_design_effect(tmp_path):
    # 3 replicas per scenario, strongly clustered: every replica of a scenario agrees
    esc_a = [[1, 1, 1]] * 4 + [[0, 0, 0]] * 16
    esc_b = [[1, 1, 1]] * 2 + [[0, 0, 0]] * 18
    result = compare_scored(*_folders(tmp_path, esc_a, esc_b), n_boot=300, seed=2, interval="wilson-kish")
    p_u = result.differences[0]
    assert (p_u.a, p_u.b) == (pytest.approx(0.2), pytest.approx(0.1))
    # each rate's limits are Wilson-Kish with rho = 1 (ANOVA on the scenario totals), deff = 3
    totals_a = np.array([3] * 4 + [0] * 16)
    assert anova_icc(totals_a, 3) == pytest.approx(1.0)
    kish_a, kish_b = wilson_kish_interval(12, 60, 3, 1.0), wilson_kish_interval(6, 60, 3, 1.0)
    psi = paired_correlation(totals_a, [3] * 20, np.array([3] * 2 + [0] * 18), [3] * 20)
    assert kish_a.deff == 3.0 and p_u.psi == pytest.approx(psi)
    expected = newcombe_paired_interval(0.2, kish_a.interval, 0.1, kish_b.interval, psi)
    assert p_u.newcombe_ci == pytest.approx(expected)
    # ignoring the clusters would give a narrower interval
    naive = newcombe_paired_interval(0.2, wilson_interval(0.2, 60), 0.1, wilson_interval(0.1, 60), psi)
    assert p_u.newcombe_ci[1] - p_u.newcombe_ci[0] > naive[1] - naive[0]


def test_identical_assistants_differ_by_zero(tmp_path):
    esc = [[1, 0], [0, 0], [1, 1], [0, 1], [0, 0]]
    act = [[0, 0], [1, 0], [0, 0], [0, 0], [1, 1]]
    result = compare_scored(*_folders(tmp_path, esc, esc, act, act), n_boot=200, seed=3)
    *figures, approval = result.differences  # folders written as before approval evidence: no p_a
    assert approval.metric == "p_a" and math.isnan(approval.difference) and approval.note.startswith("not compared")
    for diff in figures:
        assert diff.difference == 0.0
        assert diff.bootstrap_ci == (0.0, 0.0)
        assert diff.newcombe_ci[0] < 0.0 < diff.newcombe_ci[1]
    assert result.disagreements.empty


# ------------------------------------------------------------------ pi, disagreements, not evaluated

def test_pi_pairs_and_disagreements(tmp_path):
    # case c0: A errs in ESC replica 0; B errs in ACT replica 1; c1 both clean; c2 B not evaluated
    esc_a, act_a = [[1, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]
    esc_b, act_b = [[0, 0], [0, 0], [0, None]], [[0, 1], [0, 0], [0, 0]]
    result = compare_scored(*_folders(tmp_path, esc_a, esc_b, act_a, act_b), n_boot=200, seed=4)
    by = {d.metric: d for d in result.differences}
    # A: 6 complete pairs, one failed (c0 r0) -> 5/6; B: 5 complete pairs (c2 r1 incomplete), one failed
    assert (by["pi"].a, by["pi"].n_a) == (pytest.approx(5 / 6), 6)
    assert (by["pi"].b, by["pi"].n_b) == (pytest.approx(4 / 5), 5)
    assert (by["p_u"].n_a, by["p_u"].n_b) == (6, 5)
    assert by["p_u"].difference == pytest.approx(0 - 1 / 6)
    assert by["p_o"].difference == pytest.approx(1 / 6)
    d = result.disagreements
    assert list(d["scenario_id"]) == ["c0:ESC", "c0:ACT"]
    assert list(d["difference"]) == [-0.5, 0.5] and list(d["case_id"]) == ["c0", "c0"]
    assert d.iloc[0][["errors_a", "n_a", "errors_b", "n_b"]].tolist() == [1, 2, 0, 2]


def test_bootstrap_is_reproducible_and_seeded(tmp_path):
    rng = np.random.default_rng(9)
    esc_a = rng.binomial(1, 0.3, size=(40, 3)).tolist()
    esc_b = rng.binomial(1, 0.2, size=(40, 3)).tolist()
    folders = _folders(tmp_path, esc_a, esc_b)
    first = compare_scored(*folders, n_boot=500, seed=11).to_dict()
    again = compare_scored(*folders, n_boot=500, seed=11).to_dict()
    other = compare_scored(*folders, n_boot=500, seed=12).to_dict()
    for data in (first, again):
        data["provenance"].pop("created")  # the time of the run
    assert first == again
    assert first["differences"]["p_u"]["bootstrap_ci"] != other["differences"]["p_u"]["bootstrap_ci"]
    no_act = first["differences"]["p_o"]
    assert no_act["difference"] is None and no_act["bootstrap_ci"] == [None, None]  # null, never 0
    assert no_act["newcombe_ci"] == [None, None] and no_act["bootstrap_undefined"] == 500


@pytest.mark.slow
def test_both_intervals_cover_a_clustered_paired_difference():
    # 400 data sets of 80 scenarios x 3 replicas; both assistants' scenario rates move together
    # (B's rate is A's minus 0.05, beta-distributed with ICC 0.2); true difference -0.05.
    # Tolerance: coverage >= 0.95 - 3 MCSE, MCSE = sqrt(0.95 * 0.05 / 400) = 0.011.
    # (With 40 scenarios the percentile bootstrap covers about 0.915 here: slightly liberal.)
    rng = np.random.default_rng(20240601)
    reps, k, m = 400, 80, 3
    shared = rng.beta(0.15 * 4, 0.85 * 4, size=(reps, k))
    theta_a = np.clip(shared + 0.05, 0, 1)
    theta_b = shared
    truth = theta_b.mean() - theta_a.mean()  # the mean of the scenario rates, by construction
    ya, yb = rng.binomial(m, theta_a), rng.binomial(m, theta_b)
    sizes = np.full(k, m)
    hits = {"newcombe": 0, "bootstrap": 0}
    for r in range(reps):
        pa, pb = ya[r].sum() / (k * m), yb[r].sum() / (k * m)
        ci = []
        for y in (ya[r], yb[r]):
            rho_hat = np.nan_to_num(anova_icc(y, m), nan=0.0)
            ci.append(wilson_kish_interval(y.sum(), k * m, m, rho_hat).interval)
        psi = paired_correlation(ya[r], sizes, yb[r], sizes)
        low, high = newcombe_paired_interval(pa, ci[0], pb, ci[1], psi)
        hits["newcombe"] += low <= -0.05 <= high
        (boot,) = paired_cluster_bootstrap(ya[r], sizes, yb[r], sizes, n_resamples=500, rng=rng)
        low, high = boot.confidence_interval("percentile", 0.95)
        hits["bootstrap"] += low <= -0.05 <= high
    assert abs(truth + 0.05) < 0.01
    mcse = math.sqrt(0.95 * 0.05 / reps)
    assert hits["newcombe"] / reps >= 0.95 - 3 * mcse
    assert hits["bootstrap"] / reps >= 0.95 - 3 * mcse


def test_bootstrap_standard_error_matches_the_linearised_one():
    # Delta method for a difference of ratio estimators over K resampled clusters:
    # Var = sum_j (e_bj / N_b - e_aj / N_a)^2 with e_j = y_j - p_hat n_j (plug-in, as the
    # bootstrap). MC error of the bootstrap SE with B = 4000: about 1 / sqrt(2B) = 1.1%; the
    # tolerance of 5% also allows the O(1/K) nonlinearity at K = 200.
    rng = np.random.default_rng(7)
    sizes_a, sizes_b = rng.integers(1, 5, 200), rng.integers(1, 5, 200)
    shared = rng.beta(1, 4, 200)
    ya, yb = rng.binomial(sizes_a, shared), rng.binomial(sizes_b, shared * 0.7)
    (boot,) = paired_cluster_bootstrap(ya, sizes_a, yb, sizes_b, n_resamples=4000, rng=rng)
    ea = ya - ya.sum() / sizes_a.sum() * sizes_a
    eb = yb - yb.sum() / sizes_b.sum() * sizes_b
    linear = math.sqrt(((eb / sizes_b.sum() - ea / sizes_a.sum()) ** 2).sum())
    assert float(boot.standard_error) == pytest.approx(linear, rel=0.05)
    assert float(boot.estimate) == pytest.approx(yb.sum() / sizes_b.sum() - ya.sum() / sizes_a.sum())
    low, high = boot.confidence_interval("bca", 0.95)
    assert low < boot.estimate < high


# ------------------------------------------------------------------ errors

def test_missing_folder_and_file(tmp_path):
    good = _write(tmp_path / "good", [_line("c0", "ESC", 0, 1)])
    with pytest.raises(InputError, match=r"nowhere: is not a folder of `escalation score` output"):
        compare_scored(tmp_path / "nowhere", good)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: has no conversations.jsonl"):
        compare_scored(good, tmp_path / "empty")


def test_scenarios_that_do_not_match(tmp_path):
    a = _write(tmp_path / "a", [_line(f"c{i}", "ESC", 0, 0) for i in range(5)])
    b = _write(tmp_path / "b", [_line(f"c{i}", "ESC", 0, 0) for i in range(1, 7)])
    with pytest.raises(InputError, match=r"not scored on the same scenarios: 1 only in .*a \('c0:ESC'\); "
                                         r"2 only in .*b \('c5:ESC', 'c6:ESC'\)"):
        compare_scored(a, b)


def test_label_clash_and_mode_clash(tmp_path):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    clash = _line("c0", "ACT", 0, 0) | {"scenario_id": "c0:ESC"}
    b = _write(tmp_path / "b", [clash])
    with pytest.raises(InputError, match="scenario 'c0:ESC' has the label ESC in one folder and ACT"):
        compare_scored(a, b)
    text = _write(tmp_path / "text", [_line("c0", "ESC", 0, 0)], mode="text")
    with pytest.raises(InputError, match="mode 'record' and .* in mode 'text'"):
        compare_scored(a, text)


def test_repeated_replica_names_the_folder_and_lines(tmp_path):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    b = _write(tmp_path / "b", [_line("c0", "ESC", 0, 0), _line("c0", "ESC", 0, 1) | {"conversation_id": "x"}])
    with pytest.raises(InputError, match=r"b/conversations.jsonl:2: field 'replica': case 'c0', label 'ESC', "
                                         r"replica 0 repeats line 1$"):
        compare_scored(a, b)


def test_repeated_conversation_id_is_an_error_as_in_the_readers(tmp_path):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    b = _write(tmp_path / "b", [_line("c0", "ESC", 0, 0), _line("c0", "ESC", 1, 1) | {"conversation_id": "c0:ESC:0"}])
    with pytest.raises(InputError, match=r"b/conversations.jsonl:2: field 'conversation_id': 'c0:ESC:0' repeats the "
                                         r"conversation of line 1$"):
        compare_scored(a, b)


def test_unknown_bootstrap_method(tmp_path):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    with pytest.raises(ValueError, match=r"^`interval` must be one of auto, wilson-kish, .*; got 'bcx'$"):
        compare_scored(a, a, interval="bcx")


def test_bad_lines_name_file_line_and_field(tmp_path):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    bad = tmp_path / "bad"
    _write(bad, [_line("c0", "ESC", 0, 0)])
    broken = {k: v for k, v in _line("c1", "ESC", 0, 0).items() if k != "u"}
    with (bad / "conversations.jsonl").open("ab") as handle:
        handle.write(orjson.dumps(broken) + b"\n")
    with pytest.raises(InputError, match=r"conversations.jsonl:2: field 'u': missing"):
        read_scored(bad)
    (bad / "conversations.jsonl").write_bytes(b'{"conversation_id": \n')
    with pytest.raises(InputError, match=r"conversations.jsonl:1: not valid JSON"):
        compare_scored(a, bad)


# ------------------------------------------------------------------ command line

def _run(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "compare", *args)


def test_cli_prints_json_and_writes_files(tmp_path, monkeypatch, capsys):
    esc_a, act_a = [[1, 0], [0, 0], [1, 1]], [[0, 0], [1, 0], [0, 0]]
    esc_b, act_b = [[0, 0], [0, 0], [1, 0]], [[0, 0], [1, 1], [0, 0]]
    a, b = _folders(tmp_path, esc_a, esc_b, act_a, act_b)
    code, out, _ = _run(monkeypatch, capsys, a, b, "--json", "--n-boot", "300", "--seed", "3",
                        "--out", tmp_path / "cmp")
    assert code == 0
    data = orjson.loads(out)
    assert set(data["differences"]) == {"p_u", "p_o", "pi", "p_a"}
    assert data["differences"]["p_a"]["difference"] is None  # folders without approval evidence
    assert data["differences"]["p_u"]["difference"] == pytest.approx(1 / 6 - 3 / 6)
    assert orjson.loads((tmp_path / "cmp" / "compare.json").read_bytes()) == data
    assert (tmp_path / "cmp" / "disagreements.csv").read_text().startswith("scenario_id,case_id,label")
    code, out, _ = _run(monkeypatch, capsys, a, b, "--n-boot", "300")
    assert code == 0 and "Newcombe" in out and "Scenarios where they disagree (3" in out


def test_cli_error_is_one_line_with_exit_code_2(tmp_path, monkeypatch, capsys):
    a = _write(tmp_path / "a", [_line("c0", "ESC", 0, 0)])
    code, out, err = _run(monkeypatch, capsys, a, tmp_path / "missing")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "missing: is not a folder" in err


@pytest.mark.parametrize("cases,replicas,limits", [(6, 2, "wilson-kish-t"), (20, 1, "korn-graubard"),
                                                   (20, 2, "beta-binomial-bayes"), (120, 2, "beta-binomial-bayes")])
def test_auto_takes_the_narrowest_limits_that_held_at_this_many_cases(tmp_path, cases, replicas, limits):
    """Issue 36 point 3 for compare: the narrowest Newcombe limits that escalation study differences found holding
    at this many cases and escalation study coverage for each rate of this design (DIFFERENCE_COVERAGE_STUDY,
    interval_choice.csv: with replicas wilson-kish-t below 10 scenarios, beta-binomial-bayes from 10; one
    conversation a scenario korn-graubard below 30); auto is then exactly the run of the method it names."""
    rng = np.random.default_rng(cases)
    esc_a = rng.binomial(1, 0.3, size=(cases, replicas)).tolist()
    esc_b = rng.binomial(1, 0.2, size=(cases, replicas)).tolist()
    folder_a, folder_b = _folders(tmp_path, esc_a, esc_b)
    auto = compare_scored(folder_a, folder_b, n_boot=300, seed=4)
    named = compare_scored(folder_a, folder_b, n_boot=300, seed=4, interval=limits)
    assert (auto.interval, auto.requested) == (limits, "auto") and f"with {limits} limits" in auto.interval_reason
    assert [d.to_dict() for d in auto.differences] == [d.to_dict() for d in named.differences]
    assert auto.to_dict()["interval_requested"] == "auto" and named.to_dict()["interval_requested"] == limits
