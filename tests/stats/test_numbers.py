"""``format_number``: the one spelling of a number, defined or not, in text for a person; ``nan_to_none``."""
from __future__ import annotations

import math

import numpy as np
import pytest

from escalation.estimators.stats import format_number, nan_to_none


@pytest.mark.parametrize("value", [None, math.nan, float("nan"), np.nan, np.float32("nan"), np.float64("nan")])
def test_an_undefined_number_is_n_a_whatever_the_digits_sign_or_spec(value):
    assert format_number(value) == "n/a"
    assert format_number(value, 1, sign=True) == "n/a"
    assert format_number(value, spec=".4g") == "n/a"


@pytest.mark.parametrize("value, kwargs, text", [
    (0.5, {}, "0.500"),                              # three decimals by default
    (0.5, {"digits": 4}, "0.5000"),
    (0.5, {"digits": 1}, "0.5"),
    (0.12345, {"digits": 0}, "0"),
    (2, {}, "2.000"),                                # an int as a decimal number
    (np.float64(0.25), {}, "0.250"),                 # a numpy scalar as a float
    (0.5, {"sign": True}, "+0.500"),                 # a sign only where asked
    (-0.5, {"sign": True}, "-0.500"),
    (0.0, {"sign": True}, "+0.000"),
    (-0.5, {}, "-0.500"),
    (0.0004567, {"spec": ".3g"}, "0.000457"),        # a format specification in place of digits and sign
    (12345, {"spec": ","}, "12,345"),
    (math.inf, {}, "inf"),                           # infinity is defined: written as Python writes it
])
def test_a_defined_number_is_written_as_an_f_string_writes_it(value, kwargs, text):
    assert format_number(value, **kwargs) == text


def test_digits_and_sign_are_the_f_string_specification():
    for value in (0.0, 0.1234567, -3.5, 1e-9, 123456.789):
        for digits in range(6):
            assert format_number(value, digits) == f"{value:.{digits}f}"
            assert format_number(value, digits, sign=True) == f"{value:+.{digits}f}"


def test_nan_to_none_is_json_null_for_the_same_undefined_numbers():
    assert nan_to_none(None) is None and nan_to_none(math.nan) is None and nan_to_none(np.float32("nan")) is None
    assert nan_to_none(0.5) == 0.5 and isinstance(nan_to_none(np.float64(0.5)), float)
