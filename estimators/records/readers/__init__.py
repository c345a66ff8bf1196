"""Transcript readers: every common log format to canonical conversations (SPEC sections 1, 6, 7).

Each format has its own module (its docstring says what it reads and how);
:func:`read_conversations` is the one entry point. Every reader numbers turns by the same
rule (:mod:`estimators.records.readers._chat`), so a conversation has the same turns whichever
format it was logged in, and returns dicts made by
:func:`estimators.records._records.normalise_conversation`, the one schema of the scorer.

========================  ===================================================
format                    module
========================  ===================================================
``jsonl``                 :mod:`~estimators.records.readers._jsonl` (SPEC section 6)
``openai``                :mod:`~estimators.records.readers._openai`
``openai-responses``      :mod:`~estimators.records.readers._openai_responses`
``anthropic``             :mod:`~estimators.records.readers._anthropic`
``inspect``               :mod:`~estimators.records.readers._inspect`
``tau-bench``             :mod:`~estimators.records.readers._tau_bench`
``tau2-bench``            :mod:`~estimators.records.readers._tau2_bench`
``otel``                  :mod:`~estimators.records.readers._otel` (OTLP JSON spans, GenAI conventions)
``openai-agents``         :mod:`~estimators.records.readers._openai_agents` (a saved RunState)
``sharegpt``              :mod:`~estimators.records.readers._sharegpt` (ShareGPT, LLaMA-Factory)
``gemini``                :mod:`~estimators.records.readers._gemini` (Gemini contents, ADK sessions)
``bedrock-converse``      :mod:`~estimators.records.readers._bedrock_converse`
``langfuse``              :mod:`~estimators.records.readers._langfuse` (trace exports with observations)
``openinference``         :mod:`~estimators.records.readers._openinference` (Phoenix span exports)
========================  ===================================================
"""
from __future__ import annotations

from ...stats import check_choice
from .._errors import InputError
from .._keys import UniqueKeys
from .._labels import Labels, load_labels
from ._inspect import conversation as inspect_sample_conversation, member_bytes
from ._openinference import openinference_conversation
from ._registry import FORMATS, READERS, detect
from ._source import GROUPINGS, SESSION_FORMATS, ArchiveLimits, JsonLines, ReadOptions, head_document, load_document

__all__ = ["FORMATS", "read_conversations", "iter_conversations", "detect_format", "inspect_sample_conversation",
           "openinference_conversation", "ArchiveLimits", "member_bytes", "GROUPINGS", "SESSION_FORMATS"]


def detect_format(path, limit: int | None = None) -> str:
    """The format of a log file or folder, detected from its content.

    A large JSONL file is judged from its first few MB only; a JSON document larger than ``limit``
    bytes (default :attr:`ArchiveLimits.document`) is refused, as it is parsed whole.

    Raises
    ------
    InputError
        When no format fits; the message names every format tried.
    """
    return detect(head_document(path, limit))


def read_conversations(path, *, format: str = "auto", labels=None, policy=None,
                       approval_escalation: bool | str = False, qualify_ids: bool = False,
                       limits: ArchiveLimits | None = None, group_by: str = "trace") -> tuple[list[dict], str]:
    """Read every conversation of a log file as normalised canonical conversations.

    Parameters
    ----------
    path : path-like
        The log file (a tau2-bench results folder is a folder).
    format : str
        ``"auto"`` (detect from the content) or one of :data:`FORMATS`.
    labels : path-like or Labels, optional
        A labels file (CSV or JSON, see :func:`estimators.records._labels.load_labels`) mapping
        ``conversation_id`` or ``case_id`` to a label; a ``conversation_id`` entry wins over a
        ``case_id`` entry, and a label from the file replaces the record's own or gold label.
    policy : Policy, optional
        Needed by ``tau-bench`` and ``tau2-bench`` (the label is ``ESC`` when a gold action
        calls one of its escalation tools) unless ``labels`` labels the runs, and by
        ``approval_escalation=True``.
    approval_escalation : bool or str
        inspect_ai logs only: read an ``ApprovalEvent`` with decision ``escalate`` as an
        escalation call named by this string, or (``True``) by the policy's first
        escalation tool. See :mod:`estimators.records.readers._inspect`.
    qualify_ids : bool
        inspect_ai logs only: put the task's name before the ids made from sample ids
        (``task/1:1``), for logs of several tasks scored together.
    limits : ArchiveLimits, optional
        inspect_ai ``.eval`` archives only: the most a member and the archive may decompress
        to (default :class:`ArchiveLimits`, 64 MiB and 2 GiB).
    group_by : {"trace", "session"}
        Traces (the formats of :data:`SESSION_FORMATS`): a conversation of each trace, or of the traces that
        share a session id (:mod:`estimators.records.readers._otel`); another format refuses ``"session"``.

    Returns
    -------
    conversations : list of dict
        One per conversation of the input, in input order, as
        :func:`estimators.records._records.normalise_conversation` returns them.
    format : str
        The format that was read.

    Raises
    ------
    InputError
        For input that cannot be read (naming the file, and the line or JSON path), an
        unknown format, a format that cannot be detected, a repeated ``conversation_id``, a
        repeated (case, label, replica), or an archive that decompresses to more than ``limits``.
        The record named is the first bad one: a record whose key repeats an earlier one's is
        named before a later record that cannot be read.
    """
    chunks = iter_conversations(path, format=format, labels=labels, policy=policy,
                                approval_escalation=approval_escalation, qualify_ids=qualify_ids, limits=limits,
                                group_by=group_by)
    used = next(chunks)
    return [conv for chunk in chunks for conv in chunk], used


def iter_conversations(path, *, format: str = "auto", labels=None, policy=None,
                       approval_escalation: bool | str = False, qualify_ids: bool = False,
                       limits: ArchiveLimits | None = None, chunk_size: int = 50_000, messages: bool = True,
                       group_by: str = "trace"):
    """:func:`read_conversations` a chunk at a time, with memory bounded by the chunk.

    The reader is a generator: a ``.eval`` archive is read one member at a time, and a large
    JSON Lines file one line at a time (:class:`~estimators.records.readers._source.JsonLines`); a
    JSON document is parsed whole. The keys are checked as the chunks come
    (:class:`~estimators.records._keys.UniqueKeys`, which reads the log again to confirm a repeat).
    ``messages=False`` empties each conversation's ``messages`` as it is read (scoring from the
    record reads none of them), so that a chunk holds no text.

    Yields
    ------
    str, then lists of dict
        First the format read (detected from the head of a large file); then the
        conversations, ``chunk_size`` at a time (the last chunk may be shorter), as
        :func:`read_conversations` returns them.

    Raises
    ------
    InputError
        As :func:`read_conversations`, when the chunk that holds the bad record is reached.
    """
    check_choice("format", format, ("auto", *FORMATS))
    check_choice("group_by", group_by, GROUPINGS)
    limit = (limits or ArchiveLimits()).document
    doc = load_document(path, limit)
    used = (detect(head_document(path, limit)) if isinstance(doc.data, JsonLines) else detect(doc)) \
        if format == "auto" else format
    if used in ("tau-bench", "tau2-bench") and policy is None and labels is None:
        raise InputError(f"the {used} format labels runs from the policy's escalation tools: give a policy "
                         "(or a labels file)", source=doc.source, field="policy")
    if group_by == "session" and used not in SESSION_FORMATS:
        raise InputError(f"is {used}, whose conversations are not traces: --group-by session groups the traces of "
                         f"{', '.join(SESSION_FORMATS)} by their session id", source=doc.source, field="--group-by")
    options = ReadOptions(policy=policy, approval_escalation=approval_escalation, qualify_ids=qualify_ids,
                          limits=limits or ArchiveLimits(), group_by=group_by)
    if labels is not None and not isinstance(labels, Labels):
        labels = load_labels(labels)

    def items(document):
        for place, conv in READERS[used].read(document, options):
            if not messages:
                conv["messages"] = []
            yield place, conv if labels is None else labels.apply(conv)

    keys = UniqueKeys(doc.source, lambda: items(load_document(path)))
    yield used
    chunk = []
    try:
        for item in items(doc):
            chunk.append(item)
            if len(chunk) == chunk_size:
                keys.add(chunk)
                yield [conv for _, conv in chunk]
                chunk = []
    except InputError:  # a key repeated before the bad record is the first bad line: named first
        keys.add(chunk)
        raise
    keys.add(chunk)
    if chunk:
        yield [conv for _, conv in chunk]
