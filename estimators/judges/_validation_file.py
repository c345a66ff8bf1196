"""The validation file of a mode B correction: conversations with both the record and the text, each scored twice
(:func:`validation_scores`, :func:`read_validation`); the correction (:mod:`estimators.judges._mode_b_correction`)
compares the two scores.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..metric import score_records
from ..records import ACT, ESC, RECORD, TEXT, InputError, Records

__all__ = ["VALIDATION_COLUMNS", "read_validation", "validation_scores"]


#: Columns of :func:`validation_scores`: one row per validation conversation.
VALIDATION_COLUMNS = ("conversation_id", "scenario_id", "label", "line", "evaluated", "reason", "error_record",
                      "error_text")


def validation_scores(records: Records, policy, *, judge=None, lines=None, source: str | None = None) -> pd.DataFrame:
    """Score validation conversations with the record and from the text (the same judge as the main run).

    Parameters
    ----------
    records : Records
        The validation conversations, with their calls and messages.
    policy : Policy
    judge : TextJudge, optional
        The mode B judge (default :class:`estimators.PhraseJudge`, as ``--mode text``).
    lines : sequence of int, optional
        The input line of each conversation, named by an error.
    source : str, optional
        The file, named by an error.

    Returns
    -------
    DataFrame
        One row per conversation, columns :data:`VALIDATION_COLUMNS`: ``evaluated`` when the
        conversation is evaluated in both modes; ``reason`` the first not-evaluated reason (record
        mode's, then text mode's); ``error_record`` and ``error_text`` the half's error (``u`` of an
        ESC, ``o`` of an ACT conversation) with the record and from the text, 0 where not evaluated.

    Raises
    ------
    InputError
        A conversation with no tool record (``no_record``) cannot validate anything: the error
        names the first one (its id and line) and counts the others.
    """
    conv = records.conversations
    missing = ~conv["has_record"].to_numpy(bool)
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        line = None if lines is None else lines[first]
        others = int(missing.sum()) - 1
        more = f" (and {others} other conversation{'s' if others != 1 else ''})" if others else ""
        raise InputError(f"conversation {conv['conversation_id'].iloc[first]!r}{more} has no tool record "
                         "(no_record): a validation conversation needs both the record and the text",
                         source=source, line=line, field="tool_calls")
    with_record = score_records(records, policy, mode=RECORD)
    from_text = score_records(records, policy, mode=TEXT, judge=judge)
    label = with_record["label"].to_numpy(object)
    evaluated = with_record["evaluated"].to_numpy(bool) & from_text["evaluated"].to_numpy(bool)
    reason = with_record["reason"].where(with_record["reason"].notna(), from_text["reason"])

    def error(results):
        u = results["u"].to_numpy(np.int8, na_value=0)
        o = results["o"].to_numpy(np.int8, na_value=0)
        return np.where(evaluated, np.where(label == ESC, u, np.where(label == ACT, o, 0)), 0).astype(np.int8)
    return pd.DataFrame({
        "conversation_id": with_record["conversation_id"].to_numpy(object),
        "scenario_id": with_record["scenario_id"].to_numpy(object),
        "label": label,
        "line": pd.array(list(lines) if lines is not None else [None] * len(conv), dtype="Int64"),
        "evaluated": evaluated,
        "reason": reason.where(~evaluated, None).to_numpy(object),
        "error_record": error(with_record),
        "error_text": error(from_text),
    })


def read_validation(path, policy, *, format: str = "auto", labels=None, judge=None,
                    approval_escalation: bool | str = False, limits=None) -> tuple[pd.DataFrame, str]:
    """Read a validation file and score each conversation twice (:func:`validation_scores`).

    Parameters
    ----------
    path : path-like
        Conversations with both the record and the text, in any format ``score`` reads.
    policy : Policy
    format : str
        ``auto`` or a format name (as ``--format``).
    labels : Labels or path-like, optional
        Labels applied as in the main run.
    judge : TextJudge, optional
        The main run's mode B judge.
    approval_escalation : bool or str
        inspect logs, as :func:`estimators.read_conversations`.
    limits : ArchiveLimits, optional
        inspect ``.eval`` archives, as :func:`estimators.read_conversations`.

    Returns
    -------
    scores : DataFrame
        :data:`VALIDATION_COLUMNS`, one row per conversation in input order.
    format : str
        The format that was read.

    Raises
    ------
    InputError
        Unreadable input (file, line, field), an empty file, or a conversation with no record.
    """
    from ..records import Labels, detect_format, iter_jsonl, load_labels, read_conversations

    source = str(path)
    if not Path(path).exists():
        raise InputError("no such file", source=source)
    if labels is not None and not isinstance(labels, Labels):
        labels = load_labels(labels)
    used = detect_format(path) if format == "auto" else format
    if used == "jsonl":  # the reference reader: each conversation keeps its line, for the errors
        items = [item for chunk in iter_jsonl(path, labels=labels) for item in chunk]
        lines, conversations = [line for line, _ in items], [conv for _, conv in items]
    else:
        conversations, used = read_conversations(path, format=used, labels=labels, policy=policy,
                                                 approval_escalation=approval_escalation, limits=limits)
        lines = None
    if not conversations:
        raise InputError("holds no conversation: a validation file needs conversations with both the record and "
                         "the text", source=source)
    records = Records.from_conversations(conversations, messages=True)
    return validation_scores(records, policy, judge=judge, lines=lines, source=source), used
