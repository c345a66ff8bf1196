"""OpenAI Responses API items (``--format openai-responses``).

One conversation per JSONL line, or a JSON list of them. The items are under ``items``
(or ``messages``), or are a request's ``input`` followed by its response's ``output``::

    {"conversation_id": "c1", "label": "ACT",
     "items": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "..."}]},
               {"type": "function_call", "call_id": "fc_1", "name": "get_order",
                "arguments": "{\\"order_id\\": 7}"},
               {"type": "function_call_output", "call_id": "fc_1", "output": "..."},
               {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}]}]}

Read from each item:

- ``message`` items (or items with a ``role`` and no ``type``): a user message opens a turn;
  assistant ``output_text`` and ``refusal`` parts are the assistant's text; ``system`` and
  ``developer`` messages belong to no turn;
- ``function_call`` (JSON-string ``arguments``; malformed JSON is kept as text) and
  ``custom_tool_call`` (free-text ``input``) are calls; their ``*_output`` items are tool
  results, joined to the call on ``call_id``;
- built-in tool calls (``web_search_call``, ``file_search_call``, ``computer_call``,
  ``code_interpreter_call``, ``image_generation_call``, ``local_shell_call``, ``mcp_call``)
  are calls too, named by their ``name`` (``mcp_call``) or by their type without ``_call``
  (``web_search``, ``computer``, ...): the assistant decided to use the tool;
- ``reasoning`` items are not shown to the user and are skipped.

**Approvals** (SPEC section 3A): the OpenAI Agents SDK answers a call that a person rejected
(``RunState.reject``) with a ``function_call_output`` (``custom_tool_call_output`` for a custom
tool) whose ``output`` is exactly its default rejection message, ``"Tool execution was not
approved."``. Such a call carries the inline decision ``{"decision": "denied", "approver": None}``
(the SDK records no approver) and is ``"failed": true``: it did not run. Nothing else is read as a
decision: a rejection with a message of the deployment's own (``rejection_message``, a
``tool_error_formatter``) cannot be told from a tool's output, and an approved call leaves no trace
in the items (the ``openai-agents`` format reads both from a saved ``RunState``).

**The whole Response object** (issue 33): an application that logs ``response.model_dump()`` (openai-python's
``openai.types.responses.Response``: ``{"id", "object": "response", "output": [...], "error", ...}``) writes it
as the record's ``output`` (``{"conversation_id", "label", "input": [...], "output": <Response>}``), or writes the
Response alone, one a line. The Response's own ``output`` items are the assistant's, after the request's
``input`` (a list of items, or a string: the user's message); a Response alone has no input, ids or labels (its
``id`` and ``model`` go to ``metadata``). A Response whose ``error`` is set (``status: "failed"``) is the
record's ``run_error`` (SPEC section 3), with the error's ``message``. A record whose ``output`` is another
object (a Chat Completions ``ChatCompletion``, with ``choices``) is refused, naming its keys: read as items,
its calls would be lost and the conversation scored as silent.

A record may leave out ``conversation_id``: in a JSONL file it is then ``line-N``, N its
line (SPEC section 7, :func:`~estimators.records.readers._chat_records.chat_records`).
"""
from __future__ import annotations

from collections.abc import Iterator

from .._approval import DENIED
from .._errors import InputError
from ._chat import Transcript, parse_arguments
from ._chat_records import chat_record, chat_records, normalised, records_of, where
from ._markers import chat_items, record_markers
from ._openai import content_text
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "REJECTION_MESSAGE", "ApprovalTranscript", "add_item", "is_response", "sniff", "read"]

NAME = "openai-responses"
EXPECTS = ("JSONL (or a JSON list) of {conversation_id, label, items} with OpenAI Responses items, or of "
           "{conversation_id, label, input, output} with the whole Response object as output")

_OUTPUTS = ("function_call_output", "custom_tool_call_output", "computer_call_output", "local_shell_call_output")
_BUILT_IN = ("web_search_call", "file_search_call", "computer_call", "code_interpreter_call",
             "image_generation_call", "local_shell_call", "mcp_call")

#: The Agents SDK's output for a rejected call: ``DEFAULT_APPROVAL_REJECTION_MESSAGE`` of ``agents/tool.py``
#: (openai-agents 0.24.0), which ``function_rejection_item`` of ``agents/run_internal/items.py`` writes.
REJECTION_MESSAGE = "Tool execution was not approved."
_REJECTABLE = ("function_call_output", "custom_tool_call_output")
_DENIED = {"decision": DENIED, "approver": None}


class ApprovalTranscript(Transcript):
    """A :class:`Transcript` whose calls carry an inline decision (SPEC section 3A).

    ``decisions`` maps a call id to the decision that the log records for that call (``approval``); a call
    that has none there and whose result is :data:`REJECTION_MESSAGE` is denied. A denied call is
    ``"failed": true``: it did not run.
    """

    def __init__(self, decisions: dict | None = None) -> None:
        super().__init__()
        self._decisions = decisions or {}

    def rejected(self, call_id) -> None:
        """The result of a call that the SDK did not run because a person rejected it."""
        waiting = set(self._open)
        self.result(call_id)
        matched = waiting - set(self._open)  # the call the result went to; else the call it implied, last
        self._events[matched.pop() if matched else -1][1]["approval"] = _DENIED

    def record(self) -> dict:
        out = super().record()
        payloads = (payload for kind, payload in self._events if kind == "call")
        for call, payload in zip(out["tool_calls"], payloads):  # one call per call event, in order
            call_id = payload["id"]
            approval = self._decisions.get(call_id) if isinstance(call_id, str) else None
            approval = approval or payload.get("approval")
            if approval is not None:
                call["approval"] = dict(approval)
                if approval["decision"] == DENIED:
                    call["failed"] = True
        return out


def add_item(transcript: ApprovalTranscript, item) -> None:
    """Tell ``transcript`` what one Responses item holds."""
    if not isinstance(item, dict):
        transcript.unreadable()
        return
    kind = item.get("type")
    if kind in ("message", None):
        role = item.get("role")
        if role == "user":
            transcript.user(content_text(item.get("content")))
        elif role == "assistant":
            transcript.assistant(content_text(item.get("content")))
        elif not isinstance(role, str):
            transcript.unreadable()
    elif kind == "function_call":
        transcript.call(item.get("name"), parse_arguments(item.get("arguments")), item.get("call_id"))
    elif kind == "custom_tool_call":
        transcript.call(item.get("name"), item.get("input"), item.get("call_id"))
    elif kind in _REJECTABLE and item.get("output") == REJECTION_MESSAGE:
        transcript.rejected(item.get("call_id"))
    elif kind in _OUTPUTS:
        transcript.result(item.get("call_id"))
    elif kind in _BUILT_IN:
        name = item.get("name") if kind == "mcp_call" else kind[: -len("_call")]
        arguments = item.get("arguments", item.get("action"))
        transcript.call(name, parse_arguments(arguments), item.get("call_id", item.get("id")))


def is_response(value) -> bool:
    """A Response object as ``Response.model_dump()`` writes it: ``object`` ``"response"`` and ``output`` items."""
    return isinstance(value, dict) and value.get("object") == "response" and isinstance(value.get("output"), list)


def _with_response(record: dict, response: dict) -> dict:
    """The record whose ``output`` is the Response object ``response``: its input items, then the Response's."""
    inp = record.get("input")
    items = inp if isinstance(inp, list) else [{"role": "user", "content": inp}] if isinstance(inp, str) else []
    out = {k: v for k, v in record.items() if k not in ("input", "output")}
    out["items"] = items + response["output"]
    error = response.get("error")
    if error is not None and out.get("run_error") is None:
        message = error.get("message") if isinstance(error, dict) else None
        out["run_error"] = message if isinstance(message, str) and message.strip() else True
    return out


def _refuse_output(output: dict, doc: Document, location) -> None:
    keys = ", ".join(sorted(map(str, output))[:8])
    shape = " (a Chat Completions ChatCompletion)" if "choices" in output else ""
    raise InputError(f"is an object with keys {keys}{shape}: expected a list of Responses items, or the whole "
                     'Response object ({"object": "response", "output": [...]}, as Response.model_dump() writes it)',
                     source=doc.source, **where(location, "output"))


def conversation(record: dict, doc: Document, location) -> dict:
    if is_response(record):  # a Response alone: no input, ids or labels of its own
        response = record
        record = {"conversation_id": record["conversation_id"],
                  "metadata": {"response_id": response.get("id"), "model": response.get("model")}}
        record = _with_response(record, response)
    elif isinstance(record.get("output"), dict):
        if not is_response(record["output"]):
            _refuse_output(record["output"], doc, location)
        record = _with_response(record, record["output"])
    items = chat_items(record)
    keys = ("items", "messages", "input", "output")
    if items is None:
        return chat_record(record, {"tool_calls": None, "messages": []}, content_keys=keys)
    transcript = ApprovalTranscript()
    for item in items:
        add_item(transcript, item)
    return chat_record(record, transcript.record(), content_keys=keys)


def _holds_response(value) -> bool:
    """A Response alone, or a record whose ``output`` is an object (a Response, or a shape refused by name)."""
    return isinstance(value, dict) and (is_response(value) or isinstance(value.get("output"), dict))


def sniff(doc: Document) -> bool:
    """Records with Responses items and no other provider's, or records that hold a Response object."""
    markers = record_markers(doc)
    if markers is None:
        return False
    if markers and "responses" in markers and markers <= {"chat", "responses"}:
        return True
    if NAME not in doc.cache:
        doc.cache[NAME] = markers <= {"chat", "responses", "openai"} and any(
            _holds_response(value) for _, value in records_of(doc, EXPECTS))
    return doc.cache[NAME]


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    return ((location[1], normalised(conversation(record, doc, location) if isinstance(record, dict) else record,
                                     doc, location))
            for location, record in chat_records(doc, EXPECTS))
