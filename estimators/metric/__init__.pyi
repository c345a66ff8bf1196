"""The names of ``escalation.estimators.metric``: read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._aggregate import summarise, SummaryAccumulator
from ._capacity import DEFAULT_DRAWS, MAX_REVIEWERS, capacity_outputs, CapacityModel, handoffs_per_hour
from ._handoff_totals import HandoffTotals
from ._review_quality import LogisticQuality, read_quality_table, TableQuality
from ._compare import compare_scored, Comparison
from ._paired_differences import inverted_p_value, MetricDifference, ScenarioMismatchError
from ._conformance import CONFORMANCE_SETS, conformance_dir, ConformanceSet, load_conformance_set
from ._difference_coverage import (
    DIFFERENCE_COVERAGE_STUDY, FEW_CASES_BOOTSTRAP, FEW_CASES_NEWCOMBE, coverage_word, CoverageWord,
    difference_warnings, interval_advice,
)
from ._evidence import EVIDENCE_ARGUMENTS_LIMIT, EVIDENCE_ITEMS_LIMIT, EVIDENCE_TEXT_LIMIT, conversation_evidence
from ._leaderboard import Leaderboard, leaderboard, PairVerdict, Standing
from ._log_model import log_model
from ._multiple_comparisons import compact_letter_display, holm_adjust
from ._lines import cells, conversation_blocks, conversation_lines, write_outputs
from ._pipeline import score_file
from ._reference import call_marks, CallMarks, score_conversation
from ._summary import BaseSummary, clustered_rate, NotEvaluated, PairedSummary, RateSummary, Summary
from ._text_mode import PhraseJudge, TextJudge, turn_texts
from ._vectorised import RESULT_COLUMNS, score_records
