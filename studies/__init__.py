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
run_capacity_study, CAPACITY_SEED                       the inverted U of oversight, and the queue against SimPy
run_gate_study, GATE_SEED, TOKENS_PER_SAMPLE            escalation gate's fixed, naive and sequential rules: wrong
                                                        passes and fails, and the samples (tokens) to a decision
run_warnings_study, WARNINGS_SEED                     where the intervals' at-risk trigger warns, and the coverage
                                                        among the warned and the silent data sets
reproduce, REPRODUCE_SEED, EXPECTED_PAIRS, SMOKE_EXPECTED_PAIRS   the paper's tables and figures

A researcher's own methods, grids and generators (``methods=``, ``grid=``, ``generator=`` of a study)
======================================================================================================
sufficient                         declare the statistics a coverage method reads, for its exact coverage

The implementation errors of SPEC section 9
===========================================
MUTANTS, run_mutant, catching_cases, conversation_mismatches, subset_mismatches, summary_of
"""
import lazy_loader

__all__ = [
    # the engine
    "run_cells", "cell_seed", "BACKENDS", "record_outputs",
    # the studies
    "run_coverage_study", "COVERAGE_SEED", "COVERAGE_METHODS", "run_sample_size_study", "SAMPLE_SIZE_SEED",
    "run_judges_study", "JUDGES_SEED", "run_differences_study", "DIFFERENCES_SEED", "run_capacity_study",
    "CAPACITY_SEED", "run_gate_study", "GATE_SEED", "TOKENS_PER_SAMPLE", "run_warnings_study",
    "WARNINGS_SEED", "reproduce", "REPRODUCE_SEED",
    "EXPECTED_PAIRS", "SMOKE_EXPECTED_PAIRS",
    # a researcher's own
    "sufficient",
    # the implementation errors of SPEC section 9
    "MUTANTS", "run_mutant", "catching_cases", "conversation_mismatches", "subset_mismatches", "summary_of",
]

#: The public names by the module that defines each: lazy_loader imports a module the first time one
#: of its names is asked for (PEP 562), so ``escalation --help`` imports no numerical library.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_constants": [
        "COVERAGE_SEED", "COVERAGE_METHODS", "SAMPLE_SIZE_SEED", "JUDGES_SEED", "DIFFERENCES_SEED", "REPRODUCE_SEED",
        "EXPECTED_PAIRS", "SMOKE_EXPECTED_PAIRS", "CAPACITY_SEED", "GATE_SEED", "TOKENS_PER_SAMPLE",
        "WARNINGS_SEED",
    ],
    "capacity": ["run_capacity_study"],
    "coverage": ["run_coverage_study"],
    "differences": ["run_differences_study"],
    "gate": ["run_gate_study"],
    "_engine": ["BACKENDS", "cell_seed", "record_outputs", "run_cells"],
    "judges": ["run_judges_study"],
    "_mutants": [
        "MUTANTS", "catching_cases", "conversation_mismatches", "run_mutant", "subset_mismatches", "summary_of",
    ],
    "reproduction": ["reproduce"],
    "sample_size": ["run_sample_size_study"],
    "_user_methods": ["sufficient"],
    "warnings": ["run_warnings_study"],
})
