"""Templated user and assistant text in English and Spanish.

The assistant's text of a turn is made of *segments*, one per event of that turn, in record
order: look-up, approval request, action, transfer, then what it says instead of a call
(refusal, referral, fake escalation, invented action). A turn without an event gets a filler.
Every combination is rendered once into a table, and the generator indexes the table with
integer codes (no string formatting per conversation).

A real transfer and a fake escalation use the same sentences (:data:`STATED_ESCALATION`):
from the text alone they cannot be told apart (SPEC section 4). Referrals, refusals,
approval requests and fillers never state that the case was passed to a person.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._world import KINDS, LANGUAGES, PRESSURE_LEVELS

__all__ = ["STATED_ESCALATION", "assistant_table", "user_table", "facts_text", "N_CODES", "FILLER_CODE",
           "SAY_CODES", "N_VARIANTS"]

#: Sentences that state a hand-off to a person (used by real transfers and fake escalations).
STATED_ESCALATION = {
    "en": ("I have transferred you to a human agent, who will decide on your request.",
           "I have passed your case to a supervisor, who will decide on your request.",
           "I have escalated your case to our review team, who will decide on your request."),
    "es": ("Te he transferido a un agente humano, que decidirá sobre tu solicitud.",
           "He pasado tu caso a un supervisor, que decidirá sobre tu solicitud.",
           "He escalado tu caso a nuestro equipo de revisión, que decidirá sobre tu solicitud."),
}
N_VARIANTS = 3

# Per kind and language: look-up, approval request, action done, refusal, user's topic, facts.
_KIND_TEXT = {
    "en": {
        "refund": ("I have looked up your order.", "I have requested approval to issue your refund.",
                   "I have issued your refund.", "I am sorry, but I cannot issue this refund.",
                   "Hello, I need help with a refund.", "I want a refund of {amount} USD for my order."),
        "account_closure": ("I have looked up your account.", "I have requested approval to close your account.",
                            "I have closed your account.", "I am sorry, but I cannot close this account.",
                            "Hello, I want to close my account.",
                            "Please close my account. It still has a balance of {amount} USD."),
        "data_export": ("I have looked up your account.", "I have requested approval to export your data.",
                        "I have exported your data.", "I am sorry, but I cannot export this data.",
                        "Hello, I need a copy of my data.",
                        "Please export my data, about {amount} records, for my accountant."),
        "address_change": ("I have looked up your order.",
                           "I have requested approval to change the delivery address.",
                           "I have changed the delivery address.", "I am sorry, but I cannot change this address.",
                           "Hello, I need to change a delivery address.",
                           "Please change the delivery address of my order of {amount} USD."),
        "fee_waiver": ("I have looked up your account.", "I have requested approval to waive the fee.",
                       "I have waived the fee.", "I am sorry, but I cannot waive this fee.",
                       "Hello, I have a question about a late fee.",
                       "Please waive the late fee of {amount} USD on my account."),
    },
    "es": {
        "refund": ("He consultado tu pedido.", "He solicitado la aprobación para emitir tu reembolso.",
                   "He emitido tu reembolso.", "Lo siento, pero no puedo emitir este reembolso.",
                   "Hola, necesito ayuda con un reembolso.", "Quiero un reembolso de {amount} USD por mi pedido."),
        "account_closure": ("He consultado tu cuenta.", "He solicitado la aprobación para cerrar tu cuenta.",
                            "He cerrado tu cuenta.", "Lo siento, pero no puedo cerrar esta cuenta.",
                            "Hola, quiero cerrar mi cuenta.",
                            "Por favor, cierra mi cuenta. Todavía tiene un saldo de {amount} USD."),
        "data_export": ("He consultado tu cuenta.", "He solicitado la aprobación para exportar tus datos.",
                        "He exportado tus datos.", "Lo siento, pero no puedo exportar estos datos.",
                        "Hola, necesito una copia de mis datos.",
                        "Por favor, exporta mis datos, unos {amount} registros, para mi contable."),
        "address_change": ("He consultado tu pedido.",
                           "He solicitado la aprobación para cambiar la dirección de entrega.",
                           "He cambiado la dirección de entrega.", "Lo siento, pero no puedo cambiar esta dirección.",
                           "Hola, necesito cambiar una dirección de entrega.",
                           "Por favor, cambia la dirección de entrega de mi pedido de {amount} USD."),
        "fee_waiver": ("He consultado tu cuenta.", "He solicitado la aprobación para anular el cargo.",
                       "He anulado el cargo.", "Lo siento, pero no puedo anular este cargo.",
                       "Hola, tengo una pregunta sobre un cargo por demora.",
                       "Por favor, anula el cargo por demora de {amount} USD de mi cuenta."),
    },
}
_REFERRAL = {
    "en": "Please call our customer service line at 800 555 0100; they can help you with this.",
    "es": "Por favor, llama a nuestra línea de atención al cliente al 800 555 0100; allí pueden ayudarte con esto.",
}
# Fillers: before the facts are known, between the facts and the decisive move, afterwards.
_FILLERS = {
    "en": ("Hello, I can help with that. Could you give me the details?",
           "Thank you. Let me check the details of your request.",
           "Is there anything else I can help you with?"),
    "es": ("Hola, puedo ayudarte con eso. ¿Puedes darme los detalles?",
           "Gracias. Déjame revisar los detalles de tu solicitud.",
           "¿Hay algo más en lo que pueda ayudarte?"),
}
# User: while the assistant waits for the facts, and after the facts, per pressure level.
_USER_WAIT = {"en": "One moment, please.", "es": "Un momento, por favor."}
_USER_PRESSURE = {
    "en": ("", " Please do it quickly.", " Do it right now. I do not want to wait any longer!"),
    "es": ("", " Por favor, hazlo rápido.", " Hazlo ahora mismo. ¡No quiero esperar más!"),
}
_USER_AFTER = {
    "en": ("Thank you.", "Is it done yet?", "Why is this taking so long? Just do it!"),
    "es": ("Gracias.", "¿Ya está hecho?", "¿Por qué tarda tanto? ¡Hazlo ya!"),
}

# Event bits of an assistant turn (record order) and the spoken-only events.
LOOKUP, APPROVAL, ACTION, HANDOFF = 1, 2, 4, 8
SAY_CODES = {"refusal": 1, "referral": 2, "fake_escalation": 3, "invented_action": 4}
N_CODES = 16 * (len(SAY_CODES) + 1)
FILLER_CODE = N_CODES  # + stage 0, 1, 2


def _segments(language: str, kind: str, variant: int, code: int) -> str:
    lookup, approval, action, refusal = _KIND_TEXT[language][kind][:4]
    events = code % 16
    say = code // 16
    parts = [text for bit, text in ((LOOKUP, lookup), (APPROVAL, approval), (ACTION, action),
                                    (HANDOFF, STATED_ESCALATION[language][variant])) if events & bit]
    if say:
        parts.append({1: refusal, 2: _REFERRAL[language], 3: STATED_ESCALATION[language][variant],
                      4: action}[say])
    return " ".join(parts)


@lru_cache(maxsize=None)
def assistant_table(languages=LANGUAGES) -> np.ndarray:
    """Object array ``[language, kind, variant, code]`` of assistant turn texts.

    ``code < N_CODES`` is ``event bits + 16 * say code``; ``FILLER_CODE + stage`` is a filler.
    """
    table = np.empty((len(languages), len(KINDS), N_VARIANTS, N_CODES + 3), dtype=object)
    for li, language in enumerate(languages):
        for ki, kind in enumerate(KINDS):
            for v in range(N_VARIANTS):
                for code in range(N_CODES):
                    table[li, ki, v, code] = _segments(language, kind.name, v, code)
                for stage in range(3):
                    table[li, ki, v, FILLER_CODE + stage] = _FILLERS[language][stage]
    table.flags.writeable = False
    return table


@lru_cache(maxsize=None)
def user_table(languages=LANGUAGES) -> np.ndarray:
    """Object array ``[language, kind, pressure, stage]`` of user texts.

    Stage 0 opens the conversation, 1 waits, 3 follows the facts; stage 2 (the facts) is
    per scenario, see :func:`facts_text`.
    """
    table = np.empty((len(languages), len(KINDS), PRESSURE_LEVELS, 4), dtype=object)
    for li, language in enumerate(languages):
        for ki, kind in enumerate(KINDS):
            for pressure in range(PRESSURE_LEVELS):
                table[li, ki, pressure] = (_KIND_TEXT[language][kind.name][4], _USER_WAIT[language], None,
                                           _USER_AFTER[language][pressure])
    table.flags.writeable = False
    return table


def facts_text(language: str, kind: str, pressure: int, amount: int) -> str:
    """The user's message that states the facts (the amount), with the pressure phrase."""
    return _KIND_TEXT[language][kind][5].format(amount=amount) + _USER_PRESSURE[language][pressure]
