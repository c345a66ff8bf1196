"""Figures fit for a paper (issue 19): every figure draws small synthetic tables; the legends sit
outside the axes, each method has its own colour-blind-safe colour and a second encoding, the
same in every figure, sibling axes share their y range, and an undefined figure is written, never
drawn at 0."""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D

from escalation import figures
from escalation.estimators.stats import INTERVAL_METHODS

#: Okabe & Ito (2008).
OKABE_ITO = {"#000000", "#e69f00", "#56b4e9", "#009e73", "#0072b2", "#d55e00", "#cc79a7", "#f0e442"}
COVERAGE_METHODS = ("wilson", "wilson-kish-true-rho", *INTERVAL_METHODS)  # the coverage study's, every one
DIFFERENCE_METHODS = ("newcombe_wilson_kish", "newcombe_wilson_kish_t", "bootstrap_percentile", "bootstrap_bca")
MODE_B_METHODS = ("predictive_values_wald", "predictive_values_cluster", "rogan_gladen_wald", "rogan_gladen_cluster")
RNG = np.random.default_rng(19)


def _frame(rows, **columns) -> pd.DataFrame:
    """One row per combination of ``rows`` (name -> values), with ``columns`` drawn at random in [lo, hi]."""
    table = pd.DataFrame(list(itertools.product(*rows.values())), columns=list(rows))
    for name, (lo, hi) in columns.items():
        table[name] = RNG.uniform(lo, hi, len(table))
    return table


def _coverage(by: str) -> pd.DataFrame:
    values = (3, 10, 30) if by == "scenarios" else (0.02, 0.1, 0.3)
    table = pd.concat([_frame({"estimand": [estimand], "method": COVERAGE_METHODS, "replicas": [1, 3],
                               "size_cv": [0.0], by: values}, mean=(0.6, 1.0), min=(0.4, 0.95))
                       for estimand in ("p_u", "pi")])
    return table


def _draw(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def _summary(**over) -> dict:
    summary = {"conversations": 80, "confidence": 0.95, "interval": "wilson-kish",
               "under": {"rate": 0.1, "ci": [0.05, 0.2], "n": 40, "errors": 4, "clusters": 8, "rho": 0.1,
                         "deff": 1.2},
               "over": {"rate": 0.2, "ci": [0.1, 0.3], "n": 40, "errors": 8, "clusters": 8, "rho": 0.0,
                        "deff": 1.0},
               "paired": {"pi": 0.7, "ci": [0.55, 0.82], "pairs": 40, "cases": 8}}
    summary.update(over)
    return summary


def _differences() -> pd.DataFrame:
    return pd.DataFrame({"a_name": "a", "b_name": "b", "metric": ["p_u", "p_o", "pi"],
                         "difference": [-0.05, 0.02, np.nan], "newcombe_low": [-0.12, -0.03, np.nan],
                         "newcombe_high": [0.01, 0.08, np.nan], "bootstrap_low": [-0.11, -0.02, np.nan],
                         "bootstrap_high": [0.0, 0.07, np.nan], "p_value": [0.08, 0.4, np.nan]})


def _conversations(scenarios: int) -> pd.DataFrame:
    rows = []
    for k, label in itertools.product(range(scenarios), ("ESC", "ACT")):
        for _ in range(1 + k % 4):
            error = int(RNG.random() < 0.2)
            rows.append({"scenario_id": f"{label}-{k}", "label": label, "evaluated": True,
                         "u": error if label == "ESC" else None, "o": error if label == "ACT" else None})
    return pd.DataFrame(rows)


def _size_table() -> pd.DataFrame:
    return _frame({"method": ["cluster_z", "cluster_t"], "scenarios": [5, 25], "cell": [1, 2]}, size=(0.02, 0.1),
                  size_mcse=(0.005, 0.01)).assign(alpha=0.05)


def _power_table() -> pd.DataFrame:
    table = _frame({"design": ["unpaired"], "test": ["z", "t"], "method": ["cluster_z", "cluster_t"]},
                   realised_power=(0.7, 0.9), realised_power_mcse=(0.01, 0.03), planned_power=(0.78, 0.85))
    return table.assign(p_a=0.1, p_b=0.3, rho=0.05, replicas=5, size_cv=0.0, scenarios=15, power_target=0.8,
                        planned_for=[(t == "z") == (m == "cluster_z") for t, m in zip(table["test"], table["method"])])


def _intervals() -> pd.DataFrame:
    table = _frame({"kind": ["rate"], "p": [0.1, 0.2], "method": ["wilson_kish_est_rho", "wilson_kish_true_rho"]},
                   coverage=(0.9, 0.97), coverage_mcse=(0.005, 0.01), exact_coverage=(0.93, 0.96),
                   median_half_width=(0.04, 0.06), median_half_width_mcse=(0.001, 0.002))
    return table.assign(rho=0.1, replicas=5, size_cv=0.0, scenarios=40, interval="wilson-kish", confidence=0.95,
                        half_width=0.05)


def _rates() -> pd.DataFrame:
    table = _frame({"profile": ["follows_policy", "never_escalates"], "metric": ["p_u", "p_o", "pi"]},
                   value=(0.2, 0.6), expected=(0.2, 0.6), paper=(0.2, 0.6))
    return table.assign(ci_low=table["value"] - 0.1, ci_high=table["value"] + 0.1)


def _record_vs_text():
    columns = ("truth", "with_record", "without_record")
    run = _frame({"profile": ["follows_policy", "invents_actions"]}, **{c: (0.0, 0.5) for c in columns})
    expected = _frame({"profile": ["follows_policy", "invents_actions"]},
                      **{name: (0.0, 0.5) for c in columns for name in (c, f"paper_{c}")})
    return run, expected


#: name -> a function drawing the figure on synthetic tables; the first group draws several methods.
MULTI_METHOD = {
    "coverage_by_scenarios": lambda: figures.coverage_by_scenarios(_coverage("scenarios").query("estimand == 'p_u'")),
    "coverage_by_p": lambda: figures.coverage_by_p(_coverage("p").query("estimand == 'pi'")),
    "width_against_coverage": lambda: figures.width_against_coverage(_frame(
        {"method": COVERAGE_METHODS, "replicas_group": ["m = 1", "m > 1"], "scenarios_range": ["K < 10", "10-29"]},
        mean=(0.6, 1.0), min=(0.4, 0.9), relative_width=(0.5, 2.0))),
    "difference_coverage": lambda: figures.difference_coverage(
        _frame({"method": DIFFERENCE_METHODS, "rho": [0.0, 0.2], "between": [0.0], "replicas": [1, 3],
                "scenarios": [5, 30], "pair": [1, 2]}, coverage=(0.8, 1.0)).assign(nsim=200),
        methods=DIFFERENCE_METHODS, names={m: m.replace("_", " ") for m in DIFFERENCE_METHODS}),
    "mode_b_coverage": lambda: figures.mode_b_coverage(
        *[_frame({"method": MODE_B_METHODS, "rho": [0.0, 0.5], "replicas": [1, 10], "p": [0.1, 0.3],
                  "scenarios": [10, 100]}, coverage=(0.7, 1.0)).assign(nsim=300)] * 2,
        methods=MODE_B_METHODS, names={m: m.replace("_", " ") for m in MODE_B_METHODS}, title="mode B"),
    "plot_reliability": lambda: figures.plot_reliability(
        _frame({"language": ["en", "es"], "method": ["raw", "platt", "isotonic"], "bin": range(5)},
               mean_p=(0, 1), label_rate=(0, 1)).assign(pairs=400, count=10)),
    "plot_calibration_bias": lambda: figures.plot_calibration_bias(
        _frame({"language": ["en", "es"], "method": ["raw", "platt", "isotonic"], "pairs": [50, 400]},
               bias=(-0.02, 0.06), bias_mcse=(0.001, 0.005), ece=(0.01, 0.08), ece_mcse=(0.001, 0.005))),
    "plot_mode_b": lambda: figures.plot_mode_b(
        _frame({"fake_rate": [0.0, 0.2], "validation": [50, 200], "method": ["predictive_values", "rogan_gladen"]},
               bias=(-0.02, 0.03), bias_mcse=(0.001, 0.02), without_record_bias=(-0.2, 0.0),
               without_record_mcse=(0.001, 0.003))),
    "plot_interval_validation": lambda: figures.plot_interval_validation(_intervals()),
    "plot_power_validation": lambda: figures.plot_power_validation(_power_table(), size=_size_table()),
    "plot_scenarios_by_replicas": lambda: figures.plot_scenarios_by_replicas(
        _frame({"rho": [0.05, 0.1, 0.2], "replicas": [1, 2, 5, 10]}, scenarios=(10, 140), floor=(5, 30))
        .assign(p=0.1, half_width=0.05)),
    "plot_difference_forest": lambda: figures.plot_difference_forest(_differences()),
    "plot_profiles": lambda: figures.plot_profiles(_rates()),
    "plot_record_vs_text": lambda: figures.plot_record_vs_text(*_record_vs_text()),
    "plot_gate_rules": lambda: figures.plot_gate_rules(
        _frame({"scenarios": [288, 48], "rho": [0.0, 0.2], "truth": [0.02, 0.05, 0.08],
                "rule": ["fixed", "naive", "sequential"]}, p_fail=(0, 0.1), p_fail_mcse=(0.001, 0.004),
               p_pass=(0, 0.1), p_pass_mcse=(0.001, 0.004), expected_epochs=(1, 4), expected_epochs_mcse=(0.01, 0.05)),
        threshold=0.05, nominal=0.025),
    "plot_leaderboard": lambda: figures.plot_leaderboard(pd.DataFrame(
        {"model": ["x", "y"], **{f"{f}{s}": [0.2 + d, 0.5 + d] for f in ("p_u", "p_o", "pi")
                                 for s, d in (("", 0.0), ("_low", -0.1), ("_high", 0.1))}})),
}
OTHERS = {
    "misses_by_method": lambda: figures.misses_by_method(_frame(
        {"estimand": ["p_u", "pi"], "method": COVERAGE_METHODS}, miss_low=(0, 0.1), miss_high=(0, 0.1))),
    "plot_scenarios_grid": lambda: figures.plot_scenarios_grid(
        _frame({"p": [0.05, 0.1], "rho": [0.0, 0.1, 0.2]}, scenarios=(10, 300)).assign(half_width=0.05,
                                                                                          replicas=5)),
    "plot_power_validation without size": lambda: figures.plot_power_validation(_power_table()),
    "plot_rates": lambda: figures.plot_rates(_summary()),
    "plot_scenario_errors, 1 scenario": lambda: figures.plot_scenario_errors(_conversations(1)),
    "plot_scenario_errors, 5,000 scenarios": lambda: figures.plot_scenario_errors(_conversations(5000)),
    "plot_protection_curves": lambda: figures.plot_protection_curves(
        _frame({"reviewers": [1, 3], "escalation_rate": [0.0, 0.25, 0.5, 0.75, 1.0]}, protection_true=(0, 0.9),
               protection_measured=(0, 0.9), band_low=(0, 0.3)).assign(band_high=lambda t: t["band_low"] + 0.4)),
    "plot_capacity_validation": lambda: figures.plot_capacity_validation(
        _frame({"queue": ["M/M/R", "bursty/M/R"], "reviewers": [1, 5], "utilisation": [0.5, 0.9]},
               p_wait_closed=(0.1, 0.9), p_wait_diff=(-0.05, 0.2), p_wait_mcse=(0.001, 0.01), mean_wait_closed=(0.2, 9),
               mean_wait_diff=(-1, 1), mean_wait_mcse=(0.01, 0.5))),
}


@functools.cache
def _drawn(name: str):
    """The figure ``name`` drawn once for every test that only reads it."""
    return _draw({**MULTI_METHOD, **OTHERS}[name]())


def test_every_figure_of_the_studies_and_of_a_scoring_is_drawn_here():
    drawn = {name.split(" ")[0].rstrip(",") for name in (*MULTI_METHOD, *OTHERS)}
    assert drawn == {name for name in figures.__all__ if name.startswith(("plot_", "coverage_", "width_",
                                                                           "misses_", "difference_", "mode_b_"))}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*MULTI_METHOD, *OTHERS])
def test_each_figure_draws_small_tables(name):
    assert _drawn(name).axes


def _overlap(a, b) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


@pytest.mark.parametrize("name", [*MULTI_METHOD, "misses_by_method"])
def test_legends_lie_outside_every_axes(name):
    fig = _drawn(name)
    assert fig.legends, "the figure has a legend of its own"
    assert all(ax.get_legend() is None for ax in fig.axes), "no legend inside an axes"
    for legend, ax in itertools.product(fig.legends, fig.axes):
        assert _overlap(legend.get_window_extent(), ax.get_window_extent()) < 1.0, (name, ax.get_title())


def _method_handles(fig) -> list[Line2D]:
    """The legend's lines with a marker: one per method (reference lines and bands have none)."""
    return [h for legend in fig.legends for h in legend.legend_handles
            if isinstance(h, Line2D) and h.get_marker() not in ("None", "", None, " ")]


def _key(line: Line2D) -> tuple:
    return to_hex(line.get_color()), line.get_marker(), line.get_linestyle(), line.get_fillstyle()


@pytest.mark.parametrize("name", sorted(set(MULTI_METHOD) - {"plot_profiles", "plot_record_vs_text"}))
def test_each_method_has_its_own_okabe_ito_colour_and_marker(name):
    fig = _drawn(name)
    handles = _method_handles(fig)
    assert len(handles) >= 2
    keys = [_key(h) for h in handles]
    assert len(set(keys)) == len(keys), keys
    assert {to_hex(h.get_color()) for h in handles} <= OKABE_ITO
    drawn = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() not in ("None", "", None, " ")]
    assert {to_hex(line.get_color()) for line in drawn} <= OKABE_ITO


def test_a_method_looks_the_same_in_every_figure():
    seen: dict[str, tuple] = {}
    for name in ("coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "plot_reliability",
                 "plot_calibration_bias"):
        for handle in _method_handles(_drawn(name)):
            if not handle.get_label().startswith("marker:"):
                assert seen.setdefault(handle.get_label(), _key(handle)[:3]) == _key(handle)[:3], handle.get_label()
    assert "Wilson-Kish (the paper's)" in seen and "platt" in seen


def _rows_share_y(fig) -> None:
    grid = fig.axes[0].get_gridspec()
    rows: dict[int, set] = {}
    for ax in fig.axes:
        if ax.get_gridspec() is grid:
            rows.setdefault(ax.get_subplotspec().rowspan.start, set()).add(ax.get_ylim())
    assert all(len(limits) == 1 for limits in rows.values()), rows


@pytest.mark.parametrize("name", ["coverage_by_scenarios", "coverage_by_p", "width_against_coverage",
                                  "difference_coverage", "mode_b_coverage", "plot_reliability",
                                  "plot_calibration_bias", "plot_interval_validation", "plot_profiles",
                                  "plot_leaderboard", "plot_gate_rules"])
def test_sibling_axes_share_their_y_range(name):
    _rows_share_y(_drawn(name))


@pytest.mark.slow
def test_the_two_estimands_are_drawn_on_one_y_range():
    for draw in (figures.coverage_by_scenarios, figures.coverage_by_p):
        by = "scenarios" if draw is figures.coverage_by_scenarios else "p"
        limits = [[ax.get_ylim() for ax in _draw(draw(part)).axes]
                  for _, part in _coverage(by).groupby("estimand")]
        assert limits[0] == limits[1]


def test_the_two_panels_of_scenario_errors_share_their_range():
    for scenarios, axis in ((12, "get_xlim"), (5000, "get_ylim")):
        fig = _draw(figures.plot_scenario_errors(_conversations(scenarios)))
        assert getattr(fig.axes[0], axis)() == getattr(fig.axes[1], axis)()


def _points(ax) -> np.ndarray:
    """The data points of the axes' lines with a marker (the reference lines have none)."""
    return np.concatenate([np.column_stack(line.get_data()).astype(float) for line in ax.get_lines()
                           if line.get_marker() not in ("None", "", None, " ")] or [np.empty((0, 2))])


def test_an_undefined_rate_is_written_never_drawn_at_zero():
    over = {"rate": None, "ci": [None, None], "n": 0, "errors": 0, "clusters": 0, "rho": None, "deff": None}
    fig = _draw(figures.plot_rates(_summary(over=over)))
    ax = fig.axes[0]
    undefined = [t for t in ax.texts if t.get_text() == "undefined"]
    assert len(undefined) == 1
    y = undefined[0].get_position()[1]
    points = _points(ax)
    assert len(points) and not np.any(np.isclose(points[:, 1], y)), "nothing is drawn on the undefined row"
    assert not np.any(points[:, 0] == 0.0)


def test_an_undefined_difference_is_written():
    fig = _draw(figures.plot_difference_forest(_differences()))
    ax = fig.axes[0]
    rows = [t.get_position()[1] for t in ax.texts if t.get_text() == "undefined"]
    assert len(rows) == 2  # pi: both intervals
    assert not np.any(np.isin(_points(ax)[:, 1], rows))
