"""Numbers written for people, the same on the command line and on a report page."""
from __future__ import annotations

import math

from escalation.estimators.stats import counted, format_number

__all__ = ["counted", "p_value_text"]  # counted: estimators.stats', for the pages and figures


def p_value_text(value, floor: float) -> str:
    """A p-value in at most 7 characters; at its ``floor`` (the smallest a bootstrap of B resamples
    can give, 1/B), ``<`` the floor; ``n/a`` when undefined."""
    if value is None or not math.isfinite(value):
        return format_number(None)
    if value <= floor * (1 + 1e-9):
        return f"<{floor:.0e}" if floor < 1e-3 else f"<{floor:.4f}".rstrip("0")
    return f"{value:.3f}" if value >= 0.001 else f"{value:.0e}"
