"""The coverage table behind compare's words (estimators DIFFERENCE_COVERAGE_STUDY) is what
``escalation study differences`` measures: each lowest-coverage cell it names, rerun from its seed.

Each cell of the study uses child ``cell`` of the root seed (``studies.cell_seed``), so one cell of
the default run is replayed alone, here with its 2,000 data sets (about 6 s for the 11 cells).
"""
from __future__ import annotations

import math

import pytest

from escalation.estimators.metric import DIFFERENCE_COVERAGE_STUDY
from escalation.studies import cell_seed
from escalation.studies.differences._differences import DEFAULT_SEED, FAILS_BELOW, build_design, run_cell

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'



def _conditions(row) -> str:
    replicas = int(row["replicas"])
    return (f"rate A {row['p_a']:g}, rate B {row['p_b']:g}, rho {row['rho']:g}, between {row['between']:g}, "
            f"{replicas} replica{'' if replicas == 1 else 's'}")


def test_the_threshold_is_the_studys():
    from escalation.estimators.metric._compare import HOLDS_AT
    assert HOLDS_AT == FAILS_BELOW


def test_every_lowest_cell_is_what_the_study_measures():
    design = build_design()
    assert design["nsim"].eq(2000).all()
    wanted = {}
    for method, rows in DIFFERENCE_COVERAGE_STUDY.items():
        for k, _, _, lowest, mcse, undefined, cell, conditions in rows:
            wanted.setdefault(cell, []).append((method, k, lowest, mcse, undefined, conditions))
    for cell, entries in sorted(wanted.items()):
        row = design.iloc[cell].to_dict()
        assert row["part"] == "difference"
        measured = {r["method"]: r for r in run_cell(row, cell_seed(DEFAULT_SEED, cell))}
        for method, k, lowest, mcse, undefined, conditions in entries:
            r = measured[method]
            assert int(row["scenarios"]) == k and _conditions(row) == conditions
            assert r["coverage"] == pytest.approx(lowest, abs=1e-12)
            assert r["coverage_mcse"] == pytest.approx(mcse, rel=1e-5)
            assert r["undefined"] == pytest.approx(undefined, abs=1e-12)
            assert math.isclose(r["coverage_mcse"], math.sqrt(lowest * (1 - lowest) / 2000), rel_tol=1e-9)
