"""The ``escalation`` command line (SPEC section 7)."""
from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

import typer
from typer.core import TyperArgument, TyperGroup

from escalation import __version__
from escalation.cli.commands._console import Stop, plain
from escalation.estimators.records import InputError

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _argument_help_record(self: TyperArgument, ctx):
    """typer's help line of an argument, where one that takes several values reads ``LOG...`` (as its usage
    line does) instead of typer's ``LOG <list[Path]>``."""
    record = _typer_argument_help_record(self, ctx)
    if record is None or self.nargs == 1:
        return record
    name, text = record
    shown = self.display_type_rich(ctx)
    if shown and name.endswith(f" {shown}"):
        name = name[:-len(shown) - 1]
    return (name if name.endswith("...") else f"{name}..."), text


_typer_argument_help_record = TyperArgument.get_help_record
TyperArgument.get_help_record = _argument_help_record  # type: ignore[method-assign]

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
    "gate",
    "leaderboard",
    "capacity",
    "suite",
    "simulate",
    "study",
    "reproduce",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"escalation.cli.commands.{_name}").register(app, study_app)


def _commands(typer_app: typer.Typer,
              path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Callable[..., Any]]]:
    """``(path, callback)`` of every command of ``typer_app`` and of its groups: ``(("plan",), plan)``."""
    for info in typer_app.registered_commands:
        callback = info.callback
        assert callback is not None  # ``Typer.command()`` registers the function it decorates
        yield (*path, info.name or callback.__name__.replace("_", "-")), callback
    for group in typer_app.registered_groups:
        assert group.typer_instance is not None  # ``Typer.add_typer()`` takes the group's Typer
        yield from _commands(group.typer_instance, (*path, cast(str, group.name)))  # every group is named


def flag_table() -> dict[tuple[str, ...], dict[str, str]]:
    """The one table of flags: for each command (its path, ``("study", "coverage")``), each parameter's name
    and the flag that sets it (``{"half_width": "--half-width"}``), read from the command's click
    parameters. A command module names in ``PARAMETER_NAMES`` the library parameters its own parameters
    are passed to under another name (``{"method": "interval"}``: ``interval`` is given as ``method=``)."""
    root = typer.main.get_command(app)
    table: dict[tuple[str, ...], dict[str, str]] = {}
    for path, callback in _commands(app):
        command = root
        for name in path:
            command = cast(TyperGroup, command).commands[name]  # every name but the last is a group
        flags = {param.name: max(param.opts, key=len) for param in command.params
                 if getattr(param, "param_type_name", None) == "option" and param.opts}
        renamed = getattr(sys.modules.get(callback.__module__), "PARAMETER_NAMES", {})
        table[path] = {**{library: flags[own] for library, own in renamed.items() if own in flags}, **flags}
    return table


def _running_command(err: BaseException) -> tuple[str, ...] | None:
    """The path of the command whose function ``err`` went through (read from its traceback), or None."""
    codes = {callback.__code__: path for path, callback in _commands(app)}
    tb, found = err.__traceback__, None
    while tb is not None:
        found = codes.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found


def flagged(err: ValueError) -> str:
    """The message of ``err`` with each parameter it names (``err.parameters``: `` `half_width` ``) named
    by the flag of the running command that sets it (``--half-width``); `` `scenarios`=3 `` becomes
    ``--scenarios 3``."""
    message = str(err)
    path = _running_command(err)
    flags = flag_table().get(path, {}) if path is not None else {}
    for name in getattr(err, "parameters", ()):
        flag = flags.get(name)
        if flag is not None:
            message = message.replace(f"`{name}`=", f"{flag} ").replace(f"`{name}`", flag)
    return message


class _Interrupted(BaseException):
    """Ctrl-C or a kill (SIGTERM): unwinds like KeyboardInterrupt, so the run removes what it created, but
    reaches :func:`main` (click turns a KeyboardInterrupt into a silent exit 130)."""


def _interrupt(signum, frame) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def _stdout(*, closed: bool):
    """What file descriptor 1 is (device and inode), to tell when a closed pipe was replaced by devnull: on EPIPE,
    rich (``Console.on_broken_pipe``) and click (``PacifyFlushWrapper``) put devnull there and exit 1.
    ``closed`` also counts click's wrapper as a change."""
    if closed and type(sys.stdout).__name__ == "PacifyFlushWrapper":  # by name: click 8.5 deprecates the class
        return None
    try:
        found = os.fstat(1)
    except OSError:
        return None
    return found.st_dev, found.st_ino


#: Exit status when the reader of standard output closed it early: a shell's status of a process ended by
#: SIGPIPE (128 + 13), as ``yes | head -1`` gives, so that ``set -o pipefail`` sees it.
STDOUT_CLOSED = 141


def main() -> None:
    """Entry point: a failure that is not a bug ends with a one-line message and exit code 2, never a
    traceback: bad input (:class:`InputError`), a file that cannot be read or written (an
    :class:`OSError`: the path and the system's reason, e.g. ``No space left on device``) and an
    interrupted run (Ctrl-C, SIGTERM). Each removes what the run created before the message. A standard
    output that its reader closed early (``| head -1``) ends with a note and :data:`STDOUT_CLOSED`.

    A :class:`ValueError` of a refused argument names the parameter; the message names the command's flag
    instead (:func:`flagged`). A command that stops raises :class:`~escalation.cli.commands._console.Stop`
    with its exit status; no command prints and exits on its own."""
    stdout = _stdout(closed=False)
    signals = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    previous = {number: signal.signal(number, _interrupt) for number in signals}
    try:
        app()  # click's standalone mode prints usage errors and exits 2 itself
    except SystemExit as done:
        if done.code == 1 and _stdout(closed=True) != stdout:  # rich and click redirect a closed pipe to devnull
            typer.echo("note: the reader of standard output closed it early (| head?); everything this run "
                       "writes to files was written", err=True)
            sys.exit(STDOUT_CLOSED)
        raise
    except InputError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except ValueError as err:
        typer.echo(f"error: {plain(' '.join(flagged(err).split()), None)}", err=True)
        sys.exit(2)
    except Stop as err:
        typer.echo(f"error: {plain(' '.join(str(err).split()), None)}", err=True)
        sys.exit(err.code)
    except OSError as err:
        where = err.filename if err.filename is not None else None
        typer.echo(f"error: {InputError(err.strerror or str(err), source=where and str(where))}", err=True)
        sys.exit(2)
    except _Interrupted as err:
        typer.echo(f"error: interrupted ({err}); the files this run had begun are removed (a study keeps its "
                   "finished cells: run it again to resume)", err=True)
        sys.exit(2)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


if __name__ == "__main__":
    main()
