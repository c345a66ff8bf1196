"""The names of ``escalation.estimators.records``: read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._arrow import iter_records
from ._errors import InputError
from ._files import (
    CONVERSATIONS, SUMMARY, check_out_dir, files_together, output_folder, OutputFile, remove_stale_temporaries,
    write_atomic, write_files,
)
from ._input_notes import (
    RULES, broken_call_rules, Counts, escalation_call_note, handoff_word, InputTally, labels_note,
    nothing_evaluated_notes, reason_fix,
)
from ._inputs import LOG_SUFFIXES, describe_file, log_inputs
from ._keys import check_unique_keys, key_hashes, UniqueKeys
from ._labels import Labels, load_labels, load_plan
from ._planned import PlannedConversations
from ._policy import load_policy, Policy
from ._policy_draft import LOOKUP_VERBS, check_policy, draft_policy, place_tool, Placement, PolicyCheck, PolicyDraft
from ._tool_usage import tool_usage, ToolUsage, ToolUse, turn_ranges
from .readers import (
    FORMATS, ArchiveLimits, detect_format, inspect_sample_conversation, iter_conversations, member_bytes,
    read_conversations,
)
from ._records import call_name, is_turn, iter_jsonl, normalise_conversation, read_jsonl, Records
from ._scored import read_scored
from ._vocabulary import (
    ACT, BASE_CAUSES, ESC, LABELS, MAX_TURNS, MODE_ALIASES, MODES, NOT_EVALUATED_REASONS, OVER_CAUSES, RECORD, TEXT,
    UNDER_CAUSES, check_mode, normalise_label, normalise_labels, scenario_ids, scenario_key,
)
