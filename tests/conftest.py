"""Test set-up: the installed package only, and repeatable hypothesis examples.

The repository's top-level folders (``estimators/``, ``simulate/``...) are importable under
those bare names from its root; installed they are ``escalation.estimators`` and so on. The
repository root is taken off ``sys.path`` (``python -m pytest`` puts it there), so a module that
imports a bare name fails here as it would for a user who installed the wheel.

Hypothesis draws the same examples on every run, and the fuzz tests the same inputs, so a CI run
can be repeated exactly. To hunt with new random ones: ``python -m pytest --hunt N`` (every
hypothesis test draws new examples; each fuzz test of ``tests/e2e/test_fuzz.py`` tries N new inputs).
A longer hunt, with a report: ``python -m tools.fuzz_hunt`` (see ``tools/fuzz_hunt.py``).
"""
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
os.environ["PYTHONSAFEPATH"] = "1"  # and off the path of every `python -m escalation` a test starts

settings.register_profile("repeatable", derandomize=True, database=None)


def pytest_addoption(parser):
    parser.addoption("--hunt", type=int, default=0, metavar="N",
                     help="hunt for bugs with new random inputs: N for each fuzz test (tests/e2e/test_fuzz.py), and "
                          "new examples for every hypothesis test; default: the small repeatable CI budget")


def pytest_configure(config):
    hunt = config.getoption("hunt")
    if hunt:
        settings.register_profile("hunt", derandomize=False, database=None, max_examples=hunt)
    settings.load_profile("hunt" if hunt else "repeatable")


@pytest.fixture
def hunt(request) -> int:
    """``--hunt N``: how many new random inputs a fuzz test tries (0: its repeatable CI budget)."""
    return request.config.getoption("hunt")
