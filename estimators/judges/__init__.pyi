"""The names of ``escalation.estimators.judges``: read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._calibration import (
    CALIBRATION_METHODS, Calibration, case_folds, cross_fit, CrossFit, fit_calibration, isotonic_fit, platt_fit,
)
from ._calibration_measures import auroc, calibration_bias, expected_calibration_error, reliability_table
from ._cause_judge import (
    CAUSES, cause_questions, CauseAnswerError, CauseFinding, CauseJudge, CauseJudgeError, CauseQuestion,
    judge_causes, parse_cause_answer,
)
from ._misclassification import CorrectedRate, predictive_value_correction, rogan_gladen
from ._mode_b_correction import (
    VALIDATION_METHOD, VALIDATION_METHODS, correct_text_summary, CorrectedFigure, ValidationCorrection,
)
from ._validation_file import read_validation, validation_scores
from ._turn_judge import (
    doubtful_labels, judge_turns, over_escalation_severity, turn_diagnostics, turn_questions, TurnJudge,
    TurnProbabilities, TurnQuestion, TurnQuestions,
)
