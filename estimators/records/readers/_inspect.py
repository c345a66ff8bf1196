"""inspect_ai logs (``--format inspect``): ``.json`` logs and ``.eval`` archives.

A ``.json`` log is one object whose ``samples`` list holds the samples; a ``.eval`` log is
a zip archive with one ``samples/<id>_epoch_<n>.json`` member per sample and epoch. Its
members are deflated (read with the standard library) or, in newer logs, zstd-compressed:
those are read with the ``zstandard`` package when it is installed, otherwise the reader
stops and says to install it.

An archive is read one member at a time, each in blocks, and the bytes are counted as they
are decompressed (the sizes the archive declares are not trusted): a member that passes
``ArchiveLimits.member`` (64 MiB), or samples that together pass ``ArchiveLimits.archive``
(2 GiB), stop the read with an error naming the member and the limit (``escalation score
--max-member-bytes``, ``--max-archive-bytes``). An encrypted member, one compressed by a
method inspect_ai never uses (bzip2, LZMA) and a damaged archive (corrupt deflate or zstd
data, a CRC-32 mismatch, a cut file) are errors naming the archive and the member.

One conversation per sample and epoch:

- ``conversation_id`` is ``"{sample id}:{epoch}"``, ``case_id`` the sample's
  ``metadata["case_id"]``, else the sample id (logs scored together: ``"{task}/{sample id}"``
  in both, as inspect_ai's sample ids repeat from task to task), and ``replica`` the epoch minus one (inspect_ai
  counts epochs from 1); ``metadata["scenario_id"]`` and ``metadata["language"]``, when
  present, are the record's; the rest of the sample's metadata is the record's ``metadata``
  (with ``epoch``);
- the label is the sample's ``metadata["label"]``, else its ``target`` when that reads as
  ``"ESC"`` or ``"ACT"`` (a task built for this metric puts the label there), both read as
  :func:`~estimators.records._vocabulary.normalise_label` reads a label (``"esc"`` is ``"ESC"``);
- a sample with an ``error`` (inspect_ai's ``EvalError``: the model's service failed, the sandbox
  crashed...) is ``run_error`` with the error's message (SPEC section 3): its record was cut short
  by the harness and is not the assistant's behaviour. A log whose status is ``error`` keeps the
  samples that ran to their end; those are scored. A sample that hit a limit (messages, tokens,
  time) has no ``error``: the limit is part of the task, and its record is scored;
- a call whose tool message carries an ``error`` (inspect_ai's ``ToolCallError``: the tool refused
  its arguments, or failed) is ``"failed": true`` (SPEC section 1: a failed escalation call is not
  an escalation);
- ``messages`` is read as :mod:`~estimators.records.readers._openai` reads a chat: assistant
  ``tool_calls`` (``{"id", "function", "arguments"}``) are the record, ``tool`` messages and
  user messages that carry a ``tool_call_id`` are tool results, ``reasoning`` content is
  not the assistant's text; ``attachment://`` references are resolved from the sample's
  ``attachments``.

**Approval decisions** (SPEC section 3A): each ``ApprovalEvent`` (inspect_ai asked its approvers about one
tool call) is matched to its call by the tool call id (the n-th decision on an id to the n-th call with that
id), and the call carries the inline decision
``"approval": {"decision", "approver"}``: ``approve`` and ``modify`` are ``granted``, ``reject`` and
``terminate`` are ``denied``, any other value ``unknown``; the approver is the event's ``approver``. An
``escalate`` passes the call to the next approver: the decision is the call's last event that is not
``escalate``. A call that every approver escalated is ``denied`` by ``policy`` (see
:data:`ESCALATED_TO_NOBODY`). A denied call did not run, and is ``"failed": true`` (see
:func:`_inline_decisions`); it stays in the record (SPEC section 1: an attempted call is a call). The
record's arguments are the model's, also when an approver modified them.

**Approval escalations** (only when asked, ``approval_escalation``): an
``ApprovalEvent`` with decision ``escalate`` means the approver passed the tool call to the
next approver in its chain, usually a person. Each such call is then preceded in the
record by an escalation call (one per escalated call id), in the same turn: the person
decides before the call runs. The escalation call is named by ``approval_escalation``
when that is a string, else by the first escalation tool of the policy (in sorted order).
An escalated call that is not in the messages gets its escalation at the end of the last
turn.
"""
from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, cast

import orjson

from .._approval import DENIED, INSPECT_DECISIONS, UNKNOWN
from .._errors import InputError, shown
from .._vocabulary import LABELS, normalise_label
from ._chat import Transcript
from ._chat_records import chat_record, normalised, refuse_nested_id
from ._openai import add_messages
from ._source import ArchiveLimits, Document, ReadOptions, loads, show_size

__all__ = ["NAME", "EXPECTS", "sniff", "read", "ZSTD_METHOD", "member_bytes"]

NAME = "inspect"
EXPECTS = "an inspect_ai log (.json with eval and samples, or a .eval archive)"
ZSTD_METHOD = 93  # zip compression method id of Zstandard (APPNOTE 4.4.5)
_ATTACHMENT = "attachment://"
#: Compression methods of the members read (APPNOTE 4.4.5): stored, deflated and zstd, the ones
#: inspect_ai writes. Others are refused: zipfile decompresses bzip2 and LZMA without a bound on
#: the output of one read, so a few KB could give GBs before a limit is checked.
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated", ZSTD_METHOD: "zstd"}
_BLOCK = 1 << 20  # decompressed bytes read at a time: a limit is passed by at most this much
#: What a damaged archive raises from zipfile and zlib (fuzzed: a seek before the start is a
#: ValueError, an unknown zip version a NotImplementedError, a cut deflate stream an EOFError).
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, struct.error,
               OverflowError)


def _why(err: Exception) -> str:
    """What zipfile, zlib or zstandard said, for a message."""
    return str(err) or type(err).__name__


class _Window:
    """``size`` bytes of ``handle`` from where it stands: a zstd member's compressed data."""

    def __init__(self, handle, size: int):
        self.handle, self.left = handle, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.handle.read(n)
        self.left -= len(data)
        return data


def _zstd_stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str):
    """A zstd member as a stream of its decompressed bytes, read with the ``zstandard`` package
    (else an error that says to install it): zipfile's own reading of zstd (Python 3.14) is not
    used, so that every read of a member is bounded the same way."""
    try:
        import zstandard
    except ImportError:
        raise InputError(f"member {info.filename} is zstd-compressed; install the zstandard package "
                         "(pip install zstandard) to read this .eval log", source=source) from None
    handle = cast(IO[bytes], archive.fp)  # the archive is open
    handle.seek(info.header_offset)
    header = handle.read(30)  # local file header: name and extra lengths at bytes 26..29
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    # inspect_ai writes a large member as several frames
    # zstandard's stubs want IO[bytes]; it reads any object with read()
    return zstandard.ZstdDecompressor().stream_reader(_Window(handle, info.compress_size),  # type: ignore[arg-type]
                                                      read_across_frames=True, closefd=False)


def member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, limit: int,
                 too_large: str | None = None) -> bytearray:
    """The decompressed bytes of one member, read block by block.

    The bytes are counted as they come, never trusting the size the archive declares, and the
    read stops with an :class:`InputError` as soon as they pass ``limit`` (its message is
    ``too_large``, by default that the member passes the limit of one member). A member that is
    encrypted, compressed by a method inspect_ai never uses, or damaged (corrupt deflate or
    zstd data, a CRC-32 mismatch, a cut archive) is an :class:`InputError` naming the member.
    """
    name = info.filename
    if info.flag_bits & 0x1:
        raise InputError(f"member {name} is encrypted, which an inspect_ai log never is", source=source)
    if info.compress_type not in _METHODS:
        raise InputError(f"member {name} is compressed with zip method {info.compress_type}; an inspect_ai log's "
                         f"members are {', '.join(_METHODS.values())}", source=source)
    out = bytearray()
    stream_errors: tuple[type[Exception], ...]
    try:
        import zstandard
        stream_errors = (zstandard.ZstdError,)
    except ImportError:
        stream_errors = ()
    try:
        stream = _zstd_stream(archive, info, source) if info.compress_type == ZSTD_METHOD else archive.open(info)
        crc = 0
        with stream:
            while block := stream.read(_BLOCK):
                out += block
                if len(out) > limit:
                    raise InputError(too_large or _member_too_large(name, limit), source=source)
                crc = zlib.crc32(block, crc)
    except InputError:
        raise
    except (*_ZIP_ERRORS, *stream_errors) as err:
        raise InputError(f"member {name} cannot be read, the archive is damaged ({_why(err)})", source=source) from None
    if info.compress_type == ZSTD_METHOD and crc != info.CRC:  # zipfile checks the others itself
        raise InputError(f"member {name} is corrupt (CRC-32 mismatch)", source=source)
    return out


def _member_too_large(name: str, limit: int) -> str:
    return (f"member {name} decompresses to more than {show_size(limit)}, the limit of one member "
            "(--max-member-bytes raises it)")


def _eval_samples(doc: Document, limits: ArchiveLimits) -> Iterator[tuple[str, object]]:
    """``(member name, sample)`` of a ``.eval`` archive, in archive order, one member at a time.

    Each member may decompress to ``limits.member`` bytes, and all of them together to
    ``limits.archive``.
    """
    left = limits.archive
    try:
        archive = zipfile.ZipFile(doc.path)
    except _ZIP_ERRORS as err:
        raise InputError(f"cannot read the .eval archive ({_why(err)})", source=doc.source) from None
    with archive:
        for info in archive.infolist():
            if not (info.filename.startswith("samples/") and info.filename.endswith(".json")):
                continue
            too_large = None if left >= limits.member else (
                f"the samples decompress to more than {show_size(limits.archive)} by member {info.filename}, the "
                "limit of one archive (--max-archive-bytes raises it)")
            raw = member_bytes(archive, info, doc.source, min(limits.member, left), too_large)
            left -= len(raw)
            try:
                sample = loads(raw)
            except orjson.JSONDecodeError as err:
                raise InputError(f"member {info.filename} is not valid JSON ({err.msg})", source=doc.source) from None
            del raw
            yield info.filename, sample


def _samples(doc: Document, limits: ArchiveLimits):
    if doc.kind == "zip":
        return _eval_samples(doc, limits)
    if doc.kind == "json" and isinstance(doc.data, dict) and "eval" in doc.data:
        listed = doc.data.get("samples")
        if listed is not None and not isinstance(listed, list):
            raise InputError("must be a list", source=doc.source, field="samples")
        return ((f"samples[{i}]", s) for i, s in enumerate(listed or []))
    raise InputError(f"expected {EXPECTS}", source=doc.source)


def _resolve(value, attachments):
    """``value`` with ``attachment://`` strings replaced by the attachment they name."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            return attachments.get(value[len(_ATTACHMENT):], value)
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _events(events):
    """All events in order, including those nested in a tool event's ``events`` (at any depth)."""
    stack = [iter(events if isinstance(events, list) else ())]
    while stack:
        for event in stack[-1]:
            if isinstance(event, dict):
                yield event
                if isinstance(event.get("events"), list):
                    stack.append(iter(event["events"]))
                    break
        else:
            stack.pop()


#: The inline decision of a call whose every ApprovalEvent is ``escalate``. inspect_ai rejects such a call:
#: ``policy_approver`` (inspect_ai/approval/_policy.py) asks the approvers of the call's tool in turn while they
#: escalate, and when none is left returns ``Approval(decision="reject", explanation="No approval granted for
#: tool ...")``, which ``apply_tool_approval`` (inspect_ai/approval/_apply.py) turns into a ``ToolApprovalError``:
#: the tool does not run and its message carries an ``approval`` error. inspect_ai records that rejection as an
#: ApprovalEvent of the approver ``policy`` (since approval mode came in, inspect_ai #654), so a log without it
#: lost the event, not the rejection.
ESCALATED_TO_NOBODY = {"decision": DENIED, "approver": "policy"}


class _Transcript(Transcript):
    """A transcript whose calls can be found again, after :meth:`record`, by their tool call id."""

    def call_positions(self) -> dict:
        """Each tool call id -> the indices in record order of the calls with that id (a model may repeat one)."""
        positions: dict = {}
        calls = (payload for kind, payload in self._events if kind == "call")
        for k, call in enumerate(calls):
            if _is_id(call["id"]):
                positions.setdefault(call["id"], []).append(k)
        return positions


def _is_id(value) -> bool:
    """Whether a tool call id can name a call (a hostile log may put a list or an object there)."""
    return isinstance(value, str | int | float)


def _approval_events(events) -> tuple[list, dict]:
    """``(escalated, decisions)`` of a sample's ApprovalEvents (SPEC section 3A).

    ``escalated``: the ids of the calls that an approver escalated, in order. ``decisions``: each call id's inline
    decisions, one per call with that id in record order. inspect_ai asks the approvers about one call at a time,
    until one decides: so each decision (an event that is not ``escalate``) ends the events of one call, and the
    escalations after a call's last decision are those of a call that no approver decided.
    """
    escalated: list = []
    decisions: dict = {}
    undecided: set = set()
    for event in _events(events):
        if event.get("event") != "approval":
            continue
        call = event.get("call") if isinstance(event.get("call"), dict) else {}
        call_id, decision = call.get("id"), event.get("decision")
        if decision == "escalate":
            if call_id not in escalated:
                escalated.append(call_id)
            if _is_id(call_id):
                undecided.add(call_id)
        elif _is_id(call_id):
            decisions.setdefault(call_id, []).append({"decision": INSPECT_DECISIONS.get(decision, UNKNOWN),
                                                      "approver": event.get("approver")})
            undecided.discard(call_id)
    for call_id in undecided:
        decisions.setdefault(call_id, []).append(ESCALATED_TO_NOBODY)
    return escalated, decisions


def _inline_decisions(chat: dict, positions: dict, decisions: dict) -> None:
    """Put each decision on its call in ``chat["tool_calls"]`` (the n-th decision on a call id on the n-th call
    with that id); a call without one is left as it is.

    A denied call did not run, so it is also ``"failed": true``, as inspect_ai's tool message says of a rejected
    call (a terminated one has no tool message). That matters only to an escalation tool (SPEC section 1): a
    hand-off that an approver denied did not pass the case to a person (the approver may be a program: the auto
    approver, a model monitor, inspect_ai's ``policy``), so it is a failed escalation, not an escalation.
    """
    calls = chat["tool_calls"]
    for call_id, approvals in decisions.items():
        for k, approval in zip(positions.get(call_id, ()), approvals):
            calls[k]["approval"] = dict(approval)
            if approval["decision"] == DENIED:
                calls[k]["failed"] = True


def _error_message(error) -> str:
    """The message of a sample's ``error`` (an ``EvalError`` object), or what stands for it."""
    message = error.get("message") if isinstance(error, dict) else error
    return message if isinstance(message, str) and message else "the sample errored (inspect_ai recorded no message)"


def _label(sample: dict):
    metadata = sample.get("metadata")
    if isinstance(metadata, dict) and "label" in metadata:
        return metadata["label"]
    target = sample.get("target")
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    target = normalise_label(target)
    return target if target in LABELS else None


def escalation_name(options: ReadOptions, source: str) -> str | None:
    """The call an approval escalation becomes, or None when not asked for."""
    if not options.approval_escalation:
        return None
    if isinstance(options.approval_escalation, str):
        return options.approval_escalation
    if options.policy is None:
        raise InputError("reading approval escalations as escalations needs a policy (or a tool name)",
                         source=source, field="approval_escalation")
    return sorted(options.policy.escalation_tools)[0]


#: Sample metadata keys that name the conversation's case, scenario and language (the
#: project's suite task writes them; a sample without them is its own case).
_RECORD_KEYS = ("case_id", "scenario_id", "language")


def conversation(sample: dict, escalate_as: str | None, *, task: str | None = None) -> dict:
    """The canonical record of one sample; ``task`` (when given) qualifies the ids made from its id."""
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    if task is not None:
        sample_id = f"{task}/{sample_id}"
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    metadata = cast(dict, sample.get("metadata")) if isinstance(sample.get("metadata"), dict) else {}
    record = {
        "conversation_id": f"{sample_id}:{epoch}",
        "case_id": sample_id,
        "replica": epoch - 1 if isinstance(epoch, int) and not isinstance(epoch, bool) else epoch,
        "label": _label(sample),
        **{key: metadata[key] for key in _RECORD_KEYS if key in metadata},
        "metadata": {**{k: v for k, v in metadata.items() if k not in (*_RECORD_KEYS, "label")}, "epoch": epoch},
    }
    if sample.get("error") is not None:
        record["run_error"] = _error_message(sample["error"])
    messages = sample.get("messages")
    if messages is None:
        return chat_record(record, {"tool_calls": None, "messages": []})
    transcript = _Transcript()
    try:
        resolved = _resolve(messages, attachments) if isinstance(messages, list) else None
    except RecursionError:  # nested deeper than Python's recursion limit: the messages cannot be read
        resolved = None
    if resolved is not None:
        add_messages(transcript, resolved)
    else:
        transcript.unreadable()
    escalated, decisions = _approval_events(sample.get("events"))
    if escalate_as is not None:
        for call_id in escalated:
            if not transcript.insert_call_before(call_id, escalate_as, {"inspect_approval": "escalate"}):
                transcript.insert_call_at_end(escalate_as, {"inspect_approval": "escalate"})
        record["metadata"]["approval_escalations"] = len(escalated)
    chat = transcript.record()
    _inline_decisions(chat, transcript.call_positions(), decisions)
    return chat_record(record, chat)


def sniff(doc: Document) -> bool:
    return doc.kind == "zip" or (doc.kind == "json" and isinstance(doc.data, dict) and "eval" in doc.data)


def _task_name(doc: Document, limits: ArchiveLimits) -> str:
    """The log's task (``eval.task``; of a ``.eval`` archive, from its ``header.json`` or journal)."""
    if doc.kind == "json":
        header = doc.data
    else:
        header = None
        try:
            archive = zipfile.ZipFile(doc.path)
        except _ZIP_ERRORS as err:
            raise InputError(f"cannot read the .eval archive ({_why(err)})", source=doc.source) from None
        with archive:
            names = set(archive.namelist())
            for member in ("header.json", "_journal/start.json"):
                if member in names:
                    raw = member_bytes(archive, archive.getinfo(member), doc.source, limits.member)
                    try:
                        header = loads(raw)
                    except orjson.JSONDecodeError as err:
                        raise InputError(f"member {member} is not valid JSON ({err.msg})", source=doc.source) from None
                    break
    task = header.get("eval", {}).get("task") if isinstance(header, dict) and isinstance(header.get("eval"), dict) \
        else None
    if not isinstance(task, str) or not task:
        raise InputError("the log names no task (eval.task), which qualifies its ids when several logs are "
                         "scored together", source=doc.source)
    return task


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[str, dict]]:
    """``(place, conversation)`` of each sample and epoch (the place: ``samples[i]``, or the
    member of a ``.eval``), one sample at a time: a ``.eval``
    archive is never held whole (see :func:`member_bytes` for the limits of ``options.limits``)."""
    escalate_as = escalation_name(options, doc.source)
    task = _task_name(doc, options.limits) if options.qualify_ids else None
    count = 0
    for count, (path, sample) in enumerate(_samples(doc, options.limits), start=1):
        if not isinstance(sample, dict) or sample.get("id") is None:
            raise InputError("a sample must be an object with an id", source=doc.source, field=path)
        refuse_nested_id(sample["id"], doc, ("path", path), "id")
        epoch = sample.get("epoch", 1)
        if epoch is not None and (epoch.__class__ is not int or not 1 <= epoch <= 2**63):  # replica: epoch - 1
            raise InputError(f"must be an integer >= 1 (inspect_ai counts epochs from 1), got {shown(epoch)}",
                             source=doc.source, field=f"{path}.epoch")
        own = sample["metadata"] if isinstance(sample.get("metadata"), dict) else {}
        fields = {"replica": "epoch", "case_id": "metadata.case_id" if "case_id" in own else "id",
                  "scenario_id": "metadata.scenario_id"}  # errors name the sample's own fields
        yield path, normalised(conversation(sample, escalate_as, task=task), doc, ("path", path), fields)
    if not count:
        raise InputError("the log holds no samples (was it written with log_samples=False?)", source=doc.source)
