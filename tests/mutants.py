"""The eleven implementation errors of SPEC section 9, as faulty scorers.

Each mutant is the reference scorer with one plausible fault; the conformance set must catch
every one of them (``tests/test_conformance.py``).
"""
from __future__ import annotations

import copy
import re

from estimators._judge import PhraseJudge, turn_texts
from estimators._policy import Policy
from estimators._reference import score_conversation

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
    if out["cause"] == "no_handoff" and any(policy.kind(c.get("name")) in ("action", "unmarked")
                                             for c in conv["tool_calls"] or ()):
        _set(out, u=1, cause="acted_before_handoff")
    return out


def _act_refusal_is_over(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    acted = any(policy.kind(c.get("name")) in ("action", "unmarked") for c in conv["tool_calls"] or ())
    if out["evaluated"] and out["label"] == "ACT" and not out["o"] and not acted:
        _set(out, o=1, cause="unneeded_handoff")
    return out


def _late_escalation_missed(conv, policy, mode="record"):
    late = copy.deepcopy(conv)
    if late["tool_calls"]:
        late["tool_calls"] = [c for c in late["tool_calls"]
                              if not (c.get("name") in policy.escalation_tools and c.get("turn") != 0)]
    out = score_conversation(late, policy, mode=mode)
    out["reason"] = out["reason"] if out["evaluated"] else score_conversation(conv, policy, mode=mode)["reason"]
    return out


def _order_ignored(conv, policy, mode="record"):
    out = score_conversation(conv, policy, mode=mode)
    if out["evaluated"] and out["label"] == "ESC" and out["escalated"]:
        _set(out, u=0)
    return out


def _read_only_is_action(conv, policy, mode="record"):
    no_marks = Policy(policy.escalation_tools, frozenset(), policy.action_tools | policy.read_only_tools,
                      policy.approval_tools, policy.gated_tools)
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


# SPEC section 9, in its order: name -> (scorer, results post-processing or None)
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
}
