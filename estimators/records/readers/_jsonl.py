"""Canonical records, SPEC section 6 (``--format jsonl``).

The lines of a JSONL document are those it already parsed, normalised as the reference
reader (:func:`estimators.records._records.iter_jsonl`) normalises them, so no line is parsed twice;
:func:`estimators.records.readers.read_conversations` checks the keys. A file of one line is read by
the reference reader itself.
"""
from __future__ import annotations

from collections.abc import Iterator

from .._records import iter_jsonl, normalise_conversation
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "jsonl"
EXPECTS = "canonical JSONL records (SPEC section 6), one conversation a line"


def sniff(doc: Document) -> bool:
    markers = record_markers(doc)
    one_line = doc.kind == "json" and doc.single_line
    return (doc.kind == "jsonl" or one_line) and markers is not None and markers <= {"canonical"}


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int, dict]]:
    if doc.kind != "jsonl":  # one object on one line (which line: the reader counts), or not JSON Lines
        return (item for chunk in iter_jsonl(doc.path) for item in chunk)
    return ((number, normalise_conversation(value, source=doc.source, line=number)) for number, value in doc.data)
