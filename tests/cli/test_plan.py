"""``escalation plan``: JSON contract, sensitivity table and one-line errors."""
from __future__ import annotations

import re

import orjson
import pytest

from escalation.estimators.stats import plan_difference, plan_interval, plan_paired_figure

from .._helpers import run_cli_output


def _run(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "plan", *args)


def test_json_has_the_contract_keys_and_the_planner_values(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--half-width", "0.05", "--rho", "0.1",
                        "--replicas", "10", "--json")
    assert code == 0
    data = orjson.loads(out)
    assert {"scenarios", "scenarios_normal", "conversations", "deff", "floor"} <= set(data)
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05)
    assert data["scenarios"] == plan.scenarios and data["conversations"] == plan.conversations
    assert data["deff"] == pytest.approx(1.9) and data["floor"] == pytest.approx(plan.floor)
    rhos = [row["rho"] for row in data["sensitivity"]]
    assert rhos == sorted(rhos) and 0.1 in rhos and 0.5 in rhos
    by_rho = {row["rho"]: row["scenarios"] for row in data["sensitivity"]}
    assert by_rho[0.2] == plan_interval(0.1, rho=0.2, replicas=10, half_width=0.05).scenarios


def test_solving_for_replicas_marks_unreachable_rho_as_null(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--half-width", "0.05", "--rho", "0.1",
                        "--scenarios", "20", "--json", "--rho-grid", "0,0.5")
    assert code == 0
    data = orjson.loads(out)
    assert data["solved_for"] == "replicas" and data["scenarios"] == 20
    rows = {row["rho"]: row for row in data["sensitivity"]}
    assert set(rows) == {0.0, 0.1, 0.5}
    assert rows[0.5].get("replicas") is None  # floor 69 > 20 scenarios: unreachable


def test_tables_are_printed(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--rho", "0.1", "--scenarios", "27",
                        "--replicas", "10")
    assert code == 0
    assert "solved for half_width" in out and "Sensitivity to rho" in out and "Floor" in out


def test_paired_figure_plans_cases(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.8", "--half-width", "0.05", "--rho", "0.1",
                        "--replicas", "3", "--paired-figure", "--json")
    assert code == 0
    data = orjson.loads(out)
    assert data["cases"] == plan_paired_figure(0.8, rho=0.1, replicas=3, half_width=0.05).cases
    assert data["conversations"] == 6 * data["cases"] and data["solved_for"] == "cases"


def test_power_plan_json(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--p-b", "0.2", "--power", "0.8",
                        "--rho", "0.05", "--replicas", "10", "--correlation", "0.5", "--json")
    assert code == 0
    designs = orjson.loads(out)["designs"]
    # the t test by default: one scenario more than Donner-Klar's normal rule (28.45 per arm -> 29)
    assert designs["unpaired"]["scenarios"] == 30 and designs["unpaired"]["df"] == 58
    assert designs["unpaired"]["test"] == "t"
    assert designs["paired"]["scenarios"] == plan_difference(
        0.1, 0.2, rho=0.05, replicas=10, power=0.8, correlation=0.5).scenarios
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--p-b", "0.2", "--power", "0.8",
                        "--rho", "0.05", "--replicas", "10", "--test", "z", "--json")
    assert code == 0
    unpaired = orjson.loads(out)["designs"]["unpaired"]
    assert unpaired["scenarios"] == 29 and unpaired["df"] is None  # Donner-Klar 28.45 per arm, rounded up


def test_size_spread_and_interval_options_reach_the_planner(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--half-width", "0.05", "--rho", "0.1",
                        "--replicas", "10", "--size-cv", "0.5", "--interval", "wilson-kish-t", "--json")
    assert code == 0
    data = orjson.loads(out)
    plan = plan_interval(0.1, rho=0.1, replicas=10, half_width=0.05, size_cv=0.5, method="wilson-kish-t")
    assert data["scenarios"] == plan.scenarios and data["m_bar"] == 12.5 and data["method"] == "wilson-kish-t"
    by_rho = {row["rho"]: row["scenarios"] for row in data["sensitivity"]}
    assert by_rho[0.2] == plan_interval(0.1, rho=0.2, replicas=10, half_width=0.05, size_cv=0.5,
                                        method="wilson-kish-t").scenarios
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--p-b", "0.3", "--power", "0.8", "--rho", "0.05",
                        "--replicas", "10", "--sizes", "5,10,15", "--json")
    assert code == 0
    unpaired = orjson.loads(out)["designs"]["unpaired"]
    assert unpaired["m_bar"] == pytest.approx(350 / 30)
    assert unpaired["scenarios"] == plan_difference(0.1, 0.3, rho=0.05, replicas=10, power=0.8, design="unpaired",
                                                    sizes=[5, 10, 15]).scenarios
    code, out, _ = _run(monkeypatch, capsys, "--p", "0.1", "--half-width", "0.05", "--rho", "0.1",
                        "--replicas", "10", "--size-cv", "0.5")
    assert code == 0 and "m_bar" in out and "12.5" in out


@pytest.mark.parametrize("args, message", [
    (["--p", "0.1", "--rho", "0.1", "--replicas", "10"],
     "give exactly two of --scenarios, --replicas and --half-width"),
    (["--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "0.7"],
     "--half-width must lie in (0, 0.5)"),
    (["--p", "0.1", "--rho", "0.1", "--scenarios", "5", "--half-width", "0.05"],
     "no number of replicas reaches the target with --scenarios 5: --half-width 0.05 needs"),
    (["--p", "0.1", "--p-b", "0.2", "--rho", "0.1", "--replicas", "10", "--half-width", "0.05",
      "--power", "0.8"], "--half-width does not apply with --p-b"),
    (["--p", "0.1", "--p-b", "0.2", "--rho", "0.1", "--replicas", "10", "--power", "0.8", "--interval",
      "wilson-kish-t"], "--interval does not apply with --p-b"),
    (["--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "0.05", "--test", "z"],
     "--test needs --p-b"),
    (["--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "0.05", "--sizes", "3,x"],
     "--sizes must be whole numbers"),
    (["--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "0.05", "--size-cv", "-1"],
     "--size-cv must lie in [0, 100]; got -1"),
    (["--p", "0.1", "--rho", "0.1", "--replicas", "2", "--half-width", "0.05", "--rho-grid", "a"],
     "--rho-grid must be numbers"),
])
def test_bad_input_is_a_one_line_error_with_exit_code_2(monkeypatch, capsys, args, message):
    code, out, err = _run(monkeypatch, capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["--half-width", "2", "--replicas", "10"], "--half-width must lie in (0, 0.5) (a Wilson interval is never "
                                                "wider than 1); got 2"),
    (["--p", "2", "--half-width", "0.05", "--replicas", "10"], "--p must lie in (0, 1); got 2"),
    (["--rho", "1.5", "--half-width", "0.05", "--replicas", "10"], "--rho must lie in [0, 1]; got 1.5"),
    (["--half-width", "0.05", "--replicas", "0"], "--replicas must be a whole number >= 1; got 0"),
    (["--half-width", "0.05", "--scenarios", "0"], "--scenarios must be a whole number >= 1; got 0"),
    (["--half-width", "0.05", "--scenarios", "1", "--interval", "wilson-kish-t"],
     "--scenarios must be a whole number >= 2; got 1"),
    (["--half-width", "0.05", "--replicas", "10", "--confidence", "1"],
     "--confidence must lie strictly between 0 and 1; got 1"),
    (["--half-width", "0.05", "--replicas", "10", "--sizes", "0,3"], "--sizes must be whole numbers >= 1"),
    (["--half-width", "0.05", "--replicas", "10", "--sizes", "2,3", "--size-cv", "0.5"],
     "give --size-cv or --sizes (whose spread gives it), not both"),
    (["--half-width", "0.05", "--replicas", "10", "--rho-grid", "0,2"], "--rho-grid must lie in [0, 1]; got 2"),
    (["--half-width", "0.05", "--replicas", "10", "--alpha", "0.1"], "--alpha needs --p-b"),
    (["--p-b", "0.2", "--replicas", "10", "--power", "2"], "--power must lie in (0, 1); got 2"),
    (["--p-b", "0.1", "--replicas", "10", "--power", "0.8"], "--p and --p-b must differ"),
    (["--p-b", "0.2", "--replicas", "10", "--power", "0.8", "--alpha", "0"], "--alpha must lie in (0, 1); got 0"),
    (["--p-b", "0.2", "--replicas", "10", "--power", "0.8", "--correlation", "3"],
     "--correlation must lie in [-1, 1]; got 3"),
    (["--p-b", "0.2", "--replicas", "10", "--power", "0.8", "--confidence", "0.9"],
     "--confidence does not apply with --p-b"),
    (["--p-b", "0.2", "--replicas", "10", "--power", "0.01"], "--power must exceed alpha = 0.05 with --test t"),
    (["--p-b", "0.2", "--rho", "0.5", "--scenarios", "3", "--power", "0.8"],
     "no number of replicas reaches --power 0.8 with --scenarios 3"),
])
def test_every_bad_value_is_named_by_its_flag(monkeypatch, capsys, args, message):
    given = dict(zip(args[::2], args[1::2]))
    base = {"--p": "0.1", "--rho": "0.1", **given}
    code, out, err = _run(monkeypatch, capsys, *[x for item in base.items() for x in item])
    assert code == 2 and out == ""
    assert err.startswith(f"error: {message}") and err.count("\n") == 1
    assert not re.search(r"\b(half_width|size_cv|p_a|p_b|\w+=)|`", err)  # the planner's argument names, never
