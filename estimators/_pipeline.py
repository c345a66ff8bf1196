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
from pathlib import Path

import orjson
import pandas as pd

from ._aggregate import SummaryAccumulator
from ._output import conversation_lines, write_atomic
from ._arrow import iter_records
from ._clustered import DEFAULT_INTERVAL, check_interval_method
from ._records import Records
from ._vectorised import score_records
from ._vocabulary import RECORD, TEXT, check_mode

__all__ = ["score_file"]


def score_file(path, policy, *, format: str = "auto", labels=None, mode: str = "record", judge=None,
               confidence: float = 0.95, rho: float | None = None, plan: pd.DataFrame | None = None,
               out_dir=None, chunk_size: int = 50_000, approval_escalation: bool = False, progress=None,
               interval: str = DEFAULT_INTERVAL, seed: int = 0):
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
    confidence, rho, interval, seed : see :func:`estimators._aggregate.summarise`.
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
    mode = check_mode(mode)
    if format == "auto":
        from .readers import detect_format
        format = detect_format(path)
    if format == "jsonl":
        chunks = iter_records(path, chunk_size=chunk_size, messages=mode == TEXT, labels=labels, progress=progress)
    else:
        chunks = _read_whole(path, format, policy, labels, mode, chunk_size, progress, approval_escalation)
    design = {"confidence": confidence, "rho": rho, "interval": check_interval_method(interval), "seed": seed}
    return _score_chunks(chunks, format, policy, mode=mode, judge=judge, design=design, plan=plan, out_dir=out_dir)


def _read_whole(path, format, policy, labels, mode, chunk_size, progress, approval_escalation):
    """Records chunk by chunk of a log that :func:`estimators.readers.read_conversations` reads
    whole (their files are small); it applies the labels and checks the keys itself."""
    from .readers import read_conversations
    conversations, _ = read_conversations(path, format=format, labels=labels, policy=policy,
                                          approval_escalation=approval_escalation)
    if progress:
        progress(os.path.getsize(path))
    for start in range(0, len(conversations), chunk_size):
        yield Records.from_conversations(conversations[start:start + chunk_size], messages=mode == TEXT)


def _score_chunks(chunks, used_format, policy, *, mode, judge, design, plan, out_dir):
    """Score record chunks, write ``conversations.jsonl`` and count them as they come, then summarise."""
    accumulator = SummaryAccumulator(plan=plan, policy=policy)
    tmp = None
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".conversations.jsonl.", suffix=".tmp", dir=out_dir)
        handle = os.fdopen(fd, "wb")
    try:
        for records in chunks:
            results = score_records(records, policy, mode=mode, judge=judge)
            unplanned = accumulator.add(results, records if mode == RECORD else None)
            if tmp is not None:
                extra = {"unplanned": unplanned} if unplanned is not None else None
                handle.writelines(conversation_lines(results, extra=extra))
            del records, results
            if not gc.isenabled():  # a caller paused the collector (the command line does): free this chunk
                gc.collect(1)
        if tmp is not None:
            handle.close()
        summary = accumulator.summary(mode=mode, **design)
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
