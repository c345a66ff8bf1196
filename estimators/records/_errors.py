"""The one error type for bad input: it names the file, the line and the field."""
from __future__ import annotations

__all__ = ["InputError", "shown"]


class InputError(ValueError):
    """Input that cannot be scored: a bad record file, policy, labels or plan file.

    The message is one line, ``FILE:LINE: field 'F': what is wrong``, so the command line
    prints it as it is and exits with code 2.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.source, self.line, self.field, self.detail = source, line, field, message
        where = source or ""
        if source and line is not None:
            where += f":{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(_one_line(f"{where}: {what}{message}" if where else f"{what}{message}"))


def _one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped (``\\n``, ``\\ud800``), as the terminal
    shows text from the input (:func:`~estimators.records._untrusted.terminal_text`)."""
    if text.isascii() and text.isprintable():  # the common case; and importing InputError imports nothing more
        return text
    from ._untrusted import terminal_text

    return terminal_text(text, None)


def shown(value, limit: int = 60) -> str:
    """A value read from an input as an error message shows it: the ``repr`` of a scalar, cut
    after ``limit`` characters; ``a list`` or ``an object`` for a container, whose ``repr`` could be
    of any size, or nest deeper than ``repr`` can go."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
