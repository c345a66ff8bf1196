"""The format registry: one reader per ``--format`` name of SPEC section 7, and auto-detection."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .._errors import InputError
from .._formats import FORMATS
from . import (
    _anthropic,
    _bedrock_converse,
    _gemini,
    _inspect,
    _jsonl,
    _langfuse,
    _openai,
    _openai_agents,
    _openai_responses,
    _openinference,
    _otel,
    _sharegpt,
    _tau2_bench,
    _tau_bench,
)
from ._markers import record_markers
from ._source import Document, ReadOptions

__all__ = ["Reader", "READERS", "FORMATS", "detect"]


@dataclass(frozen=True)
class Reader:
    """A transcript format: its name, what it expects, how to recognise and read it."""

    name: str
    expects: str
    sniff: Callable[[Document], bool]
    records: Callable[[Document, ReadOptions], Iterable[tuple[int | str, dict]]]

    def read(self, doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
        """``(place, conversation)`` of each record of ``doc``, in order; the place is the
        record's line, or its JSON path (``[2]``), for messages.

        A JSONL document whose line is not JSON (:attr:`Document.error`) gives the records of
        the lines before it, then raises that line's error: a bad record before it, or (for
        :func:`~estimators.records.readers.read_conversations`) a key repeated before it, is named first.
        """
        yield from self.records(doc, options)
        if doc.error is not None:
            raise doc.error


# Detection tries the readers in this order: whole-file formats first; then the traces and the shapes that
# canonical JSONL would take for records without a tool record (OTLP spans, Langfuse exports, Phoenix span exports, an
# Agents SDK RunState, ShareGPT, Gemini, Bedrock Converse); then record formats, the provider-specific chat shapes
# before plain OpenAI chat (which every plain chat fits).
READERS: dict[str, Reader] = {
    module.NAME: Reader(module.NAME, module.EXPECTS, module.sniff, module.read)
    for module in (_inspect, _tau2_bench, _tau_bench, _otel, _langfuse, _openinference, _openai_agents, _sharegpt,
                   _gemini, _bedrock_converse, _jsonl, _openai_responses, _anthropic, _openai)
}
if set(FORMATS) != set(READERS):  # the formats named for --help are the readers there are
    raise ImportError(f"FORMATS {FORMATS} and the readers {tuple(READERS)} differ")


def _why(doc: Document) -> str:
    markers = record_markers(doc)
    if doc.kind == "json" and isinstance(doc.data, dict) and not markers:
        return f"a JSON object with keys {', '.join(sorted(map(str, doc.data))[:8])}"
    if not markers:
        return "no conversation records"
    shapes = sorted(markers - {"chat"}) or ["chat"]
    if len(shapes) > 1:
        return f"records of several shapes ({', '.join(shapes)})"
    return f"records of shape {shapes[0]}"


def detect(doc: Document) -> str:
    """The name of the first reader that recognises ``doc``.

    Raises :class:`InputError` naming every format tried when none does.
    """
    for reader in READERS.values():
        if reader.sniff(doc):
            return reader.name
    raise InputError(f"cannot tell the format (found {_why(doc)}); tried {', '.join(READERS)}. "
                     "Name it with --format", source=doc.source)
