"""Monte Carlo performance measures of the studies, each with its Monte Carlo standard error.

The counterpart of rsimsum's ``performance()`` (Morris, White & Crowther 2019, table 6): every
estimate over replications comes with its MCSE, as a long row ``{**keys, "est", "mcse"}``, and
misses below and above an interval are reported apart from the coverage.

binomial_mcse(share, n)            ``sqrt(s (1 - s) / n)``, the MCSE of a share of independent 0/1 outcomes
share(hits, **keys)                a pooled share with its binomial MCSE
mean(values, **keys)               a mean over replications with MCSE ``sd / sqrt(R)``
median(values, **keys)             a median with an order-statistic MCSE
interval_rows(low, high, truth)    coverage, miss below and miss above of intervals, each a share
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["binomial_mcse", "share", "mean", "median", "interval_rows"]


def binomial_mcse(share, n):
    """``sqrt(share (1 - share) / n)``: the MCSE of a share of ``n`` independent 0/1 outcomes.

    Works element-wise on floats, arrays and pandas Series (and returns the same kind).
    """
    return np.sqrt(share * (1 - share) / n)


def share(hits, **keys) -> dict:
    """The share of true ``hits`` with its binomial MCSE (NaN for no hits at all).

    Returns
    -------
    dict
        ``{**keys, "est": share, "mcse": sqrt(share (1 - share) / n)}``.
    """
    hits = np.asarray(hits, dtype=bool)
    if hits.size == 0:
        return {**keys, "est": float("nan"), "mcse": float("nan")}
    est = float(hits.mean())
    return {**keys, "est": est, "mcse": float(binomial_mcse(est, hits.size))}


def mean(values, **keys) -> dict:
    """The mean over replications with its MCSE ``sd / sqrt(R)`` (NaN values left out; NaN MCSE for R < 2)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    r = values.size
    mcse = float(values.std(ddof=1) / math.sqrt(r)) if r > 1 else float("nan")
    return {**keys, "est": float(values.mean()) if r else float("nan"), "mcse": mcse}


def median(values, **keys) -> dict:
    """The median with its MCSE: half the distance between the order statistics ``R/2 -+ sqrt(R)/2``.

    That pair is the distribution-free interval of the median with about 68% coverage (binomial
    order statistics), so half its length estimates one standard error.
    """
    ordered = np.sort(np.asarray(values, dtype=float))
    r = ordered.size
    step = math.sqrt(r) / 2.0
    low, high = ordered[max(int(r / 2 - step), 0)], ordered[min(int(math.ceil(r / 2 + step)), r - 1)]
    return {**keys, "est": float(np.median(ordered)), "mcse": float(high - low) / 2.0}


def interval_rows(low, high, truth: float, **keys) -> list[dict]:
    """Coverage of intervals ``[low, high]`` of ``truth``, and the misses below and above it.

    An undefined (NaN) interval neither covers nor misses on a side, so the three shares add
    up to one minus the share of undefined intervals.

    Returns
    -------
    list of dict
        Rows ``{"stat", **keys, "est", "mcse"}`` for ``stat`` = ``coverage``, ``miss_below``
        (the interval lies below ``truth``) and ``miss_above``, each a :func:`share`.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return [share((low <= truth) & (truth <= high), stat="coverage", **keys),
            share(high < truth, stat="miss_below", **keys),
            share(low > truth, stat="miss_above", **keys)]
