"""``escalation plan``: how many scenarios and replicas an evaluation needs."""
from __future__ import annotations

import textwrap
from enum import Enum
from typing import Any, Optional

import orjson
import typer

from escalation.estimators.records import InputError
from escalation.estimators.stats import MAX_PLAN_SIZE, format_number

_DEFAULT_RHO_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
MAX_RHO_GRID = 100  # rows of the sensitivity table, one plan each
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
        raise InputError(f"--sizes must be whole numbers separated by commas, got {text!r}") from None


def _rho_grid(text: str, rho: float) -> list[float]:
    from escalation.estimators.stats import check_probability

    try:
        values = {float(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise InputError(f"--rho-grid must be numbers separated by commas, got {text!r}") from None
    for value in sorted(values):  # the planner of each row would refuse it, and the row be left empty
        check_probability("rho_grid", value)
    if len(values) > MAX_RHO_GRID:
        raise InputError(f"--rho-grid takes at most {MAX_RHO_GRID} values (a row of the table each), got "
                         f"{len(values)}")
    return sorted(values | {float(rho)})


#: The planner's parameters that this command's parameters are passed to under another name (for the flag
#: table of :func:`escalation.cli._main.flag_table`): ``--p`` is ``pi`` with --paired-figure and ``p_a`` with
#: --p-b, ``--scenarios`` is ``cases`` with --paired-figure, ``--interval`` is ``method``.
PARAMETER_NAMES = {"pi": "p", "p_a": "p", "cases": "scenarios", "method": "interval"}


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _plan_or_empty(make) -> dict:
    """``make().to_dict()``, or ``{}`` where the target is unreachable at this rho."""
    try:
        return make().to_dict()
    except ValueError:
        return {}


def _fmt(value, digits=4):
    if value is None or isinstance(value, float):
        return format_number(value, spec=f".{digits}g")
    return str(value)


_HEADERS = {"scenarios": "K", "scenarios_normal": "K normal", "cases": "cases",
            "cases_normal": "cases normal", "replicas": "m", "half_width": "h",
            "achieved_half_width": "h of plan", "conversations": "convers.",
            "scenarios_exact": "K exact", "achieved_power": "power of plan", "power": "power",
            "m_bar": "m_bar"}
_DESIGNS = ("unpaired", "paired")

#: What each column means, by the key of the plan (SPEC section 5; estimators/stats/_planning.py).
_RATE_LEGEND = {
    "scenarios": "scenarios of the rate's label: ESC scenarios for p_u, ACT scenarios for p_o (to measure both, "
                 "plan each; ESC/ACT twin cases give one of each)",
    "cases": "paired cases, each an ESC and an ACT scenario (pi's clusters); a case gives m pairs",
    "scenarios_normal": "K by the normal rule c^2 p (1 - p) deff / (m h^2), not rounded (c: z, or t on K - 1 "
                        "degrees of freedom with --interval wilson-kish-t)",
    "replicas": "replicas: the mean number of conversations per scenario (--replicas)",
    "m_bar": "the size-weighted mean scenario size of the design effect, m (1 + cv^2) (--size-cv, --sizes)",
    "half_width": "half-width (high - low) / 2 of the interval: the target (--half-width), or the one solved for",
    "achieved_half_width": "the half-width the plan reaches at p_hat = p, with K and m rounded up (at most h)",
    "deff": "design effect 1 + (m_bar - 1) rho: how many conversations count as one independent one",
    "conversations": "conversations to run for this rate: K m",
    "floor": "the K below which no number of replicas reaches h: z^2 p (1 - p) rho (1 + cv^2) / h^2 (normal "
             "rule)",
    "rho": "the intra-scenario correlation of the row (--rho and --rho-grid)",
}
_PAIRED_LEGEND = {
    "cases_normal": "cases by the normal rule c^2 pi (1 - pi) deff / (m h^2), not rounded",
    "replicas": "replicas: the mean number of pairs per case; a case runs m ESC and m ACT conversations "
                "(--replicas)",
    "achieved_half_width": "the half-width the plan reaches at pi_hat = pi, with the cases and m rounded up (at "
                           "most h)",
    "conversations": "conversations to run: 2 cases m (an ESC and an ACT conversation per pair)",
    "floor": "the cases below which no number of replicas reaches h: z^2 pi (1 - pi) rho (1 + cv^2) / h^2 "
             "(normal rule)",
}
_POWER_LEGEND = {
    "design": "unpaired: each assistant runs its own K scenarios (Donner & Klar); paired: both run the same K "
              "scenarios (with --correlation)",
    "scenarios": "scenarios of the rate's label (ESC for p_u, ACT for p_o): per assistant (unpaired) or shared "
                 "(paired)",
    "scenarios_exact": "K not rounded, for this m and power",
    "power": "power of the test: the target (--power), or the one solved for",
    "achieved_power": "the power the plan reaches, with K and m rounded up",
    "df": "degrees of freedom of the t test: K - 1 paired, 2K - 2 unpaired (- with --test z)",
    "conversations": "conversations of both assistants: 2 K m",
}


def _header(column):
    design, _, key = column.partition("_")
    if design in _DESIGNS and key:
        return f"{design} {_HEADERS.get(key, key)}"
    return _HEADERS.get(column, column)


def _print_table(console, title, rows, columns):
    from rich.table import Table

    table = Table(title=title, show_edge=False)
    for column in columns:
        table.add_column(_header(column), justify="right")
    for row in rows:
        table.add_row(*(_fmt(row.get(c)) for c in columns))
    console.print(table)


def legend(columns, kind: str) -> list[tuple[str, str]]:
    """``(header, meaning)`` of every column in ``columns`` (in order, each once) for a plan of ``kind``:
    ``"rate"``, ``"pi"`` or ``"power"``. A design's columns (``unpaired K``) are explained once, by their
    key (``K``), and by the entry ``unpaired ..., paired ...``."""
    meanings = {**_RATE_LEGEND, **(_PAIRED_LEGEND if kind == "pi" else {}),
                **(_POWER_LEGEND if kind == "power" else {})}
    entries: dict[str, str] = {}
    prefixed: list[str] = []
    for column in columns:
        design, _, key = column.partition("_")
        if design in _DESIGNS and key:
            prefixed.append(design)
            column = key
        entries.setdefault(_header(column), meanings[column])
    if prefixed:
        designs = [d for d in _DESIGNS if d in prefixed]
        entries[", ".join(f"{d} ..." for d in designs)] = "the column of that design"
    return list(entries.items())


_WRAP: dict[str, Any] = {"break_on_hyphens": False, "break_long_words": False}


def legend_lines(entries, width: int) -> list[str]:
    """The legend as lines of at most ``width`` characters: ``  NAME  meaning``, the meaning wrapped
    under itself; a name too long for the column has its meaning on the lines below."""
    column = max((len(name) for name, _ in entries if len(name) <= 14), default=0)
    lines = ["Columns:"]
    indent = " " * (column + 4)
    for name, meaning in entries:
        if len(name) <= column:
            lines += textwrap.wrap(meaning, max(width, 40), initial_indent=f"  {name:<{column}}  ", **_WRAP,
                                   subsequent_indent=indent)
        else:
            lines.append(f"  {name}")
            lines += textwrap.wrap(meaning, max(width, 40), initial_indent=indent, subsequent_indent=indent, **_WRAP)
    return lines


def _check_flags(ctx: typer.Context, *, p_b, scenarios, replicas, power, half_width, sizes) -> None:
    """Refuse a combination of flags that makes no plan: not exactly one unknown, a power plan's flag without
    --p-b (or an interval plan's with it), or both --size-cv and --sizes."""
    def given(name):
        source = ctx.get_parameter_source(name)
        return source is not None and source.name != "DEFAULT"

    third = "--power" if p_b is not None else "--half-width"
    if [scenarios, replicas, power if p_b is not None else half_width].count(None) != 1:
        raise InputError(f"give exactly two of --scenarios, --replicas and {third}; the third is "
                         f"the unknown to solve for")
    if p_b is None:
        needs_b = [flag for name, flag in (("power", "--power"), ("correlation", "--correlation"),
                                           ("test", "--test"), ("alpha", "--alpha")) if given(name)]
        if needs_b:
            raise InputError(f"{_and(needs_b)} {'needs' if len(needs_b) == 1 else 'need'} --p-b (a "
                             "difference to detect)")
    else:
        not_here = [flag for name, flag in (("half_width", "--half-width"), ("paired_figure", "--paired-figure"),
                                            ("interval", "--interval"), ("confidence", "--confidence"))
                    if given(name)]
        if not_here:
            raise InputError(f"{_and(not_here)} {'does' if len(not_here) == 1 else 'do'} not apply with "
                             "--p-b (a power plan: give two of --scenarios, --replicas and --power; its level is "
                             "--alpha)")
    if sizes is not None and given("size_cv"):
        raise InputError("give --size-cv or --sizes (whose spread gives it), not both")


def _rate_plans(p, rho, grid, spread, *, scenarios, replicas, half_width, confidence, interval,
                paired_figure) -> tuple[dict, list[dict]]:
    """The plan of a rate's interval (of pi's with --paired-figure), as ``{"plan": ...}``, and its sensitivity
    rows, one per rho of ``grid``."""
    from escalation.estimators.stats import plan_interval, plan_paired_figure

    make = plan_paired_figure if paired_figure else plan_interval
    first = "pi" if paired_figure else "p"
    known: dict[str, Any] = dict(replicas=replicas, half_width=half_width, confidence=confidence,
                                 method=interval.value, **spread,
                                 **{"cases" if paired_figure else "scenarios": scenarios, first: p})
    plans = {"plan": make(rho=rho, **known).to_dict()}
    sensitivity = [{"rho": r, **_plan_or_empty(lambda: make(rho=r, **known))} for r in grid]
    return plans, sensitivity


def _power_plans(p, p_b, rho, grid, spread, *, scenarios, replicas, power, alpha, test,
                 correlation) -> tuple[dict, list[dict]]:
    """The power plans by design (unpaired, and paired with --correlation) and their sensitivity rows, one per
    rho of ``grid``."""
    from escalation.estimators.stats import plan_difference

    designs = ["unpaired"] + (["paired"] if correlation is not None else [])

    def difference(design, rho_value):
        return plan_difference(p, p_b, rho=rho_value, scenarios=scenarios, replicas=replicas,
                               power=power, alpha=alpha, design=design, test=test.value,
                               correlation=correlation if design == "paired" else None, **spread)
    plans = {design: difference(design, rho).to_dict() for design in designs}
    sensitivity = [{"rho": r, **{f"{design}_{key}": value for design in designs
                                 for key, value in _plan_or_empty(lambda: difference(design, r)).items()
                                 if key in _SENSITIVITY_KEYS}} for r in grid]
    return plans, sensitivity


def _print_rate_plan(console, result: dict, rho: float, paired_figure: bool) -> tuple[str, list[str], list[str]]:
    """Print the plan of an interval and its floor; the legend's kind, the plan's columns and the sensitivity
    table's."""
    unit = "cases" if paired_figure else "scenarios"
    kind = "pi" if paired_figure else "rate"
    first_columns = [unit, f"{unit}_normal", "replicas", "m_bar", "half_width", "achieved_half_width", "deff",
                     "conversations", "floor"]
    _print_table(console, f"Plan ({'pi' if paired_figure else 'rate'}; solved for "
                          f"{result['solved_for']})", [result], first_columns)
    console.print(f"Floor: no number of replicas brings {unit} below {result['floor']:.1f} (normal rule) "
                  f"at rho = {rho}. Interval {result['method']}; m_bar = m (1 + cv^2) with cv = "
                  f"{result['size_cv']:.3g}.", highlight=False)
    columns = ["rho", unit, f"{unit}_normal", "replicas", "half_width", "deff",
               "conversations", "floor"]
    return kind, first_columns, columns


def _print_power_plan(console, plans: dict, p: float, p_b: float, test: PlanTest,
                      alpha: float) -> tuple[str, list[str], list[str]]:
    """Print the power plans by design; the legend's kind, the plans' columns and the sensitivity table's."""
    kind = "power"
    first_columns = ["design", "scenarios", "scenarios_exact", "replicas", "m_bar", "power",
                     "achieved_power", "deff", "df", "conversations"]
    _print_table(console, f"Power plan for p_b - p_a = {p_b - p:+g} ({test.value} test, two-sided level "
                          f"{alpha:g})", [{"design": d, **v} for d, v in plans.items()], first_columns)
    solved = next(iter(plans.values()))["solved_for"]
    columns = ["rho"] + [f"{design}_{key}" for design in plans
                         for key in dict.fromkeys((solved, "achieved_power", "conversations"))
                         if not (solved == "power" and key == "achieved_power")]
    return kind, first_columns, columns


def plan(
    ctx: typer.Context,
    p: float = typer.Option(..., "--p", metavar="RATE", help="Expected rate, in (0, 1): p_u or p_o (pi with "
                                                             "--paired-figure); assistant A's rate with --p-b."),
    rho: float = typer.Option(..., "--rho", metavar="RHO", help="Intra-scenario correlation, in [0, 1]; rarely "
                                                                "known, so a sensitivity table over rho is printed "
                                                                "too."),
    half_width: Optional[float] = typer.Option(None, "--half-width", metavar="H", help="Target half-width (high - "
                                               "low) / 2 of the interval, in (0, 0.5)."),
    replicas: Optional[int] = typer.Option(None, "--replicas", metavar="M", help="Mean conversations m per "
                                           f"scenario (replicas), 1 to {MAX_PLAN_SIZE:,}."),
    scenarios: Optional[int] = typer.Option(None, "--scenarios", metavar="K", help="Scenarios K of the rate's "
                                            f"label (cases with --paired-figure), 1 to {MAX_PLAN_SIZE:,}."),
    confidence: float = typer.Option(0.95, "--confidence", metavar="LEVEL", help="Confidence level of the "
                                     "interval, in (0, 1)."),
    paired_figure: bool = typer.Option(False, "--paired-figure", help="Plan the interval of pi; the clusters "
                                       "are cases, each an ESC and an ACT scenario."),
    p_b: Optional[float] = typer.Option(None, "--p-b", metavar="RATE", help="Assistant B's rate: plan the power "
                                        "to detect p_b - p (a power plan)."),
    power: Optional[float] = typer.Option(None, "--power", metavar="POWER", help="Target power, in (0, 1) (with "
                                          "--p-b)."),
    alpha: float = typer.Option(0.05, "--alpha", metavar="LEVEL", help="Two-sided level of the test (with "
                                "--p-b)."),
    correlation: Optional[float] = typer.Option(None, "--correlation", metavar="R", help="Correlation of the two "
                                                "assistants' scenario rates, in [-1, 1]; adds the paired design "
                                                "(with --p-b)."),
    size_cv: float = typer.Option(0.0, "--size-cv", metavar="CV", help="Coefficient of variation of the "
                                  "scenario sizes (sd / mean, 0 to 100; 0: every scenario has m): the design "
                                  "effect takes m_bar = m (1 + cv^2) (SPEC section 5; Eldridge, Ashby & Kerry "
                                  "2006)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", metavar="N,N,...", help="Scenario sizes of a pilot, in "
                                        "place of --size-cv: m_bar = m * sum(n^2) / sum(n) / mean(n)."),
    interval: PlanInterval = typer.Option(PlanInterval.wilson_kish, "--interval", metavar="METHOD",
                                          help="The interval planned "
                                          "for: wilson-kish (the paper's) or wilson-kish-t (t on K - 1 degrees "
                                          "of freedom; needs more scenarios)."),
    test: PlanTest = typer.Option(PlanTest.t, "--test", help="With --p-b: the test planned for. t: t on K - 1 "
                                  "(paired) or 2K - 2 (unpaired) degrees of freedom, which holds its level with "
                                  "few scenarios; z: the normal rule, whose test rejects too often then "
                                  "(escalation study sample-size)."),
    rho_grid: str = typer.Option(",".join(map(str, _DEFAULT_RHO_GRID)), "--rho-grid", metavar="RHO,RHO,...",
                                 help=f"rho values of the sensitivity table, each in [0, 1]; at most {MAX_RHO_GRID}."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of the tables."),
) -> None:
    """Plan an evaluation: solve for the one unknown among scenarios K, replicas m and half-width h.

    Give exactly two of --scenarios, --replicas and --half-width (with --p-b: --power in place of
    --half-width); the third is solved for. K counts the scenarios of one label: a plan for p_u
    counts ESC scenarios, a plan for p_o ACT scenarios, each run m times on average (to measure
    both, plan each rate). With --paired-figure K counts cases, each an ESC and an ACT scenario.
    --size-cv or --sizes gives the spread of the scenario sizes.

    Replicas cannot replace scenarios: no number of replicas brings K below the floor. A plan
    has at most a million scenarios and a million replicas: a target that needs more is refused
    (and shown as - in the sensitivity table). A legend under the tables says what each column
    means.

    \b
    Examples:
      escalation plan --p 0.1 --half-width 0.05 --rho 0.1 --replicas 10
        (27 scenarios of 10 conversations reach h = 0.05; the floor is 13.8)
      escalation plan --p 0.1 --p-b 0.2 --power 0.8 --rho 0.05 --replicas 10
        (30 scenarios per assistant give the t test 80% power)
    """
    _check_flags(ctx, p_b=p_b, scenarios=scenarios, replicas=replicas, power=power, half_width=half_width,
                 sizes=sizes)
    grid = _rho_grid(rho_grid, rho)
    spread = dict(size_cv=size_cv, sizes=_sizes(sizes))
    # the planner checks every value, and its ValueError names the parameter; main() names the flag
    if p_b is None:
        plans, sensitivity = _rate_plans(p, rho, grid, spread, scenarios=scenarios, replicas=replicas,
                                         half_width=half_width, confidence=confidence, interval=interval,
                                         paired_figure=paired_figure)
    else:
        plans, sensitivity = _power_plans(p, p_b, rho, grid, spread, scenarios=scenarios, replicas=replicas,
                                          power=power, alpha=alpha, test=test, correlation=correlation)
    if as_json:
        out = plans["plan"] if "plan" in plans else {"designs": plans}
        typer.echo(orjson.dumps({**out, "sensitivity": sensitivity},
                                option=orjson.OPT_INDENT_2).decode())
        return
    from rich.console import Console

    from ._console import columns as width

    console = Console(width=width())
    if "plan" in plans:
        kind, first_columns, columns = _print_rate_plan(console, plans["plan"], rho, paired_figure)
    else:
        assert p_b is not None  # a power plan: the plans are by design only when --p-b is given
        kind, first_columns, columns = _print_power_plan(console, plans, p, p_b, test, alpha)
    _print_table(console, "Sensitivity to rho (- : unreachable)", sensitivity, columns)
    for line in legend_lines(legend([*first_columns, *columns], kind), console.width):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation plan`` to the command line."""
    app.command("plan", short_help="Scenarios and replicas an evaluation needs (or a power plan).")(plan)
