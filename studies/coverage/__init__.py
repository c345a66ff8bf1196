"""The coverage study (``escalation study coverage``): design, cell function and run in :mod:`._coverage`,
the summary tables and the prose of ``report.md`` in :mod:`._report`."""
from ._coverage import run_coverage_study

__all__ = ["run_coverage_study"]
