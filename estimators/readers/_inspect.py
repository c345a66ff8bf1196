"""inspect_ai logs (``--format inspect``): ``.json`` logs and ``.eval`` archives.

A ``.json`` log is one object whose ``samples`` list holds the samples; a ``.eval`` log is
a zip archive with one ``samples/<id>_epoch_<n>.json`` member per sample and epoch. Its
members are deflated (read with the standard library) or, in newer logs, zstd-compressed:
those are read with the ``zstandard`` package when it is installed, otherwise the reader
stops and says to install it.

One conversation per sample and epoch:

- ``conversation_id`` is ``"{sample id}:{epoch}"``, ``case_id`` the sample's
  ``metadata["case_id"]``, else the sample id (logs scored together: ``"{task}/{sample id}"``
  in both, as inspect_ai's sample ids repeat from task to task), and ``replica`` the epoch minus one (inspect_ai
  counts epochs from 1); ``metadata["scenario_id"]`` and ``metadata["language"]``, when
  present, are the record's; the rest of the sample's metadata is the record's ``metadata``
  (with ``epoch``);
- the label is the sample's ``metadata["label"]``, else its ``target`` when that reads as
  ``"ESC"`` or ``"ACT"`` (a task built for this metric puts the label there), both read as
  :func:`~estimators._vocabulary.normalise_label` reads a label (``"esc"`` is ``"ESC"``);
- ``messages`` is read as :mod:`~estimators.readers._openai` reads a chat: assistant
  ``tool_calls`` (``{"id", "function", "arguments"}``) are the record, ``tool`` messages and
  user messages that carry a ``tool_call_id`` are tool results, ``reasoning`` content is
  not the assistant's text; ``attachment://`` references are resolved from the sample's
  ``attachments``.

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

import orjson

from .._errors import InputError
from .._vocabulary import LABELS, normalise_label
from ._chat import Transcript
from ._openai import add_messages
from ._source import Document, ReadOptions, chat_record, loads, normalised

__all__ = ["NAME", "EXPECTS", "sniff", "read", "ZSTD_METHOD"]

NAME = "inspect"
EXPECTS = "an inspect_ai log (.json with eval and samples, or a .eval archive)"
ZSTD_METHOD = 93  # zip compression method id of Zstandard (APPNOTE 4.4.5)
_ATTACHMENT = "attachment://"


def _zstd_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> bytes:
    """A zstd-compressed member, read with the ``zstandard`` package, else by ``zipfile``
    itself (Python 3.14 reads zstd), else an error that says what to install."""
    try:
        import zstandard
    except ImportError:
        try:
            return archive.read(info)
        except NotImplementedError:
            raise InputError(f"member {info.filename} is zstd-compressed; install the zstandard package "
                             "(pip install zstandard) to read this .eval log", source=source) from None
    handle = archive.fp
    handle.seek(info.header_offset)
    header = handle.read(30)  # local file header: name and extra lengths at bytes 26..29
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    try:
        data = zstandard.ZstdDecompressor().decompressobj().decompress(handle.read(info.compress_size))
    except zstandard.ZstdError as err:
        raise InputError(f"member {info.filename} is not valid zstd data ({err})", source=source) from None
    if zlib.crc32(data) != info.CRC:
        raise InputError(f"member {info.filename} is corrupt (CRC-32 mismatch)", source=source)
    return data


def _eval_samples(doc: Document):
    """``(member name, sample)`` of a ``.eval`` archive, in archive order."""
    try:
        with zipfile.ZipFile(doc.path) as archive:
            out = []
            for info in archive.infolist():
                if not (info.filename.startswith("samples/") and info.filename.endswith(".json")):
                    continue
                if info.compress_type == ZSTD_METHOD:
                    raw = _zstd_member(archive, info, doc.source)
                else:
                    raw = archive.read(info)
                try:
                    out.append((info.filename, loads(raw)))
                except orjson.JSONDecodeError as err:
                    raise InputError(f"member {info.filename} is not valid JSON ({err.msg})",
                                     source=doc.source) from None
            return out
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as err:
        raise InputError(f"cannot read the .eval archive: {err}", source=doc.source) from None


def _samples(doc: Document):
    if doc.kind == "zip":
        samples = _eval_samples(doc)
    elif doc.kind == "json" and isinstance(doc.data, dict) and "eval" in doc.data:
        listed = doc.data.get("samples")
        if listed is not None and not isinstance(listed, list):
            raise InputError("must be a list", source=doc.source, field="samples")
        samples = [(f"samples[{i}]", s) for i, s in enumerate(listed or [])]
    else:
        raise InputError(f"expected {EXPECTS}", source=doc.source)
    if not samples:
        raise InputError("the log holds no samples (was it written with log_samples=False?)", source=doc.source)
    return samples


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
    metadata = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
    record = {
        "conversation_id": f"{sample_id}:{epoch}",
        "case_id": sample_id,
        "replica": epoch - 1 if isinstance(epoch, int) and not isinstance(epoch, bool) else epoch,
        "label": _label(sample),
        **{key: metadata[key] for key in _RECORD_KEYS if key in metadata},
        "metadata": {**{k: v for k, v in metadata.items() if k not in (*_RECORD_KEYS, "label")}, "epoch": epoch},
    }
    messages = sample.get("messages")
    if messages is None:
        return chat_record(record, {"tool_calls": None, "messages": []})
    transcript = Transcript()
    try:
        resolved = _resolve(messages, attachments) if isinstance(messages, list) else None
    except RecursionError:  # nested deeper than Python's recursion limit: the messages cannot be read
        resolved = None
    if resolved is not None:
        add_messages(transcript, resolved)
    else:
        transcript.unreadable()
    if escalate_as is not None:
        escalated = []
        for event in _events(sample.get("events")):
            call = event.get("call") if isinstance(event.get("call"), dict) else {}
            if event.get("event") == "approval" and event.get("decision") == "escalate" \
                    and call.get("id") not in escalated:
                escalated.append(call.get("id"))
        for call_id in escalated:
            if not transcript.insert_call_before(call_id, escalate_as, {"inspect_approval": "escalate"}):
                transcript.insert_call_at_end(escalate_as, {"inspect_approval": "escalate"})
        record["metadata"]["approval_escalations"] = len(escalated)
    return chat_record(record, transcript.record())


def sniff(doc: Document) -> bool:
    return doc.kind == "zip" or (doc.kind == "json" and isinstance(doc.data, dict) and "eval" in doc.data)


def _task_name(doc: Document) -> str:
    """The log's task (``eval.task``; of a ``.eval`` archive, from its ``header.json`` or journal)."""
    if doc.kind == "json":
        header = doc.data
    else:
        header = None
        try:
            with zipfile.ZipFile(doc.path) as archive:
                names = set(archive.namelist())
                for member in ("header.json", "_journal/start.json"):
                    if member in names:
                        header = loads(archive.read(member))
                        break
        except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError) as err:
            raise InputError(f"cannot read the .eval archive's header: {err}", source=doc.source) from None
    task = header.get("eval", {}).get("task") if isinstance(header, dict) and isinstance(header.get("eval"), dict) \
        else None
    if not isinstance(task, str) or not task:
        raise InputError("the log names no task (eval.task), which qualifies its ids when several logs are "
                         "scored together", source=doc.source)
    return task


def read(doc: Document, options: ReadOptions) -> list[tuple[int, dict]]:
    escalate_as = escalation_name(options, doc.source)
    task = _task_name(doc) if options.qualify_ids else None
    out = []
    for i, (path, sample) in enumerate(_samples(doc)):
        location = ("path", path)
        if not isinstance(sample, dict) or sample.get("id") is None:
            raise InputError("a sample must be an object with an id", source=doc.source, field=path)
        out.append((i + 1, normalised(conversation(sample, escalate_as, task=task), doc, location)))
    return out
