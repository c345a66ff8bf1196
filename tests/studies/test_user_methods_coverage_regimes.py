"""The intervals added for the failing regimes (issue 36) pass through the coverage study's door for a researcher's
method (``studies._user_methods``): as ``f(totals, sizes, confidence) -> (low, high)`` on the very data sets of a
cell, they give what the study's own methods give."""
from __future__ import annotations

import numpy as np
import pytest

from escalation.estimators.stats import LIKELIHOOD_METHODS, clustered_interval
from escalation.studies._user_methods import user_functions
from escalation.studies.coverage._coverage import _cell_row, cell_intervals


@pytest.mark.parametrize("method", ["korn-graubard", *LIKELIHOOD_METHODS])
def test_the_new_intervals_run_through_the_coverage_studys_door(method):
    def own(totals, sizes, confidence):
        return clustered_interval(totals, sizes, method, confidence=confidence)

    row = {**_cell_row("p_u", 0.05, 0.2, 6, 3, 0.5, 40, None), "cell": 0}  # 6 scenarios of unequal sizes
    got = cell_intervals(row, np.random.SeedSequence(5), methods=user_functions({"mine": own}, builtin=()))
    np.testing.assert_array_equal(got["mine"], got[method])
    assert got[method][0].shape == (40,)
