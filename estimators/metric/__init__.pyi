"""The names of ``escalation.estimators.metric``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._aggregate import SummaryAccumulator as SummaryAccumulator
from ._aggregate import summarise as summarise
from ._capacity import (
    DEFAULT_DRAWS as DEFAULT_DRAWS,
)
from ._capacity import (
    MAX_REVIEWERS as MAX_REVIEWERS,
)
from ._capacity import (
    CapacityModel as CapacityModel,
)
from ._capacity import (
    capacity_outputs as capacity_outputs,
)
from ._capacity import (
    handoffs_per_hour as handoffs_per_hour,
)
from ._compare import Comparison as Comparison
from ._compare import compare_scored as compare_scored
from ._conformance import (
    CONFORMANCE_SETS as CONFORMANCE_SETS,
)
from ._conformance import (
    ConformanceSet as ConformanceSet,
)
from ._conformance import (
    conformance_dir as conformance_dir,
)
from ._conformance import (
    load_conformance_set as load_conformance_set,
)
from ._difference_coverage import (
    DIFFERENCE_COVERAGE_STUDY as DIFFERENCE_COVERAGE_STUDY,
)
from ._difference_coverage import (
    FEW_CASES_BOOTSTRAP as FEW_CASES_BOOTSTRAP,
)
from ._difference_coverage import (
    FEW_CASES_NEWCOMBE as FEW_CASES_NEWCOMBE,
)
from ._difference_coverage import (
    CoverageWord as CoverageWord,
)
from ._difference_coverage import (
    coverage_word as coverage_word,
)
from ._difference_coverage import (
    difference_warnings as difference_warnings,
)
from ._difference_coverage import (
    interval_advice as interval_advice,
)
from ._evidence import (
    EVIDENCE_ARGUMENTS_LIMIT as EVIDENCE_ARGUMENTS_LIMIT,
)
from ._evidence import (
    EVIDENCE_ITEMS_LIMIT as EVIDENCE_ITEMS_LIMIT,
)
from ._evidence import (
    EVIDENCE_TEXT_LIMIT as EVIDENCE_TEXT_LIMIT,
)
from ._evidence import (
    conversation_evidence as conversation_evidence,
)
from ._handoff_totals import HandoffTotals as HandoffTotals
from ._leaderboard import (
    Leaderboard as Leaderboard,
)
from ._leaderboard import (
    PairVerdict as PairVerdict,
)
from ._leaderboard import (
    Standing as Standing,
)
from ._leaderboard import (
    leaderboard as leaderboard,
)
from ._lines import (
    cells as cells,
)
from ._lines import (
    conversation_blocks as conversation_blocks,
)
from ._lines import (
    conversation_lines as conversation_lines,
)
from ._lines import (
    write_outputs as write_outputs,
)
from ._log_model import log_model as log_model
from ._multiple_comparisons import compact_letter_display as compact_letter_display
from ._multiple_comparisons import holm_adjust as holm_adjust
from ._paired_differences import (
    MetricDifference as MetricDifference,
)
from ._paired_differences import (
    ScenarioMismatchError as ScenarioMismatchError,
)
from ._paired_differences import (
    inverted_p_value as inverted_p_value,
)
from ._pipeline import score_file as score_file
from ._reference import CallMarks as CallMarks
from ._reference import call_marks as call_marks
from ._reference import score_conversation as score_conversation
from ._review_quality import (
    LogisticQuality as LogisticQuality,
)
from ._review_quality import (
    TableQuality as TableQuality,
)
from ._review_quality import (
    read_quality_table as read_quality_table,
)
from ._summary import (
    BaseSummary as BaseSummary,
)
from ._summary import (
    NotEvaluated as NotEvaluated,
)
from ._summary import (
    PairedSummary as PairedSummary,
)
from ._summary import (
    RateSummary as RateSummary,
)
from ._summary import (
    Summary as Summary,
)
from ._summary import (
    clustered_rate as clustered_rate,
)
from ._text_mode import PhraseJudge as PhraseJudge
from ._text_mode import TextJudge as TextJudge
from ._text_mode import turn_texts as turn_texts
from ._vectorised import RESULT_COLUMNS as RESULT_COLUMNS
from ._vectorised import score_records as score_records
