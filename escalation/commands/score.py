"""``escalation score``: the measurement of SPEC section 7."""
from __future__ import annotations

import gc
import json
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Collection, Optional

import typer

from escalation.estimators import FORMATS as READER_FORMATS, INTERVAL_METHODS

FORMATS = ("auto", *READER_FORMATS)

Interval = Enum("Interval", {name.replace("-", "_"): name for name in INTERVAL_METHODS}, type=str)

INTERVAL_HELP = ("The interval of every figure. wilson-kish: the paper's (SPEC section 5). wilson-kish-t: the same "
                 "with a t quantile on scenarios - 1 degrees of freedom, wider with few scenarios. wilson-kish-ucb: "
                 "rho replaced by its one-sided upper confidence bound. korn-graubard: inspect_ai's ci_wilson(cluster=). "
                 "bootstrap-percentile, bootstrap-bca: the cluster bootstrap (--seed fixes its resamples). The "
                 "README's coverage table says which holds its level for how many scenarios.")


JUDGE_MODEL_HELP = ("After scoring, ask an LLM judge about every evaluated conversation, with any model inspect_ai "
                    "supports, named as inspect_ai names it: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                    "ollama/llama3.1... (the provider's API key comes from the environment, as for inspect eval). "
                    "The per-turn judge gives, turn by turn, the probability that the instructions already "
                    "required a person (it reads the instructions and the user's messages only, never what the "
                    "assistant did); the cause judge names why each error happened, from a closed list, with a "
                    "quote. Prints a judge section and, with --out DIR, writes DIR/judges.jsonl (one line per "
                    "evaluated conversation). Diagnostics only: u, o, pi and summary.json are the same with or "
                    "without it. Needs the inspect extra: pip install \"escalation\\[inspect]\"")  # \\[: a bracket in rich markup
INSTRUCTIONS_HELP = ("With --judge-model: a text file with the escalation instructions the assistant was given (the "
                     "rule that reserves cases for a person); both judges read it. Default: each conversation's "
                     "metadata[\"instructions\"], which the project's inspect_ai suite task writes.")


#: Exit code of a run where no conversation is evaluated (SPEC section 7): both files are still written.
NOTHING_EVALUATED = 3


class Mode(str, Enum):
    record = "record"
    text = "text"


def _fmt(x, digits=4):
    return "-" if x is None else f"{x:.{digits}f}"


def print_summary(summary: dict, *, records: str, fmt: str, out_dir: Optional[Path],
                  apart: Collection[str] = ()) -> None:
    """A short readable summary of ``summary.json`` for a person; the warnings in ``apart`` are left
    out (the command prints them on standard error)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 100)
    conf = int(round(summary["confidence"] * 100))
    mode = "with the tool record (mode A)" if summary["mode"] == "record" else "from the text only (mode B: a lower bound)"
    console.print(f"[bold]{records}[/bold] ({fmt}): {summary['conversations']} conversations, scored {mode}",
                  highlight=False)
    table = Table(show_edge=False, header_style="bold")
    for col in ("figure", "errors/n", "rate", f"{conf}% interval", "scenarios", "rho", "deff", "n_eff"):
        table.add_column(col, justify="left" if col == "figure" else "right", no_wrap=True)
    p = summary["paired"]
    for name, r, count in (("p_u under-escalation", summary["under"], f"{summary['under']['errors']}/"
                            f"{summary['under']['n']}"),
                           ("p_o over-escalation", summary["over"], f"{summary['over']['errors']}/"
                            f"{summary['over']['n']}"),
                           ("pi paired figure", p, f"{p['pairs']} pairs")):
        rate = r["pi"] if r is p else r["rate"]
        table.add_row(name, count, _fmt(rate), f"({_fmt(r['ci'][0])}, {_fmt(r['ci'][1])})",
                      f"{r['clusters']} case{'' if r['clusters'] == 1 else 's'}" if r is p else str(r["clusters"]),
                      _fmt(r["rho"], 3),
                      _fmt(r["deff"], 3), _fmt(r["n_eff"], 1))
    console.print(table)
    note = ""
    if summary["rho_fixed"] is None and any(r["rho"] is None and (r["deff"] or 1.0) > 1.0
                                            for r in (summary["under"], summary["over"], p)):
        note = ("; rho '-' is undefined (one scenario, or every scenario of one conversation, or no variation of "
                "the outcome): the interval then uses rho = 1")
    console.print(f"interval: {summary['interval']}{note}", highlight=False)
    for warning in (w for w in summary["warnings"] if w not in apart):
        console.print(f"[yellow]warning[/yellow]: {escape(warning)}", highlight=False)
    for key in ("under", "over"):
        causes = ", ".join(f"{k} {v}" for k, v in summary[key].get("causes", {}).items())
        console.print(f"causes of {key}-escalation: {causes}")
    b = summary["base"]
    console.print(f"base metric (no order, no approval requests): p_u {_fmt(b['under_rate'])}, "
                  f"p_o {_fmt(b['over_rate'])}, pi {_fmt(b['pi'])}")
    ne = summary["not_evaluated"]
    reasons = ", ".join(f"{k} {v}" for k, v in ne["reasons"].items()) or "none"
    console.print(f"not evaluated: {ne['total']} ({reasons})")
    if summary["unmarked_tools"]:
        tools = ", ".join(f"{k} ({v})" for k, v in summary["unmarked_tools"].items())
        console.print(f"unmarked tools (counted as actions; mark look-ups as read_only_tools): {tools}")
    if summary["rho_fixed"] is not None:
        console.print(f"rho fixed by --rho at {summary['rho_fixed']}")
    if out_dir is not None:
        console.print(f"wrote {out_dir / 'conversations.jsonl'} and {out_dir / 'summary.json'}")


def score(
    records: Path = typer.Argument(..., help="Log file: canonical JSONL (SPEC section 6) or a supported log format."),
    policy: Path = typer.Option(..., "--policy", help="Policy file (JSON or TOML): escalation_tools, read_only_tools, "
                                "action_tools, approval_tools, gated_tools."),
    format: str = typer.Option("auto", "--format", help=f"Input format: {', '.join(FORMATS)}."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for conversations.jsonl (one line per input "
                                       "conversation) and summary.json."),
    rho: Optional[float] = typer.Option(None, "--rho", min=0.0, max=1.0,
                                        help="Fix the intra-scenario correlation instead of estimating it."),
    confidence: float = typer.Option(0.95, "--confidence",
                                     help="Two-sided confidence level of the intervals."),
    mode: Mode = typer.Option(Mode.record, "--mode", help="record: the tool record decides (mode A). text: a phrase "
                              "judge reads the assistant's text (mode B), a lower bound."),
    labels: Optional[Path] = typer.Option(None, "--labels", help="CSV or JSON mapping conversation_id or case_id "
                                          "to ESC/ACT, for logs that carry no label."),
    plan: Optional[Path] = typer.Option(None, "--plan", help="CSV case_id,label,replicas of the planned scenarios: "
                                        "absent ones are reported as missing."),
    approval_escalation: bool = typer.Option(False, "--approval-escalation", help="inspect logs: count an "
                                             "ApprovalEvent with decision 'escalate' as an escalation call."),
    interval: Interval = typer.Option("wilson-kish", "--interval", help=INTERVAL_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap intervals' resamples (recorded in "
                             "summary.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json to stdout instead of the table."),
    chunk_size: int = typer.Option(50_000, "--chunk-size", min=1, help="Conversations scored at a time (memory bound)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", metavar="MODEL", help=JUDGE_MODEL_HELP),
    instructions: Optional[Path] = typer.Option(None, "--instructions", metavar="FILE", help=INSTRUCTIONS_HELP),
) -> None:
    """Score assistant logs: under-escalation, over-escalation and the paired figure pi, with
    Wilson intervals and the Kish design effect (SPEC sections 3 to 7), or another interval (--interval).

    Example: escalation score examples/data/tau-bench/gpt-4o-airline.json
    --policy examples/tau-bench-airline.policy.json --out results/tau-bench

    With judges: escalation score LOG --policy POLICY --out DIR --judge-model openai/gpt-4o-mini
    --instructions rules.txt

    Exit code 2: unreadable input or a bad policy (nothing written). Exit code 3: no conversation
    was evaluated (both files are still written, and each reason is printed with what fixes it).
    """
    from escalation.estimators import InputError, load_labels, load_plan, load_policy, score_file

    if not 0.0 < confidence < 1.0:
        raise InputError(f"must lie strictly between 0 and 1, got {confidence}", field="--confidence")
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", field="--format")
    if not records.exists():
        raise InputError("no such file", source=str(records))
    policy_obj = load_policy(policy)
    label_obj = load_labels(labels) if labels is not None else None
    plan_df = load_plan(plan) if plan is not None else None
    if instructions is not None and judge_model is None:
        typer.echo("error: --instructions is read by the judges: give --judge-model MODEL too", err=True)
        raise typer.Exit(2)
    judging = None
    if judge_model is not None:  # checked before anything is scored or written
        from ._judging import prepare_judges, print_judges, run_judges

        judging = prepare_judges(records, judge_model, instructions, format=format, labels=label_obj,
                                  policy=policy_obj, approval_escalation=approval_escalation, mode=mode.value)

    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    size = os.path.getsize(records) if records.is_file() else None
    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("scoring", total=size)
        # Parsed JSON holds no reference cycles, and the cyclic collector, set off again and again by
        # millions of new dicts, took 40% of a run through the reference reader (benchmarks/score.py):
        # paused for the command, never inside the library.
        collecting = gc.isenabled()
        gc.disable()
        try:
            summary, used = score_file(records, policy_obj, format=format, labels=label_obj, mode=mode.value,
                                       confidence=confidence, rho=rho, plan=plan_df, out_dir=out,
                                       chunk_size=chunk_size, approval_escalation=approval_escalation,
                                       interval=interval.value, seed=seed,
                                       progress=lambda n: bar.advance(task, n))
        finally:
            if collecting:
                gc.enable()
    data = summary.to_dict()
    notes = summary.input_warnings  # SPEC section 7: the result cannot be what the user meant
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        print_summary(data, records=str(records), fmt=used, out_dir=out, apart=notes)
    for note in notes:
        typer.echo(f"warning: {note}", err=True)
    if judging is not None:
        lines = run_judges(judging, written=out is not None)
        path = None
        if out is not None:
            import orjson
            from escalation.estimators import write_atomic
            path = out / "judges.jsonl"
            write_atomic(path, chunks=(orjson.dumps(line) + b"\n" for line in lines))
        print_judges(lines, judging, path=path, err=as_json)
    if not summary.evaluated:
        raise typer.Exit(NOTHING_EVALUATED)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    app.command("score")(score)
