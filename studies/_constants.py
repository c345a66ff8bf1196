"""The studies' constants that the command line shows in its options and help (each study's root
seed, the coverage study's methods, the reproduction's expected pairs), in a module that imports
no numerical library, so that ``escalation --help`` stays quick. Each study module takes its own
from here (``coverage._coverage.DEFAULT_SEED`` is :data:`COVERAGE_SEED`), and the door exports them from here.
"""
from __future__ import annotations

from escalation.estimators.stats import INTERVAL_METHODS

__all__ = ["COVERAGE_SEED", "SAMPLE_SIZE_SEED", "JUDGES_SEED", "DIFFERENCES_SEED", "CAPACITY_SEED", "REPRODUCE_SEED",
           "COVERAGE_ORACLES", "COVERAGE_METHODS", "EXPECTED_PAIRS", "SMOKE_EXPECTED_PAIRS"]

# ------------------------------------------------------------------ the root seed of each study (--seed)

COVERAGE_SEED = 20240501
SAMPLE_SIZE_SEED = 20240606
JUDGES_SEED = 20240707
DIFFERENCES_SEED = 20261201
CAPACITY_SEED = 20261202
REPRODUCE_SEED = 0

# ------------------------------------------------------------------ the coverage study (studies.coverage)

#: The two oracles: Wilson on the conversations, and Wilson-Kish with the true rho.
COVERAGE_ORACLES = ("wilson", "wilson-kish-true-rho")
#: Every method of the study: the two oracles, then what a user can choose (``--interval``).
COVERAGE_METHODS = COVERAGE_ORACLES + INTERVAL_METHODS

# ------------------------------------------------------------------ the reproduction (studies.reproduction)

#: Paired cases per profile for the expected values (``--expected-pairs``), and with ``--smoke``.
EXPECTED_PAIRS = 100_000
SMOKE_EXPECTED_PAIRS = 5_000
