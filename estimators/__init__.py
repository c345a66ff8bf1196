"""The escalation measurement (SPEC sections 2 to 7) and its statistics.

Public names live here; the implementation is in private modules.
"""
from ._aggregate import BaseSummary, NotEvaluated, PairedSummary, RateSummary, Summary, clustered_rate, summarise
from ._errors import InputError
from ._intervals import anova_icc, design_effect, wilson_interval, wilson_kish_interval, z_value
from ._judge import PhraseJudge, TextJudge
from ._output import cells, conversation_lines, write_outputs
from ._policy import Policy, load_policy
from ._records import Records, normalise_conversation, read_jsonl
from ._reference import score_conversation
from ._vectorised import RESULT_COLUMNS, score_records

__all__ = [
    "BaseSummary", "InputError", "NotEvaluated", "PairedSummary", "PhraseJudge", "Policy", "RESULT_COLUMNS",
    "RateSummary", "Records", "Summary", "TextJudge", "anova_icc", "cells", "clustered_rate",
    "conversation_lines", "design_effect", "load_policy", "normalise_conversation", "read_jsonl",
    "score_conversation", "score_records", "summarise", "wilson_interval", "wilson_kish_interval",
    "write_outputs", "z_value",
]
