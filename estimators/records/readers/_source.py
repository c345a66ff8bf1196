"""Read a log file once into a :class:`Document` that every format reader works on."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from ...stats import check_count
from .._errors import InputError
from .._records import BOM, refuse_compressed

if TYPE_CHECKING:
    from .._policy import Policy

__all__ = ["ReadOptions", "ArchiveLimits", "show_size", "Document", "load_document", "head_document", "JsonLines",
           "ZIP_MAGIC"]

ZIP_MAGIC = b"PK\x03\x04"
#: What a conversation of a trace format is (``--group-by``): a trace, or a session's traces.
GROUPINGS = ("trace", "session")
#: The formats whose traces carry a session id that ``group_by="session"`` groups by.
SESSION_FORMATS = ("otel", "langfuse", "openinference")
_HEAD_BYTES = 4 << 20  # auto-detection of a large JSONL file reads only this much


@dataclass(frozen=True)
class ArchiveLimits:
    """The most an inspect_ai ``.eval`` archive may decompress to, in bytes.

    ``member`` bounds one member (a sample, or the header), ``archive`` the samples of one
    archive together. The reader counts the bytes as it decompresses them, never trusting the
    sizes the archive declares, and stops as soon as one limit is passed; ``escalation score
    --max-member-bytes`` and ``--max-archive-bytes`` raise them.

    A member is parsed whole, and parsed JSON can take some 30 times its size (``[{}, {}, ...]``:
    a 256 MiB member took 8.2 GB, ``benchmarks/hostile.py``), so ``member`` is 64 MiB: about
    2 GB at worst, and a sample of inspect_ai (a conversation and its events, mostly text) is
    rarely more than a few MB. The members are read one at a time; ``archive`` (2 GiB, some 30 s)
    stops a zip bomb of many members.
    """

    member: int = 64 << 20
    archive: int = 2 << 30
    #: The largest JSON document (an inspect_ai ``.json`` log, a tau-bench list) parsed whole: parsed JSON
    #: takes 5 to 7 times the file for logs of text and up to 24 times for dense ones (2026-12-04), so 512 MiB
    #: needs at most some 12 GB. JSON Lines files and ``.eval`` archives are read a piece at a time instead.
    document: int = 512 << 20

    def __post_init__(self):
        for name in ("member", "archive", "document"):
            value = getattr(self, name)
            check_count(name, value, note=" (bytes)")


def show_size(size: int) -> str:
    """``size`` bytes as a person reads them: ``256M``, ``1.5G``, ``900 bytes`` (K, M, G, T: powers of 1024)."""
    for suffix, power in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << power:
            return f"{size / (1 << power):.4g}{suffix}"
    return f"{size} bytes"


@dataclass(frozen=True)
class ReadOptions:
    """What a reader may need besides the file.

    ``policy`` labels tau-bench and tau2-bench runs from their gold actions and names the
    call that an inspect_ai approval escalation becomes; ``approval_escalation`` turns on
    that reading of inspect_ai ``ApprovalEvent`` decisions; ``qualify_ids`` puts an inspect_ai
    log's task name before the ids it makes from sample ids (``task/1:1``), so that logs of
    several tasks, whose sample ids repeat, can be scored together; ``limits`` bounds what an
    inspect_ai ``.eval`` archive may decompress to.
    """

    policy: Policy | None = None
    approval_escalation: bool | str = False
    qualify_ids: bool = False
    limits: ArchiveLimits = ArchiveLimits()
    group_by: str = "trace"


@dataclass
class Document:
    """A parsed input.

    ``kind`` is ``"json"`` (``data`` is the parsed value), ``"jsonl"`` (``data`` is a list of
    ``(line, value)``, or for a file larger than a head a :class:`JsonLines`, which parses the
    lines as they are read), ``"zip"`` or ``"dir"`` (``data`` is None; the reader opens ``path``).
    ``single_line`` tells a JSON object written on one line (it may be a one-line JSONL file).
    ``error`` is the error of the first line of a JSONL document that is not JSON (``data``
    then holds the lines before it); the registry's readers raise it after those lines'
    records, so that an earlier bad record (or a repeated key) is named first. ``partial``
    tells the lines of a head (:func:`head_document`), for detection only.
    """

    path: Path
    kind: str
    data: Any = None  # parsed JSON, lines, a JsonLines or None (by kind)
    single_line: bool = False
    error: InputError | None = None
    partial: bool = False  # the lines of a head only (head_document)
    cache: dict = field(default_factory=dict)  # what the sniffers computed, computed once

    @property
    def source(self) -> str:
        return str(self.path)


def _parse_lines(raw: bytes, source: str, *, whole_error=None, complete: bool = True):
    """``(line, value)`` of each non-blank line before the first that is not JSON, and the
    :class:`InputError` of that line (None when every line is JSON).

    When the first non-blank line is not JSON, its error is raised at once: the text is JSON
    Lines when a second line parses alone, and the reference reader names that line alike.
    Otherwise the text is a JSON document (on that one line or over several), and its own error
    (``whole_error``, when given) names the place.
    """
    lines = raw.split(b"\n")
    if not complete:
        lines = lines[:-1]  # the last line of a head may be cut
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((number, orjson.loads(line)))
        except orjson.JSONDecodeError as err:
            error = InputError(f"not valid JSON ({err.msg})", source=source, line=number)
            if out:
                return out, error
            if whole_error is not None and not any(rest.strip() for rest in lines[number:]):
                error = InputError(f"not valid JSON ({whole_error.msg})", source=source, line=number)  # the whole text
            elif whole_error is not None and not _json_lines(lines[number:]):
                error = InputError(f"not valid JSON ({whole_error.msg})", source=source, line=whole_error.lineno)
            raise error from None
    return out, None


def _json_lines(lines) -> bool:
    """Whether the next non-blank of ``lines`` parses alone (or there is none): the text is JSON Lines."""
    line = next((line for line in lines if line.strip()), None)
    if line is None:
        return True
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def _open(path) -> tuple[Path, bytes | None]:
    path = Path(path)
    if path.is_dir():
        return path, None
    try:
        return path, path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", source=str(path)) from None


def loads(raw: bytes | bytearray):
    """Parse JSON with orjson; where that fails on the bare ``NaN`` or ``Infinity`` that Python's
    ``json`` writes (inspect_ai logs do, for a scorer's NaN), parse with the standard library,
    which reads them as floats."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if b"NaN" not in raw and b"Infinity" not in raw:
            raise
        try:
            text = bytes(raw).decode("utf-8")  # strict: json.loads(bytes) lets a UTF-8-encoded surrogate through
        except UnicodeDecodeError as err:
            raise orjson.JSONDecodeError(f"bytes that are not UTF-8 text at byte {err.start}",
                                         bytes(raw[:err.start]).decode("utf-8", "replace"), err.start) from None
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack allows
            pass
        else:
            _refuse_lone_surrogates(raw, value)
            return value
        raise


_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                        rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(raw: bytes | bytearray, value) -> None:
    """Refuse what orjson refuses and ``json`` reads: an escaped lone surrogate (``"\\ud800"``),
    which is no text and cannot be written out again."""
    if not re.search(rb"\\u[dD][89a-fA-F]", raw):
        return
    try:
        orjson.dumps(value)
    except TypeError:
        found = _SURROGATE.search(raw)
        raise orjson.JSONDecodeError("a lone surrogate escape (\\ud800 to \\udfff) is not text",
                                     raw.decode("utf-8", "replace"), found.start() if found else 0) from None


def _document(path: Path, raw: bytes) -> Document:
    source = str(path)
    if raw.startswith(ZIP_MAGIC):
        return Document(path, "zip")
    refuse_compressed(raw, source)
    raw = raw.removeprefix(BOM)
    if not raw.strip():
        return Document(path, "jsonl", [])
    try:
        value = loads(raw)
    except orjson.JSONDecodeError as err:
        lines, error = _parse_lines(raw, source, whole_error=err)
        return Document(path, "jsonl", lines, error=error)
    if not isinstance(value, dict | list) and b"\n" not in raw.strip():  # one line, not an object: JSON Lines'
        return Document(path, "jsonl", _parse_lines(raw, source)[0])      # a line that is not a record
    return Document(path, "json", value, single_line=isinstance(value, dict) and b"\n" not in raw.strip())


class JsonLines:
    """The ``(line, value)`` of each non-blank line of a JSON Lines file, parsed as it is read.

    Iterating reads the file again from its start, one line at a time, so memory holds one line
    (and what the caller keeps). The first line that is not JSON raises its :class:`InputError`
    where it is met, after the lines before it, as :attr:`Document.error` does for a file held
    whole. Made by :func:`load_document` for a file whose head shows JSON Lines.
    """

    def __init__(self, path: Path):
        self.path = path

    def __iter__(self):
        source = str(self.path)
        try:
            with self.path.open("rb") as handle:
                for number, line in enumerate(handle, start=1):
                    if number == 1:
                        line = line.removeprefix(BOM)
                    if not line.strip():
                        continue
                    try:
                        value = orjson.loads(line)
                    except orjson.JSONDecodeError as err:
                        raise InputError(f"not valid JSON ({err.msg})", source=source, line=number) from None
                    yield number, value
        except OSError as err:
            raise InputError(f"cannot read the file: {err.strerror or err}", source=source) from None


def load_document(path, limit: int | None = None) -> Document:
    """Read an input file (or note a directory or a zip archive).

    A JSON document is parsed whole, up to ``limit`` bytes (default :attr:`ArchiveLimits.document`;
    larger, an :class:`InputError` says so before anything is read). A JSON Lines file larger
    than the head that detection reads (4 MiB) is parsed a line at a time as a reader asks for
    its lines (:class:`JsonLines`), so its memory stays that of one line; a smaller one is
    parsed whole.
    """
    head = head_document(path, limit)
    if head.kind == "jsonl" and head.partial:
        return Document(head.path, "jsonl", JsonLines(head.path))
    return head


def _refuse_large_document(path: Path, limit: int | None) -> None:
    """Refuse a JSON document larger than ``limit`` (default :attr:`ArchiveLimits.document`) before it is read."""
    limit = ArchiveLimits().document if limit is None else limit
    size = path.stat().st_size
    if size > limit:
        raise InputError(f"is a JSON document of {show_size(size)}, which is parsed whole and may take up to 24 times "
                         f"its size in memory; the limit is {show_size(limit)}: raise it with --max-document-bytes, "
                         "or write the log as JSON Lines (one conversation a line, read a line at a time) or as an "
                         "inspect_ai .eval archive", source=str(path))


def head_document(path, limit: int | None = None) -> Document:
    """Like :func:`load_document`, but a large JSONL file is parsed only from its head
    (:attr:`Document.partial`).

    Used to detect a format without reading a file of several GB; a JSON document (not JSON Lines)
    larger than ``limit`` is refused (:func:`load_document`).
    """
    path = Path(path)
    if path.is_dir():
        return Document(path, "dir")
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES + 1)
            if len(head) <= _HEAD_BYTES or head.startswith(ZIP_MAGIC):
                doc = _document(path, head)  # the whole file, or the magic number of an archive
                if doc.kind == "json":  # the same limit, however small (a test may set it below the head)
                    _refuse_large_document(path, limit)
                return doc
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", source=str(path)) from None
    refuse_compressed(head, str(path))
    head = head.removeprefix(BOM)
    first = head.split(b"\n", 1)[0]
    try:
        value = orjson.loads(first) if b"\n" in head else None
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):  # a multi-line JSON document: read it whole, within its limit
        _refuse_large_document(path, limit)
        _, raw = _open(path)
        return _document(path, cast(bytes, raw))  # a file (read above), not a directory
    lines, error = _parse_lines(head, str(path), complete=False)
    return Document(path, "jsonl", lines, error=error, partial=True)
