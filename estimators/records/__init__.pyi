"""The names of ``escalation.estimators.records``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._arrow import iter_records as iter_records
from ._errors import InputError as InputError
from ._files import (
    CONVERSATIONS as CONVERSATIONS,
)
from ._files import (
    SUMMARY as SUMMARY,
)
from ._files import (
    OutputFile as OutputFile,
)
from ._files import (
    check_out_dir as check_out_dir,
)
from ._files import (
    files_together as files_together,
)
from ._files import (
    output_folder as output_folder,
)
from ._files import (
    remove_stale_temporaries as remove_stale_temporaries,
)
from ._files import (
    write_atomic as write_atomic,
)
from ._files import (
    write_files as write_files,
)
from ._input_notes import (
    RULES as RULES,
)
from ._input_notes import (
    Counts as Counts,
)
from ._input_notes import (
    InputTally as InputTally,
)
from ._input_notes import (
    broken_call_rules as broken_call_rules,
)
from ._input_notes import (
    escalation_call_note as escalation_call_note,
)
from ._input_notes import (
    handoff_word as handoff_word,
)
from ._input_notes import (
    labels_note as labels_note,
)
from ._input_notes import (
    nothing_evaluated_notes as nothing_evaluated_notes,
)
from ._input_notes import (
    reason_fix as reason_fix,
)
from ._inputs import LOG_SUFFIXES as LOG_SUFFIXES
from ._inputs import describe_file as describe_file
from ._inputs import log_inputs as log_inputs
from ._keys import UniqueKeys as UniqueKeys
from ._keys import check_unique_keys as check_unique_keys
from ._keys import key_hashes as key_hashes
from ._labels import Labels as Labels
from ._labels import load_labels as load_labels
from ._labels import load_plan as load_plan
from ._planned import PlannedConversations as PlannedConversations
from ._policy import Policy as Policy
from ._policy import load_policy as load_policy
from ._policy_draft import (
    LOOKUP_VERBS as LOOKUP_VERBS,
)
from ._policy_draft import (
    Placement as Placement,
)
from ._policy_draft import (
    PolicyCheck as PolicyCheck,
)
from ._policy_draft import (
    PolicyDraft as PolicyDraft,
)
from ._policy_draft import (
    check_policy as check_policy,
)
from ._policy_draft import (
    draft_policy as draft_policy,
)
from ._policy_draft import (
    place_tool as place_tool,
)
from ._records import (
    Records as Records,
)
from ._records import (
    call_name as call_name,
)
from ._records import (
    is_turn as is_turn,
)
from ._records import (
    iter_jsonl as iter_jsonl,
)
from ._records import (
    normalise_conversation as normalise_conversation,
)
from ._records import (
    read_jsonl as read_jsonl,
)
from ._scored import read_scored as read_scored
from ._tool_usage import (
    ToolUsage as ToolUsage,
)
from ._tool_usage import (
    ToolUse as ToolUse,
)
from ._tool_usage import (
    tool_usage as tool_usage,
)
from ._tool_usage import (
    turn_ranges as turn_ranges,
)
from ._vocabulary import (
    ACT as ACT,
)
from ._vocabulary import (
    BASE_CAUSES as BASE_CAUSES,
)
from ._vocabulary import (
    ESC as ESC,
)
from ._vocabulary import (
    LABELS as LABELS,
)
from ._vocabulary import (
    MAX_TURNS as MAX_TURNS,
)
from ._vocabulary import (
    MODE_ALIASES as MODE_ALIASES,
)
from ._vocabulary import (
    MODES as MODES,
)
from ._vocabulary import (
    NOT_EVALUATED_REASONS as NOT_EVALUATED_REASONS,
)
from ._vocabulary import (
    OVER_CAUSES as OVER_CAUSES,
)
from ._vocabulary import (
    RECORD as RECORD,
)
from ._vocabulary import (
    TEXT as TEXT,
)
from ._vocabulary import (
    UNDER_CAUSES as UNDER_CAUSES,
)
from ._vocabulary import (
    check_mode as check_mode,
)
from ._vocabulary import (
    normalise_label as normalise_label,
)
from ._vocabulary import (
    normalise_labels as normalise_labels,
)
from ._vocabulary import (
    scenario_ids as scenario_ids,
)
from ._vocabulary import (
    scenario_key as scenario_key,
)
from .readers import (
    FORMATS as FORMATS,
)
from .readers import (
    ArchiveLimits as ArchiveLimits,
)
from .readers import (
    detect_format as detect_format,
)
from .readers import (
    inspect_sample_conversation as inspect_sample_conversation,
)
from .readers import (
    iter_conversations as iter_conversations,
)
from .readers import (
    member_bytes as member_bytes,
)
from .readers import (
    read_conversations as read_conversations,
)
