"""The gate's decision from the bounds (``escalation.estimators.metric``): the arrays of ``gate_decisions`` are the
decisions of ``gate_decision``, one interval at a time, on both sides of a threshold, at it and undefined; and the
release's decision."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from escalation.estimators.metric import (
    GATE_CODES,
    GATE_FAIL,
    GATE_PASS,
    GATE_UNDECIDED,
    GateCriterion,
    gate_decision,
    gate_decisions,
    gate_overall,
    look_confidence,
    obrien_fleming_spent,
)

BOUNDS = (0.0, 0.01, 0.04, 0.05, 0.06, 0.2, 1.0, math.nan, math.inf)


@pytest.mark.parametrize("upper", [True, False])
def test_the_arrays_decide_as_one_interval_at_a_time(upper):
    pairs = [(low, high) for low, high in itertools.product(BOUNDS, repeat=2)
             if math.isnan(low) or math.isnan(high) or low <= high]
    low, high = np.array(pairs).T
    codes = gate_decisions(low, high, 0.05, upper=upper)
    criterion = GateCriterion("p_u" if upper else "pi", 0.05, "--max-p-u" if upper else "--min-pi", upper=upper)
    assert codes.dtype == np.int8 and codes.shape == (len(pairs),)
    assert codes.tolist() == [GATE_CODES[gate_decision(criterion, lo, hi)[0]] for lo, hi in pairs]
    # an interval that ends at the threshold passes (the whole interval is allowed)
    assert gate_decisions(0.01, 0.05, 0.05).item() == 1 and gate_decisions(0.05, 0.06, 0.05).item() == 0


def test_the_release_fails_when_one_criterion_fails():
    assert gate_overall([GATE_PASS, GATE_UNDECIDED, GATE_FAIL]) == GATE_FAIL
    assert gate_overall([GATE_PASS, GATE_UNDECIDED]) == GATE_UNDECIDED
    assert gate_overall([GATE_PASS, GATE_PASS]) == GATE_PASS


def test_the_spending_of_the_looks():
    """Lan & DeMets (1983): the O'Brien-Fleming-type function spends 0.00557 of alpha = 0.05 by half the
    information (the value tabulated for it) and alpha by the end; the looks' errors add up to alpha."""
    assert obrien_fleming_spent(0.5, 0.05) == pytest.approx(0.00557, abs=5e-6)
    assert obrien_fleming_spent(0.0, 0.05) == 0.0 and obrien_fleming_spent(1.0, 0.05) == 0.05
    assert sum(1 - look_confidence(k, 5, 0.9) for k in range(1, 6)) == pytest.approx(0.1, abs=1e-12)
