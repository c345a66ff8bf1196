"""The reproduction of the paper (``escalation reproduce``): design, cell function and tables in
:mod:`._reproduce`, the report template ``report.md.j2``."""
from ._reproduce import reproduce

__all__ = ["reproduce"]
