"""Score logs end to end, in bounded memory: read in chunks, score, write, summarise.

This is what ``escalation score`` runs (SPEC section 7), on the logs that
:func:`estimators.records._inputs.log_inputs` finds (files, folders, standard input). Canonical JSONL is streamed in
chunks; the other formats are read whole by their reader (their files are small), then
scored in the same chunks. ``conversations.jsonl`` is written to a temporary file as the
chunks are scored and renamed, with ``summary.json`` after it, only when the whole input was
read without error, so a bad line anywhere leaves no partial output
(:func:`estimators._output.write_scored`).

Memory holds one chunk at a time. What grows with the file is what the whole file is
needed for: 16 bytes a conversation to check that ids and (case, label, replica) are unique
(SPEC section 6), and the totals of each scenario and each case behind the clustered
intervals (:class:`estimators.metric._aggregate.SummaryAccumulator`). ``benchmarks/memory.py``
measures it.
"""
from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from ..records import (
    GROUPINGS,
    RECORD,
    TEXT,
    ArchiveLimits,
    InputError,
    Labels,
    Policy,
    Records,
    check_mode,
    iter_records,
    key_hashes,
    log_inputs,
    repeated_across_logs,
)
from ..stats import AUTO_INTERVAL, INTERVAL_CHOICES, check_choice
from ._aggregate import SummaryAccumulator
from ._distributed import BACKENDS, dask_client
from ._lines import conversation_blocks, write_scored
from ._vectorised import score_records

__all__ = ["score_file"]


def score_file(path, policy, *, format: str = "auto", labels=None, mode: str = "record", judge=None,
               confidence: float = 0.95, rho: float | None = None, plan: pd.DataFrame | None = None,
               out_dir=None, chunk_size: int = 50_000, approval_escalation: bool = False, progress=None,
               interval: str = AUTO_INTERVAL, seed: int = 0, provenance: dict | None = None, limits=None,
               report=None, finish=None, group_by: str = "trace", backend: str = "local",
               scheduler: str | None = None, n_jobs: int = -1):
    """Score every conversation of one or several logs and summarise them (SPEC sections 3 to 7).

    Parameters
    ----------
    path : path-like or sequence of path-like
        The logs: files (canonical JSONL or a supported log format), folders of logs, or
        ``-`` for standard input (:func:`estimators.records._inputs.log_inputs`). Several logs are
        scored as one input of one format; their conversations must not repeat a key.
    policy : Policy
    format : str
        ``auto`` (detected log by log; all must agree) or a format name of SPEC section 7.
    labels : Labels, optional
        Labels that replace or fill those of the records.
    mode : {"record", "text"}
    judge : TextJudge, optional
        Mode B judge (default :class:`~estimators.metric._text_mode.PhraseJudge`).
    confidence, rho, interval, seed : see :func:`estimators.metric._aggregate.summarise`.
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
    provenance : dict, optional
        Facts the caller knows (the labels and plan files, the command's options), added to
        the summary's ``provenance`` beside what this function records: the logs read (path,
        size, SHA-256), the format, the policy (its file, contents and
        :meth:`~estimators.Policy.fingerprint`), the options of the measurement, the version
        and the time.
    limits : ArchiveLimits, optional
        What an inspect_ai ``.eval`` archive may decompress to (:func:`estimators.read_conversations`).
    finish : callable, optional
        With ``out_dir``: ``finish(summary)`` returns the dict written as ``summary.json`` in place of
        ``summary.to_dict()`` (:func:`~estimators.metric._lines.write_scored`): what a caller adds to the
        summary is written with it, once.
    report : optional
        More files of the run, made once every conversation is scored and written with the two
        files (``escalation score`` passes its report.html and figures; needs ``out_dir``): an
        object with ``names``, the names of its files in ``out_dir`` (renamed after
        ``conversations.jsonl`` and before ``summary.json``, which names them in
        ``provenance.outputs``); ``add(results)``, called with each chunk's scored results
        (:data:`~estimators.RESULT_COLUMNS`), in input order; and ``files(summary, conversations)``,
        which returns the bytes of each file by name, where ``conversations(n)`` reads the logs
        again for the first ``n`` normalised conversations, in input order, messages and
        arguments included, and reads no further than the chunk of 250 that holds the last.
    group_by : {"trace", "session"}
        Traces: a conversation of each trace or of each session's traces
        (:func:`estimators.records.iter_conversations`).
    backend : {"local", "dask"}
        Where the logs are read and scored: here, chunk by chunk, or on a Dask cluster, a task a log (a file of a
        folder); the scored chunks come back in input order and are summarised, written and reported here as a
        local run does, so the output is the same bytes (:func:`_scored_on_dask`). The workers read the logs by
        their paths: they must see the same files (a cluster on this machine, or a shared file system).
    scheduler : str, optional
        With ``backend="dask"``: a running Dask scheduler's address; without it a ``LocalCluster`` of ``n_jobs``
        single-thread processes is started on this machine and stopped at the end.
    n_jobs : int
        Its workers (``-1``: one a core).

    Returns
    -------
    summary : Summary
    format : str
        The format that was read.

    Raises
    ------
    InputError
        For input that cannot be read (naming the log, and the line or field), logs of
        different formats, or a key repeated within a log or across logs.
    """
    mode = check_mode(mode)
    design = {"confidence": confidence, "rho": rho, "interval": check_choice("interval", interval, INTERVAL_CHOICES),
              "seed": seed}
    check_choice("group_by", group_by, GROUPINGS)
    check_choice("backend", backend, BACKENDS)
    if scheduler is not None and backend != "dask":
        raise InputError("a Dask scheduler address needs backend='dask'", field="--scheduler")
    done = threading.Event()
    with log_inputs(path) as inputs, ThreadPoolExecutor(max_workers=1) as background, ExitStack() as stack:
        if backend == "dask" and inputs.stdin:
            raise InputError("the Dask workers read the logs by their paths: standard input is scored locally",
                             field="--backend")
        # the logs' SHA-256 for the provenance, hashed on the core that the scoring leaves free
        described = background.submit(lambda: [log.describe(stop=done) for log in inputs.logs])
        try:
            formats = [format if format != "auto" else _detect(log.path, limits) for log in inputs.logs]
            if len(set(formats)) > 1:
                other = next(i for i, f in enumerate(formats) if f != formats[0])
                raise InputError(f"the logs are of different formats: {inputs.logs[0].name} is {formats[0]}, "
                                 f"{inputs.logs[other].name} is {formats[other]}; score each format apart, or "
                                 "name the format with --format")
            used = formats[0]
            reading = _Reading(used, policy, labels, mode, chunk_size, approval_escalation, limits, group_by,
                               len(inputs.logs) > 1)
            if backend == "dask":
                client = stack.enter_context(dask_client(scheduler, n_jobs))
                chunks = _scored_on_dask(client, inputs.logs, reading, judge, progress)
            else:
                chunks = _chunks(inputs.logs, reading, progress)
            again = None if report is None else lambda count: _read_again(inputs.logs, reading, count)
            summary, _ = _score_chunks(chunks, used, policy, mode=mode, judge=judge, design=design, plan=plan,
                                       out_dir=out_dir, labels=labels, report=report, again=again, finish=finish,
                                       provenance=lambda: _provenance(inputs, described.result(), used, policy,
                                                                      mode, design, approval_escalation,
                                                                      provenance))
        except InputError as err:
            raise inputs.rename(labels.explain(err) if hasattr(labels, "explain") else err) from None
        finally:
            done.set()  # after an error, the hashing stops at once
    return summary, used


def _detect(path, limits) -> str:
    from ..records import detect_format
    return detect_format(path, limits.document if limits is not None else None)


@dataclass(frozen=True)
class _Reading:
    """How every log of a run is read (:func:`score_file`'s options), here or on a Dask worker."""

    format: str
    policy: Policy
    labels: Labels | None
    mode: str
    chunk_size: int
    approval_escalation: bool
    limits: ArchiveLimits | None
    group_by: str
    several: bool  # several logs: an inspect_ai log's ids are qualified by its task, and keys checked across logs

    def records(self, path, progress=None):
        """The log's records chunk by chunk (canonical JSONL through Arrow, another format by its reader)."""
        if self.format == "jsonl":
            return iter_records(path, chunk_size=self.chunk_size, messages=self.mode == TEXT, labels=self.labels,
                                progress=progress)
        return _read_log(path, self, self.chunk_size, progress, messages=self.mode == TEXT)

    def conversations(self, path, chunk_size: int, *, messages: bool = True):
        """:func:`estimators.records.iter_conversations` of the log, its format already named."""
        from ..records import iter_conversations
        chunks = iter_conversations(path, format=self.format, labels=self.labels, policy=self.policy,
                                    approval_escalation=self.approval_escalation,
                                    qualify_ids=self.several and self.format == "inspect", limits=self.limits,
                                    chunk_size=chunk_size, messages=messages, group_by=self.group_by)
        next(chunks)  # the format, which the caller named
        return chunks


def _chunks(logs, reading: _Reading, progress):
    """``(records, None)`` of each chunk of every log in order, scored by the caller; a key repeated across logs
    stops at the end of the later log."""
    keys = _KeysAcrossLogs() if reading.several else None  # one log checks its own keys
    for log in logs:
        for records in reading.records(log.path, progress):
            if keys is not None:
                keys.add(records)
            yield records, None
        if keys is not None:
            keys.end_of(log, lambda log=log: _conversations_again(log.path, reading))


def _scored_log(path, reading: _Reading, judge) -> tuple[list, object]:
    """A Dask task: the ``(records, results)`` of each chunk of one log, scored, and the labels as they were left
    (which conversations they labelled: :meth:`~estimators.records.Labels.merge`)."""
    chunks = [(records, score_records(records, reading.policy, mode=reading.mode, judge=judge))
              for records in reading.records(path)]
    return chunks, reading.labels


def _scored_on_dask(client, logs, reading: _Reading, judge, progress):
    """``(records, results)`` of each chunk of every log, a Dask task a log (:func:`_scored_log`), in input
    order: a log's chunks are taken when its task ends and the logs after it wait on the cluster, so this machine
    holds one log's chunks at a time. The keys across logs and the labels are checked and counted here, in
    input order, as :func:`_chunks` does: the output is that of a local run."""
    keys = _KeysAcrossLogs() if reading.several else None
    futures = [client.submit(_scored_log, log.path, reading, judge, key=f"escalation-score-{i}-{log.name}",
                             pure=False) for i, log in enumerate(logs)]
    try:
        for log, future in zip(logs, futures):
            chunks, labels = future.result()
            future.release()
            if reading.labels is not None:
                reading.labels.merge(labels)
            if progress and Path(log.path).is_file():
                progress(os.path.getsize(log.path))
            for records, results in chunks:
                if keys is not None:
                    keys.add(records)
                yield records, results
            del chunks
            if keys is not None:
                keys.end_of(log, lambda log=log: _conversations_again(log.path, reading))
    finally:
        client.cancel(futures)


def _conversations_again(path, reading: _Reading):
    """The ``conversations`` tables of a log read a second time (to confirm a repeated key)."""
    chunks = iter_records(path, messages=False, labels=reading.labels) if reading.format == "jsonl" else \
        _read_log(path, reading, 50_000, None, messages=False)
    for records in chunks:
        yield records.conversations


#: Conversations read at a time when the logs are read again for a report (a round number: none is read past
#: the last one needed when their number is a multiple of it, or below it).
_AGAIN_CHUNK = 250


def _read_again(logs, reading: _Reading, count: int):
    """The first ``count`` normalised conversations of the logs read a second time, in input order, with their
    messages and arguments (:func:`estimators.iter_conversations`); reading stops with the chunk of
    :data:`_AGAIN_CHUNK` conversations that holds the last."""
    for log in logs:
        if count <= 0:
            return
        chunks = reading.conversations(log.path, min(count, _AGAIN_CHUNK))
        try:
            for conversations in chunks:
                yield from conversations[:count]
                count -= len(conversations)
                if count <= 0:
                    return
        finally:
            chunks.close()


class _KeysAcrossLogs:
    """The key rule of SPEC section 6 across logs scored together (each log checks its own keys).

    Holds the 64-bit hashes of each log's keys (:func:`estimators.records._keys.key_hashes`); a hash
    that a later log shares with an earlier one is confirmed on the keys themselves, read
    again from both logs, so two keys that merely share a hash are never taken for a repeat.
    """

    def __init__(self) -> None:
        self._logs: list[tuple] = []  # (log, {field: sorted unique hashes}, reread)
        self._current: dict[str, list[np.ndarray]] = {}

    def add(self, records) -> None:
        conv = records.conversations
        hashes = key_hashes(conv["conversation_id"].tolist(), conv["case_id"].tolist(), conv["label"].tolist(),
                            conv["replica"].to_numpy())
        for name, (_, values) in hashes.items():
            self._current.setdefault(name, []).append(values)

    def end_of(self, log, reread) -> None:
        mine = {name: np.unique(np.concatenate(parts)) for name, parts in self._current.items()}
        self._current = {}
        for earlier, theirs, reread_earlier in self._logs:
            for name, values in mine.items():
                shared = np.intersect1d(values, theirs.get(name, np.empty(0, np.int64)))
                if shared.size:
                    self._confirm(name, set(shared.tolist()), (earlier, reread_earlier), (log, reread))
        self._logs.append((log, mine, reread))

    @staticmethod
    def _keys(name, wanted, log, reread) -> set:
        """The keys of ``log`` whose hash is in ``wanted``, read again; each hash must be found
        again, else the log changed between the two reads."""
        found, hashes = set(), set()
        for conv in reread():
            keys = key_hashes(conv["conversation_id"].tolist(), conv["case_id"].tolist(), conv["label"].tolist(),
                              conv["replica"].to_numpy())
            rows, values = keys[name]
            ids = conv["conversation_id"].tolist()
            for row, value in zip(rows.tolist(), values.tolist()):
                if value in wanted:
                    hashes.add(value)
                    found.add(ids[row] if name == "conversation_id" else
                              (conv["case_id"].iat[row], conv["label"].iat[row], int(conv["replica"].iat[row])))
        if hashes != wanted:
            raise InputError("changed while it was read (a key read once is not there the second time): score it "
                             "when nothing writes to it", source=log.name, field=name)
        return found

    def _confirm(self, name, wanted, first, second) -> None:
        both = sorted(self._keys(name, wanted, *first) & self._keys(name, wanted, *second), key=str)
        if not both:
            return  # a shared hash of different keys
        raise repeated_across_logs(name, both, first[0].name, second[0].name)


def _provenance(inputs, described, used, policy, mode, design, approval_escalation, extra) -> dict:
    """``summary.json`` ``provenance``: what the summary was computed from (see :func:`score_file`);
    ``described``: :meth:`LogInput.describe` of each of ``inputs.logs``."""
    from escalation import __version__

    facts = {"escalation": __version__,
             "created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
             "inputs": described, "skipped": list(inputs.skipped), "format": used,
             "policy": {"path": policy.source, "sha256": policy.fingerprint(),
                        "contents": {k: v for k, v in policy.to_dict().items() if k != "name"}},
             "labels": None, "plan": None,
             "options": {"mode": mode, **design, "approval_escalation": approval_escalation}}
    for key, value in (extra or {}).items():
        facts[key] = {**facts[key], **value} if isinstance(facts.get(key), dict) and isinstance(value, dict) \
            else value
    return facts


def _read_log(path, reading: _Reading, chunk_size: int, progress, *, messages: bool):
    """Records chunk by chunk of a log of a format other than canonical JSONL, as
    :func:`estimators.records.readers.iter_conversations` reads it (it applies the labels and checks the keys)."""
    for conversations in reading.conversations(path, chunk_size, messages=messages):
        yield Records.from_conversations(conversations, messages=messages)
    if progress and Path(path).is_file():
        progress(os.path.getsize(path))


def _score_chunks(chunks, used_format, policy, *, mode, judge, design, plan, out_dir, provenance=None, labels=None,
                  report=None, again=None, finish=None):
    """Score record chunks (``(records, results)``, ``results`` None where they are scored here), count them as
    they come and summarise; with ``out_dir``, write ``conversations.jsonl`` as they come and ``summary.json``
    with it, and the files of ``report`` between them (:func:`score_file`,
    :func:`estimators._output.write_scored`)."""
    accumulator = SummaryAccumulator(plan=plan, policy=policy)

    def lines():
        for records, results in chunks:
            if results is None:
                results = score_records(records, policy, mode=mode, judge=judge)
            unplanned = accumulator.add(results, records if mode == RECORD else None)
            if report is not None:
                report.add(results)
            if out_dir is not None:
                yield from conversation_blocks(results, extra={"unplanned": unplanned} if unplanned is not None
                                               else None)
            del records, results
            if not gc.isenabled():  # a caller paused the collector (the command line does): free this chunk
                gc.collect(1)

    def summary():
        done = accumulator.summary(mode=mode, **design)
        if labels is not None:  # a labels file that labels no conversation is a warning (Summary.input_warnings)
            done = replace(done, tally=replace(done.tally, unmatched_labels=labels.unmatched()))
        return done if provenance is None else replace(done, provenance=provenance())

    if out_dir is not None:
        if report is None:
            return write_scored(out_dir, lines(), summary, finish=finish), used_format
        return write_scored(out_dir, lines(), summary, more_names=report.names,
                            more=lambda done: report.files(done, again), finish=finish), used_format
    for _ in lines():  # yields nothing without out_dir
        pass
    return summary(), used_format
