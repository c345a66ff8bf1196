"""The prose of the reports: each study's Jinja2 template ``report.md.j2`` in its own subpackage
(``studies/coverage/report.md.j2``, ...), read as package data and rendered by :func:`render`.

The numbers of the prose go through a small set of filters, registered once here:

- ``fmt(spec)``: ``format(value, spec)``, exactly what ``f"{value:spec}"`` writes (``{{ x | fmt('.3f') }}``);
- ``fixed(digits=3, undefined="n/a")``: ``digits`` decimals, ``undefined`` for None or NaN (also the global ``f``).

Block tags on a line of their own leave no line behind (``trim_blocks``, ``lstrip_blocks``).
"""
from __future__ import annotations

import math
from importlib import resources

import jinja2

__all__ = ["render", "fixed", "fmt"]


def _source(name: str):
    """``study/file`` -> the text of ``file`` in the package ``escalation.studies.study`` (jinja2's loader)."""
    study, _, file = name.rpartition("/")
    text = resources.files(f"{__package__}.{study}").joinpath(file).read_text(encoding="utf-8")
    return text, None, lambda: True


_ENVIRONMENT = jinja2.Environment(loader=jinja2.FunctionLoader(_source), autoescape=False, keep_trailing_newline=True,
                                  trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def fixed(value, digits: int = 3, undefined: str = "n/a") -> str:
    """``value`` with ``digits`` decimals, ``undefined`` for None or NaN (the numbers of the reports' prose)."""
    return undefined if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def fmt(value, spec: str) -> str:
    """``value`` formatted by the format specification ``spec``: ``f"{value:spec}"``."""
    return format(value, spec)


_ENVIRONMENT.filters.update(fmt=fmt, fixed=fixed)


def render(name: str, **context) -> str:
    """The template ``name`` (``"<study>/report.md.j2"``) filled with ``context`` (an undefined name is an
    error, not an empty string)."""
    return _ENVIRONMENT.get_template(name).render(f=fixed, **context)
