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

Both intervals are Wald intervals with the delta-method variance (the main sample and the
subsample are disjoint, hence independent), clipped to [0, 1].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._intervals import ConfidenceInterval, z_value

__all__ = ["CorrectedRate", "predictive_value_correction", "rogan_gladen"]


@dataclass(frozen=True)
class CorrectedRate:
    """A misclassification-corrected rate (arrays over data sets).

    Attributes
    ----------
    method : str
        ``predictive_values`` or ``rogan_gladen``.
    estimate, se : ndarray
        Corrected rate and its delta-method standard error (NaN where undefined).
    observed : ndarray
        The text-only rate ``q`` of the main sample.
    confidence : float
        The level :meth:`ci` gives by default.
    """

    method: str
    estimate: np.ndarray
    se: np.ndarray
    observed: np.ndarray
    confidence: float

    def ci(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The Wald interval ``estimate -+ z se``, clipped to [0, 1] (NaN where undefined)."""
        z = z_value(self.confidence if confidence_level is None else confidence_level)
        defined = np.isfinite(self.estimate)
        return ConfidenceInterval(np.where(defined, np.clip(self.estimate - z * self.se, 0.0, 1.0), np.nan),
                                  np.where(defined, np.clip(self.estimate + z * self.se, 0.0, 1.0), np.nan))

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


def _finish(method, estimate, variance, q, confidence) -> CorrectedRate:
    z_value(confidence)  # the level is checked when the result is made
    return CorrectedRate(method, estimate, np.sqrt(np.maximum(variance, 0.0)), q, float(confidence))


def predictive_value_correction(text_errors, n, flagged_errors, flagged, unflagged_errors, unflagged, *,
                                confidence: float = 0.95) -> CorrectedRate:
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

    Returns
    -------
    CorrectedRate
        ``p = q PPV + (1 - q) FOR``, with
        ``Var p = (PPV - FOR)^2 q (1 - q) / n + q^2 PPV (1 - PPV) / n_1 + (1 - q)^2 FOR (1 - FOR) / n_0``
        (delta method; Tenenbein 1970). NaN where a sample or a stratum used is empty.
    """
    q, n = _ratio(text_errors, n)
    ppv, n1 = _ratio(flagged_errors, flagged)
    false_omission, n0 = _ratio(unflagged_errors, unflagged)
    # a stratum the main sample never enters (q = 0 or q = 1) is not needed
    ppv = np.where(q == 0.0, np.nan_to_num(ppv), ppv)
    false_omission = np.where(q == 1.0, np.nan_to_num(false_omission), false_omission)
    estimate = q * ppv + (1.0 - q) * false_omission
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = ((ppv - false_omission) ** 2 * q * (1.0 - q) / n
                    + np.where(q > 0, q**2 * ppv * (1.0 - ppv) / n1, 0.0)
                    + np.where(q < 1, (1.0 - q) ** 2 * false_omission * (1.0 - false_omission) / n0, 0.0))
    return _finish("predictive_values", estimate, variance, q, confidence)


def rogan_gladen(text_errors, n, detected_errors, errors, cleared_non_errors, non_errors, *,
                 confidence: float = 0.95) -> CorrectedRate:
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

    Returns
    -------
    CorrectedRate
        ``p = (q + Sp - 1) / J`` with ``J = Se + Sp - 1`` (Rogan & Gladen 1978) and
        ``Var p = [q (1 - q) / n + p^2 Se (1 - Se) / n_+ + (1 - p)^2 Sp (1 - Sp) / n_-] / J^2``
        (delta method). NaN where ``J <= 0`` or a sample is empty.
    """
    q, n = _ratio(text_errors, n)
    se_, n_pos = _ratio(detected_errors, errors)
    sp, n_neg = _ratio(cleared_non_errors, non_errors)
    j = se_ + sp - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(j > 0, (q + sp - 1.0) / np.where(j > 0, j, 1.0), np.nan)
        variance = (q * (1.0 - q) / n + estimate**2 * se_ * (1.0 - se_) / n_pos
                    + (1.0 - estimate) ** 2 * sp * (1.0 - sp) / n_neg) / j**2
    return _finish("rogan_gladen", estimate, variance, q, confidence)
