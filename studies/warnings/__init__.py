"""The warnings study (``escalation study warnings``): where the at-risk trigger of the intervals
(:func:`escalation.estimators.stats.interval_at_risk`) warns, and the coverage among the warned and the silent
data sets; design, cell function, tables and run in :mod:`._warnings`."""
from ._warnings import run_warnings_study

__all__ = ["run_warnings_study"]
