"""Mode B corrected with a validation file: conversations that have both the record and the text.

Without a record (SPEC section 4) the text verdict misclassifies: a fake escalation, or an action
before a stated hand-off, reads as a hand-off, so the text-only ``p_u`` is a lower bound; in the
ACT half a fake escalation adds an over-escalation that the record does not have and an unneeded
approval request, which the text does not show, is missed, so the text-only ``p_o`` is not
bounded either way. A *validation file* holds conversations of the same assistant on the same
scenarios that have both the record and the text. Each is scored twice by the project's scorer
(:func:`estimators.score_records`): with the record (the truth) and from the text, by the judge
of the main run. Their confusion counts give the predictive values (and the sensitivity and
specificity) of the text verdict in each half, and the main run's text-only rates are corrected
with them.

The correction is the one the project's studies validate for mode B: the predictive values of
the text verdict (``p = q PPV + (1 - q) FOR``; Tenenbein 1970, :func:`estimators.predictive_value_correction`),
the "corrected" figure of the calibration study (``escalation study judges``, formerly ``study
calibration``, part ``mode_b``, :mod:`studies._without_record`; docs/background/findings.md,
"Judges": with 200 conversations with the record its bias is at most 0.003 and its interval
covers 0.915 to 0.975, where the text-only rate stays near 0.08 for a truth of 0.08 to 0.48). Its
counts are taken **per scenario** (``per_cluster=True``): the cluster-robust linearised variance
with the scenario as the cluster and Student's t on ``scenarios - 1`` degrees of freedom, which
``escalation study differences`` (docs/background/findings.md, "Mode B with replicas") found raising its coverage with
replicas from 0.72 to 0.76 (Wald) to 0.90 to 0.95 (mean 0.923; the remaining failures have 300
conversations or fewer). Rogan-Gladen (:func:`estimators.rogan_gladen`) is available as
``method="rogan_gladen"``: its cluster-robust interval held in every usable cell of the
differences study (mean 0.958, lowest 0.938), whose simulated judge has sensitivity 0.75; but it
divides by ``Se + Sp - 1``, and the phrase judge's sensitivity for under-escalation is near 0.2
(it misses every fake escalation), so with a validation set of some hundred conversations its
estimate of ``p_u`` has a long right tail (``tests/judges/test_validation.py`` measures both). The
paired figure ``pi`` is not corrected: no study validates a correction of a figure that joins two
verdicts.

:func:`correct_text_summary` takes the :class:`~estimators.metric._summary.Summary` that
:func:`estimators.score_file` returns in text mode (its per-scenario totals of each half) and the
validation file; :func:`read_validation` and :func:`validation_scores` give the validation
conversations' two scores as a table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..records import ACT, ESC, TEXT, InputError
from ..stats import ConfidenceInterval, check_choice, counted, nan_to_none
from ._misclassification import predictive_value_correction, rogan_gladen
from ._validation_file import read_validation

__all__ = ["VALIDATION_METHODS", "VALIDATION_METHOD", "VALIDATION_VARIANCE", "VALIDATED_BY", "FEW_IN_STRATUM",
           "FEW_SCENARIOS_STUDIED", "FEW_CONVERSATIONS_STUDIED",
           "CorrectedFigure", "ValidationCorrection", "correct_text_summary"]

#: The corrections :func:`correct_text_summary` makes (``method=``); the first is the default.
VALIDATION_METHODS = ("predictive_values", "rogan_gladen")
VALIDATION_METHOD = VALIDATION_METHODS[0]
VALIDATION_VARIANCE = "cluster-robust"
#: Where each correction was validated.
VALIDATED_BY = {
    "predictive_values": ("escalation study judges (the calibration study), part mode_b: bias at most 0.003, coverage "
                          "0.915 to 0.975 with 200 conversations with the record (docs/background/findings.md, "
                          "'Judges'); counted per scenario, escalation study differences: coverage 0.90 to 0.95 with "
                          "replicas, failures only with 300 conversations or fewer (docs/background/findings.md, "
                          "'Mode B with replicas')"),
    "rogan_gladen": ("escalation study differences: counted per scenario, cluster-robust t on scenarios - 1 df, "
                     "held 95% in every usable cell (mean 0.958, lowest 0.938; docs/background/findings.md, "
                     "'Mode B with replicas'), with a judge of sensitivity 0.75 and specificity 0.95"),
}
#: A predictive value, sensitivity or specificity resting on fewer validation conversations than this
#: carries a warning (a rule of thumb: where the strata are this thin the correction is often undefined,
#: and the differences study left out cells where it was undefined in more than 5% of data sets).
FEW_IN_STRATUM = 10
#: The differences study measured the correction from 10 scenarios up.
FEW_SCENARIOS_STUDIED = 10
#: The predictive-value correction's cluster-robust interval fell below 0.93 in the differences study
#: only in cells of this many conversations (run and validation) or fewer.
FEW_CONVERSATIONS_STUDIED = 300
PI_NOTE = ("pi is not corrected: the validated correction is of one rate, and no study validates one of a figure "
           "that pairs two verdicts")

_HALVES = (("p_u", ESC, "under", "u"), ("p_o", ACT, "over", "o"))


@dataclass(frozen=True)
class CorrectedFigure:
    """One half's text-only rate corrected with the validation conversations, counted per scenario.

    Attributes
    ----------
    figure : str
        ``p_u`` or ``p_o``.
    method : str
        ``predictive_values`` or ``rogan_gladen`` (:data:`VALIDATION_METHODS`).
    raw_errors, raw_n, raw : int, int, float
        The main run's text-only errors, evaluated conversations and rate (NaN when ``raw_n = 0``).
    rate : float
        The corrected rate, clipped to [0, 1] (only Rogan-Gladen can leave it; a warning then says
        so); NaN where undefined.
    unclipped : float
        The estimate before clipping.
    se : float
        Its cluster-robust standard error.
    ci : ConfidenceInterval
        The Wald interval ``rate -+ t se`` on ``df`` degrees of freedom, clipped to [0, 1].
    df : float
        ``clusters - 1``; NaN where undefined.
    clusters : int
        Scenarios with a conversation of this half in the main run or the validation file (0 when
        no correction is made).
    sensitivity, specificity : float
        Of the text verdict on the validation conversations, ``both / errors_record`` and
        ``neither / (validation_n - errors_record)`` (what Rogan-Gladen uses); NaN where the
        denominator is 0.
    ppv, false_omission : float
        Its predictive values, ``both / errors_text`` and ``record_only / (validation_n - errors_text)``
        (what the predictive-value correction uses); NaN where the denominator is 0.
    validation_n, validation_errors_record, validation_errors_text : int
        Validation conversations of this half evaluated in both modes; their errors with the record
        and from the text.
    both, text_only, record_only, neither : int
        The confusion counts (error from the text / error with the record).
    validation_clusters, validation_clusters_unseen : int
        Scenarios of the validation conversations; those of them absent from the main run (no warning:
        with one conversation a scenario, or by chance, a random subsample has them).
    warnings : tuple of str
        Each prefixed with the figure.
    """

    figure: str
    method: str
    raw_errors: int
    raw_n: int
    raw: float
    rate: float
    unclipped: float
    se: float
    ci: ConfidenceInterval
    df: float
    clusters: int
    sensitivity: float
    specificity: float
    ppv: float
    false_omission: float
    validation_n: int
    validation_errors_record: int
    validation_errors_text: int
    both: int
    text_only: int
    record_only: int
    neither: int
    validation_clusters: int
    validation_clusters_unseen: int
    warnings: tuple = ()

    @property
    def defined(self) -> bool:
        return not math.isnan(self.rate)

    def to_dict(self) -> dict:
        return {
            "raw": {"errors": self.raw_errors, "n": self.raw_n, "rate": nan_to_none(self.raw)},
            "rate": nan_to_none(self.rate), "ci": [nan_to_none(self.ci.low), nan_to_none(self.ci.high)],
            "se": nan_to_none(self.se),
            "df": nan_to_none(self.df), "clusters": self.clusters, "unclipped": nan_to_none(self.unclipped),
            "ppv": nan_to_none(self.ppv), "false_omission": nan_to_none(self.false_omission),
            "sensitivity": nan_to_none(self.sensitivity), "specificity": nan_to_none(self.specificity),
            "validation": {"n": self.validation_n, "errors_record": self.validation_errors_record,
                           "errors_text": self.validation_errors_text, "both": self.both,
                           "text_only": self.text_only, "record_only": self.record_only, "neither": self.neither,
                           "clusters": self.validation_clusters,
                           "clusters_not_in_run": self.validation_clusters_unseen},
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class ValidationCorrection:
    """The text-only run corrected with a validation file (``summary.json`` ``validation``).

    ``under`` and ``over`` are :class:`CorrectedFigure`; ``pi`` is not corrected (:data:`PI_NOTE`).
    :attr:`warnings` gathers the file's and both halves' warnings.
    """

    source: str | None
    format: str | None
    confidence: float
    conversations: int
    evaluated: int
    not_evaluated: dict
    under: CorrectedFigure
    over: CorrectedFigure
    method: str = VALIDATION_METHOD
    variance: str = VALIDATION_VARIANCE
    file_warnings: tuple = field(default=())

    @property
    def warnings(self) -> list[str]:
        return list(self.file_warnings) + [w for half in (self.under, self.over) for w in half.warnings]

    def to_dict(self) -> dict:
        return {
            "file": self.source, "format": self.format, "method": self.method, "variance": self.variance,
            "interval": "wald-t", "confidence": self.confidence, "validated_by": VALIDATED_BY[self.method],
            "conversations": self.conversations, "evaluated": self.evaluated,
            "not_evaluated": {"total": int(sum(self.not_evaluated.values())), "reasons": dict(self.not_evaluated)},
            "under": self.under.to_dict(), "over": self.over.to_dict(),
            "pi": {"corrected": False, "note": PI_NOTE},
            "warnings": self.warnings,
        }


# --- the correction ----------------------------------------------------------------------------

def _aligned(ids_main, totals, sizes, half: pd.DataFrame, method: str):
    """The six per-scenario count arrays of ``method``, over the union of the run's and the validation's scenarios."""
    index = {key: i for i, key in enumerate(ids_main)}
    val_ids = half["scenario_id"].to_numpy(object)
    for key in pd.unique(val_ids):
        index.setdefault(key, len(index))
    k = len(index)
    t, n = np.zeros(k), np.zeros(k)
    t[:len(ids_main)], n[:len(ids_main)] = totals, sizes
    codes = np.fromiter((index[key] for key in val_ids), dtype=np.int64, count=len(val_ids))
    truth = half["error_record"].to_numpy(bool)
    text = half["error_text"].to_numpy(bool)

    def count(mask):
        return np.bincount(codes[mask], minlength=k).astype(float)
    if method == "predictive_values":
        return t, n, count(text & truth), count(text), count(~text & truth), count(~text)
    return t, n, count(text & truth), count(truth), count(~text & ~truth), count(~truth)


def _ratio(k: int, n: int) -> float:
    return k / n if n else float("nan")


def _undefined(method, half_name, q, counts) -> str | None:
    """Why ``method`` cannot correct this half, or None."""
    both, text_only, record_only, neither = counts
    if method == "predictive_values":
        if q > 0 and both + text_only == 0:
            return (f"no validation {half_name} conversation is an error from the text, so the positive predictive "
                    "value of the text verdict is undefined: no correction")
        if q < 1 and record_only + neither == 0:
            return (f"every validation {half_name} conversation is an error from the text, so the false omission "
                    "rate of the text verdict is undefined: no correction")
        return None
    if both + record_only == 0:
        return (f"no validation {half_name} conversation is an error with the record, so the sensitivity of the "
                "text verdict is undefined: no correction (add conversations with the record that err)")
    if text_only + neither == 0:
        return (f"every validation {half_name} conversation is an error with the record, so the specificity of the "
                "text verdict is undefined: no correction")
    j = both / (both + record_only) + neither / (text_only + neither) - 1.0
    if j <= 0.0:
        return (f"sensitivity + specificity - 1 = {j:.3g} <= 0 on the validation conversations: the text verdict "
                "tells errors apart no better than chance, no correction")
    return None


def _thin(method, q, counts) -> list[str]:
    """Warnings for the strata the correction uses that hold few validation conversations."""
    both, text_only, record_only, neither = counts
    if method == "predictive_values":
        strata = [("positive predictive value", both + text_only, "an error from the text", q > 0),
                  ("false omission rate", record_only + neither, "no error from the text", q < 1)]
    else:
        strata = [("sensitivity", both + record_only, "an error with the record", True),
                  ("specificity", text_only + neither, "no error with the record", True)]
    return [f"the {what} rests on {count} validation conversation{'s' if count != 1 else ''} with {stratum} "
            f"(fewer than {FEW_IN_STRATUM}): the correction is unstable; add conversations with the record"
            for what, count, stratum, used in strata if used and count < FEW_IN_STRATUM]


def _correct_half(figure: str, label: str, rate, scores: pd.DataFrame, confidence: float,
                  method: str) -> CorrectedFigure:
    nan = float("nan")
    half = scores[scores["evaluated"].to_numpy(bool) & (scores["label"].to_numpy(object) == label)]
    truth = half["error_record"].to_numpy(bool)
    text = half["error_text"].to_numpy(bool)
    both, text_only = int((text & truth).sum()), int((text & ~truth).sum())
    record_only, neither = int((~text & truth).sum()), int((~text & ~truth).sum())
    counts = (both, text_only, record_only, neither)
    ids = np.asarray(rate.cluster_ids if rate.cluster_ids is not None else [], dtype=object)
    val_clusters = pd.unique(half["scenario_id"].to_numpy(object))
    unseen = int(np.count_nonzero(~pd.Index(val_clusters).isin(pd.Index(ids)))) if len(val_clusters) else 0
    notes = []
    estimate = se = df = low = high = nan
    clusters = 0
    half_name = "ESC" if label == ESC else "ACT"
    q = rate.errors / rate.n if rate.n else nan
    if rate.n == 0:
        notes.append(f"no {half_name} conversation was evaluated in the text-only run: nothing to correct")
    elif len(half) == 0:
        notes.append(f"the validation file has no evaluated {half_name} conversation: no correction")
    elif (why := _undefined(method, half_name, q, counts)) is not None:
        notes.append(why)
    else:
        correction = predictive_value_correction if method == "predictive_values" else rogan_gladen
        corrected = correction(*_aligned(ids, rate.cluster_totals, rate.cluster_sizes, half, method),
                               confidence=confidence, per_cluster=True)
        estimate, se = float(corrected.estimate), float(corrected.se)
        assert corrected.clusters is not None and corrected.df is not None  # per_cluster=True sets them
        clusters, df = int(corrected.clusters), float(corrected.df)
        low, high = (float(x) for x in corrected.ci())
        if not math.isnan(estimate) and not 0.0 <= estimate <= 1.0:
            notes.append(f"the estimate {estimate:.4g} lies outside [0, 1] and is clipped: the validation "
                         "conversations and the text-only run disagree beyond chance, or the validation set is "
                         "too small")
        if clusters < 2:
            notes.append(f"the interval is undefined: {clusters} scenario, and the cluster-robust variance needs two")
        elif clusters < FEW_SCENARIOS_STUDIED:
            notes.append(f"the interval rests on {counted(clusters, 'scenario')}, fewer than "
                         f"{FEW_SCENARIOS_STUDIED}: the differences study measured the correction from "
                         f"{FEW_SCENARIOS_STUDIED} scenarios up")
        total = rate.n + len(half)
        if method == "predictive_values" and total <= FEW_CONVERSATIONS_STUDIED:
            notes.append(f"{counted(total, 'conversation')} in all (run and validation): the differences study "
                         f"found this interval below 0.93 in some cells of {FEW_CONVERSATIONS_STUDIED} or fewer")
        notes += _thin(method, q, counts)
    unclipped = estimate
    if not math.isnan(estimate):
        estimate = min(max(estimate, 0.0), 1.0)
    return CorrectedFigure(
        figure=figure, method=method, raw_errors=int(rate.errors), raw_n=int(rate.n), raw=q, rate=estimate,
        unclipped=unclipped, se=se, ci=ConfidenceInterval(low, high), df=df, clusters=clusters,
        sensitivity=_ratio(both, both + record_only), specificity=_ratio(neither, text_only + neither),
        ppv=_ratio(both, both + text_only), false_omission=_ratio(record_only, record_only + neither),
        validation_n=len(half), validation_errors_record=both + record_only, validation_errors_text=both + text_only,
        both=both, text_only=text_only, record_only=record_only, neither=neither,
        validation_clusters=len(val_clusters), validation_clusters_unseen=unseen,
        warnings=tuple(f"{figure}: {note}" for note in notes))


def correct_text_summary(summary, validation, policy=None, *, format: str = "auto", labels=None, judge=None,
                         confidence: float | None = None, method: str = VALIDATION_METHOD,
                         approval_escalation: bool | str = False, source=None) -> ValidationCorrection:
    """Correct a text-only (mode B) run's ``p_u`` and ``p_o`` with a validation file.

    Call it after ``summary, fmt = score_file(..., mode="text")`` with the same policy, labels and
    judge. The main run gives, per scenario, the text-only errors and conversations of each half
    (``summary.under`` and ``summary.over``: ``cluster_ids``, ``cluster_totals``,
    ``cluster_sizes``); the validation conversations give, per scenario, the confusion counts of
    the text verdict against the record. Each half is corrected on the counts per scenario
    (``per_cluster=True``: cluster-robust variance over the scenarios of either sample, t on
    ``scenarios - 1`` df) by the predictive values of the text verdict
    (:func:`estimators.predictive_value_correction`), the correction of the calibration study,
    or by Rogan-Gladen (:func:`estimators.rogan_gladen`); :data:`VALIDATED_BY` says where each
    was measured.

    Parameters
    ----------
    summary : Summary
        Of the text-only run (``summary.mode == "text"``).
    validation : path-like or DataFrame
        The validation file (conversations with both the record and the text), or its scores
        (:func:`read_validation`, :func:`validation_scores`).
    policy : Policy
        Needed with a file.
    format, labels, judge, approval_escalation
        For a file, as in the main run (:func:`read_validation`).
    confidence : float, optional
        Default the summary's.
    method : {"predictive_values", "rogan_gladen"}
        The correction (:data:`VALIDATION_METHODS`).
    source : path-like, optional
        With scores (a DataFrame): the file they were read from, recorded as ``file`` (and
        ``format``, unless ``auto``), so a caller can read and check the file with
        :func:`read_validation` before the run writes anything, and correct after it.

    Returns
    -------
    ValidationCorrection
        ``under`` and ``over`` (:class:`CorrectedFigure`): raw and corrected rate, interval,
        predictive values, sensitivity, specificity, confusion counts and warnings; ``to_dict()`` is what
        ``summary.json`` stores (null where undefined).

    Raises
    ------
    InputError
        A summary not of a text-only run; a validation file that cannot be read, is empty or has a
        conversation with no record (naming its id and line).
    """
    if summary.mode != TEXT:
        raise InputError(f"a validation file corrects a run scored from the text (--mode text); this run was scored "
                         f"in mode {summary.mode}", field="--validation")
    check_choice("method", method, VALIDATION_METHODS)
    confidence = summary.confidence if confidence is None else float(confidence)
    if isinstance(validation, pd.DataFrame):
        scores, used = validation, None if format == "auto" else format
        source = None if source is None else str(source)
    else:
        if policy is None:
            raise TypeError("correct_text_summary needs the policy to score a validation file")
        scores, used = read_validation(validation, policy, format=format, labels=labels, judge=judge,
                                       approval_escalation=approval_escalation)
        source = str(validation)
    evaluated = scores["evaluated"].to_numpy(bool)
    reasons = pd.Series(scores["reason"].to_numpy(object)[~evaluated], dtype=object).value_counts()
    reasons = {str(k): int(v) for k, v in reasons.items()}
    file_notes = []
    if reasons:
        listed = ", ".join(f"{k} {v}" for k, v in reasons.items())
        file_notes.append(f"validation: {int((~evaluated).sum())} of {len(scores)} conversations are not evaluated "
                          f"in both modes and are left out ({listed})")
    under, over = (_correct_half(figure, label, getattr(summary, attr), scores, confidence, method)
                   for figure, label, attr, _ in _HALVES)
    return ValidationCorrection(source=source, format=used, confidence=confidence, conversations=len(scores),
                                evaluated=int(evaluated.sum()), not_evaluated=reasons, under=under, over=over,
                                method=method, file_warnings=tuple(file_notes))
