"""Canonical records, SPEC section 6 (``--format jsonl``), read by :func:`estimators._records.iter_jsonl`."""
from __future__ import annotations

from .._records import iter_jsonl
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read"]

NAME = "jsonl"
EXPECTS = "canonical JSONL records (SPEC section 6), one conversation a line"


def sniff(doc: Document) -> bool:
    markers = record_markers(doc)
    one_line = doc.kind == "json" and doc.single_line
    return (doc.kind == "jsonl" or one_line) and markers is not None and markers <= {"canonical"}


def read(doc: Document, options: ReadOptions) -> list[tuple[int, dict]]:
    return [item for chunk in iter_jsonl(doc.path) for item in chunk]
