"""``escalation compare A_DIR B_DIR``: is assistant B better than assistant A on the same scenarios?"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import orjson
import typer

from escalation.cli.commands._console import console as plain_console, json_text, plain, warning_line
from escalation.cli.commands._report import COMPARE_FIGURES, report_files
from escalation.cli.commands.score import Interval
from escalation.estimators.metric import FEW_CASES_BOOTSTRAP, FEW_CASES_NEWCOMBE
from escalation.estimators.stats import format_number

#: What the words under each interval mean (estimators.coverage_word).
WORDS = ("holds (no condition below 0.93 by more than 2 Monte Carlo standard errors, borderline ones rerun to an "
         "MCSE of 0.003, and a mean of at least 0.945), too narrow, often undefined (BCa)")

HELP = (
    "Is assistant B better than assistant A? The differences of p_u, p_o, pi and p_a (B minus A) between two "
    "`escalation score --out` folders of the same scenarios, paired by scenario and clustered by case; p_a, the "
    "share of the conversations with a gated call whose approval was missing or broken, is paired by case, label "
    "and replica on the conversations in which both made a gated call.\n\n"
    "Each difference has two intervals, Newcombe's paired square-and-add interval (with the --interval limits; "
    "auto, the default, takes the narrowest limits that `escalation study differences` found holding at that "
    "number of cases and `escalation study coverage` for each rate of that design) and a paired cluster bootstrap "
    "that resamples cases for both assistants at once, and a two-sided p-value of no difference, which inverts the "
    "chosen interval (p <= 0.05 exactly when the 95% interval leaves out 0). Under each interval a word says what "
    "`escalation study differences` measured at that number of cases: holds or too narrow (its lowest coverage in "
    "brackets); the output then says which interval to trust. The study found Newcombe's interval with "
    "korn-graubard or beta-binomial-bayes limits holding at every number of cases it ran, with wilson-kish limits "
    f"too narrow below {FEW_CASES_NEWCOMBE} cases, and the bootstrap too narrow below {FEW_CASES_BOOTSTRAP}.\n\n"
    "The two folders must have been scored alike: the same mode, confidence and policy (compare refuses "
    "otherwise, naming the difference). Folders of different scenarios are refused unless --common compares them "
    "on the scenarios both have and lists the others.\n\n"
    "Example:\n\n"
    "\b\n"
    "  escalation score runs/gpt-4o.jsonl --policy policy.json --out scored/gpt-4o\n"
    "  escalation score runs/claude.jsonl --policy policy.json --out scored/claude\n"
    "  escalation compare scored/gpt-4o scored/claude --out comparison\n\n"
    "prints claude minus gpt-4o for each figure (p_u, p_o, p_a: lower is better; pi: higher is better) and the "
    "scenarios where they disagree, and writes comparison/compare.json, differences.csv and disagreements.csv, "
    "and report.html (the differences as a forest plot, and the scenarios where they disagree, each "
    "conversation of both side by side, with the timelines the score folders' report.html hold)."
)

def _ci(pair) -> str:
    low, high = pair
    return format_number(None) if low is None or high is None else f"({format_number(low)}, {format_number(high)})"


def _names(text: Optional[str]):
    """``--names A,B`` as two names, or None."""
    from escalation.estimators.records import InputError

    if text is None:
        return None
    names = [part.strip() for part in text.split(",")]
    if len(names) != 2 or not all(names):
        raise InputError(f"--names must be two names separated by a comma (A's, then B's), e.g. --names "
                         f"gpt-4o,claude; got {text!r}")
    if names[0] == names[1]:
        raise InputError(f"--names must be two different names; got {names[0]!r} twice")
    return tuple(names)


def _ids(ids, first: int = 10) -> str:
    """The first ``first`` scenario ids, as plain text."""
    text = ", ".join(plain(x) for x in ids[:first])
    return text + (f", ... ({len(ids) - first} more in compare.json)" if len(ids) > first else "")


def _differences_table(data: dict, name_a: str, name_b: str, level: str, chosen: str, floor: float):
    """The table of the differences: each figure of A and B, B - A, its p-value and both intervals, each with the
    word for its coverage; ``chosen`` marks the interval of --interval."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from escalation.figures import counted, p_value_text

    def cell(value, note):
        """A table cell: ``value``, and ``note`` dimmed on the line below."""
        return Text.assemble(f"{value}\n", (note, "dim"))

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, header_style="bold")
    table.add_column("figure", no_wrap=True)
    for name in (name_a, name_b):
        table.add_column(name, justify="right", min_width=6, max_width=max(10, min(len(name), 24)), overflow="fold")
    table.add_column("B - A", justify="right", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    for title in (f"Newcombe {level}", f"bootstrap {level}"):
        table.add_column(title + (" *" if title.startswith(chosen) else ""), no_wrap=True)
    for diff in data["differences"].values():
        words = diff["coverage"]
        cells = []
        for which in ("newcombe", "bootstrap"):
            word = words[which]
            text = word["word"] if word["lowest"] is None else f"{word['word']} ({word['lowest']:.2f})"
            cells.append(cell(_ci(diff[f"{which}_ci"]), text))
        table.add_row(cell(diff["metric"], counted(diff["clusters"], "case")),
                      cell(format_number(diff["a"]), f"n {diff['n_a']}"),
                      cell(format_number(diff["b"]), f"n {diff['n_b']}"), format_number(diff["difference"], sign=True),
                      p_value_text(diff["p_value"], floor), *cells, end_section=True)
    return table


def _print_left_out(console, data: dict) -> None:
    """With --common: the scenarios that only one of the two folders has."""
    left = [(name, ids) for name, ids in data["only_in"].items() if ids]
    if left:
        console.print("left out (--common): " + "; ".join(
            f"{len(ids)} scenario{'' if len(ids) == 1 else 's'} only in {plain(name)} ({_ids(ids)})"
            for name, ids in left))
    else:
        console.print("left out (--common): none, both folders have the same scenarios")


def _print_disagreements(console, disagree: list, top: int, name_a: str, name_b: str) -> None:
    """The scenarios where the two assistants disagree: how many, and the first ``top``, largest difference
    first."""
    from rich import box
    from rich.table import Table

    if not disagree:
        console.print("The two assistants agree on every scenario.")
    elif top == 0:
        console.print(f"Scenarios where they disagree: {len(disagree)} (none shown: --top 0; compare.json and "
                      "disagreements.csv list them)")
    else:
        console.print(f"Scenarios where they disagree ({len(disagree)}; {min(top, len(disagree))} shown, largest "
                      "difference first):")
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold")
        table.add_column("scenario", overflow="fold")
        table.add_column("label", justify="right", no_wrap=True)
        for name in (name_a, name_b):
            table.add_column(f"{name} errors/n", justify="right", min_width=8, max_width=20, overflow="fold")
        table.add_column("B - A", justify="right", no_wrap=True)
        for row in disagree[:top]:
            table.add_row(plain(row["scenario_id"]), plain(row["label"]), f"{row['errors_a']}/{row['n_a']}",
                          f"{row['errors_b']}/{row['n_b']}", f"{row['difference']:+.2f}")
        console.print(table)


def _print_written(console, out: Path, report: tuple[str, ...]) -> None:
    """The files written into --out: compare.json and the tables, and the report with its figures."""
    console.print(f"wrote {plain(out / 'compare.json', None)}, differences.csv and disagreements.csv")
    if report:
        figure = f", with the figure {' and '.join(COMPARE_FIGURES)} (.png, .pdf)" if len(report) > 1 else ""
        console.print(f"report: {plain(out / 'report.html', None)} (open it in a browser){figure}",
                      soft_wrap=True)


def print_comparison(data: dict, *, top: int, out: Optional[Path] = None, report: tuple[str, ...] = ()) -> None:
    """The readable comparison of :meth:`Comparison.to_dict`, for a person (fits 100 columns); ``report``:
    the report's files that were written."""
    from rich.text import Text

    from escalation.figures import counted

    console = plain_console(most=100)  # not a terminal: wide, so that no model name is split
    name_a, name_b = plain(data["names"]["a"]), plain(data["names"]["b"])
    level = f"{data['confidence']:.0%}"
    bootstrap = data["interval"].startswith("bootstrap")
    limits = "wilson-kish" if bootstrap else data["interval"]
    kind = data["interval"].removeprefix("bootstrap-") if bootstrap else "percentile"
    chosen = "bootstrap" if bootstrap else "Newcombe"
    floor = max(1e-12, 1.0 / data["n_boot"]) if bootstrap else 1e-12
    scope = " both have (--common)" if data["common"] else ""
    console.print(f"{name_b} minus {name_a}: {counted(data['scenarios'], 'scenario')}{scope}, "
                  f"{counted(data['cases'], 'case')}; {level} intervals")
    console.print(_differences_table(data, name_a, name_b, level, chosen, floor))
    console.print(f"A = {name_a}, B = {name_b}; n: conversations (pi: ESC/ACT pairs; p_a: the conversations "
                  "in which both made a gated call). Newcombe: paired "
                  f"square-and-add with {limits} limits; bootstrap: paired cluster bootstrap over cases ({kind}); * "
                  f"chosen (--interval {data.get('interval_requested', data['interval'])}); p: two-sided p-value of "
                  "no difference, inverting the "
                  "chosen interval. p_u, p_o, p_a: lower is better; pi: higher is better.")
    if data.get("interval_requested") == "auto":
        console.print(f"interval: auto, {data['interval']}: {data['interval_reason'].removeprefix('auto: ')}.")
    for diff in data["differences"].values():
        if diff["note"]:
            console.print(f"{diff['metric']}: {plain(diff['note'], None)}.")
    studied = "" if data["confidence"] == 0.95 else ", at 95%"
    console.print(f"Under each interval: its lowest coverage in `escalation study differences` at that many cases"
                  f"{studied}, and the word for it: {WORDS}.")
    console.print(Text.assemble(("advice", "bold"), f": {plain(data['advice'], None)}."))
    if data["common"]:
        _print_left_out(console, data)
    for warning in data["warnings"]:
        console.print(warning_line(warning))
    _print_disagreements(console, data["disagreements"], top, name_a, name_b)
    if out is not None:
        _print_written(console, out, report)


def compare(
    a_dir: Path = typer.Argument(..., metavar="A_DIR", help="Folder of `escalation score --out` for assistant A."),
    b_dir: Path = typer.Argument(..., metavar="B_DIR", help="Folder of `escalation score --out` for assistant B "
                                 "(the same scenarios, scored alike)."),
    names: Optional[str] = typer.Option(None, "--names", metavar="A,B", help="The two assistants' names in the "
                                        "output. Default: the folders' names (with their parent folders when both "
                                        "are alike)."),
    common: bool = typer.Option(False, "--common", help="Compare on the scenarios both folders have, and list the "
                                "others (default: refuse folders of different scenarios)."),
    confidence: float = typer.Option(0.95, "--confidence", metavar="LEVEL", help="Level of both intervals, "
                                     "strictly between 0 and 1."),
    n_boot: int = typer.Option(2000, "--n-boot", metavar="N", help="Paired cluster bootstrap resamples, 1 to "
                               "100,000."),
    seed: int = typer.Option(0, "--seed", min=0, metavar="SEED", help="Seed of the bootstrap."),
    interval: Interval = typer.Option("auto", "--interval", metavar="METHOD", help="The chosen interval, "
                                      "whose p-value is printed. auto (default): Newcombe's with the narrowest "
                                      "limits that held 95% in `escalation study differences` at this many cases "
                                      "and in `escalation study coverage` for each rate of this design "
                                      "(replicas or not); it says which. "
                                      "wilson-kish (the paper's) or another interval "
                                      "of one rate: Newcombe's, with these limits. "
                                      "bootstrap-percentile or bootstrap-bca: the paired bootstrap of that kind "
                                      "(Newcombe's then has wilson-kish limits). Both are printed."),
    rho: Optional[float] = typer.Option(None, "--rho", metavar="RHO", help="Fix rho, between 0 and 1, for the "
                                        "Wilson-Kish limits (default: estimated)."),
    allow_errors: bool = typer.Option(False, "--allow-errors", help="Compare runs in which the harness recorded "
                                      "failures (run_error): the failed conversations are left out of both and "
                                      "named. Without it, such a folder is refused."),
    top: int = typer.Option(10, "--top", metavar="N", help="Disagreeing scenarios to print."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for compare.json, "
                                       "differences.csv and disagreements.csv, and report.html."),
    no_report: bool = typer.Option(False, "--no-report", help="With --out: do not write report.html."),
    figures: bool = typer.Option(False, "--figures", help="With --out: also draw the forest plot differences as "
                                 "PNG and PDF files for a paper (imports matplotlib: about a second more)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    from escalation.estimators.metric import ScenarioMismatchError, compare_scored
    from escalation.estimators.records import InputError, check_out_dir, write_files

    if top < 0:
        raise InputError(f"--top must be at least 0, got {top}")
    if figures and no_report:
        raise InputError("--figures and --no-report cannot go together: the figure is drawn with report.html")
    if out is not None:
        check_out_dir(out, (a_dir, b_dir), writes=("compare.json", "differences.csv", "disagreements.csv",
                                                   *report_files(COMPARE_FIGURES)))
    try:
        result = compare_scored(a_dir, b_dir, confidence=confidence, n_boot=n_boot, interval=interval.value,
                                rho=rho, seed=seed, names=_names(names), common=common, allow_errors=allow_errors)
    except ScenarioMismatchError as err:
        if not err.shared:
            raise
        raise InputError(f"{err.base}; --common compares them on the {err.shared} scenarios both have",
                         source=err.source) from None
    data = result.to_dict()
    if out is not None:
        files = {"compare.json": orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n",
                 "differences.csv": result.to_frame().to_csv(index=False),
                 "disagreements.csv": result.disagreements.to_csv(index=False)}
        if not no_report:
            from ._report import compare_files
            files.update(compare_files(a_dir, b_dir, result, data, figures=figures))
        write_files(out, files)
        for name in report_files(COMPARE_FIGURES):  # an earlier run's, which would not describe this comparison
            if name not in files:
                (out / name).unlink(missing_ok=True)
    if as_json:
        typer.echo(json_text(data))
        return
    print_comparison(data, top=top, out=out, report=tuple(n for n in report_files(COMPARE_FIGURES)
                                                          if out is not None and n in files))


compare.__doc__ = HELP  # the command's help: plain click text, readable at 80 columns


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation compare`` to the command line."""
    app.command("compare")(compare)
