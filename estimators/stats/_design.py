"""The design effect of clustered 0/1 outcomes, as SPEC section 5 defines it: the one rule.

Every part of the package that measures a design effect from data (the summary of ``score``,
the inspect_ai metric, ``compare``, the exact coverage, the planner and the studies) calls
:func:`cluster_design`, so the rule for ``m_bar`` and for an undefined rho lives here only.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._intervals import design_effect

__all__ = ["ClusterSums", "ClusterDesign", "cluster_design", "design_of_sums", "anova_icc", "size_weighted_mean",
           "RHO_WHEN_UNDEFINED"]

#: ``rho_used`` when rho cannot be estimated and is not fixed (SPEC section 5, changed 2026-12-01):
#: the interval must not assume an independence that the data cannot show.
RHO_WHEN_UNDEFINED = 1.0


class ClusterSums(NamedTuple):
    """The sums over clusters that every clustered interval of the package is a function of.

    With ``y_j`` ones out of ``n_j`` conversations in cluster ``j``: ``n = sum n_j``,
    ``clusters`` = number of ``n_j > 0``, ``ones = sum y_j``, ``ones_sq = sum y_j^2``,
    ``ones_sq_over_size = sum y_j^2 / n_j``, ``ones_size = sum y_j n_j`` and
    ``size_sq = sum n_j^2``. Exact coverage enumerates these sums instead of data sets.
    """

    n: np.ndarray | float
    clusters: np.ndarray | float
    ones: np.ndarray | float
    ones_sq: np.ndarray | float
    ones_sq_over_size: np.ndarray | float
    ones_size: np.ndarray | float
    size_sq: np.ndarray | float

    @classmethod
    def of(cls, totals, sizes) -> ClusterSums:
        """The sums of cluster totals ``(..., k)`` and sizes (broadcastable; 0 = absent cluster)."""
        y = np.asarray(totals, dtype=float)
        n = np.broadcast_to(np.asarray(sizes, dtype=float), y.shape)
        present = n > 0
        return cls(n.sum(axis=-1), present.sum(axis=-1), y.sum(axis=-1), (y * y).sum(axis=-1),
                   np.where(present, y * y / np.where(present, n, 1.0), 0.0).sum(axis=-1),
                   (y * n).sum(axis=-1), (n * n).sum(axis=-1))

    @classmethod
    def balanced(cls, ones, ones_sq, clusters: int, size: int) -> ClusterSums:
        """The sums of ``clusters`` clusters of ``size`` each, from ``Y = sum y_j`` and ``S = sum y_j^2``."""
        Y, S = np.broadcast_arrays(np.asarray(ones, dtype=float), np.asarray(ones_sq, dtype=float))
        full = np.ones_like(Y)
        return cls(full * clusters * size, full * clusters, Y, S, S / size, Y * size, full * clusters * size**2)


def anova_icc(totals, sizes, *, truncate: bool = True):
    """One-way ANOVA estimator of the intra-cluster correlation of a 0/1 outcome.

    Parameters
    ----------
    totals : array_like, shape (..., k)
        Number of ones in each of the ``k`` clusters (last axis).
    sizes : array_like, broadcastable to ``totals``
        Cluster sizes ``n_j`` (0 = absent cluster).
    truncate : bool
        Clip the estimate to ``[0, 1]`` (SPEC section 5). ``False`` gives the raw value,
        which can be negative.

    Returns
    -------
    rho : ndarray or float
        NaN where undefined: fewer than two clusters, every cluster of size 1
        (no within-cluster degrees of freedom) or no variation at all.

    Notes
    -----
    Donner (1986), with ``n0 = (N - sum n_j^2 / N) / (k - 1)`` for unequal sizes::

        MSB = (sum y_j^2 / n_j - Y^2 / N) / (k - 1)
        MSW = (Y - sum y_j^2 / n_j) / (N - k)
        rho = (MSB - MSW) / (MSB + (n0 - 1) MSW)

    SPEC section 5 reports rho as null where it is undefined and builds the interval with
    ``rho_used = 1`` then (:func:`cluster_design`).
    """
    return _anova(ClusterSums.of(totals, sizes), truncate=truncate)[0]


def _anova(sums: ClusterSums, *, truncate: bool = True):
    """``(rho, msb, msw, n0)`` of :func:`anova_icc` from the sums; rho NaN where undefined."""
    N, k, Y, sq = sums.n, sums.clusters, sums.ones, sums.ones_sq_over_size
    with np.errstate(divide="ignore", invalid="ignore"):
        msb = (sq - Y * Y / N) / (k - 1)
        msw = (Y - sq) / (N - k)
        n0 = (N - sums.size_sq / N) / (k - 1)
        denom = msb + (n0 - 1.0) * msw
        rho = (msb - msw) / denom
    undefined = (k < 2) | (N - k <= 0) | ~(np.abs(denom) > 1e-12)
    rho = np.where(undefined, np.nan, rho)
    if truncate:
        rho = np.clip(rho, 0.0, 1.0)
    return (rho[()] if np.ndim(rho) == 0 else rho), msb, msw, n0


class ClusterDesign(NamedTuple):
    """The clustering of one rate (floats, or arrays over data sets).

    Attributes
    ----------
    n : total conversations ``N``.
    clusters : number of clusters (scenarios) ``k`` with at least one conversation.
    m_bar : size-weighted mean cluster size ``sum n_j^2 / N``.
    rho : ANOVA estimate of the intra-cluster correlation, NaN where undefined.
    rho_used : the rho of the design effect: the fixed one, else ``rho``, else 1.
    deff : ``1 + (m_bar - 1) rho_used``.
    n_eff : ``N / deff``; NaN where ``N = 0``.
    """

    n: float | np.ndarray
    clusters: int | np.ndarray
    m_bar: float | np.ndarray
    rho: float | np.ndarray
    rho_used: float | np.ndarray
    deff: float | np.ndarray
    n_eff: float | np.ndarray


def size_weighted_mean(sizes):
    """``m_bar = sum n_j^2 / N`` over the last axis: the mean cluster size a conversation sees.

    Equal to ``N / k`` when every cluster has the same size, larger otherwise: with cluster
    sizes of mean ``m`` and coefficient of variation ``cv`` it is ``m (1 + cv^2)`` (Eldridge,
    Ashby & Kerry 2006, eq. 4, with the population variance of the sizes). NaN where ``N = 0``.
    """
    n = np.asarray(sizes, dtype=float)
    total = n.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        m_bar = np.where(total > 0, (n * n).sum(axis=-1) / np.where(total > 0, total, 1.0), np.nan)
    return m_bar[()] if np.ndim(m_bar) == 0 else m_bar


def cluster_design(totals, sizes, *, rho=None) -> ClusterDesign:
    """Design effect and effective size of a clustered 0/1 outcome (SPEC section 5).

    Parameters
    ----------
    totals : array_like, shape (..., k)
        Ones in each cluster, clusters on the last axis.
    sizes : array_like, broadcastable to ``totals``
        Conversations in each cluster; 0 marks an absent cluster.
    rho : float or array_like, optional
        A fixed intra-cluster correlation (``--rho``); else the truncated ANOVA estimate.

    Returns
    -------
    ClusterDesign

    Notes
    -----
    SPEC section 5 (changed 2026-12-01)::

        m_bar    = sum_j n_j^2 / N
        rho      = ANOVA estimator (Donner 1986), truncated to [0, 1]; undefined with one
                   cluster, clusters all of size 1, or no variation
        rho_used = fixed rho, else rho, else 1
        deff     = 1 + (m_bar - 1) rho_used            (Kish 1965)
        n_eff    = N / deff

    With unequal sizes ``deff = 1 + ((cv^2 + 1) N / k - 1) rho`` (Eldridge, Ashby & Kerry 2006);
    ``N / k`` in place of ``m_bar`` understates it.

    Examples
    --------
    Three scenarios of 1, 2 and 5 conversations, no variation of the outcome (rho undefined):

    >>> d = cluster_design([0, 0, 0], [1, 2, 5])
    >>> float(d.m_bar), bool(np.isnan(d.rho)), float(d.rho_used), float(d.deff), float(d.n_eff)
    (3.75, True, 1.0, 3.75, 2.1333333333333333)
    """
    return design_of_sums(ClusterSums.of(totals, sizes), rho=rho)


def design_of_sums(sums: ClusterSums, *, rho=None) -> ClusterDesign:
    """:func:`cluster_design` from the cluster sums (:class:`ClusterSums`)."""
    total, clusters = sums.n, sums.clusters
    with np.errstate(divide="ignore", invalid="ignore"):
        m_bar = np.where(total > 0, sums.size_sq / np.where(total > 0, total, 1.0), np.nan)
    estimate = _anova(sums)[0]
    used = np.where(np.isnan(estimate), RHO_WHEN_UNDEFINED, estimate) if rho is None else np.asarray(rho, float)
    deff = design_effect(m_bar, used)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(total > 0, total / deff, np.nan)
    out = np.broadcast_arrays(total, clusters, m_bar, estimate, used, deff, n_eff)
    if out[0].ndim:
        return ClusterDesign(*out)
    return ClusterDesign(float(out[0]), int(out[1]), *(float(x) for x in out[2:]))
