"""OpenAI Agents SDK run states (``--format openai-agents``).

A file is one ``RunState`` as ``RunState.to_string()`` (or ``to_json()``) writes it: the state that a deployment
saves to resume a run that stopped for a person's approval, or that ``result.to_state()`` gives when a run ended;
or JSON Lines of them, one a line. One state is one conversation: ``conversation_id`` is the file's name without
its suffix (``refund-42.json`` is ``refund-42``), or ``line-N`` in a JSON Lines file; the state has no label
(``--labels`` gives one), and its ``$schemaVersion`` and agent go to ``metadata``.

Read from each state (openai-agents 0.24.0, ``agents/run_state.py``):

- the chat: ``original_input`` (a string is one user message; a list holds Responses items), then the
  ``raw_item`` of each of ``generated_items`` (Responses items), read as the ``openai-responses`` format reads
  them (:mod:`~estimators.records.readers._openai_responses`, with its reading of the SDK's rejection message);
  a ``tool_approval_item`` repeats a call that is already there and is not read as a call;
- **approvals** (SPEC section 3A), the decisions ``RunState.approve`` and ``reject`` made in this run:
  ``context.function_tool_approvals`` (``{"agent", "tool_key", "decision"}``, since schema 1.18) and
  ``context.approvals`` (keyed by tool name), each ``decision`` with ``approved`` and ``rejected``: a list of
  call ids, or ``true`` for every call of the tool (``always_approve`` / ``always_reject``). A call gets
  the inline decision ``granted`` or ``denied``, with no approver (the SDK records none), as the SDK decides it
  (``RunContextWrapper._get_approval_status_for_record``): its id in ``approved``, else in ``rejected``, else
  ``approved: true``, else ``rejected: true``; a ``true`` applies to the calls of this run (``generated_items``)
  of that tool by that agent. A denied call did not run: ``"failed": true``;
- a call awaiting a decision (a ``tool_approval_item`` of ``generated_items`` that no decision names: the run
  stopped there) carries an inline decision with no decision, ``unknown`` (SPEC 3A): a person is asked.

A state holds the decisions of its own run only: a chat that goes on in a new ``Runner.run`` (given
``to_input_list()`` of the last) starts with none, so an earlier call comes in ``original_input`` with no
decision, unless its output is the SDK's rejection message. Hosted MCP approvals (``hosted_mcp_approvals``) are
not read.

``$schemaVersion`` must be one that openai-agents 0.24.0 reads (``1.0`` to ``1.21``, its
``SUPPORTED_SCHEMA_VERSIONS``); a newer state is refused, naming the field: the SDK changes the layout between
versions, and reads only the versions it knows.
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from .._approval import DENIED, GRANTED
from .._errors import InputError
from ._chat_records import chat_record, normalised, records_of, where
from ._openai_responses import ApprovalTranscript, add_item
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "SCHEMA_VERSIONS", "sniff", "read"]

NAME = "openai-agents"
EXPECTS = "an OpenAI Agents SDK RunState (RunState.to_string()), or JSON Lines of them"

#: The ``$schemaVersion`` values that openai-agents 0.24.0 reads (``SUPPORTED_SCHEMA_VERSIONS``).
SCHEMA_VERSIONS = frozenset(f"1.{minor}" for minor in range(22))
_KEYS = ("$schemaVersion", "original_input", "generated_items")


def _is_state(value) -> bool:
    return isinstance(value, dict) and all(key in value for key in _KEYS)


def sniff(doc: Document) -> bool:
    """A JSON object, or the first line of a JSON Lines file, with ``$schemaVersion``, ``original_input`` and
    ``generated_items``."""
    if doc.kind == "json":
        return _is_state(doc.data)
    if doc.kind == "jsonl":
        return any(_is_state(value) for _, value in islice(doc.data, 1))
    return False


def _records(state: dict) -> list[tuple[dict, object, object]]:
    """``(decision, tool key, agent name)`` of each approval record of the state's context; the agent is None for
    a record keyed by tool name alone (``context.approvals``): it is any agent's."""
    found = state.get("context")
    context: dict = found if isinstance(found, dict) else {}
    listed = context.get("approvals")
    approvals: dict = listed if isinstance(listed, dict) else {}
    out: list[tuple[dict, object, object]] = [(decision, key, None) for key, decision in approvals.items()
                                              if isinstance(decision, dict)]
    owned = context.get("function_tool_approvals")
    for entry in owned if isinstance(owned, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("decision"), dict):
            agent = entry["agent"].get("name") if isinstance(entry.get("agent"), dict) else None
            out.append((entry["decision"], entry.get("tool_key"), agent))
    return out


def _run_calls(items: list) -> Iterator[tuple[str, object, object]]:
    """``(call id, tool name, agent name)`` of each call of the run (a ``tool_call_item`` of its
    ``generated_items``)."""
    for item in items:
        raw = item.get("raw_item") if isinstance(item, dict) and item.get("type") == "tool_call_item" else None
        if isinstance(raw, dict) and isinstance(raw.get("call_id"), str):
            agent = item.get("agent")
            yield raw["call_id"], raw.get("name"), agent.get("name") if isinstance(agent, dict) else None


def _pending(items: list) -> Iterator[str]:
    """The call ids of the run's ``tool_approval_item``s: the calls it stopped to ask about."""
    for item in items:
        raw = item.get("raw_item") if isinstance(item, dict) and item.get("type") == "tool_approval_item" else None
        if isinstance(raw, dict) and isinstance(raw.get("call_id"), str):
            yield raw["call_id"]


def _decisions(state: dict, items: list) -> dict:
    """Each call id -> its inline decision, as the SDK decides it (see the module's docstring)."""
    records = _records(state)
    decided: dict = {}
    for decision, _, _ in records:
        for answer, field in ((DENIED, "rejected"), (GRANTED, "approved")):  # approved last: it wins, as in the SDK
            ids = decision.get(field)
            for call_id in ids if isinstance(ids, list) else ():
                if isinstance(call_id, str):
                    decided[call_id] = answer
    for call_id, tool, agent in _run_calls(items):
        sticky = [decision for decision, key, owner in records if key == tool and owner in (None, agent)]
        if call_id in decided or not sticky:
            continue
        if any(decision.get("approved") is True for decision in sticky):
            decided[call_id] = GRANTED
        elif any(decision.get("rejected") is True for decision in sticky):
            decided[call_id] = DENIED
    out = {call_id: {"decision": decision, "approver": None} for call_id, decision in decided.items()}
    for call_id in _pending(items):
        out.setdefault(call_id, {"decision": None, "approver": None})
    return out


def _schema_version(state: dict, doc: Document, location) -> str:
    """The state's ``$schemaVersion``, refused (:class:`InputError`) unless openai-agents 0.24.0 reads it."""
    version = state["$schemaVersion"]
    if version.__class__ is not str or version not in SCHEMA_VERSIONS:
        shown = repr(version[:40]) if version.__class__ is str else f"a {type(version).__name__}"
        raise InputError(f"RunState schema version {shown} is not one this reader knows (1.0 to 1.21, those of "
                         "openai-agents 0.24.0)", source=doc.source, **where(location, "$schemaVersion"))
    return version


def conversation(state: dict, conversation_id: str, version: str) -> dict:
    """The canonical record of one RunState."""
    items = state["generated_items"] if isinstance(state["generated_items"], list) else []
    transcript = ApprovalTranscript(_decisions(state, items))
    original = state["original_input"]
    if isinstance(original, str):
        transcript.user(original)
    for item in original if isinstance(original, list) else ():
        add_item(transcript, item)
    for item in items:
        if not isinstance(item, dict):
            transcript.unreadable()
        elif item.get("type") != "tool_approval_item":
            add_item(transcript, item.get("raw_item"))
    agent = state.get("current_agent")
    metadata = {"schema_version": version,
                "agent": agent.get("name") if isinstance(agent, dict) else None}
    return chat_record({"conversation_id": conversation_id, "metadata": metadata}, transcript.record())


def _conversation_id(doc: Document, location) -> str:
    """The file's name less its suffix (a JSON object), ``line-N`` (JSON Lines), or the name and the place
    (``states[2]``, a JSON list)."""
    if doc.kind == "jsonl":
        return f"line-{location[1]}"
    return doc.path.stem + (location[1] if location[0] == "path" else "")


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    for location, state in records_of(doc, EXPECTS):
        if not _is_state(state):
            raise InputError(f"expected {EXPECTS}: a RunState has {', '.join(_KEYS)}", source=doc.source,
                             **where(location))
        version = _schema_version(state, doc, location)
        yield location[1], normalised(conversation(state, _conversation_id(doc, location), version), doc, location)
