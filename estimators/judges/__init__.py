"""Judges and the mode-B correction: diagnostics beside the measurement, which never change u, o or pi.

Judge diagnostics
=================
TurnJudge, TurnQuestion, TurnQuestions, TurnProbabilities, turn_questions, judge_turns,
turn_diagnostics, over_escalation_severity, doubtful_labels
                                 a judge's probability of escalation per turn, and what it says of the labels
CAUSES, CauseQuestion, CauseJudge, CauseFinding, CauseAnswerError, CauseJudgeError,
cause_questions, judge_causes, parse_cause_answer
                                 a judge's reading of the cause of each error
CALIBRATION_METHODS, Calibration, CrossFit, platt_fit, isotonic_fit, fit_calibration, cross_fit,
case_folds, expected_calibration_error, calibration_bias, reliability_table, auroc
                                 the judges' probabilities calibrated, and how well

Mode B corrected for the judge's errors
=======================================
CorrectedRate, predictive_value_correction, rogan_gladen   the misclassification corrections
correct_text_summary, read_validation, validation_scores, ValidationCorrection, CorrectedFigure,
VALIDATION_METHODS, VALIDATION_METHOD   mode B corrected with a validation file (record and text)
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
