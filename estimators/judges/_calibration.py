"""Calibration of a judge's probabilities against labels: Platt scaling, isotonic regression and
cross-fitting by case (reliability tables, expected calibration error and AUROC are in
:mod:`estimators.judges._calibration_measures`).

The per-turn judge's ``p_t`` is an opinion (paper, "Diagnostics with judges"); it becomes a
probability only after it is calibrated against the labels of the pairs, in each language.
Calibration is cross-fitted: the cases are split into folds, the map of a fold is fitted on the
other folds, so a pair (both conversations of a case) is never in the sample that fits the map
applied to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression
from scipy.special import expit, logit

from ..stats import check_choice, check_count

__all__ = ["CALIBRATION_METHODS", "Calibration", "CrossFit", "platt_fit", "isotonic_fit", "fit_calibration",
           "case_folds", "cross_fit"]

CALIBRATION_METHODS = ("raw", "platt", "isotonic")

#: Probabilities are clipped to [EPS, 1 - EPS] before the logit of Platt scaling.
_EPS = 1e-6
#: Values (fits x sample size) of one batch of Platt fits: small enough to stay in the cache.
_PLATT_BATCH = 1 << 16


def _logit(p) -> np.ndarray:
    return logit(np.clip(np.asarray(p, dtype=float), _EPS, 1.0 - _EPS))


def _total(values) -> np.ndarray:
    """The sum over each fit's sample (the last axis), kept as a column: one row per fit."""
    return np.add.reduce(values, axis=-1, keepdims=True)


def _platt_loss(z, t, s, w):
    """The loss of Platt scaling at ``z = a + b x``: ``sum_i w_i (t_i log(1 + e^-z_i) + s_i log(1 + e^z_i))``.

    ``log(1 + e^z) = max(z, 0) + log1p(e^-|z|)`` (and ``z`` by ``-z``), the sum that
    :func:`numpy.logaddexp` forms: both halves share ``log1p(e^-|z|)``, taken once.
    """
    shared = np.log1p(np.exp(-np.abs(z)))
    terms = t * (np.maximum(-z, 0.0) + shared) + s * (np.maximum(z, 0.0) + shared)
    return _total(terms if w is None else w * terms)


def _platt_rows(x, y, w, max_iter: int, tol: float) -> np.ndarray:
    """Platt fits of the rows of the logits ``x`` and labels ``y``, shape ``(fits, n)``: ``(fits, 2)``.

    The fits run together and each on its own: the sums run along its row, its step is halved
    alone, and a fit that has converged leaves the batch, so every row gets the coefficients it
    gets alone, bit for bit. Without weights (``w`` None) no product by a weight is taken (a
    weight of 1 changes no value).
    """
    def weigh(values):
        return values if w is None else w * values
    n_pos, n_neg = _total(weigh(y)), _total(weigh(1.0 - y))
    t = np.where(y == 1.0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    s = 1.0 - t
    coef = np.zeros((len(x), 2))
    fits = np.arange(len(x))  # the fits still running; x, t, s, w, a, b, z and loss hold their rows
    a = np.zeros((len(x), 1))
    b = np.zeros_like(a)
    z = a + b * x
    loss = _platt_loss(z, t, s, w)
    ridge = 1e-9
    for _ in range(max_iter):
        mu = expit(z)
        r = weigh(mu - t)
        g_a, g_b = _total(r), _total(r * x) + ridge * b
        v = weigh(mu) * (1.0 - mu)
        vx = v * x
        h_aa, h_ab, h_bb = _total(v), _total(vx), _total(vx * x) + ridge
        det = h_aa * h_bb - h_ab * h_ab
        det = np.where(det > 0, det, np.inf)  # a degenerate sample takes no step
        step_a, step_b = (h_bb * g_a - h_ab * g_b) / det, (h_aa * g_b - h_ab * g_a) / det
        scale = np.ones_like(a)
        for _ in range(40):
            new_loss = _platt_loss((a - scale * step_a) + (b - scale * step_b) * x, t, s, w)
            worse = new_loss > loss + 1e-12 * np.abs(loss)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        a, b, loss = a - scale * step_a, b - scale * step_b, np.minimum(new_loss, loss)
        done = (np.abs(scale * step_a) + np.abs(scale * step_b) < tol)[:, 0]
        if done.any():
            coef[fits[done]] = np.concatenate([a[done], b[done]], axis=1)
            going = ~done
            if not going.any():
                return coef
            fits, x, t, s, a, b, loss = fits[going], x[going], t[going], s[going], a[going], b[going], loss[going]
            w = None if w is None else w[going]
        z = a + b * x
    coef[fits] = np.concatenate([a, b], axis=1)
    return coef


def platt_fit(p, y, weights=None, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Platt scaling: ``P(y = 1 | p) = expit(a + b logit p)``, fitted by maximum likelihood.

    Vectorised over leading axes: ``p`` and ``y`` of shape ``(..., n)`` fit one map per
    leading index (``weights`` 0/1 select each fit's sample, e.g. its training folds), each
    the map its sample gets alone, bit for bit.

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
    finite on separable samples. Newton-Raphson with step halving, until a step moves ``|a| +
    |b|`` by less than ``tol``; a ridge of ``1e-9`` on the slope keeps it defined when every
    ``p`` of a sample is equal.
    """
    x = _logit(p)
    n = x.shape[-1]
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape).reshape(-1, n)
    w = None if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), x.shape).reshape(-1, n)
    return _platt_rows(x.reshape(-1, n), y, w, max_iter, tol).reshape(x.shape[:-1] + (2,))


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
    if weights is None:  # every weight 1: the sums of the weights are counts
        w = None
    else:
        w = np.asarray(weights, dtype=float)
        keep = w > 0
        p, y, w = p[keep], y[keep], w[keep]
    if not p.size:
        raise ValueError("isotonic regression needs at least one observation with positive weight")
    knots, code = np.unique(p, return_inverse=True)
    total = np.bincount(code, weights=w, minlength=knots.size).astype(float)
    mean = np.bincount(code, weights=y if w is None else w * y, minlength=knots.size) / total
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
        # the fields of the method are set (None raises as before)
        if self.method == "platt":
            coef = cast(np.ndarray, self.coef)
            return expit(coef[0] + coef[1] * _logit(p))
        if self.method == "isotonic":
            return np.interp(p, cast(np.ndarray, self.knots), cast(np.ndarray, self.values))
        return p.copy()


def _check_method(method: str) -> None:
    check_choice("method", method, CALIBRATION_METHODS)


def _check_labels(p, y, *, rows: bool = False):
    """``p`` and ``y`` as float arrays, checked: 1-D, or 2-D (one sample a row) where ``rows``."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if p.shape != y.shape or p.ndim not in ((1, 2) if rows else (1,)):
        shape = "1-D or 2-D arrays of the same shape" if rows else "1-D arrays of the same length"
        raise ValueError(f"p and y must be {shape}, got shapes {p.shape} and {y.shape}")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("p must hold probabilities in [0, 1] (no NaN)")
    if not ((y == 0) | (y == 1)).all():
        raise ValueError("y must hold 0/1 labels (no NaN)")
    return p, y


def _fit_samples(samples, method: str) -> list[Calibration]:
    """One map of ``method`` per checked 1-D sample ``(p, y)``: Platt's fits of the samples of one
    size run as one batch (:func:`platt_fit`, each the map its sample gets alone)."""
    if method == "raw":
        return [Calibration("raw") for _ in samples]
    if method == "isotonic":
        return [Calibration("isotonic", knots=knots, values=values)
                for knots, values in (isotonic_fit(p, y) for p, y in samples)]
    maps: list[Calibration | None] = [None] * len(samples)
    sizes = np.array([p.size for p, _ in samples])
    for size in np.unique(sizes):
        same = np.flatnonzero(sizes == size)
        for batch in np.array_split(same, -(-same.size * size // _PLATT_BATCH)):
            coef = platt_fit(np.stack([samples[i][0] for i in batch]), np.stack([samples[i][1] for i in batch]))
            for i, c in zip(batch, coef):
                maps[i] = Calibration("platt", coef=c)
    return cast(list[Calibration], maps)  # every sample is in one batch


def fit_calibration(p, y, method: str) -> Calibration | list[Calibration]:
    """Fit a calibration map of ``method`` (``raw``, ``platt`` or ``isotonic``) on ``(p, y)``.

    2-D ``p`` and ``y`` hold one sample a row (e.g. Monte Carlo data sets): one map per row, a
    list, each the map its row gets alone (their Platt fits run together).
    """
    _check_method(method)
    p, y = _check_labels(p, y, rows=True)
    maps = _fit_samples(list(zip(np.atleast_2d(p), np.atleast_2d(y))), method)
    return maps if p.ndim == 2 else maps[0]


def _group_values(groups):
    """``groups`` as they are factorized and looked up: an integer array as it is, anything else as
    Python objects (so ``1`` and ``1.0`` are one group, and a tuple is one value)."""
    if isinstance(groups, np.ndarray) and groups.dtype.kind in "biu":
        return groups
    return pd.Series(groups, dtype=object)


def _deal(n_groups: int, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold of each of ``n_groups`` distinct groups: shuffled with ``rng``, dealt in turn."""
    check_count("folds", folds, 2, n_groups, note=" (the number of groups)")
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    fold_of_group[rng.permutation(n_groups)] = np.arange(n_groups) % folds
    return fold_of_group


def case_folds(groups, folds: int, *, rng: np.random.Generator) -> np.ndarray:
    """Fold (``0`` to ``folds-1``) of each row; all rows of a group (a case) share their fold.

    The distinct groups are shuffled with ``rng`` and dealt to the folds in turn, so the fold
    sizes differ by at most one group.
    """
    codes, uniques = pd.factorize(_group_values(groups), use_na_sentinel=False)
    return _deal(len(uniques), folds, rng)[codes]


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
    groups : pandas.Index
        The distinct groups.
    group_fold : ndarray
        Fold of each of ``groups``.
    """

    method: str
    calibrated: np.ndarray
    fold: np.ndarray
    maps: tuple
    groups: pd.Index
    group_fold: np.ndarray

    def apply(self, p, groups) -> np.ndarray:
        """Calibrate other probabilities of the same groups (e.g. the earlier turns of the
        conversations), each with the map of its group's fold."""
        p = np.asarray(p, dtype=float)
        values = _group_values(groups)
        where = self.groups.get_indexer(values)
        if (where < 0).any():
            unknown = pd.Series(values, dtype=object).iloc[np.flatnonzero(where < 0)[0]]
            raise ValueError(f"group {unknown!r} was not in the calibration sample")
        fold = self.group_fold[where]
        out = np.empty_like(p)
        for k, calibration in enumerate(self.maps):
            rows = fold == k
            out[rows] = calibration(p[rows])
        return out


def cross_fit(p, y, groups, method: str, *, folds: int = 5, rng) -> CrossFit | list[CrossFit]:
    """Cross-fitted calibration: each fold is calibrated by the map fitted on the others.

    Parameters
    ----------
    p, y : array_like
        Judge probabilities and 0/1 labels (e.g. ``p`` at the last turn and the pair label); 2-D
        for one sample a row (e.g. Monte Carlo data sets), each cross-fitted on its own folds.
    groups : array_like
        The case of each row: a case never sits in two folds (1-D: the same cases in every sample).
    method : {"raw", "platt", "isotonic"}
    folds : int
    rng : numpy.random.Generator, or a sequence of them
        Shuffles the cases into folds (as :func:`case_folds`); with 2-D ``p``, one generator per
        sample, or one for all, sample after sample.

    Returns
    -------
    CrossFit, or a list of them (2-D ``p``: one per sample, each what its row gives alone; the
    Platt fits of all samples and folds run together).
    """
    _check_method(method)
    p, y = _check_labels(p, y, rows=True)
    rows_p, rows_y = np.atleast_2d(p), np.atleast_2d(y)
    rngs = [rng] * len(rows_p) if isinstance(rng, np.random.Generator) else list(rng)
    if len(rngs) != len(rows_p):
        raise ValueError(f"give one generator per sample ({len(rows_p)}), got {len(rngs)}")
    codes, uniques = pd.factorize(_group_values(groups), use_na_sentinel=False)
    group_folds = [_deal(len(uniques), folds, one) for one in rngs]
    fold = np.stack([group_fold[codes] for group_fold in group_folds])
    maps = _fit_samples([(row_p[row_fold != k], row_y[row_fold != k])
                         for row_p, row_y, row_fold in zip(rows_p, rows_y, fold) for k in range(folds)], method)
    index = pd.Index(uniques, tupleize_cols=False)
    fits = []
    for i, (row_p, row_fold, group_fold) in enumerate(zip(rows_p, fold, group_folds)):
        row_maps = tuple(maps[i * folds:(i + 1) * folds])
        calibrated = np.empty_like(row_p)
        for k, calibration in enumerate(row_maps):
            test = row_fold == k
            calibrated[test] = calibration(row_p[test])
        fits.append(CrossFit(method, calibrated, row_fold, row_maps, index, group_fold))
    return fits if p.ndim == 2 else fits[0]
