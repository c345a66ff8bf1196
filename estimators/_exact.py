"""Exact coverage of the Wilson and Wilson-Kish intervals under clustered binary data.

No Monte Carlo: the coverage is a sum over every possible data summary, weighted by its
probability. ``K`` clusters of ``m`` conversations each have independent totals ``y_j`` with a
given distribution (binomial for independent data, beta-binomial for clustered data, any other
for the paired figure); the interval depends on the data only through

- the total ``Y`` when rho is fixed (Wilson, or Wilson-Kish with a known rho), and
- the pair ``(Y, S)``, ``S = sum_j y_j^2``, when rho is estimated by the ANOVA estimator, which
  with equal cluster sizes is a function of these sums alone.

Both distributions are ``K``-fold convolutions of one cluster's, computed with a Fourier
transform: exact up to floating-point rounding (about 1e-12 on a coverage).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import fft

from ._icc import anova_icc_from_sums
from ._intervals import wilson_kish_interval

__all__ = ["ExactCoverage", "exact_coverage_wilson_kish", "MAX_ESTIMATED_RHO_STATES"]

#: Largest number of (Y, S) values the estimated-rho enumeration visits (about 160 MB of
#: transform); beyond it the exact coverage is NaN. ``(K m + 1) (K m (m - 1) / 2 + 1)``
#: values are needed: m = 8 allows K <= 211, m = 3 allows K <= 1053.
MAX_ESTIMATED_RHO_STATES = 10_000_000


@dataclass(frozen=True)
class ExactCoverage:
    """Exact performance of an interval procedure (probabilities, not estimates).

    Attributes
    ----------
    coverage : float
        ``P(low <= truth <= high)``.
    miss_low : float
        ``P(high < truth)``: the interval lies below the truth.
    miss_high : float
        ``P(low > truth)``: the interval lies above the truth.
    mean_width : float
        ``E[high - low]``.
    truth : float
        The true proportion, ``E[y_j] / m``.
    """

    coverage: float
    miss_low: float
    miss_high: float
    mean_width: float
    truth: float

    def to_dict(self) -> dict:
        """The five numbers as a dict."""
        return {"coverage": self.coverage, "miss_low": self.miss_low, "miss_high": self.miss_high,
                "mean_width": self.mean_width, "truth": self.truth}


def exact_coverage_wilson_kish(cluster_pmf, clusters: int, *, rho: float | None = None,
                               confidence: float = 0.95,
                               max_states: int = MAX_ESTIMATED_RHO_STATES) -> ExactCoverage:
    """Exact coverage of the Wilson-Kish interval for ``clusters`` i.i.d. clusters of equal size.

    Parameters
    ----------
    cluster_pmf : array_like, shape (m + 1,)
        ``P(y_j = t)`` for ``t = 0 .. m``: the distribution of one cluster's total; ``m`` is
        the cluster size. A Bernoulli pmf ``[1 - p, p]`` with ``clusters = n`` gives the
        binomial case.
    clusters : int
        Number of clusters ``K``.
    rho : float or None
        Fixed intra-cluster correlation used in the design effect ``1 + (m - 1) rho``
        (``0`` gives the plain Wilson interval, which ignores the clustering). ``None``
        estimates it from each data set as the paper does: the ANOVA estimator truncated to
        ``[0, 1]``, and 0 where it is undefined (SPEC section 5).
    confidence : float
        Two-sided level of the interval.
    max_states : int
        With ``rho=None``, the largest number of ``(Y, S)`` values to enumerate; beyond it
        every field of the result is NaN (see ``MAX_ESTIMATED_RHO_STATES``).

    Returns
    -------
    ExactCoverage

    Notes
    -----
    With a fixed rho the interval is a function of ``Y = sum_j y_j``, whose distribution is the
    ``K``-fold convolution of ``cluster_pmf``. With the estimated rho it is a function of
    ``(Y, S)``; rather than enumerating the ``C(K + m, m)`` multisets of cluster totals, we
    enumerate the ``(K m + 1) (K m (m - 1) / 2 + 1)`` values of ``(Y, (S - Y) / 2)``, whose
    distribution is the ``K``-fold convolution of the one-cluster distribution placed at
    ``(t, t (t - 1) / 2)``. Convolutions are powers of a discrete Fourier transform of a size
    that cannot wrap around.

    Examples
    --------
    Wilson interval, n = 10, p = 0.0175 (Brown, Cai & DasGupta 2001): only ``y = 0`` covers.

    >>> p = 0.0175
    >>> round(exact_coverage_wilson_kish([1 - p, p], 10, rho=0.0).coverage, 4)
    0.8382
    """
    pmf = np.asarray(cluster_pmf, dtype=float)
    if pmf.ndim != 1 or pmf.size < 2 or np.any(pmf < 0) or not np.isclose(pmf.sum(), 1.0, atol=1e-9):
        raise ValueError("cluster_pmf must be a 1-d probability vector over totals 0 .. m (m >= 1)")
    if int(clusters) != clusters or clusters < 1:
        raise ValueError(f"clusters must be a positive integer, got {clusters!r}")
    clusters = int(clusters)
    size = pmf.size - 1
    truth = float(np.arange(size + 1) @ pmf / size)
    total_n = clusters * size
    if rho is not None:
        prob_y = _convolution_power(pmf[:, None], clusters)[:, 0]
        sum_y = np.arange(prob_y.size)
        low, high = wilson_kish_interval(sum_y, total_n, size, float(rho), confidence).interval
        return _summarise(prob_y, low, high, truth)
    pairs = size * (size - 1) // 2
    states = (clusters * size + 1) * (clusters * pairs + 1)
    if states > max_states:
        return ExactCoverage(np.nan, np.nan, np.nan, np.nan, truth)
    t = np.arange(size + 1)
    placed = np.zeros((size + 1, pairs + 1))
    placed[t, t * (t - 1) // 2] = pmf
    prob = _convolution_power(placed, clusters)
    sum_y = np.arange(prob.shape[0])[:, None]
    sum_y_squared = 2 * np.arange(prob.shape[1])[None, :] + sum_y
    rho_hat = np.nan_to_num(anova_icc_from_sums(sum_y, sum_y_squared, clusters, size), nan=0.0)
    low, high = wilson_kish_interval(sum_y, total_n, size, rho_hat, confidence).interval
    return _summarise(prob, low, high, truth)


def _convolution_power(pmf_2d, power: int) -> np.ndarray:
    """Distribution of the sum of ``power`` independent copies of a 2-d lattice variable."""
    out_shape = tuple(power * (s - 1) + 1 for s in pmf_2d.shape)
    shape = tuple(fft.next_fast_len(s, real=True) for s in out_shape)
    transform = fft.rfftn(pmf_2d, s=shape)
    return fft.irfftn(transform**power, s=shape)[: out_shape[0], : out_shape[1]]


def _summarise(prob, low, high, truth) -> ExactCoverage:
    """Probability-weighted coverage, misses on each side and width."""
    prob, low, high = np.broadcast_arrays(prob, low, high)
    covers = (low <= truth) & (truth <= high)
    return ExactCoverage(
        coverage=float(prob[covers].sum()),
        miss_low=float(prob[high < truth].sum()),
        miss_high=float(prob[low > truth].sum()),
        mean_width=float((prob * (high - low)).sum()),
        truth=truth,
    )
