"""Test set-up: the installed package only, and repeatable hypothesis examples.

The repository's top-level folders (``estimators/``, ``simulate/``...) are importable under
those bare names from its root; installed they are ``escalation.estimators`` and so on. The
repository root is taken off ``sys.path`` (``python -m pytest`` puts it there), so a module that
imports a bare name fails here as it would for a user who installed the wheel.

Hypothesis draws the same examples on every run, so a CI run can be repeated exactly.
To hunt with new random examples: ``HYPOTHESIS_PROFILE=hunt python -m pytest`` (and, for the
fuzz tests, ``FUZZ_EXAMPLES=2000`` for a longer hunt).
"""
import os
import sys
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
os.environ["PYTHONSAFEPATH"] = "1"  # and off the path of every `python -m escalation` a test starts

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("hunt", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
