"""The names of ``escalation.estimators.metric``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._aggregate import SummaryAccumulator as SummaryAccumulator, summarise as summarise
from ._capacity import (
    DEFAULT_DRAWS as DEFAULT_DRAWS,
    MAX_REVIEWERS as MAX_REVIEWERS,
    NO_APPROVALS as NO_APPROVALS,
    CapacityModel as CapacityModel,
    capacity_outputs as capacity_outputs,
    handoffs_per_hour as handoffs_per_hour,
    review_mix as review_mix,
)
from ._compare import Comparison as Comparison, compare_scored as compare_scored
from ._conformance import (
    CONFORMANCE_SETS as CONFORMANCE_SETS,
    ConformanceSet as ConformanceSet,
    conformance_dir as conformance_dir,
    load_conformance_set as load_conformance_set,
)
from ._difference_coverage import (
    DIFFERENCE_COVERAGE_STUDY as DIFFERENCE_COVERAGE_STUDY,
    FEW_CASES_BOOTSTRAP as FEW_CASES_BOOTSTRAP,
    FEW_CASES_NEWCOMBE as FEW_CASES_NEWCOMBE,
    NEWCOMBE_LIMITS as NEWCOMBE_LIMITS,
    CoverageWord as CoverageWord,
    auto_difference_interval as auto_difference_interval,
    coverage_word as coverage_word,
    difference_warnings as difference_warnings,
    interval_advice as interval_advice,
)
from ._distributed import BACKENDS as BACKENDS, dask_client as dask_client
from ._evidence import (
    EVIDENCE_ARGUMENTS_LIMIT as EVIDENCE_ARGUMENTS_LIMIT,
    EVIDENCE_ITEMS_LIMIT as EVIDENCE_ITEMS_LIMIT,
    EVIDENCE_TEXT_LIMIT as EVIDENCE_TEXT_LIMIT,
    conversation_evidence as conversation_evidence,
)
from ._gate import (
    GATE_CODES as GATE_CODES,
    GATE_FAIL as GATE_FAIL,
    GATE_PASS as GATE_PASS,
    GATE_UNDECIDED as GATE_UNDECIDED,
    GateCriterion as GateCriterion,
    gate_decision as gate_decision,
    gate_decisions as gate_decisions,
    gate_overall as gate_overall,
    look_confidence as look_confidence,
    obrien_fleming_spent as obrien_fleming_spent,
)
from ._handoff_totals import HandoffTotals as HandoffTotals, approval_reviews as approval_reviews
from ._leaderboard import (
    Leaderboard as Leaderboard,
    PairVerdict as PairVerdict,
    Standing as Standing,
    leaderboard as leaderboard,
)
from ._lines import (
    cells as cells,
    conversation_blocks as conversation_blocks,
    conversation_lines as conversation_lines,
    write_outputs as write_outputs,
)
from ._log_model import log_model as log_model
from ._multiple_comparisons import compact_letter_display as compact_letter_display, holm_adjust as holm_adjust
from ._paired_differences import (
    MetricDifference as MetricDifference,
    ScenarioMismatchError as ScenarioMismatchError,
    inverted_p_value as inverted_p_value,
)
from ._pipeline import score_file as score_file
from ._reference import (
    CallMarks as CallMarks,
    GatedCall as GatedCall,
    approval_statuses as approval_statuses,
    call_marks as call_marks,
    score_conversation as score_conversation,
)
from ._review_quality import (
    LogisticQuality as LogisticQuality,
    TableQuality as TableQuality,
    read_quality_table as read_quality_table,
)
from ._summary import (
    ApprovalSummary as ApprovalSummary,
    BaseSummary as BaseSummary,
    NotEvaluated as NotEvaluated,
    PairedSummary as PairedSummary,
    RateSummary as RateSummary,
    Summary as Summary,
    clustered_rate as clustered_rate,
)
from ._text_mode import (
    PhraseJudge as PhraseJudge,
    TextJudge as TextJudge,
    phrase_judge_accuracy as phrase_judge_accuracy,
    phrase_set as phrase_set,
    turn_texts as turn_texts,
)
from ._vectorised import RESULT_COLUMNS as RESULT_COLUMNS, score_records as score_records
