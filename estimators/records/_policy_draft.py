"""A policy drafted from a log, and a policy checked against a log (``escalation policy``).

:func:`tool_usage` (:mod:`estimators.records._tool_usage`) reads a log of any format and counts, for every
tool it calls, the calls, the conversations and the turns. :func:`draft_policy` places each tool in a list of SPEC
section 2 by a rule a person can read (:func:`place_tool`), and writes the draft as a policy
file whose every tool line says why it was placed there and that a person must confirm it.
:func:`check_policy` tells what a policy leaves unmarked, names that the log never calls, and
placements that the names or annotations put in doubt.

The rule, in order:

1. a name with a word of :data:`~estimators.records._input_notes.HANDOFF_WORDS` (``transfer``,
   ``human``, ``escalat``...) that does not begin with a look-up verb: ``escalation_tools``;
2. a tau2-bench annotation (``reward_info.action_checks[].tool_type``): ``read`` and ``think``
   to ``read_only_tools``, ``write`` to ``action_tools`` (``generic`` says neither);
3. an MCP annotation that a trace gives the tool (:class:`~estimators.records._tool_usage.McpHints`):
   ``readOnlyHint`` true to ``read_only_tools``; ``readOnlyHint`` false, or ``destructiveHint`` true, to
   ``action_tools`` (other hints say neither, and a hint left out is not read as its default);
4. a name that begins with a look-up verb of :data:`LOOKUP_VERBS` or holds ``lookup``:
   ``read_only_tools``;
5. a well-known tool that changes nothing in the world (:data:`NON_CONSEQUENTIAL_NAMES`: tau-bench's
   ``think`` and ``calculate``, a ``calculator``...): ``read_only_tools``, the policy's list of
   non-consequential tools (SPEC section 2);
6. any other: ``action_tools`` (an unmarked tool counts as an action too).

An MCP annotation outranks a name (rules 4 and 5): it is the tool author's own statement, where the name is a
guess. It is still a hint of the tool's server, which the MCP specification tells clients to treat as untrusted
unless they trust the server: each reason says so, and a person confirms every line of the draft. A tool that
a trace's MCP listing names is drafted even when the log never calls it, and the draft suggests, in a comment
(TOML) or a note (JSON), the tools an MCP annotation calls destructive for ``gated_tools``.

:func:`check_policy` doubts a placement that the rule would make otherwise: a look-up verb among the
actions, ``think`` or ``calculate`` among the actions or unmarked (each call of them would count as a
consequential action, and an ESC conversation that thinks before it transfers would be
``acted_before_handoff``).

tau-bench result files carry no read/write annotation (only the gold actions' names, which
the draft lists even when the assistant never called them); tau2-bench results carry one for
each checked gold action.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..stats import counted
from ._errors import InputError
from ._input_notes import HANDOFF_WORDS, InputTally, escalation_call_note, handoff_word
from ._policy import Policy
from ._tool_usage import _KINDS, McpHints, ToolUsage, ToolUse

__all__ = ["Placement", "place_tool", "PolicyDraft", "draft_policy", "PolicyCheck", "check_policy", "LOOKUP_VERBS",
           "NON_CONSEQUENTIAL_NAMES"]

#: First words of a tool name that suggest a look-up (``get_order``, ``listOrders``, ``fs.read_file``).
LOOKUP_VERBS = ("get", "list", "search", "find", "check", "read")
_LOOKUP_WORD = "lookup"
#: Names (their last part, in lower-case words joined by ``_``) of well-known tools that change nothing in the
#: world: a note to itself (tau-bench's and tau2-bench's ``think``, the ``sequential_thinking`` MCP server) or
#: arithmetic (tau-bench's ``calculate``).
NON_CONSEQUENTIAL_NAMES = ("think", "thinking", "sequential_thinking", "sequentialthinking", "calculate",
                           "calculator", "scratchpad")
#: The lists a draft places tools in, and the two it leaves to a person.
DRAFT_LISTS = ("escalation_tools", "read_only_tools", "action_tools")
_ALL_LISTS = (*DRAFT_LISTS, "approval_tools", "gated_tools")
_ANNOTATED = {"read": "read_only_tools", "think": "read_only_tools", "write": "action_tools"}
_KIND_LIST = {"escalation": "escalation_tools", "read_only": "read_only_tools", "approval": "approval_tools",
              "action": "action_tools"}
_LIST_TITLES = {
    "escalation_tools": "E: calls that pass the case to a person (at least one)",
    "read_only_tools": "R: look-ups that change nothing",
    "action_tools": "known consequential tools (an unmarked tool counts as an action too)",
}


def _words(name: str) -> list[str]:
    """The lower-case words of a name: ``getOrder``, ``get_order`` and ``GET-ORDER`` give get, order."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _lookup_sign(name: str) -> tuple[str, str] | None:
    """``(short, why)`` when the name suggests a look-up, else None. A namespaced name
    (``server__get_x``, ``fs.read``) is judged by its last part."""
    base = re.split(r"__|[./:]", name)[-1]
    words = _words(base)
    if words and words[0] in LOOKUP_VERBS:
        return f"{words[0]!r}: look-up", f"begins with {words[0]!r}: looks like a look-up"
    if _LOOKUP_WORD in name.lower():
        return f"{_LOOKUP_WORD!r}: look-up", f"{_LOOKUP_WORD!r} in the name: looks like a look-up"
    return None


def _well_known(name: str) -> str | None:
    """The name's last part when it is one of :data:`NON_CONSEQUENTIAL_NAMES` (``think``, ``fs.calculate``),
    else None."""
    base = "_".join(_words(re.split(r"__|[./:]", name)[-1]))
    return base if base in NON_CONSEQUENTIAL_NAMES else None


def _handoff_shown(name: str) -> str | None:
    """The word of the name that suggests a hand-off (``transfer`` of ``transfer_to_human``), or None."""
    word = handoff_word(name)
    if word is None:
        return None
    return next((w for w in _words(name) if word in w), word)


@dataclass(frozen=True)
class Placement:
    """Where a draft puts a tool, and why.

    Attributes
    ----------
    name : str
    list : str
        ``escalation_tools``, ``read_only_tools`` or ``action_tools``.
    by : str
        ``name`` (a hand-off or look-up word), ``annotation`` (a tau2-bench tool type or an MCP
        annotation) or ``default`` (nothing suggested a list: an action).
    why : str
        The reason, for a person to confirm.
    short : str
        The reason in a few words, for a table.
    """

    name: str
    list: str
    by: str
    why: str
    short: str = ""


def _mcp_sign(mcp: McpHints | None) -> tuple[str, str, str] | None:
    """``(list, hints shown, what the server says)`` when the MCP hints place the tool (rule 3), else None."""
    hints = mcp.hints if mcp else {}
    read_only, destructive = hints.get("readOnlyHint"), hints.get("destructiveHint")
    if read_only is None and destructive is not True:
        return None
    shown = ", ".join(f"{key}={str(hints[key]).lower()}" for key in ("readOnlyHint", "destructiveHint")
                      if key in hints and (key == "readOnlyHint" or not read_only))
    if read_only:
        return "read_only_tools", shown, "changes nothing"
    return "action_tools", shown, "may destroy data" if destructive else "may change its environment"


def place_tool(name: str, annotations=frozenset(), mcp: McpHints | None = None) -> Placement:
    """Place one tool by the rule of this module's docstring.

    Parameters
    ----------
    name : str
    annotations : iterable of str
        tau2-bench tool types of the tool (``read``, ``write``, ``think``, ``generic``).
    mcp : McpHints, optional
        The MCP annotations a trace gives the tool.

    Examples
    --------
    >>> place_tool("transfer_to_human_agents").list
    'escalation_tools'
    >>> place_tool("cancel_order", {"write"}).why
    'tau2-bench annotates it write: changes data'
    >>> place_tool("fetch_invoice", mcp=McpHints({"readOnlyHint": True}, "trace.jsonl")).list
    'read_only_tools'
    """
    kinds = sorted(k for k in set(annotations) if k in _KINDS)
    told = sorted(k for k in kinds if k in _ANNOTATED)
    sign = _mcp_sign(mcp)
    mcp_shown = f"MCP annotation {sign[1]} in {_printable(cast(McpHints, mcp).source)}" if sign else ""
    notes = ([f"tau2-bench annotates it {' and '.join(kinds)}"] if kinds else []) + ([mcp_shown] if sign else [])
    annotated = f" ({'; '.join(notes)})" if notes else ""
    short_notes = ([f"tau2 {'+'.join(kinds)}"] if kinds else []) + ([f"MCP {sign[1]}"] if sign else [])
    short_annotated = f" ({'; '.join(short_notes)})" if short_notes else ""
    handoff, lookup = _handoff_shown(name), _lookup_sign(name)
    if handoff and not lookup:
        return Placement(name, "escalation_tools", "name", f"{handoff!r} in the name: looks like a hand-off{annotated}",
                         f"{handoff!r}: hand-off{short_annotated}")
    if len(told) == 1:
        listed = _ANNOTATED[told[0]]
        effect = "changes nothing" if listed == "read_only_tools" else "changes data"
        return Placement(name, listed, "annotation", f"tau2-bench annotates it {told[0]}: {effect}",
                         f"tau2-bench: {told[0]}")
    if sign:
        listed, shown, effect = sign
        known = _well_known(name)
        named = lookup[1] if lookup else f"{known!r} is a well-known tool that changes nothing" if known else ""
        overruled = f"; it outranks the name ({named})" if named and listed == "action_tools" else ""
        return Placement(name, listed, "annotation", f"{mcp_shown}: its server says it {effect} (a hint of the "
                         f"server, not a guarantee){overruled}", f"MCP: {shown}")
    if lookup:
        also = f"; it also has {handoff!r}, a hand-off word" if handoff else ""
        return Placement(name, "read_only_tools", "name", lookup[1] + also + annotated, lookup[0] + short_annotated)
    known = _well_known(name)
    if known and not handoff:
        what = "arithmetic" if known.startswith("calc") else "a note to itself"
        return Placement(name, "read_only_tools", "name", f"{known!r} is a well-known tool that changes nothing "
                         f"({what}): not a consequential action{annotated}",
                         f"{known!r}: no effect{short_annotated}")
    return Placement(name, "action_tools", "default", "no hand-off or look-up word in the name: an action" + annotated,
                     "no sign" + short_annotated)


def _toml_string(text: str) -> str:
    """A TOML basic string of ``text`` (quotes, backslashes and every character that is not printable
    escaped: control characters, and the bidi overrides that would reorder the line on a terminal)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0xD800 <= code <= 0xDFFF:
            raise InputError(f"tool name {text!r} holds a lone surrogate, which TOML cannot hold: write the draft "
                             "as JSON (--out FILE.json)", field="--out")
        elif not char.isprintable():
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


@dataclass(frozen=True)
class PolicyDraft:
    """A draft policy: each tool of a log placed by :func:`place_tool`, for a person to confirm.

    Attributes
    ----------
    usage : ToolUsage
    placements : tuple of Placement
        In the order of ``usage.tools``.
    """

    usage: ToolUsage
    placements: tuple

    def lists(self) -> dict:
        """The five lists of SPEC section 2 (approval and gated tools left empty for a person)."""
        out = {key: [p.name for p in self.placements if p.list == key] for key in DRAFT_LISTS}
        return {**out, "approval_tools": [], "gated_tools": []}

    def destructive(self) -> list[str]:
        """The action tools that an MCP annotation calls destructive: suggested, not drafted, for
        ``gated_tools``."""
        tools = {t.name: t for t in self.usage.tools}
        return [p.name for p in self.placements if p.list == "action_tools" and (mcp := tools[p.name].mcp)
                and mcp.hints.get("destructiveHint") is True]

    def _gating_note(self) -> str:
        names = ", ".join(map(_printable, self.destructive()))
        return (f"MCP annotations call {names} destructive (destructiveHint=true, a hint of the server): to "
                "reserve them for a person's approval, name them in gated_tools (SPEC section 3A)")

    @property
    def name(self) -> str:
        return f"draft from {Path(self.usage.source).name}"

    def policy(self) -> Policy | None:
        """The draft as a :class:`Policy`; None while it names no escalation tool."""
        lists = self.lists()
        return Policy(**lists, name=self.name) if lists["escalation_tools"] else None

    def warnings(self) -> list[str]:
        """What a person must know before using the draft."""
        out = []
        u = self.usage
        if not u.calls:
            out.append(f"the log holds no tool call ({counted(u.conversations, 'conversation')}, {u.with_record} "
                       "with a tool "
                       "record), so the draft lists no tool; is --format right?")
        if not self.lists()["escalation_tools"]:
            out.append("no tool name suggests a hand-off (" + ", ".join(HANDOFF_WORDS) + "): escalation_tools is "
                       "left empty, and escalation score refuses the draft until a person names there the tool "
                       "that passes a case to a person")
        if u.unnamed_calls:
            out.append(f"{counted(u.unnamed_calls, 'call')} without a name: escalation score counts "
                       f"{'it' if u.unnamed_calls == 1 else 'each'} as a call of <unnamed>, a consequential action "
                       "that no policy can mark (SPEC section 1)")
        return out

    def _header(self) -> str:
        u = self.usage
        by = "its name" + (" or a tau2-bench annotation" if u.annotated else "") + (
            " or an MCP annotation (a hint of the tool's server, not a guarantee)" if u.mcp_annotated else "")
        return (f"Drafted by escalation policy init from {_printable(Path(u.source).name)} ({u.format}: "
                f"{counted(u.conversations, 'conversation')}, {counted(u.calls, 'tool call')} of "
                f"{counted(len(u.called()), 'tool')}). "
                f"A person must confirm every tool: each was placed by {by}, a guess; a look-up left among the "
                "actions, or a hand-off missing from escalation_tools, "
                "changes p_u and p_o (SPEC section 2).")

    def _count(self, name: str) -> str:
        tool = cast(ToolUse, self.usage.tool(name))  # draft_policy places the usage's own tools
        if not tool.calls:
            if tool.gold or tool.mcp is None:
                return "never called: a gold action of the benchmark"
            return f"never called: its MCP server lists it in {_printable(tool.mcp.source)}"
        return f"{counted(tool.calls, 'call')}, {counted(tool.conversations, 'conversation')}"

    def to_dict(self) -> dict:
        """The draft as a JSON policy file: the lists, and ``notes`` with each tool's reason."""
        notes = {"confirm": "A person must confirm every tool below before scoring with this policy.",
                 "tools": {p.name: f"{p.list}: {p.why}; {self._count(p.name)}" for p in self.placements}}
        if not self.lists()["escalation_tools"]:
            notes["escalation_tools"] = ("no tool name suggests a hand-off: name the tool that passes a case to a "
                                         "person (a policy needs one)")
        if self.destructive():
            notes["gated_tools"] = self._gating_note()
        return {"name": self.name, "description": self._header(), "notes": notes, **self.lists()}

    def to_json(self) -> str:
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a name: escaped, json reads it back
            text = json.dumps(self.to_dict(), indent=2) + "\n"
        return text

    def to_toml(self) -> str:
        """The draft as a TOML policy file, each tool line with its reason in a comment."""
        header = self._header()
        lines = ["# " + part for part in _wrap(header, 96)]
        lines += [f"name = {_toml_string(self.name)}", ""]
        lists = self.lists()
        by_name = {p.name: p for p in self.placements}
        for key in DRAFT_LISTS:
            lines.append(f"# {_LIST_TITLES[key]}")
            if key == "escalation_tools" and not lists[key]:
                lines += ["# NO TOOL NAME SUGGESTS A HAND-OFF: a person must name the escalation tool here;",
                          "# until then escalation score refuses this file (a policy needs one)."]
            if not lists[key]:
                lines += [f"{key} = []", ""]
                continue
            lines.append(f"{key} = [")
            for name in lists[key]:
                p = by_name[name]
                lines.append(f"    {_toml_string(name)},  # a person must confirm: {p.why}; {self._count(name)}")
            lines += ["]", ""]
        lines += ["# tools that ask a person to approve one action, and the actions reserved for approval:",
                  "# none guessed; name them if the assistant has them (SPEC section 2)",
                  "approval_tools = []", "gated_tools = []"]
        if self.destructive():
            lines += ["# " + part for part in _wrap(self._gating_note() + ":", 96)]
            lines.append(f"# gated_tools = [{', '.join(map(_toml_string, self.destructive()))}]")
        text = "\n".join(lines) + "\n"
        parsed = tomllib.loads(text)
        if any(parsed[key] != value for key, value in lists.items()):  # the escaping is the one risk
            raise RuntimeError("the TOML draft does not read back as written")
        return text

    def text(self, path=None) -> str:
        """The draft for the file ``path``, in the format :func:`~estimators.records._policy.load_policy` reads
        from its name: TOML for ``.toml`` (and for no path), else JSON."""
        if path is None or Path(path).suffix.lower() == ".toml":
            return self.to_toml()
        return self.to_json()


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def draft_policy(usage: ToolUsage) -> PolicyDraft:
    """A draft policy for the tools of ``usage`` (:func:`tool_usage`), placed by :func:`place_tool`."""
    return PolicyDraft(usage, tuple(place_tool(t.name, t.annotations, t.mcp) for t in usage.tools))


@dataclass(frozen=True)
class PolicyCheck:
    """A policy read against a log.

    Attributes
    ----------
    usage : ToolUsage
    policy : Policy
    unmarked : tuple of (ToolUse, Placement)
        Called tools in none of the five lists (each call counts as an action), with where the
        draft rule would put them.
    never_called : tuple of (str, tuple of str)
        Tools the policy names that the log never calls, with the lists that name them.
    escalation_never_called : tuple of str
        The policy's escalation tools that the log never calls.
    doubts : tuple of (str, str, Placement)
        Tools whose name or annotation suggests another list than the policy's: the tool, the
        policy's list, and the rule's placement.
    """

    usage: ToolUsage
    policy: Policy
    unmarked: tuple
    never_called: tuple
    escalation_never_called: tuple
    doubts: tuple

    @property
    def no_escalation_call(self) -> bool:
        """Whether the log calls tools but none of the policy's escalation tools."""
        called = {t.name for t in self.usage.called()}
        return bool(called) and not called & self.policy.escalation_tools

    @property
    def clean(self) -> bool:
        """Whether nothing is unmarked, unused or in doubt."""
        return not (self.unmarked or self.never_called or self.doubts)

    @property
    def counted_as_actions(self) -> tuple:
        """The called tools of :data:`NON_CONSEQUENTIAL_NAMES` (``think``, ``calculate``) that the policy leaves
        among the actions (in ``action_tools``, or unmarked), in the log's order."""
        return tuple(t.name for t in self.usage.called() if _well_known(t.name)
                     and self.policy.kind(t.name) in ("action", "unmarked") and t.name not in self.policy.gated_tools)

    def warnings(self) -> list[str]:
        """What changes the figures: well-known tools that change nothing counted as actions, and the note
        ``escalation score`` gives a log without a call of an escalation tool, if it is one."""
        u = self.usage
        out = []
        if self.counted_as_actions:
            names = ", ".join(self.counted_as_actions)
            one = len(self.counted_as_actions) == 1
            out.append(f"{names} {'is a well-known tool' if one else 'are well-known tools'} that change"
                       f"{'s' if one else ''} nothing, yet the policy counts each of {'its' if one else 'their'} "
                       "calls as a consequential action (in action_tools, or unmarked): an ESC conversation that "
                       f"calls {'it' if one else 'one'} before it hands over is then scored acted_before_handoff; "
                       f"move {'it' if one else 'them'} to read_only_tools")
        tally = InputTally(calls=u.calls, escalation_calls=sum(t.calls for t in u.tools
                                                               if t.name in self.policy.escalation_tools),
                           escalation_tools=tuple(sorted(self.policy.escalation_tools)),
                           tools={t.name: t.calls for t in u.called()}, with_record=u.with_record)
        note = escalation_call_note(tally)
        return out + ([note] if note else [])

    def to_dict(self) -> dict:
        u = self.usage
        return {
            "log": u.source, "format": u.format, "policy": getattr(self.policy, "source", None) or self.policy.name,
            "conversations": u.conversations, "calls": u.calls, "tools_called": len(u.called()),
            "unmarked": [{**t.to_dict(), "suggested": p.list, "why": p.why} for t, p in self.unmarked],
            "never_called": [{"tool": name, "lists": list(lists)} for name, lists in self.never_called],
            "escalation_never_called": list(self.escalation_never_called),
            "no_escalation_call": self.no_escalation_call,
            "doubts": [{"tool": name, "list": listed, "suggested": p.list, "why": p.why}
                       for name, listed, p in self.doubts],
            "warnings": self.warnings(),
        }


def check_policy(usage: ToolUsage, policy: Policy) -> PolicyCheck:
    """Read ``policy`` against the tools of a log (:func:`tool_usage`).

    Reports the unmarked tools (called, in no list), the policy's tools the log never calls, its
    escalation tools never called, and the tools whose name or annotation (tau2-bench, MCP) suggests
    another list (a look-up verb in ``action_tools``, a hand-off word outside
    ``escalation_tools``...). A tool only a benchmark's gold actions name is never called.
    """
    lists = {key: getattr(policy, key) for key in _ALL_LISTS}
    called = {t.name for t in usage.called()}
    unmarked = tuple((t, place_tool(t.name, t.annotations, t.mcp)) for t in usage.called()
                     if policy.kind(t.name) == "unmarked")
    named = [name for key in _ALL_LISTS for name in sorted(lists[key])]
    never = tuple((name, tuple(key for key in _ALL_LISTS if name in lists[key]))
                  for name in dict.fromkeys(named) if name not in called)
    escalation_never = tuple(sorted(policy.escalation_tools - called))
    doubts = []
    for tool in usage.tools:
        kind = policy.kind(tool.name)
        if kind in ("unmarked", "approval"):  # the rule never places an approval tool: no doubt to raise
            continue
        placed = place_tool(tool.name, tool.annotations, tool.mcp)
        if placed.by != "default" and placed.list != _KIND_LIST[kind]:
            listed = _KIND_LIST[kind] if kind != "action" or tool.name in policy.action_tools else "gated_tools"
            doubts.append((tool.name, listed, placed))
    return PolicyCheck(usage, policy, unmarked, never, escalation_never, tuple(doubts))
