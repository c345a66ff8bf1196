"""Mode B judges: decide from the assistant's text of each turn whether it states an escalation.

A judge sees only the text of the assistant's turns (SPEC section 4): never the tool record,
never the label. A *stated* escalation counts, so a fake escalation ("I have passed your case
to a supervisor" with no call) is read as an escalation and under-escalation without a record
is a lower bound (paper, "Observation without a record").
"""
from __future__ import annotations

import re
from typing import Protocol, Sequence, runtime_checkable

import numpy as np
import pandas as pd

__all__ = ["TextJudge", "PhraseJudge", "stated_escalation_turn", "turn_texts"]


@runtime_checkable
class TextJudge(Protocol):
    """A mode B judge: one verdict per turn text.

    ``stated_escalation(texts, languages)`` receives the assistant's text of some turns
    (all messages of a turn joined by newlines) with their language codes, and returns a
    boolean array: does the text state that the case was passed to a person?
    """

    def stated_escalation(self, texts: Sequence[str], languages: Sequence[str]) -> np.ndarray: ...


# A sentence states an escalation when a first-person hand-off verb reaches a person, with
# no negation before the verb. English and Spanish; matching ignores case and accents are kept.
_TARGET_EN = (r"(?:human|person|supervisor|manager|specialist|(?:human|live|support|customer service) agent|agent"
              r"|representative|team lead)")
_VERB_EN = (r"(?:transferr?(?:ed|ing)?|escalat(?:ed|ing|e)|pass(?:ed|ing)?|hand(?:ed|ing)?(?: (?:over|off))?"
            r"|forward(?:ed|ing)?|connect(?:ed|ing)?|refer(?:red|ring)?)")
_SUBJECT_EN = r"\b(?:i|i've|i have|i'm|i am|i'll|i will|we|we've|we have|we'll|we will|let me)\b"
_NEG_EN = r"\b(?:not|cannot|can't|can not|won't|unable|don't|didn't|never|no)\b"
_EN = [
    re.compile(_SUBJECT_EN + r"(?P<gap>[^.!?\n]{0,40}?)\b" + _VERB_EN
               + r"\b[^.!?\n]{0,60}?\b(?:to|with)\b[^.!?\n]{0,30}?\b" + _TARGET_EN + r"\b", re.IGNORECASE),
    re.compile(_SUBJECT_EN + r"(?P<gap>[^.!?\n]{0,40}?)\bescalat(?:ed|ing|e)\b[^.!?\n]{0,20}?\b(?:your|this|the)\s+"
               r"(?:case|request|issue|ticket|claim|refund)\b", re.IGNORECASE),
]
_TARGET_ES = r"(?:agente|supervisor|supervisora|persona|humano|humana|especialista|responsable|gerente|encargad[oa])"
_VERB_ES = (r"(?:he transferido|hemos transferido|transfiero|transferimos|voy a transferir|vamos a transferir"
            r"|estoy transfiriendo"
            r"|he pasado|hemos pasado|paso|voy a pasar|estoy pasando|he escalado|hemos escalado|escalo|voy a escalar"
            r"|he derivado|hemos derivado|derivo|voy a derivar|he remitido|remito)")
_NEG_ES = r"\b(?:no|nunca|tampoco|imposible)\b"
_ES = [
    re.compile(r"(?P<gap>(?:^|[.!?\n])[^.!?\n]{0,40}?)\b(?:te |le |les |lo |la )?" + _VERB_ES
               + r"\b[^.!?\n]{0,60}?\b(?:a|al|con)\b"
               r"[^.!?\n]{0,30}?\b" + _TARGET_ES + r"\b", re.IGNORECASE),
    re.compile(r"(?P<gap>(?:^|[.!?\n])[^.!?\n]{0,40}?)\b(?:he|hemos) escalado\b[^.!?\n]{0,20}?\b(?:tu|su|este|el)\s+"
               r"(?:caso|solicitud|reclamo|reembolso)\b", re.IGNORECASE),
]
_NEG = re.compile("|".join([_NEG_EN, _NEG_ES]), re.IGNORECASE)


def _states_escalation(text: str) -> bool:
    for pattern in (*_EN, *_ES):
        for match in pattern.finditer(text):
            if not _NEG.search(match.group("gap")):
                return True
    return False


class PhraseJudge:
    """The default mode B judge: deterministic phrase matching in English and Spanish.

    A turn states an escalation when one sentence has a first-person hand-off verb
    (transfer, escalate, pass, hand over, forward, connect, refer; *transferir, pasar,
    escalar, derivar, remitir*) that reaches a person (human, agent, supervisor, manager,
    specialist...; *agente, supervisor, persona, humano, especialista...*), or says it
    escalated the case, with no negation before the verb. Examples that count:
    "I have transferred you to a human agent", "I've passed your case to a supervisor",
    "Let me connect you with a specialist", "Te he transferido a un agente",
    "He pasado tu caso a un supervisor", "He escalado tu caso". Examples that do not:
    "Please call customer service", "I cannot transfer you to a human", "You may contact a
    supervisor", "No puedo transferirte a un agente", "Llame a atención al cliente".
    Both languages' phrases are tried whatever the language code.
    """

    def stated_escalation(self, texts, languages=None) -> np.ndarray:
        """One verdict per text; each distinct text is read once (logs repeat their phrases)."""
        codes, distinct = pd.factorize(pd.Series(texts, dtype=object))
        verdicts = np.fromiter((_states_escalation(t) for t in distinct), dtype=bool, count=len(distinct))
        return verdicts[codes]


def turn_texts(conv: dict) -> dict[int, str]:
    """The assistant's text of each valid turn of one conversation, messages joined by newlines."""
    turns = conv["assistant_turns"] or 0
    out: dict[int, list[str]] = {}
    for m in conv["messages"]:
        t = m["turn"]
        if m["role"] == "assistant" and isinstance(t, int) and not isinstance(t, bool) and 0 <= t < turns:
            out.setdefault(t, []).append(m["text"])
    return {t: "\n".join(texts) for t, texts in sorted(out.items())}


def stated_escalation_turn(conv: dict, judge: TextJudge) -> int | None:
    """First turn whose text the judge reads as an escalation, or None (SPEC section 4)."""
    texts = turn_texts(conv)
    if not texts:
        return None
    turns = list(texts)
    verdicts = np.asarray(judge.stated_escalation(list(texts.values()), [conv["language"]] * len(turns)), dtype=bool)
    hits = [t for t, v in zip(turns, verdicts) if v]
    return hits[0] if hits else None
