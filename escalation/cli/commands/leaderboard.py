"""``escalation leaderboard LOG...``: several models on the same scenarios, ranked, with the groups that cannot be
told apart."""
from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

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
from escalation.cli.commands._console import console as plain_console, json_text, plain, warning_line
from escalation.cli.commands.score import FORMATS, INTERVAL_HELP, Interval
from escalation.estimators.stats import format_number

#: The figures of a leaderboard, in the order of its tables (estimators.metric.FIGURES, without importing pandas).
FIGURES = ("p_u", "p_o", "pi", "p_a")

HELP = (
    "Rank models that ran the same scenarios: p_u, p_o, pi and p_a of each, every pairwise difference, and the "
    "groups that cannot be told apart.\n\n"
    "Each LOG is one model's run of the paired ESC/ACT scenarios (an inspect_ai .eval or .json log, or any format "
    "`escalation score` reads; or a folder of one model's logs, a run made in parts), scored as `escalation "
    "score` scores it: each model's figures and intervals are "
    "the ones `escalation score` prints for its log, and the differences between two models are the ones "
    "`escalation compare` prints for their two score folders (B minus A, A ranked above B). Models are ranked by "
    "pi, higher is better; ties by p_u, lower is better. p_a (lower is better) is the share of the conversations "
    "with a gated call whose approval was missing or broken; it does not rank, and the difference of two models' "
    "p_a rests on the conversations in which both made a gated call. Logs of different scenario sets are compared "
    "on the conversations they all share (by case, label and replica), and the output says what was left out.\n\n"
    "Groups: for each figure (one family each, p_a too), models that share a letter are not significantly "
    "different at 5% (1 - --confidence), familywise; models with no letter in common are. \"a\" marks the group "
    "of the best estimate. "
    "Example: letters a, ab, b mean that the first and the third model differ, and the second cannot be told "
    "apart from either. Each pair's difference interval is inverted to a p-value and Holm-adjusted over the pairs "
    "of models (Holm 1979); the letters follow the insert-absorb algorithm (Piepho 2004). Not significantly "
    "different does not mean equal: with few scenarios, two models can differ and still share a letter.\n\n"
    "Writes to --out: leaderboard.csv and leaderboard.md (one row per model), differences.csv and differences.md "
    "(every pair of models and figure, with both intervals, the Holm-adjusted p-value and the verdict), "
    "leaderboard.png / leaderboard.pdf, and report.html (the tables and the figure on one page that opens from "
    "disk).\n\n"
    "Example: escalation leaderboard runs/gpt-4o.eval runs/claude.eval runs/llama.eval --out leaderboard-results"
)


def _suite_policy() -> Path:
    """The policy of the project's suite (``escalation suite export`` writes the same file)."""
    from escalation.suite import suite_policy_path

    return Path(suite_policy_path())


def _log_name(log: Path, limits) -> str:
    """The model a LOG names: an inspect_ai log's ``eval.model``; for a folder, the one model its logs name;
    else the file's name without its suffix (the folder's name)."""
    from escalation.estimators.metric import log_model
    from escalation.estimators.records import InputError, log_inputs

    if not log.is_dir():
        return log_model(log, limits) or log.stem
    with log_inputs(log) as inputs:
        models = sorted({m for m in (log_model(i.path, limits) for i in inputs.logs if i.path.is_file()) if m})
    if len(models) > 1:
        raise InputError(f"its logs name {len(models)} models ({', '.join(models)}): a folder holds one model's "
                         "logs; give one folder or log per model", source=str(log))
    return models[0] if models else log.name


def _model_names(logs: List[Path], names: Optional[List[str]], limits) -> List[str]:
    """``--name`` once per LOG, else each log's model (:func:`_log_name`); unique."""
    from escalation.estimators.records import InputError

    if names:
        if len(names) != len(logs):
            raise InputError(f"give --name once per LOG, in the same order: {len(names)} names for {len(logs)} "
                             "logs", field="--name")
        if not all(name.strip() for name in names):
            raise InputError("a model name must not be empty", field="--name")
    else:
        names = [_log_name(log, limits) for log in logs]
    seen: dict[str, Path] = {}
    for name, log in zip(names, logs):
        if name in seen:
            raise InputError(f"two logs have the model name {name!r}: {seen[name]} and {log}; tell them apart "
                             "with --name, once per LOG", field="--name")
        seen[name] = log
    return names


def _figure_files(fig) -> dict[str, bytes]:
    """``leaderboard.png`` and ``.pdf``, drawn in memory before anything is written (the PDF without a
    creation date, so a rerun writes the same bytes)."""
    files = {}
    for suffix in ("png", "pdf"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=suffix, dpi=150, bbox_inches="tight",
                    metadata={"CreationDate": None} if suffix == "pdf" else None)
        files[f"leaderboard.{suffix}"] = buffer.getvalue()
    return files


def _estimate(value, ci) -> str:
    if value is None:
        return format_number(None)
    return f"{format_number(value)} ({format_number(ci[0])}, {format_number(ci[1])})"


def print_leaderboard(data: dict, *, out: Path) -> None:
    """The readable leaderboard of :meth:`Leaderboard.to_dict`, for a person."""
    from rich.table import Table

    from escalation.figures import counted

    console = plain_console(width=None if sys.stdout.isatty() else 200)  # not a terminal: wide, names whole
    level = f"{data['confidence']:.0%}"
    table = Table(title=f"Leaderboard ({counted(data['scenarios'], 'scenario')}; {level} intervals, "
                        f"{data['interval']}; letters: groups)", header_style="bold", show_edge=False)
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("model", overflow="fold")
    for figure in FIGURES:
        table.add_column(f"{figure} ({level} CI)", no_wrap=True)
    for column in ("n ESC", "n ACT", "pairs", "n gated", "scenarios"):
        table.add_column(column, justify="right", no_wrap=True)
    for model in data["models"]:
        cells = [str(model["rank"]), plain(model["model"])]
        cells += [f"{_estimate(model[f]['value'], model[f]['ci'])} {model[f]['groups']}" for f in FIGURES]
        cells += [str(model["p_u"]["n"]), str(model["p_o"]["n"]), str(model["pi"]["pairs"]), str(model["p_a"]["n"]),
                  str(model["p_u"]["scenarios"] + model["p_o"]["scenarios"])]
        table.add_row(*cells)
    console.print(table)
    console.print("Ranked by pi (higher is better), ties by p_u (lower is better); p_o, p_a: lower is better. p_a "
                  "rests on the n gated conversations with a gated call, its differences on those in which both "
                  "models made one. The letters after each figure (one family each): "
                  f"{plain(data['groups_rule'], None)}.")
    for figure in FIGURES:
        apart = [f"{plain(d['a'])} vs {plain(d['b'])} ({d['difference']:+.3f})" for d in data["differences"]
                 if d["metric"] == figure and d["verdict"] == "different"]
        console.print(f"{figure}: different (Holm, {1 - data['confidence']:.0%}): {', '.join(apart) or 'none'}")
    if data["interval"] == "auto":
        methods = {f: sorted({m[f]["interval"] for m in data["models"]}) for f in FIGURES}
        console.print("intervals (auto, each model's figure by its scenarios and replicas): "
                      + "; ".join(f"{f} {', '.join(m)}" for f, m in methods.items() if m)
                      + f"; differences: {plain(data['difference_reason'].removeprefix('auto: '), None)}")
    for warning in [*data["notes"], *data["warnings"]]:  # what was left out is a warning: the figures rest on less
        console.print(warning_line(warning))
    console.print(f"wrote {plain(out / 'leaderboard.csv', None)}, leaderboard.md, differences.csv, differences.md, "
                  "leaderboard.png and leaderboard.pdf")
    console.print(f"report: {plain(out / 'report.html', None)} (open it in a browser)")


def leaderboard(
    logs: List[Path] = typer.Argument(..., metavar="LOG", help="One log per model, or a folder of one model's "
                                      "logs (a run in several parts, scored together as score scores a folder), "
                                      "all of the same scenarios."),
    policy: Optional[Path] = typer.Option(None, "--policy", metavar="FILE", help="Policy file (JSON or TOML), "
                                          "the same for every log. Default: the project's suite policy."),
    format: str = typer.Option("auto", "--format", metavar="FORMAT",
                               help=f"Input format of every LOG: {', '.join(FORMATS)}."),
    names: Optional[List[str]] = typer.Option(None, "--name", metavar="NAME", help="A model's name, given once per "
                                              "LOG in the same order. Default: the inspect_ai log's eval.model, "
                                              "else the file name without its suffix."),
    out: Path = typer.Option(Path("leaderboard-results"), "--out", metavar="DIR", help="Folder for the tables and "
                             "the figure (created if missing)."),
    confidence: float = typer.Option(0.95, "--confidence", metavar="LEVEL", help="Level of every interval, in "
                                     "(0, 1); the groups are at familywise 1 - LEVEL."),
    interval: Interval = typer.Option("auto", "--interval", metavar="METHOD",
                                      help=INTERVAL_HELP + " For the differences, as "
                                      "in compare: auto takes Newcombe's interval with the narrowest limits that "
                                      "held at this many cases; a Wilson-type method gives the limits Newcombe's "
                                      "interval combines; a bootstrap method chooses the paired cluster bootstrap."),
    seed: int = typer.Option(0, "--seed", metavar="SEED", help="Seed (>= 0) of the bootstrap resamples (each "
                             "model's and each pair's)."),
    allow_errors: bool = typer.Option(False, "--allow-errors", help="Rank runs in which the harness recorded "
                                      "failures (run_error: an inspect_ai sample with an error): the failed "
                                      "conversations are left out of every model and named. Without it, such a "
                                      "log is refused."),
    as_json: bool = typer.Option(False, "--json", help="Print the leaderboard as one JSON object instead of "
                                 "the table."),
    max_member_bytes: MaxMemberBytes = MEMBER_DEFAULT,
    max_archive_bytes: MaxArchiveBytes = ARCHIVE_DEFAULT,
    max_document_bytes: MaxDocumentBytes = DOCUMENT_DEFAULT,
) -> None:
    """Rank models run on the same scenarios, with their differences and groups (the help text is :data:`HELP`)."""
    from escalation import __version__
    from escalation.estimators.metric import leaderboard as rank, score_file
    from escalation.estimators.records import InputError, check_out_dir, load_policy, read_scored, write_files
    from escalation.estimators.stats import check_choice, check_count, check_level
    from escalation.figures import plot_leaderboard, study_page

    check_level("confidence", confidence)  # before the logs are scored
    check_choice("format", format, FORMATS)
    check_count("seed", seed, 0)
    limits = archive_limits(max_member_bytes, max_archive_bytes, max_document_bytes)
    for log in logs:
        if not log.exists():
            raise InputError("no such file or folder", source=str(log))
    check_out_dir(out, (*logs, policy), writes=("leaderboard.csv", "leaderboard.md", "differences.csv",
                                                 "differences.md", "leaderboard.png", "leaderboard.pdf",
                                                 "report.html"))
    model_names = _model_names(logs, names, limits)
    policy_obj = load_policy(policy if policy is not None else _suite_policy())
    scored = {}
    with tempfile.TemporaryDirectory(prefix="escalation-leaderboard-") as tmp:
        for i, (name, log) in enumerate(zip(model_names, logs)):
            folder = Path(tmp) / str(i)
            score_file(log, policy_obj, format=format, confidence=confidence, interval=interval.value, seed=seed,
                       out_dir=folder, limits=limits)
            scored[name] = read_scored(folder)[0]
    board = rank(scored, confidence=confidence, interval=interval.value, seed=seed,
                 sources={name: str(log) for name, log in zip(model_names, logs)}, allow_errors=allow_errors)
    data = board.to_dict()
    files = {"leaderboard.csv": board.to_frame().to_csv(index=False), "leaderboard.md": board.to_markdown(),
             "differences.csv": board.differences_frame().to_csv(index=False),
             "differences.md": board.differences_markdown(),
             **_figure_files(plot_leaderboard(board.to_frame(), confidence=confidence))}
    # the page: both Markdown tables and the figure, one file that opens from disk and fetches nothing
    files["report.html"] = study_page(f"{files['leaderboard.md']}\n![leaderboard](leaderboard.png)\n\n"
                                      f"{files['differences.md']}", title="Leaderboard",
                                      figures={"leaderboard.png": files["leaderboard.png"]}, tables={}, smoke=False,
                                      what=f"A leaderboard of escalation {__version__}: leaderboard.md, "
                                      "differences.md and the figure of its run.")
    write_files(out, files)
    if as_json:
        typer.echo(json_text(data))
    else:
        print_leaderboard(data, out=out)



def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation leaderboard`` to the command line."""
    app.command("leaderboard", help=HELP, short_help="Rank models run on the same scenarios, with their groups.")(
        leaderboard)
