"""Oversight capacity (issue 20, points 1 and 2): the queue model and ``escalation capacity``.

Reference values are recomputed here by other routes: Erlang C by its direct sum in exact
fractions (Kleinrock 1975, section 3.5, ``P[queueing]``) and in log space for many servers;
hand-worked M/M/1 and M/M/2 queues; the rates from ``conversations.jsonl`` read with the
standard ``json`` module (its ``escalated`` and ``o`` fields, SPEC sections 3 and 7).
"""
from __future__ import annotations

import inspect
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from escalation.estimators.metric import HandoffTotals, LogisticQuality, TableQuality, read_quality_table, score_file
from escalation.estimators.metric._capacity import (
    DEFAULT_DRAWS,
    MAX_REVIEWERS,
    CapacityModel,
    _percentile,
    capacity_outputs,
)
from escalation.estimators.records import load_policy
from escalation.estimators.stats import erlang_c, group_coverage, mean_wait_minutes

from .._helpers import run_cli_output

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"
ASSUMED = ["--traffic", "200", "--esc-share", "0.1", "--review-minutes", "4"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The 200 tau-bench gpt-4o airline runs, scored (p_u 11/16, p_o 42/184)."""
    out = tmp_path_factory.mktemp("cap") / "scored"
    score_file(LOG, load_policy(POLICY), out_dir=out)
    return out


def _rows(folder: Path) -> list[dict]:
    with (folder / "conversations.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _rates_by_hand(folder: Path) -> dict:
    """e_ESC, e_ACT, p_u from the lines themselves: ``escalated`` for ESC, ``o`` for ACT."""
    rows = [r for r in _rows(folder) if r["evaluated"]]
    esc = [r for r in rows if r["label"] == "ESC"]
    act = [r for r in rows if r["label"] == "ACT"]
    return {"e_esc": (sum(r["escalated"] for r in esc), len(esc)), "e_act": (sum(r["o"] for r in act), len(act)),
            "p_u": (sum(r["u"] for r in esc), len(esc)),
            "scenarios": (len({r["scenario_id"] for r in esc}), len({r["scenario_id"] for r in act}))}


def _erlang_c_exact(a: Fraction, r: int) -> Fraction:
    """The direct sum: ``(A^R / R!) R / (R - A)`` over ``sum_{k<R} A^k / k! + (A^R / R!) R / (R - A)``."""
    top = a ** r / math.factorial(r) * Fraction(r) / (r - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(r)) + top)


def _erlang_c_log(a: float, r: int) -> float:
    """The same sum in log space (``lgamma``, log-sum-exp), for many servers."""
    terms = [k * math.log(a) - math.lgamma(k + 1) for k in range(r)]
    last = r * math.log(a) - math.lgamma(r + 1) + math.log(r / (r - a))
    peak = max(*terms, last)
    return math.exp(last - peak) / (sum(math.exp(t - peak) for t in terms) + math.exp(last - peak))


# --- the queue ------------------------------------------------------------------------------------


@pytest.mark.parametrize("reviewers", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("per_hour", [1, 7, 20, 45, 90])
@pytest.mark.parametrize("minutes", [1, 4, 10])
def test_erlang_c_is_the_exact_direct_sum_over_a_grid(per_hour, reviewers, minutes):
    load = Fraction(per_hour * minutes, 60)
    if load >= reviewers:
        assert np.isnan(erlang_c(float(load), reviewers))
        return
    exact = _erlang_c_exact(load, reviewers)
    assert float(erlang_c(float(load), reviewers)) == pytest.approx(float(exact), rel=1e-12)
    wait = exact * minutes / (reviewers - load)  # C / (R mu - a) hours, in minutes
    assert float(mean_wait_minutes(float(load), reviewers, minutes)) == pytest.approx(float(wait), rel=1e-12)


def test_hand_worked_queues():
    # M/M/2, A = 1 Erlang (15 hand-offs an hour, 4 minutes each, mu = 15 an hour): C = 1/3,
    # W_q = C / (R mu - lambda) = (1/3) / (30 - 15) hours = 4/3 minutes.
    assert float(erlang_c(1.0, 2)) == pytest.approx(1 / 3, rel=1e-14)
    assert float(mean_wait_minutes(1.0, 2, 4.0)) == pytest.approx(60 * (1 / 3) / 15, rel=1e-14)
    # M/M/1: C = rho, W_q = rho / (mu - lambda): 5 an hour, 6 minutes (mu = 10): 0.5 / 5 h = 6 minutes.
    assert float(erlang_c(0.5, 1)) == pytest.approx(0.5, rel=1e-14)
    assert float(mean_wait_minutes(0.5, 1, 6.0)) == pytest.approx(6.0, rel=1e-14)
    # no load, no wait
    assert float(erlang_c(0.0, 3)) == 0.0 and float(mean_wait_minutes(0.0, 3, 4.0)) == 0.0


@pytest.mark.parametrize("reviewers, load", [(500, 480.0), (2000, 1900.0), (3000, 2999.0), (5000, 10.0)])
def test_erlang_c_holds_for_thousands_of_reviewers(reviewers, load):
    value = float(erlang_c(load, reviewers))
    assert math.isfinite(value) and 0.0 <= value <= 1.0
    assert value == pytest.approx(_erlang_c_log(load, reviewers), rel=1e-9, abs=1e-300)


def test_erlang_c_is_vectorised_and_undefined_at_and_above_one():
    loads = np.array([0.5, 1.0, 1.5, 2.0, 3.5])
    c = erlang_c(loads, 2)
    assert np.isnan(c[3:]).all() and np.isfinite(c[:3]).all()
    assert np.isnan(mean_wait_minutes(loads, 2, 4.0)[3:]).all()
    assert c[:3] == pytest.approx([float(_erlang_c_exact(Fraction(x).limit_denominator(), 2)) for x in loads[:3]])


def test_allen_cunneen_reduces_to_mm_r_and_scales():
    base = float(mean_wait_minutes(2.4, 3, 5.0))
    assert float(mean_wait_minutes(2.4, 3, 5.0, 1.0, 1.0)) == base
    for ca, cs in ((0.0, 0.0), (0.5, 1.0), (1.5, 0.3), (2.0, 2.0)):
        assert float(mean_wait_minutes(2.4, 3, 5.0, ca, cs)) == pytest.approx(base * (ca**2 + cs**2) / 2, rel=1e-14)


def test_utilisation_and_protection_by_hand():
    quality = LogisticQuality()
    out = capacity_outputs(0.5, 0.1, 0.2, traffic=100.0, esc_share=0.2, reviewers=2, review_minutes=5.0)
    # a = 100 (0.2 * 0.5 + 0.8 * 0.1) = 18 an hour; rho = 18 * 5 / (60 * 2) = 0.75
    assert float(out["handoffs_per_hour"]) == pytest.approx(18.0, rel=1e-14)
    assert float(out["utilisation"]) == pytest.approx(0.75, rel=1e-14)
    g = 0.95 / (1 + math.exp(20 * (0.75 - 0.9)))
    assert float(out["review_quality"]) == pytest.approx(g, rel=1e-14)
    assert float(out["protection"]) == pytest.approx(0.8 * g, rel=1e-14)
    assert float(out["reviews_under_load"]) == pytest.approx(float(quality(0.0)) - g, rel=1e-14)
    assert float(out["p_wait"]) == pytest.approx(float(_erlang_c_exact(Fraction(3, 2), 2)), rel=1e-12)
    unstable = capacity_outputs(0.5, 0.1, 0.2, traffic=200.0, esc_share=0.2, reviewers=2, review_minutes=5.0)
    assert float(unstable["utilisation"]) == pytest.approx(1.5)
    assert np.isnan(unstable["p_wait"]) and np.isnan(unstable["mean_wait_minutes"])
    assert 0 < float(unstable["protection"]) < float(out["protection"])  # g is read at the offered rho


def test_the_quality_table_interpolates_and_holds_its_ends(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("utilisation,quality\n0.2,0.9\n0.6,0.7\n1.2,0.1\n")
    table = read_quality_table(path)
    assert table(np.array([0.0, 0.2, 0.4, 0.9, 1.2, 3.0])) == pytest.approx([0.9, 0.9, 0.8, 0.4, 0.1, 0.1])
    assert table.to_dict() == {"curve": "table", "source": str(path), "points": [[0.2, 0.9], [0.6, 0.7], [1.2, 0.1]]}
    with pytest.raises(ValueError, match="not increase"):
        TableQuality((0.0, 1.0), (0.5, 0.6))


# --- the measured inputs and their draws ----------------------------------------------------------


def test_the_inputs_are_the_folders_own_counts(folder):
    from escalation.estimators.records import read_scored

    frame, summary = read_scored(folder)
    totals = HandoffTotals.from_scored(frame, summary)
    hand = _rates_by_hand(folder)
    inputs = totals.inputs()
    for name in ("e_esc", "e_act"):
        assert (inputs[name]["reached"], inputs[name]["n"]) == hand[name]
    assert (inputs["p_u"]["errors"], inputs["p_u"]["n"]) == hand["p_u"] == (11, 16)  # the p_u 11/16
    assert hand["e_act"] == (42, 184)  # e_ACT is p_o: 42/184
    assert hand["e_esc"] == (6, 16)  # 16 ESC, 10 with cause no_handoff
    assert (inputs["p_u"]["scenarios"], inputs["e_act"]["scenarios"]) == hand["scenarios"]


def _totals(esc_sizes, esc_reached, esc_under, act_sizes, act_reached) -> HandoffTotals:
    return HandoffTotals(*(np.asarray(x, dtype=np.int64) for x in (esc_sizes, esc_reached, esc_under, act_sizes,
                                                                    act_reached)))


def test_the_draws_resample_scenarios_not_conversations():
    # one ESC scenario: every cluster resample is that scenario, so e_ESC and p_u do not vary
    one = _totals([10], [4], [6], [5, 5, 5], [0, 1, 5])
    e_esc, e_act, p_u, r_esc, r_act = one.draws(500, np.random.default_rng(1))
    assert (r_esc == 0).all() and (r_act == 0).all()  # no approval evidence: no approval review
    assert (e_esc == 0.4).all() and (p_u == 0.6).all()
    assert set(np.round(e_act * 15).astype(int)) <= {a + b + c for a in (0, 1, 5) for b in (0, 1, 5)
                                                     for c in (0, 1, 5)}
    # e_ESC and p_u share their resample: with no acted_before_handoff, e_ESC + p_u = 1 in every draw
    shared = _totals([3, 4, 5, 2], [1, 4, 0, 2], [2, 0, 5, 0], [1], [0])
    e_esc, _, p_u, _, _ = shared.draws(500, np.random.default_rng(2))
    assert np.allclose(e_esc + p_u, 1.0) and e_esc.std() > 0


def test_the_percentile_interval_is_numpys_and_ranks_undefined_draws_at_one_end():
    values = np.random.default_rng(4).gamma(2.0, size=999)
    for level in (0.8, 0.9, 0.95):
        alpha = (1 - level) / 2
        assert _percentile(values, level) == pytest.approx(np.quantile(values, [alpha, 1 - alpha]), rel=1e-14)
    # 10 draws, 2 undefined: positions 9 * (0.05, 0.95) = 0.45 and 8.55, between order statistics 0-1 and 8-9
    ten = np.array([np.nan, 5.0, 1.0, 3.0, np.nan, 2.0, 4.0, 6.0, 7.0, 0.0])
    assert _percentile(ten, 0.9) == [pytest.approx(0.45), None]  # undefined ranked above 7
    assert _percentile(ten, 0.9, undefined_high=False) == [None, pytest.approx(6.55)]  # ranked below 0
    assert _percentile(np.arange(11.0), 0.8) == [pytest.approx(1.0), pytest.approx(9.0)]
    assert _percentile(np.array([1.0, 2.0, 3.0, np.nan]), 0.5) == [pytest.approx(1.75), None]


def test_the_bootstrap_is_deterministic_at_a_seed_and_moves_with_it():
    totals = _totals([4] * 6, [1, 2, 0, 4, 3, 1], [3, 2, 4, 0, 1, 3], [4] * 20, [0, 1] * 10)
    options = dict(traffic=120.0, esc_share=0.2, review_minutes=6.0)
    first = CapacityModel(totals, **options, seed=7).report(3)
    assert CapacityModel(totals, **options, seed=7).report(3) == first
    assert CapacityModel(totals, **options, seed=8).report(3)["handoffs_per_hour"]["ci"] != \
        first["handoffs_per_hour"]["ci"]
    assert first["interval"] == {"method": first["interval"]["method"], "confidence": 0.95, "draws": DEFAULT_DRAWS,
                                 "seed": 7, "coverage": first["interval"]["coverage"]}


def test_the_intervals_carry_the_coverage_the_study_measured_for_the_data_s_design():
    """Issue 36 point 4: the capacity intervals rest on the percentile cluster bootstrap of a rate, which
    escalation study coverage measured by design group; the output says what it found for each half's
    scenarios and replicas, and warns where it did not hold (6 ESC scenarios of 4: mean 0.52)."""
    totals = _totals([4] * 6, [1, 2, 0, 4, 3, 1], [3, 2, 4, 0, 1, 3], [4] * 20, [0, 1] * 10)
    model = CapacityModel(totals, traffic=120.0, esc_share=0.2, review_minutes=6.0, seed=7)
    coverage = model.report(3)["interval"]["coverage"]
    for half, scenarios in (("esc", 6), ("act", 20)):
        study = group_coverage(scenarios, True)["bootstrap-percentile"]
        assert coverage[half] == {"scenarios": scenarios, "replicas": True, "cells": study.cells,
                                  "mean": study.mean_coverage, "lowest": study.min_coverage, "holds": study.holds}
        assert not study.holds  # below 100 scenarios the bootstrap fell short (intervals.md)
        assert any(w.startswith(f"the {half.upper()} half's {scenarios} scenarios with replicas: the percentile "
                                "cluster bootstrap") and f"held {study.mean_coverage:.2f} on average" in w
                   for w in model.warnings())


@pytest.mark.slow
def test_intervals_contain_the_estimate_and_narrow_with_many_scenarios():
    rng = np.random.default_rng(3)
    small = _totals([5] * 8, rng.binomial(5, 0.4, 8), [0] * 8, [5] * 30, rng.binomial(5, 0.2, 30))
    big_k = 20_000
    big = _totals([5] * big_k, rng.binomial(5, 0.4, big_k), [0] * big_k, [5] * big_k, rng.binomial(5, 0.2, big_k))
    widths = {}
    for name, totals in (("small", small), ("big", big)):
        report = CapacityModel(totals, traffic=100.0, esc_share=0.3, review_minutes=3.0, draws=500).report(4)
        for key in ("handoffs_per_hour", "utilisation", "p_wait", "mean_wait_minutes", "review_quality",
                    "protection"):
            low, high = report[key]["ci"]
            assert low <= report[key]["value"] <= high, (name, key)
        widths[name] = report["handoffs_per_hour"]["ci"][1] - report["handoffs_per_hour"]["ci"][0]
        if name == "big":
            for rate in ("e_esc", "e_act"):
                assert report["inputs"][rate]["ci"][1] - report["inputs"][rate]["ci"][0] < 0.01
    assert widths["big"] < widths["small"] / 10


def test_unstable_draws_make_the_waiting_ends_null_and_are_counted():
    totals = _totals([4] * 10, [1, 2, 0, 4, 3, 1, 2, 2, 0, 1], [0] * 10, [4] * 10, [0, 1] * 5)
    model = CapacityModel(totals, traffic=100.0, esc_share=0.5, review_minutes=6.0, seed=0)
    at = model.at(3)
    rho = 100.0 * (0.5 * totals.rates()[0] + 0.5 * totals.rates()[1]) * 6.0 / 180.0
    assert at["utilisation"]["value"] == pytest.approx(rho)
    point = capacity_outputs(*totals.rates(), traffic=100.0, esc_share=0.5, reviewers=3, review_minutes=6.0)
    assert bool(point["utilisation"] < 1) == at["stable"]
    share = at["unstable_draws"]
    assert 0.025 < share < 0.975  # this set-up straddles rho = 1
    assert at["mean_wait_minutes"]["ci"][1] is None and at["p_wait"]["ci"][1] is None
    assert at["mean_wait_minutes"]["ci"][0] is not None
    draws = capacity_outputs(*model.rate_draws, traffic=100.0, esc_share=0.5, reviewers=3, review_minutes=6.0)
    assert share == np.mean(draws["utilisation"] >= 1)


# --- the command ----------------------------------------------------------------------------------


def _json(monkeypatch, capsys, *args) -> dict:
    code, out, err = run_cli_output(monkeypatch, capsys, "capacity", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _point(hand: dict, reviewers: int, traffic=200.0, share=0.1, minutes=4.0) -> dict:
    """The model recomputed from the folder's counts, with the exact Erlang C of the test."""
    e_esc, e_act, p_u = (Fraction(*hand[k]) for k in ("e_esc", "e_act", "p_u"))
    a = Fraction(traffic) * (Fraction(share).limit_denominator() * e_esc + (1 - Fraction(share).limit_denominator())
                             * e_act)
    load = a * Fraction(minutes) / 60
    rho = load / reviewers
    g = 0.95 / (1 + math.exp(20 * (float(rho) - 0.9)))
    c = _erlang_c_exact(load, reviewers) if rho < 1 else None
    return {"handoffs_per_hour": float(a), "utilisation": float(rho), "p_wait": None if c is None else float(c),
            "mean_wait_minutes": None if c is None else float(c * Fraction(minutes) / (reviewers - load)),
            "review_quality": g, "protection": float(1 - p_u) * g}


@pytest.mark.parametrize("reviewers", [3, 5])
def test_the_json_output_is_the_model_of_the_folders_counts(monkeypatch, capsys, folder, reviewers):
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", str(reviewers))
    hand = _rates_by_hand(folder)
    for key, value in _point(hand, reviewers).items():
        assert set(data[key]) == {"value", "ci"} and len(data[key]["ci"]) == 2
        if value is None:
            assert data[key]["value"] is None, key
        else:
            assert data[key]["value"] == pytest.approx(value, rel=1e-9), key
    assert data["stable"] is (reviewers == 5)  # A = 3.24 Erlangs: 3 reviewers are too few
    if reviewers == 3:
        assert data["mean_wait_minutes"]["ci"][1] is None and data["p_wait"]["ci"][1] is None
    assert data["inputs"]["e_esc"]["reached"] == 6 and data["inputs"]["e_act"]["reached"] == 42
    assert data["inputs"]["p_u"]["value"] == 11 / 16
    assert data["assumptions"] == {"traffic_per_hour": 200.0, "esc_share": 0.1, "review_minutes": 4.0,
                                   "approval_minutes": 4.0, "arrival_cv": 1.0, "service_cv": 1.0,
                                   "approval_cv": 1.0, "reviewers": reviewers, "quality": LogisticQuality().to_dict()}
    assert data["interval"]["confidence"] == json.loads((folder / "summary.json").read_text())["confidence"]
    assert data["interval"]["seed"] == 0 and data["interval"]["draws"] == DEFAULT_DRAWS


def test_bursty_arrivals_warn_that_the_waiting_outputs_are_optimistic(monkeypatch, capsys, folder):
    summary = json.loads((folder / "summary.json").read_text())["warnings"]
    plain = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", "5")
    coverage = [w for w in plain["warnings"] if "percentile cluster bootstrap" in w]  # few scenarios (above)
    assert plain["warnings"] == coverage + summary  # Poisson arrivals: no word on the waiting outputs
    bursty = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", "5", "--arrival-cv", "2")
    assert bursty["warnings"][len(bursty["warnings"]) - len(summary):] == summary
    (extra,) = bursty["warnings"][len(coverage):len(bursty["warnings"]) - len(summary)]
    assert extra.startswith("arrivals burstier than Poisson (--arrival-cv 2)") and "optimistic" in extra


def test_the_text_output_says_what_is_assumed_and_unstable(monkeypatch, capsys, folder):
    code, out, err = run_cli_output(monkeypatch, capsys, "capacity", folder, *ASSUMED, "--reviewers", "3")
    assert code == 0, err
    assert "assumed (not measured" in out and "11/16" in out and "42/184" in out and "6/16" in out
    lines = {line.split("  ")[1]: line for line in out.splitlines() if line.startswith("  ")}
    assert lines["mean wait, minutes"].split()[3] == "unstable" and "draws with an unstable queue" in out


def test_a_table_and_the_curve_options_reach_the_model(monkeypatch, capsys, folder, tmp_path):
    table = tmp_path / "g.csv"
    table.write_text("utilisation,quality\n0,1\n1,0\n")
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", "5", "--quality-table", table)
    assert data["review_quality"]["value"] == pytest.approx(1 - data["utilisation"]["value"])
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", "5", "--quality-half", "0.5",
                 "--quality-slope", "4", "--quality-max", "0.8", "--arrival-cv", "2", "--confidence", "0.9")
    rho = data["utilisation"]["value"]
    assert data["review_quality"]["value"] == pytest.approx(0.8 / (1 + math.exp(4 * (rho - 0.5))))
    base = _json(monkeypatch, capsys, folder, *ASSUMED, "--reviewers", "5")
    assert data["mean_wait_minutes"]["value"] == pytest.approx(base["mean_wait_minutes"]["value"] * 2.5)
    assert data["interval"]["confidence"] == 0.9


def test_the_commands_defaults_are_the_models():
    import typer.main

    from escalation.cli import app

    params = {param.opts[0]: param for param in typer.main.get_command(app).commands["capacity"].params}
    model = inspect.signature(CapacityModel).parameters
    assert params["--draws"].default == model["draws"].default and params["--seed"].default == model["seed"].default
    assert params["--arrival-cv"].default == model["arrival_cv"].default == params["--service-cv"].default == 1.0
    curve = LogisticQuality()
    for flag, value in (("--quality-half", curve.half), ("--quality-slope", curve.slope),
                        ("--quality-max", curve.maximum)):
        assert f"(default {value:g})" in params[flag].help, flag


@pytest.mark.parametrize("target", [["--target-wait", "2"], ["--target-wait", "0.25"],
                                    ["--target-protection", "0.25"]])
def test_solve_reviewers_gives_the_fewest_that_meet_the_target(monkeypatch, capsys, folder, target):
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--solve", "reviewers", *target)
    solution, hand = data["solution"], _rates_by_hand(folder)
    r = solution["reviewers"]
    assert data["reviewers"] == r
    goal = float(target[1])

    def meets(point: dict) -> bool:
        if target[0] == "--target-wait":
            return point["mean_wait_minutes"] is not None and point["mean_wait_minutes"] <= goal
        return point["protection"] >= goal
    assert meets(_point(hand, r)) and not meets(_point(hand, r - 1))
    model = _model(folder)
    bound = solution["reviewers_interval"]
    if target[0] == "--target-wait":
        assert model.at(bound)["mean_wait_minutes"]["ci"][1] <= goal
        assert not (model.at(bound - 1)["mean_wait_minutes"]["ci"][1] or math.inf) <= goal
        assert bound >= r
    else:  # with 4 ESC scenarios a resample has p_u = 1: the lower end of the protection is 0 at any staffing
        assert bound is None and solution["notes"]


@pytest.mark.parametrize("traffic, wait", [(20_000.0, 0.5), (3_000.0, 0.05), (50.0, 10.0)])
def test_solve_reviewers_with_many_reviewers_meets_the_target_exactly(folder, traffic, wait):
    model = _model(folder, traffic=traffic)
    solution = model.reviewers_for(wait=wait)
    r, bound = solution["reviewers"], solution["reviewers_interval"]

    def point(reviewers):
        return capacity_outputs(*model.rates, traffic=traffic, esc_share=0.1, reviewers=reviewers,
                                review_minutes=4.0)["mean_wait_minutes"]
    assert point(r) <= wait and not point(r - 1) <= wait  # NaN (unstable) compares False
    assert model.at(bound)["mean_wait_minutes"]["ci"][1] <= wait
    assert not (model.at(bound - 1)["mean_wait_minutes"]["ci"][1] or math.inf) <= wait


def test_solve_reviewers_for_protection_at_the_interval_end():
    rng = np.random.default_rng(5)
    totals = _totals([5] * 60, rng.binomial(5, 0.8, 60), rng.binomial(5, 0.1, 60), [5] * 60, rng.binomial(5, 0.2, 60))
    model = CapacityModel(totals, traffic=300.0, esc_share=0.2, review_minutes=5.0)
    solution = model.reviewers_for(protection=0.75)
    r, bound = solution["reviewers"], solution["reviewers_interval"]
    assert model.at(r)["protection"]["value"] >= 0.75 > model.at(r - 1)["protection"]["value"]
    assert model.at(bound)["protection"]["ci"][0] >= 0.75 > model.at(bound - 1)["protection"]["ci"][0]
    assert bound > r and solution["notes"] == []


def _model(folder: Path, traffic: float = 200.0, **options) -> CapacityModel:
    from escalation.estimators.records import read_scored

    frame, summary = read_scored(folder)
    return CapacityModel(HandoffTotals.from_scored(frame, summary), traffic=traffic, esc_share=0.1,
                         review_minutes=4.0, confidence=summary["confidence"], **options)


def test_solve_reviewers_without_an_answer_is_null(monkeypatch, capsys, folder):
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--solve", "reviewers", "--target-protection", "0.5")
    # (1 - 11/16) g(0) = 0.3125 * 0.95 / (1 + e^-18) < 0.5: no staffing reaches it
    assert data["solution"]["reviewers"] is None and data["reviewers"] is None
    assert data["utilisation"] == {"value": None, "ci": [None, None]}
    assert data["handoffs_per_hour"]["value"] == pytest.approx(_point(_rates_by_hand(folder), 1)["handoffs_per_hour"])


@pytest.mark.parametrize("reviewers, utilisation", [(3, "0.8"), (5, "0.6"), (2, "0.7")])
def test_solve_budget_reaches_the_target_utilisation(monkeypatch, capsys, folder, reviewers, utilisation):
    data = _json(monkeypatch, capsys, folder, *ASSUMED, "--solve", "budget", "--reviewers", str(reviewers),
                 "--target-utilisation", utilisation)
    budget = data["solution"]["e_act_max"]
    e_esc = 6 / 16
    rho = capacity_outputs(e_esc, budget["value"], 0.0, traffic=200.0, esc_share=0.1, reviewers=reviewers,
                           review_minutes=4.0)["utilisation"]
    assert float(rho) == pytest.approx(float(utilisation), abs=1e-9)
    assert budget["ci"][0] <= budget["value"] <= budget["ci"][1]
    assert data["solution"]["within"] is (42 / 184 <= budget["value"])


def test_the_budget_at_its_bounds(folder):
    model = _model(folder)
    none = model.budget(1, 0.4)  # ESC alone: 200 * 0.1 * 0.375 * 4 / 60 = 0.5 > 0.4
    assert none["e_act_max"]["value"] is None and none["esc_utilisation"] == pytest.approx(0.5)
    assert none["within"] is None and none["notes"][0].startswith("no budget")
    free = model.budget(40, 0.8)  # every ACT conversation: 200 * (0.0375 + 0.9) * 4 / 2400 = 0.3125 < 0.8
    assert free["e_act_max"] == {"value": 1.0, "ci": [1.0, 1.0]} and free["within"] is True
    assert free["notes"][0].startswith("not binding")
    # 2 reviewers at 0.5: a budget by the point estimate, none at the interval's lower end (draws with
    # e_ESC > 0.75 take the ESC utilisation above 0.5 alone)
    edge = model.budget(2, 0.5)["e_act_max"]
    assert edge["value"] == pytest.approx((0.5 - 0.25) / 6) and edge["ci"][0] is None and edge["ci"][1] > 0


BAD = [
    (["--traffic", "-1", "--esc-share", "0.1", "--review-minutes", "4", "--reviewers", "3"], "--traffic"),
    (["--traffic", "nan", "--esc-share", "0.1", "--review-minutes", "4", "--reviewers", "3"], "--traffic"),
    (["--traffic", "200", "--esc-share", "1.5", "--review-minutes", "4", "--reviewers", "3"], "--esc-share"),
    (["--traffic", "200", "--esc-share", "-0.1", "--review-minutes", "4", "--reviewers", "3"], "--esc-share"),
    ([*ASSUMED, "--reviewers", "0"], "--reviewers"),
    ([*ASSUMED, "--reviewers", str(MAX_REVIEWERS + 1)], "--reviewers"),
    ([*ASSUMED], "--reviewers"),
    (["--traffic", "200", "--esc-share", "0.1", "--review-minutes", "0", "--reviewers", "3"], "--review-minutes"),
    (["--traffic", "200", "--esc-share", "0.1", "--review-minutes", "-4", "--reviewers", "3"], "--review-minutes"),
    ([*ASSUMED, "--reviewers", "3", "--arrival-cv", "-1"], "--arrival-cv"),
    ([*ASSUMED, "--reviewers", "3", "--service-cv", "inf"], "--service-cv"),
    ([*ASSUMED, "--reviewers", "3", "--quality-max", "0"], "--quality-max"),
    ([*ASSUMED, "--reviewers", "3", "--quality-slope", "0"], "--quality-slope"),
    ([*ASSUMED, "--reviewers", "3", "--quality-half", "-0.5"], "--quality-half"),
    ([*ASSUMED, "--reviewers", "3", "--draws", "5"], "--draws"),
    ([*ASSUMED, "--reviewers", "3", "--seed", "-1"], "--seed"),
    ([*ASSUMED, "--reviewers", "3", "--confidence", "1.5"], "--confidence"),
    ([*ASSUMED, "--reviewers", "3", "--target-wait", "2"], "--target-wait"),
    ([*ASSUMED, "--reviewers", "3", "--target-utilisation", "0.5"], "--target-utilisation"),
    ([*ASSUMED, "--solve", "reviewers"], "--solve"),
    ([*ASSUMED, "--solve", "reviewers", "--target-wait", "2", "--target-protection", "0.2"], "--solve"),
    ([*ASSUMED, "--solve", "reviewers", "--reviewers", "3", "--target-wait", "2"], "--reviewers"),
    ([*ASSUMED, "--solve", "reviewers", "--target-wait", "0"], "--target-wait"),
    ([*ASSUMED, "--solve", "reviewers", "--target-protection", "1.2"], "--target-protection"),
    ([*ASSUMED, "--solve", "budget", "--reviewers", "3", "--target-utilisation", "1"], "--target-utilisation"),
    ([*ASSUMED, "--solve", "budget"], "--reviewers"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args, flag", BAD, ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_a_bad_value_is_one_line_exit_2_and_writes_nothing(monkeypatch, capsys, folder, tmp_path, args, flag):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli_output(monkeypatch, capsys, "capacity", folder, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and flag in err, err
    assert list(tmp_path.iterdir()) == []


TABLES = [
    ("utilisation,quality\n0,0.5\n0.5,0.7\n", "quality", 3),  # rises with load
    ("utilisation,quality\n0,1.2\n0.5,0.7\n", "quality", 2),  # out of [0, 1]
    ("utilisation,quality\n0,0.9\n0.5,-0.1\n", "quality", 3),
    ("utilisation,quality\n0.5,0.9\n0.2,0.7\n", "utilisation", 3),  # not increasing
    ("utilisation,quality\n-0.1,0.9\n0.2,0.7\n", "utilisation", 2),
    ("utilisation,quality\n0,0.9\n0.5,high\n", "quality", 3),
    ("load,quality\n0,0.9\n0.5,0.7\n", "utilisation", 1),
    ("utilisation,quality\n0,0.9\n", "two rows", None),
]


@pytest.mark.parametrize("text, what, line", TABLES)
def test_a_bad_quality_table_is_one_line_exit_2(monkeypatch, capsys, folder, tmp_path, text, what, line):
    path = tmp_path / "g.csv"
    path.write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli_output(monkeypatch, capsys, "capacity", folder, *ASSUMED, "--reviewers", "3",
                                    "--quality-table", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and what in err, err
    assert f"{path}:{line}:" in err if line is not None else f"{path}:" in err
    assert sorted(tmp_path.iterdir()) == [path]


def test_a_table_with_the_curve_options_and_a_missing_table_are_errors(monkeypatch, capsys, folder, tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("utilisation,quality\n0,1\n1,0\n")
    for extra in (["--quality-table", path, "--quality-half", "0.5"], ["--quality-table", tmp_path / "none.csv"]):
        code, out, err = run_cli_output(monkeypatch, capsys, "capacity", folder, *ASSUMED, "--reviewers", "3", *extra)
        assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err


def test_a_folder_that_is_not_a_score_folder(monkeypatch, capsys, tmp_path, folder):
    empty = tmp_path / "empty"
    empty.mkdir()
    one_half = tmp_path / "act-only"
    one_half.mkdir()
    records = [json.dumps({"conversation_id": f"c{i}", "case_id": str(i), "label": "ACT", "assistant_turns": 1,
                           "tool_calls": []}) for i in range(3)]
    (tmp_path / "act.jsonl").write_text("\n".join(records) + "\n")
    score_file(tmp_path / "act.jsonl", load_policy(POLICY), out_dir=one_half)
    edited = tmp_path / "edited"
    edited.mkdir()
    for name in ("conversations.jsonl", "summary.json"):
        (edited / name).write_bytes((folder / name).read_bytes())
    summary = json.loads((edited / "summary.json").read_text())
    summary["under"]["errors"] = 3
    summary["provenance"].pop("outputs", None)
    (edited / "summary.json").write_text(json.dumps(summary))
    for bad, what in ((tmp_path / "missing", "not a folder"), (empty, "has no"), (one_half, "no evaluated ESC"),
                      (edited, "score again")):
        code, out, err = run_cli_output(monkeypatch, capsys, "capacity", bad, *ASSUMED, "--reviewers", "3")
        assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1 and what in err, err
