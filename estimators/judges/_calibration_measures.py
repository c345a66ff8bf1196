"""How well a judge's probabilities match the labels: expected calibration error, mean bias, reliability tables
and AUROC. The calibration itself (Platt scaling, isotonic regression, cross-fitting by case) is in
:mod:`estimators.judges._calibration`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import check_count, wilson_interval
from ._calibration import _check_labels

__all__ = ["expected_calibration_error", "calibration_bias", "reliability_table", "auroc"]


def _bin_index(p, bins: int) -> np.ndarray:
    check_count("bins", bins)
    return np.minimum((np.asarray(p, dtype=float) * bins).astype(np.int64), bins - 1)


def expected_calibration_error(p, y, *, bins: int = 10) -> float:
    """Expected calibration error over ``bins`` equal-width bins of ``p``.

    ``ECE = sum_b (n_b / N) |mean(p)_b - mean(y)_b|``: Naeini, Cooper & Hauskrecht (2015);
    Guo, Pleiss, Sun & Weinberger (2017), eq. (3). NaN for an empty sample.
    """
    p, y = _check_labels(p, y)
    if p.size == 0:
        return float("nan")
    b = _bin_index(p, bins)
    count = np.bincount(b, minlength=bins)
    gap = np.abs(np.bincount(b, weights=p, minlength=bins) - np.bincount(b, weights=y, minlength=bins))
    return float(gap.sum() / count.sum())


def calibration_bias(p, y) -> float:
    """Calibration bias, ``mean(p) - mean(y)`` (NaN for an empty sample)."""
    p, y = _check_labels(p, y)
    return float(p.mean() - y.mean()) if p.size else float("nan")


def reliability_table(p, y, *, bins: int = 10, confidence: float = 0.95) -> pd.DataFrame:
    """The reliability diagram's table: per equal-width bin of ``p``, the mean ``p`` against the
    label rate with its Wilson interval.

    Returns
    -------
    pandas.DataFrame
        ``bin, low, high, count, mean_p, label_rate, label_low, label_high`` (NaN in empty bins).
    """
    p, y = _check_labels(p, y)
    b = _bin_index(p, bins)
    count = np.bincount(b, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=bins) / count
        rate = np.bincount(b, weights=y, minlength=bins) / count
    low, high = wilson_interval(rate, count, confidence)
    edges = np.arange(bins + 1) / bins
    return pd.DataFrame({"bin": np.arange(bins), "low": edges[:-1], "high": edges[1:], "count": count,
                         "mean_p": mean_p, "label_rate": rate, "label_low": low, "label_high": high})


def _mid_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks ``1 .. n`` of ``values``, ties given the mean of their ranks (``scipy.stats.rankdata``'s
    ``average``, without importing scipy.stats): a run of equal values from rank ``lo + 1`` to ``hi``
    ranks ``(lo + 1 + hi) / 2``."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    bounds = np.r_[starts, values.size]
    run = np.repeat(np.arange(starts.size), np.diff(bounds))
    ranks = np.empty(values.size)
    ranks[order] = 0.5 * (bounds[run] + 1 + bounds[run + 1])
    return ranks


def auroc(score, positive) -> tuple[float, float]:
    """Area under the ROC curve of ``score`` for telling ``positive`` rows, with its standard error.

    The Mann-Whitney form with mid-ranks for ties: the probability that a positive row scores
    above a negative one (ties count one half). Standard error of Hanley & McNeil (1982), eq. (2)
    with ``Q1 = A / (2 - A)``, ``Q2 = 2 A^2 / (1 + A)``. ``(nan, nan)`` without both classes.
    """
    score = np.asarray(score, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if score.shape != positive.shape or np.isnan(score).any():
        raise ValueError("score and positive must have the same shape, and score no NaN")
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return float("nan"), float("nan")
    ranks = _mid_ranks(score)
    area = (ranks[positive].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0)
    q1, q2 = area / (2.0 - area), 2.0 * area**2 / (1.0 + area)
    variance = (area * (1 - area) + (n1 - 1) * (q1 - area**2) + (n0 - 1) * (q2 - area**2)) / (n1 * n0)
    return float(area), float(np.sqrt(max(variance, 0.0)))
