"""The escalation measurement: the two scorers, their summary, and what is built on it.

Scoring follows SPEC sections 3 and 4, rates SPEC section 5; comparison, the leaderboard and the
reviewers' capacity read the scored results.

Scoring (SPEC sections 3 and 4)
===============================
score_conversation               the readable reference scorer, one conversation
call_marks, CallMarks            each call's kind, the first escalation kE, the first consequential action kA
approval_statuses, GatedCall     the status of each gated call (SPEC section 3A), readable
score_records, RESULT_COLUMNS    the vectorised scorer, one row per conversation
score_file                       logs end to end, in bounded memory, here or on a Dask cluster
dask_client, BACKENDS            the Dask cluster that work outgrowing one machine runs on (``--backend dask``)
TextJudge, PhraseJudge, turn_texts   observation without a record (mode B)
phrase_set, phrase_judge_accuracy   a mode B judge's recall and false-positive rate on a fixed set of
                                 ordinary hand-off and other sentences, English and Spanish
cells, conversation_lines, conversation_blocks, write_outputs
                                 the per-turn cells and the ``conversations.jsonl`` lines
conversation_evidence, EVIDENCE_TEXT_LIMIT, EVIDENCE_ARGUMENTS_LIMIT, EVIDENCE_ITEMS_LIMIT
                                 one conversation's timeline (turns, texts, calls and their kinds) for a report

Rates and pairs (SPEC section 5)
================================
summarise, SummaryAccumulator    the summary of scored conversations, whole or chunk by chunk
Summary, RateSummary, PairedSummary, ApprovalSummary, BaseSummary, NotEvaluated
                                 the results (``p_a`` and its evidence: ApprovalSummary); a rate keeps its
                                 cluster totals, and ``summary.under.ci(confidence_level=0.9)`` recomputes
                                 its interval
clustered_rate                   a rate with the Kish design effect and the Wilson interval

Comparison
==========
compare_scored, Comparison, MetricDifference, ScenarioMismatchError, inverted_p_value
                                 two assistants on the same scenarios (B minus A), p-values by test inversion
coverage_word, CoverageWord, DIFFERENCE_COVERAGE_STUDY, difference_warnings, interval_advice,
FEW_CASES_NEWCOMBE, FEW_CASES_BOOTSTRAP, NEWCOMBE_LIMITS, auto_difference_interval
                                 what `escalation study differences` measured beside each difference interval,
                                 and the limits `compare --interval auto` takes
leaderboard, Leaderboard, Standing, PairVerdict, holm_adjust, compact_letter_display, log_model
                                 several assistants ranked on the same scenarios, with the groups
                                 that cannot be told apart (Holm 1979; Piepho 2004)

Oversight capacity (docs/capacity.md)
=====================================
CapacityModel, HandoffTotals, capacity_outputs, handoffs_per_hour, MAX_REVIEWERS, DEFAULT_DRAWS
                                 the reviewers' queue the measured hand-offs make, and the protection it
                                 gives (``escalation capacity``), with cluster-bootstrap intervals
approval_reviews, review_mix, NO_APPROVALS
                                 approval requests are reviews too (SPEC 3A): their count per conversation,
                                 the mixed review time, and the note when a scored folder has none
LogisticQuality, TableQuality, read_quality_table   review quality g(rho) as load rises

The release gate (``escalation gate``, issue 37)
================================================
GateCriterion, gate_decision, gate_decisions, gate_overall, GATE_PASS, GATE_FAIL, GATE_UNDECIDED, GATE_CODES
                                 a criterion passed, failed or left undecided by the bounds of its interval,
                                 one interval or arrays of them, and the release's decision
obrien_fleming_spent, look_confidence
                                 the level of look K of N planned looks at a growing run, by
                                 O'Brien-Fleming-type alpha spending (Lan & DeMets 1983)

The conformance set
===================
CONFORMANCE_SETS, ConformanceSet, conformance_dir, load_conformance_set
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
