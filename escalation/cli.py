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
         "how well that measurement works.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
)
study_app = typer.Typer(help="Monte Carlo studies of the measurement (each has --smoke, --seed, --n-jobs, --out).",
                        no_args_is_help=True, context_settings=CONTEXT)
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
