"""A deterministic in-memory backend for a domain's tools: state, results and errors.

Each tool's ``backend`` names one operation, interpreted here on the scenario's state (a
mapping of tables, each a mapping of keys to records):

- ``{"op": "get", "table", "key"}``: the record whose key is the ``key`` argument;
- ``{"op": "update", "table", "key", "set": {...}, "require": {field: [allowed values]}}``: checks
  that the record exists and each ``require``d field has an allowed value, then sets ``set``
  (values may be ``"$argument"`` to copy an argument) and returns the updated record;
- ``{"op": "create", "table", "prefix"}``: a new record made of the arguments, with the id
  ``prefix`` + a counter;
- ``{"op": "verify", "table", "key", "match": [fields]}``: ``{"verified": true}`` when every named
  argument equals the record's field, else ``false`` (a failed check is a result, not an error);
- ``{"op": "handoff"}`` (the escalation tool): a ticket, and the conversation passes to a person;
- ``{"op": "approval"}`` (the approval tool): the supervisor's decision on the tools it ``covers``:
  ``{"approval_id", "covers", "decision", "approver"}`` and a denial's ``reason``, as the scenario's
  :attr:`~escalation.suite.Scenario.approval` says (``decision`` ``granted`` or ``denied`` and ``approver``
  are the fields of SPEC section 3A). The backend does not stop a gated call after a denial: whether the
  assistant respects the decision is what the suite measures.

An error (unknown record, a missing argument, a record in the wrong state) is returned as
:class:`ToolFailure`, which the task shows to the assistant as the tool's error. Results are JSON
text with sorted keys, so the same call on the same state always reads the same.
"""
from __future__ import annotations

import copy
import json

from ._data import APPROVER

__all__ = ["Backend", "ToolFailure"]


class ToolFailure(Exception):
    """A tool call the backend refuses; its message is what the assistant reads."""


def result_text(value) -> str:
    """The text of a result: JSON with sorted keys (deterministic)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Backend:
    """The state of one conversation and the tools that read and change it.

    Parameters
    ----------
    tools : iterable of :class:`~escalation.suite._data.Tool`
    state : dict
        The scenario's rendered state (copied: the scenario is never changed).
    approval : dict, optional
        The supervisor's answer to an approval request (:attr:`~escalation.suite.Scenario.approval`);
        default: granted by the supervisor.
    """

    def __init__(self, tools, state: dict, approval: dict | None = None):
        self.tools = {t.name: t for t in tools}
        self.state = copy.deepcopy(state)
        self.approval = approval or {"decision": "granted", "approver": APPROVER}
        self.calls: list[tuple[str, dict]] = []
        self.handed_off = False
        self._counter = 0

    def call(self, name: str, arguments: dict) -> str:
        """Run one call; returns the result text or raises :class:`ToolFailure`."""
        self.calls.append((name, dict(arguments)))
        tool = self.tools.get(name)
        if tool is None:
            raise ToolFailure(f"unknown tool {name!r}")
        required = tool.parameters.get("required", [])
        missing = [p for p in required if arguments.get(p) in (None, "")]
        if missing:
            raise ToolFailure(f"missing argument {missing[0]!r}")
        spec = tool.backend
        return result_text(getattr(self, "_" + spec["op"])(spec, arguments))

    def _record(self, spec, arguments):
        table = self.state.get(spec["table"], {})
        key = arguments.get(spec["key"])
        record = table.get(str(key)) if key is not None else None
        if record is None:
            raise ToolFailure(f"no {spec['table'].rstrip('s')} with {spec['key']} {key!r}")
        return record

    def _get(self, spec, arguments):
        return self._record(spec, arguments)

    def _update(self, spec, arguments):
        record = self._record(spec, arguments)
        for name, allowed in spec.get("require", {}).items():
            if record.get(name) not in allowed:
                raise ToolFailure(f"cannot do this: {name} is {record.get(name)!r} "
                                  f"(needs {' or '.join(map(str, allowed))})")
        for name, value in spec.get("set", {}).items():
            record[name] = arguments.get(value[1:]) if isinstance(value, str) and value.startswith("$") else value
        return record

    def _create(self, spec, arguments):
        self._counter += 1
        key = f"{spec['prefix']}{self._counter:03d}"
        record = {**{k: v for k, v in arguments.items()}, "id": key}
        self.state.setdefault(spec["table"], {})[key] = record
        return record

    def _verify(self, spec, arguments):
        record = self._record(spec, arguments)
        return {"verified": all(str(arguments.get(f, "")).strip().lower() == str(record.get(f, "")).strip().lower()
                                for f in spec["match"])}

    def _handoff(self, spec, arguments):
        self.handed_off = True
        self._counter += 1
        return {"ticket": f"H-{self._counter:03d}", "status": "transferred",
                "message": "A person takes over this conversation."}

    def _approval(self, spec, arguments):
        covers = arguments.get("covers")
        if not isinstance(covers, list) or not covers or not all(isinstance(c, str) for c in covers):
            raise ToolFailure("covers must name at least one tool")
        unknown = [c for c in covers if c not in self.tools]
        if unknown:
            raise ToolFailure(f"covers names an unknown tool {unknown[0]!r}")
        self._counter += 1
        return {"approval_id": f"AP-{self._counter:03d}", "covers": covers, **self.approval}
