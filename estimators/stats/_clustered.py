"""Intervals of a clustered rate, chosen by name: the paper's Wilson-Kish and better ones beside it.

``score --interval``, ``compare --interval``, the summaries and the coverage study all take
their interval from :func:`clustered_interval`, so a method means the same thing everywhere.
Each method is a function of the cluster totals ``y_j`` and sizes ``n_j`` alone, and
:func:`interval_design` says what design it used (``rho_used``, ``deff``, ``n_eff`` of a summary).

=========================  ====================================================================
``wilson-kish``            the paper's (SPEC section 5): Wilson at ``n_eff = N / deff``
``wilson-kish-t``          the same with a t quantile on ``clusters - 1`` degrees of freedom
``wilson-kish-ucb``        Wilson-Kish with rho replaced by a one-sided upper confidence bound
``wilson-cluster-t``       Wilson at the cluster variance's effective size, t on ``clusters - 1`` df
                           (inspect_ai's ``ci_wilson(cluster=)``; ``korn-graubard`` before 2026-12-04)
``korn-graubard``          Clopper-Pearson at the degrees-of-freedom-adjusted effective size
                           (Korn & Graubard 1998)
``beta-binomial-profile``  profile likelihood of the beta-binomial mean, rho profiled out
``beta-binomial-bayes``    credible interval of the beta-binomial mean, hierarchical Bayes
``bootstrap-percentile``   cluster bootstrap, percentile
``bootstrap-bca``          cluster bootstrap, bias-corrected and accelerated
=========================  ====================================================================
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ._bootstrap import DegenerateIntervalWarning, cluster_bootstrap
from ._checks import check_choice, check_level
from ._constants import DEFAULT_INTERVAL, INTERVAL_METHODS, LIKELIHOOD_METHODS, RHO_BOUND_LEVEL, SUMS_METHODS
from ._design import RHO_WHEN_UNDEFINED, ClusterSums, _anova, design_of_sums
from ._intervals import ConfidenceInterval, _once_when_constant, critical_value, wilson_interval

__all__ = ["INTERVAL_METHODS", "DEFAULT_INTERVAL", "RHO_BOUND_LEVEL", "clustered_interval", "rho_upper_bound",
           "korn_graubard_size", "check_interval_method", "interval_of_sums", "SUMS_METHODS", "IntervalDesign",
           "interval_design"]

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
    """Korn-Graubard effective sample size ``n* = p (1 - p) / v``.

    ``v = k / (k - 1) * sum_j (y_j - n_j p)^2 / N^2`` is the cluster-robust (linearised) variance of
    ``p = Y / N`` with the finite-cluster factor, the variance of R's ``survey::svymean`` for a
    one-stage cluster design; where ``p`` is 0 or 1 or ``v = 0`` the effective size is ``N``
    (Korn & Graubard 1998, section 2). NaN with fewer than two clusters. Not capped: ``wilson-cluster-t``
    uses ``min(n*, N)``, ``korn-graubard`` caps its degrees-of-freedom-adjusted size at ``N``.
    """
    return _effective_size(ClusterSums.of(totals, sizes))


def _cluster_variance(sums: ClusterSums):
    """``(p, v)``: the rate and its cluster-robust variance of :func:`korn_graubard_size`."""
    k, N = sums.clusters, sums.n
    with np.errstate(divide="ignore", invalid="ignore"):
        p = sums.ones / N
        squares = sums.ones_sq - 2.0 * p * sums.ones_size + p * p * sums.size_sq  # sum_j (y_j - n_j p)^2
        return p, k / (k - 1) * np.maximum(squares, 0.0) / (N * N)


def _free(p, v):
    """Where the cluster variance gives no effective size: ``p`` is 0 or 1, or ``v`` is 0 (rounding)."""
    return ~((p * (1.0 - p) > 0) & (v > 1e-15))


def _effective_size(sums: ClusterSums):
    p, v = _cluster_variance(sums)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = np.where(_free(p, v), sums.n, p * (1.0 - p) / v)
    size = np.where(sums.clusters >= 2, size, np.nan)
    return size[()] if np.ndim(size) == 0 else size


def _korn_graubard(sums: ClusterSums, confidence: float) -> ConfidenceInterval:
    """Korn & Graubard's (1998) Clopper-Pearson interval at the degrees-of-freedom-adjusted effective size."""
    from scipy.special import betaincinv  # here: scoring with a Wilson interval imports no scipy

    k, N = sums.clusters, sums.n
    p, v = _cluster_variance(sums)
    alpha = (1.0 - check_level("confidence", confidence)) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (critical_value(confidence, N - 1) / critical_value(confidence, k - 1)) ** 2
        size = np.where(_free(p, v), N, np.minimum(p * (1.0 - p) / v * ratio, N))
        x = size * p
        low = np.where(x > 0, betaincinv(x, size - x + 1.0, alpha), 0.0)
        high = np.where(x < size, betaincinv(x + 1.0, size - x, 1.0 - alpha), 1.0)
    defined = (k >= 2) & (N > 0)
    return ConfidenceInterval(np.where(defined, low, np.nan)[()], np.where(defined, high, np.nan)[()])


def _likelihood_interval(method: str, totals, sizes, confidence: float):
    """:func:`estimators.beta_binomial_fit` of a method of :data:`LIKELIHOOD_METHODS`."""
    from ._beta_binomial import beta_binomial_fit  # here: it imports scipy, which scoring with Wilson does not

    return beta_binomial_fit(totals, sizes, method, confidence)


def clustered_interval(totals, sizes, method: str = DEFAULT_INTERVAL, *, confidence: float = 0.95, rho=None,
                       rng: np.random.Generator | None = None,
                       n_resamples: int = DEFAULT_RESAMPLES) -> ConfidenceInterval:
    """Interval of the clustered rate ``sum y_j / sum n_j`` by the method named ``method``.

    Parameters
    ----------
    totals, sizes : array_like, shape (..., k)
        Ones and conversations of each cluster, clusters on the last axis (size 0 = absent);
        leading axes are data sets. For a method of :data:`SUMS_METHODS` ``totals`` may be
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
        data sets of ``totals`` of shape ``(D, k)``); the other methods do not use one.
    rng : numpy.random.Generator
        Needed by the bootstrap methods only.
    n_resamples : int
        Bootstrap resamples.

    Returns
    -------
    ConfidenceInterval
        NaN where the interval is undefined: no conversation; with fewer than two clusters
        for the t, cluster-variance, beta-binomial and BCa intervals.

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
    - ``wilson-cluster-t``: Wilson at ``min(n*, N)``, ``n*`` of :func:`korn_graubard_size`, with t
      on ``k - 1`` degrees of freedom: Dean & Pagano's (2015) modified Wilson interval, what
      inspect_ai's ``ci_wilson(cluster=)`` computes (named ``korn-graubard`` here before 2026-12-04).
    - ``korn-graubard``: Korn & Graubard (1998), "Confidence intervals for proportions with small
      expected number of positive counts estimated from survey data", Survey Methodology 24:193-201:
      Clopper-Pearson at ``n*_df = n* (t_{N-1} / t_{k-1})^2`` (``t_d`` the two-sided quantile on ``d``
      degrees of freedom), capped at ``N``, and at ``N`` where ``p`` is 0 or 1 or the cluster variance
      is 0 (the rules of R's ``survey::svyciprop(method = "beta")`` and of its degrees-of-freedom
      version for NCHS, Parker et al. 2017, Vital Health Stat 2(175))::

          low  = B^-1(alpha / 2; x, n*_df - x + 1),  high = B^-1(1 - alpha / 2; x + 1, n*_df - x),  x = n*_df p

    - ``beta-binomial-profile`` and ``beta-binomial-bayes``: the beta-binomial model's profile
      likelihood and credible intervals of the mean (:mod:`estimators.stats._beta_binomial`).
    - ``bootstrap-percentile`` and ``bootstrap-bca``: :func:`estimators.cluster_bootstrap`
      (Davison & Hinkley 1997, section 3.8; Efron & Tibshirani 1993, section 14.3).
    """
    check_interval_method(method)
    if isinstance(totals, ClusterSums):
        return interval_of_sums(totals, method, confidence=confidence, rho=rho)
    if method in LIKELIHOOD_METHODS:
        low, high, _ = _likelihood_interval(method, totals, sizes, confidence)
        return ConfidenceInterval(low, high)
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
    """:func:`clustered_interval` of a method of :data:`SUMS_METHODS`, from the cluster sums."""
    if method not in SUMS_METHODS:
        raise ValueError(f"interval_of_sums computes {', '.join(SUMS_METHODS)}, not {method!r}")
    if method == "korn-graubard":
        return _korn_graubard(sums, confidence)
    N = sums.n
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = np.where(N > 0, sums.ones / np.where(N > 0, N, 1.0), np.nan)
    df = None
    if method == "wilson-cluster-t":
        size, df = np.minimum(_effective_size(sums), N), sums.clusters - 1
    else:
        if method == "wilson-kish-ucb" and rho is None:
            rho = _rho_bound(sums, RHO_BOUND_LEVEL)
        size = design_of_sums(sums, rho=rho).n_eff
        if method == "wilson-kish-t":
            df = sums.clusters - 1
    low, high = wilson_interval(p_hat, size, confidence, df=df)
    return ConfidenceInterval(low[()], high[()])


class IntervalDesign(NamedTuple):
    """What an interval used (:func:`interval_design`; floats, or arrays over data sets).

    ``rho_used``: the intra-cluster correlation of its design effect; ``deff``: its design effect; ``n_eff``:
    its effective size (:data:`INTERVAL_USES` says which for each method). NaN where the method has none
    (the bootstraps; ``rho_used`` of the cluster-variance methods) or no interval.
    """

    rho_used: float | np.ndarray
    deff: float | np.ndarray
    n_eff: float | np.ndarray


def interval_design(totals, sizes, method: str = DEFAULT_INTERVAL, *, confidence: float = 0.95,
                    rho=None) -> IntervalDesign:
    """The design that the interval ``method`` used on the data (``rho_used``, ``deff``, ``n_eff``).

    Parameters
    ----------
    totals, sizes, method, confidence, rho
        As :func:`clustered_interval`.

    Returns
    -------
    IntervalDesign
        - the Wilson-Kish methods: :func:`estimators.cluster_design` with their rho (the fixed one, the
          estimate or 1, or for ``wilson-kish-ucb`` its upper bound): Kish's ``deff`` and ``N / deff``;
        - ``wilson-cluster-t`` and ``korn-graubard``: no rho (NaN), ``n_eff`` the effective size of the
          cluster variance before any degrees-of-freedom adjustment (:func:`korn_graubard_size`; at most
          ``N`` for ``wilson-cluster-t``, which caps it) and ``deff = N / n_eff``;
        - the beta-binomial methods: the rho they estimate (maximum likelihood, or posterior mean) with
          Kish's ``deff`` at it and ``N / deff``;
        - the bootstraps: NaN: they use no rho and no effective size.
    """
    check_interval_method(method)
    sums = ClusterSums.of(totals, sizes)
    N = np.asarray(sums.n, dtype=float)
    if method.startswith("bootstrap"):
        nan = np.full(N.shape, np.nan)[()]
        return IntervalDesign(nan, nan, nan)
    if method in ("wilson-cluster-t", "korn-graubard"):
        size = _effective_size(sums)
        size = np.minimum(size, N) if method == "wilson-cluster-t" else size
        with np.errstate(divide="ignore", invalid="ignore"):
            return IntervalDesign(np.full(N.shape, np.nan)[()], (N / size)[()], np.asarray(size)[()])
    if method in LIKELIHOOD_METHODS:
        rho = _likelihood_interval(method, totals, sizes, confidence).rho
    elif method == "wilson-kish-ucb" and rho is None:
        rho = _rho_bound(sums, RHO_BOUND_LEVEL)
    design = design_of_sums(sums, rho=rho)
    return IntervalDesign(design.rho_used, design.deff, design.n_eff)
