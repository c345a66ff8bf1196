"""Wilson intervals and the Kish design effect formula.

All functions are vectorised: they broadcast over their array arguments, so one call
computes the intervals of many data sets (as Monte Carlo studies need).
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from ._checks import check_level

__all__ = ["ConfidenceInterval", "WilsonKishInterval", "z_value", "critical_value", "wilson_interval", "design_effect",
           "wilson_kish_interval"]

_STANDARD_NORMAL = NormalDist()


class ConfidenceInterval(NamedTuple):
    """Lower and upper bounds of a two-sided interval (floats, or arrays over data sets).

    Every interval of the package is one, as ``scipy.stats`` results give theirs.
    """

    low: float | np.ndarray
    high: float | np.ndarray


class WilsonKishInterval(NamedTuple):
    """Result of :func:`wilson_kish_interval`: the bounds with the design effect and effective size."""

    low: float | np.ndarray
    high: float | np.ndarray
    deff: float | np.ndarray
    n_eff: float | np.ndarray

    @property
    def interval(self) -> ConfidenceInterval:
        """``(low, high)`` as a :class:`ConfidenceInterval`."""
        return ConfidenceInterval(self.low, self.high)


def z_value(confidence: float = 0.95) -> float:
    """Two-sided standard-normal quantile for ``confidence`` (0.95 -> 1.959964).

    The standard library's :meth:`statistics.NormalDist.inv_cdf` (Wichura's AS241, accurate to
    double precision; a test checks it against ``scipy.stats.norm.ppf``), so that scoring with
    a Wilson interval needs no scipy, whose import takes longer than a small log's scoring.
    """
    confidence = check_level("confidence", confidence)
    level = 0.5 + confidence / 2.0  # 1.0 when confidence is within an ulp of 1: an infinite quantile, as scipy's
    return _STANDARD_NORMAL.inv_cdf(level) if level < 1.0 else math.inf


def _once_when_constant(function, *args) -> np.ndarray:
    """``function(*args)`` over the broadcast arguments, evaluated once when they are constant.

    The t and F quantiles of intervals over many data sets (a study's replications, the states
    of an exact enumeration) mostly share their degrees of freedom: the same array, at the cost
    of one value.
    """
    args = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in args))
    if args[0].size and all((a == a.flat[0]).all() for a in args):
        return np.full(args[0].shape, function(*(a.flat[0] for a in args)))
    return np.asarray(function(*args))


def critical_value(confidence: float = 0.95, df=None):
    """Two-sided critical value: the normal quantile, or Student's t on ``df`` degrees of freedom.

    ``df`` broadcasts; the value is NaN where ``df < 1`` (t on no degree of freedom is undefined).
    """
    z = z_value(confidence)
    if df is None:
        return z
    from scipy.special import stdtrit  # here: the normal quantile alone needs no scipy

    df = np.asarray(df, dtype=float)
    level = 0.5 + float(confidence) / 2.0
    with np.errstate(invalid="ignore"):
        t = _once_when_constant(lambda d: stdtrit(d, level), np.where(df >= 1, df, 1.0))
    return np.where(df >= 1, t, np.nan)


def wilson_interval(p_hat, n, confidence: float = 0.95, *, df=None):
    """Wilson score interval of a proportion, with a possibly fractional sample size.

    Parameters
    ----------
    p_hat : array_like
        Observed proportion(s).
    n : array_like
        Sample size(s); an effective size ``n / deff`` may be fractional.
    confidence : float
        Two-sided confidence level.
    df : array_like, optional
        Degrees of freedom of a Student-t critical value in place of the normal quantile
        (:func:`critical_value`); NaN bounds where ``df < 1``.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` arrays; NaN where ``n <= 0`` or ``p_hat`` is NaN (undefined, never 0 or 1).

    Notes
    -----
    Wilson (1927); Brown, Cai & DasGupta (2001), eq. (4); identical to R
    ``prop.test(x, n, correct = FALSE)$conf.int``:

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

    With ``df``, ``z`` is the t quantile (as in Korn & Graubard 1998 and inspect_ai's
    ``ci_wilson(cluster=)``).
    """
    z = critical_value(confidence, df)
    p_hat = np.asarray(p_hat, dtype=float)
    n = np.asarray(n, dtype=float)
    valid = (n > 0) & np.isfinite(p_hat) & np.isfinite(z)
    n_safe = np.where(valid, n, 1.0)
    p_safe = np.where(valid, p_hat, 0.5)
    denom = 1.0 + z * z / n_safe
    centre = (p_safe + z * z / (2.0 * n_safe)) / denom
    half = z / denom * np.sqrt(np.maximum(p_safe * (1.0 - p_safe), 0.0) / n_safe + z * z / (4.0 * n_safe**2))
    low = np.where(valid, np.clip(centre - half, 0.0, 1.0), np.nan)
    high = np.where(valid, np.clip(centre + half, 0.0, 1.0), np.nan)
    return ConfidenceInterval(low, high)


def design_effect(m_bar, rho):
    """Kish (1965) design effect ``deff = 1 + (m_bar - 1) * rho``.

    The formula alone; :func:`estimators.cluster_design` takes ``m_bar`` and rho from data as
    SPEC section 5 says, and everything that measures a design effect goes through it.
    """
    return 1.0 + (np.asarray(m_bar, dtype=float) - 1.0) * np.asarray(rho, dtype=float)


def wilson_kish_interval(errors, n, m_bar, rho, confidence: float = 0.95) -> WilsonKishInterval:
    """Wilson interval with the Kish effective size ``n_eff = n / (1 + (m_bar - 1) rho)``.

    The paper's interval (section 5, "Rates and intervals"): :func:`wilson_interval` of
    ``errors / n`` at ``n_eff``, with ``deff`` from :func:`design_effect` (Kish 1965).

    Returns
    -------
    WilsonKishInterval
        ``low``, ``high``, ``deff`` and ``n_eff`` (arrays; the bounds and ``n_eff`` are NaN
        where ``n = 0``); ``.interval`` is ``(low, high)`` as a :class:`ConfidenceInterval`.
    """
    errors = np.asarray(errors, dtype=float)
    n = np.asarray(n, dtype=float)
    deff = design_effect(m_bar, rho)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = np.where(n > 0, errors / np.where(n > 0, n, 1.0), np.nan)
        n_eff = np.where(n > 0, n / deff, np.nan)
    low, high = wilson_interval(p_hat, n_eff, confidence)
    return WilsonKishInterval(low, high, deff, n_eff)
