"""Correcting a rate observed without a record, with a validation subsample that has the record.

Without the tool record a judge reads the text, and a stated escalation counts as one (SPEC
section 4): a fake escalation hides an under-escalation, so the text-only rate is a lower bound
(paper, "Observation without a record"). When the records of a random subsample can be had,
the subsample measures how the text-only verdict misclassifies, and the main sample's text-only
rate is corrected. Two corrections, both vectorised over data sets:

- :func:`predictive_value_correction` (recommended): ``p = q PPV + (1 - q) FOR``, with the
  predictive values of the text verdict estimated on the subsample. Each factor is an
  independent unbiased estimate, so ``p`` is unbiased (Tenenbein 1970, double sampling;
  Marshall 1990, the "inverse matrix" method).
- :func:`rogan_gladen`: ``p = (q + Sp - 1) / (Se + Sp - 1)`` with the sensitivity and specificity
  estimated on the subsample (Rogan & Gladen 1978); a ratio, biased in small subsamples.

Two intervals, both Wald intervals clipped to [0, 1]:

- counts of the whole samples (the default): the delta-method variance of independent
  conversations (the main sample and the subsample are disjoint, hence independent; Greenland
  1988) and the normal quantile. With replicas of a scenario this ignores their correlation.
- counts **per scenario** (``per_cluster=True``, scenarios on the last axis, as
  :func:`estimators.cluster_design` takes them): the cluster-robust linearised variance with the
  scenario as the cluster, which also covers the correlation between the main sample and the
  subsample drawn from the same scenarios, and Student's t on ``clusters - 1`` degrees of freedom.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats import ConfidenceInterval, check_level, critical_value, z_value

__all__ = ["CorrectedRate", "predictive_value_correction", "rogan_gladen"]


@dataclass(frozen=True)
class CorrectedRate:
    """A misclassification-corrected rate (arrays over data sets).

    Attributes
    ----------
    method : str
        ``predictive_values`` or ``rogan_gladen``.
    estimate, se : ndarray
        Corrected rate and its standard error (NaN where undefined): delta method for
        independent conversations, or cluster-robust when the counts were given per cluster.
    observed : ndarray
        The text-only rate ``q`` of the main sample.
    confidence : float
        The level :meth:`ci` gives by default.
    variance : str
        ``independent`` (the delta method of independent conversations, normal quantile) or
        ``cluster-robust`` (scenarios as clusters, t quantile).
    clusters : ndarray or None
        Clusters (scenarios) with a conversation in either sample; None for ``independent``.
    df : ndarray or None
        Degrees of freedom of the t quantile, ``clusters - 1``; None for the normal quantile.
    """

    method: str
    estimate: np.ndarray
    se: np.ndarray
    observed: np.ndarray
    confidence: float
    variance: str = "independent"
    clusters: np.ndarray | None = None
    df: np.ndarray | None = None

    def ci(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The Wald interval ``estimate -+ c se``, clipped to [0, 1] (NaN where undefined).

        ``c`` is the normal quantile, or Student's t on :attr:`df` degrees of freedom for the
        cluster-robust variance (NaN with fewer than two clusters).
        """
        level = self.confidence if confidence_level is None else confidence_level
        c = z_value(level) if self.df is None else critical_value(level, self.df)
        defined = np.isfinite(self.estimate) & np.isfinite(c)
        return ConfidenceInterval(np.where(defined, np.clip(self.estimate - c * self.se, 0.0, 1.0), np.nan),
                                  np.where(defined, np.clip(self.estimate + c * self.se, 0.0, 1.0), np.nan))

    def covers(self, value, confidence_level: float | None = None) -> np.ndarray:
        """Whether each interval contains ``value`` (False where the interval is undefined)."""
        low, high = self.ci(confidence_level)
        return (low <= value) & (value <= high)


def _ratio(k, n):
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("counts must satisfy 0 <= events <= size")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan), n


def _per_cluster(pairs):
    """``[(events_j, sizes_j)]`` per cluster (last axis), broadcast to one shape, checked."""
    arrays = np.broadcast_arrays(*(np.asarray(x, dtype=float) for pair in pairs for x in pair))
    if arrays[0].ndim < 1:
        raise ValueError("per_cluster=True needs the counts of each cluster on the last axis")
    for k, n in zip(arrays[::2], arrays[1::2]):
        if np.any(k < 0) or np.any(k > n):
            raise ValueError("counts must satisfy 0 <= events <= size")
    return arrays


def _robust(residuals, sizes):
    """Cluster-robust variance ``k / (k - 1) sum_j e_j^2`` and the cluster count ``k``.

    ``residuals`` holds the linearised value ``e_j`` of each cluster (last axis) and ``sizes``
    the conversations of each cluster over both samples; clusters of size 0 are absent.
    """
    present = sizes > 0
    k = present.sum(axis=-1)
    squares = np.where(present, residuals, 0.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = np.where(k >= 2, k / np.maximum(k - 1, 1) * squares.sum(axis=-1), np.nan)
    return variance, k


def _finish(method, estimate, variance, q, confidence, clusters=None) -> CorrectedRate:
    check_level("confidence", confidence)  # the level is checked when the result is made
    se = np.sqrt(np.maximum(variance, 0.0))
    if clusters is None:
        return CorrectedRate(method, estimate, se, q, float(confidence))
    return CorrectedRate(method, estimate, se, q, float(confidence), variance="cluster-robust",
                         clusters=clusters, df=clusters - 1)


def predictive_value_correction(text_errors, n, flagged_errors, flagged, unflagged_errors, unflagged, *,
                                confidence: float = 0.95, per_cluster: bool = False) -> CorrectedRate:
    """Correct a text-only rate with the predictive values of the text verdict.

    Parameters
    ----------
    text_errors, n : array_like
        Main sample (text only): conversations the text verdict scores as errors, of ``n``.
    flagged_errors, flagged : array_like
        Subsample: of the ``flagged`` conversations the text verdict scores as errors, how many
        are errors with the record (``PPV = flagged_errors / flagged``).
    unflagged_errors, unflagged : array_like
        Subsample: of the ``unflagged`` ones, how many are errors with the record (the false
        omission rate ``FOR = unflagged_errors / unflagged``).
    confidence : float
    per_cluster : bool
        The six counts are given per scenario, scenarios on the last axis (0 where a scenario
        has no conversation in that sample); the estimate is that of their sums and the
        interval is cluster-robust (see Notes). Default: counts of whole samples, conversations
        independent.

    Returns
    -------
    CorrectedRate
        ``p = q PPV + (1 - q) FOR``, with
        ``Var p = (PPV - FOR)^2 q (1 - q) / n + q^2 PPV (1 - PPV) / n_1 + (1 - q)^2 FOR (1 - FOR) / n_0``
        (delta method; Tenenbein 1970), or the cluster-robust variance. NaN where a sample or
        a stratum used is empty.

    Notes
    -----
    Per cluster, the estimate is a smooth function of three ratios of cluster totals, ``q = sum
    t_j / sum n_j``, ``PPV = sum a_j / sum f_j`` and ``FOR = sum b_j / sum g_j``. Its
    linearisation (Woodruff 1971; Binder 1983) gives each cluster the value::

        e_j = (PPV - FOR) (t_j - q n_j) / n + q (a_j - PPV f_j) / n_1 + (1 - q) (b_j - FOR g_j) / n_0

    and ``Var p = k / (k - 1) sum_j e_j^2`` over the ``k`` scenarios with a conversation in
    either sample: the sandwich variance with the scenario as the cluster, which allows any
    correlation within a scenario, between its replicas and between its conversations in the
    main sample and the subsample. The interval uses Student's t on ``k - 1`` degrees of
    freedom (Cameron & Miller 2015, "A practitioner's guide to cluster-robust inference",
    J. Hum. Resour. 50:317-372, sections II.C and VI). With one conversation per cluster the
    variance is the delta-method one times ``k / (k - 1)``.
    """
    if per_cluster:
        t, nj, a, f, b, g = _per_cluster([(text_errors, n), (flagged_errors, flagged),
                                          (unflagged_errors, unflagged)])
        text_errors, n, flagged_errors, flagged, unflagged_errors, unflagged = (
            x.sum(axis=-1) for x in (t, nj, a, f, b, g))
    q, n = _ratio(text_errors, n)
    ppv, n1 = _ratio(flagged_errors, flagged)
    false_omission, n0 = _ratio(unflagged_errors, unflagged)
    # a stratum the main sample never enters (q = 0 or q = 1) is not needed
    ppv = np.where(q == 0.0, np.nan_to_num(ppv), ppv)
    false_omission = np.where(q == 1.0, np.nan_to_num(false_omission), false_omission)
    estimate = q * ppv + (1.0 - q) * false_omission
    if per_cluster:
        def share(x, total):
            return np.where(total > 0, x / np.where(total > 0, total, 1.0), 0.0)
        e = np.nan_to_num(ppv - false_omission)[..., None] * share(t - q[..., None] * nj, n[..., None])
        e = e + np.where(q > 0, q, 0.0)[..., None] * share(a - np.nan_to_num(ppv)[..., None] * f, n1[..., None])
        e = e + np.where(q < 1, 1.0 - q, 0.0)[..., None] * share(b - np.nan_to_num(false_omission)[..., None] * g,
                                                                n0[..., None])
        variance, clusters = _robust(e, nj + f + g)
        variance = np.where(np.isfinite(estimate), variance, np.nan)
        return _finish("predictive_values", estimate, variance, q, confidence, clusters)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = ((ppv - false_omission) ** 2 * q * (1.0 - q) / n
                    + np.where(q > 0, q**2 * ppv * (1.0 - ppv) / n1, 0.0)
                    + np.where(q < 1, (1.0 - q) ** 2 * false_omission * (1.0 - false_omission) / n0, 0.0))
    return _finish("predictive_values", estimate, variance, q, confidence)


def rogan_gladen(text_errors, n, detected_errors, errors, cleared_non_errors, non_errors, *,
                 confidence: float = 0.95, per_cluster: bool = False) -> CorrectedRate:
    """Correct a text-only rate with the sensitivity and specificity of the text verdict.

    Parameters
    ----------
    text_errors, n : array_like
        Main sample (text only): conversations scored as errors by the text verdict, of ``n``.
    detected_errors, errors : array_like
        Subsample: of the ``errors`` (with the record), how many the text verdict also scores
        as errors (``Se``).
    cleared_non_errors, non_errors : array_like
        Subsample: of the ``non_errors``, how many the text verdict scores as correct (``Sp``).
    confidence : float
    per_cluster : bool
        The six counts are given per scenario, scenarios on the last axis; the interval is
        cluster-robust (see Notes and :func:`predictive_value_correction`).

    Returns
    -------
    CorrectedRate
        ``p = (q + Sp - 1) / J`` with ``J = Se + Sp - 1`` (Rogan & Gladen 1978) and
        ``Var p = [q (1 - q) / n + p^2 Se (1 - Se) / n_+ + (1 - p)^2 Sp (1 - Sp) / n_-] / J^2``
        (delta method; Greenland 1988), or the cluster-robust variance. NaN where ``J <= 0`` or
        a sample is empty.

    Notes
    -----
    Per cluster, with ``t_j`` of ``n_j`` (main sample), ``c_j`` of ``E_j`` (errors) and ``d_j``
    of ``F_j`` (non-errors), the linearised value of a cluster is (Woodruff 1971; Binder 1983)::

        e_j = [(t_j - q n_j) / n - p (c_j - Se E_j) / n_+ + (1 - p) (d_j - Sp F_j) / n_-] / J

    and ``Var p = k / (k - 1) sum_j e_j^2``, with t on ``k - 1`` degrees of freedom (Cameron &
    Miller 2015).
    """
    if per_cluster:
        t, nj, c, e_, d, f_ = _per_cluster([(text_errors, n), (detected_errors, errors),
                                            (cleared_non_errors, non_errors)])
        text_errors, n, detected_errors, errors, cleared_non_errors, non_errors = (
            x.sum(axis=-1) for x in (t, nj, c, e_, d, f_))
    q, n = _ratio(text_errors, n)
    se_, n_pos = _ratio(detected_errors, errors)
    sp, n_neg = _ratio(cleared_non_errors, non_errors)
    j = se_ + sp - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(j > 0, (q + sp - 1.0) / np.where(j > 0, j, 1.0), np.nan)
        if per_cluster:
            def share(x, total):
                return x / total[..., None]
            e = (share(t - q[..., None] * nj, n) - estimate[..., None] * share(c - se_[..., None] * e_, n_pos)
                 + (1.0 - estimate)[..., None] * share(d - sp[..., None] * f_, n_neg)) / j[..., None]
            variance, clusters = _robust(e, nj + e_ + f_)
            variance = np.where(np.isfinite(estimate), variance, np.nan)
            return _finish("rogan_gladen", estimate, variance, q, confidence, clusters)
        variance = (q * (1.0 - q) / n + estimate**2 * se_ * (1.0 - se_) / n_pos
                    + (1.0 - estimate) ** 2 * sp * (1.0 - sp) / n_neg) / j**2
    return _finish("rogan_gladen", estimate, variance, q, confidence)
