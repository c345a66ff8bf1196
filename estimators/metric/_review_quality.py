"""Review quality ``g(rho)``: the probability that a review under utilisation ``rho`` is a real decision, as a
logistic curve (:class:`LogisticQuality`) or a measured table (:class:`TableQuality`, :func:`read_quality_table`).

The capacity model (:mod:`estimators.metric._capacity`) reads it at the reviewers' utilisation.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..records import InputError
from ..stats import check_probability, check_range

__all__ = ["LogisticQuality", "TableQuality", "read_quality_table"]


@dataclass(frozen=True)
class LogisticQuality:
    """Review quality ``g(rho) = g_max / (1 + exp(k (rho - rho_half)))``: the probability that a
    hand-off gets a real decision at utilisation ``rho``.

    The defaults are an assumption, not a measurement (``docs/capacity.md`` gives the reasons):
    ``g_max = 0.95`` (an unloaded reviewer still misses some), ``rho_half = 0.9`` (half the
    decisions are lost when the reviewers are busy 90% of the time) and ``k = 20`` (``g`` stays
    within 12% of ``g_max`` up to ``rho = 0.8``). Set them to what is known of your reviewers.

    Parameters
    ----------
    maximum : float
        ``g_max`` in (0, 1].
    half : float
        ``rho_half`` > 0: the utilisation at which ``g = g_max / 2``.
    slope : float
        ``k`` > 0: how sharply quality falls around ``rho_half``.
    """

    maximum: float = 0.95
    half: float = 0.9
    slope: float = 20.0

    def __post_init__(self):
        check_probability("maximum", self.maximum, closed="high")
        check_range("half", self.half, 0.0, math.inf)
        check_range("slope", self.slope, 0.0, math.inf)

    def __call__(self, utilisation) -> np.ndarray:
        with np.errstate(over="ignore"):  # exp overflows to inf far above rho_half: g = 0 there
            return self.maximum / (1.0 + np.exp(self.slope * (np.asarray(utilisation, dtype=float) - self.half)))

    def to_dict(self) -> dict:
        return {"curve": "logistic", "formula": "g(rho) = max / (1 + exp(slope (rho - half)))",
                "max": self.maximum, "half": self.half, "slope": self.slope}


@dataclass(frozen=True)
class TableQuality:
    """Review quality from a table of ``(utilisation, g)`` points, interpolated linearly.

    Parameters
    ----------
    utilisation : tuple of float
        At least two points, >= 0, strictly increasing (points above 1 describe overload: the
        curve is read at the offered utilisation, which may exceed 1).
    quality : tuple of float
        ``g`` at each point, in [0, 1] and non-increasing (quality does not rise with load).
    source : str or None
        The file the table was read from, for the output.

    Notes
    -----
    Below the first point ``g`` is the first value, above the last the last (``numpy.interp``
    clamps at the ends).
    """

    utilisation: tuple
    quality: tuple
    source: str | None = None

    def __post_init__(self):
        u, g = np.asarray(self.utilisation, dtype=float), np.asarray(self.quality, dtype=float)
        if u.shape != g.shape or u.ndim != 1 or len(u) < 2:
            raise ValueError("a quality table needs at least two (utilisation, quality) points")
        if not (np.isfinite(u).all() and u[0] >= 0 and (np.diff(u) > 0).all()):
            raise ValueError("the utilisations of a quality table must be >= 0 and strictly increasing")
        if not (np.isfinite(g).all() and ((g >= 0) & (g <= 1)).all() and (np.diff(g) <= 0).all()):
            raise ValueError("the qualities of a quality table must lie in [0, 1] and not increase")

    def __call__(self, utilisation) -> np.ndarray:
        return np.interp(np.asarray(utilisation, dtype=float), self.utilisation, self.quality)

    def to_dict(self) -> dict:
        return {"curve": "table", "source": self.source,
                "points": [[float(u), float(g)] for u, g in zip(self.utilisation, self.quality)]}


def read_quality_table(path) -> TableQuality:
    """A :class:`TableQuality` from a CSV file with the columns ``utilisation,quality``.

    Raises
    ------
    InputError
        Naming the file, line and column: a missing column, a value that is not a number, a
        utilisation that is negative or does not increase, a quality outside [0, 1] or one that
        increases, fewer than two rows.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", source=str(path))
    points: list[tuple[float, float]] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("utilisation", "quality") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"needs the columns utilisation,quality; missing {', '.join(missing)}", source=str(path),
                             line=1)
        for row in reader:
            line = reader.line_num
            values = []
            for column in ("utilisation", "quality"):
                try:
                    values.append(float(row[column]))
                except (TypeError, ValueError):
                    raise InputError(f"not a number: {row[column]!r}", source=str(path), line=line,
                                     field=column) from None
            u, g = values
            if not (math.isfinite(u) and u >= 0) or (points and u <= points[-1][0]):
                raise InputError(f"must be >= 0 and larger than the row before, got {u:g}", source=str(path),
                                 line=line, field="utilisation")
            if not (0.0 <= g <= 1.0) or (points and g > points[-1][1]):
                raise InputError(f"must lie in [0, 1] and not exceed the row before (quality does not rise "
                                 f"with load), got {g:g}", source=str(path), line=line, field="quality")
            points.append((u, g))
    if len(points) < 2:
        raise InputError(f"needs at least two rows, got {len(points)}", source=str(path))
    return TableQuality(tuple(u for u, _ in points), tuple(g for _, g in points), source=str(path))
