"""``escalation compare A_DIR B_DIR``: is assistant B better than assistant A on the same scenarios?"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from escalation.commands.score import Interval
from escalation.estimators import compare_scored, write_atomic


def _ci(pair) -> str:
    low, high = pair
    return "-" if low is None or high is None else f"({low:.3f}, {high:.3f})"


def _num(value, fmt="{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def compare(
    a_dir: Path = typer.Argument(..., help="Folder of `escalation score --out` for assistant A."),
    b_dir: Path = typer.Argument(..., help="Folder of `escalation score --out` for assistant B "
                                           "(same scenarios)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Level of both intervals."),
    n_boot: int = typer.Option(2000, "--n-boot", help="Paired cluster bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    interval: Interval = typer.Option("wilson-kish", "--interval", help="The chosen interval. A Wilson-type method "
                                      "(wilson-kish, wilson-kish-t, wilson-kish-ucb, korn-graubard) gives the limits "
                                      "that Newcombe's interval combines; bootstrap-percentile or bootstrap-bca "
                                      "chooses the paired cluster bootstrap of that kind. Both are printed."),
    rho: Optional[float] = typer.Option(None, "--rho", help="Fix rho for the Wilson-Kish limits "
                                                             "(default: estimated)."),
    top: int = typer.Option(10, "--top", help="Disagreeing scenarios to print."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for compare.json, "
                                                           "differences.csv and disagreements.csv."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Differences of p_u, p_o and pi (B minus A), paired by scenario and clustered.

    Two intervals: Newcombe's paired square-and-add with Wilson-Kish limits, and a paired
    cluster bootstrap that resamples cases for both assistants at once.
    """
    result = compare_scored(a_dir, b_dir, confidence=confidence, n_boot=n_boot, interval=interval.value,
                            rho=rho, seed=seed)
    data = result.to_dict()
    if out is not None:
        write_atomic(out / "compare.json", orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        write_atomic(out / "differences.csv", result.to_frame().to_csv(index=False))
        write_atomic(out / "disagreements.csv", result.disagreements.to_csv(index=False))
    if as_json:
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    console = Console()
    level = f"{confidence:.0%}"
    table = Table(title=f"B minus A ({result.scenarios} scenarios, {result.cases} cases; "
                        f"{level} intervals)")
    for column in ("figure", "A", "B", "B - A", "Newcombe", "bootstrap", "n A/B"):
        table.add_column(column, justify="right", no_wrap=True)
    for diff in data["differences"].values():
        table.add_row(diff["metric"], _num(diff["a"]), _num(diff["b"]),
                      _num(diff["difference"], "{:+.3f}"), _ci(diff["newcombe_ci"]),
                      _ci(diff["bootstrap_ci"]), f"{diff['n_a']}/{diff['n_b']}")
    console.print(table)
    bootstrap = result.interval.startswith("bootstrap")
    limits = "wilson-kish" if bootstrap else result.interval
    kind = result.interval.removeprefix("bootstrap-") if bootstrap else "percentile"
    chosen = "bootstrap" if bootstrap else "Newcombe"
    console.print(f"Newcombe: paired square-and-add with {limits} limits; bootstrap: paired cluster bootstrap over "
                  f"cases ({kind}). Chosen (--interval {result.interval}): {chosen}. p_u, p_o: lower is better; pi: "
                  "higher is better.", highlight=False)
    for warning in result.warnings:
        console.print(f"[yellow]warning[/yellow]: {escape(warning)}", highlight=False)
    disagree = result.disagreements
    if disagree.empty:
        console.print("The two assistants agree on every scenario.")
    else:
        shown = Table(title=f"Scenarios where they disagree ({len(disagree)}; "
                            f"{min(top, len(disagree))} shown, largest difference first)")
        for column in ("scenario", "label", "A errors/n", "B errors/n", "B - A"):
            shown.add_column(column, justify="right")
        for row in disagree.head(top).itertuples(index=False):
            shown.add_row(str(row.scenario_id), row.label, f"{row.errors_a}/{row.n_a}",
                          f"{row.errors_b}/{row.n_b}", f"{row.difference:+.2f}")
        console.print(shown)
    if out is not None:
        console.print(f"wrote {out / 'compare.json'}, differences.csv and disagreements.csv")


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation compare`` to the command line."""
    app.command("compare")(compare)
