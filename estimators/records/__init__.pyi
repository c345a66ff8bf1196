"""The names of ``escalation.estimators.records``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._approval import (
    APPROVAL_ERRORS as APPROVAL_ERRORS,
    APPROVAL_SCOPES as APPROVAL_SCOPES,
    APPROVAL_STATUSES as APPROVAL_STATUSES,
    DECISIONS as DECISIONS,
    DENIED as DENIED,
    GRANTED as GRANTED,
    INSPECT_DECISIONS as INSPECT_DECISIONS,
    NO_DECISION as NO_DECISION,
    UNKNOWN as UNKNOWN,
    approver_text as approver_text,
    decision_code as decision_code,
    inline_evidence as inline_evidence,
    request_evidence as request_evidence,
    unrecorded_approvals as unrecorded_approvals,
)
from ._arrow import iter_records as iter_records
from ._errors import InputError as InputError
from ._files import (
    CONVERSATIONS as CONVERSATIONS,
    LOCK as LOCK,
    SUMMARY as SUMMARY,
    OutputFile as OutputFile,
    check_out_dir as check_out_dir,
    files_together as files_together,
    folder_lock as folder_lock,
    output_folder as output_folder,
    remove_stale_temporaries as remove_stale_temporaries,
    write_atomic as write_atomic,
    write_files as write_files,
)
from ._formats import FORMATS as FORMATS
from ._input_notes import (
    LEFT_OUT_SHARE as LEFT_OUT_SHARE,
    RULES as RULES,
    SHOWN_ERRORED as SHOWN_ERRORED,
    Counts as Counts,
    InputTally as InputTally,
    broken_call_rules as broken_call_rules,
    escalation_call_note as escalation_call_note,
    handoff_word as handoff_word,
    labels_note as labels_note,
    left_out_notes as left_out_notes,
    no_call_note as no_call_note,
    nothing_evaluated_notes as nothing_evaluated_notes,
    reason_fix as reason_fix,
)
from ._inputs import LOG_SUFFIXES as LOG_SUFFIXES, describe_file as describe_file, log_inputs as log_inputs
from ._keys import (
    RepeatedKeyError as RepeatedKeyError,
    UniqueKeys as UniqueKeys,
    check_unique_keys as check_unique_keys,
    key_hashes as key_hashes,
    repeated_across_logs as repeated_across_logs,
)
from ._labels import Labels as Labels, load_labels as load_labels, load_plan as load_plan
from ._planned import PlannedConversations as PlannedConversations
from ._policy import Policy as Policy, load_policy as load_policy
from ._policy_draft import (
    LOOKUP_VERBS as LOOKUP_VERBS,
    Placement as Placement,
    PolicyCheck as PolicyCheck,
    PolicyDraft as PolicyDraft,
    check_policy as check_policy,
    draft_policy as draft_policy,
    place_tool as place_tool,
)
from ._records import (
    Records as Records,
    call_name as call_name,
    is_named as is_named,
    is_turn as is_turn,
    iter_jsonl as iter_jsonl,
    normalise_conversation as normalise_conversation,
    read_jsonl as read_jsonl,
    run_error_text as run_error_text,
)
from ._scored import read_scored as read_scored
from ._tool_usage import (
    ToolUsage as ToolUsage,
    ToolUse as ToolUse,
    tool_usage as tool_usage,
    turn_ranges as turn_ranges,
)
from ._untrusted import (
    BLANK_LETTERS as BLANK_LETTERS,
    HIDDEN_CATEGORIES as HIDDEN_CATEGORIES,
    NAME_LIMIT as NAME_LIMIT,
    PLOT_LIMIT as PLOT_LIMIT,
    SENTENCE_LIMIT as SENTENCE_LIMIT,
    cut as cut,
    hidden_pattern as hidden_pattern,
    html_text as html_text,
    is_hidden as is_hidden,
    markdown_code as markdown_code,
    markdown_text as markdown_text,
    plot_text as plot_text,
    terminal_text as terminal_text,
    visible as visible,
)
from ._vocabulary import (
    ACT as ACT,
    BASE_CAUSES as BASE_CAUSES,
    ESC as ESC,
    LABELS as LABELS,
    MAX_TURNS as MAX_TURNS,
    MODE_ALIASES as MODE_ALIASES,
    MODES as MODES,
    NOT_EVALUATED_REASONS as NOT_EVALUATED_REASONS,
    OVER_CAUSES as OVER_CAUSES,
    RECORD as RECORD,
    TEXT as TEXT,
    UNDER_CAUSES as UNDER_CAUSES,
    UNNAMED as UNNAMED,
    check_mode as check_mode,
    normalise_label as normalise_label,
    normalise_labels as normalise_labels,
    scenario_ids as scenario_ids,
    scenario_key as scenario_key,
)
from .readers import (
    GROUPINGS as GROUPINGS,
    SESSION_FORMATS as SESSION_FORMATS,
    ArchiveLimits as ArchiveLimits,
    detect_format as detect_format,
    inspect_sample_conversation as inspect_sample_conversation,
    iter_conversations as iter_conversations,
    member_bytes as member_bytes,
    openinference_conversation as openinference_conversation,
    read_conversations as read_conversations,
)
