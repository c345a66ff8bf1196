"""Exact coverage of a researcher's interval that declares the statistics it depends on (``f.sufficient``).

:func:`escalation.estimators.stats.exact_coverage` sums over the values of the statistics the package's
intervals read: the total ``Y = sum_j y_j`` (clusters of any sizes), or ``(Y, S)``, ``S = sum_j y_j^2``
(clusters of equal size). A researcher's interval that depends on the data only through the same
statistics has its exact coverage from the same sum, once it is evaluated on one data set per value: this
module enumerates the values with their probabilities and builds such a data set for each
(:func:`states`), then scores the interval (:func:`exact_performance`).

The probabilities are convolutions computed directly, term by term (not by a Fourier transform, as the
package's enumeration is): they agree with it to about 1e-13. States below :data:`NEGLIGIBLE` are left out,
as there. With ``(Y, S)`` the clusters are added one at a time on the lattice of
:func:`~escalation.estimators.stats.exact_coverage` (``V = (S - Y) / 2 - c Y``), recording for every
reachable state the total of the last cluster that reaches it, so a data set of each state is read back
from the last cluster to the first; the work and memory grow as ``K^3 m^3``, so the enumeration runs up to
:data:`MAX_LATTICE` lattice points over all steps (K = 100 clusters of 8; K = 200 of 3) and the coverage is
Monte Carlo beyond.
"""
from __future__ import annotations

import math

import numpy as np

from escalation.estimators.stats import ExactCoverage

from .._user_methods import UserFunction, checked_bounds

__all__ = ["NEGLIGIBLE", "MAX_LATTICE", "states", "exact_performance"]

#: States of smaller probability are left out (as in :mod:`escalation.estimators.stats`' enumeration).
NEGLIGIBLE = 1e-16
#: The most lattice points the ``(Y, S)`` enumeration visits, summed over the clusters added.
MAX_LATTICE = 30_000_000
#: The most numbers (states times clusters) handed to a researcher's function in one call.
_BATCH_VALUES = 2_000_000


def _total_states(pmfs: list[np.ndarray], sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values of ``Y`` with their probabilities, and one data set of each: the clusters filled in turn."""
    prob = np.ones(1)
    for pmf in pmfs:
        prob = np.convolve(prob, pmf)
    total = np.nonzero(prob > NEGLIGIBLE)[0]
    before = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    totals = np.clip(total[:, None] - before[None, :], 0, sizes[None, :])
    return prob[total], totals


def _sums_states(pmf: np.ndarray, clusters: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The values of ``(Y, S)`` of ``clusters`` i.i.d. clusters of total law ``pmf`` with their probabilities,
    and one data set of each; None beyond :data:`MAX_LATTICE`."""
    size = pmf.size - 1
    t = np.arange(size + 1)
    v = t * (t - 1) // 2 - (size - 1) // 2 * t
    step = v - v.min()  # the lattice column a cluster of total t moves a state by
    width = int(step.max())
    if sum((k * size + 1) * (k * width + 1) for k in range(1, clusters + 1)) > MAX_LATTICE:
        return None
    prob = np.ones((1, 1))
    last = []  # last[k][y, w]: a total of cluster k + 1 that reaches the state (y, w) of k + 1 clusters
    for k in range(1, clusters + 1):
        new = np.zeros((k * size + 1, k * width + 1))
        best = np.zeros_like(new)
        chosen = np.zeros(new.shape, dtype=np.int8 if size < 128 else np.int16)
        rows, columns = prob.shape
        for total in np.nonzero(pmf > 0)[0]:
            window = (slice(total, total + rows), slice(step[total], step[total] + columns))
            contribution = pmf[total] * prob
            new[window] += contribution
            larger = contribution > best[window]
            best[window] = np.where(larger, contribution, best[window])
            chosen[window] = np.where(larger, total, chosen[window])
        last.append(chosen)
        prob = new
    y, w = np.nonzero(prob > NEGLIGIBLE)
    weights = prob[y, w]
    totals = np.empty((y.size, clusters), dtype=np.int64)
    for k in range(clusters - 1, -1, -1):
        totals[:, k] = last[k][y, w]
        y, w = y - totals[:, k], w - step[totals[:, k]]
    return weights, totals


def states(pmfs: list[np.ndarray], sizes: np.ndarray, statistics: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(probabilities, totals)``: the values of ``statistics`` for clusters of total laws ``pmfs`` and
    ``sizes``, one data set (a row of ``totals``) of each; None where they cannot be enumerated here
    (``total-and-squares`` with unequal sizes, or beyond :data:`MAX_LATTICE`)."""
    if statistics == "total":
        return _total_states(pmfs, sizes)
    if np.any(sizes != sizes[0]):
        return None
    return _sums_states(pmfs[0], sizes.size)


def exact_performance(method: UserFunction, prob: np.ndarray, totals: np.ndarray, sizes: np.ndarray,
                      truth: float, confidence: float) -> ExactCoverage:
    """Exact coverage, misses and mean width of ``method`` over the enumerated ``totals`` of probabilities
    ``prob``; an undefined (NaN) interval neither covers nor misses, and the width is the mean over the
    defined ones."""
    batch = max(1, _BATCH_VALUES // sizes.size)
    lows, highs = [], []
    for start in range(0, len(totals), batch):
        part = totals[start:start + batch]
        low, high = checked_bounds(method.name, method.function(part.copy(), np.tile(sizes, (len(part), 1)),
                                                                confidence), len(part))
        lows.append(low)
        highs.append(high)
    low, high = np.concatenate(lows), np.concatenate(highs)
    width = high - low
    defined = np.isfinite(width)
    weight = prob[defined].sum()
    return ExactCoverage(coverage=float(prob[(low <= truth) & (truth <= high)].sum()),
                         miss_low=float(prob[high < truth].sum()), miss_high=float(prob[low > truth].sum()),
                         mean_width=float((prob[defined] * width[defined]).sum() / weight) if weight else math.nan,
                         truth=truth)
