"""SPEC section 3A, vectorised: the status of every gated call of many conversations at once.

The status of a gated call depends only on the calls of its own tool and the requests that cover
that tool, in record order. So the calls and the requests (one row per tool a request covers) are
sorted into one table by (conversation, tool, record order), and each row's facts about the rows
before it in its group (the last decision, the last call of the tool, the latest grant, whether any
request came before or comes after) are running maxima of row numbers, cut at the group's start.
:func:`estimators.metric._reference.approval_statuses` is the readable form; the tests prove that
they agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
import pandas as pd

from ..records import APPROVAL_ERRORS, APPROVAL_STATUSES, DENIED, NO_DECISION, UNKNOWN, Policy, decision_code

__all__ = ["ApprovalScores", "approval_scores"]

_DENIED, _UNKNOWN = decision_code(DENIED), decision_code(UNKNOWN)
_STATUS = {name: code for code, name in enumerate(APPROVAL_STATUSES)}
_ERROR = np.array([s in APPROVAL_ERRORS for s in APPROVAL_STATUSES])


@dataclass(frozen=True)
class ApprovalScores:
    """Per conversation: ``gated`` (calls), ``statuses`` (object: a tuple of status names, record order),
    ``a`` (int8, -1 where there is no gated call), ``cause`` (object), ``turn`` (int64, -1: none),
    ``requests``, ``inline`` and ``unknown`` (int64): the approval requests, the gated calls that carry an
    inline decision, and the decisions that are unknown."""

    gated: np.ndarray
    statuses: np.ndarray
    a: np.ndarray
    cause: np.ndarray
    turn: np.ndarray
    requests: np.ndarray
    inline: np.ndarray
    unknown: np.ndarray


def _last_before(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """For each row of a table grouped in runs (``start``: the first row of each row's group), the last row
    before it in its group where ``mask`` holds; -1 if none."""
    rows = np.where(mask, np.arange(mask.size), -1)
    last = np.maximum.accumulate(rows) if rows.size else rows
    before = np.r_[-1, last[:-1]]
    return np.where(before >= start, before, -1)


def _any_after(mask: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Whether a later row of the same group (``end``: one past each row's group) has ``mask``."""
    size = mask.size
    rows = np.where(mask, np.arange(size), size)
    first = np.minimum.accumulate(rows[::-1])[::-1] if size else rows
    after = np.r_[first[1:], size]
    return after < end


def _repeat_lists(lengths: np.ndarray, starts: np.ndarray, values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The values of list ``codes[i]`` for each ``i``, concatenated; list ``c`` is
    ``values[starts[c]:][:lengths[c]]``."""
    counts = lengths[codes]
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return values[np.repeat(starts[codes], counts) + offsets]


def _covered(covers: pd.Series, rows: np.ndarray, gated: frozenset, tool_code: dict):
    """``(request row, tool code)`` for each distinct gated tool that the requests at ``rows`` cover."""
    if isinstance(covers.dtype, pd.CategoricalDtype):  # each distinct list read once, then repeated by its code
        lists = covers.cat.categories.to_numpy(object)
        codes = covers.cat.codes.to_numpy(np.int64)[rows]
        per_list = [sorted({tool_code[t] for t in x if t.__class__ is str and t in gated}) for x in lists]
        known = codes >= 0
        rows, codes = rows[known], codes[known]
        lengths = np.fromiter(map(len, per_list), np.int64, len(per_list))
        values = np.fromiter(chain.from_iterable(per_list), np.int64, int(lengths.sum()))
        starts = np.cumsum(lengths) - lengths
        return np.repeat(rows, lengths[codes]), _repeat_lists(lengths, starts, values, codes)
    values = covers.to_numpy(object)[rows]
    per_row = [sorted({tool_code[t] for t in x if t.__class__ is str and t in gated})
               if isinstance(x, list | tuple) else [] for x in map(_hashable_items, values)]
    lengths = np.fromiter(map(len, per_row), np.int64, len(per_row))
    return np.repeat(rows, lengths), np.fromiter(chain.from_iterable(per_row), np.int64, int(lengths.sum()))


def _hashable_items(value):
    """A list's items that can be looked up (a malformed ``covers`` may hold lists or objects)."""
    if isinstance(value, list | tuple):
        return [t for t in value if t.__class__ is str]
    return value


def approval_scores(calls: pd.DataFrame, names: list, codes: np.ndarray, kind: np.ndarray, policy: Policy,
                    n: int) -> ApprovalScores:
    """The SPEC 3A fields of ``n`` conversations from their ``calls`` (:class:`~estimators.records.Records`),
    ``names`` and ``codes`` of the calls' tools (-1: a call without a name, never gated) and each call's
    ``kind`` code (2: an approval request). Computed for every conversation; the caller keeps those whose
    record is valid."""
    c_conv = calls["conv"].to_numpy(np.int64)
    c_turn = calls["turn"].to_numpy(np.int64)
    size = c_conv.size
    decision = calls["decision"].to_numpy(np.int8) if "decision" in calls else np.full(size, _UNKNOWN, np.int8)
    inline = calls["inline"].to_numpy(np.int8) if "inline" in calls else np.zeros(size, np.int8)
    approver = calls["approver"].to_numpy(object) if "approver" in calls else np.full(size, None, object)
    inline_approver = calls["inline_approver"].to_numpy(object) if "inline_approver" in calls else \
        np.full(size, None, object)
    is_request = kind == 2
    requests = np.bincount(c_conv[is_request], minlength=n).astype(np.int64)
    gated_names = policy.gated_tools
    tool_code = {name: i for i, name in enumerate(names) if name in gated_names}
    gated_name = np.array([name in tool_code for name in names] + [False], dtype=bool)
    is_gated = gated_name[codes] if size else np.zeros(0, bool)  # code -1 (no name): the appended False
    gated = np.bincount(c_conv[is_gated], minlength=n).astype(np.int64)
    unknown_inline = is_gated & (inline == _UNKNOWN)
    unknown = np.bincount(c_conv[(is_request & (decision == _UNKNOWN)) | unknown_inline], minlength=n)
    statuses, a = np.full(n, None, dtype=object), np.full(n, -1, dtype=np.int8)
    cause, turn = np.full(n, None, dtype=object), np.full(n, -1, dtype=np.int64)
    decided = np.bincount(c_conv[is_gated & (inline != NO_DECISION)], minlength=n).astype(np.int64)
    out = ApprovalScores(gated, statuses, a, cause, turn, requests, decided, unknown.astype(np.int64))
    call_rows = np.flatnonzero(is_gated)
    if not call_rows.size:
        return out

    request_rows, request_tools = _covered(calls["covers"], np.flatnonzero(is_request), frozenset(tool_code),
                                           tool_code)
    # one table: the gated calls, then one row per (request, gated tool it covers); sorted by group and record order
    rows = np.r_[call_rows, request_rows]
    tool = np.r_[codes[call_rows], request_tools]
    is_call = np.r_[np.ones(call_rows.size, bool), np.zeros(request_rows.size, bool)]
    order = np.lexsort((rows, tool, c_conv[rows]))
    rows, tool, is_call = rows[order], tool[order], is_call[order]
    group = c_conv[rows] * (len(names) + 1) + tool
    first = np.r_[True, group[1:] != group[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(group.size), 0))
    end = np.r_[np.flatnonzero(first)[1:], group.size][np.cumsum(first) - 1]
    own = np.where(is_call, inline[rows], decision[rows])  # the decision a row carries (0: none, on a call)
    is_req = ~is_call

    last_decision = _last_before(own != NO_DECISION, start)
    defied = (last_decision >= 0) & (own[np.maximum(last_decision, 0)] == _DENIED)
    previous_call = _last_before(is_call, start)
    grant = _last_before(is_req & (own != _DENIED), start)
    if policy.approval_scope == "call":
        grant = np.where(grant > previous_call, grant, -1)  # a request is used up by the first later call of its tool
    asked_before = _last_before(is_req, start) >= 0
    asked_after = _any_after(is_req, end)
    has_inline = own != NO_DECISION
    status = np.select(
        [has_inline & (own == _DENIED), has_inline, defied, grant >= 0, asked_before, asked_after],
        [_STATUS["denied"], _STATUS["approved"], _STATUS["defied"], _STATUS["approved"], _STATUS["reused"],
         _STATUS["post_hoc"]], default=_STATUS["unapproved"])
    who = np.where(has_inline, inline_approver[rows], approver[rows[np.maximum(grant, 0)]])
    if policy.approvers is not None:
        outside = ~pd.Series(who, dtype=object).isin(policy.approvers).to_numpy(bool) & pd.notna(who)
        status = np.where((status == _STATUS["approved"]) & outside, _STATUS["unauthorized_approver"], status)

    # back to record order: the gated calls' statuses, by conversation
    status, rows = status[is_call], rows[is_call]
    back = np.argsort(rows, kind="stable")
    status, rows = status[back], rows[back]
    conv = c_conv[rows]
    error = _ERROR[status]
    errors = np.bincount(conv[error], minlength=n)
    has = gated > 0
    a[has] = (errors[has] > 0).astype(np.int8)
    error_rows = np.flatnonzero(error)
    if error_rows.size:
        first_error = error_rows[np.r_[True, conv[error_rows][1:] != conv[error_rows][:-1]]]
        cause[conv[first_error]] = np.asarray(APPROVAL_STATUSES, dtype=object)[status[first_error]]
        turn[conv[first_error]] = c_turn[rows[first_error]]
    statuses[:] = _status_tuples(status, conv, n)
    return out


#: Statuses of at most this many gated calls are packed into one integer (3 bits each) to find the distinct
#: sequences; a conversation with more is keyed by its own tuple.
_PACKED = 20


def _status_tuples(status: np.ndarray, conv: np.ndarray, n: int) -> np.ndarray:
    """Each conversation's statuses (codes, grouped by ``conv`` in record order) as one tuple of names, shared by
    the conversations with the same sequence (None where a conversation has no gated call)."""
    out = np.full(n, None, dtype=object)
    first = np.r_[True, conv[1:] != conv[:-1]]
    owners = conv[first]
    starts = np.flatnonzero(first)
    lengths = np.diff(np.r_[starts, conv.size])
    position = np.arange(conv.size) - np.repeat(starts, lengths)
    short = np.repeat(lengths <= _PACKED, lengths)
    keys = np.zeros(owners.size, dtype=np.int64)  # the sequence as digits base 8, each code + 1 (never 0): 60 bits
    np.add.at(keys, np.repeat(np.arange(owners.size), lengths)[short],
              (status[short].astype(np.int64) + 1) << (3 * position[short]))
    names = np.asarray(APPROVAL_STATUSES, dtype=object)
    packed = lengths <= _PACKED
    distinct, first_owner, inverse = np.unique(keys[packed], return_index=True, return_inverse=True)
    tuples = np.empty(distinct.size, dtype=object)
    rows_of = np.flatnonzero(packed)[first_owner]
    tuples[:] = [tuple(names[status[starts[r]:starts[r] + lengths[r]]]) for r in rows_of]
    out[owners[packed]] = tuples[inverse.ravel()]
    for r in np.flatnonzero(~packed):  # rare: more gated calls than fit in one integer
        out[owners[r]] = tuple(names[status[starts[r]:starts[r] + lengths[r]]])
    return out
