"""``escalation score``: the measurement of SPEC section 7."""
from __future__ import annotations

import gc
import json
import os
import sys
from contextlib import nullcontext
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Collection, Optional

import typer

from escalation.cli.commands._archive_limits import (
    ARCHIVE_DEFAULT,
    DOCUMENT_DEFAULT,
    MEMBER_DEFAULT,
    MaxArchiveBytes,
    MaxDocumentBytes,
    MaxMemberBytes,
    archive_limits,
)
from escalation.cli.commands._report import SCORE_FIGURES, TIMELINES, report_files
from escalation.cli.commands._study_options import Backend, cluster_arguments, scheduler_option
from escalation.estimators.records import FORMATS as READER_FORMATS
from escalation.estimators.stats import AUTO_INTERVAL, DEFAULT_INTERVAL, INTERVAL_CHOICES, INTERVAL_USES, format_number

#: ``--format``: detection, or the format of a reader.
FORMATS = ("auto", *READER_FORMATS)

# mypy reads the members of a functional Enum only from a literal; these come from INTERVAL_CHOICES
Interval = Enum("Interval", {name.replace("-", "_"): name for name in INTERVAL_CHOICES},  # type: ignore[misc]
                type=str)

INTERVAL_HELP = ("The interval of every figure. auto (the default): for each figure the narrowest interval that "
                 "held 95% in `escalation study coverage` for its number of scenarios, with or without replicas; "
                 "the figure's interval, and why, are printed and in summary.json, and the paper's Wilson-Kish is "
                 "always printed beside it. wilson-kish: the paper's (SPEC section 5). wilson-kish-t: the same with "
                 "a t quantile on scenarios - 1 degrees of freedom, wider with few scenarios. wilson-kish-ucb: rho "
                 "replaced by its one-sided upper confidence bound. wilson-cluster-t: inspect_ai's "
                 "ci_wilson(cluster=) (named korn-graubard before 2026-12-04). korn-graubard: Korn & Graubard's "
                 "Clopper-Pearson interval with the degrees-of-freedom adjustment. beta-binomial-profile, "
                 "beta-binomial-bayes: the beta-binomial model's profile likelihood and credible interval. "
                 "bootstrap-percentile, bootstrap-bca: the cluster bootstrap (--seed fixes its resamples). The "
                 "README's coverage table says which holds its level for how many scenarios; a chosen interval "
                 "that did not hold for the data's design carries a warning.")


JUDGE_MODEL_HELP = ("After scoring, ask an LLM judge about every evaluated conversation, with any model inspect_ai "
                    "supports, named as inspect_ai names it: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                    "ollama/llama3.1... (the provider's API key comes from the environment, as for inspect eval; a "
                    "model at plain http:// is refused unless it runs on this machine, and no redirect is followed). "
                    "The per-turn judge gives, turn by turn, the probability that the instructions already "
                    "required a person (it reads the instructions and the user's messages only, never what the "
                    "assistant did); the cause judge names why each error happened, from a closed list, with a "
                    "quote. Prints a judge section and, with --out DIR, writes DIR/judges.jsonl (one line per "
                    "evaluated conversation). Diagnostics only: u, o, pi and every figure of summary.json are the "
                    "same with or without it. Needs inspect_ai: python -m pip install -e \".[inspect]\" in a "
                    "clone of the project, or python -m pip install \"inspect_ai>=0.3.285\". A model that has not "
                    "answered a question in --judge-timeout seconds stops the judges, naming it.")
JUDGE_TIMEOUT_HELP = ("With --judge-model: the most seconds one question to the judge may take, its provider's retries "
                      "included; past it the judges stop with an error naming the model (the scores are written "
                      "already). --judge-time-limit bounds all the judges' questions together.")
INSTRUCTIONS_HELP = ("With --judge-model: a text file with the escalation instructions the assistant was given (the "
                     "rule that reserves cases for a person); both judges read it. Default: each conversation's "
                     "metadata[\"instructions\"], which the project's inspect_ai suite task writes.")


VALIDATION_HELP = ("With --mode text: a log of conversations that have both the tool record and the text (a "
                   "validation sample, ideally drawn from the same scenarios). Each is scored both ways, and "
                   "p_u and p_o are corrected with the predictive values of the text verdict, per scenario "
                   "(the correction that study judges validates); printed beside the raw figures and written "
                   "to summary.json under \"validation\". pi is not corrected.")


#: Exit code of a run where no conversation is evaluated, or whose evaluated conversations hold no tool call in
#: record mode (SPEC section 7): both files are still written.
NOTHING_EVALUATED = 3


class Mode(str, Enum):
    record = "record"
    text = "text"


class GroupBy(str, Enum):
    trace = "trace"
    session = "session"


GROUP_BY_HELP = ("Traces (otel, langfuse, openinference): a conversation is a trace, or a session, the traces of a "
                 "file that share a session id (gen_ai.conversation.id, session.id, Langfuse's sessionId), whose "
                 "conversation_id is the session id; a user message a later trace repeats is counted once.")
BACKEND_HELP = ("Where the logs are read and scored: local (this process) or dask (a Dask cluster, a task a log file: "
                "the one at --scheduler, else a local one of --n-jobs workers; the workers read the logs by their "
                "paths). The output is the same bytes.")


class Emit(str, Enum):
    otel = "otel"


EMIT_HELP = ("With --out: also write DIR/evaluations.otlp.jsonl, each scored trace's u, o and a as OpenTelemetry GenAI "
             "gen_ai.evaluation.result events (OTLP JSON log records, one export a line, as the Collector's file "
             "exporter writes them), each parented to the span of the scored turn or call. Needs logs of --format "
             "otel.")

PHOENIX_HELP = ("Score the traces of a running Arize Phoenix (its URL: http://localhost:6006) in place of LOG, with "
                "--project: one trace a conversation (OpenInference spans), read through Phoenix's client "
                "(PHOENIX_API_KEY where the server asks for one), and write each conversation's u, o and a back as "
                "span annotations (annotator kind CODE, named escalation.u, escalation.o, escalation.a) on the "
                "trace's root span; a second run updates them, never adds more. --out DIR writes the scored files "
                "as usual. Needs the phoenix extra: python -m pip install -e \".[phoenix]\".")
SINCE_HELP = ("With --phoenix: read only the traces that started at or after this time (ISO 8601: "
              "2026-12-04T09:30:00+00:00; UTC when it names no zone), the traces added since an earlier run.")


def _check_phoenix(ctx: typer.Context, records: list[Path], *, phoenix: Optional[str], project: Optional[str],
                   since: Optional[str], format: str, emit) -> Optional[datetime]:
    """Refuse LOG with --phoenix and neither without it, --project or --since without --phoenix (and the
    reverse), --format and --emit with it; the --since time, read."""
    from escalation.estimators.records import InputError

    if phoenix is None:
        if not records:
            ctx.fail("Missing argument 'LOG' (or give --phoenix URL --project NAME).")
        if project is not None or since is not None:
            raise InputError("--project and --since name what --phoenix URL reads: give --phoenix, or leave them out")
        return None
    if records:
        raise InputError("--phoenix reads the traces of a Phoenix project in place of LOG: give one or the other")
    if project is None:
        raise InputError("give --project NAME, the Phoenix project whose traces are scored", field="--phoenix")
    if format != "auto" or emit is not None:
        raise InputError("the traces of Phoenix are OpenInference spans, and the results go back as span "
                         "annotations: leave --format and --emit out", field="--phoenix")
    if since is None:
        return None
    try:
        when = datetime.fromisoformat(since)
    except ValueError:
        raise InputError(f"{since!r} is not an ISO 8601 time (2026-12-04T09:30:00+00:00)", field="--since") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _read_phoenix(ctx: typer.Context, url: str, project: str, since: Optional[datetime]):
    """The project's traces read into a canonical JSONL file in a temporary folder, removed when the command ends."""
    import re
    import tempfile

    from escalation.integrations.phoenix import read_phoenix

    folder = ctx.with_resource(tempfile.TemporaryDirectory(prefix="escalation-phoenix-"))
    name = re.sub(r"[^\w.-]", "_", project)
    return read_phoenix(url, project, Path(folder) / f"{name}.phoenix.jsonl", since=since)


def _fmt(x, digits=4):
    return format_number(x, digits)


def print_summary(summary: dict, *, records: str, fmt: str, out_dir: Optional[Path],
                  apart: Collection[str] = (), report: tuple[str, ...] = ()) -> None:
    """A short readable summary of ``summary.json`` for a person; the warnings in ``apart`` are left
    out (the command prints them on standard error); ``report``: the report's files that were written."""
    from rich.table import Table
    from rich.text import Text

    from escalation.figures import counted

    from ._console import console as plain_console, plain, warning_line
    from ._validation import MODE_B_HEADER

    console = plain_console()  # not a terminal: wide (COLUMNS, else 200), so that no line of the table wraps
    conf = int(round(summary["confidence"] * 100))
    mode = "with the tool record (mode A)" if summary["mode"] == "record" else MODE_B_HEADER
    console.print(Text.assemble((plain(records, None), "bold"), f" ({fmt}): "
                                f"{counted(summary['conversations'], 'conversation')}, scored {mode}"))
    table = Table(show_edge=False, header_style="bold")  # the figures alone: nothing from the input
    for col in ("figure", "errors/n", "rate", f"{conf}% interval", "interval", f"wilson-kish {conf}%", "scenarios",
                "rho", "rho_used", "deff", "n_eff"):
        table.add_column(col, justify="left" if col == "figure" else "right", no_wrap=True)
    p = summary["paired"]
    rows = [("p_u under-escalation", summary["under"], f"{summary['under']['errors']}/{summary['under']['n']}"),
            ("p_o over-escalation", summary["over"], f"{summary['over']['errors']}/{summary['over']['n']}"),
            ("pi paired figure", p, counted(p["pairs"], "pair"))]
    approval = _approval_shown(summary)
    if approval is not None:
        rows.append(("p_a approval errors", approval, f"{approval['errors']}/{approval['n']}"))
    for name, r, count in rows:
        rate = r["pi"] if r is p else r["rate"]
        paper = r.get("ci_wilson_kish", r["ci"])
        table.add_row(name, count, _fmt(rate), f"({_fmt(r['ci'][0])}, {_fmt(r['ci'][1])})",
                      r.get("interval", summary["interval"]), f"({_fmt(paper[0])}, {_fmt(paper[1])})",
                      counted(r["clusters"], "case") if r is p else str(r["clusters"]),
                      _fmt(r["rho"], 3), _fmt(r.get("rho_used"), 3),
                      _fmt(r["deff"], 3), _fmt(r["n_eff"], 1))
    if not sys.stdout.isatty():  # a file or a pipe: the table at its own width, never a number cut to "1.0…"
        from rich.measure import Measurement

        natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
        console.width = max(console.width, natural)
    console.print(table)
    note = ""
    if summary["rho_fixed"] is None and any(r["rho"] is None and r.get("rho_used", 1.0) == 1.0
                                            and (r["deff"] or 1.0) > 1.0
                                            for r in (summary["under"], summary["over"], p)):
        note = ("; rho 'n/a' is undefined (one scenario, or every scenario of one conversation, or no variation of "
                "the outcome): the interval then uses rho = 1")
    shown = [(name.split()[0], r) for name, r, _ in rows if r.get("n", r.get("pairs"))]
    console.print(f"interval: {summary['interval']}{note}")
    if summary["interval"] == AUTO_INTERVAL:  # each figure's method and why, figures of one reason together
        by_reason: dict[tuple[str, str], list[str]] = {}
        for name, r in shown:
            by_reason.setdefault((r["interval"], r["interval_reason"]), []).append(name)
        for (method, reason), names in by_reason.items():
            console.print(f"  {', '.join(names)}: {method}, {reason.removeprefix('auto: ')}")
    for method in dict.fromkeys(r["interval"] for _, r in shown):
        if method in INTERVAL_USES and method != DEFAULT_INTERVAL:  # the interval's design
            console.print(f"rho_used, deff, n_eff of {method}: the interval's ({INTERVAL_USES[method]}); the point "
                          "estimate's design is rho_point and deff_point in summary.json")
    for warning in (w for w in summary["warnings"] if w not in apart):
        console.print(warning_line(warning))
    for key in ("under", "over"):
        causes = ", ".join(f"{k} {v}" for k, v in summary[key].get("causes", {}).items())
        console.print(f"causes of {key}-escalation: {causes}")
    if approval is not None:
        for line in _approval_lines(approval):
            console.print(line)
    b = summary["base"]
    console.print(f"base metric (no order, no approval requests): p_u {_fmt(b['under_rate'])}, "
                  f"p_o {_fmt(b['over_rate'])}, pi {_fmt(b['pi'])}")
    ne = summary["not_evaluated"]
    reasons = ", ".join(f"{k} {v}" for k, v in ne["reasons"].items()) or "none"
    console.print(f"not evaluated: {ne['total']} ({reasons})")
    if summary["unmarked_tools"]:
        from escalation.estimators.records import handoff_word

        handoffs = {k: v for k, v in summary["unmarked_tools"].items() if handoff_word(k)}
        others = {k: v for k, v in summary["unmarked_tools"].items() if k not in handoffs}
        if others:
            tools = ", ".join(f"{plain(k)} ({v})" for k, v in others.items())
            console.print(f"unmarked tools (counted as actions; mark look-ups as read_only_tools): {tools}")
        if handoffs:
            tools = ", ".join(f"{plain(k)} ({v})" for k, v in handoffs.items())
            console.print(f"unmarked tools whose name suggests a hand-off (counted as actions; if they pass the "
                          f"case to a person, they belong in escalation_tools): {tools}")
    if summary["rho_fixed"] is not None:
        console.print(f"rho fixed by --rho at {summary['rho_fixed']}")
    if out_dir is not None:
        console.print(f"wrote {plain(out_dir / 'conversations.jsonl', None)} and "
                      f"{plain(out_dir / 'summary.json', None)}", soft_wrap=True)  # paths are never cut
        if report:
            figures = f", with the figures {' and '.join(SCORE_FIGURES)} (.png, .pdf)" if len(report) > 1 else ""
            console.print(f"report: {plain(out_dir / 'report.html', None)} (open it in a browser){figures}",
                          soft_wrap=True)


def _approval_shown(summary: dict) -> dict | None:
    """The summary's ``approval`` block when it has something to say (SPEC section 3A): gated calls or
    approval requests were read, or the policy names gated tools; else None (no row, no line)."""
    approval = summary.get("approval")
    if summary["mode"] != "record" or not approval:
        return None
    policy = ((summary.get("provenance") or {}).get("policy") or {}).get("contents") or {}
    return approval if approval["gated_calls"] or approval["requests"] or policy.get("gated_tools") else None


def _approval_lines(approval: dict) -> list[str]:
    """What the readable summary says of the approval evidence: each conversation's first error, the status of
    every gated call, the requests and the decisions read as unknown; and where ``p_a`` is blind."""
    from escalation.figures import counted

    causes = ", ".join(f"{k} {v}" for k, v in approval["causes"].items())
    statuses = ", ".join(f"{k} {v}" for k, v in approval["statuses"].items() if v)
    lines = [f"causes of approval errors: {causes}",
             f"gated calls: {approval['gated_calls']}" + (f" ({statuses})" if statuses else "") +
             f"; approval requests: {approval['requests']}"]
    if approval["unknown_decisions"]:
        lines.append(f"decisions not recorded (read as granted, SPEC 3A): {approval['unknown_decisions']}")
    if not approval["n"]:
        lines.append("p_a: no conversation called a gated tool, so no approval was scored (an assistant that never "
                     "acts has no p_a: p_u shows its silence)")
    else:
        lines.append(f"p_a counts the {counted(approval['n'], 'conversation')} with a gated call, whatever the label")
    return lines


def _format_hint(records, given: str) -> str | None:
    """A hint when the format named by --format is not the one detected in the first log."""
    from escalation.estimators.records import InputError, detect_format

    first = next((p for p in records if str(p) != "-" and p.is_file()), None)
    if first is None:
        return None
    try:
        detected = detect_format(first)
    except InputError:
        return None
    if detected == given:
        return None
    return (f"hint: {first} reads as {detected} when the format is detected: try --format {detected}, or leave "
            "--format out")


def _check_paths(records: list[Path], out: Optional[Path], *, figures: bool, no_report: bool,
                 inputs: list[Optional[Path]]) -> None:
    """Refuse a missing log, --figures with --no-report, and an --out folder that would overwrite an input."""
    from escalation.estimators.records import InputError, check_out_dir

    for path in records:  # the logs first: a missing log is the likelier mistake
        if str(path) != "-" and not path.exists():
            flag = " (a flag such as --json takes no value: write it alone)" \
                if str(path).lower() in ("true", "false", "yes", "no", "1", "0") else ""
            raise InputError(f"no such file or folder{flag}", source=str(path))
    if figures and no_report:
        raise InputError("--figures and --no-report cannot go together: the figures are drawn with report.html")
    if out is not None:
        from escalation.integrations.traces import EVENTS_FILE

        check_out_dir(out, [*records, *inputs],
                      writes=("conversations.jsonl", "summary.json", "judges.jsonl", EVENTS_FILE,
                              *report_files(SCORE_FIGURES)))


def _check_emit(records: list[Path], *, format: str, out: Optional[Path], limits) -> None:
    """Refuse --emit otel without --out, or with logs that are not OTLP traces (the events need their span ids):
    the format is detected as the scoring would, before anything is read or written."""
    from escalation.estimators.records import InputError, detect_format, log_inputs

    if out is None:
        raise InputError("otel writes DIR/evaluations.otlp.jsonl: give --out DIR", field="--emit")
    found = format
    if format == "auto":
        if any(str(p) == "-" for p in records):
            raise InputError("otel needs traces: give --format otel to read them from standard input", field="--emit")
        with log_inputs(records) as inputs:
            found = next((f for f in (detect_format(log.path, limits.document) for log in inputs.logs) if f != "otel"),
                         "otel")
    if found != "otel":
        raise InputError(f"otel puts the results back onto the spans of OTLP traces (--format otel); the log is "
                         f"{found}", field="--emit")


def _check_extras(mode: Mode, *, validation: Optional[Path], instructions: Optional[Path],
                  judge_model: Optional[str]) -> None:
    """Refuse --validation without --mode text, and --instructions without --judge-model."""
    from escalation.estimators.records import InputError

    if validation is not None and mode is not Mode.text:
        raise InputError("corrects the figures of --mode text (the tool record needs no correction): add "
                         "--mode text, or leave --validation out", field="--validation")
    if instructions is not None and judge_model is None:
        raise InputError("--instructions is read by the judges: give --judge-model MODEL too")


class _Finish:
    """The ``finish`` of :func:`score_file`: makes the summary.json of the run, and keeps what it made in
    ``finished``: the summary as printed (``printed``), its mode-B correction, the judges' lines and their
    failure. ``bar`` and ``collecting`` are the progress bar and whether the cyclic collector was on."""

    def __init__(self, checked, validation: Optional[Path], judging, out: Optional[Path]) -> None:
        self.checked, self.validation, self.judging, self.out = checked, validation, judging, out
        self.finished: dict[str, Any] = {}
        self.bar: Any = None
        self.collecting = False

    def __call__(self, done) -> dict:
        """The summary.json of the run, written once by the scoring: the summary with the mode-B correction
        of --validation, and judges.jsonl (written first) named in its provenance."""
        finished, checked = self.finished, self.checked
        data = done.to_dict()
        if checked is not None:
            from escalation.estimators.judges import correct_text_summary

            finished["correction"] = correct_text_summary(done, checked[0], source=str(self.validation),
                                                          format=checked[1])
            data["validation"] = finished["correction"].to_dict()
        finished["printed"] = data
        if self.judging is None:
            return data
        from escalation.estimators.records import write_atomic

        from ._console import Stop
        from ._judging import run_judges

        self.bar.stop()  # every conversation is scored: the judges' run is long, with no bar of its own
        if self.collecting:  # and makes objects of its own: the collector on again
            gc.enable()
        try:
            finished["lines"] = run_judges(self.judging, written=True)
        except Stop as failure:  # the scores are written still; the failure is raised once they are printed
            finished["failure"] = failure
            return data
        import orjson
        out = self.out
        assert out is not None  # score_file calls finish() only with an out_dir: --out
        written = write_atomic(out / "judges.jsonl", chunks=(orjson.dumps(line) + b"\n" for line in finished["lines"]))
        outputs = {**data["provenance"]["outputs"], "judges.jsonl": written}  # named by the summary.json after it
        return {**data, "provenance": {**data["provenance"], "outputs": outputs}}


def _score_logs(records: list[Path], policy_obj, finish: _Finish, *, out: Optional[Path], report, **options):
    """``score_file`` of the logs into --out (``(summary, format used)``), with a progress bar on a terminal
    and the cyclic collector paused; then removes an earlier run's files that the summary does not name."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    from escalation.estimators.metric import score_file
    from escalation.estimators.records import output_folder
    from escalation.integrations.traces import EVENTS_FILE

    size = sum(os.path.getsize(p) for p in records if p.is_file()) or None
    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("scoring", total=size)
        # Parsed JSON holds no reference cycles, and the cyclic collector, set off again and again by
        # millions of new dicts, took 40% of a run through the reference reader (benchmarks/score.py):
        # paused for the command, never inside the library.
        finish.bar, finish.collecting = bar, gc.isenabled()
        gc.disable()
        try:
            with output_folder(out) if out is not None else nullcontext():
                summary, used = score_file(records, policy_obj, out_dir=out, report=report, finish=finish,
                                           progress=lambda n: bar.advance(task, n), **options)
            if out is not None:  # an earlier run's, which the summary just written does not name
                written = {*(() if report is None else report.names),
                           *(("judges.jsonl",) if "lines" in finish.finished else ())}
                for name in ("judges.jsonl", EVENTS_FILE, *report_files(SCORE_FIGURES)):
                    if name not in written:
                        (out / name).unlink(missing_ok=True)
        finally:
            if finish.collecting:
                gc.enable()
    return summary, used


def _printed_summary(summary, finish: _Finish):
    """The summary as printed and its mode-B correction: those finish() made, or with no --out (no
    summary.json) the same made here."""
    data, correction = finish.finished.get("printed"), finish.finished.get("correction")
    if data is None:  # no --out: no summary.json, the same summary printed
        data = summary.to_dict()
        if finish.checked is not None:
            from escalation.estimators.judges import correct_text_summary

            checked = finish.checked
            correction = correct_text_summary(summary, checked[0], source=str(finish.validation), format=checked[1])
            data["validation"] = correction.to_dict()
    return data, correction


def _print_scores(data: dict, summary, correction, *, records: list[Path], used: str, out: Optional[Path],
                  as_json: bool, report: tuple[str, ...], format: str) -> None:
    """The scores: the table (with the mode-B correction) or summary.json with --json on standard output; the
    skipped files, the input warnings and a hint on the format on standard error."""
    from escalation.estimators.records import LOG_SUFFIXES

    from ._console import SENTENCE_LIMIT, plain

    for skipped in data["provenance"]["skipped"]:
        typer.echo(f"note: left out {plain(skipped, None)} (not a log file: a log ends in {', '.join(LOG_SUFFIXES)})",
                   err=True)
    notes = summary.input_warnings  # SPEC section 7: the result cannot be what the user meant
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        print_summary(data, records=", ".join("standard input" if str(p) == "-" else str(p) for p in records),
                      fmt=used, out_dir=out, apart=notes, report=report)
        if correction is not None:
            from ._console import console
            from ._validation import print_validation
            print_validation(correction, console())
    for note in notes:
        typer.echo(f"warning: {plain(note, SENTENCE_LIMIT)}", err=True)
    if format != "auto" and summary.tally.calls == 0 and summary.tally.with_record:
        hint = _format_hint(records, format)
        if hint:
            typer.echo(plain(hint, None), err=True)


def _print_judges(judging, finish: _Finish, *, out: Optional[Path], as_json: bool) -> None:
    """The judges' section (their run, with no --out), or the failure of their run, raised once the scores are
    printed."""
    from ._judging import print_judges, run_judges

    if "failure" in finish.finished:
        raise finish.finished["failure"]
    lines = finish.finished["lines"] if out is not None else run_judges(judging, written=False)
    print_judges(lines, judging, path=None if out is None else out / "judges.jsonl", err=as_json)


def score(
    ctx: typer.Context,
    records: list[Path] = typer.Argument(None, metavar="LOG", help="The logs: files (canonical JSONL, SPEC "
                                         "section 6, or a supported log format), folders of logs (every .json, "
                                         ".jsonl, .ndjson and .eval file in it, in name order; a tau2-bench "
                                         "results folder is one log), or - for standard input. Several logs are "
                                         "scored together as one input of one format. None with --phoenix."),
    policy: Path = typer.Option(..., "--policy", metavar="FILE", help="Policy file (JSON or TOML): escalation_tools, "
                                "read_only_tools, action_tools, approval_tools, gated_tools."),
    format: str = typer.Option("auto", "--format", metavar="NAME", help=f"Input format: {', '.join(FORMATS)}."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for conversations.jsonl (one line "
                                       "per input conversation) and summary.json, and report.html (its figures, "
                                       "causes and every conversation, one page that opens from disk)."),
    rho: Optional[float] = typer.Option(None, "--rho", min=0.0, max=1.0, metavar="RHO",
                                        help="Fix the intra-scenario correlation instead of estimating it."),
    confidence: float = typer.Option(0.95, "--confidence", metavar="LEVEL",
                                     help="Two-sided confidence level of the intervals."),
    mode: Mode = typer.Option(Mode.record, "--mode", help="record: the tool record decides (mode A). text: a phrase "
                              "judge reads the assistant's text (mode B, SPEC section 4): p_u is then a lower "
                              "bound when every hand-off is stated (a silent transfer reads as none), p_o and pi are "
                              "bounded neither way; --validation corrects them."),
    labels: Optional[Path] = typer.Option(None, "--labels", metavar="FILE", help="CSV or JSON mapping "
                                          "conversation_id or case_id to ESC/ACT, for logs that carry no label."),
    plan: Optional[Path] = typer.Option(None, "--plan", metavar="FILE", help="CSV case_id,label,replicas of the "
                                        "planned scenarios: absent ones are reported as missing."),
    approval_escalation: bool = typer.Option(False, "--approval-escalation", help="inspect logs: count an "
                                             "ApprovalEvent with decision 'escalate' as an escalation call."),
    interval: Interval = typer.Option("auto", "--interval", metavar="METHOD", help=INTERVAL_HELP),
    seed: int = typer.Option(0, "--seed", min=0, metavar="SEED", help="Seed of the bootstrap intervals' resamples "
                             "(recorded in summary.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json to stdout instead of the table."),
    report_timelines: int = typer.Option(TIMELINES, "--report-timelines", min=0, metavar="N", help="With --out: "
                                         "report.html lists every conversation, and holds the timeline (turns, "
                                         "texts, calls) of the first N in input order, read from the logs a "
                                         "second time that stops there; 0: none, and no second read."),
    no_report: bool = typer.Option(False, "--no-report", help="With --out: do not write report.html (no second "
                                   "read of the logs for its timelines)."),
    figures: bool = typer.Option(False, "--figures", help="With --out: also draw the figures rates and "
                                 "scenario_errors as PNG and PDF files for a paper (imports matplotlib: about a "
                                 "second more)."),
    emit: Optional[Emit] = typer.Option(None, "--emit", metavar="FORMAT", help=EMIT_HELP),
    phoenix: Optional[str] = typer.Option(None, "--phoenix", metavar="URL", help=PHOENIX_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="NAME", help="With --phoenix: the project "
                                          "whose traces are scored (its name or id)."),
    since: Optional[str] = typer.Option(None, "--since", metavar="TIME", help=SINCE_HELP),
    group_by: GroupBy = typer.Option(GroupBy.trace, "--group-by", help=GROUP_BY_HELP),
    chunk_size: int = typer.Option(50_000, "--chunk-size", min=1, metavar="N",
                                   help="Conversations scored at a time (memory bound)."),
    backend: Backend = typer.Option(Backend.local, "--backend", help=BACKEND_HELP),
    scheduler: Optional[str] = scheduler_option(),
    n_jobs: int = typer.Option(-1, "--n-jobs", metavar="N", help="With --backend dask and no --scheduler: the "
                               "workers of the local Dask cluster (-1: one a core)."),
    validation: Optional[Path] = typer.Option(None, "--validation", metavar="FILE", help=VALIDATION_HELP),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", metavar="MODEL", help=JUDGE_MODEL_HELP),
    judge_timeout: float = typer.Option(120.0, "--judge-timeout", min=0.001, metavar="SECONDS",
                                        help=JUDGE_TIMEOUT_HELP),
    judge_time_limit: Optional[float] = typer.Option(None, "--judge-time-limit", min=0.001, metavar="SECONDS",
                                                     help="With --judge-model: the most seconds all the judges' "
                                                     "questions may take together (default: no limit)."),
    instructions: Optional[Path] = typer.Option(None, "--instructions", metavar="FILE", help=INSTRUCTIONS_HELP),
    max_member_bytes: MaxMemberBytes = MEMBER_DEFAULT,
    max_archive_bytes: MaxArchiveBytes = ARCHIVE_DEFAULT,
    max_document_bytes: MaxDocumentBytes = DOCUMENT_DEFAULT,
) -> None:
    """Score assistant logs: under-escalation, over-escalation and the paired figure pi, with
    Wilson intervals and the Kish design effect (SPEC sections 3 to 7), or another interval (--interval).

    Example: escalation score examples/data/tau-bench/gpt-4o-airline.json
    --policy examples/tau-bench-airline.policy.json --out results/tau-bench

    With judges: escalation score LOG --policy POLICY --out DIR --judge-model openai/gpt-4o-mini
    --instructions rules.txt

    Exit code 2: unreadable input or a bad policy (nothing written). Exit code 3: no conversation
    was evaluated, or (mode record) the evaluated ones hold no tool call at all, as with a wrong --format
    (both files are still written, and each reason is printed with what fixes it).
    """
    from escalation.estimators.records import describe_file, load_labels, load_plan, load_policy
    from escalation.estimators.stats import check_choice, check_level

    check_level("confidence", confidence)  # before the logs are read
    check_choice("format", format, FORMATS)
    limits = archive_limits(max_member_bytes, max_archive_bytes, max_document_bytes)
    records = records or []
    cluster_arguments(backend, scheduler, n_jobs=n_jobs, seed=seed, source="--backend")
    since_time = _check_phoenix(ctx, records, phoenix=phoenix, project=project, since=since, format=format, emit=emit)
    _check_paths(records, out, figures=figures, no_report=no_report,
                 inputs=[policy, labels, plan, validation, instructions])
    if emit is not None:
        _check_emit(records, format=format, out=out, limits=limits)
    policy_obj = load_policy(policy)
    label_obj = load_labels(labels) if labels is not None else None
    plan_df = load_plan(plan) if plan is not None else None
    _check_extras(mode, validation=validation, instructions=instructions, judge_model=judge_model)
    traces = None
    if phoenix is not None and project is not None:  # read before anything is written: unreachable exits 2
        traces = _read_phoenix(ctx, phoenix, project, since_time)
        records, format = [traces.path], "jsonl"
    judging = None
    if judge_model is not None:  # checked before anything is scored or written
        from ._judging import prepare_judges

        judging = prepare_judges(records, judge_model, instructions, format=format, labels=label_obj,
                                  timeout=judge_timeout, time_limit=judge_time_limit,
                                  policy=policy_obj, approval_escalation=approval_escalation, mode=mode.value,
                                  limits=limits, group_by=group_by.value)
    checked = None
    if validation is not None:  # read before anything is written: a bad file exits 2 with no output
        from escalation.estimators.judges import read_validation

        checked = read_validation(validation, policy_obj, format=format, labels=label_obj,
                                  approval_escalation=approval_escalation, limits=limits)
    facts = {"validation": describe_file(validation), "labels": describe_file(labels), "plan": describe_file(plan),
             "command": {"judge_model": judge_model, "instructions": describe_file(instructions),
                         "chunk_size": chunk_size, "group_by": group_by.value}}
    if traces is not None:
        facts["phoenix"] = traces.provenance()
    finish = _Finish(checked, validation, judging, out)
    report = None
    if out is not None and not no_report:
        from ._report import ScoreReport
        report = ScoreReport(policy_obj, mode.value, report_timelines, figures=figures,
                             sources=", ".join("standard input" if str(p) == "-" else str(p) for p in records))
    scoring: Any = report
    if emit is not None:
        from escalation.integrations.traces import OtelEvents
        scoring = OtelEvents(policy_obj, mode.value, beside=report)
    if traces is not None:
        from escalation.integrations.phoenix import PhoenixAnnotations
        scoring = PhoenixAnnotations(traces, policy_obj, mode.value, beside=scoring)
    summary, used = _score_logs(records, policy_obj, finish, out=out, report=scoring, format=format,
                                labels=label_obj, mode=mode.value, confidence=confidence, rho=rho, plan=plan_df,
                                chunk_size=chunk_size, approval_escalation=approval_escalation,
                                interval=interval.value, seed=seed, provenance=facts, limits=limits,
                                group_by=group_by.value, backend=backend.value, scheduler=scheduler, n_jobs=n_jobs)
    data, correction = _printed_summary(summary, finish)
    _print_scores(data, summary, correction, records=records, used=used, out=out, as_json=as_json,
                  report=() if report is None else report.names, format=format)
    if emit is not None and out is not None and not as_json:
        from escalation.integrations.traces import EVENTS_FILE

        from ._console import plain
        typer.echo(f"evaluation events (OTLP JSON): {plain(out / EVENTS_FILE, None)}")
    if traces is not None:
        from ._console import plain
        typer.echo(plain(f"Phoenix: {scoring.send()} span annotations on {len(traces.conversations)} of the "
                         f"{traces.traces} traces of project {traces.project} at {traces.url}", None), err=as_json)
    if judging is not None:
        _print_judges(judging, finish, out=out, as_json=as_json)
    if not summary.scored:
        raise typer.Exit(NOTHING_EVALUATED)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    app.command("score")(score)
