"""The coverage report's findings take the cells by their distance from the boundary exactly (issue 36, point 6):
``1 - 0.98`` is 0.020000000000000018, so the pi cells at 0.98 fell out of "within 0.02 of the boundary"."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from escalation.studies.coverage._report import _boundary_distance, _findings, summary_cells


def _cells(coverage_pi: float) -> pd.DataFrame:
    """Two cells of rare, concentrated errors for each estimand: p_u 0.02 covered 0.90, pi 0.98 ``coverage_pi``."""
    rows = []
    for estimand, p, coverage in (("p_u", 0.02, 0.90), ("pi", round(1 - 0.02, 12), coverage_pi)):
        for scenarios in (100, 200):
            for method in ("wilson-kish-true-rho", "wilson-kish", "wilson"):
                rows.append({"method": method, "estimand": estimand, "p": p, "rho": 0.5, "scenarios": scenarios,
                             "replicas": 8, "size_cv": 0.0, "nsim": 2000, "coverage": coverage,
                             "coverage_mcse": 0.0, "miss_low": 1 - coverage, "miss_high": 0.0, "mean_width": 0.1,
                             "exact_coverage": coverage, "exact_miss_low": 1 - coverage, "exact_miss_high": 0.0,
                             "exact_mean_width": 0.1})
    return pd.DataFrame(rows)


def test_the_pi_cells_at_0_98_count_as_rare_and_concentrated():
    table = _cells(0.80)
    assert table["p"].max() == 0.98 and 1 - 0.98 > 0.02  # the trap
    found = _findings(summary_cells(table), table)
    assert found["paper_rare"].startswith("mean 0.85")  # (2 x 0.90 + 2 x 0.80) / 4, not 0.90 of p_u alone
    assert found["concentrated"][0]["stats"].startswith("mean 0.85")
    assert found["oracle_concentrated"].startswith("mean 0.85")
    assert "lowest 0.800 (pi, p = 0.98" in found["paper_rare"]


@pytest.mark.parametrize("p", [0.01, 0.02, 0.98, 0.99])
def test_every_grid_distance_is_within_0_02(p):
    distance = _boundary_distance(pd.Series([p]))[0]
    assert distance <= 0.02 and np.isclose(distance, min(p, 1 - p))
