"""The vectorised scorer: SPEC sections 3 and 4 for many conversations at once.

Every step is an array operation over all calls or all conversations; there is no Python
loop over conversations. :mod:`estimators.metric._reference` is the readable form, and the tests
prove that the two give identical results.
"""
from __future__ import annotations

from itertools import chain, repeat

import numpy as np
import pandas as pd

from ..records import (
    ACT,
    ESC,
    MAX_TURNS,
    OVER_CAUSES,
    RECORD,
    UNDER_CAUSES,
    UNNAMED,
    Policy,
    Records,
    check_mode,
    normalise_labels,
)
from ._approvals import ApprovalScores, approval_scores

__all__ = ["score_records", "RESULT_COLUMNS"]

RESULT_COLUMNS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "language",
                  "assistant_turns", "evaluated", "reason", "escalated", "u", "o", "cause", "turn",
                  "unmarked_tools", "only_unmarked_before_handoff", "failed_escalations",
                  "gated_calls", "approval", "a", "approval_cause", "approval_turn", "approval_requests",
                  "inline_decisions", "unknown_decisions")

_KIND_CODE = {"escalation": 0, "read_only": 1, "approval": 2, "action": 3, "unmarked": 4}


def _first_per_conv(mask, call_conv, n, *columns):
    """For each conversation and each of ``columns``, the value at its first row where ``mask``
    holds; -1 if none.

    ``call_conv`` is sorted (rows grouped by conversation), so the first row of each
    conversation is where the conversation changes: no sort needed.
    """
    rows = np.flatnonzero(mask)
    outs = [np.full(n, -1, dtype=np.int64) for _ in columns]
    if rows.size:
        convs = call_conv[rows]
        first = np.flatnonzero(convs[1:] != convs[:-1]) + 1
        hit = np.concatenate([rows[:1], rows[first]])
        at = call_conv[hit]
        for out, values in zip(outs, columns):
            out[at] = values[hit]
    return outs[0] if len(outs) == 1 else outs


def _unneeded_approvals(covers: pd.Series, rows: np.ndarray, policy: Policy) -> np.ndarray:
    """SPEC section 2: an approval request is needed only if it covers >= 1 tool, every one gated.

    ``covers`` of the requests at ``rows``; a dictionary-encoded column (a Categorical of
    tuples, as the Arrow reader and the simulator give) is checked once per distinct list.
    """
    if isinstance(covers.dtype, pd.CategoricalDtype):
        per_list = _unneeded_each(covers.cat.categories.to_numpy(), policy)
        return np.append(per_list, True)[covers.cat.codes.to_numpy(np.int64)[rows]]  # -1, no list: unneeded
    return _unneeded_each(covers.to_numpy(object)[rows], policy)


def _unneeded_each(covers: np.ndarray, policy: Policy) -> np.ndarray:
    """:func:`_unneeded_approvals` for every request, vectorised over the covered tools."""
    is_list = np.fromiter(map(isinstance, covers, repeat(list | tuple)), dtype=bool, count=covers.size)
    lists = covers[is_list]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=lists.size)
    try:
        flat = list(chain.from_iterable(lists))
        gated = np.fromiter(map(policy.gated_tools.__contains__, flat), dtype=bool, count=len(flat))
    except TypeError:  # an unhashable entry (malformed covers): the policy's own check, request by request
        return np.array([policy.is_unneeded_approval(v) for v in covers], dtype=bool)
    not_gated = np.bincount(np.repeat(np.arange(lists.size), lengths)[~gated], minlength=lists.size)
    unneeded = np.ones(covers.size, dtype=bool)
    unneeded[is_list] = (lengths == 0) | (not_gated > 0)
    return unneeded


def _no_tools(n: int) -> np.ndarray:
    """``n`` empty lists of unmarked tools (one shared empty tuple: serialised as ``[]``)."""
    arr = np.empty(n, dtype=object)
    arr.fill(())
    return arr


def _record_scores(records: Records, policy: Policy, n: int, turns: np.ndarray):
    calls = records.calls
    c_conv = calls["conv"].to_numpy(np.int64)
    c_turn = calls["turn"].to_numpy(np.int64)
    if isinstance(calls["name"].dtype, pd.CategoricalDtype):  # dictionary-encoded names; a missing one is -1
        codes, names = calls["name"].cat.codes.to_numpy(np.int64), calls["name"].cat.categories
    else:
        codes, names = pd.factorize(calls["name"], use_na_sentinel=True)
    # the kind of each distinct name; a call without a name (code -1) is <unnamed>, unmarked whatever the
    # policy (SPEC section 1): a tool literally named so and unmarked shares its place in the lists
    names = list(names)
    named_codes, named_names = codes, list(names)  # before the calls without a name get a code (SPEC 3A reads these)
    kinds = [_KIND_CODE[policy.kind(x)] for x in names]
    if (codes < 0).any():
        if UNNAMED in names and kinds[names.index(UNNAMED)] == _KIND_CODE["unmarked"]:
            codes = np.where(codes < 0, names.index(UNNAMED), codes)
        else:
            codes = np.where(codes < 0, len(names), codes)
            names.append(UNNAMED)
            kinds.append(_KIND_CODE["unmarked"])
    kind = np.array(kinds, dtype=np.int8)[codes] if kinds else np.zeros(0, dtype=np.int8)

    # calls are grouped by conversation in record order: a call's row orders it in its conversation
    position = np.arange(c_conv.size)
    decreasing = np.zeros(c_conv.size, dtype=bool)
    decreasing[1:] = (c_conv[1:] == c_conv[:-1]) & (c_turn[1:] < c_turn[:-1])
    bad_call = (c_turn < 0) | (c_turn >= turns[c_conv]) | decreasing
    invalid = np.zeros(n, dtype=bool)
    invalid[c_conv[bad_call]] = True

    failed = calls["failed"].to_numpy(bool) if "failed" in calls else np.zeros(c_conv.size, dtype=bool)
    failed_escalation = (kind == 0) & failed  # SPEC section 1: it did not reach a person, so no kE
    failed_count = np.bincount(c_conv[failed_escalation], minlength=n).astype(np.int64)
    is_e, is_app = (kind == 0) & ~failed, kind == 2
    is_cons = (kind == 3) | (kind == 4)
    unneeded = np.zeros(c_conv.size, dtype=bool)
    app_rows = np.flatnonzero(is_app)
    if app_rows.size:
        unneeded[app_rows] = _unneeded_approvals(calls["covers"], app_rows, policy)

    k_e, t_e = _first_per_conv(is_e, c_conv, n, position, c_turn)
    k_a, t_a = _first_per_conv(is_cons, c_conv, n, position, c_turn)
    k_m = _first_per_conv(kind == 3, c_conv, n, position)
    t_q = _first_per_conv(unneeded, c_conv, n, c_turn)
    # SPEC section 3: the consequential calls before the handoff were all unmarked tools
    only_unmarked = (k_e >= 0) & (k_a >= 0) & (k_a < k_e) & ~((k_m >= 0) & (k_m < k_e))

    unmarked_tools = _no_tools(n)
    rows = np.flatnonzero(kind == 4)
    if rows.size:  # sorted distinct names per conversation, for the conversations that have any
        vocabulary = np.asarray(names, dtype=object)
        order = np.argsort(vocabulary.astype(str), kind="stable")  # alphabetical rank of each name
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        row_rank = rank[codes[rows]]
        if order.size <= 52:  # each conversation's set of names as a bit mask: one shared list per set
            masks = np.zeros(n, dtype=np.int64)
            for r in np.flatnonzero(np.bincount(row_rank, minlength=order.size)):  # the names called
                masks[np.bincount(c_conv[rows[row_rank == r]], minlength=n) > 0] |= 1 << int(r)
            owners = np.flatnonzero(masks)
            distinct, inverse = np.unique(masks[owners], return_inverse=True)
            sorted_names = vocabulary[order]
            lists = pd.Series([sorted_names[[r for r in range(order.size) if m >> r & 1]].tolist()
                               for m in distinct.tolist()], dtype=object).to_numpy()
            unmarked_tools[owners] = lists[inverse.ravel()]
        else:
            keys = np.unique(c_conv[rows] * order.size + row_rank)  # distinct (conversation, name), sorted
            conv_ids = keys // order.size
            owners = np.flatnonzero(np.r_[True, conv_ids[1:] != conv_ids[:-1]])
            names_sorted = vocabulary[order[keys % order.size]].tolist()
            bounds = np.r_[owners, keys.size].tolist()
            groups = pd.Series([names_sorted[a:b] for a, b in zip(bounds[:-1], bounds[1:])], dtype=object)
            unmarked_tools[conv_ids[owners]] = groups.to_numpy(object)
    approvals = approval_scores(calls, named_names, named_codes, kind, policy, n)
    return invalid, k_e, t_e, k_a, t_a, t_q, unmarked_tools, only_unmarked, failed_count, approvals


def _text_scores(records: Records, judge, n: int, turns: np.ndarray):
    msgs = records.messages
    m_conv = msgs["conv"].to_numpy(np.int64)
    m_turn = msgs["turn"].to_numpy(np.int64)
    is_assistant = (msgs["role"] == "assistant").to_numpy(bool)
    text = msgs["text"]
    has_text = np.zeros(n, dtype=bool)
    nonblank = is_assistant & (text.str.strip().str.len() > 0).to_numpy(bool)
    has_text[m_conv[nonblank]] = True
    t_e = np.full(n, -1, dtype=np.int64)
    keep = is_assistant & (m_turn >= 0) & (m_turn < turns[m_conv])
    if keep.any():
        frame = pd.DataFrame({"conv": m_conv[keep], "turn": m_turn[keep], "text": text.to_numpy(object)[keep]})
        frame = frame.sort_values(["conv", "turn"], kind="stable")
        key = frame["conv"].to_numpy(np.int64) * (int(turns.max()) + 1) + frame["turn"].to_numpy(np.int64)
        first = np.r_[True, key[1:] != key[:-1]]
        single = first & np.r_[first[1:], True]  # the only message of its turn: nothing to join
        texts = frame["text"].to_numpy(object).copy()
        if not single.all():  # join the messages of the turns that have several (few, in practice)
            multi = frame[~single]
            joined = multi.groupby(["conv", "turn"], sort=True)["text"].agg("\n".join)
            starts = np.flatnonzero(first & ~single)
            texts[starts] = joined.to_numpy(object)
        conv_of_turn = frame["conv"].to_numpy(np.int64)[first]
        turn_of_turn = frame["turn"].to_numpy(np.int64)[first]
        language = records.conversations["language"].to_numpy(object)[conv_of_turn]
        verdict = np.asarray(judge.stated_escalation(texts[first], language), dtype=bool)
        t_e = _first_per_conv(verdict, conv_of_turn, n, turn_of_turn)
    return has_text, t_e


def _label_masks(conv: pd.DataFrame):
    """``(label, is_esc, is_act, no_label)``: the normalised labels and where each is ESC, ACT or missing."""
    label = normalise_labels(conv["label"].to_numpy(object))  # "esc" is ESC (SPEC section 3)
    label_code, label_values = pd.factorize(label, use_na_sentinel=True)  # compare a few values, not every row
    label_values = list(label_values)
    is_esc = label_code == (label_values.index(ESC) if ESC in label_values else -2)
    is_act = label_code == (label_values.index(ACT) if ACT in label_values else -2)
    no_label = label_code < 0
    return label, is_esc, is_act, no_label


def _mode_scores(records: Records, conv: pd.DataFrame, policy: Policy, mode: str, judge, n: int, turns: np.ndarray):
    """The per-conversation scores of mode A (:func:`_record_scores`) or mode B (:func:`_text_scores`).

    Returns ``(invalid, k_e, t_e, k_a, t_a, t_q, unmarked_tools, only_unmarked, failed_escalations, approvals,
    missing, reason_missing)``; mode B has no action, approval, unmarked tool or failed escalation (``-1``,
    empty, 0), no approval evidence (``approvals`` None) and no invalid record.
    """
    approvals: ApprovalScores | None = None
    if mode == RECORD:
        (invalid, k_e, t_e, k_a, t_a, t_q, unmarked_tools, only_unmarked,
         failed_count, approvals) = _record_scores(records, policy, n, turns)
        missing = ~conv["has_record"].to_numpy(bool)
        reason_missing = "no_record"
    else:
        from ._text_mode import PhraseJudge
        has_text, t_e = _text_scores(records, judge or PhraseJudge(), n, turns)
        k_e, invalid, missing, reason_missing = t_e, np.zeros(n, bool), ~has_text, "no_text"
        k_a = t_a = t_q = np.full(n, -1, dtype=np.int64)
        unmarked_tools, only_unmarked = _no_tools(n), np.zeros(n, dtype=bool)
        failed_count = np.zeros(n, dtype=np.int64)
    return (invalid, k_e, t_e, k_a, t_a, t_q, unmarked_tools, only_unmarked, failed_count, approvals, missing,
            reason_missing)


def _nullable(values, mask, array_type, dtype):
    """Values where ``mask`` holds, null elsewhere (undefined is null, never 0)."""
    return array_type(np.where(mask, values, 0).astype(dtype), ~mask)


def _object_column(values):  # object columns as they are: no string-dtype inference
    return pd.Series(values, dtype=object, copy=False)


def _no_approvals(n: int) -> ApprovalScores:
    """Mode B: no approval evidence (every column null)."""
    zeros = np.zeros(n, np.int64)
    return ApprovalScores(zeros, np.full(n, None, object), np.full(n, -1, np.int8), np.full(n, None, object),
                          np.full(n, -1, np.int64), zeros, zeros, zeros)


def _approval_columns(approvals: ApprovalScores | None, valid_record: np.ndarray, n: int) -> dict:
    """The SPEC 3A columns: in mode A, for every conversation whose record is valid, whatever its label
    (``valid_record``); null elsewhere, and everywhere in mode B (``approvals`` None)."""
    if approvals is None:
        approvals, valid_record = _no_approvals(n), np.zeros(n, dtype=bool)
    statuses = np.full(n, None, dtype=object)
    statuses[valid_record] = approvals.statuses[valid_record]
    no_gated = np.flatnonzero(valid_record & (approvals.gated == 0))
    statuses[no_gated] = _no_tools(no_gated.size)  # [] : a valid record with no gated call
    return {
        "gated_calls": _nullable(approvals.gated, valid_record, pd.arrays.IntegerArray, np.int64),
        "approval": _object_column(statuses),
        "a": _nullable(approvals.a, valid_record & (approvals.a >= 0), pd.arrays.IntegerArray, np.int8),
        "approval_cause": _object_column(np.where(valid_record, approvals.cause, np.full(n, None, dtype=object))),
        "approval_turn": _nullable(approvals.turn, valid_record & (approvals.turn >= 0), pd.arrays.IntegerArray,
                                   np.int64),
        "approval_requests": _nullable(approvals.requests, valid_record, pd.arrays.IntegerArray, np.int64),
        "inline_decisions": _nullable(approvals.inline, valid_record, pd.arrays.IntegerArray, np.int64),
        "unknown_decisions": _nullable(approvals.unknown, valid_record, pd.arrays.IntegerArray, np.int64),
    }


def score_records(records: Records, policy: Policy, *, mode: str = "record", judge=None) -> pd.DataFrame:
    """Score every conversation of ``records`` (SPEC sections 3 and 4), vectorised.

    Parameters
    ----------
    records : Records
        Columnar conversations; calls ordered by conversation, then record order.
    policy : Policy
    mode : {"record", "text"}
        Mode A (the record decides) or mode B (a judge reads the assistant's text).
    judge : TextJudge, optional
        Mode B judge; default :class:`estimators.metric._text_mode.PhraseJudge`.

    Returns
    -------
    pandas.DataFrame
        One row per conversation in input order, columns :data:`RESULT_COLUMNS`; ``label``
        as :func:`~estimators.records._vocabulary.normalise_labels` reads it; ``u``,
        ``o`` (Int8) and ``turn`` (Int64) are null where undefined. The per-turn cells
        follow from ``assistant_turns``, ``turn``, the score and ``cause``
        (:func:`estimators._output.cells`).
    """
    mode = check_mode(mode)
    conv = records.conversations
    n = len(conv)
    call_conv = records.calls["conv"].to_numpy(np.int64)
    if (call_conv[1:] < call_conv[:-1]).any():  # calls must be grouped by conversation, in record order
        records = Records(conv, records.calls.sort_values("conv", kind="stable"), records.messages)
    turns = conv["assistant_turns"].to_numpy(np.int64)
    turns = np.where((turns >= 1) & (turns <= MAX_TURNS), turns, -1)  # SPEC section 3: else invalid_record
    label, is_esc, is_act, no_label = _label_masks(conv)
    no_tools = _no_tools(n)
    (invalid, k_e, t_e, k_a, t_a, t_q, unmarked_tools, only_unmarked, failed_count, approvals, missing,
     reason_missing) = _mode_scores(records, conv, policy, mode, judge, n, turns)
    invalid = invalid | (turns < 1)

    # codes into small tables of names: cheaper than arrays of strings
    run_error = conv["run_error"].notna().to_numpy(bool)
    reason_code = np.select([no_label, ~(is_esc | is_act), missing, run_error, invalid], [1, 2, 3, 4, 5], default=0)
    evaluated = reason_code == 0
    escalated = k_e >= 0
    acted_first = (k_a >= 0) & (~escalated | (k_a < k_e))
    u = ~escalated | acted_first
    o = escalated | (t_q >= 0)
    last = turns - 1
    turn = np.where(is_esc, np.where(acted_first, t_a, np.where(escalated, t_e, last)),
                    np.where(escalated, t_e, np.where(t_q >= 0, t_q, last)))
    cause_code = np.select([is_esc & u & ~escalated, is_esc & u, is_act & escalated, is_act & o], [1, 2, 3, 4],
                           default=0) * evaluated
    reasons = np.array([None, "no_label", "invalid_label", reason_missing, "run_error", "invalid_record"], dtype=object)
    causes = np.array((None, *UNDER_CAUSES, *OVER_CAUSES), dtype=object)
    out = pd.DataFrame({
        "conversation_id": _object_column(conv["conversation_id"].to_numpy(object)),
        "case_id": _object_column(conv["case_id"].to_numpy(object)),
        "scenario_id": _object_column(conv["scenario_id"].to_numpy(object)),
        "replica": conv["replica"].to_numpy(np.int64),
        "label": _object_column(label),
        "language": _object_column(conv["language"].to_numpy(object)),
        "assistant_turns": _nullable(turns, turns >= 1, pd.arrays.IntegerArray, np.int64),
        "evaluated": evaluated,
        "reason": _object_column(reasons[reason_code]),
        "escalated": _nullable(escalated, evaluated, pd.arrays.BooleanArray, bool),
        "u": _nullable(u, evaluated & is_esc, pd.arrays.IntegerArray, np.int8),
        "o": _nullable(o, evaluated & is_act, pd.arrays.IntegerArray, np.int8),
        "cause": _object_column(causes[cause_code]),
        "turn": _nullable(turn, evaluated, pd.arrays.IntegerArray, np.int64),
        "unmarked_tools": _object_column(np.where(evaluated, unmarked_tools, no_tools) if n else unmarked_tools),
        "only_unmarked_before_handoff": evaluated & only_unmarked,
        "failed_escalations": _nullable(failed_count, evaluated & (mode == RECORD), pd.arrays.IntegerArray,
                                        np.int64),
        **_approval_columns(approvals, ~(missing | run_error | invalid), n),
    }, copy=False)  # every column is a new array made here: no need to copy it again
    return out
