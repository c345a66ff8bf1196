"""The differences study (``escalation study differences``): design, cell function, summaries, report and run
in :mod:`._differences`."""
from ._differences import run_differences_study

__all__ = ["run_differences_study"]
