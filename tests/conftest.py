"""Hypothesis draws the same examples on every run, so a CI run can be repeated exactly.

To hunt with new random examples: ``HYPOTHESIS_PROFILE=hunt python -m pytest`` (and, for the
fuzz tests, ``FUZZ_EXAMPLES=2000`` for a longer hunt).
"""
import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("hunt", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
