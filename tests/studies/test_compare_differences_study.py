"""The coverage table behind compare's words (estimators DIFFERENCE_COVERAGE_STUDY) is what
``escalation study differences`` measures: each lowest-coverage cell it names, rerun from its seed.

Each cell of the study uses child ``cell`` of the root seed (``studies.cell_seed``), so one cell of
the default run is replayed alone, with its 2,000 data sets, and a borderline one with its rerun
(child ``RERUN_CHILD`` of the cell's seed, as many data sets as the run drew).
"""
from __future__ import annotations

import math

import pytest

from escalation.estimators.metric import DIFFERENCE_COVERAGE_STUDY
from escalation.studies import cell_seed
from escalation.studies.differences._differences import (
    DEFAULT_SEED,
    FAILS_BELOW,
    MEAN_LEVEL,
    RERUN_MCSE,
    TOLERANCE_MCSE,
    build_design,
    run_cell,
)

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'



def _conditions(row) -> str:
    replicas = int(row["replicas"])
    return (f"rate A {row['p_a']:g}, rate B {row['p_b']:g}, rho {row['rho']:g}, between {row['between']:g}, "
            f"{replicas} replica{'' if replicas == 1 else 's'}")


def test_the_rule_is_the_studys():
    from escalation.estimators.metric import _compare as words
    assert (words.HOLDS_AT, words.TOLERANCE_MCSE, words.MEAN_LEVEL) == (FAILS_BELOW, TOLERANCE_MCSE, MEAN_LEVEL)


def test_every_lowest_cell_is_what_the_study_measures():
    design = build_design()
    assert design["nsim"].eq(2000).all()
    wanted = {}
    for method, rows in DIFFERENCE_COVERAGE_STUDY.items():
        for k, _, _, lowest, mcse, undefined, cell, conditions, _, _ in rows:
            wanted.setdefault(cell, []).append((method, k, lowest, mcse, undefined, conditions))
    # a rerun cell (its MCSE that of more than 2,000 data sets) replays its rerun: the smallest one stands for them
    # (replaying every one, bootstraps of 7,000 data sets of 100 scenarios, takes minutes)
    def drawn(entries):
        return max(round(lowest * (1 - lowest) / mcse**2) for _, _, lowest, mcse, _, _ in entries)
    reruns = sorted((drawn(entries) * design.iloc[cell]["scenarios"], cell) for cell, entries in wanted.items()
                    if drawn(entries) > 2000)
    assert reruns  # the table has some
    chosen = {cell for cell, entries in wanted.items() if drawn(entries) == 2000} | {reruns[0][1]}
    for cell, entries in sorted((c, e) for c, e in wanted.items() if c in chosen):
        row = design.iloc[cell].to_dict()
        assert row["part"] == "difference"
        measured = {r["method"]: r for r in run_cell(row, cell_seed(DEFAULT_SEED, cell), rerun=True)}
        for method, k, lowest, mcse, undefined, conditions in entries:
            r = measured[method]
            assert int(row["scenarios"]) == k and _conditions(row) == conditions
            assert r["coverage"] == pytest.approx(lowest, abs=1e-6)  # the table keeps 6 digits
            assert r["coverage_mcse"] == pytest.approx(mcse, rel=1e-5)
            assert r["undefined"] == pytest.approx(undefined, abs=1e-6)
            c = r["coverage"]
            assert math.isclose(r["coverage_mcse"], math.sqrt(c * (1 - c) / r["nsim"]), rel_tol=1e-9)
            # a borderline cell's rerun (to an MCSE of RERUN_MCSE for the borderline methods) draws more
            assert r["nsim"] > 2000 if r["rerun"] else r["nsim"] == 2000
            assert not r["rerun"] or min(m["coverage_mcse"] for m in measured.values()) <= RERUN_MCSE
