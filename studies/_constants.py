"""The studies' constants that the command line shows in its options and help (each study's root
seed, the coverage study's methods, the reproduction's expected pairs), in a module that imports
no numerical library, so that ``escalation --help`` stays quick. Each study module takes its own
from here (``coverage._coverage.DEFAULT_SEED`` is :data:`COVERAGE_SEED`), and the door exports them from here.
"""
from __future__ import annotations

from escalation.estimators.stats import INTERVAL_METHODS

__all__ = ["COVERAGE_SEED", "SAMPLE_SIZE_SEED", "JUDGES_SEED", "DIFFERENCES_SEED", "CAPACITY_SEED", "GATE_SEED",
           "WARNINGS_SEED", "REPRODUCE_SEED", "COVERAGE_ORACLES", "COVERAGE_METHODS", "EXPECTED_PAIRS",
           "SMOKE_EXPECTED_PAIRS", "TOKENS_PER_SAMPLE"]

# ------------------------------------------------------------------ the root seed of each study (--seed)

COVERAGE_SEED = 20240501
SAMPLE_SIZE_SEED = 20240606
JUDGES_SEED = 20240707
DIFFERENCES_SEED = 20261201
CAPACITY_SEED = 20261202
GATE_SEED = 20261203
WARNINGS_SEED = 20261204
REPRODUCE_SEED = 0

# ------------------------------------------------------------------ the coverage study (studies.coverage)

#: The two oracles: Wilson on the conversations, and Wilson-Kish with the true rho.
COVERAGE_ORACLES = ("wilson", "wilson-kish-true-rho")
#: Every method of the study: the two oracles, then what a user can choose (``--interval``).
COVERAGE_METHODS = COVERAGE_ORACLES + INTERVAL_METHODS

# ------------------------------------------------------------------ the gate study (studies.gate)

#: Input tokens of one sample of the default suite (``--tokens-per-sample``): 4,650, the mean of the 48 samples
#: of Qwen2.5-Coder-1.5B-Instruct's recorded run, counted by its server (examples/data/real-runs/README.md,
#: "What a run costs"; ``python benchmarks/suite.py --log``): 4 epochs of the 576 samples an epoch are then
#: 10.7 M input tokens. The 0.5B model, which loops on failing calls, read 7,260 a sample.
TOKENS_PER_SAMPLE = 4650

# ------------------------------------------------------------------ the reproduction (studies.reproduction)

#: Paired cases per profile for the expected values (``--expected-pairs``), and with ``--smoke``.
EXPECTED_PAIRS = 100_000
SMOKE_EXPECTED_PAIRS = 5_000
