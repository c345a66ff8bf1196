"""Turn numbering of a chat transcript (SPEC section 1), shared by every chat format.

A reader walks its provider's messages in order and tells a :class:`Transcript` what it
sees: a user message that speaks to the assistant (:meth:`~Transcript.user`), assistant
text (:meth:`~Transcript.assistant`), an assistant tool call (:meth:`~Transcript.call`)
and a tool result (:meth:`~Transcript.result`). :meth:`~Transcript.record` then numbers
the turns. Tool results, system messages and a user message made only of tool results
open no turn; the reader simply does not call :meth:`~Transcript.user` for them.

The rule **[decision, SPEC section 1 made exact]**:

- A user message *opens a turn* when the assistant does something (a text or a call)
  after it and before the next user message. A user message that the assistant never
  answers -- the last message of a run (tau-bench's ``###STOP###``, a closing "thanks"),
  or the first of two user messages in a row -- opens no turn: the assistant had no turn
  there, so there is nothing to score in it.
- The opening user messages open turns ``0, 1, 2, ...``; what the assistant does before
  the first user message belongs to turn 0, together with its answer to that message.
- ``T`` (``assistant_turns``) is the number of opening user messages, at least 1 (a
  transcript with no user message at all is one turn).
- A user message keeps the turn it opens; one that opens no turn is filed with the turn
  of the next opening user message (it was part of the same request), or with the last
  turn ``T - 1`` when none follows.

A tool result whose call is not in the transcript (a truncated log) is taken as a call of
the tool it names, at the point where the result appears: an attempted call is a call
(SPEC section 1). When it names no tool the call has no name: a call of an unnamed tool
(``<unnamed>``), a consequential action, rather than a call silently lost. Such calls are
counted in ``metadata["implied_calls"]``. A message that cannot be read at all is treated the
same way (``metadata["unreadable_items"]``).
"""
from __future__ import annotations

from typing import Any

import orjson

__all__ = ["Transcript", "parse_arguments", "join_texts"]


def parse_arguments(raw):
    """Arguments as a provider logged them: a JSON string is parsed; malformed JSON stays text."""
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
    return raw


def join_texts(parts) -> str:
    """The non-empty texts of a message, one per line."""
    return "\n".join(t for t in parts if isinstance(t, str) and t.strip())


def _answer(call: dict, text) -> None:
    """Put the decision and approver of an approval request's answer (a JSON object) on the call."""
    if call.get("decision") is not None or not isinstance(text, str) or not text.lstrip().startswith("{"):
        return
    try:
        answer = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    if isinstance(answer, dict) and isinstance(answer.get("decision"), str):
        call["decision"] = answer["decision"]
        if answer.get("approver") is not None:
            call["approver"] = answer["approver"]


class Transcript:
    """The ordered events of one chat, numbered into turns by :meth:`record`."""

    def __init__(self) -> None:
        self._events: list[tuple[str, Any]] = []  # (kind, text or call dict)
        self._open: list[int] = []  # positions of calls that have no result yet
        self._implied = 0
        self._unreadable = 0

    def user(self, text: str) -> None:
        """A user message that speaks to the assistant (a turn opener if the assistant answers)."""
        self._events.append(("user", text or ""))

    def assistant(self, text: str) -> None:
        """Text the assistant shows to the user; empty text is dropped."""
        if isinstance(text, str) and text.strip():
            self._events.append(("assistant", text))

    def call(self, name, arguments=None, call_id=None, covers=None) -> None:
        """A tool call by the assistant, in record order.

        ``covers`` is taken from ``arguments["covers"]`` when not given (approval requests,
        SPEC section 2).
        """
        if covers is None and isinstance(arguments, dict) and isinstance(arguments.get("covers"), list):
            covers = arguments["covers"]
        call = {"name": name if isinstance(name, str) and name else None, "arguments": arguments,
                "id": call_id}
        if covers is not None:
            call["covers"] = covers
        self._open.append(len(self._events))
        self._events.append(("call", call))

    def result(self, call_id=None, name=None, *, failed: bool = False, text=None) -> None:
        """A tool result; it opens no turn. It is matched to its call by id, else by name,
        else to the latest call without a result; an unmatched result implies a call. ``failed``:
        the log says the call failed (an error result), which its call then records as
        ``"failed": true`` (SPEC section 1: a failed escalation call is not an escalation).

        ``text``: the result's text. The answer to an approval request (a call with ``covers``) that is a
        JSON object with a string ``decision`` is the request's recorded ``decision`` and ``approver``
        (SPEC section 3A: "where the log records them"), unless the call carries its own."""
        match = None
        for pos in reversed(self._open):
            call = self._events[pos][1]
            if call_id is not None and call["id"] is not None:
                if call["id"] == call_id:
                    match = pos
                    break
            elif name is None or call["name"] == name:
                match = pos
                break
        if match is not None:
            self._open.remove(match)
            if failed:
                self._events[match][1]["failed"] = True
            elif "covers" in self._events[match][1]:
                _answer(self._events[match][1], text)
            return
        self._implied += 1
        self._events.append(("call", {"name": name if isinstance(name, str) and name else None,
                                      "arguments": None, "id": call_id, **({"failed": True} if failed else {})}))

    def unreadable(self) -> None:
        """An item of the transcript that cannot be read (not an object, no role): it may
        have been a call, so it becomes a call without a name (``<unnamed>``, an action: SPEC
        section 1), marked ``"unreadable": true`` (it is not a call read from the log: ``score``
        does not count it among the calls that tell a log has a tool record); counted in
        ``metadata["unreadable_items"]``."""
        self._unreadable += 1
        self._events.append(("call", {"name": None, "arguments": None, "id": None, "unreadable": True}))

    def insert_call_before(self, call_id, name, arguments=None) -> bool:
        """Put a call just before the call with ``call_id``; False when there is no such call."""
        for pos, (kind, payload) in enumerate(self._events):
            if kind == "call" and call_id is not None and payload["id"] == call_id:
                self._events.insert(pos, ("call", {"name": name, "arguments": arguments, "id": None}))
                self._open = [p + 1 if p >= pos else p for p in self._open]
                return True
        return False

    def insert_call_at_end(self, name, arguments=None) -> None:
        """Put a call after the assistant's last text or call: the end of the last turn."""
        pos = max((i + 1 for i, (kind, _) in enumerate(self._events) if kind in ("assistant", "call")), default=0)
        self._events.insert(pos, ("call", {"name": name, "arguments": arguments, "id": None}))
        self._open = [p + 1 if p >= pos else p for p in self._open]

    def record(self) -> dict:
        """``assistant_turns``, ``tool_calls`` and ``messages`` of the canonical record."""
        kinds = [k for k, _ in self._events]
        opens = [False] * len(kinds)
        answered = False
        for i in range(len(kinds) - 1, -1, -1):  # a user message opens a turn if answered
            if kinds[i] == "user":
                opens[i] = answered
                answered = False
            elif kinds[i] in ("assistant", "call"):
                answered = True
        n_turns = max(sum(opens), 1)
        turn_of_user = [0] * len(kinds)
        following = n_turns - 1
        opened = sum(opens)
        for i in range(len(kinds) - 1, -1, -1):  # non-opening users join the next opening turn
            if kinds[i] == "user":
                if opens[i]:
                    opened -= 1
                    following = opened
                turn_of_user[i] = following
        calls, messages = [], []
        turn, seen = 0, 0
        for i, (kind, payload) in enumerate(self._events):
            if kind == "user":
                if opens[i]:
                    turn = seen
                    seen += 1
                if payload:
                    messages.append({"turn": turn_of_user[i], "role": "user", "text": payload})
            elif kind == "assistant":
                messages.append({"turn": turn, "role": "assistant", "text": payload})
            else:
                call = {"turn": turn, "name": payload["name"], "arguments": payload["arguments"]}
                for key in ("covers", "unreadable", "failed", "decision", "approver"):
                    if key in payload:
                        call[key] = payload[key]
                calls.append(call)
        out = {"assistant_turns": n_turns, "tool_calls": calls, "messages": messages}
        if self._implied:
            out["implied_calls"] = self._implied
        if self._unreadable:
            out["unreadable"] = self._unreadable
        return out


def timeline_transcript(timeline) -> Transcript:
    """A :class:`Transcript` of a trace's events ``(time, order, kind, payload)``, in time order (then the order
    found): ``kind`` ``user`` or ``text`` with the text as payload, or ``call`` with a dict ``name``,
    ``arguments`` and ``failed`` (the trace readers: :mod:`._otel`, :mod:`._langfuse`)."""
    transcript = Transcript()
    for number, (_, _, kind, payload) in enumerate(sorted(timeline, key=lambda item: item[:2])):
        if kind == "user":
            transcript.user(payload)
        elif kind == "text":
            transcript.assistant(payload)
        else:
            transcript.call(payload["name"], payload["arguments"], f"k{number}")
            if payload.get("failed"):
                transcript.result(f"k{number}", failed=True)
    return transcript


def executed_request(requested: list[dict], call_id, name, start) -> dict | None:
    """The call a model requested that a tool span (or observation) executed: the one with its call id, else the
    earliest one of its tool requested at or before ``start`` that no tool has executed yet (an executed request
    carries ``failed``)."""
    for call in requested:
        if "failed" in call:
            continue
        if call_id is not None and call["id"] is not None:
            if call["id"] == call_id:
                return call
        elif call["name"] == name and call["time"] <= start:
            return call
    return None


class UserMessages:
    """The user messages of one conversation read from the inputs of its model calls, each counted once.

    A model call's input repeats the conversation so far, so within one trace the messages after as many as an
    earlier call held are new. A session (``--group-by session``) is several traces, one a request: the first call
    of a trace that holds user messages may repeat the session's history (the application sent it) or hold only
    the new request, so there the new messages are those after the longest overlap of the history's end with the
    input's start. The readers of traces (:mod:`._otel`, :mod:`._langfuse`) call :meth:`trace` at each trace and
    :meth:`new` at each model call, in time order.
    """

    def __init__(self) -> None:
        self.history: list[str] = []
        self._in_trace: int | None = None

    def trace(self) -> None:
        """A new trace of the conversation starts."""
        self._in_trace = None

    def new(self, users: list[str]) -> list[str]:
        """The messages of ``users`` (one model call's user inputs, in order) not read before."""
        if not users:
            return []
        if self._in_trace is None:
            seen = self.history
            overlap = next((k for k in range(min(len(seen), len(users)), 0, -1) if seen[-k:] == users[:k]), 0)
            fresh = users[overlap:]
            self._in_trace = len(users)
        else:
            fresh = users[self._in_trace:]
            self._in_trace = max(self._in_trace, len(users))
        self.history += fresh
        return fresh
