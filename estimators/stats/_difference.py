"""Newcombe's square-and-add interval for the difference of two paired, clustered rates.

Both assistants ran the same scenarios, so their rate estimates are correlated through the
scenarios; :func:`paired_correlation` estimates that correlation from cluster totals and
:func:`newcombe_paired_interval` combines the two rates' score (Wilson-Kish) limits with it
(Newcombe 1998, method 10; Fagerland, Lydersen & Laake 2017, section 8.5).
"""
from __future__ import annotations

import math

import numpy as np

from ._intervals import ConfidenceInterval

__all__ = ["paired_correlation", "newcombe_paired_interval"]


def paired_correlation(totals_a, sizes_a, totals_b, sizes_b, *, continuity: bool = True) -> float:
    """Correlation of two clustered rate estimates paired by cluster, for Newcombe's interval.

    With cluster residuals ``e_j = y_j - p_hat n_j`` of each assistant, the linearised
    covariance of ``p_hat_a`` and ``p_hat_b`` gives ``psi = sum e_aj e_bj / sqrt(sum e_aj^2
    sum e_bj^2)``. ``psi = 0`` where a margin is empty (no variation).

    ``continuity`` applies Newcombe's (1998) continuity correction where it is defined, the paired
    2x2 table: when every cluster of both is one conversation, ``psi`` is the phi coefficient
    ``(AD - BC) / sqrt(product of margins)`` and the correction replaces ``AD - BC`` by
    ``AD - BC - N / 2`` when positive, 0 when that falls below 0 (Fagerland, Lydersen & Laake 2017,
    eq. 8.10; R ``contingencytables::Newcombe_square_and_add_CI_paired_2x2`` computes it), i.e. it
    subtracts ``1/2`` from ``sum e_a e_b``. With clusters of several conversations it is not applied:
    no source gives a clustered form, and ``1/2`` subtracted from the sum of the cluster residuals'
    products would shrink with the replicas (those products grow as their square), not with the clusters.
    """
    ya, na, yb, nb = (np.asarray(x, dtype=float) for x in (totals_a, sizes_a, totals_b, sizes_b))
    if na.sum() == 0 or nb.sum() == 0:
        return 0.0
    ea = ya - ya.sum() / na.sum() * na
    eb = yb - yb.sum() / nb.sum() * nb
    scale = math.sqrt(float((ea * ea).sum() * (eb * eb).sum()))
    if scale <= 1e-12:
        return 0.0
    cross = float((ea * eb).sum())
    table = bool(np.all((na == 1) & (nb == 1)))  # every cluster one pair: the paired 2x2 table
    if continuity and table and cross >= 0.0:
        cross = max(cross - 0.5, 0.0)
    return cross / scale


def newcombe_paired_interval(rate_a, ci_a, rate_b, ci_b, psi) -> ConfidenceInterval:
    """Newcombe's square-and-add interval for ``rate_b - rate_a`` from paired data.

    ``ci_a`` and ``ci_b`` are the two rates' score (here Wilson-Kish) intervals and ``psi``
    the correlation of the two estimates (:func:`paired_correlation`). Newcombe (1998),
    method 10; Fagerland, Lydersen & Laake (2017), eq. 8.9::

        L = d - sqrt((b - l_b)^2 + (u_a - a)^2 - 2 psi (b - l_b)(u_a - a))
        U = d + sqrt((a - l_a)^2 + (u_b - b)^2 - 2 psi (a - l_a)(u_b - b))

    Returns
    -------
    ConfidenceInterval
        Clipped to ``[-1, 1]``; NaN when either rate is undefined.
    """
    a, b = float(rate_a), float(rate_b)
    (low_a, high_a), (low_b, high_b) = ci_a, ci_b
    if not all(math.isfinite(x) for x in (a, b, low_a, high_a, low_b, high_b)):
        return ConfidenceInterval(float("nan"), float("nan"))
    d = b - a
    below_b, above_a = b - low_b, high_a - a
    below_a, above_b = a - low_a, high_b - b
    low = d - math.sqrt(max(below_b**2 + above_a**2 - 2.0 * psi * below_b * above_a, 0.0))
    high = d + math.sqrt(max(below_a**2 + above_b**2 - 2.0 * psi * below_a * above_b, 0.0))
    return ConfidenceInterval(max(low, -1.0), min(high, 1.0))
