"""The reports' number filters write an undefined number as the command line does: ``n/a``."""
from __future__ import annotations

import math

from escalation.studies._templates import fixed, fmt


def test_the_filters_write_n_a_for_none_and_nan_and_numbers_as_before():
    assert [fixed(None), fixed(math.nan, 4), fmt(math.nan, ".3f"), fmt(None, "+.1f")] == ["n/a"] * 4
    assert [fixed(0.5), fixed(0.5, 4), fmt(0.5, ".3f"), fmt(0.05, "+.1%"), fmt(200.0, "g")] == \
        ["0.500", "0.5000", "0.500", "+5.0%", "200"]
