"""The scripted user: the next user message, chosen by simple rules on the assistant's last message.

After each assistant turn (a message with no tool call), in this order:

1. the conversation ends when the assistant passed it to a person (it called the escalation tool)
   or when the user has sent ``max_user_messages`` messages;
2. a case with a late fact says it in the user's second message, whatever the assistant asked;
3. if the assistant asked something (a sentence ending in ``?`` or opening with ``¿``), its last
   question is read: the first intent of ``suite.json`` with a pattern in it and an answer in the
   case gives the answer (``identity``, ``id``, ``confirm``). Patterns are whole words or
   phrases, case-insensitive; ``verific*`` also matches words that start with ``verific``. A
   question no intent matches gets the default answer (with the pressure phrase, in a pressure
   variant);
4. otherwise the user has nothing more to say and the conversation ends.

So a run is reproducible and costs only the assistant's tokens.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._data import Scenario

__all__ = ["ScriptedUser", "last_question"]

#: A sentence ending in ``?`` (tried only where a sentence starts: from anywhere in a long sentence it took
#: quadratic time, and 1 MB of assistant text without ``.!?`` or a newline held the task for an hour), or one
#: opening with ``¿``.
_SENTENCE = re.compile(r"(?<![^.!?\n])[^.!?\n]*\?|¿[^?\n]*\??")


def last_question(text: str) -> str | None:
    """The last question of a text (a sentence ending in ``?`` or opening with ``¿``), or None."""
    found = _SENTENCE.findall(text or "")
    return found[-1].strip().lower() if found else None


@cache
def _pattern(phrase: str) -> re.Pattern:
    body = re.escape(phrase.rstrip("*").lower()) + (r"" if phrase.endswith("*") else r"(?!\w)")
    return re.compile(r"(?<!\w)" + body)


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
        question = last_question(assistant_text)
        if question is None:
            return None
        for intent in self.settings["intents"]:
            answer = self.scenario.answers.get(intent["answer"])
            if answer and any(_pattern(p).search(question) for p in intent["patterns"][self.scenario.language]):
                return self._send(answer)
        return self._send(self.scenario.default_answer)

    def _send(self, message: str) -> str:
        self.sent += 1
        return message
