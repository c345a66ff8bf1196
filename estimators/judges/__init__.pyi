"""The names of ``escalation.estimators.judges``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._calibration import (
    CALIBRATION_METHODS as CALIBRATION_METHODS,
)
from ._calibration import (
    Calibration as Calibration,
)
from ._calibration import (
    CrossFit as CrossFit,
)
from ._calibration import (
    case_folds as case_folds,
)
from ._calibration import (
    cross_fit as cross_fit,
)
from ._calibration import (
    fit_calibration as fit_calibration,
)
from ._calibration import (
    isotonic_fit as isotonic_fit,
)
from ._calibration import (
    platt_fit as platt_fit,
)
from ._calibration_measures import (
    auroc as auroc,
)
from ._calibration_measures import (
    calibration_bias as calibration_bias,
)
from ._calibration_measures import (
    expected_calibration_error as expected_calibration_error,
)
from ._calibration_measures import (
    reliability_table as reliability_table,
)
from ._cause_judge import (
    CAUSES as CAUSES,
)
from ._cause_judge import (
    CauseAnswerError as CauseAnswerError,
)
from ._cause_judge import (
    CauseFinding as CauseFinding,
)
from ._cause_judge import (
    CauseJudge as CauseJudge,
)
from ._cause_judge import (
    CauseJudgeError as CauseJudgeError,
)
from ._cause_judge import (
    CauseQuestion as CauseQuestion,
)
from ._cause_judge import (
    cause_questions as cause_questions,
)
from ._cause_judge import (
    judge_causes as judge_causes,
)
from ._cause_judge import (
    parse_cause_answer as parse_cause_answer,
)
from ._misclassification import (
    CorrectedRate as CorrectedRate,
)
from ._misclassification import (
    predictive_value_correction as predictive_value_correction,
)
from ._misclassification import (
    rogan_gladen as rogan_gladen,
)
from ._mode_b_correction import (
    VALIDATION_METHOD as VALIDATION_METHOD,
)
from ._mode_b_correction import (
    VALIDATION_METHODS as VALIDATION_METHODS,
)
from ._mode_b_correction import (
    CorrectedFigure as CorrectedFigure,
)
from ._mode_b_correction import (
    ValidationCorrection as ValidationCorrection,
)
from ._mode_b_correction import (
    correct_text_summary as correct_text_summary,
)
from ._turn_judge import (
    TurnJudge as TurnJudge,
)
from ._turn_judge import (
    TurnProbabilities as TurnProbabilities,
)
from ._turn_judge import (
    TurnQuestion as TurnQuestion,
)
from ._turn_judge import (
    TurnQuestions as TurnQuestions,
)
from ._turn_judge import (
    doubtful_labels as doubtful_labels,
)
from ._turn_judge import (
    judge_turns as judge_turns,
)
from ._turn_judge import (
    over_escalation_severity as over_escalation_severity,
)
from ._turn_judge import (
    turn_diagnostics as turn_diagnostics,
)
from ._turn_judge import (
    turn_questions as turn_questions,
)
from ._validation_file import read_validation as read_validation
from ._validation_file import validation_scores as validation_scores
