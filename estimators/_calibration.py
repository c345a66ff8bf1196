"""Calibration of a judge's probabilities against labels: Platt scaling, isotonic regression,
cross-fitting by case, reliability tables, expected calibration error and AUROC.

The per-turn judge's ``p_t`` is an opinion (paper, "Diagnostics with judges"); it becomes a
probability only after it is calibrated against the labels of the pairs, in each language.
Calibration is cross-fitted: the cases are split into folds, the map of a fold is fitted on the
other folds, so a pair (both conversations of a case) is never in the sample that fits the map
applied to it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression
from scipy.special import expit, logit
from scipy.stats import rankdata

from ._intervals import wilson_interval

__all__ = ["CALIBRATION_METHODS", "Calibration", "CrossFit", "platt_fit", "isotonic_fit", "fit_calibration",
           "case_folds", "cross_fit", "expected_calibration_error", "calibration_bias", "reliability_table",
           "auroc"]

CALIBRATION_METHODS = ("raw", "platt", "isotonic")

#: Probabilities are clipped to [EPS, 1 - EPS] before the logit of Platt scaling.
_EPS = 1e-6


def _logit(p) -> np.ndarray:
    return logit(np.clip(np.asarray(p, dtype=float), _EPS, 1.0 - _EPS))


def _platt_loss(a, b, x, t, w):
    z = a[..., None] + b[..., None] * x
    return (w * (t * np.logaddexp(0.0, -z) + (1.0 - t) * np.logaddexp(0.0, z))).sum(axis=-1)


def platt_fit(p, y, weights=None, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Platt scaling: ``P(y = 1 | p) = expit(a + b logit p)``, fitted by maximum likelihood.

    Vectorised over leading axes: ``p`` and ``y`` of shape ``(..., n)`` fit one map per
    leading index (``weights`` 0/1 select each fit's sample, e.g. its training folds).

    Parameters
    ----------
    p : array_like
        Judge probabilities (clipped to ``[1e-6, 1 - 1e-6]``).
    y : array_like
        0/1 labels.
    weights : array_like, optional
        Non-negative weights (default 1).

    Returns
    -------
    ndarray, shape (..., 2)
        ``(a, b)``; ``(0, 1)`` is the identity.

    Notes
    -----
    Platt (1999), "Probabilistic outputs for support vector machines", section 2.2: the labels
    are replaced by the targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, which keeps the fit
    finite on separable samples. Newton-Raphson with step halving; a ridge of ``1e-9`` on the
    slope keeps it defined when every ``p`` of a sample is equal.
    """
    x = _logit(p)
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
    w = np.ones_like(x) if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), x.shape)
    n_pos = (w * y).sum(axis=-1, keepdims=True)
    n_neg = (w * (1.0 - y)).sum(axis=-1, keepdims=True)
    t = np.where(y == 1.0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    a = np.zeros(x.shape[:-1])
    b = np.zeros(x.shape[:-1])
    loss = _platt_loss(a, b, x, t, w)
    ridge = 1e-9
    for _ in range(max_iter):
        mu = expit(a[..., None] + b[..., None] * x)
        r = w * (mu - t)
        g_a, g_b = r.sum(axis=-1), (r * x).sum(axis=-1) + ridge * b
        v = w * mu * (1.0 - mu)
        h_aa, h_ab, h_bb = v.sum(axis=-1), (v * x).sum(axis=-1), (v * x * x).sum(axis=-1) + ridge
        det = h_aa * h_bb - h_ab * h_ab
        det = np.where(det > 0, det, np.inf)  # a degenerate sample takes no step
        step_a, step_b = (h_bb * g_a - h_ab * g_b) / det, (h_aa * g_b - h_ab * g_a) / det
        scale = np.ones_like(a)
        for _ in range(40):
            new_loss = _platt_loss(a - scale * step_a, b - scale * step_b, x, t, w)
            worse = new_loss > loss + 1e-12 * np.abs(loss)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        a, b, loss = a - scale * step_a, b - scale * step_b, np.minimum(new_loss, loss)
        if np.all(np.abs(scale * step_a) + np.abs(scale * step_b) < tol):
            break
    return np.stack([a, b], axis=-1)


def isotonic_fit(p, y, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic regression of ``y`` on ``p``: the non-decreasing step map closest to the labels.

    Returns
    -------
    knots, values : ndarray
        The distinct ``p`` and the fitted label rate at each; applied by linear
        interpolation between knots and held constant beyond them (:class:`Calibration`).

    Notes
    -----
    Pool-adjacent-violators (Barlow, Bartholomew, Bremner & Brunk 1972) as
    ``scipy.optimize.isotonic_regression``, on the labels grouped by distinct ``p`` (their
    mean, weighted by their count); Zadrozny & Elkan (2002) for its use in calibration.
    """
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(p) if weights is None else np.asarray(weights, dtype=float)
    keep = w > 0
    if not keep.any():
        raise ValueError("isotonic regression needs at least one observation with positive weight")
    knots, code = np.unique(p[keep], return_inverse=True)
    total = np.bincount(code, weights=w[keep], minlength=knots.size)
    mean = np.bincount(code, weights=(w * y)[keep], minlength=knots.size) / total
    return knots, isotonic_regression(mean, weights=total, increasing=True).x


@dataclass(frozen=True)
class Calibration:
    """A fitted calibration map; call it on probabilities.

    Attributes
    ----------
    method : {"raw", "platt", "isotonic"}
        ``raw`` is the identity.
    coef : ndarray or None
        ``(a, b)`` of Platt scaling.
    knots, values : ndarray or None
        The isotonic map.
    """

    method: str
    coef: np.ndarray | None = None
    knots: np.ndarray | None = None
    values: np.ndarray | None = None

    def __call__(self, p) -> np.ndarray:
        p = np.asarray(p, dtype=float)
        if self.method == "platt":
            return expit(self.coef[0] + self.coef[1] * _logit(p))
        if self.method == "isotonic":
            return np.interp(p, self.knots, self.values)
        return p.copy()


def _check_method(method: str) -> None:
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"method must be one of {', '.join(CALIBRATION_METHODS)}, got {method!r}")


def _check_labels(p, y):
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if p.shape != y.shape or p.ndim != 1:
        raise ValueError(f"p and y must be 1-D arrays of the same length, got shapes {p.shape} and {y.shape}")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("p must hold probabilities in [0, 1] (no NaN)")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y must hold 0/1 labels (no NaN)")
    return p, y


def fit_calibration(p, y, method: str) -> Calibration:
    """Fit a calibration map of ``method`` (``raw``, ``platt`` or ``isotonic``) on ``(p, y)``."""
    _check_method(method)
    p, y = _check_labels(p, y)
    if method == "platt":
        return Calibration("platt", coef=platt_fit(p, y))
    if method == "isotonic":
        knots, values = isotonic_fit(p, y)
        return Calibration("isotonic", knots=knots, values=values)
    return Calibration("raw")


def case_folds(groups, folds: int, *, rng: np.random.Generator) -> np.ndarray:
    """Fold (``0 .. folds-1``) of each row; all rows of a group (a case) share their fold.

    The distinct groups are shuffled with ``rng`` and dealt to the folds in turn, so the fold
    sizes differ by at most one group.
    """
    codes, uniques = pd.factorize(pd.Series(groups, dtype=object), use_na_sentinel=False)
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or not 2 <= folds <= len(uniques):
        raise ValueError(f"folds must be an integer from 2 to the number of groups ({len(uniques)}), got {folds!r}")
    fold_of_group = np.empty(len(uniques), dtype=np.int64)
    fold_of_group[rng.permutation(len(uniques))] = np.arange(len(uniques)) % folds
    return fold_of_group[codes]


@dataclass(frozen=True)
class CrossFit:
    """A cross-fitted calibration.

    Attributes
    ----------
    method : str
    calibrated : ndarray
        Out-of-fold calibrated probability of each fitted row.
    fold : ndarray
        Fold of each fitted row.
    maps : tuple of Calibration
        Map ``k`` was fitted on every fold but ``k`` and applies to the rows of fold ``k``.
    group_fold : dict
        Fold of each group.
    """

    method: str
    calibrated: np.ndarray
    fold: np.ndarray
    maps: tuple
    group_fold: dict

    def apply(self, p, groups) -> np.ndarray:
        """Calibrate other probabilities of the same groups (e.g. the earlier turns of the
        conversations), each with the map of its group's fold."""
        p = np.asarray(p, dtype=float)
        try:
            fold = np.fromiter((self.group_fold[g] for g in groups), dtype=np.int64, count=p.size)
        except KeyError as err:
            raise ValueError(f"group {err.args[0]!r} was not in the calibration sample") from None
        out = np.empty_like(p)
        for k, calibration in enumerate(self.maps):
            rows = fold == k
            out[rows] = calibration(p[rows])
        return out


def cross_fit(p, y, groups, method: str, *, folds: int = 5, rng: np.random.Generator) -> CrossFit:
    """Cross-fitted calibration: each fold is calibrated by the map fitted on the others.

    Parameters
    ----------
    p, y : array_like
        Judge probabilities and 0/1 labels (e.g. ``p`` at the last turn and the pair label).
    groups : array_like
        The case of each row: a case never sits in two folds.
    method : {"raw", "platt", "isotonic"}
    folds : int
    rng : numpy.random.Generator
        Shuffles the cases into folds.
    """
    _check_method(method)
    p, y = _check_labels(p, y)
    groups = pd.Series(groups, dtype=object).to_numpy(object)
    fold = case_folds(groups, folds, rng=rng)
    calibrated = np.empty_like(p)
    maps = []
    for k in range(folds):
        test = fold == k
        maps.append(fit_calibration(p[~test], y[~test], method))
        calibrated[test] = maps[-1](p[test])
    group_fold = dict(zip(groups.tolist(), fold.tolist()))
    return CrossFit(method, calibrated, fold, tuple(maps), group_fold)


def _bin_index(p, bins: int) -> np.ndarray:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an integer >= 1, got {bins!r}")
    return np.minimum((np.asarray(p, dtype=float) * bins).astype(np.int64), bins - 1)


def expected_calibration_error(p, y, *, bins: int = 10) -> float:
    """Expected calibration error over ``bins`` equal-width bins of ``p``.

    ``ECE = sum_b (n_b / N) |mean(p)_b - mean(y)_b|``: Naeini, Cooper & Hauskrecht (2015);
    Guo, Pleiss, Sun & Weinberger (2017), eq. (3). NaN for an empty sample.
    """
    p, y = _check_labels(p, y)
    if p.size == 0:
        return float("nan")
    b = _bin_index(p, bins)
    count = np.bincount(b, minlength=bins)
    gap = np.abs(np.bincount(b, weights=p, minlength=bins) - np.bincount(b, weights=y, minlength=bins))
    return float(gap.sum() / count.sum())


def calibration_bias(p, y) -> float:
    """Calibration bias, ``mean(p) - mean(y)`` (NaN for an empty sample)."""
    p, y = _check_labels(p, y)
    return float(p.mean() - y.mean()) if p.size else float("nan")


def reliability_table(p, y, *, bins: int = 10, confidence: float = 0.95) -> pd.DataFrame:
    """The reliability diagram's table: per equal-width bin of ``p``, the mean ``p`` against the
    label rate with its Wilson interval.

    Returns
    -------
    pandas.DataFrame
        ``bin, low, high, count, mean_p, label_rate, label_low, label_high`` (NaN in empty bins).
    """
    p, y = _check_labels(p, y)
    b = _bin_index(p, bins)
    count = np.bincount(b, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=bins) / count
        rate = np.bincount(b, weights=y, minlength=bins) / count
    low, high = wilson_interval(rate, count, confidence)
    edges = np.arange(bins + 1) / bins
    return pd.DataFrame({"bin": np.arange(bins), "low": edges[:-1], "high": edges[1:], "count": count,
                         "mean_p": mean_p, "label_rate": rate, "label_low": low, "label_high": high})


def auroc(score, positive) -> tuple[float, float]:
    """Area under the ROC curve of ``score`` for telling ``positive`` rows, with its standard error.

    The Mann-Whitney form with mid-ranks for ties: the probability that a positive row scores
    above a negative one (ties count one half). Standard error of Hanley & McNeil (1982), eq. (2)
    with ``Q1 = A / (2 - A)``, ``Q2 = 2 A^2 / (1 + A)``. ``(nan, nan)`` without both classes.
    """
    score = np.asarray(score, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if score.shape != positive.shape or np.isnan(score).any():
        raise ValueError("score and positive must have the same shape, and score no NaN")
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return float("nan"), float("nan")
    ranks = rankdata(score)
    area = (ranks[positive].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0)
    q1, q2 = area / (2.0 - area), 2.0 * area**2 / (1.0 + area)
    variance = (area * (1 - area) + (n1 - 1) * (q1 - area**2) + (n0 - 1) * (q2 - area**2)) / (n1 * n0)
    return float(area), float(np.sqrt(max(variance, 0.0)))
