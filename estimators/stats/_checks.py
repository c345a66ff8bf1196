"""The validators of arguments: one place that says what a probability, a level, a count or a choice is.

Every public function of the package that takes such an argument calls one of these once, at entry. A
refused value raises :class:`ValueError` whose message names the parameter in backticks and quotes the
value, in scipy's style::

    `confidence` must lie strictly between 0 and 1; got 1.5

The error carries the names it mentions in ``parameters`` (a tuple), so that a command line can put
its own flag in place of each, by name (``--confidence``), without reading the message. Problems of
files (a file, a line, a field) are :class:`~escalation.estimators.records.InputError`, not these.
"""
from __future__ import annotations

import math
import numbers

import numpy as np


def shown_value(value) -> str:
    """A value as a message quotes it: ``2`` for 2.0, ``1.5``, ``0``, ``'wald'``."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        short = f"{value:g}"
        return short if math.isnan(value) or float(short) == value else repr(value)
    return repr(value)


def refuse(message: str, *parameters: str) -> ValueError:
    """The :class:`ValueError` of ``message``, which names each of ``parameters`` between backquotes; the
    names are kept in its ``parameters`` attribute. Raise it: ``raise refuse(...)``."""
    error = ValueError(message)
    setattr(error, "parameters", tuple(parameters))  # an attribute of this instance (ValueError declares none)
    return error


def _refuse(name: str, value, requirement: str) -> ValueError:
    return refuse(f"`{name}` must {requirement}; got {shown_value(value)}", name)


def _real(value) -> float | None:
    """``value`` as a float (``float(value)``), or None where it is none (None, a list)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def check_range(name: str, value, low: float, high: float, *, closed: str = "neither", note: str = "") -> float:
    """``value`` as a float, if it is a finite number in the interval from ``low`` to ``high``.

    ``closed`` says which ends belong to it: ``"neither"`` (``(low, high)``), ``"both"``, ``"low"`` or
    ``"high"``; an infinite ``high`` is never reached (``[0, inf)``). ``note`` follows the interval in the
    message (``" (a Wilson interval is never wider than 1)"``).
    """
    number = _real(value)
    closed_low, closed_high = closed in ("both", "low"), closed in ("both", "high")
    inside = number is not None and not math.isnan(number) and (
        (number >= low if closed_low else number > low) and (number <= high if closed_high else number < high))
    if not inside or (number is not None and math.isinf(number)):
        end = ")" if math.isinf(high) else ("]" if closed_high else ")")
        raise _refuse(name, value, f"lie in {'[' if closed_low else '('}{low:g}, {high:g}{end}{note}")
    assert number is not None  # inside
    return number


def check_probability(name: str, value, *, closed: str = "both") -> float:
    """``value`` as a float, if it is a probability: in ``[0, 1]`` (``closed="both"``, the default), or
    ``(0, 1)`` (``"neither"``), ``[0, 1)`` (``"low"``), ``(0, 1]`` (``"high"``)."""
    return check_range(name, value, 0.0, 1.0, closed=closed)


def check_level(name: str, value) -> float:
    """``value`` as a float, if it is a confidence level: strictly between 0 and 1."""
    number = _real(value)
    if number is None or not 0.0 < number < 1.0:
        raise _refuse(name, value, "lie strictly between 0 and 1")
    return number


def check_count(name: str, value, low: int = 1, high: int | None = None, *, whole_floats: bool = False,
                note: str = "") -> int:
    """``value`` as an int, if it is an integer from ``low`` to ``high`` (no bound when None).

    A bool is refused; a float is refused unless ``whole_floats`` and it is whole (``2.0``). ``note``
    follows the message's bound (``" (no evaluation runs more)"``).
    """
    whole = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not whole and whole_floats and isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        whole = float(value).is_integer()
    if not whole or int(value) < low:
        raise _refuse(name, value, f"be a whole number >= {low}")
    if high is not None and int(value) > high:
        raise _refuse(name, value, f"be at most {high:,}{note}")
    return int(value)


def check_choice(name: str, value, choices):
    """``value``, if it is one of ``choices`` (the message lists them in their order)."""
    try:
        known = value in choices
    except TypeError:  # an unhashable value
        known = False
    if not known:
        raise _refuse(name, value, f"be one of {', '.join(map(str, choices))}")
    return value
