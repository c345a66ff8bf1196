"""The ``escalation`` command line (SPEC section 7)."""
from __future__ import annotations

import importlib
import sys

import typer

from escalation import __version__
from escalation.estimators import InputError

CONTEXT = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="escalation",
    help="Measure whether a tool-using AI assistant passes to a person the cases its policy "
         "reserves for a person (under- and over-escalation, the paired figure pi), and study "
         "how well that measurement works.\n\n"
         "\b\nStart here:\n"
         "  escalation policy init LOG --out policy.toml   (a draft of the tool lists)\n"
         "  escalation score LOG --policy policy.toml --out results/\n"
         "  escalation plan --p 0.1 --half-width 0.05 --rho 0.1 --replicas 10\n\n"
         "Each command's -h lists its options, with an example.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
    rich_markup_mode=None,
)
study_app = typer.Typer(help="Monte Carlo studies of the measurement. Each takes --out DIR, --smoke, --nsim N, "
                             "--seed SEED, --n-jobs N, --force and --backend; a stopped study resumes in its DIR.",
                        no_args_is_help=True, context_settings=CONTEXT, rich_markup_mode=None)
app.add_typer(study_app, name="study")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"escalation {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                               help="Print the version and exit.")) -> None:
    """Measure whether a tool-using AI assistant passes to a person the cases its policy reserves for a person."""

_COMMAND_MODULES = (
    "score",
    "policy",
    "plan",
    "compare",
    "leaderboard",
    "suite",
    "simulate",
    "study_coverage",
    "study_sample_size",
    "study_judges",
    "study_differences",
    "reproduce",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"escalation.commands.{_name}").register(app, study_app)


def main() -> None:
    """Entry point: bad input ends with a one-line message and exit code 2, never a traceback."""
    try:
        app()  # click's standalone mode prints usage errors and exits 2 itself
    except InputError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
