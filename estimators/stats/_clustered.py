"""Intervals of a clustered rate, chosen by name: the paper's Wilson-Kish and better ones beside it.

``score --interval``, ``compare --interval``, the summaries and the coverage study all take
their interval from :func:`clustered_interval`, so a method means the same thing everywhere.
Each method is a function of the cluster totals ``y_j`` and sizes ``n_j`` alone.

=========================  ====================================================================
``wilson-kish``            the paper's (SPEC section 5): Wilson at ``n_eff = N / deff``
``wilson-kish-t``          the same with a t quantile on ``clusters - 1`` degrees of freedom
``wilson-kish-ucb``        Wilson-Kish with rho replaced by a one-sided upper confidence bound
``korn-graubard``          Wilson at the Korn-Graubard effective size, t on ``clusters - 1`` df
``bootstrap-percentile``   cluster bootstrap, percentile
``bootstrap-bca``          cluster bootstrap, bias-corrected and accelerated
=========================  ====================================================================
"""
from __future__ import annotations

import warnings

import numpy as np

from ._bootstrap import DegenerateIntervalWarning, cluster_bootstrap
from ._checks import check_choice
from ._constants import DEFAULT_INTERVAL, INTERVAL_METHODS, RHO_BOUND_LEVEL, WILSON_METHODS
from ._design import RHO_WHEN_UNDEFINED, ClusterSums, _anova, design_of_sums
from ._intervals import ConfidenceInterval, _once_when_constant, wilson_interval

__all__ = ["INTERVAL_METHODS", "DEFAULT_INTERVAL", "RHO_BOUND_LEVEL", "clustered_interval", "rho_upper_bound",
           "korn_graubard_size", "check_interval_method",
           "interval_of_sums", "WILSON_METHODS"]

#: Bootstrap resamples of ``bootstrap-percentile`` and ``bootstrap-bca`` unless told otherwise.
DEFAULT_RESAMPLES = 1999


def check_interval_method(method: str) -> str:
    """``method`` if it names an interval of :data:`INTERVAL_METHODS`, else ValueError listing them."""
    return check_choice("interval", method, INTERVAL_METHODS)


def rho_upper_bound(totals, sizes, *, level: float = RHO_BOUND_LEVEL):
    """One-sided upper confidence bound of the intra-cluster correlation, from the ANOVA F ratio.

    Parameters
    ----------
    totals, sizes : array_like, shape (..., k)
        Ones and conversations of each cluster (clusters on the last axis; size 0 = absent).
    level : float
        One-sided confidence level of the bound.

    Returns
    -------
    ndarray or float
        The bound in ``[0, 1]``; 1 where rho is undefined (SPEC section 5) or the outcome does
        not vary within clusters.

    Notes
    -----
    Searle (1971), Donner & Wells (1986, eq. 3): under the one-way model
    ``F / lambda ~ F(k - 1, N - k)`` with ``F = MSB / MSW`` and ``lambda = (1 + (n0 - 1) rho) /
    (1 - rho)``, so with ``q`` the ``1 - level`` quantile of ``F(k - 1, N - k)``::

        rho_U = (F / q - 1) / (F / q + n0 - 1),   n0 = (N - sum n_j^2 / N) / (k - 1)

    For a 0/1 outcome the F law is an approximation; the coverage study measures the result.
    """
    return _rho_bound(ClusterSums.of(totals, sizes), level)


def _rho_bound(sums: ClusterSums, level: float):
    from scipy.special import fdtri  # here: only wilson-kish-ucb needs it, and scoring imports no scipy otherwise

    k, N = sums.clusters, sums.n
    _, msb, msw, n0 = _anova(sums)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = _once_when_constant(lambda dfn, dfd: fdtri(dfn, dfd, 1.0 - level), np.maximum(k - 1, 1),
                                np.maximum(N - k, 1))
        ratio = (msb / msw) / q
        bound = (ratio - 1.0) / (ratio + n0 - 1.0)
    undefined = (k < 2) | (N - k <= 0) | ~(msw > 1e-12) | ~np.isfinite(bound)
    bound = np.where(undefined, RHO_WHEN_UNDEFINED, np.clip(bound, 0.0, 1.0))
    return bound[()] if np.ndim(bound) == 0 else bound


def korn_graubard_size(totals, sizes):
    """Korn-Graubard effective sample size ``p (1 - p) / v``, capped at ``N``.

    ``v = k / (k - 1) * sum_j (y_j - n_j p)^2 / N^2`` is the cluster-robust (linearised)
    variance of ``p = Y / N`` with the finite-cluster factor; where ``p`` is 0 or 1 or ``v = 0``
    the effective size is ``N`` (Korn & Graubard 1998, section 2; the same rule as inspect_ai's
    ``ci_wilson(cluster=)``). NaN with fewer than two clusters.
    """
    return _korn_graubard(ClusterSums.of(totals, sizes))


def _korn_graubard(sums: ClusterSums):
    k, N = sums.clusters, sums.n
    with np.errstate(divide="ignore", invalid="ignore"):
        p = sums.ones / N
        squares = sums.ones_sq - 2.0 * p * sums.ones_size + p * p * sums.size_sq  # sum_j (y_j - n_j p)^2
        v = k / (k - 1) * np.maximum(squares, 0.0) / (N * N)
        size = np.minimum(p * (1.0 - p) / v, N)
    size = np.where((p * (1.0 - p) > 0) & (v > 1e-15), size, N)
    size = np.where(k >= 2, size, np.nan)
    return size[()] if np.ndim(size) == 0 else size


def clustered_interval(totals, sizes, method: str = DEFAULT_INTERVAL, *, confidence: float = 0.95, rho=None,
                       rng: np.random.Generator | None = None,
                       n_resamples: int = DEFAULT_RESAMPLES) -> ConfidenceInterval:
    """Interval of the clustered rate ``sum y_j / sum n_j`` by the method named ``method``.

    Parameters
    ----------
    totals, sizes : array_like, shape (..., k)
        Ones and conversations of each cluster, clusters on the last axis (size 0 = absent);
        leading axes are data sets. For a method of :data:`WILSON_METHODS` ``totals`` may be
        the :class:`ClusterSums` of the data instead, ``sizes`` then None: the methods are
        functions of these sums, and several methods on the same data then take one pass over
        the clusters.
    method : str
        One of :data:`INTERVAL_METHODS`.
    confidence : float
        Two-sided level.
    rho : float or array_like, optional
        A fixed intra-cluster correlation for the Wilson-Kish methods (``--rho``), broadcast
        against the data sets (rhos of shape ``(r, 1)`` give ``r`` intervals of each of the
        data sets of ``totals`` of shape ``(D, k)``); the Korn-Graubard and bootstrap intervals
        do not use one.
    rng : numpy.random.Generator
        Needed by the bootstrap methods only.
    n_resamples : int
        Bootstrap resamples.

    Returns
    -------
    ConfidenceInterval
        NaN where the interval is undefined: no conversation; with fewer than two clusters
        for the t, Korn-Graubard and BCa intervals.

    Notes
    -----
    - ``wilson-kish``: Wilson (1927) at ``n_eff = N / deff`` (Kish 1965), ``deff`` from
      :func:`estimators.cluster_design` (SPEC section 5).
    - ``wilson-kish-t``: the same, the normal quantile replaced by Student's t on ``k - 1``
      degrees of freedom, the degrees of freedom of a cluster-level variance (Korn & Graubard
      1998; Dean & Pagano 2015, "Evaluating confidence interval methods for binomial
      proportions in clustered surveys", J. Surv. Stat. Methodol. 3:484-503).
    - ``wilson-kish-ucb``: rho replaced by its one-sided :data:`RHO_BOUND_LEVEL` upper bound
      (:func:`rho_upper_bound`), so the design effect is not understated when few clusters
      make the estimate of rho unreliable (which is where the paper's interval fails).
    - ``korn-graubard``: Wilson at :func:`korn_graubard_size` with t on ``k - 1`` degrees of
      freedom (Korn & Graubard 1998; Franco et al. 2019, J. Surv. Stat. Methodol. 7:334-364);
      what inspect_ai's ``ci_wilson(cluster=)`` computes.
    - ``bootstrap-percentile`` and ``bootstrap-bca``: :func:`estimators.cluster_bootstrap`
      (Davison & Hinkley 1997, section 3.8; Efron & Tibshirani 1993, section 14.3).
    """
    check_interval_method(method)
    if isinstance(totals, ClusterSums):
        return interval_of_sums(totals, method, confidence=confidence, rho=rho)
    if method.startswith("bootstrap"):
        if rng is None:
            raise ValueError(f"the {method} interval needs a random generator (rng=)")
        y = np.rint(np.asarray(totals, dtype=float)).astype(np.int64)
        n = np.broadcast_to(np.rint(np.asarray(sizes, dtype=float)).astype(np.int64), y.shape)
        boot = cluster_bootstrap(y, n, n_resamples=n_resamples, rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)  # undefined is NaN, said by the caller
            low, high = boot.confidence_interval(method.removeprefix("bootstrap-"), confidence)
        return ConfidenceInterval(np.asarray(low)[()], np.asarray(high)[()])
    return interval_of_sums(ClusterSums.of(totals, sizes), method, confidence=confidence, rho=rho)


def interval_of_sums(sums: ClusterSums, method: str = DEFAULT_INTERVAL, *, confidence: float = 0.95,
                     rho=None) -> ConfidenceInterval:
    """:func:`clustered_interval` of a method of :data:`WILSON_METHODS`, from the cluster sums."""
    if method not in WILSON_METHODS:
        raise ValueError(f"interval_of_sums computes {', '.join(WILSON_METHODS)}, not {method!r}")
    N = sums.n
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = np.where(N > 0, sums.ones / np.where(N > 0, N, 1.0), np.nan)
    df = None
    if method == "korn-graubard":
        size, df = _korn_graubard(sums), sums.clusters - 1
    else:
        if method == "wilson-kish-ucb" and rho is None:
            rho = _rho_bound(sums, RHO_BOUND_LEVEL)
        size = design_of_sums(sums, rho=rho).n_eff
        if method == "wilson-kish-t":
            df = sums.clusters - 1
    low, high = wilson_interval(p_hat, size, confidence, df=df)
    return ConfidenceInterval(low[()], high[()])
