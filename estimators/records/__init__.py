"""What the measurement reads and writes: the vocabulary, policies, records, readers and output files.

Everything between a file on disk and the columns the scorers take (SPEC sections 1, 2, 6 and 7):
bad input raises :class:`InputError`, one line naming the file, line and field.

The vocabulary (SPEC sections 1 to 5)
=====================================
ESC, ACT, LABELS                 the two labels
normalise_label, normalise_labels
                                 a label as it is read (``"esc"``, ``" Act "``: ESC, ACT), of one value or a column
RECORD, TEXT, MODES, MODE_ALIASES, check_mode   the two modes (the paper's A and B)
UNDER_CAUSES, OVER_CAUSES, BASE_CAUSES, NOT_EVALUATED_REASONS, MAX_TURNS
                                 the causes, the reasons a conversation is not evaluated, the most turns
UNNAMED                          how a call without a name is written (``<unnamed>``, an unmarked action)
scenario_key, scenario_ids       the default cluster id: ``case_id:label``, else the conversation
InputError                       bad input: one line naming the file, line and field

Approval evidence (SPEC section 3A)
===================================
GRANTED, DENIED, UNKNOWN, DECISIONS, NO_DECISION, decision_code, approver_text, inline_evidence,
request_evidence, INSPECT_DECISIONS, unrecorded_approvals
                                 a decision and who took it, on a request or inline on a gated call; the
                                 columns of calls that carry none
APPROVAL_STATUSES, APPROVAL_ERRORS, APPROVAL_SCOPES
                                 the status of a gated call, those that are errors, what one grant covers

Policies (SPEC section 2)
=========================
Policy, load_policy              the tool lists of an oversight policy
tool_usage, ToolUsage, ToolUse, draft_policy, PolicyDraft, place_tool, Placement, LOOKUP_VERBS,
check_policy, PolicyCheck, turn_ranges
                                 the tools a log calls, a draft policy from them, a policy checked
                                 against a log (``escalation policy``)

Records and readers (SPEC sections 1, 6 and 7)
==============================================
Records                          conversations, calls and messages as columns
normalise_conversation, call_name, is_named, is_turn, run_error_text
                                 one canonical record, validated; a call's name; a valid turn; the
                                 message of a run that failed
iter_records                     canonical JSONL in chunks of Records, through Arrow where it can
read_jsonl, iter_jsonl           the reference reader: whole, or in chunks of ``(line, conversation)``
check_unique_keys, UniqueKeys, key_hashes, RepeatedKeyError, repeated_across_logs
                                 the key rule (unique ``conversation_id`` and (case, label, replica)):
                                 of a table, or streamed; its error, and that of logs that share keys
read_conversations, iter_conversations, detect_format, FORMATS, inspect_sample_conversation
                                 every supported log format
openinference_conversation       one trace's OpenInference spans (Phoenix's REST shape) as a conversation
GROUPINGS, SESSION_FORMATS       a conversation of traces: a trace or a session's (``--group-by``), and the formats
                                 that have sessions
ArchiveLimits, member_bytes      the most an inspect_ai .eval archive may decompress to; a member's size
Labels, load_labels, load_plan, PlannedConversations
                                 labels and planned scenarios for logs that carry none
log_inputs, describe_file, LOG_SUFFIXES   the logs of a command line (files, folders, -) and their provenance
InputTally, Counts, RULES, broken_call_rules, escalation_call_note, handoff_word, labels_note,
nothing_evaluated_notes, reason_fix, no_call_note, left_out_notes, LEFT_OUT_SHARE, SHOWN_ERRORED
                                 what was read, and the notes that explain it to a person

Output files (SPEC section 7)
=============================
write_atomic, write_files, files_together, OutputFile
                                 files written whole under a temporary name, then renamed, together
output_folder, check_out_dir, remove_stale_temporaries, folder_lock, LOCK
                                 the ``--out`` folder: made, checked, locked for one writer, and cleaned of
                                 killed runs' files
CONVERSATIONS, SUMMARY, read_scored
                                 the two files of a scored folder, and the folder read back

Text from the input on every output (the assistant under test writes it)
========================================================================
terminal_text, markdown_text, markdown_code, html_text, plot_text
                                 a name, id or text shown literally on a terminal, in Markdown (a cell, a
                                 code span), on a page (HTML, SVG), in a matplotlib figure
visible, is_hidden, cut, hidden_pattern, HIDDEN_CATEGORIES, BLANK_LETTERS
                                 the one rule: hidden characters shown as ``<U+202E>``, long text cut with
                                 its length; the rule as a page's script applies it
NAME_LIMIT, SENTENCE_LIMIT, PLOT_LIMIT
                                 the most characters of a name, of a sentence, of a text in a figure
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
