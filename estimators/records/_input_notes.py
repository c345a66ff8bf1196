"""Notes on a result that cannot be what the user meant (SPEC section 7, decision of 2026-12-01).

A labels file that labels no conversation: a few of its keys beside the log's ids. When no
conversation is evaluated: each not-evaluated reason with what fixes it. In record mode,
a log that holds no tool call, or no call of an escalation tool: the tools it does call, and those
whose names suggest a hand-off. The facts are an :class:`InputTally`, which
:class:`~estimators.metric._aggregate.SummaryAccumulator` fills chunk by chunk from what the scorer
already has in memory: counts of names and of conversations, never the calls themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..stats import counted
from ._vocabulary import MAX_TURNS, RECORD

__all__ = ["InputTally", "Counts", "broken_call_rules", "nothing_evaluated_notes", "escalation_call_note",
           "labels_note", "HANDOFF_WORDS", "handoff_word", "RULES", "reason_fix", "no_call_note", "left_out_notes",
           "LEFT_OUT_SHARE", "SHOWN_ERRORED"]

#: Parts of a tool name that suggest a hand-off to a person (matched case-insensitively).
HANDOFF_WORDS = ("transfer", "human", "handoff", "hand_off", "escalat", "supervisor", "agent")
#: Most distinct values (tool names, label values) counted one by one; the others are counted together.
MAX_DISTINCT = 1000
_SHOWN_TOOLS = 10
_SHOWN_LABELS = 5
#: ``run_error`` conversations named in the notes.
SHOWN_ERRORED = 3

#: The rules of SPEC section 3 that make a conversation ``invalid_record``, as a newcomer reads them.
RULES = {"bad_turn": "a call turn missing, negative or not an integer",
         "late_turn": "a call turn not below assistant_turns",
         "turn_back": "a call turn smaller than the one before",
         "no_turns": f"assistant_turns not an integer in 1..{MAX_TURNS}"}


def handoff_word(name) -> str | None:
    """The first of :data:`HANDOFF_WORDS` in the tool name ``name`` (case-insensitively), or None.

    A word found means the name suggests a hand-off to a person.
    """
    text = str(name).lower()
    return next((word for word in HANDOFF_WORDS if word in text), None)


class Counts:
    """Counts of values (tool names, label values) as chunks come, in bounded memory.

    At most :data:`MAX_DISTINCT` distinct values are counted one by one; the counts of later
    new values go to :attr:`others`.
    """

    def __init__(self) -> None:
        self.counts: dict = {}
        self.others = 0

    def add(self, counts: pd.Series) -> None:
        """Add one chunk's counts (a ``value_counts`` result; zero counts are skipped)."""
        for value, count in counts[counts > 0].items():  # one step per distinct value of the chunk
            if value in self.counts:
                self.counts[value] += int(count)
            elif len(self.counts) < MAX_DISTINCT:
                self.counts[value] = int(count)
            else:
                self.others += int(count)

    def most_frequent(self) -> dict:
        """The counts, most frequent first (ties in the order of the values' text)."""
        return dict(sorted(self.counts.items(), key=lambda item: (-item[1], str(item[0]))))


@dataclass(frozen=True)
class InputTally:
    """What the input held besides the scores, for the notes of SPEC section 7.

    Attributes
    ----------
    calls : int or None
        Tool calls read; None when they were not counted (mode text, or a frame summarised
        without its records).
    escalation_calls : int
        Calls of an escalation tool of the policy.
    escalation_tools : tuple of str
        The policy's escalation tools, sorted.
    tools : dict
        Called name to number of calls, most frequent first (at most :data:`MAX_DISTINCT` names).
    other_tools : int
        Calls of the names beyond those.
    with_record : int
        Conversations that have a tool record.
    labels : dict
        Label value to number of conversations, for the ``invalid_label`` conversations, most
        frequent first.
    other_labels : int
        ``invalid_label`` conversations whose value is beyond those.
    broken_rules : dict
        Rule of :data:`RULES` to the number of ``invalid_record`` conversations that break it
        (a conversation may break several).
    unmatched_labels : dict or None
        When a labels file labelled none of the conversations: a few of its keys and of the
        log's ids (:meth:`~estimators.records._labels.Labels.unmatched`); else None.
    run_errors : dict
        The harness's message to the number of ``run_error`` conversations that carry it, most
        frequent first; ``other_run_errors`` counts those beyond them.
    errored : tuple of str
        The first ``run_error`` conversations (at most :data:`SHOWN_ERRORED`), in input order.
    evaluated_calls : int or None
        Tool calls read from the log in the evaluated conversations (None when the calls were not
        counted); a call a reader made of an item it could not read is not one of them.
    unreadable_calls : int
        Calls that readers made of items they could not read (each an ``<unnamed>`` call).
    labelled : dict
        ``ESC`` and ``ACT`` to the number of conversations with that label.
    left_out : dict
        ``ESC`` and ``ACT`` to ``{reason: count}``: their conversations that are not evaluated.
    """

    calls: int | None = None
    escalation_calls: int = 0
    escalation_tools: tuple = ()
    tools: dict = field(default_factory=dict)
    other_tools: int = 0
    with_record: int = 0
    labels: dict = field(default_factory=dict)
    other_labels: int = 0
    broken_rules: dict = field(default_factory=dict)
    unmatched_labels: dict | None = None
    run_errors: dict = field(default_factory=dict)
    other_run_errors: int = 0
    errored: tuple = ()
    evaluated_calls: int | None = None
    unreadable_calls: int = 0
    labelled: dict = field(default_factory=dict)
    left_out: dict = field(default_factory=dict)


def broken_call_rules(records, invalid: np.ndarray) -> dict:
    """For each call rule of :data:`RULES`, the number of conversations at ``invalid`` that break it.

    Vectorised over the calls of those conversations alone (none on a clean log).

    Parameters
    ----------
    records : Records
        The chunk's columnar conversations (:class:`~estimators.records._records.Records`).
    invalid : ndarray of bool
        One per conversation: the ``invalid_record`` ones.
    """
    calls = records.calls
    conv = calls["conv"].to_numpy(np.int64)
    keep = invalid[conv]
    conv, turn = conv[keep], calls["turn"].to_numpy(np.int64)[keep]
    order = np.argsort(conv, kind="stable")  # record order within each conversation, as the scorer reads it
    conv, turn = conv[order], turn[order]
    turns = records.conversations["assistant_turns"].to_numpy(np.int64)[conv]
    turn_back = np.zeros(conv.size, dtype=bool)
    turn_back[1:] = (conv[1:] == conv[:-1]) & (turn[1:] < turn[:-1]) & (turn[1:] >= 0)
    flags = {"bad_turn": turn < 0, "late_turn": (turns >= 1) & (turn >= turns),
             "turn_back": turn_back}
    return {rule: int(np.unique(conv[flag]).size) for rule, flag in flags.items()}


def _invalid_label_fix(tally: InputTally) -> str:
    """The label values found (a few, with their counts) and the two accepted."""
    found = _listed(tally.labels, _SHOWN_LABELS, tally.other_labels)
    return (f"the labels found are {found}; the two accepted are ESC and ACT (read case-insensitively): "
            "correct them or give --labels FILE")


def _shown(value) -> str:
    """A value from the input as a note shows it: its ``repr``, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "\u2026"


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _listed(counts: dict, shown: int, others: int) -> str:
    """``'yes' 3, 'no' 2 ...``: the first ``shown`` values of ``counts`` with their counts, and ``...``
    when some are left out (more values, or ``others`` beyond those counted)."""
    text = ", ".join(f"{_shown(value)} {count}" for value, count in list(counts.items())[:shown])
    return text + (" ..." if len(counts) > shown or others else "")


def reason_fix(reason: str, count: int, tally: InputTally, mode: str) -> str:
    """What the ``count`` conversations not evaluated for ``reason`` need, in a sentence or two."""
    if reason == "no_label" and tally.unmatched_labels is not None:
        return "the log gives no label, and the labels file labels none of its conversations (see its note)"
    if reason == "no_label":
        return ("the log gives no label; give --labels FILE (a CSV or JSON file mapping case_id or "
                "conversation_id to ESC or ACT)")
    if reason == "invalid_label":
        return _invalid_label_fix(tally)
    if reason == "no_record":
        return ("the log has no tool record (tool_calls); --mode text scores the assistant's text instead "
                "(p_u is then a lower bound when every hand-off is stated; --validation corrects it), or check "
                "--format")
    if reason == "run_error":
        said = "; ".join(f"{n} x {_cut(message)}" for message, n in list(tally.run_errors.items())[:2])
        more = "; ..." if len(tally.run_errors) > 2 or tally.other_run_errors else ""
        return (f"the harness recorded that these runs failed, so their records are cut short and are not the "
                f"assistant's behaviour ({said}{more}; first {', '.join(tally.errored)}); rerun them (inspect_ai: "
                "inspect eval-retry LOG) and score the new log")
    if reason == "no_text":
        return ("no assistant text was read, so --mode text has nothing to judge; check --format, or score "
                "the tool record (--mode record)")
    if reason == "invalid_record":
        rules = {RULES[rule]: n for rule, n in tally.broken_rules.items() if n}
        unexplained = count - tally.broken_rules.get("no_turns", 0)
        if tally.calls is None and mode == RECORD and unexplained > 0:  # the calls were not read
            rules["a call with a bad turn, or a bad assistant_turns"] = unexplained
        broken = ", ".join(f"{rule} {n}" for rule, n in rules.items())
        return (f"the tool records break SPEC section 3 ({broken}): those conversations cannot be scored; "
                "correct the records, or check --format")
    return "planned in --plan but absent from the log; run them, or correct the plan"  # missing


def nothing_evaluated_notes(conversations: int, reasons: dict, tally: InputTally, mode: str,
                            approvals: int = 0) -> list[str]:
    """When no conversation is evaluated: one note for each not-evaluated reason, with what fixes it.

    ``approvals``: the conversations with approval evidence (SPEC section 3A), which are scored without a
    label; the notes then say that p_u, p_o and pi are what is missing.

    Parameters
    ----------
    conversations : int
        Conversations read.
    reasons : dict
        Not-evaluated reason to its count (``summary.json`` ``not_evaluated.reasons``).
    tally : InputTally
    mode : {"record", "text"}
    """
    if not conversations and not reasons:
        return ["no conversation evaluated: the log holds no conversation; is it the right file, and the "
                "right --format?"]
    head = "no conversation evaluated" if not approvals else \
        f"no conversation evaluated for p_u, p_o and pi (p_a needs no label: {approvals} scored)"
    return [f"{head}: {reason} {count}: {reason_fix(reason, count, tally, mode)}" for reason, count in reasons.items()]


def labels_note(tally: InputTally, conversations: int) -> str | None:
    """The note on a labels file that labels none of the ``conversations``; else None.

    It shows a few of the file's keys beside a few of the log's ids, so that a user sees why
    (ids of another log, a case_id file for a log without case_id, a prefix).
    """
    unmatched = tally.unmatched_labels
    if unmatched is None or not conversations:
        return None
    head = f"the labels file labels none of the {counted(conversations, 'conversation')}"
    if not unmatched["keys"]:
        return f"{head}: it holds no label"
    return (f"{head}: its keys look like {_ids(unmatched['keys'])}, the log's ids like {_ids(unmatched['ids'])} "
            "(a label is matched by conversation_id, else by case_id)")


def _ids(found: dict) -> str:
    """``conversation_id 'a', 'b' and case_id 'k'``: ids by field."""
    return " and ".join(f"{field} {', '.join(map(repr, values))}" for field, values in found.items())


def no_call_note(tally: InputTally, evaluated: int) -> str | None:
    """In record mode, the note on ``evaluated`` conversations that hold no tool call at all (SPEC
    section 7, decision of 2026-12-04: the run exits 3); else None."""
    if not evaluated or tally.evaluated_calls is None or tally.evaluated_calls:
        return None
    unread = (f" ({counted(tally.unreadable_calls, 'item')} of the log could not be read as this format's messages)"
              if tally.unreadable_calls else "")
    return (f"the {counted(evaluated, 'evaluated conversation')} {'holds' if evaluated == 1 else 'hold'} no tool "
            f"call read from the log{unread}, so no conversation can show a hand-off and the figures say nothing "
            "of the assistant; the usual causes are a wrong --format (try --format auto) or a log without a tool "
            "record (score its text with --mode text)")


#: Above this share of a label's conversations not evaluated, the summary warns (SPEC section 7).
LEFT_OUT_SHARE = 0.05


def left_out_notes(tally: InputTally) -> list[str]:
    """The notes on conversations left out of a result that has evaluated ones: first, any
    ``invalid_label`` conversations, with the label values found and what to do (a bad label is
    always a mistake, however few); then one note per label whose conversations are more than
    :data:`LEFT_OUT_SHARE` not evaluated (any reason but ``no_label``), with the reasons (SPEC
    section 7, decision of 2026-12-04)."""
    invalid = sum(tally.labels.values()) + tally.other_labels
    notes = [f"invalid_label {invalid}: {counted(invalid, 'conversation')} left out of every figure, as their "
             f"label is neither ESC nor ACT; {_invalid_label_fix(tally)} (a CSV or JSON file mapping case_id or "
             "conversation_id to ESC or ACT, which replaces the log's labels)"] if invalid else []
    for label, reasons in tally.left_out.items():
        total, left = tally.labelled.get(label, 0), sum(reasons.values())
        if total and left / total > LEFT_OUT_SHARE:
            why = ", ".join(f"{reason} {n}" for reason, n in reasons.items())
            notes.append(f"{label}: {left} of {counted(total, 'conversation')} ({left / total:.0%}) are not "
                         f"evaluated ({why}): the rates describe only the evaluated ones, and what is left out "
                         "can bias them")
    return notes


def escalation_call_note(tally: InputTally) -> str | None:
    """In record mode, the note on a log with no tool call, or no call of an escalation tool; else None."""
    if tally.calls is None or not tally.with_record or tally.escalation_calls or not tally.escalation_tools:
        return None
    tools = ", ".join(tally.escalation_tools)
    usual = ("a log where nothing escalates is possible, but a wrong --format or a wrong policy is the usual "
             "cause")
    if not tally.calls:
        return (f"no tool call was read in the {counted(tally.with_record, 'conversation')} with a tool record, "
                f"so no call of an escalation tool ({tools}) either; {usual}")
    called = ", ".join(f"{name} {count}" for name, count in list(tally.tools.items())[:_SHOWN_TOOLS])
    more = " ..." if len(tally.tools) > _SHOWN_TOOLS or tally.other_tools else ""
    note = f"no call of an escalation tool ({tools}) was read; the log calls {called}{more}"
    handoffs = [name for name in tally.tools if handoff_word(name)]
    if handoffs:
        one = len(handoffs) == 1
        note += (f"; {', '.join(handoffs[:_SHOWN_TOOLS])} "
                 f"{'looks like a hand-off: is it' if one else 'look like hand-offs: is one of them'} "
                 "your escalation tool? (policy escalation_tools)")
    return f"{note}; {usual}"
