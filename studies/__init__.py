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
import importlib

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

#: Where each public name is defined, as ``(module, name there)``: it is imported from there when it
#: is first asked for (PEP 562), so the seeds and methods that the command line's options show import
#: no numerical library. One entry per name; ``__all__`` lists the same names.
_WHERE = {
    "COVERAGE_SEED": ("._constants", "COVERAGE_SEED"), "COVERAGE_METHODS": ("._constants", "COVERAGE_METHODS"),
    "SAMPLE_SIZE_SEED": ("._constants", "SAMPLE_SIZE_SEED"), "JUDGES_SEED": ("._constants", "JUDGES_SEED"),
    "DIFFERENCES_SEED": ("._constants", "DIFFERENCES_SEED"), "REPRODUCE_SEED": ("._constants", "REPRODUCE_SEED"),
    "EXPECTED_PAIRS": ("._constants", "EXPECTED_PAIRS"),
    "SMOKE_EXPECTED_PAIRS": ("._constants", "SMOKE_EXPECTED_PAIRS"),
    "run_coverage_study": ("._coverage", "run_study"),
    "run_differences_study": ("._differences", "run_study"),
    "BACKENDS": ("._engine", "BACKENDS"), "cell_seed": ("._engine", "cell_seed"),
    "record_outputs": ("._engine", "record_outputs"), "run_cells": ("._engine", "run_cells"),
    "run_judges_study": ("._judges", "run_study"),
    "MUTANTS": ("._mutants", "MUTANTS"), "catching_cases": ("._mutants", "catching_cases"),
    "conversation_mismatches": ("._mutants", "conversation_mismatches"), "run_mutant": ("._mutants", "run_mutant"),
    "subset_mismatches": ("._mutants", "subset_mismatches"), "summary_of": ("._mutants", "summary_of"),
    "reproduce": ("._reproduce", "run_study"),
    "run_sample_size_study": ("._sample_size", "run_study"),
}


def __getattr__(name: str):
    """A public name, imported from its module (:data:`_WHERE`) the first time it is asked for."""
    try:
        module, attribute = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attribute)
    globals()[name] = value  # asked for once: later look-ups find it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
