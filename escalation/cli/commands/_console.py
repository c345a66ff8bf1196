"""Printing text that comes from the input (tool names, ids, labels, file and model names, warnings).

Such text is printed as it is: never read as rich markup (``[/bold]``, ``[link=...]``), ``:emoji:``
codes or terminal control (``\\x1b[2J``, ``\\r``, BEL, the right-to-left override ``\\u202e``, a
lone surrogate, which would stop the print with an encoding error). :func:`plain` shows every
character that is not printable escaped, as Python writes it in a string (``\\x1b``, ``\\u202e``),
and shortens a long value, its middle left out (the files a command writes keep it whole).

The commands print on :func:`console`, which reads no markup at all: rich's ``escape`` is not
enough (a backslash before ``[`` that opens no tag is dropped, so ``a\\[1]`` printed as ``a[1]``,
and a last backslash is doubled), so styles are given as :class:`rich.text.Text` spans, and the
commands' own markup through ``Text.from_markup`` on their own words. Rich's highlighter, which
colours numbers and paths, is off: its patterns take time quadratic in the length of a long word
(a 70,000-character tool name took 25 to 99 s to print). The time of a print is then linear in
what it prints (``benchmarks/console.py``).
"""
from __future__ import annotations

from typing import Optional

from escalation.estimators.records import BLANK_LETTERS, NAME_LIMIT, SENTENCE_LIMIT, terminal_text

__all__ = ["LIMIT", "NOT_A_TERMINAL", "SENTENCE_LIMIT", "Stop", "columns", "console", "json_text", "plain",
           "warning_line"]

class Stop(Exception):
    """A command stops with ``message`` and the exit status ``code``: raised by the command, printed by
    :func:`escalation.cli._main.main` as ``error: MESSAGE`` (one line), as every failure of a command is."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


#: Most characters of one value from the input (a name, an id) that a command prints.
LIMIT = NAME_LIMIT


def plain(value, limit: Optional[int] = LIMIT) -> str:
    """``value`` as plain one-line text: unprintable characters escaped, at most ``limit`` characters kept.

    The terminal's form of the one rule for text from the input
    (:func:`escalation.estimators.records.terminal_text`).

    Parameters
    ----------
    value : object
        Printed as ``str(value)``.
    limit : int or None
        Characters of ``value`` kept: a longer one keeps its first three quarters and its last
        quarter, with ``...(N characters in all)...`` between them. None keeps them all.

    Returns
    -------
    str
        Printable text (each escape stands for one character of ``value``), for ``typer.echo`` or
        :func:`console`. Its time is linear in ``limit``, whatever the length of ``value``.
    """
    return terminal_text(value, limit)


#: Columns of output that is not a terminal (a file, a pipe, a CI log) when ``COLUMNS`` does not say: wide
#: enough that no command's table wraps a model or tool name (rich's own default is 80).
NOT_A_TERMINAL = 200


def columns(*, err: bool = False, most: Optional[int] = None) -> int:
    """The columns to print in: a terminal's width (at most ``most``); when the stream is not a terminal,
    ``COLUMNS`` if it is set, else :data:`NOT_A_TERMINAL`, so that tables written to a file or a pipe
    are not wrapped at 80 columns.

    Parameters
    ----------
    err : bool
        Of standard error instead of standard output.
    most : int, optional
        The most columns on a terminal (prose that should not run across a wide window).
    """
    import os
    import shutil
    import sys

    stream = sys.stderr if err else sys.stdout
    given = os.environ.get("COLUMNS", "").strip()
    if given.isascii() and given.isdigit() and int(given) > 0:
        width = int(given)
    elif stream is not None and stream.isatty():
        width = shutil.get_terminal_size().columns
    else:
        return NOT_A_TERMINAL
    return width if most is None else min(width, most)


def console(*, err: bool = False, width: Optional[int] = None, most: Optional[int] = None):
    """A rich console that prints strings as they are: no markup, no highlighting, no ``:emoji:`` codes.

    Parameters
    ----------
    err : bool
        Print on standard error instead of standard output.
    width : int or None
        Columns; None: :func:`columns` (a terminal's width, at most ``most``; not a terminal:
        ``COLUMNS``, else :data:`NOT_A_TERMINAL`).
    most : int, optional
        With ``width`` None, the most columns on a terminal.
    """
    from rich.console import Console

    return Console(stderr=err, width=width if width is not None else columns(err=err, most=most), markup=False,
                   highlight=False, emoji=False)


def warning_line(text):
    """``warning: TEXT``, the word in yellow, ``text`` (a sentence with values from the input) plain."""
    from rich.text import Text

    return Text.assemble(("warning", "yellow"), ": ", plain(text, SENTENCE_LIMIT))


def json_text(data) -> str:
    """``data`` as indented JSON (orjson's, undefined as null) for ``--json``: the characters of its
    strings that are not printable (``\\u001b`` already, and DEL, C1 controls, ``\\u202e``...) as
    JSON escapes, so that the terminal shows them and valid JSON is kept."""
    import orjson

    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    if text.replace("\n", "").isprintable() and BLANK_LETTERS.isdisjoint(text):
        return text
    return "".join(c if (c.isprintable() and c not in BLANK_LETTERS) or c == "\n" else _json_escape(c)
                   for c in text)


def _json_escape(char: str) -> str:
    """``\\uXXXX`` of one character (a surrogate pair beyond the Basic Multilingual Plane)."""
    units = char.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
