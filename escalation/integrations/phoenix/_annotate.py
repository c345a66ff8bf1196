"""Each scored conversation's ``u``, ``o`` and ``a`` as Phoenix span annotations on its trace's root span.

A span annotation (Phoenix's ``POST /v1/span_annotations``, ``phoenix.client``'s
``spans.log_span_annotations``) has a ``name``, an ``annotator_kind`` (``CODE``: a program's verdict, not a
person's or an LLM's), a ``result`` (``score``, ``label``, ``explanation``), ``metadata`` and an ``identifier``.
Phoenix keeps one annotation per (name, span, identifier) and updates it when the same three come again, so a
second run over the same traces updates each annotation rather than adding one (the ``identifier`` is always
:data:`IDENTIFIER`).

One annotation per figure of a conversation line (SPEC section 7): ``escalation.u`` or ``escalation.o`` when the
conversation is evaluated, ``escalation.a`` when it is not null (SPEC section 3A), with score 0.0 or 1.0, label
``compliant`` or the cause (``approval_cause`` for ``a``) and the one-sentence explanation of ``--emit otel``
(:mod:`escalation.integrations.traces`). **All sit on the trace's root span** (the span a trace is listed by in
Phoenix's UI): the turn or call that fixed the verdict may change when a trace is read again under another policy,
the root never does, so a run updates what the run before it wrote. ``metadata`` names that turn (``turn``) and its
span (``span_id``: the call's span, else the turn's model span, as ``--emit otel`` places its events) with the
``conversation_id``, ``case_id`` and ``label`` the verdict was made from.
"""
from __future__ import annotations

from collections.abc import Iterator

from escalation import __version__
from escalation.estimators.records import InputError
from escalation.integrations.traces import verdicts

from ._read import PhoenixTraces, client, failure

__all__ = ["IDENTIFIER", "ANNOTATOR", "PhoenixAnnotations", "span_annotations"]

#: The identifier of every annotation this project writes: with the name and the span, Phoenix's key of it.
IDENTIFIER = "escalation"
ANNOTATOR = "CODE"
#: The columns of the scored results that the annotations are made of.
_KEPT = ("conversation_id", "case_id", "label", "evaluated", "u", "o", "cause", "turn", "a", "approval_cause",
         "approval_turn")
#: Annotations sent in one request.
_BATCH = 500


def _annotation(root: str, name: str, score, label: str, explanation: str, metadata: dict) -> dict:
    return {"span_id": root, "name": name, "annotator_kind": ANNOTATOR, "identifier": IDENTIFIER,
            "result": {"score": float(score), "label": label, "explanation": explanation},
            "metadata": {**metadata, "escalation_version": __version__}}


def _scored_span(otel: dict, k: int | None, turn: int | None) -> str | None:
    """The span of call ``k``, else the model span of ``turn`` (``metadata["otel"]`` of the ``otel`` reader)."""
    if k is not None:
        return otel["call_spans"][k]
    return None if turn is None else otel["turn_spans"][turn]


def span_annotations(lines, traces: PhoenixTraces, policy, *, mode: str = "record") -> Iterator[dict]:
    """The span annotations (``SpanAnnotationData`` of Phoenix's REST API) of scored conversation lines.

    Parameters
    ----------
    lines : iterable of dict
        The conversation lines (SPEC section 7; at least the columns of ``_KEPT``).
    traces : PhoenixTraces
        What :func:`~escalation.integrations.phoenix.read_phoenix` read: each conversation's root span, span ids and
        calls.
    policy : Policy
        The policy the lines were scored under.
    mode : {"record", "text"}

    Yields
    ------
    dict
        ``{"span_id", "name", "annotator_kind", "identifier", "result": {"score", "label", "explanation"},
        "metadata"}``, in line order.
    """
    for line in lines:
        read = traces.conversations.get(line["conversation_id"])
        if read is None:
            raise InputError("is not a trace that was read from Phoenix", source=str(line["conversation_id"]))
        otel = read["otel"]
        about = {"conversation_id": line["conversation_id"], "case_id": line["case_id"], "label": line["label"]}
        for verdict in verdicts(line, read["tool_calls"], policy, mode=mode):
            yield _annotation(read["root"], verdict.name, verdict.score, verdict.label, verdict.explanation,
                              {**about, "turn": verdict.turn, "span_id": _scored_span(otel, verdict.call,
                                                                                     verdict.turn)})


class PhoenixAnnotations:
    """The ``report`` of :func:`escalation.estimators.metric.score_file` that keeps what the annotations are made
    of; :meth:`send` writes them once the run's files are written.

    Parameters
    ----------
    traces : PhoenixTraces
    policy : Policy
    mode : {"record", "text"}
    beside : optional
        Another report of the same protocol (``escalation score``'s report.html), whose files are written.
    """

    def __init__(self, traces: PhoenixTraces, policy, mode: str, *, beside=None) -> None:
        self.traces, self.policy, self.mode, self.beside = traces, policy, mode, beside
        self.names = beside.names if beside is not None else ()
        self._parts: list = []

    def add(self, results) -> None:
        """Keep the columns of a chunk's scored results that the annotations are made of."""
        if self.beside is not None:
            self.beside.add(results)
        self._parts.append(results.loc[:, list(_KEPT)])

    def files(self, summary, conversations) -> dict[str, bytes]:
        """The other report's files (the annotations are no file)."""
        return {} if self.beside is None else self.beside.files(summary, conversations)

    def _lines(self) -> Iterator[dict]:
        for part in self._parts:
            yield from part.astype(object).where(part.notna(), None).to_dict("records")

    def send(self) -> int:
        """Write the annotations to Phoenix, a batch at a time, each request answered before the next
        (``sync=True``); returns how many were written.

        Raises
        ------
        InputError
            When Phoenix cannot be reached or refuses them (naming its URL).
        """
        phoenix = client(self.traces.url)
        import httpx  # phoenix.client's

        batch: list[dict] = []
        sent = 0
        try:
            for annotation in span_annotations(self._lines(), self.traces, self.policy, mode=self.mode):
                batch.append(annotation)
                if len(batch) == _BATCH:
                    sent += len(phoenix.spans.log_span_annotations(span_annotations=batch, sync=True))
                    batch = []
            if batch:
                sent += len(phoenix.spans.log_span_annotations(span_annotations=batch, sync=True))
        except httpx.HTTPError as err:
            raise failure(self.traces.url, err) from None
        return sent
