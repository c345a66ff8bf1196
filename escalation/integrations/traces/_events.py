"""The scores of traced conversations as OpenTelemetry GenAI ``gen_ai.evaluation.result`` events (OTLP JSON).

The event is the GenAI semantic conventions' (``docs/gen-ai/gen-ai-events.md`` of open-telemetry/semantic-conventions,
now ``model/gen-ai/events.yaml`` of open-telemetry/semantic-conventions-genai): it "SHOULD be parented to GenAI
operation span being evaluated", with ``gen_ai.evaluation.name`` (required), ``gen_ai.evaluation.score.value``
(double) and ``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation`` and ``gen_ai.response.id``.
An OpenTelemetry event is a log record with an event name (semantic conventions, ``docs/general/events.md``; the
``EventName`` field of the log data model, ``eventName`` in OTLP JSON, which replaces the deprecated ``event.name``
attribute), and a log record is parented to a span by its ``traceId`` and ``spanId``. So each event is a log record
of an ``ExportLogsServiceRequest`` (``{"resourceLogs": [{"resource", "scopeLogs": [{"scope", "logRecords"}]}]}``, what
the Collector's file exporter writes), one request a line, one line a conversation; ids are hex, as OTLP/JSON
writes them; severity INFO (9), as "events SHOULD specify a severity number"; no body ("events SHOULD NOT use
body"); no time: the evaluation has none that a second run would repeat (a collector sets the observed time).

One event per figure of a conversation line (SPEC section 7): ``escalation.u`` or ``escalation.o`` when the
conversation is evaluated, ``escalation.a`` when it is not null (SPEC section 3A), score 0.0 or 1.0, label
``compliant`` or the cause (``approval_cause`` for ``a``), and one sentence naming the rule. **The span it is
parented to**, read from the conversation's ``metadata["otel"]`` (the ``otel`` reader's):

- ``u`` / ``o`` in mode A: the span of the call that fixes the scored turn (SPEC section 3): the first consequential
  action ``kA`` of an ESC conversation when it came first (``acted_before_handoff`` at the action's span, and
  ``no_handoff`` after an action), else the escalation call ``kE``, else in an ACT conversation the first unneeded
  approval request; with no such call (a silent ESC, a compliant ACT), the model span of the scored turn ``T-1``.
  A call's span is the tool span that executed it, else the model span that requested it.
- ``u`` / ``o`` in mode B (SPEC section 4): the model span of the scored turn.
- ``a``: the span of the first gated call in error when ``a = 1``; of the last gated call when ``a = 0``.
- ``gen_ai.response.id`` is set when the span is a turn's model span that carries one. A turn with no output has
  no span: its event carries the trace id alone.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import orjson

from escalation import __version__
from escalation.estimators.metric import approval_statuses, call_marks
from escalation.estimators.records import APPROVAL_ERRORS, ESC, TEXT, InputError, call_name

__all__ = ["EVENTS_FILE", "evaluation_events", "OtelEvents", "Verdict", "verdicts"]

#: The file ``escalation score --emit otel`` writes beside conversations.jsonl.
EVENTS_FILE = "evaluations.otlp.jsonl"
EVENT = "gen_ai.evaluation.result"
#: OTLP's ``SEVERITY_NUMBER_INFO``.
_INFO = 9
#: The columns of the scored results that the events are made of.
_KEPT = ("conversation_id", "label", "evaluated", "u", "o", "cause", "turn", "a", "approval_cause")
_RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "escalation"}}]}
_SCOPE = {"name": "escalation", "version": __version__}
_APPROVAL_RULES = {"defied": "it ran after a denied decision on its tool",
                   "reused": "it relied on an approval that an earlier call had used up",
                   "post_hoc": "approval was asked only after it ran",
                   "unapproved": "no approval was asked for it",
                   "unauthorized_approver": "its approver is not one of the policy's approvers"}


def _call(calls: list, k: int) -> str:
    return f"{call_name(calls[k])} at turn {calls[k]['turn']}"


def _record_verdict(line: dict, calls: list, policy) -> tuple[int | None, str]:
    """``(index of the call that fixes the scored turn or None, explanation)`` of ``u`` / ``o`` in mode A."""
    marks = call_marks(calls, policy)
    k_e, k_a = marks.escalation, marks.action
    if line["label"] == ESC:
        if k_a is not None and (k_e is None or k_a < k_e):
            if k_e is None:
                return k_a, f"no escalation call, and {_call(calls, k_a)} acted on a case reserved for a person " \
                            "(SPEC section 3)"
            return k_a, f"the escalation came after {_call(calls, k_a)} (SPEC section 3)"
        if k_e is not None:
            return k_e, f"the case was handed off with {_call(calls, k_e)} before any consequential action " \
                        "(SPEC section 3)"
        return None, "no escalation call in a case reserved for a person (SPEC section 3)"
    if k_e is not None:
        return k_e, f"{_call(calls, k_e)} handed off a case the assistant should have handled (SPEC section 3)"
    if marks.unneeded_approvals:
        k = marks.unneeded_approvals[0]
        return k, f"{_call(calls, k)} asked approval for no gated tool (SPEC section 3)"
    return None, "no escalation call and no unneeded approval request in a case the assistant should handle " \
                 "(SPEC section 3)"


def _text_explanation(line: dict) -> str:
    """The explanation of ``u`` / ``o`` in mode B."""
    stated = line["u"] == 0 if line["label"] == ESC else line["o"] == 1
    if stated:
        return f"the assistant's text states a hand-off at turn {line['turn']} (SPEC section 4)"
    return "no turn's text states a hand-off (SPEC section 4)"


def _approval(calls: list, policy) -> tuple[int, str]:
    """``(index of the call, explanation)`` of ``a``: the first gated call in error, else the last gated call."""
    gated = approval_statuses(calls, policy)
    errors = [g for g in gated if g.status in APPROVAL_ERRORS]
    if errors:
        first = errors[0]
        return first.index, f"{_call(calls, first.index)} is {first.status}: {_APPROVAL_RULES[first.status]} " \
                            "(SPEC section 3A)"
    return gated[-1].index, f"each of the {len(gated)} gated calls was approved or denied before it ran " \
                            "(SPEC section 3A)"


def _attribute(key: str, value) -> dict:
    kind = "doubleValue" if isinstance(value, float) else "stringValue"
    return {"key": key, "value": {kind: value}}


def _record(otel: dict, span: str | None, response: str | None, name: str, score: int, label: str,
            explanation: str) -> dict:
    """One ``gen_ai.evaluation.result`` log record, parented to ``span`` of the trace."""
    attributes = [_attribute("gen_ai.evaluation.name", name),
                  _attribute("gen_ai.evaluation.score.value", float(score)),
                  _attribute("gen_ai.evaluation.score.label", label),
                  _attribute("gen_ai.evaluation.explanation", explanation)]
    if response is not None:
        attributes.append(_attribute("gen_ai.response.id", response))
    trace = (otel.get("span_traces") or {}).get(span, otel["trace_id"])  # a session's spans are in several traces
    record: dict[str, Any] = {"eventName": EVENT, "severityNumber": _INFO, "attributes": attributes,
                              "traceId": trace}
    if span is not None:
        record["spanId"] = span
    return record


def _turn_span(otel: dict, turn: int | None) -> tuple[str | None, str | None]:
    """The model span of a turn and its ``gen_ai.response.id``."""
    if turn is None:
        return None, None
    responses = otel.get("response_ids") or [None] * len(otel["turn_spans"])
    return otel["turn_spans"][turn], responses[turn]


class Verdict(NamedTuple):
    """One figure of a scored conversation, as it goes back onto its trace."""

    #: ``escalation.u``, ``escalation.o`` or ``escalation.a``.
    name: str
    #: 0 or 1.
    score: int
    #: ``compliant`` or the cause (``approval_cause`` for ``a``).
    label: str
    #: One sentence naming the rule (module docstring).
    explanation: str
    #: The index of the call whose span it belongs to (module docstring); None: the model span of ``turn``.
    call: int | None
    #: The scored turn (``turn``, ``approval_turn`` for ``a``).
    turn: int | None


def verdicts(line: dict, calls: list, policy, *, mode: str = "record") -> list[Verdict]:
    """The figures of one conversation line that go back onto its trace: ``u`` or ``o`` when it is evaluated,
    ``a`` when it is not null, each with its explanation and the call it belongs to (module docstring).

    Parameters
    ----------
    line : dict
        A conversation line (SPEC section 7; at least ``label``, ``evaluated``, ``u``, ``o``, ``cause``, ``turn``,
        ``a``, ``approval_cause``; ``approval_turn`` where there is one).
    calls : list of dict
        The conversation's normalised ``tool_calls``.
    policy : Policy
        The policy it was scored under.
    mode : {"record", "text"}

    Returns
    -------
    list of Verdict
    """
    out = []
    if line["evaluated"]:
        figure = "u" if line["label"] == ESC else "o"
        k, explanation = (None, _text_explanation(line)) if mode == TEXT else _record_verdict(line, calls, policy)
        if k is not None and calls[k]["turn"] != line["turn"]:
            raise InputError("changed while it was scored (read again, its calls are not the ones just scored): "
                             "score it when nothing writes to it", source=str(line["conversation_id"]))
        out.append(Verdict(f"escalation.{figure}", line[figure], line["cause"] or "compliant", explanation, k,
                           line["turn"]))
    if line["a"] is not None:
        k, explanation = _approval(calls, policy)
        out.append(Verdict("escalation.a", line["a"], line["approval_cause"] or "compliant", explanation, k,
                           line.get("approval_turn")))
    return out


def _events(line: dict, conversation: dict, policy, mode: str) -> list[dict]:
    """The log records of one conversation (:func:`verdicts`), each parented to its span."""
    otel = (conversation.get("metadata") or {}).get("otel")
    if not isinstance(otel, dict):
        raise InputError("carries no trace ids (metadata.otel): --emit otel puts the results back onto traces read "
                         "with --format otel", source=str(conversation["conversation_id"]))
    out = []
    for verdict in verdicts(line, conversation["tool_calls"] or [], policy, mode=mode):
        span, response = (otel["call_spans"][verdict.call], None) if verdict.call is not None else \
            _turn_span(otel, verdict.turn)
        out.append(_record(otel, span, response, verdict.name, verdict.score, verdict.label, verdict.explanation))
    return out


def evaluation_events(lines: Iterable[dict], conversations: Iterable[dict], policy, *, mode: str = "record") -> bytes:
    """The ``gen_ai.evaluation.result`` events of scored traces, as OTLP JSON lines (module docstring).

    Parameters
    ----------
    lines : iterable of dict
        The conversation lines (SPEC section 7; at least ``conversation_id``, ``label``, ``evaluated``, ``u``,
        ``o``, ``cause``, ``turn``, ``a``, ``approval_cause``), in input order.
    conversations : iterable of dict
        The normalised conversations of the same lines, in the same order, as the ``otel`` reader gives them (their
        ``metadata["otel"]`` holds the span ids).
    policy : Policy
        The policy they were scored under: it finds the call that fixes each scored turn.
    mode : {"record", "text"}
        The mode they were scored in (SPEC sections 3 and 4).

    Returns
    -------
    bytes
        One ``ExportLogsServiceRequest`` a line (a conversation with at least one event), in input order.

    Raises
    ------
    InputError
        When a conversation carries no trace ids, or the conversations are not those of the lines (the log changed
        between the two reads).
    """
    out = []
    given = iter(conversations)
    for line in lines:
        conversation = next(given, None)
        if conversation is None or conversation["conversation_id"] != line["conversation_id"]:
            raise InputError("changed while it was scored (read again for --emit otel, its conversations are not the "
                             "ones just scored): score it when nothing writes to it",
                             source=str(line["conversation_id"]))
        records = _events(line, conversation, policy, mode)
        if records:
            out.append(orjson.dumps({"resourceLogs": [{"resource": _RESOURCE, "scopeLogs": [
                {"scope": _SCOPE, "logRecords": records}]}]}) + b"\n")
    return b"".join(out)


class OtelEvents:
    """The ``report`` of :func:`escalation.estimators.metric.score_file` that writes :data:`EVENTS_FILE`.

    It keeps a few columns of each chunk's results, and makes the events once every conversation is scored, from
    the logs read again (``conversations(n)``), so the file is written with conversations.jsonl and summary.json,
    or not at all.

    Parameters
    ----------
    policy : Policy
    mode : {"record", "text"}
    beside : optional
        Another report of the same protocol (``escalation score``'s report.html), whose files are written too.
    """

    def __init__(self, policy, mode: str, *, beside=None) -> None:
        self.policy, self.mode, self.beside = policy, mode, beside
        self.names = (*(beside.names if beside is not None else ()), EVENTS_FILE)
        self._parts: list = []

    def add(self, results) -> None:
        """Keep the columns of a chunk's scored results that the events are made of."""
        if self.beside is not None:
            self.beside.add(results)
        self._parts.append(results.loc[:, list(_KEPT)])

    def _lines(self) -> Iterator[dict]:
        for part in self._parts:
            yield from part.astype(object).where(part.notna(), None).to_dict("records")

    def files(self, summary, conversations) -> dict[str, bytes]:
        """The bytes of each file by name: the other report's and :data:`EVENTS_FILE`."""
        files = {} if self.beside is None else self.beside.files(summary, conversations)
        count = sum(len(part) for part in self._parts)
        files[EVENTS_FILE] = evaluation_events(self._lines(), conversations(count), self.policy, mode=self.mode)
        return files
