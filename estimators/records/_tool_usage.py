"""The tools a log calls (``escalation policy``): calls, conversations and turns of each (:func:`tool_usage`).

A policy draft (:mod:`estimators.records._policy_draft`) places each tool counted here in a list of SPEC section 2.

MCP tool annotations (``Tool.annotations`` of the Model Context Protocol, revision 2025-03-26 on: ``readOnlyHint``,
``destructiveHint``, ``idempotentHint``, ``openWorldHint``) are read from the tool definitions a trace holds
(:func:`mcp_annotations`). Producers that write them, checked 2026-12-04 (``tests/data/readers/
make_mcp_annotated_traces.py`` writes the first two with the real libraries):

- the OpenAI Responses API's ``mcp_list_tools`` output item (openai-python's ``McpListTools``): each listed tool's
  ``name``, ``input_schema`` and the server's ``annotations``; in Responses records, an OpenAI Agents SDK
  ``RunState`` (``mcp_list_tools_item``), a Langfuse GENERATION whose output is the Response, or OpenInference's
  ``output.value`` (the Response as a JSON string);
- pydantic-ai's instrumentation (logfire, OpenTelemetry): the ``model_request_parameters`` attribute of its
  ``chat`` spans, whose ``function_tools[]`` hold an MCP tool's ``parameters_json_schema`` and
  ``metadata.annotations`` (a JSON string on an OTLP span, an object in a Langfuse export);
- an MCP ``tools/list`` result itself (``inputSchema``, ``annotations``), wherever a trace records one.

Not there: OpenTelemetry's ``gen_ai.tool.definitions`` (pydantic-ai writes name, description and parameters only),
the MCP SDK's own ``tools/list`` spans (no result), the OpenAI Agents SDK's tracing (``mcp_tools`` spans name the
tools only; its ``FunctionTool.mcp_annotations`` are not serialised), OpenInference's ``llm.tools`` and inspect_ai's
``ToolInfo``.
"""
from __future__ import annotations

import mmap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import orjson

from ..stats import check_choice
from ._errors import InputError
from ._inputs import log_inputs
from ._records import is_turn, iter_jsonl
from .readers import _tau2_bench
from .readers._registry import FORMATS, READERS, detect
from .readers._source import ArchiveLimits, Document, ReadOptions, head_document, load_document

__all__ = ["ToolUse", "ToolUsage", "McpHints", "tool_usage", "turn_ranges", "mcp_annotations"]


_KINDS = ("read", "write", "think", "generic")
#: The hints of MCP's ``ToolAnnotations`` (its ``title`` says nothing of the tool's effects).
MCP_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
#: The input schema that makes a JSON object a tool definition: MCP's ``Tool``, the Responses API's
#: ``McpListToolsTool``, pydantic-ai's ``ToolDefinition``.
_SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters_json_schema")
_MARKERS = ("readOnlyHint", "destructiveHint")  # a log without them is not walked


def turn_ranges(turns, width: int | None = None) -> str:
    """The turns as ranges, ``0-3,5,7-9``; cut with ``...`` to ``width`` characters; ``-`` if none."""
    values = sorted(set(turns))
    if not values:
        return "-"
    parts, start = [], values[0]
    for previous, value in zip(values, values[1:] + [None]):
        if value is None or value != previous + 1:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = value
    text = ",".join(parts)
    if width is None or len(text) <= width:
        return text
    kept = ""
    for part in parts:
        if len(kept) + len(part) + 1 + 4 > width:
            break
        kept += ("," if kept else "") + part
    return (kept + ",..." if kept else f"{values[0]}-{values[-1]}")


@dataclass(frozen=True)
class McpHints:
    """The MCP annotations a trace gives one tool: hints of its server, which the MCP specification tells clients
    to treat as untrusted unless the server is trusted, not guarantees.

    Attributes
    ----------
    hints : dict
        Hint (of :data:`MCP_HINTS`) to the value the server gives it. A hint left out or null is absent (not read as
        its default: most servers annotate nothing), and so is one that two listings give both values.
    source : str
        The name of the log file that first lists the tool.
    """

    hints: dict
    source: str

    def to_dict(self) -> dict:
        return {**self.hints, "source": self.source}


@dataclass(frozen=True)
class ToolUse:
    """What a log holds of one tool.

    Attributes
    ----------
    name : str
    calls : int
        Calls of the tool (0 for a tool that only the benchmark's gold actions name).
    conversations : int
        Conversations with at least one call.
    turns : dict
        Turn to the number of calls in it (calls with a valid turn only).
    gold : bool
        Whether the benchmark's gold actions name it (tau-bench, tau2-bench).
    annotations : frozenset of str
        tau2-bench's tool types for it (``read``, ``write``, ``think``, ``generic``).
    mcp : McpHints or None
        Its MCP annotations, where a trace lists it with some (:func:`mcp_annotations`).
    """

    name: str
    calls: int
    conversations: int
    turns: dict
    gold: bool = False
    annotations: frozenset = frozenset()
    mcp: McpHints | None = None

    def to_dict(self) -> dict:
        return {"tool": self.name, "calls": self.calls, "conversations": self.conversations,
                "turns": {str(t): n for t, n in sorted(self.turns.items())}, "gold_action": self.gold,
                "annotations": sorted(self.annotations), "mcp_annotations": self.mcp and self.mcp.to_dict()}


@dataclass(frozen=True)
class ToolUsage:
    """Every tool a log calls (and, for a benchmark, names in its gold actions).

    Attributes
    ----------
    source, format : str
        The log and the format read.
    conversations, with_record : int
        Conversations read, and those with a tool record.
    calls : int
        Calls with a name.
    unnamed_calls : int
        Calls without a (string) name; ``score`` counts each as a call of ``<unnamed>``, an
        unmarked action (SPEC section 1).
    tools : tuple of ToolUse
        Most called first (ties by name); tools only the gold actions or MCP annotations name come last.
    annotated : bool
        Whether the log carries tau2-bench tool types.
    """

    source: str
    format: str
    conversations: int
    with_record: int
    calls: int
    unnamed_calls: int
    tools: tuple
    annotated: bool = False

    def tool(self, name: str) -> ToolUse | None:
        return next((t for t in self.tools if t.name == name), None)

    def called(self) -> tuple:
        """The tools with at least one call."""
        return tuple(t for t in self.tools if t.calls)

    @property
    def mcp_annotated(self) -> bool:
        """Whether the log gives some tool MCP annotations."""
        return any(t.mcp for t in self.tools)

    def to_dict(self) -> dict:
        return {"log": self.source, "format": self.format, "conversations": self.conversations,
                "with_record": self.with_record, "calls": self.calls, "unnamed_calls": self.unnamed_calls,
                "annotated": self.annotated, "mcp_annotated": self.mcp_annotated,
                "tools": [t.to_dict() for t in self.tools]}


class _Tally:
    def __init__(self) -> None:
        self.conversations = self.with_record = self.unnamed = 0
        self.calls: Counter = Counter()
        self.convs: Counter = Counter()
        self.turns: dict[str, Counter] = {}
        self.gold: set = set()
        self.hints: dict[str, dict[str, set]] = {}  # tool to MCP hint to the values the listings give it
        self.hint_sources: dict[str, str] = {}

    def add_hints(self, found: dict, source: str) -> None:
        """Add one log's MCP annotations (:func:`mcp_annotations`)."""
        for name, hints in found.items():
            self.hint_sources.setdefault(name, source)
            for key, values in hints.items():
                self.hints.setdefault(name, {}).setdefault(key, set()).update(values)

    def add(self, conv: dict, gold_in_metadata: bool) -> None:
        self.conversations += 1
        if gold_in_metadata:
            names = conv["metadata"].get("gold_actions")
            self.gold.update(n for n in names or () if isinstance(n, str) and n)
        calls = conv["tool_calls"]
        if calls is None:
            return
        self.with_record += 1
        seen = set()
        for call in calls:
            name = call.get("name")
            if not isinstance(name, str) or not name:
                self.unnamed += 1
                continue
            self.calls[name] += 1
            turn = call.get("turn")
            if is_turn(turn) and turn >= 0:
                self.turns.setdefault(name, Counter())[turn] += 1
            seen.add(name)
        self.convs.update(seen)

    def usage(self, source: str, fmt: str, annotations: dict | None) -> ToolUsage:
        annotations = annotations or {}
        agreed = {name: {key: next(iter(values)) for key, values in hints.items() if len(values) == 1}
                  for name, hints in self.hints.items()}
        mcp = {name: McpHints(dict(sorted(hints.items())), self.hint_sources[name])
               for name, hints in agreed.items() if hints}
        named = sorted(self.calls, key=lambda n: (-self.calls[n], n))
        named += sorted((self.gold | set(annotations) | set(mcp)) - set(self.calls))
        tools = tuple(ToolUse(n, self.calls[n], self.convs[n], dict(sorted(self.turns.get(n, {}).items())),
                              gold=n in self.gold or n in annotations,
                              annotations=frozenset(k for k in annotations.get(n, ()) if k in _KINDS),
                              mcp=mcp.get(n))
                      for n in named)
        return ToolUsage(source, fmt, self.conversations, self.with_record, sum(self.calls.values()), self.unnamed,
                         tools, annotated=any(t.annotations for t in tools))


def tool_usage(path, *, format: str = "auto", limits: ArchiveLimits | None = None) -> ToolUsage:
    """Count the tools a log calls: calls, conversations and turns of each.

    The log is read as ``escalation score`` reads it, but without labelling its runs, so a
    tau-bench or tau2-bench log needs no policy. A tau-bench log adds the tools its gold
    actions name; a tau2-bench log adds those and their tool types (``read``, ``write``...);
    a trace that lists MCP tools with annotations adds those tools and their hints
    (:func:`mcp_annotations`), called or not.

    Parameters
    ----------
    path : path-like
        The log, or a folder of logs of one format (every log file in it, as ``escalation score`` reads a
        folder: a folder of trace exports, say); a tau2-bench results folder is one log.
    format : str
        ``"auto"`` (detected from the content) or one of :data:`~estimators.records.readers.FORMATS`.
    limits : ArchiveLimits, optional
        The size limits of an inspect ``.eval`` archive (default: :class:`ArchiveLimits`'s).

    Raises
    ------
    ValueError
        For an unknown format (naming the parameter).
    InputError
        For a log that cannot be read (naming the file, and the line).
    """
    check_choice("format", format, ("auto", *FORMATS))
    tally = _Tally()
    annotations = None
    if Path(path).is_dir() and not _tau2_bench.is_results_folder(path):  # a folder of logs: each in turn
        with log_inputs(path) as inputs:
            formats = [_count(log.path, format, tally, limits)[0] for log in inputs.logs]
        if len(set(formats)) > 1:
            other = next(i for i, f in enumerate(formats) if f != formats[0])
            first, second = (Path(inputs.logs[i].name).name for i in (0, other))
            raise InputError(f"the logs are of different formats: {first} is {formats[0]}, {second} is "
                             f"{formats[other]}; read each format apart, or name the format with --format",
                             source=str(path))
        return tally.usage(str(path), formats[0], None)
    used, annotations = _count(path, format, tally, limits)
    return tally.usage(str(path), used, annotations)


def _count(path, format: str, tally: _Tally, limits: ArchiveLimits | None):
    """Add one log's calls and MCP annotations to ``tally``; ``(format read, tau2-bench tool annotations or
    None)``."""
    head = head_document(path) if format == "auto" else None
    used = detect(cast(Document, head)) if format == "auto" else format  # head is read when auto
    annotations = None
    if used == "jsonl":
        for chunk in iter_jsonl(path):
            for _, conv in chunk:
                tally.add(conv, False)
    else:
        doc = head if head is not None and head.kind != "jsonl" else load_document(path)
        for _, conv in READERS[used].read(doc, ReadOptions(limits=limits or ArchiveLimits())):
            tally.add(conv, used == "tau-bench")
        if used == "tau2-bench":
            annotations = _tau2_bench.tool_annotations(doc)
        tally.add_hints(mcp_annotations(doc), Path(path).name)
    return used, annotations


def mcp_annotations(doc: Document) -> dict[str, dict[str, set]]:
    """The MCP annotations of every tool definition in a log (the shapes of this module's docstring).

    A tool definition is a JSON object with a string ``name`` and an input schema (``inputSchema``,
    ``input_schema`` or ``parameters_json_schema``) whose ``annotations`` (or ``metadata.annotations``, pydantic-ai's)
    give a hint of :data:`MCP_HINTS` a boolean; it is found at any depth, and inside a string that holds JSON (a
    span attribute). A log that never spells ``readOnlyHint`` or ``destructiveHint`` is not walked; an inspect_ai
    archive, a folder and canonical JSONL hold no definitions.

    Returns
    -------
    dict
        Tool name to hint to the set of values the definitions give it (two where listings disagree).
    """
    found: dict[str, dict[str, set]] = {}
    if doc.kind not in ("json", "jsonl") or not _mentions_hints(doc.path):
        return found
    for root in [doc.data] if doc.kind == "json" else (value for _, value in doc.data):  # a line at a time
        stack = [root]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                _add_definition(value, found)
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
            elif isinstance(value, str) and any(marker in value for marker in _MARKERS):
                try:
                    stack.append(orjson.loads(value))
                except orjson.JSONDecodeError:  # text that names a hint: no definition
                    pass
    return found


def _add_definition(value: dict, found: dict) -> None:
    """Add the hints of ``value`` to ``found`` when it is an annotated tool definition."""
    name = value.get("name")
    if not isinstance(name, str) or not name or not any(isinstance(value.get(k), dict) for k in _SCHEMA_KEYS):
        return
    annotations = value.get("annotations")
    if not isinstance(annotations, dict):
        metadata = value.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    hints = {key: annotations[key] for key in MCP_HINTS
             if isinstance(annotations, dict) and isinstance(annotations.get(key), bool)}
    for key, hint in hints.items():
        found.setdefault(name, {}).setdefault(key, set()).add(hint)


def _mentions_hints(path: Path) -> bool:
    """Whether the file's bytes hold ``readOnlyHint`` or ``destructiveHint``: searched in place, never parsed."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return any(data.find(marker.encode()) >= 0 for marker in _MARKERS)
    except (OSError, ValueError):  # ValueError: an empty file, which cannot be mapped
        return False
