"""Undefined numbers: NaN in arrays, null in JSON, never 0 or 1."""
from __future__ import annotations

import math

__all__ = ["nan_to_none"]


def nan_to_none(x) -> float | None:
    """``x`` as a float, or None where it is undefined (None or NaN): JSON's null.

    Examples
    --------
    >>> nan_to_none(float("nan")) is None, nan_to_none(0.25)
    (True, 0.25)
    """
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x
