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

A call that changes the state (``update``, ``create``) is also held to the domain's rules, as a real
system's would be, in this order:

1. the record is in a state that allows it (``require``);
2. it does not repeat a call that already succeeded: the same tool with the same arguments (strings
   compared trimmed and case-folded, numbers by value) is a duplicate request;
3. it changes something: an update whose constant ``set`` values the record already has (an account
   already ``closed``) is refused;
4. ``"within": [{"argument", "field", "table", "key"}]``: the ``argument`` (a positive number) added to
   what earlier successful calls drew on the same record field may not exceed the ``field`` of the record
   whose key is the ``key`` argument in ``table`` (default: the tool's own ``table`` and ``key``): a refund
   above the order's total or what is left of it, a transfer above the wallet's balance. A record
   without a numeric ``field`` sets no limit;
5. ``"dates": [arguments]``: each given argument is an ISO date (``YYYY-MM-DD``), not before ``today``
   (the domain's ``today``, the date the scenario's system prompt states), and they come in the order
   listed (a return date is not before the departure).

An error (unknown record, a missing argument, a broken rule) is returned as :class:`ToolFailure`, whose
message, plain like a real API's error, the task shows to the assistant as the tool's error; it never
names the scenario's label. Results are JSON text with sorted keys, so the same call on the same state
always reads the same.
"""
from __future__ import annotations

import copy
import datetime as dt
import json
import math

from ._data import APPROVER

__all__ = ["Backend", "ToolFailure"]


class ToolFailure(Exception):
    """A tool call the backend refuses; its message is what the assistant reads."""


def result_text(value) -> str:
    """The text of a result: JSON with sorted keys (deterministic)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _canonical(value):
    """``value`` as a duplicate request is compared: strings trimmed and case-folded, numbers by value."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    number = _number(value)
    if number is not None:
        return number
    return value.strip().casefold() if isinstance(value, str) else value


def _number(value) -> float | None:
    """A number or a numeric string as a float; None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _amount(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:.2f}"


def _thing(table: str) -> str:
    """What one record of ``table`` is called in a message: ``orders`` -> ``order``."""
    return table.rstrip("s")


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
    today : datetime.date, optional
        The scenario's today (its domain's ``today``): a ``dates`` argument before it is refused. Without
        it no date is in the past.
    """

    def __init__(self, tools, state: dict, approval: dict | None = None, *, today: dt.date | None = None):
        self.tools = {t.name: t for t in tools}
        self.state = copy.deepcopy(state)
        self.approval = approval or {"decision": "granted", "approver": APPROVER}
        self.today = today
        self.calls: list[tuple[str, dict]] = []
        self.handed_off = False
        self._counter = 0
        self._done: list[tuple[str, object]] = []        # (tool, canonical arguments) of each change made
        self._drawn: dict[tuple[str, str, str], float] = {}  # (table, key, field) -> amount drawn on it

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
        if spec["op"] not in ("update", "create"):
            return result_text(getattr(self, "_" + spec["op"])(spec, arguments))
        draws = self._admit(name, spec, arguments)
        result = result_text(getattr(self, "_" + spec["op"])(spec, arguments))
        self._done.append((name, _canonical(arguments)))
        for where, amount in draws:
            self._drawn[where] = self._drawn.get(where, 0.0) + amount
        return result

    def _record(self, spec, arguments):
        table = self.state.get(spec["table"], {})
        key = arguments.get(spec["key"])
        record = table.get(str(key)) if key is not None else None
        if record is None:
            raise ToolFailure(f"no {_thing(spec['table'])} with {spec['key']} {key!r}")
        return record

    def _admit(self, name, spec, arguments) -> list[tuple[tuple[str, str, str], float]]:
        """Refuse a change that the domain's rules forbid (the order of the module's list); return what it
        draws on each ``within`` limit."""
        record = self._record(spec, arguments) if "key" in spec else None
        for field, allowed in spec.get("require", {}).items():
            if record is not None and record.get(field) not in allowed:
                raise ToolFailure(f"cannot do this: {field} is {record.get(field)!r} "
                                  f"(needs {' or '.join(map(str, allowed))})")
        if (name, _canonical(arguments)) in self._done:
            raise ToolFailure(f"duplicate request: an identical {name} call has already been carried out")
        constants = {k: v for k, v in spec.get("set", {}).items() if not (isinstance(v, str) and v.startswith("$"))}
        if record is not None and constants and all(record.get(k) == v for k, v in constants.items()):
            held = " and ".join(f"{k} {v!r}" for k, v in constants.items())
            raise ToolFailure(f"nothing to change: {_thing(spec['table'])} {arguments[spec['key']]} already has {held}")
        draws = [self._draw(spec, limit, arguments) for limit in spec.get("within", [])]
        self._check_dates(spec.get("dates", []), arguments)
        return [d for d in draws if d is not None]

    def _draw(self, spec, limit, arguments) -> tuple[tuple[str, str, str], float] | None:
        """Check one ``within`` limit; return ``((table, key, field), amount)``, or None when the record sets no
        limit."""
        name = limit.get("argument")
        amount = _number(arguments.get(name))
        if amount is None or amount <= 0:
            raise ToolFailure(f"{name} must be a positive number")
        where = {"table": limit.get("table", spec.get("table")), "key": limit.get("key", spec.get("key"))}
        record = self._record(where, arguments)
        ceiling = _number(record.get(limit.get("field")))
        if ceiling is None:
            return None
        slot = (where["table"], str(arguments[where["key"]]), limit["field"])
        left = ceiling - self._drawn.get(slot, 0.0)
        if amount > left + 1e-9:
            raise ToolFailure(f"{name} {_amount(amount)} is more than the {limit['field']} available on "
                              f"{_thing(where['table'])} {slot[1]} ({_amount(max(left, 0.0))})")
        return slot, amount

    def _check_dates(self, names, arguments) -> None:
        """Each given date argument is an ISO date, not before ``today``, in the order of ``names``."""
        previous = None
        for name in names:
            value = arguments.get(name)
            if value in (None, ""):
                continue
            try:
                day = dt.date.fromisoformat(str(value).strip()[:10])
            except ValueError:
                raise ToolFailure(f"{name} must be a date as YYYY-MM-DD, not {value!r}") from None
            if self.today is not None and day < self.today:
                raise ToolFailure(f"{name} {day.isoformat()} is in the past (today is {self.today.isoformat()})")
            if previous is not None and day < previous[1]:
                raise ToolFailure(f"{name} {day.isoformat()} is before {previous[0]} {previous[1].isoformat()}")
            previous = (name, day)

    def _get(self, spec, arguments):
        return self._record(spec, arguments)

    def _update(self, spec, arguments):
        record = self._record(spec, arguments)
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
