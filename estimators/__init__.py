"""The escalation measurement (SPEC sections 2 to 7) and its statistics.

Public names live here; the implementation is in private modules. Nothing in this layer
imports another layer of the project. Each section lists one topic, as ``scipy.stats`` does.

The vocabulary (SPEC sections 1 to 5)
=====================================
ESC, ACT, LABELS                 the two labels
normalise_label, normalise_labels
                                 a label as it is read (``"esc"``, ``" Act "``: ESC, ACT), of one value or a column
RECORD, TEXT, MODES, MODE_ALIASES, check_mode   the two modes (the paper's A and B)
UNDER_CAUSES, OVER_CAUSES, BASE_CAUSES, NOT_EVALUATED_REASONS
scenario_key, scenario_ids       the default cluster id: ``case_id:label``, else the conversation

Policy, records and readers (SPEC sections 2, 6, 7)
===================================================
Policy, load_policy              the tool lists of an oversight policy
tool_usage, ToolUsage, ToolUse, draft_policy, PolicyDraft, place_tool, Placement, LOOKUP_VERBS,
check_policy, PolicyCheck, turn_ranges
                                 the tools a log calls, a draft policy from them, a policy checked
                                 against a log (``escalation policy``)
handoff_word                     the word of a tool name that suggests a hand-off, if any
Records                          conversations, calls and messages as columns
normalise_conversation           one canonical record, validated
iter_records                     canonical JSONL in chunks of Records, through Arrow where it can
read_jsonl, iter_jsonl           the reference reader: whole, or in chunks of ``(line, conversation)``
check_unique_keys, UniqueKeys    the key rule (unique ``conversation_id`` and (case, label, replica)):
                                 of a table, or streamed
read_conversations, iter_conversations, detect_format, FORMATS, inspect_sample_conversation
                                 every supported log format
ArchiveLimits                    the most an inspect_ai .eval archive may decompress to
Labels, load_labels, load_plan   labels and planned scenarios for logs that carry none
InputError                       bad input: one line naming the file, line and field

Scoring (SPEC sections 3 and 4)
===============================
score_conversation               the readable reference scorer, one conversation
score_records, RESULT_COLUMNS    the vectorised scorer, one row per conversation
score_file                       logs end to end, in bounded memory
log_inputs, describe_file        the logs of a command line (files, folders, -) and their provenance
TextJudge, PhraseJudge, turn_texts   observation without a record (mode B)
cells, conversation_lines, write_outputs, write_atomic, write_files, output_folder, check_out_dir,
remove_stale_temporaries         the per-turn cells and the output files

Rates, intervals and pairs (SPEC section 5)
===========================================
summarise, SummaryAccumulator    the summary of scored conversations, whole or chunk by chunk
Summary, RateSummary, PairedSummary, BaseSummary, NotEvaluated
                                 the results; a rate keeps its cluster totals, and
                                 ``summary.under.ci(confidence_level=0.9)`` recomputes its interval
clustered_rate                   a rate with the Kish design effect and the Wilson interval
ConfidenceInterval               ``(low, high)``: every interval of the package is one
cluster_design, ClusterDesign, ClusterSums, size_weighted_mean, RHO_WHEN_UNDEFINED
                                 the design effect of SPEC section 5: the one rule
clustered_interval, INTERVAL_METHODS, DEFAULT_INTERVAL, WILSON_METHODS, rho_upper_bound,
korn_graubard_size, RHO_BOUND_LEVEL   the interval of a clustered rate, by name (``--interval``)
z_value, critical_value, wilson_interval, wilson_kish_interval, WilsonKishInterval, design_effect,
anova_icc, fleiss_cuzick_icc     Wilson intervals, the Kish formula, the ICC of clustered 0/1 outcomes
cluster_bootstrap, cluster_bootstrap_pi, paired_cluster_bootstrap, ClusterBootstrapResult,
DegenerateIntervalWarning        the cluster bootstrap, of one rate or of two assistants' difference
exact_coverage, exact_coverages, ExactCoverage, MAX_ESTIMATED_RHO_STATES
                                 the exact coverage of the clustered Wilson intervals

Planning and comparison
=======================
plan_interval, plan_paired_figure, plan_difference, scenarios_needed, wilson_sample_size,
IntervalPlan, PairedFigurePlan, DifferencePlan, MAX_PLAN_SIZE
compare_scored, read_scored, Comparison, MetricDifference, ScenarioMismatchError, inverted_p_value
                                 two assistants on the same scenarios (B minus A), p-values by test inversion
coverage_word, CoverageWord, DIFFERENCE_COVERAGE_STUDY, difference_warnings, interval_advice,
FEW_CASES_NEWCOMBE, FEW_CASES_BOOTSTRAP
                                 what `escalation study differences` measured beside each difference interval
newcombe_paired_interval, paired_correlation   Newcombe's interval of a paired difference
leaderboard, Leaderboard, Standing, PairVerdict, holm_adjust, compact_letter_display, log_model
                                 several assistants ranked on the same scenarios, with the groups
                                 that cannot be told apart (Holm 1979; Piepho 2004)

Judge diagnostics (they never change u, o or pi)
================================================
TurnJudge, TurnQuestion, TurnQuestions, TurnProbabilities, turn_questions, judge_turns,
turn_diagnostics, over_escalation_severity, doubtful_labels
CALIBRATION_METHODS, Calibration, CrossFit, platt_fit, isotonic_fit, fit_calibration, cross_fit,
case_folds, expected_calibration_error, calibration_bias, reliability_table, auroc
CAUSES, CauseQuestion, CauseJudge, CauseFinding, CauseAnswerError, CauseJudgeError,
cause_questions, judge_causes, parse_cause_answer
CorrectedRate, predictive_value_correction, rogan_gladen   mode B corrected for the judge's errors
correct_text_summary, read_validation, validation_scores, ValidationCorrection, CorrectedFigure,
VALIDATION_METHODS, VALIDATION_METHOD   mode B corrected with a validation file (record and text)

The conformance set
===================
CONFORMANCE_SETS, ConformanceSet, conformance_dir, load_conformance_set
"""
import importlib

__all__ = [
    # the vocabulary
    "ESC", "ACT", "LABELS", "normalise_label", "normalise_labels",
    "RECORD", "TEXT", "MODES", "MODE_ALIASES", "check_mode", "UNDER_CAUSES", "OVER_CAUSES", "BASE_CAUSES",
    "NOT_EVALUATED_REASONS", "scenario_key", "scenario_ids",
    # policy, records and readers
    "Policy", "load_policy", "tool_usage", "ToolUsage", "ToolUse", "draft_policy", "PolicyDraft", "place_tool",
    "Placement", "LOOKUP_VERBS", "check_policy", "PolicyCheck", "turn_ranges", "handoff_word",
    "Records", "normalise_conversation", "iter_records", "read_jsonl", "iter_jsonl",
    "check_unique_keys", "UniqueKeys",
    "read_conversations", "iter_conversations", "detect_format", "FORMATS", "inspect_sample_conversation", "ArchiveLimits", "Labels",
    "load_labels",
    "load_plan", "InputError",
    # scoring
    "score_conversation", "score_records", "RESULT_COLUMNS", "score_file", "TextJudge", "PhraseJudge", "turn_texts",
    "cells", "conversation_lines", "write_outputs", "write_atomic", "write_files", "output_folder", "check_out_dir",
    "remove_stale_temporaries",
    "log_inputs", "describe_file", "LOG_SUFFIXES",
    # rates, intervals and pairs
    "summarise", "SummaryAccumulator", "Summary", "RateSummary", "PairedSummary", "BaseSummary", "NotEvaluated",
    "clustered_rate", "z_value", "wilson_interval", "wilson_kish_interval", "design_effect", "anova_icc",
    "fleiss_cuzick_icc", "cluster_bootstrap", "cluster_bootstrap_pi", "ClusterBootstrapResult", "ConfidenceInterval",
    "WilsonKishInterval",
    "DegenerateIntervalWarning", "exact_coverage", "exact_coverages", "WILSON_METHODS", "cluster_design", "ClusterDesign",
    "ClusterSums",
    "size_weighted_mean", "RHO_WHEN_UNDEFINED", "clustered_interval", "INTERVAL_METHODS", "DEFAULT_INTERVAL",
    "rho_upper_bound", "korn_graubard_size", "RHO_BOUND_LEVEL", "critical_value", "ExactCoverage",
    "MAX_ESTIMATED_RHO_STATES",
    # planning and comparison
    "plan_interval", "plan_paired_figure", "plan_difference", "scenarios_needed", "wilson_sample_size", "MAX_PLAN_SIZE",
    "IntervalPlan", "PairedFigurePlan", "DifferencePlan", "compare_scored", "read_scored", "Comparison",
    "MetricDifference", "ScenarioMismatchError", "inverted_p_value", "coverage_word", "CoverageWord",
    "DIFFERENCE_COVERAGE_STUDY", "FEW_CASES_NEWCOMBE", "FEW_CASES_BOOTSTRAP", "difference_warnings", "interval_advice",
    "newcombe_paired_interval", "paired_correlation", "paired_cluster_bootstrap",
    "leaderboard", "Leaderboard", "Standing", "PairVerdict", "holm_adjust", "compact_letter_display", "log_model",
    # judge diagnostics
    "TurnJudge", "TurnQuestion", "TurnQuestions", "TurnProbabilities", "turn_questions", "judge_turns",
    "turn_diagnostics", "over_escalation_severity", "doubtful_labels", "CALIBRATION_METHODS", "Calibration",
    "CrossFit", "platt_fit", "isotonic_fit", "fit_calibration", "cross_fit", "case_folds",
    "expected_calibration_error", "calibration_bias", "reliability_table", "auroc", "CAUSES", "CauseQuestion",
    "CauseJudge", "CauseFinding", "CauseAnswerError", "CauseJudgeError", "cause_questions",
    "judge_causes", "parse_cause_answer", "CorrectedRate", "predictive_value_correction", "rogan_gladen",
    "correct_text_summary", "read_validation", "validation_scores", "ValidationCorrection", "CorrectedFigure",
    "VALIDATION_METHODS", "VALIDATION_METHOD",
    # the conformance set
    "CONFORMANCE_SETS", "ConformanceSet", "conformance_dir", "load_conformance_set",
]

#: Where each public name is defined: it is imported from there when it is first asked for (PEP 562),
#: so ``from escalation.estimators import InputError`` imports one small module, and ``escalation --help``
#: no numerical library. One entry per name; ``__all__`` lists the same names.
_WHERE = {
    "SummaryAccumulator": "._aggregate", "summarise": "._aggregate",
    "iter_records": "._arrow",
    "ClusterBootstrapResult": "._bootstrap", "DegenerateIntervalWarning": "._bootstrap",
    "cluster_bootstrap": "._bootstrap", "cluster_bootstrap_pi": "._bootstrap",
    "paired_cluster_bootstrap": "._bootstrap",
    "CALIBRATION_METHODS": "._calibration", "Calibration": "._calibration", "CrossFit": "._calibration",
    "auroc": "._calibration", "calibration_bias": "._calibration", "case_folds": "._calibration",
    "cross_fit": "._calibration", "expected_calibration_error": "._calibration", "fit_calibration": "._calibration",
    "isotonic_fit": "._calibration", "platt_fit": "._calibration", "reliability_table": "._calibration",
    "CAUSES": "._cause_judge", "CauseAnswerError": "._cause_judge", "CauseFinding": "._cause_judge",
    "CauseJudge": "._cause_judge", "CauseJudgeError": "._cause_judge", "CauseQuestion": "._cause_judge",
    "cause_questions": "._cause_judge", "judge_causes": "._cause_judge", "parse_cause_answer": "._cause_judge",
    "Comparison": "._compare", "MetricDifference": "._compare", "ScenarioMismatchError": "._compare",
    "compare_scored": "._compare", "inverted_p_value": "._compare",
    "DIFFERENCE_COVERAGE_STUDY": "._difference_coverage", "FEW_CASES_BOOTSTRAP": "._difference_coverage",
    "FEW_CASES_NEWCOMBE": "._difference_coverage", "CoverageWord": "._difference_coverage",
    "coverage_word": "._difference_coverage", "difference_warnings": "._difference_coverage",
    "interval_advice": "._difference_coverage",
    "CONFORMANCE_SETS": "._conformance", "ConformanceSet": "._conformance", "conformance_dir": "._conformance",
    "load_conformance_set": "._conformance",
    "newcombe_paired_interval": "._difference", "paired_correlation": "._difference",
    "InputError": "._errors",
    "DEFAULT_INTERVAL": "._constants", "INTERVAL_METHODS": "._constants", "RHO_BOUND_LEVEL": "._constants",
    "WILSON_METHODS": "._constants", "MAX_PLAN_SIZE": "._constants",
    "clustered_interval": "._clustered", "korn_graubard_size": "._clustered", "rho_upper_bound": "._clustered",
    "RHO_WHEN_UNDEFINED": "._design", "ClusterDesign": "._design", "ClusterSums": "._design", "anova_icc": "._design",
    "cluster_design": "._design", "size_weighted_mean": "._design",
    "MAX_ESTIMATED_RHO_STATES": "._exact", "ExactCoverage": "._exact", "exact_coverage": "._exact",
    "exact_coverages": "._exact",
    "fleiss_cuzick_icc": "._icc",
    "ConfidenceInterval": "._intervals", "WilsonKishInterval": "._intervals", "critical_value": "._intervals",
    "design_effect": "._intervals", "wilson_interval": "._intervals", "wilson_kish_interval": "._intervals",
    "z_value": "._intervals",
    "PhraseJudge": "._judge", "TextJudge": "._judge", "turn_texts": "._judge",
    "Labels": "._labels", "load_labels": "._labels", "load_plan": "._labels",
    "Leaderboard": "._leaderboard", "PairVerdict": "._leaderboard", "Standing": "._leaderboard",
    "compact_letter_display": "._leaderboard", "holm_adjust": "._leaderboard", "leaderboard": "._leaderboard",
    "log_model": "._leaderboard",
    "CorrectedRate": "._misclassification", "predictive_value_correction": "._misclassification",
    "rogan_gladen": "._misclassification",
    "LOG_SUFFIXES": "._inputs", "describe_file": "._inputs", "log_inputs": "._inputs",
    "cells": "._output", "check_out_dir": "._output", "conversation_lines": "._output", "output_folder": "._output",
    "remove_stale_temporaries": "._output", "write_atomic": "._output", "write_files": "._output",
    "write_outputs": "._output",
    "score_file": "._pipeline",
    "DifferencePlan": "._planning", "IntervalPlan": "._planning", "PairedFigurePlan": "._planning",
    "plan_difference": "._planning", "plan_interval": "._planning", "plan_paired_figure": "._planning",
    "scenarios_needed": "._planning", "wilson_sample_size": "._planning",
    "handoff_word": "._input_notes",
    "Policy": "._policy", "load_policy": "._policy",
    "LOOKUP_VERBS": "._policy_draft", "Placement": "._policy_draft", "PolicyCheck": "._policy_draft",
    "PolicyDraft": "._policy_draft", "ToolUsage": "._policy_draft", "ToolUse": "._policy_draft",
    "check_policy": "._policy_draft", "draft_policy": "._policy_draft", "place_tool": "._policy_draft",
    "tool_usage": "._policy_draft", "turn_ranges": "._policy_draft",
    "UniqueKeys": "._keys", "check_unique_keys": "._keys",
    "Records": "._records", "iter_jsonl": "._records", "normalise_conversation": "._records", "read_jsonl": "._records",
    "score_conversation": "._reference",
    "read_scored": "._scored",
    "BaseSummary": "._summary", "NotEvaluated": "._summary", "PairedSummary": "._summary", "RateSummary": "._summary",
    "Summary": "._summary", "clustered_rate": "._summary",
    "VALIDATION_METHOD": "._validation", "VALIDATION_METHODS": "._validation", "CorrectedFigure": "._validation",
    "ValidationCorrection": "._validation", "correct_text_summary": "._validation", "read_validation": "._validation",
    "validation_scores": "._validation",
    "TurnJudge": "._turn_judge", "TurnProbabilities": "._turn_judge", "TurnQuestion": "._turn_judge",
    "TurnQuestions": "._turn_judge", "doubtful_labels": "._turn_judge", "judge_turns": "._turn_judge",
    "over_escalation_severity": "._turn_judge", "turn_diagnostics": "._turn_judge", "turn_questions": "._turn_judge",
    "RESULT_COLUMNS": "._vectorised", "score_records": "._vectorised",
    "ACT": "._vocabulary", "BASE_CAUSES": "._vocabulary", "ESC": "._vocabulary", "LABELS": "._vocabulary",
    "MODE_ALIASES": "._vocabulary", "MODES": "._vocabulary", "NOT_EVALUATED_REASONS": "._vocabulary",
    "OVER_CAUSES": "._vocabulary", "RECORD": "._vocabulary", "TEXT": "._vocabulary", "UNDER_CAUSES": "._vocabulary",
    "check_mode": "._vocabulary", "normalise_label": "._vocabulary", "normalise_labels": "._vocabulary",
    "scenario_ids": "._vocabulary", "scenario_key": "._vocabulary",
    "FORMATS": ".readers", "ArchiveLimits": ".readers", "detect_format": ".readers",
    "inspect_sample_conversation": ".readers", "iter_conversations": ".readers", "read_conversations": ".readers",
}


def __getattr__(name: str):
    """A public name, imported from its module (:data:`_WHERE`) the first time it is asked for."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # asked for once: later look-ups find it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
