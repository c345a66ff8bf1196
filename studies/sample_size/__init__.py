"""The sample-size study (``escalation study sample-size``): draws, design, cell function, summary, report
and run in :mod:`._sample_size`."""
from ._sample_size import run_sample_size_study

__all__ = ["run_sample_size_study"]
