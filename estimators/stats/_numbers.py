"""Undefined numbers: NaN in arrays, null in JSON, ``n/a`` in text for a person, never 0 or 1; counts
with their noun."""
from __future__ import annotations

import math
import numbers

__all__ = ["nan_to_none", "format_number", "counted"]

#: How text for a person (terminal tables, Markdown, HTML) writes an undefined number.
_UNDEFINED = "n/a"


def nan_to_none(x) -> float | None:
    """``x`` as a float, or None where it is undefined (None or NaN): JSON's null.

    Examples
    --------
    >>> nan_to_none(float("nan")) is None, nan_to_none(0.25)
    (True, 0.25)
    """
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def format_number(value, digits: int = 3, *, sign: bool = False, spec: str | None = None) -> str:
    """``value`` as text for a person: ``digits`` decimals (a ``+`` before a positive one with ``sign``),
    or ``format(value, spec)`` when ``spec`` is given; ``n/a`` where it is undefined (None or NaN).

    The one spelling of an undefined number in the terminal, Markdown and HTML outputs; JSON writes
    null (:func:`nan_to_none`) and CSV an empty cell.

    Examples
    --------
    >>> format_number(0.25), format_number(0.25, 1, sign=True), format_number(float("nan")), format_number(None)
    ('0.250', '+0.2', 'n/a', 'n/a')
    >>> format_number(1234.5, spec=",.0f")
    '1,234'
    """
    if value is None or (isinstance(value, numbers.Real) and math.isnan(value)):
        return _UNDEFINED
    if spec is None:
        spec = f"{'+' if sign else ''}.{int(digits)}f"
    return format(value, spec)


def counted(count, word: str, plural: str | None = None) -> str:
    """``count`` with its noun, singular for one: ``1 conversation``, ``2,000 conversations``, ``0 cases``.

    Parameters
    ----------
    count : int
        Written with thousands separators.
    word : str
        The noun for one.
    plural : str, optional
        The noun for any other count (default ``word + "s"``).

    Examples
    --------
    >>> counted(1, "case"), counted(2000, "conversation"), counted(2, "reply", "replies")
    ('1 case', '2,000 conversations', '2 replies')
    """
    count = int(count)
    return f"{count:,} {word if count == 1 else plural or word + 's'}"
