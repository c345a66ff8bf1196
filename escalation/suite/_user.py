"""The scripted user: the next user message, chosen by simple rules on the assistant's last message.

After each assistant turn (a message with no tool call), in this order:

1. the conversation ends when the assistant passed it to a person (it called the escalation tool)
   or when the user has sent ``max_user_messages`` messages;
2. a case with a late fact says it in the user's second message, whatever the assistant asked;
3. otherwise the user answers what the assistant asked (:meth:`ScriptedUser.answer`), or the conversation
   ends when it asked nothing.

What the assistant asked is read from its prose only (:func:`asking_sentences`): code, tool calls written
as text (JSON objects, ``<tool_call>`` tags), URLs and quoted titles that end in ``?`` are set aside, and
the rest is cut into sentences (a decimal point ends none). A sentence asks when it is a question (it
ends in ``?`` or holds ``¿``), when it holds a request to the user (``requests`` of ``suite.json``:
"please provide", "let me know", "indícame") and is not a sign-off (``sign_off``: "let me know if there is
anything else"), or when it says what the assistant ``needs`` and names a fact. Each asking
sentence is then read, by the patterns of ``suite.json`` (whole words or phrases, case-insensitive; a
final ``*`` matches any ending):

- a **fact**: it names an intent that is not ``confirm`` (``identity``, ``id``);
- **open** (``open``): it asks for something the user has no yes to ("anything else?", "confirm which flight");
- a **go-ahead**: it names ``confirm`` ("shall I", "proceed", "¿procedo?");
- a **question** with none of these.

The reply: the case's answers to every fact asked, in one message in the order of the intents; when no
fact was asked, the ``confirm`` answer to a go-ahead, unless the message offers to pass the case to a
person (``handoff``: "would you like me to transfer you to a human agent?"): whether a person takes
the case is the assistant's decision, never the user's; anything else asked (an open question, a fact
the case does not hold, a hand-off offer) gets the default answer, which says nothing of the case (with
the pressure phrase in a pressure variant). The default answer and the ``confirm`` answer are the same
in both twins of a case, so a reply never tells the twins apart; an answer differs only where it states
the case's facts.

So a run is reproducible and costs only the assistant's tokens. The rules' accuracy on labelled
assistant turns is measured in ``tests/data/suite`` (``measure_user.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._data import Scenario

__all__ = ["ScriptedUser", "asking_sentences"]

#: The answer of the go-ahead intent; every other intent is a fact of the case.
CONFIRM = "confirm"
#: What is not prose to the user: code blocks and inline code, ``<tool_call>`` blocks (to their end or the
#: text's), URLs, and a quoted text that ends in ``?`` (a FAQ title, a customer's words).
_NOT_PROSE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`|<tool_call>.*?(?:</tool_call>|\Z)|(?:https?://|www\.)\S+"
                        r"|\"[^\"\n]*\?\"|“[^”\n]*\?”|«[^»\n]*\?»", re.DOTALL | re.IGNORECASE)
#: A point that ends no sentence: a decimal point, and the points of "e.g." and "i.e.".
_INNER_POINT = re.compile(r"(?<=\d)\.(?=\d)|(?<=\be)\.(?=g\.)|(?<=\be\.g)\.|(?<=\bi)\.(?=e\.)|(?<=\bi\.e)\.",
                          re.IGNORECASE)
#: Where a sentence ends: after ``.!?`` or at a line break. Every step here is linear in the text's length
#: (a regular expression tried from every position of a long sentence once held the task for an hour on 1 MB).
_SENTENCE_END = re.compile(r"(?<=[.!?\n])")


def _prose(text: str) -> str:
    """``text`` without what is not addressed to the user: see :data:`_NOT_PROSE`, and every JSON-like object
    (balanced braces; one left open runs to the end of the text)."""
    text = _NOT_PROSE.sub(" ", text)
    kept, depth, start = [], 0, 0
    for brace in re.finditer(r"[{}]", text):
        if brace.group() == "{":
            if depth == 0:
                kept.append(text[start:brace.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                start = brace.end()
    if depth == 0:
        kept.append(text[start:])
    return " ".join(kept)


@cache
def _phrases(phrases: tuple[str, ...]) -> re.Pattern:
    """One expression for phrases: whole words, case-insensitive; a final ``*`` matches any ending."""
    bodies = [re.escape(p.rstrip("*").lower()) + ("" if p.endswith("*") else r"(?!\w)") for p in phrases]
    return re.compile(r"(?<!\w)(?:" + "|".join(bodies) + ")")


def _holds(sentence: str, phrases) -> bool:
    return bool(phrases) and _phrases(tuple(phrases)).search(sentence) is not None


def asking_sentences(text: str, settings: dict, language: str) -> list[str]:
    """The sentences of an assistant's text that ask the user something (lower case, in order): the
    module's rules, with the patterns of ``settings`` (``suite.json``'s ``user``) in ``language``."""
    facts = [p for intent in settings["intents"] if intent["answer"] != CONFIRM for p in intent["patterns"][language]]
    found = []
    for sentence in _SENTENCE_END.split(_INNER_POINT.sub("", _prose(text or "")).lower()):
        sentence = sentence.strip()
        if sentence.endswith("?") or "¿" in sentence \
                or (_holds(sentence, settings["requests"][language])
                    and not _holds(sentence, settings["sign_off"][language])) \
                or (_holds(sentence, settings["needs"][language]) and _holds(sentence, facts)):
            found.append(sentence)
    return found


@dataclass
class ScriptedUser:
    """The user of one scenario; :meth:`reply` gives its next message or None (the end)."""

    scenario: Scenario
    settings: dict
    sent: int = 1          # the opening request is the first message
    late_said: bool = False

    def reply(self, assistant_text: str, *, handed_off: bool) -> str | None:
        """The next message after an assistant turn whose final text is ``assistant_text``."""
        if handed_off or self.sent >= self.settings["max_user_messages"]:
            return None
        if self.scenario.late is not None and not self.late_said:
            self.late_said = True
            return self._send(self.scenario.late)
        answer = self.answer(assistant_text)
        return None if answer is None else self._send(answer)

    def answer(self, assistant_text: str) -> str | None:
        """The answer to what ``assistant_text`` asks (the module's rules), or None when it asks nothing; the
        user's state does not change."""
        language, settings, answers = self.scenario.language, self.settings, self.scenario.answers
        asked = asking_sentences(assistant_text, settings, language)
        if not asked:
            return None
        intents = {i["answer"]: i["patterns"][language] for i in settings["intents"]}
        facts, go_ahead = set(), False
        for sentence in asked:
            named = {name for name, patterns in intents.items() if name != CONFIRM and _holds(sentence, patterns)}
            facts |= named
            if not named and not _holds(sentence, settings["open"][language]):
                go_ahead |= _holds(sentence, intents[CONFIRM])
        known = [answers[name] for name in intents if name in facts and answers.get(name)]
        if known:
            return " ".join(known)
        if go_ahead and not facts and not _holds(_prose(assistant_text).lower(), settings["handoff"][language]):
            return answers[CONFIRM]
        return self.scenario.default_answer

    def _send(self, message: str) -> str:
        self.sent += 1
        return message
