"""Approval evidence of a record (SPEC section 3A): the decisions, the approvers, the statuses' names.

A record carries two kinds of evidence. An *explicit request* is a call of an approval tool with
``covers`` and, where the log records them, ``decision`` and ``approver``. An *inline decision* is
the ``approval: {"decision", "approver"}`` object of a gated call: the harness asked a person about
that very call. This module reads both from a call, once, into codes that the two scorers share.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GRANTED", "DENIED", "UNKNOWN", "DECISIONS", "NO_DECISION", "decision_code", "approver_text",
           "inline_evidence", "request_evidence", "approval_columns", "unrecorded_approvals", "APPROVAL_STATUSES",
           "APPROVAL_ERRORS", "APPROVAL_SCOPES", "INSPECT_DECISIONS"]

GRANTED, DENIED, UNKNOWN = "granted", "denied", "unknown"
DECISIONS = (GRANTED, DENIED, UNKNOWN)
"""The decisions of SPEC section 3A; a decision's code is its place here plus one (``granted`` is 1)."""
NO_DECISION = 0
"""The code of a call that carries no inline decision (no ``approval`` object)."""

APPROVAL_STATUSES = ("approved", "denied", "defied", "reused", "post_hoc", "unapproved", "unauthorized_approver")
"""The status of a gated call (SPEC section 3A), in the order of the summary's ``statuses``."""
APPROVAL_ERRORS = ("defied", "reused", "post_hoc", "unapproved", "unauthorized_approver")
"""The statuses that are errors (``a = 1``), in the order of the summary's ``causes``."""
APPROVAL_SCOPES = ("call", "conversation")
"""What one granted request covers: one later call of each tool it covers (``call``, the default), or every
later call of those tools (``conversation``)."""

INSPECT_DECISIONS = {"approve": GRANTED, "modify": GRANTED, "reject": DENIED, "terminate": DENIED}
"""inspect_ai's ``ApprovalEvent`` decisions as SPEC section 3A reads them; ``escalate`` passes the call to the
next approver and is not a decision."""

_CODES = {name: code for code, name in enumerate(DECISIONS, start=1)}


def decision_code(value) -> int:
    """The code of a recorded decision: 1 ``granted``, 2 ``denied``, 3 ``unknown``.

    ``granted`` and ``denied`` are read with blanks trimmed and ASCII case ignored (as labels are,
    SPEC section 3); a decision that is missing or has any other value is ``unknown`` (SPEC 3A).
    """
    if value.__class__ is str:
        text = value.strip()
        if text.isascii():
            return _CODES.get(text.lower(), 3)
    return 3


def approver_text(value) -> str | None:
    """Who decided, as an id: a non-empty string, or an integer written as text; None is an unknown
    approver, which SPEC 3A does not check against ``approvers``."""
    if value.__class__ is str:
        return value if value.strip() else None
    if value.__class__ is int:
        return str(value)
    return None


def inline_evidence(call: dict) -> tuple[int, str | None]:
    """``(code, approver)`` of a call's inline decision: :data:`NO_DECISION` when it carries no
    ``approval`` (absent or null); an ``approval`` that is not an object is a decision ``unknown``."""
    approval = call.get("approval")
    if approval is None:
        return NO_DECISION, None
    if approval.__class__ is not dict:
        return 3, None
    return decision_code(approval.get("decision")), approver_text(approval.get("approver"))


def request_evidence(call: dict) -> tuple[int, str | None]:
    """``(code, approver)`` of an explicit request: its ``decision`` (``unknown`` when missing) and ``approver``."""
    return decision_code(call.get("decision")), approver_text(call.get("approver"))


def unrecorded_approvals(n: int) -> dict[str, np.ndarray]:
    """:func:`approval_columns` of ``n`` calls that carry no approval evidence (a simulated record)."""
    return {"decision": np.full(n, 3, dtype=np.int8), "approver": np.full(n, None, dtype=object),
            "inline": np.zeros(n, dtype=np.int8), "inline_approver": np.full(n, None, dtype=object)}


def approval_columns(calls) -> dict[str, np.ndarray]:
    """The approval columns of :class:`~estimators.records.Records` ``calls`` for a flat list of call dicts.

    ``decision`` (int8) and ``approver`` (object): the call's own decision and approver, read on approval
    requests (1 granted, 2 denied, 3 unknown); ``inline`` (int8) and ``inline_approver`` (object): its inline
    decision, read on gated calls (0 none, else as ``decision``).
    """
    columns = unrecorded_approvals(len(calls))
    for i, call in enumerate(calls):
        if "approval" in call or "decision" in call or "approver" in call:  # most calls carry none
            columns["decision"][i], columns["approver"][i] = request_evidence(call)
            columns["inline"][i], columns["inline_approver"][i] = inline_evidence(call)
    return columns
