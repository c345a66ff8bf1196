"""The tools a log calls (``escalation policy``): calls, conversations and turns of each (:func:`tool_usage`).

A policy draft (:mod:`estimators.records._policy_draft`) places each tool counted here in a list of SPEC section 2.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..stats import check_choice
from ._errors import InputError
from ._inputs import log_inputs
from ._records import is_turn, iter_jsonl
from .readers import _tau2_bench
from .readers._registry import FORMATS, READERS, detect
from .readers._source import ArchiveLimits, Document, ReadOptions, head_document, load_document

__all__ = ["ToolUse", "ToolUsage", "tool_usage", "turn_ranges"]


_KINDS = ("read", "write", "think", "generic")


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
    """

    name: str
    calls: int
    conversations: int
    turns: dict
    gold: bool = False
    annotations: frozenset = frozenset()

    def to_dict(self) -> dict:
        return {"tool": self.name, "calls": self.calls, "conversations": self.conversations,
                "turns": {str(t): n for t, n in sorted(self.turns.items())}, "gold_action": self.gold,
                "annotations": sorted(self.annotations)}


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
        Most called first (ties by name); tools only the gold actions name come last.
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

    def to_dict(self) -> dict:
        return {"log": self.source, "format": self.format, "conversations": self.conversations,
                "with_record": self.with_record, "calls": self.calls, "unnamed_calls": self.unnamed_calls,
                "annotated": self.annotated, "tools": [t.to_dict() for t in self.tools]}


class _Tally:
    def __init__(self) -> None:
        self.conversations = self.with_record = self.unnamed = 0
        self.calls: Counter = Counter()
        self.convs: Counter = Counter()
        self.turns: dict[str, Counter] = {}
        self.gold: set = set()

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
        named = sorted(self.calls, key=lambda n: (-self.calls[n], n))
        named += sorted((self.gold | set(annotations)) - set(self.calls))
        tools = tuple(ToolUse(n, self.calls[n], self.convs[n], dict(sorted(self.turns.get(n, {}).items())),
                              gold=n in self.gold or n in annotations,
                              annotations=frozenset(k for k in annotations.get(n, ()) if k in _KINDS))
                      for n in named)
        return ToolUsage(source, fmt, self.conversations, self.with_record, sum(self.calls.values()), self.unnamed,
                         tools, annotated=any(t.annotations for t in tools))


def tool_usage(path, *, format: str = "auto", limits: ArchiveLimits | None = None) -> ToolUsage:
    """Count the tools a log calls: calls, conversations and turns of each.

    The log is read as ``escalation score`` reads it, but without labelling its runs, so a
    tau-bench or tau2-bench log needs no policy. A tau-bench log adds the tools its gold
    actions name; a tau2-bench log adds those and their tool types (``read``, ``write``...).

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
    """Add one log's calls to ``tally``; ``(format read, tau2-bench tool annotations or None)``."""
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
    return used, annotations
