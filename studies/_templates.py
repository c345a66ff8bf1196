"""The prose of the reports: Jinja2 templates in ``studies/templates``, rendered by :func:`render`."""
from __future__ import annotations

import math
from pathlib import Path

import jinja2

__all__ = ["render", "fixed"]

_ENVIRONMENT = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                  autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


def fixed(value, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``n/a`` for None or NaN (the numbers of the reports' prose)."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def render(name: str, **context) -> str:
    """The template ``name`` filled with ``context`` (an undefined name is an error, not an empty string)."""
    return _ENVIRONMENT.get_template(name).render(f=fixed, **context)
