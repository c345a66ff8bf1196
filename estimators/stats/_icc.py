"""Intra-cluster correlation of a 0/1 outcome: the Fleiss-Cuzick estimator.

The ANOVA estimator of SPEC section 5 is ``estimators.stats._design.anova_icc``, written on the
cluster sums that the exact coverage enumerates; this is the kappa-type alternative.
"""
from __future__ import annotations

import numpy as np

__all__ = ["fleiss_cuzick_icc"]


def fleiss_cuzick_icc(totals, sizes, *, truncate: bool = True):
    """Fleiss-Cuzick (kappa-type) estimator of the intra-cluster correlation of a 0/1 outcome.

    Parameters
    ----------
    totals : array_like, shape (..., k)
        Number of ones in each of the ``k`` clusters (last axis).
    sizes : array_like, broadcastable to ``totals``
        Cluster sizes ``n_j``; a size of 0 marks an absent cluster.
    truncate : bool
        Clip the estimate to ``[0, 1]``. ``False`` gives the raw value, which is at most 1
        and can be negative.

    Returns
    -------
    rho : ndarray or float
        NaN where undefined: fewer than two clusters, every cluster of size 1 (``N = k``), or
        no variation (``p_hat`` is 0 or 1).

    Notes
    -----
    Fleiss & Cuzick (1979), "The reliability of dichotomous judgments: unequal numbers of
    judges per subject", Applied Psychological Measurement 3:537-542; listed as the
    kappa-type estimator in Ridout, Demetrio & Firth (1999), Biometrics 55:137-148, and
    Zou & Donner (2004), Biometrics 60:807-811::

        p_hat  = Y / N
        rho_FC = 1 - sum_j y_j (n_j - y_j) / n_j / ((N - k) p_hat (1 - p_hat))

    With equal cluster sizes it equals Fleiss' (1971) kappa for two categories.

    Examples
    --------
    >>> float(fleiss_cuzick_icc([0, 1, 2, 3], 3))
    0.33333333333333337
    """
    y = np.asarray(totals, dtype=float)
    n = np.broadcast_to(np.asarray(sizes, dtype=float), y.shape)
    present = n > 0
    k = present.sum(axis=-1)
    N = n.sum(axis=-1)
    Y = y.sum(axis=-1)
    within = np.where(present, y * (n - y) / np.where(present, n, 1.0), 0.0).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = Y / N
        rho = 1.0 - within / ((N - k) * p_hat * (1.0 - p_hat))
    undefined = (k < 2) | (N - k <= 0) | (Y <= 0) | (Y >= N)
    rho = np.where(undefined, np.nan, rho)
    if truncate:
        rho = np.clip(rho, 0.0, 1.0)
    return rho[()] if np.ndim(rho) == 0 else rho
