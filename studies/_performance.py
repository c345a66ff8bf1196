"""Monte Carlo performance measures of the studies, each with its Monte Carlo standard error.

The counterpart of rsimsum's ``performance()`` (Morris, White & Crowther 2019, table 6): every
estimate over replications comes with its MCSE, as a long row ``{**keys, "est", "mcse"}``, and
misses below and above an interval are reported apart from the coverage.

binomial_mcse(share, n)            ``sqrt(s (1 - s) / n)``, the MCSE of a share of independent 0/1 outcomes
share(hits, **keys)                a pooled share with its binomial MCSE
mean(values, **keys)               a mean over replications with MCSE ``sd / sqrt(R)``
median(values, **keys)             a median with an order-statistic MCSE
interval_rows(low, high, truth)    coverage, miss below and miss above of intervals, each a share

The rule by which the studies say an interval *holds* (issue 36, point 2): its mean coverage over a group of
cells is at least :data:`MEAN_LEVEL` and no cell lies below :data:`FLOOR` by more than :data:`TOLERANCE_MCSE`
Monte Carlo standard errors (0 for an exact value). So that the tolerance does not decide, a Monte Carlo cell
whose coverage is :func:`borderline` is run again, on data sets of its own (:func:`rerun_seed`), until its
MCSE is at most :data:`RERUN_MCSE` (:func:`rerun_size`): with 2000 data sets (MCSE about 0.006) a method
truly at 0.92 in a cell passes with probability 0.65 and one at 0.91 with 0.11; after the rerun, 0.07 and
3e-7 (normal approximation).

borderline(coverage, mcse)         ``c - 2 MCSE < FLOOR <= c + 2 MCSE`` with an MCSE above ``RERUN_MCSE``
rerun_size(coverages, chunk)       data sets that bring every coverage's MCSE to ``RERUN_MCSE``
rerun_seed(seed_seq)               the seed of a cell's rerun
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["binomial_mcse", "share", "mean", "median", "interval_rows", "FLOOR", "MEAN_LEVEL", "TOLERANCE_MCSE",
           "RERUN_MCSE", "RERUN_CHILD", "borderline", "rerun_size", "rerun_seed"]

#: The holds rule (module docstring): no cell below this coverage by more than ``TOLERANCE_MCSE`` MCSE ...
FLOOR = 0.93
TOLERANCE_MCSE = 2.0
#: ... and a mean coverage over the group of at least this.
MEAN_LEVEL = 0.945
#: The largest Monte Carlo standard error of a borderline coverage after its cell's rerun:
#: ``c (1 - c) / RERUN_MCSE^2`` data sets, 7234 at c = 0.93, 8356 at 0.918 (the band's lowest with 2000).
RERUN_MCSE = 0.003
#: The child of a cell's seed that seeds its rerun: no chunk of a main pass reaches it (2e12 replications).
RERUN_CHILD = 2**32 - 1


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


def borderline(coverage: float, mcse: float) -> bool:
    """Whether a Monte Carlo coverage is borderline under the holds rule (module docstring): within
    :data:`TOLERANCE_MCSE` MCSE of :data:`FLOOR` on either side, ``c - 2 MCSE < FLOOR <= c + 2 MCSE``, with an MCSE
    above :data:`RERUN_MCSE`."""
    band = TOLERANCE_MCSE * mcse
    return bool(mcse > RERUN_MCSE and coverage - band < FLOOR <= coverage + band)


def rerun_size(coverages, chunk: int = 1) -> int:
    """Data sets that bring the MCSE ``sqrt(c (1 - c) / n)`` of every coverage ``c`` to :data:`RERUN_MCSE` or below,
    in whole chunks of ``chunk``."""
    needed = max(c * (1.0 - c) for c in coverages) / RERUN_MCSE**2
    return chunk * max(1, math.ceil(needed / chunk))


def rerun_seed(seed_seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """The seed of a cell's rerun: child :data:`RERUN_CHILD` of the cell's seed ``seed_seq`` (whose own children,
    where a study draws in chunks, are the rerun's chunks)."""
    return np.random.SeedSequence(seed_seq.entropy, spawn_key=(*seed_seq.spawn_key, RERUN_CHILD))
