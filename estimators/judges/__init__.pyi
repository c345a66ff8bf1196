"""The names of ``escalation.estimators.judges``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._calibration import (
    CALIBRATION_METHODS as CALIBRATION_METHODS,
    Calibration as Calibration,
    CrossFit as CrossFit,
    case_folds as case_folds,
    cross_fit as cross_fit,
    fit_calibration as fit_calibration,
    isotonic_fit as isotonic_fit,
    platt_fit as platt_fit,
)
from ._calibration_measures import (
    auroc as auroc,
    calibration_bias as calibration_bias,
    expected_calibration_error as expected_calibration_error,
    reliability_table as reliability_table,
)
from ._cause_judge import (
    CAUSES as CAUSES,
    CauseAnswerError as CauseAnswerError,
    CauseFinding as CauseFinding,
    CauseJudge as CauseJudge,
    CauseJudgeError as CauseJudgeError,
    CauseQuestion as CauseQuestion,
    cause_questions as cause_questions,
    judge_causes as judge_causes,
    parse_cause_answer as parse_cause_answer,
)
from ._misclassification import (
    CorrectedRate as CorrectedRate,
    predictive_value_correction as predictive_value_correction,
    rogan_gladen as rogan_gladen,
)
from ._mode_b_correction import (
    VALIDATION_METHOD as VALIDATION_METHOD,
    VALIDATION_METHODS as VALIDATION_METHODS,
    CorrectedFigure as CorrectedFigure,
    ValidationCorrection as ValidationCorrection,
    correct_text_summary as correct_text_summary,
)
from ._turn_judge import (
    TurnJudge as TurnJudge,
    TurnProbabilities as TurnProbabilities,
    TurnQuestion as TurnQuestion,
    TurnQuestions as TurnQuestions,
    doubtful_labels as doubtful_labels,
    judge_turns as judge_turns,
    over_escalation_severity as over_escalation_severity,
    turn_diagnostics as turn_diagnostics,
    turn_questions as turn_questions,
)
from ._validation_file import read_validation as read_validation, validation_scores as validation_scores
