"""The Monte Carlo studies of the measurement and the reproduction of the paper.

Each study is a design grid plus three steps (generate one condition, analyse it,
summarise the replications; Morris, White & Crowther 2019), run cell by cell by one engine
that spawns a child seed per cell, so results do not depend on ``n_jobs`` or the backend.

The engine
==========
run_cells, cell_seed, BACKENDS     one function per cell over a design grid, resumable (force: recompute)
record_outputs                     a study's outputs, listed so that a forced run removes them

The studies (each writes tables, figures and report.md into a folder)
=====================================================================
run_coverage_study, COVERAGE_SEED, COVERAGE_METHODS     every clustered interval and two oracles, exact where computable
run_sample_size_study, SAMPLE_SIZE_SEED                 plans of scenarios and replicas, simulated
run_judges_study, JUDGES_SEED                           the judges, mode B and the read-only notice
run_differences_study, DIFFERENCES_SEED                 compare's difference intervals and mode B with replicas
reproduce, REPRODUCE_SEED, EXPECTED_PAIRS, SMOKE_EXPECTED_PAIRS   the paper's tables and figures

The implementation errors of SPEC section 9
===========================================
MUTANTS, run_mutant, catching_cases, conversation_mismatches, subset_mismatches, summary_of
"""
from ._coverage import DEFAULT_SEED as COVERAGE_SEED, METHODS as COVERAGE_METHODS, run_study as run_coverage_study
from ._differences import DEFAULT_SEED as DIFFERENCES_SEED, run_study as run_differences_study
from ._engine import BACKENDS, cell_seed, record_outputs, run_cells
from ._judges import DEFAULT_SEED as JUDGES_SEED, run_study as run_judges_study
from ._mutants import MUTANTS, catching_cases, conversation_mismatches, run_mutant, subset_mismatches, summary_of
from ._reproduce import (DEFAULT_SEED as REPRODUCE_SEED, EXPECTED_PAIRS, SMOKE_EXPECTED_PAIRS,
                         run_study as reproduce)
from ._sample_size import DEFAULT_SEED as SAMPLE_SIZE_SEED, run_study as run_sample_size_study

__all__ = [
    # the engine
    "run_cells", "cell_seed", "BACKENDS", "record_outputs",
    # the studies
    "run_coverage_study", "COVERAGE_SEED", "COVERAGE_METHODS", "run_sample_size_study", "SAMPLE_SIZE_SEED",
    "run_judges_study", "JUDGES_SEED", "run_differences_study", "DIFFERENCES_SEED", "reproduce", "REPRODUCE_SEED",
    "EXPECTED_PAIRS", "SMOKE_EXPECTED_PAIRS",
    # the implementation errors of SPEC section 9
    "MUTANTS", "run_mutant", "catching_cases", "conversation_mismatches", "subset_mismatches", "summary_of",
]
