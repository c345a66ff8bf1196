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
call_marks, CallMarks            each call's kind, the first escalation kE, the first consequential action kA
score_records, RESULT_COLUMNS    the vectorised scorer, one row per conversation
score_file                       logs end to end, in bounded memory
log_inputs, describe_file        the logs of a command line (files, folders, -) and their provenance
TextJudge, PhraseJudge, turn_texts   observation without a record (mode B)
cells, conversation_lines, conversation_blocks, write_outputs, write_atomic, write_files, output_folder,
check_out_dir, remove_stale_temporaries, OutputFile   the per-turn cells and the output files
conversation_evidence, EVIDENCE_TEXT_LIMIT, EVIDENCE_ARGUMENTS_LIMIT, EVIDENCE_ITEMS_LIMIT
                                 one conversation's timeline (turns, texts, calls and their kinds) for a report

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

Oversight capacity (docs/capacity.md)
=====================================
CapacityModel, HandoffTotals, capacity_outputs, handoffs_per_hour, MAX_REVIEWERS, DEFAULT_DRAWS
                                 the reviewers' queue the measured hand-offs make, and the protection it
                                 gives (``escalation capacity``), with cluster-bootstrap intervals
erlang_b, erlang_c, mean_wait_minutes   the M/M/R queue (Erlang B and C) and the Allen-Cunneen wait
LogisticQuality, TableQuality, read_quality_table   review quality g(rho) as load rises

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
import lazy_loader

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
    "score_conversation", "call_marks", "CallMarks", "score_records", "RESULT_COLUMNS", "score_file", "TextJudge", "PhraseJudge", "turn_texts",
    "cells", "conversation_lines", "conversation_blocks", "write_outputs", "write_atomic", "write_files",
    "output_folder", "check_out_dir", "remove_stale_temporaries", "OutputFile",
    "log_inputs", "describe_file", "LOG_SUFFIXES",
    "conversation_evidence", "EVIDENCE_TEXT_LIMIT", "EVIDENCE_ARGUMENTS_LIMIT", "EVIDENCE_ITEMS_LIMIT",
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
    # oversight capacity
    "CapacityModel", "HandoffTotals", "capacity_outputs", "handoffs_per_hour", "MAX_REVIEWERS", "DEFAULT_DRAWS",
    "erlang_b", "erlang_c", "mean_wait_minutes", "LogisticQuality", "TableQuality", "read_quality_table",
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

#: The public names by the module that defines each: lazy_loader imports a module the first time one
#: of its names is asked for (PEP 562), so ``escalation --help`` imports no numerical library.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_aggregate": ["SummaryAccumulator", "summarise"],
    "_arrow": ["iter_records"],
    "_bootstrap": [
        "ClusterBootstrapResult", "DegenerateIntervalWarning", "cluster_bootstrap", "cluster_bootstrap_pi",
        "paired_cluster_bootstrap",
    ],
    "_capacity": [
        "DEFAULT_DRAWS", "MAX_REVIEWERS", "CapacityModel", "HandoffTotals", "LogisticQuality", "TableQuality",
        "capacity_outputs", "erlang_b", "erlang_c", "handoffs_per_hour", "mean_wait_minutes", "read_quality_table",
    ],
    "_calibration": [
        "CALIBRATION_METHODS", "Calibration", "CrossFit", "auroc", "calibration_bias", "case_folds", "cross_fit",
        "expected_calibration_error", "fit_calibration", "isotonic_fit", "platt_fit", "reliability_table",
    ],
    "_cause_judge": [
        "CAUSES", "CauseAnswerError", "CauseFinding", "CauseJudge", "CauseJudgeError", "CauseQuestion",
        "cause_questions", "judge_causes", "parse_cause_answer",
    ],
    "_compare": ["Comparison", "MetricDifference", "ScenarioMismatchError", "compare_scored", "inverted_p_value"],
    "_difference_coverage": [
        "DIFFERENCE_COVERAGE_STUDY", "FEW_CASES_BOOTSTRAP", "FEW_CASES_NEWCOMBE", "CoverageWord", "coverage_word",
        "difference_warnings", "interval_advice",
    ],
    "_conformance": ["CONFORMANCE_SETS", "ConformanceSet", "conformance_dir", "load_conformance_set"],
    "_difference": ["newcombe_paired_interval", "paired_correlation"],
    "_errors": ["InputError"],
    "_evidence": ["EVIDENCE_ARGUMENTS_LIMIT", "EVIDENCE_ITEMS_LIMIT", "EVIDENCE_TEXT_LIMIT", "conversation_evidence"],
    "_constants": ["DEFAULT_INTERVAL", "INTERVAL_METHODS", "RHO_BOUND_LEVEL", "WILSON_METHODS", "MAX_PLAN_SIZE"],
    "_clustered": ["clustered_interval", "korn_graubard_size", "rho_upper_bound"],
    "_design": [
        "RHO_WHEN_UNDEFINED", "ClusterDesign", "ClusterSums", "anova_icc", "cluster_design", "size_weighted_mean",
    ],
    "_exact": ["MAX_ESTIMATED_RHO_STATES", "ExactCoverage", "exact_coverage", "exact_coverages"],
    "_icc": ["fleiss_cuzick_icc"],
    "_intervals": [
        "ConfidenceInterval", "WilsonKishInterval", "critical_value", "design_effect", "wilson_interval",
        "wilson_kish_interval", "z_value",
    ],
    "_judge": ["PhraseJudge", "TextJudge", "turn_texts"],
    "_labels": ["Labels", "load_labels", "load_plan"],
    "_leaderboard": [
        "Leaderboard", "PairVerdict", "Standing", "compact_letter_display", "holm_adjust", "leaderboard",
        "log_model",
    ],
    "_misclassification": ["CorrectedRate", "predictive_value_correction", "rogan_gladen"],
    "_inputs": ["LOG_SUFFIXES", "describe_file", "log_inputs"],
    "_output": [
        "OutputFile", "cells", "check_out_dir", "conversation_blocks", "conversation_lines", "output_folder",
        "remove_stale_temporaries", "write_atomic", "write_files", "write_outputs",
    ],
    "_pipeline": ["score_file"],
    "_planning": [
        "DifferencePlan", "IntervalPlan", "PairedFigurePlan", "plan_difference", "plan_interval",
        "plan_paired_figure", "scenarios_needed", "wilson_sample_size",
    ],
    "_input_notes": ["handoff_word"],
    "_policy": ["Policy", "load_policy"],
    "_policy_draft": [
        "LOOKUP_VERBS", "Placement", "PolicyCheck", "PolicyDraft", "ToolUsage", "ToolUse", "check_policy",
        "draft_policy", "place_tool", "tool_usage", "turn_ranges",
    ],
    "_keys": ["UniqueKeys", "check_unique_keys"],
    "_records": ["Records", "iter_jsonl", "normalise_conversation", "read_jsonl"],
    "_reference": ["CallMarks", "call_marks", "score_conversation"],
    "_scored": ["read_scored"],
    "_summary": ["BaseSummary", "NotEvaluated", "PairedSummary", "RateSummary", "Summary", "clustered_rate"],
    "_validation": [
        "VALIDATION_METHOD", "VALIDATION_METHODS", "CorrectedFigure", "ValidationCorrection", "correct_text_summary",
        "read_validation", "validation_scores",
    ],
    "_turn_judge": [
        "TurnJudge", "TurnProbabilities", "TurnQuestion", "TurnQuestions", "doubtful_labels", "judge_turns",
        "over_escalation_severity", "turn_diagnostics", "turn_questions",
    ],
    "_vectorised": ["RESULT_COLUMNS", "score_records"],
    "_vocabulary": [
        "ACT", "BASE_CAUSES", "ESC", "LABELS", "MODE_ALIASES", "MODES", "NOT_EVALUATED_REASONS", "OVER_CAUSES",
        "RECORD", "TEXT", "UNDER_CAUSES", "check_mode", "normalise_label", "normalise_labels", "scenario_ids",
        "scenario_key",
    ],
    "readers": [
        "FORMATS", "ArchiveLimits", "detect_format", "inspect_sample_conversation", "iter_conversations",
        "read_conversations",
    ],
})
