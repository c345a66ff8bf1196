"""Tool calls written as text, read as inspect_ai tool calls (``-T text_tool_calls=true`` of the suite's task).

Small open-weights models served by llama.cpp, vLLM or Ollama often write a call as text in place of a
structured call, when the server's chat template or its tool-call parser does not turn it into one. The forms
read here are the common ones:

- the Qwen / Hermes format (Qwen2.5's chat template, NousResearch's Hermes function calling): one call a tag,
  ``<tool_call>{"name": "transfer_to_human", "arguments": {"reason": "..."}}</tool_call>``, possibly several
  tags in one message;
- the same JSON object bare, without the tags (Qwen2.5 served without its tool-call parser), alone, in a
  JSON list, or inside a Markdown code fence (```` ```json ... ``` ````);
- ``"parameters"`` in place of ``"arguments"`` (the Llama 3.1 JSON tool-call format), arguments given as a
  JSON string that holds an object (OpenAI's ``function.arguments``), and a call inside a wrapper such as
  OpenAI's ``{"type": "function", "function": {...}}``.

A call is a JSON object whose ``name`` is one of the tools the task offers and whose ``arguments`` (or
``parameters``) is an object. Anything else stays text: a name the task does not offer, text that is not
JSON (braces in prose, a question mark), JSON that holds no call. The text is read where a ``{`` opens a JSON
object with a string key, or a ``[`` a list of objects; a JSON value that holds calls (a call, a list of calls,
a wrapper) is taken whole, its calls in the order written, and a call's arguments are never read as calls. Two
bounds keep the search fast whatever the model writes (a call is a few hundred characters, a few levels deep):
a message longer than :data:`MAX_TEXT` characters is not read, and a value that opens more than
:data:`MAX_DEPTH` levels of nesting within its first :data:`DEPTH_WINDOW` characters is not decoded (in a deep
nest each opening would be a long decode, and the search quadratic in the text).

:func:`read_text_calls` makes of an assistant message with no structured call a copy whose ``tool_calls`` are
the calls read, in the order written, whose text is what is left once the calls (and the tags and code fences
that held only them) are taken out, and whose ``metadata[TEXT_CALLS]`` records the text as the model wrote it
and the ids of the calls read, so a reader of the log can tell them from native calls. The suite's task runs
them through inspect_ai's own tool execution (:func:`inspect_ai.model.execute_tools`), so each has its tool
event and tool message as a native call has.
"""
from __future__ import annotations

import json
import re
from collections.abc import Collection
from itertools import accumulate
from typing import Any, NamedTuple

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.tool import ToolCall

__all__ = ["parse_text_calls", "read_text_calls", "TextCalls", "TEXT_CALLS", "MAX_TEXT", "MAX_DEPTH", "DEPTH_WINDOW"]

#: The key of an assistant message's ``metadata`` that marks calls read from its text:
#: ``{"text": the text as written, "calls": [ids of the calls read]}``.
TEXT_CALLS = "text_tool_calls"
#: The longest message text read for calls, in characters; a longer one is left as text.
MAX_TEXT = 65_536
#: The most levels of nesting that a JSON value holding a call may open within its first :data:`DEPTH_WINDOW`
#: characters (brackets opened less those closed); a deeper one is not decoded.
MAX_DEPTH = 16
#: The characters after an opening in which :data:`MAX_DEPTH` is checked.
DEPTH_WINDOW = 4_096

#: Where a JSON value that may hold a call opens: an object with a string key, or a list of objects.
_OPENING = re.compile(r'\{\s*"|\[\s*\{')
#: What is left of a Qwen / Hermes tag and of a Markdown code fence once the calls in them are taken out, removed
#: in this order (a tag may be in a fence).
_LEFTOVERS = (re.compile(r"<tool_call>\s*(?:</tool_call>)?|</tool_call>"), re.compile(r"```[A-Za-z]*\s*```"))
_DECODER = json.JSONDecoder()
_BRACKETS = {"{": 1, "[": 1, "}": -1, "]": -1}


class TextCalls(NamedTuple):
    """The calls read from a text, and the text without them."""

    calls: list[tuple[str, dict[str, Any]]]
    """``(tool name, arguments)`` of each call, in the order written."""
    text: str
    """The text with the calls, and the tags and code fences that held only them, taken out."""


def _arguments(value: Any) -> dict[str, Any] | None:
    """The arguments of a call: an object, or a JSON string that holds one; None for anything else."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _call(value: Any, tools: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` when ``value`` is a call of one of ``tools`` (see the module docstring); else None."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or value["name"] not in tools:
        return None
    key = "arguments" if "arguments" in value else "parameters"
    arguments = _arguments(value[key]) if key in value else None
    return None if arguments is None else (value["name"], arguments)


def _calls_in(value: Any, tools: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    """The calls that a decoded JSON value holds, in the order written: itself, or those in its items (not in a
    call's arguments); walked without recursion, whatever its depth."""
    calls, pending = [], [value]
    while pending:
        item = pending.pop()
        call = _call(item, tools)
        if call is not None:
            calls.append(call)
        elif isinstance(item, (dict, list)):
            pending.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
    return calls


def _nesting(text: str) -> list[int]:
    """The brackets opened less those closed before each position of ``text`` and at its end (brackets in strings
    counted too: an over-count only leaves text as text)."""
    return [0, *accumulate(_BRACKETS.get(c, 0) for c in text)]


def parse_text_calls(text: str, tools: Collection[str]) -> TextCalls:
    """The calls of ``tools`` written in ``text`` (the forms of the module docstring), and the rest of the text.

    Parameters
    ----------
    text : str
        An assistant message's text.
    tools : collection of str
        The names of the tools the task offers; a call of any other name stays text.

    Returns
    -------
    TextCalls
        No calls, and ``text`` unchanged, when none is found or ``text`` is longer than :data:`MAX_TEXT`.
    """
    if len(text) > MAX_TEXT:
        return TextCalls([], text)
    calls: list[tuple[str, dict[str, Any]]] = []
    kept, position = [], 0
    found = _OPENING.search(text)
    nesting = _nesting(text) if found is not None else []
    while found is not None:
        start = found.start()
        try:
            if nesting[min(start + DEPTH_WINDOW, len(text))] - nesting[start] > MAX_DEPTH:
                raise ValueError("nested too deep for a call")
            value, end = _DECODER.raw_decode(text, start)
            held = _calls_in(value, tools)
        except (ValueError, RecursionError):  # not JSON from here, or nested past the interpreter's depth
            found = _OPENING.search(text, start + 1)
            continue
        if held:
            calls += held
            kept.append(text[position:start])
            position = end
        found = _OPENING.search(text, end)
    if not calls:
        return TextCalls([], text)
    rest = "".join(kept) + text[position:]
    for leftover in _LEFTOVERS:
        rest = leftover.sub("", rest)
    return TextCalls(calls, rest.strip())


def read_text_calls(message: ChatMessageAssistant, tools: Collection[str],
                    first: int = 0) -> ChatMessageAssistant | None:
    """A copy of ``message`` with the calls written in its text as its ``tool_calls``; None when it has none.

    Parameters
    ----------
    message : inspect_ai.model.ChatMessageAssistant
        A model's message. One that already has structured ``tool_calls`` is not read (None).
    tools : collection of str
        The names of the tools the task offers.
    first : int
        The number of the first call's id (``text_call_<n>``): the calls made so far in the sample keep the
        ids unique.

    Returns
    -------
    inspect_ai.model.ChatMessageAssistant or None
        The copy: its text is the rest of the text (:func:`parse_text_calls`; other content, such as
        reasoning, is kept) and ``metadata[TEXT_CALLS]`` is ``{"text": the text as written, "calls": [ids]}``.
        The message itself is not changed.
    """
    if message.tool_calls:
        return None
    written = message.text
    calls, rest = parse_text_calls(written, tools)
    if not calls:
        return None
    tool_calls = [ToolCall(id=f"text_call_{first + i}", function=name, arguments=arguments)
                  for i, (name, arguments) in enumerate(calls)]
    parsed = message.model_copy(deep=True)
    parsed.text = rest
    parsed.tool_calls = tool_calls
    parsed.metadata = {**(message.metadata or {}),
                       TEXT_CALLS: {"text": written, "calls": [call.id for call in tool_calls]}}
    return parsed
