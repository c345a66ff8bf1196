"""The escalation measurement (SPEC sections 2 to 7) and its statistics.

Public names live here; the implementation is in private modules.
"""
from ._aggregate import (BaseSummary, NotEvaluated, PairedSummary, RateSummary, Summary, SummaryAccumulator,
                         clustered_rate, summarise)
from ._errors import InputError
from ._exact import MAX_ESTIMATED_RHO_STATES, ExactCoverage, exact_coverage_wilson_kish
from ._icc import fleiss_cuzick_icc
from ._intervals import anova_icc, design_effect, wilson_interval, wilson_kish_interval, z_value
from ._bootstrap import ClusterBootstrapResult, ConfidenceInterval, DegenerateIntervalWarning, cluster_bootstrap, cluster_bootstrap_pi
from ._calibration import (CALIBRATION_METHODS, Calibration, CrossFit, auroc, calibration_bias, cross_fit,
                           expected_calibration_error, fit_calibration, isotonic_fit, platt_fit, reliability_table)
from ._cause_judge import (CAUSES, CauseAnswerError, CauseFinding, CauseJudge, CauseJudgeError, ChatCauseJudge,
                           judge_causes, parse_cause_answer)
from ._compare import Comparison, MetricDifference, compare_scored, newcombe_paired_interval, read_scored
from ._judge import PhraseJudge, TextJudge
from ._labels import Labels, load_labels, load_plan
from ._misclassification import CorrectedRate, predictive_value_correction, rogan_gladen
from ._output import cells, conversation_lines, write_outputs
from ._pipeline import score_file
from ._planning import (DifferencePlan, IntervalPlan, PairedFigurePlan, plan_difference, plan_interval,
                        plan_paired_figure, scenarios_needed, wilson_sample_size)
from ._policy import Policy, load_policy
from ._records import Records, normalise_conversation, read_jsonl
from ._reference import score_conversation
from ._turn_judge import (TurnJudge, TurnProbabilities, doubtful_labels, judge_turns, over_escalation_severity,
                          turn_diagnostics)
from ._vectorised import RESULT_COLUMNS, score_records
from .readers import FORMATS, detect_format, read_conversations

__all__ = [
    # the measurement (SPEC sections 2 to 7)
    "Policy", "load_policy", "Records", "normalise_conversation", "read_jsonl", "read_conversations",
    "detect_format", "FORMATS", "Labels", "load_labels", "load_plan", "score_conversation", "score_records",
    "RESULT_COLUMNS", "score_file", "summarise", "SummaryAccumulator", "Summary", "RateSummary", "PairedSummary",
    "BaseSummary", "NotEvaluated", "clustered_rate", "cells", "conversation_lines", "write_outputs", "TextJudge", "PhraseJudge",
    "InputError",
    # intervals
    "z_value", "wilson_interval", "wilson_kish_interval", "design_effect", "anova_icc",
    # cluster bootstrap, ICC, exact coverage
    "cluster_bootstrap", "cluster_bootstrap_pi", "ClusterBootstrapResult", "ConfidenceInterval",
    "DegenerateIntervalWarning", "fleiss_cuzick_icc", "exact_coverage_wilson_kish", "ExactCoverage",
    "MAX_ESTIMATED_RHO_STATES",
    # planning and comparison
    "plan_interval", "plan_paired_figure", "plan_difference", "scenarios_needed", "wilson_sample_size",
    "IntervalPlan", "PairedFigurePlan", "DifferencePlan", "compare_scored", "read_scored", "Comparison",
    "MetricDifference", "newcombe_paired_interval",
    # judge diagnostics (never change u, o or pi) and observation without a record
    "TurnJudge", "TurnProbabilities", "judge_turns", "turn_diagnostics", "over_escalation_severity",
    "doubtful_labels", "CALIBRATION_METHODS", "Calibration", "CrossFit", "platt_fit", "isotonic_fit",
    "fit_calibration", "cross_fit", "expected_calibration_error", "calibration_bias", "reliability_table", "auroc",
    "CAUSES", "CauseJudge", "CauseFinding", "CauseAnswerError", "CauseJudgeError", "ChatCauseJudge", "judge_causes",
    "parse_cause_answer", "CorrectedRate", "predictive_value_correction", "rogan_gladen",
]
