"""``escalation plan``: how many scenarios and replicas an evaluation needs."""
from __future__ import annotations

from enum import Enum
from typing import Optional

import orjson
import typer
from rich.console import Console
from rich.table import Table

from escalation.estimators import InputError, plan_difference, plan_interval, plan_paired_figure

_DEFAULT_RHO_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
_SENSITIVITY_KEYS = ("scenarios", "replicas", "power", "achieved_power", "conversations")


class PlanInterval(str, Enum):
    """The intervals a plan can be made for."""

    wilson_kish = "wilson-kish"
    wilson_kish_t = "wilson-kish-t"


class PlanTest(str, Enum):
    """The tests a power plan can be made for."""

    t = "t"
    z = "z"


def _sizes(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--sizes must be whole numbers separated by commas, got {text!r}",
                         source="escalation plan") from None


def _rho_grid(text: str, rho: float) -> list[float]:
    try:
        values = {float(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise InputError(f"--rho-grid must be numbers separated by commas, got {text!r}",
                         source="escalation plan") from None
    return sorted(values | {float(rho)})


def _plan_or_empty(make) -> dict:
    """``make().to_dict()``, or ``{}`` where the target is unreachable at this rho."""
    try:
        return make().to_dict()
    except ValueError:
        return {}


def _fmt(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


_HEADERS = {"scenarios": "K", "scenarios_normal": "K normal", "cases": "cases",
            "cases_normal": "cases normal", "replicas": "m", "half_width": "h",
            "achieved_half_width": "h of plan", "conversations": "convers.",
            "scenarios_exact": "K exact", "achieved_power": "power of plan", "power": "power",
            "m_bar": "m_bar"}


def _header(column):
    design, _, key = column.partition("_")
    if design in ("paired", "unpaired") and key:
        return f"{design} {_HEADERS.get(key, key)}"
    return _HEADERS.get(column, column)


def _print_table(console, title, rows, columns):
    table = Table(title=title)
    for column in columns:
        table.add_column(_header(column), justify="right")
    for row in rows:
        table.add_row(*(_fmt(row.get(c)) for c in columns))
    console.print(table)


def plan(
    p: float = typer.Option(..., "--p", help="Expected rate (p_u or p_o), or pi with --paired-figure; "
                                              "assistant A's rate with --p-b."),
    rho: float = typer.Option(..., "--rho", help="Intra-scenario correlation (0 to 1); rarely known, "
                                                  "so a sensitivity table over rho is printed too."),
    half_width: Optional[float] = typer.Option(None, "--half-width", help="Target (high - low) / 2 of "
                                                                           "the interval."),
    replicas: Optional[int] = typer.Option(None, "--replicas", help="Replicas m per scenario."),
    scenarios: Optional[int] = typer.Option(None, "--scenarios", help="Scenarios K (cases with "
                                                                        "--paired-figure)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the interval."),
    paired_figure: bool = typer.Option(False, "--paired-figure", help="Plan the interval of pi; "
                                                                       "the clusters are cases."),
    p_b: Optional[float] = typer.Option(None, "--p-b", help="Assistant B's rate: plan the power to "
                                                             "detect p_b - p."),
    power: Optional[float] = typer.Option(None, "--power", help="Target power (with --p-b)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Two-sided level of the test (with --p-b)."),
    correlation: Optional[float] = typer.Option(None, "--correlation", help="Correlation of the two "
                                                 "assistants' scenario rates; adds the paired design "
                                                 "(with --p-b)."),
    size_cv: float = typer.Option(0.0, "--size-cv", help="Coefficient of variation of the scenario sizes "
                                  "(sd / mean; 0 = every scenario has --replicas): the design effect takes "
                                  "m_bar = m (1 + cv^2) (SPEC section 5; Eldridge, Ashby & Kerry 2006)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Scenario sizes of a pilot, comma-separated, in "
                                         "place of --size-cv: m_bar = m * sum(n^2) / sum(n) / mean(n)."),
    interval: PlanInterval = typer.Option(PlanInterval.wilson_kish, "--interval", help="The interval planned "
                                          "for: wilson-kish (the paper's) or wilson-kish-t (t on K - 1 degrees "
                                          "of freedom; needs more scenarios)."),
    test: PlanTest = typer.Option(PlanTest.t, "--test", help="With --p-b: the test planned for. t (default): "
                                  "t on K - 1 (paired) or 2K - 2 (unpaired) degrees of freedom, which holds its "
                                  "level with few scenarios; z: the normal rule, whose test rejects too often "
                                  "then (escalation study sample-size)."),
    rho_grid: str = typer.Option(",".join(map(str, _DEFAULT_RHO_GRID)), "--rho-grid",
                                 help="rho values of the sensitivity table, comma-separated."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Plan an evaluation: solve for the one unknown among scenarios, replicas and half-width.

    Give exactly two of --scenarios, --replicas and --half-width (with --p-b: --power). --replicas is
    the mean number of conversations per scenario; --size-cv or --sizes gives their spread.

    Replicas cannot replace scenarios: no number of replicas goes below the floor.
    """
    grid = _rho_grid(rho_grid, rho)
    spread = dict(size_cv=size_cv, sizes=_sizes(sizes))
    third = "--power" if p_b is not None else "--half-width"
    if [scenarios, replicas, power if p_b is not None else half_width].count(None) != 1:
        raise InputError(f"give exactly two of --scenarios, --replicas and {third}; the third is "
                         f"the unknown to solve for", source="escalation plan")
    try:
        if p_b is None:
            if power is not None or correlation is not None or test is not PlanTest.t:
                raise ValueError("--power, --correlation and --test need --p-b (a difference to detect)")
            make = plan_paired_figure if paired_figure else plan_interval
            first = "pi" if paired_figure else "p"
            known = dict(replicas=replicas, half_width=half_width, confidence=confidence, method=interval.value,
                         **spread, **{"cases" if paired_figure else "scenarios": scenarios, first: p})
            plans = {"plan": make(rho=rho, **known).to_dict()}
            sensitivity = [{"rho": r, **_plan_or_empty(lambda: make(rho=r, **known))} for r in grid]
        else:
            if half_width is not None or paired_figure or interval is not PlanInterval.wilson_kish:
                raise ValueError("--half-width, --paired-figure and --interval do not apply with --p-b "
                                 "(give --power, --scenarios or --replicas)")
            designs = ["unpaired"] + (["paired"] if correlation is not None else [])

            def difference(design, rho_value):
                return plan_difference(p, p_b, rho=rho_value, scenarios=scenarios, replicas=replicas,
                                       power=power, alpha=alpha, design=design, test=test.value,
                                       correlation=correlation if design == "paired" else None, **spread)
            plans = {design: difference(design, rho).to_dict() for design in designs}
            sensitivity = [{"rho": r, **{f"{design}_{key}": value for design in designs
                                         for key, value in _plan_or_empty(lambda: difference(design, r)).items()
                                         if key in _SENSITIVITY_KEYS}} for r in grid]
    except ValueError as err:
        raise InputError(str(err), source="escalation plan") from None

    if as_json:
        out = plans["plan"] if "plan" in plans else {"designs": plans}
        typer.echo(orjson.dumps({**out, "sensitivity": sensitivity},
                                option=orjson.OPT_INDENT_2).decode())
        return
    console = Console()
    if "plan" in plans:
        result = plans["plan"]
        unit = "cases" if paired_figure else "scenarios"
        _print_table(console, f"Plan ({'pi' if paired_figure else 'rate'}; solved for "
                              f"{result['solved_for']})", [result],
                     [unit, f"{unit}_normal", "replicas", "m_bar", "half_width", "achieved_half_width",
                      "deff", "conversations", "floor"])
        console.print(f"Floor: no number of replicas brings {unit} below {result['floor']:.1f} (normal rule) "
                      f"at rho = {rho}. Interval {result['method']}; m_bar = m (1 + cv^2) with cv = "
                      f"{result['size_cv']:.3g}.")
        columns = ["rho", unit, f"{unit}_normal", "replicas", "half_width", "deff",
                   "conversations", "floor"]
    else:
        _print_table(console, f"Power plan for p_b - p_a = {p_b - p:+g}",
                     [{"design": d, **v} for d, v in plans.items()],
                     ["design", "scenarios", "scenarios_exact", "replicas", "m_bar", "power",
                      "achieved_power", "deff", "df", "conversations"])
        console.print(f"{test.value} test. Unpaired: scenarios per assistant (Donner & Klar). Paired: the same "
                      "scenarios for both assistants.")
        solved = next(iter(plans.values()))["solved_for"]
        columns = ["rho"] + [f"{design}_{key}" for design in plans
                             for key in dict.fromkeys((solved, "achieved_power", "conversations"))
                             if not (solved == "power" and key == "achieved_power")]
    _print_table(console, "Sensitivity to rho (- : unreachable)", sensitivity, columns)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation plan`` to the command line."""
    app.command("plan")(plan)
