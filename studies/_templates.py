"""The prose of the reports: each study's Jinja2 template ``report.md.j2`` in its own subpackage
(``studies/coverage/report.md.j2``, ...), read as package data and rendered by :func:`render`.

The numbers of the prose go through a small set of filters, registered once here:

- ``fmt(spec)``: ``format(value, spec)``, exactly what ``f"{value:spec}"`` writes (``{{ x | fmt('.3f') }}``);
- ``fixed(digits=3)``: ``digits`` decimals (also the global ``f``);

both through :func:`escalation.estimators.stats.format_number`, which writes ``n/a`` for None or NaN.

Block tags on a line of their own leave no line behind (``trim_blocks``, ``lstrip_blocks``).
"""
from __future__ import annotations

from importlib import resources

import jinja2

from escalation.estimators.stats import format_number

__all__ = ["render", "fixed", "fmt"]


def _source(name: str):
    """``study/file`` -> the text of ``file`` in the package ``escalation.studies.study`` (jinja2's loader)."""
    study, _, file = name.rpartition("/")
    text = resources.files(f"{__package__}.{study}").joinpath(file).read_text(encoding="utf-8")
    return text, None, lambda: True


_ENVIRONMENT = jinja2.Environment(loader=jinja2.FunctionLoader(_source), autoescape=False, keep_trailing_newline=True,
                                  trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def fixed(value, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``n/a`` for None or NaN (the numbers of the reports' prose)."""
    return format_number(value, digits)


def fmt(value, spec: str) -> str:
    """``value`` formatted by the format specification ``spec``: ``f"{value:spec}"``; ``n/a`` for None or NaN."""
    return format_number(value, spec=spec)


_ENVIRONMENT.filters.update(fmt=fmt, fixed=fixed)


def render(name: str, **context) -> str:
    """The template ``name`` (``"<study>/report.md.j2"``) filled with ``context`` (an undefined name is an
    error, not an empty string)."""
    return _ENVIRONMENT.get_template(name).render(f=fixed, **context)
