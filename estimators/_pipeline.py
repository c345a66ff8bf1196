"""Score a file end to end, in bounded memory: read in chunks, score, write, summarise.

This is what ``escalation score`` runs (SPEC section 7). Canonical JSONL is streamed in
chunks; the other formats are read whole by their reader (their files are small), then
scored in the same chunks. ``conversations.jsonl`` is written to a temporary file as the
chunks are scored and renamed only when the whole input was read without error, so a bad
line anywhere leaves no partial output.

Memory holds one chunk at a time. What grows with the file is what the whole file is
needed for: 16 bytes a conversation to check that ids and (case, label, replica) are unique
(SPEC section 6), and the totals of each scenario and each case behind the clustered
intervals (:class:`estimators._aggregate.SummaryAccumulator`). ``benchmarks/memory.py``
measures it.
"""
from __future__ import annotations

import gc
import os
import tempfile
from itertools import chain
from pathlib import Path

import orjson
import pandas as pd

from ._aggregate import SummaryAccumulator
from ._output import conversation_lines, write_atomic
from ._arrow import FastPathUnavailable, arrow_available, iter_records_arrow
from ._records import Records, UniqueKeys, iter_jsonl
from ._vectorised import score_records

__all__ = ["score_file"]


def score_file(path, policy, *, format: str = "auto", labels=None, mode: str = "record", judge=None,
               confidence: float = 0.95, rho: float | None = None, plan: pd.DataFrame | None = None,
               out_dir=None, chunk_size: int = 50_000, approval_escalation: bool = False, progress=None):
    """Score every conversation of a log file and summarise it (SPEC sections 3 to 7).

    Parameters
    ----------
    path : path-like
        The records (canonical JSONL or a supported log format).
    policy : Policy
    format : str
        ``auto`` or a format name of SPEC section 7.
    labels : Labels, optional
        Labels that replace or fill those of the records.
    mode : {"record", "text"}
    judge : TextJudge, optional
        Mode B judge (default :class:`~estimators._judge.PhraseJudge`).
    confidence, rho : see :func:`estimators._aggregate.summarise`.
    plan : DataFrame, optional
        Planned scenarios (``case_id, label, replicas``).
    out_dir : path-like, optional
        Where ``conversations.jsonl`` and ``summary.json`` go; nothing is written if None.
    chunk_size : int
        Conversations scored at a time.
    approval_escalation : bool
        inspect logs: an ``ApprovalEvent`` with decision ``escalate`` is an escalation call.
    progress : callable, optional
        Called with the number of input bytes read since its last call.

    Returns
    -------
    summary : Summary
    format : str
        The format that was read.
    """
    # Parsed JSON holds no reference cycles, and the cyclic collector, triggered again and again
    # by millions of new dicts, would cost more than the parsing itself: pause it while reading.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _score_file(path, policy, format=format, labels=labels, mode=mode, judge=judge,
                           confidence=confidence, rho=rho, plan=plan, out_dir=out_dir, chunk_size=chunk_size,
                           approval_escalation=approval_escalation, progress=progress)
    finally:
        if gc_was_enabled:
            gc.enable()


def _fast_chunks(path, progress):
    """Records of a well-formed canonical JSONL file through Arrow (see :mod:`estimators._arrow`)."""
    for read, records in iter_records_arrow(path):
        if progress:
            progress(read)
        yield records


def _labelled(path, labels, chunk_size, progress=None):
    """Chunks of ``(line, conversation)`` of a canonical JSONL file, with ``labels`` applied."""
    for chunk in iter_jsonl(path, chunk_size=chunk_size, progress=progress):
        if labels is not None:
            for _, conv in chunk:
                labels.apply(conv)
        yield chunk


def _reference_chunks(path, format, policy, labels, mode, chunk_size, progress, approval_escalation):
    """Records chunk by chunk through the reference readers, labels applied and keys checked.

    Canonical JSONL is streamed; the other formats are read whole by
    :func:`estimators.readers.read_conversations` (their files are small), which applies the
    labels and checks the keys itself.
    """
    if format == "jsonl":
        keys = UniqueKeys(str(path), lambda: chain.from_iterable(_labelled(path, labels, chunk_size)))
        for chunk in _labelled(path, labels, chunk_size, progress):
            keys.add(chunk)
            yield Records.from_conversations([conv for _, conv in chunk], messages=mode == "text")
        return
    from .readers import read_conversations
    conversations, _ = read_conversations(path, format=format, labels=labels, policy=policy,
                                          approval_escalation=approval_escalation)
    if progress:
        progress(os.path.getsize(path))
    for start in range(0, len(conversations), chunk_size):
        yield Records.from_conversations(conversations[start:start + chunk_size], messages=mode == "text")


def _score_file(path, policy, *, format, labels, mode, judge, confidence, rho, plan, out_dir, chunk_size,
                approval_escalation, progress):
    if format == "auto":
        from .readers import detect_format
        format = detect_format(path)
    if format == "jsonl" and mode == "record" and labels is None and arrow_available():
        try:
            return _score_chunks(_fast_chunks(path, progress), "jsonl", path, policy, mode=mode, judge=judge,
                                 confidence=confidence, rho=rho, plan=plan, out_dir=out_dir)
        except FastPathUnavailable:
            pass  # read again with the reference reader, which names the line of any error
    chunks = _reference_chunks(path, format, policy, labels, mode, chunk_size, progress, approval_escalation)
    return _score_chunks(chunks, format, path, policy, mode=mode, judge=judge, confidence=confidence, rho=rho,
                         plan=plan, out_dir=out_dir)


def _score_chunks(chunks, used_format, path, policy, *, mode, judge, confidence, rho, plan, out_dir):
    """Score record chunks, write ``conversations.jsonl`` and count them as they come, then summarise."""
    accumulator = SummaryAccumulator(plan=plan)
    tmp = None
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".conversations.jsonl.", suffix=".tmp", dir=out_dir)
        handle = os.fdopen(fd, "wb")
    try:
        for records in chunks:
            results = score_records(records, policy, mode=mode, judge=judge)
            unplanned = accumulator.add(results)
            if tmp is not None:
                extra = {"unplanned": unplanned} if unplanned is not None else None
                handle.writelines(conversation_lines(results, extra=extra))
            del records, results
            gc.collect(1)  # the cyclic collector is paused (see score_file): free this chunk's frames
        if tmp is not None:
            handle.close()
        summary = accumulator.summary(confidence=confidence, rho=rho, mode=mode)
        if out_dir is not None:
            write_atomic(out_dir / "summary.json",
                         orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
            os.replace(tmp, out_dir / "conversations.jsonl")
            tmp = None
    finally:
        if tmp is not None:
            if not handle.closed:
                handle.close()
            Path(tmp).unlink(missing_ok=True)
    return summary, used_format
