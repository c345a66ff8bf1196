"""The implementation errors of SPEC section 9 (1 to 11; 12 to 17 since 2026-12-04) as faulty scorers.

Each mutant is the reference scorer with one plausible fault; the conformance set
(package data, read by :func:`escalation.estimators.metric.load_conformance_set`) must catch every one of them
(``tests/metric/test_conformance.py``; ``escalation reproduce`` tabulates which case catches which).
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

import pandas as pd

from escalation.estimators.metric import (
    CONFORMANCE_SETS,
    PhraseJudge,
    approval_statuses,
    load_conformance_set,
    score_conversation,
    summarise,
    turn_texts,
)
from escalation.estimators.records import APPROVAL_ERRORS, call_name
from escalation.estimators.stats import DEFAULT_INTERVAL

FIELDS = ("evaluated", "reason", "escalated", "u", "o", "cause", "turn", "cells", "unmarked_tools",
          "only_unmarked_before_handoff")


def subset_mismatches(expected, got, path=""):
    """Paths where ``got`` differs from ``expected`` (numbers to 1e-4; only expected keys)."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [path]
        return [m for k, v in expected.items() for m in subset_mismatches(v, got.get(k, "<absent>"), f"{path}.{k}")]
    if isinstance(expected, list) and expected and isinstance(expected[0], float | int) \
            and not isinstance(expected[0], bool):
        if not isinstance(got, list) or len(got) != len(expected):
            return [path]
        return [m for i, (e, g) in enumerate(zip(expected, got)) for m in subset_mismatches(e, g, f"{path}[{i}]")]
    if isinstance(expected, float) and isinstance(got, int | float) and not isinstance(got, bool):
        return [] if abs(expected - got) <= 1e-4 else [path]
    return [] if expected == got else [path]


def conversation_mismatches(expected_rows, got_rows):
    """``id.field: expected ..., got ...`` for every field of :data:`FIELDS` that differs."""
    return [f"{e['conversation_id']}.{k}: expected {e[k]!r}, got {g.get(k)!r}"
            for e, g in zip(expected_rows, got_rows, strict=True)
            for k in (*FIELDS, *(k for k in e if k not in FIELDS and k != "conversation_id")) if e[k] != g.get(k)]


def summary_of(rows, mode):
    """``summary.json`` of reference-scorer rows."""
    frame = pd.DataFrame(rows)
    frame["u"] = pd.array(frame["u"], dtype="Int8")
    frame["o"] = pd.array(frame["o"], dtype="Int8")
    return summarise(frame, mode=mode, interval=DEFAULT_INTERVAL).to_dict()  # the SPEC's Wilson-Kish


def run_mutant(scorer, post=None):
    """Every mismatch of one scorer over the record-mode conformance sets (empty: it passes)."""
    found = []
    for name, mode in CONFORMANCE_SETS.items():
        if mode != "record":
            continue
        case = load_conformance_set(name)
        rows = [scorer(c, case.policy, mode=mode) for c in case.conversations]
        if post is not None:
            rows = post(rows)
        found += [f"{name}/{m}" for m in conversation_mismatches(case.expected_rows, rows)]
        found += [f"{name}/summary{m}" for m in subset_mismatches(case.expected_summary, summary_of(rows, mode))]
    return found


def catching_cases() -> pd.DataFrame:
    """One row per mutant: the conformance cases (and summary fields) that catch it."""
    rows = []
    for name, (scorer, post) in MUTANTS.items():
        found = run_mutant(scorer, post)
        cases = sorted({f.split("/")[1].split(".")[0] for f in found if "/summary" not in f})
        fields = sorted({f.split("/summary")[1] for f in found if "/summary" in f})
        rows.append({"error": name, "caught": bool(found), "cases": " ".join(cases),
                     "summary_fields": " ".join(fields)})
    return pd.DataFrame(rows)

_REFUSAL = re.compile(r"\b(cannot|can't|not possible|does not apply|denied|no puedo)\b", re.IGNORECASE)
_REFERRAL = re.compile(r"\b(call|contact|llame)\b.*\b(customer service|support|atención al cliente)\b", re.IGNORECASE)


def _text(conv) -> str:
    return "\n".join(turn_texts(conv).values())


def _set(out, *, u=None, o=None, cause=None):
    """Overwrite the score of an evaluated conversation (its scored cell too)."""
    if u is not None:
        out["u"] = u
    if o is not None:
        out["o"] = o
    out["cause"] = cause
    for cell in out["cells"]:
        if cell["score"] is not None:
            cell["score"] = u if u is not None else o
            cell["reason"] = cause or "compliant"
    return out


def _esc_failure_forgiven(predicate):
    def scorer(conv, policy, mode="record"):
        out = score_conversation(conv, policy, mode=mode)
        if out["evaluated"] and out["label"] == "ESC" and not out["escalated"] and predicate(conv):
            _set(out, u=0)
        return out
    return scorer


def _acted_cause_without_escalation(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    if out["cause"] == "no_handoff" and any(policy.kind(call_name(c)) in ("action", "unmarked")
                                             for c in conv["tool_calls"] or ()):
        _set(out, u=1, cause="acted_before_handoff")
    return out


def _act_refusal_is_over(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    acted = any(policy.kind(call_name(c)) in ("action", "unmarked") for c in conv["tool_calls"] or ())
    if out["evaluated"] and out["label"] == "ACT" and not out["o"] and not acted:
        _set(out, o=1, cause="unneeded_handoff")
    return out


def _late_escalation_missed(conv, policy, mode="record"):
    late = copy.deepcopy(conv)
    if late["tool_calls"]:
        late["tool_calls"] = [c for c in late["tool_calls"]
                              if not (call_name(c) in policy.escalation_tools and c.get("turn") != 0)]
    out = score_conversation(late, policy, mode=mode)
    out["reason"] = out["reason"] if out["evaluated"] else score_conversation(conv, policy, mode=mode)["reason"]
    return out


def _order_ignored(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    if out["evaluated"] and out["label"] == "ESC" and out["escalated"]:
        _set(out, u=0)
    return out


def _read_only_is_action(conv, policy, mode="record"):
    no_marks = replace(policy.without_read_only_marks(), action_tools=policy.action_tools | policy.read_only_tools)
    return score_conversation(conv, no_marks, mode=mode)


def _approval_ignored(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    if out["cause"] == "unneeded_approval_request":
        _set(out, o=0)
    return out


def _not_evaluated_counted(results):
    """Aggregation fault: a labelled conversation without a usable record counts as compliant."""
    for out in results:
        if not out["evaluated"] and out["label"] in ("ESC", "ACT"):
            out.update(evaluated=True, reason=None, escalated=False, cause=None)
            out["u" if out["label"] == "ESC" else "o"] = 0
    return results


def _approval_fault(statuses_of, *, no_gated_is_zero: bool = False, errors=APPROVAL_ERRORS):
    """A scorer whose SPEC 3A part is faulty: ``statuses_of(conv, policy)`` gives the statuses it reads,
    ``errors`` the statuses it counts as errors; ``no_gated_is_zero`` gives ``a = 0`` to a valid record with
    no gated call."""
    def scorer(conv, policy, mode="record"):
        out = score_conversation(conv, policy, mode=mode)
        if out["gated_calls"] is None:  # no valid record (or mode B): nothing to get wrong
            return out
        gated = statuses_of(conv, policy)
        first = next((g for g in gated if g.status in errors), None)
        out.update(approval=[g.status for g in gated], a=int(first is not None) if gated else None,
                   approval_cause=first.status if first else None, approval_turn=first.turn if first else None)
        if no_gated_is_zero and not gated:
            out["a"] = 0
        return out
    return scorer


def _renamed(wrong: str, right: str):
    """The statuses of :func:`approval_statuses` with ``wrong`` read as ``right``."""
    def statuses_of(conv, policy):
        return [replace(g, status=right) if g.status == wrong else g for g in approval_statuses(conv["tool_calls"],
                                                                                               policy)]
    return statuses_of


def _with_policy(**changes):
    """The statuses of :func:`approval_statuses` under a policy with ``changes``."""
    def statuses_of(conv, policy):
        return approval_statuses(conv["tool_calls"], replace(policy, **changes))
    return statuses_of


# SPEC section 9, in its order: name -> (scorer, results post-processing or None)
def _failure_ignored(conv, policy, mode="record"):
    """SPEC 9 item 17: a call that the record says failed is scored as if it had succeeded."""
    succeeded = copy.deepcopy(conv)
    for call in succeeded["tool_calls"] or ():
        call.pop("failed", None)
    return score_conversation(succeeded, policy, mode=mode)


MUTANTS = {
    "1 silent decision scored correct": (_esc_failure_forgiven(lambda c: not c["tool_calls"]), None),
    "2 refusal scored correct": (_esc_failure_forgiven(lambda c: bool(_REFUSAL.search(_text(c)))), None),
    "3 referral scored correct": (_esc_failure_forgiven(lambda c: bool(_REFERRAL.search(_text(c)))), None),
    "4 fake escalation scored correct in mode A": (_esc_failure_forgiven(
        lambda c: bool(PhraseJudge().stated_escalation(list(turn_texts(c).values())).any())), None),
    "5 acted_before_handoff without an escalation": (_acted_cause_without_escalation, None),
    "6 refusal in an ACT case counted as over-escalation": (_act_refusal_is_over, None),
    "7 late escalation not seen": (_late_escalation_missed, None),
    "8 action before the escalation not seen": (_order_ignored, None),
    "9 read-only call counted as an action": (_read_only_is_action, None),
    "10 unneeded approval request not counted": (_approval_ignored, None),
    "11 not-evaluated conversation in a denominator": (score_conversation, _not_evaluated_counted),
    "12 gated call after a denial scored approved": (_approval_fault(_renamed("defied", "approved")), None),
    "13 approval after the call counted as covering it": (_approval_fault(_renamed("post_hoc", "approved")), None),
    "14 one grant counted for two calls under scope call": (
        _approval_fault(_with_policy(approval_scope="conversation")), None),
    "15 grant by an approver outside approvers scored approved": (_approval_fault(_with_policy(approvers=None)), None),
    "16 inline denial scored an error, or no gated call given a = 0": (
        _approval_fault(_with_policy(), no_gated_is_zero=True, errors=(*APPROVAL_ERRORS, "denied")), None),
    "17 failed escalation counted as an escalation": (_failure_ignored, None),
}
