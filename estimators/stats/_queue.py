"""The reviewers' queue: Erlang B and C of the M/M/R queue and the Allen-Cunneen mean wait.

Sources: Kleinrock 1975, *Queueing Systems* vol. 1, sections 3.5 and 3.7; Cooper 1981,
*Introduction to Queueing Theory*; Allen 1990. ``rho >= 1`` is an unstable queue: NaN, never a number.
"""
from __future__ import annotations

import numpy as np

__all__ = ["erlang_b", "erlang_c", "mean_wait_minutes"]


def erlang_b(offered_load, reviewers: int) -> np.ndarray:
    """Erlang B blocking probability of an M/M/R/R system, by the stable recursion.

    Parameters
    ----------
    offered_load : array_like of float
        ``A = a tau / 60`` in Erlangs (>= 0); vectorised.
    reviewers : int
        Number of servers ``R >= 1``.

    Returns
    -------
    ndarray
        ``B(R, A)`` from ``B(0) = 1``, ``B(k) = A B(k-1) / (k + A B(k-1))`` (Cooper 1981,
        *Introduction to Queueing Theory*, 2nd ed.; Kleinrock 1975, section 3.7), which never
        forms ``A^R`` or ``R!`` and so holds for thousands of servers. The loop runs over the
        servers, each step vectorised over ``offered_load``.
    """
    load = np.asarray(offered_load, dtype=float)
    b = np.ones_like(load)
    for k in range(1, int(reviewers) + 1):
        b = load * b / (k + load * b)
    return b


def erlang_c(offered_load, reviewers: int) -> np.ndarray:
    """Erlang C: the probability that a hand-off waits for a reviewer (M/M/R queue).

    Parameters
    ----------
    offered_load : array_like of float
        ``A`` in Erlangs (>= 0).
    reviewers : int
        ``R >= 1``.

    Returns
    -------
    ndarray
        ``C(R, A) = B / (1 - rho (1 - B))`` with ``B = erlang_b(A, R)`` and ``rho = A / R``
        (Kleinrock 1975, *Queueing Systems* vol. 1, section 3.5: the probability of queueing,
        written through Erlang B as in Cooper 1981); NaN where ``rho >= 1`` (no steady state).
    """
    load = np.asarray(offered_load, dtype=float)
    rho = load / reviewers
    b = erlang_b(load, reviewers)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = b / (1.0 - rho * (1.0 - b))
    return np.where(rho < 1.0, c, np.nan)


def mean_wait_minutes(offered_load, reviewers: int, review_minutes: float | np.ndarray, arrival_cv: float = 1.0,
                      service_cv: float | np.ndarray = 1.0) -> np.ndarray:
    """Mean wait before a reviewer takes a hand-off, in minutes.

    Parameters
    ----------
    offered_load : array_like of float
        ``A = a tau / 60`` in Erlangs.
    reviewers : int
        ``R >= 1``.
    review_minutes : float or ndarray
        Mean review time ``tau`` (> 0); one per load when the reviews mix kinds.
    arrival_cv, service_cv : float (``service_cv``: or ndarray, as ``review_minutes``)
        Coefficients of variation ``ca`` of the times between hand-offs and ``cs`` of the
        review times (1 and 1: Poisson arrivals and exponential reviews, the M/M/R queue).

    Returns
    -------
    ndarray
        ``W_q = C / (R mu - a)`` hours with ``mu = 60 / tau``, i.e. ``C tau / (R - A)``
        minutes (Kleinrock 1975, section 3.5), times ``(ca^2 + cs^2) / 2``, the Allen-Cunneen
        approximation of the GI/G/R queue (Allen 1990, *Probability, Statistics, and Queueing
        Theory*, 2nd ed.; Whitt 1993 reviews its accuracy); NaN where ``rho >= 1``.
    """
    load = np.asarray(offered_load, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = erlang_c(load, reviewers) * review_minutes / (reviewers - load)
    return wait * (arrival_cv ** 2 + service_cv ** 2) / 2.0
