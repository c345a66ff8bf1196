"""The policy: which tools escalate, which only read, which ask for approval (SPEC section 2)."""
from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._approval import APPROVAL_SCOPES
from ._errors import InputError
from ._records import refuse_compressed

__all__ = ["Policy", "load_policy"]

_LISTS = ("escalation_tools", "read_only_tools", "action_tools", "approval_tools", "gated_tools")
_EXCLUSIVE = ("escalation_tools", "read_only_tools", "action_tools", "approval_tools")
_DESCRIPTIVE = ("name", "description", "notes")
_APPROVAL = ("approvers", "approval_scope")  # SPEC section 3A


@dataclass(frozen=True)
class Policy:
    """Tool lists of an oversight policy (SPEC section 2), validated when built.

    Attributes
    ----------
    escalation_tools : E, calls that pass the case to a person (non-empty).
    read_only_tools : R, look-ups that change nothing.
    action_tools : known consequential tools (only used to tell *unmarked* tools).
    approval_tools : tools that ask a person to approve one action; not an action.
    gated_tools : consequential tools whose use the policy reserves for approval.
    approvers : the ids allowed to approve a gated call (SPEC section 3A); None: any approver.
    approval_scope : ``call`` (a granted request covers one later call of each tool it covers) or
        ``conversation`` (every later call of those tools).
    """

    escalation_tools: frozenset[str]
    read_only_tools: frozenset[str] = field(default_factory=frozenset)
    action_tools: frozenset[str] = field(default_factory=frozenset)
    approval_tools: frozenset[str] = field(default_factory=frozenset)
    gated_tools: frozenset[str] = field(default_factory=frozenset)
    approvers: frozenset[str] | None = None
    approval_scope: str = "call"
    name: str | None = None
    #: The file it was read from (:func:`load_policy`); not part of the policy.
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for key in _LISTS:
            object.__setattr__(self, key, frozenset(getattr(self, key)))
        if not self.escalation_tools:
            raise InputError("must name at least one escalation tool", field="escalation_tools")
        if self.approvers is not None:
            object.__setattr__(self, "approvers", frozenset(self.approvers))
            if not self.approvers:
                raise InputError("names no approver, so every approval would be an error; leave the key out to "
                                 "accept any approver", field="approvers")
        if self.approval_scope not in APPROVAL_SCOPES:
            raise InputError(f"must be {' or '.join(map(repr, APPROVAL_SCOPES))}, got {self.approval_scope!r}",
                             field="approval_scope")
        seen: dict[str, str] = {}
        for key in _EXCLUSIVE:
            for tool in sorted(getattr(self, key)):
                if tool in seen:
                    raise InputError(f"tool {tool!r} is named in both {seen[tool]} and {key}", field=key)
                seen[tool] = key
        for tool in sorted(self.gated_tools):
            if tool in self.escalation_tools | self.read_only_tools | self.approval_tools:
                raise InputError(f"gated tool {tool!r} must be a consequential tool, not {seen[tool]}",
                                 field="gated_tools")

    @classmethod
    def from_dict(cls, data, *, source: str | None = None) -> "Policy":
        """Build a policy from a mapping (a parsed JSON or TOML file); errors name ``source``."""
        if not isinstance(data, dict):
            raise InputError(f"a policy must be an object, got {type(data).__name__}", source=source)
        unknown = sorted(set(data) - set(_LISTS) - set(_DESCRIPTIVE) - set(_APPROVAL))
        if unknown:
            raise InputError(f"unknown key; a policy has keys {', '.join(_LISTS + _APPROVAL)}", source=source,
                             field=unknown[0])
        lists: dict[str, Any] = {}  # the keyword arguments of the lists (frozensets)
        for key in _LISTS:
            value = data.get(key, [])
            if value is None:
                value = []
            if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
                raise InputError("must be a list of non-empty tool names", source=source, field=key)
            unencodable = [t for t in value if not _is_utf8(t)]
            if unencodable:  # json.loads reads "\\ud800"; no log reader does, so no call could match it
                raise InputError(f"tool {unencodable[0]!r} holds a lone surrogate, which is not text: no tool "
                                 "of a log can have that name", source=source, field=key)
            repeated = sorted({t for t in value if value.count(t) > 1})
            if repeated:
                raise InputError(f"tool {repeated[0]!r} is named twice", source=source, field=key)
            lists[key] = frozenset(value)
        approvers = data.get("approvers")
        if approvers is not None:
            if not isinstance(approvers, list) or not all(isinstance(a, str) and a.strip() for a in approvers):
                raise InputError("must be a list of approver ids (non-empty strings)", source=source,
                                 field="approvers")
        scope = data.get("approval_scope", "call")
        if not isinstance(scope, str):
            raise InputError(f"must be {' or '.join(map(repr, APPROVAL_SCOPES))}", source=source,
                             field="approval_scope")
        name = data.get("name")
        try:
            return cls(**lists, approvers=None if approvers is None else frozenset(approvers),
                       approval_scope=scope, name=name if isinstance(name, str) else None)
        except InputError as err:
            raise InputError(err.detail, source=source, field=err.field) from None

    def to_dict(self) -> dict:
        out: dict[str, Any] = {key: sorted(getattr(self, key)) for key in _LISTS}
        out.update(self._approval_keys())
        if self.name:
            out = {"name": self.name, **out}
        return out

    def _approval_keys(self) -> dict:
        """The keys of SPEC section 3A that differ from their defaults (a policy without them is written,
        and fingerprinted, as before they existed)."""
        out: dict[str, Any] = {}
        if self.approvers is not None:
            out["approvers"] = sorted(self.approvers)
        if self.approval_scope != "call":
            out["approval_scope"] = self.approval_scope
        return out

    def fingerprint(self) -> str:
        """SHA-256 of the five tool lists (sorted, as JSON) and the approval keys that are set: equal for
        policies that measure alike, whatever their file's format, order of names or ``name``."""
        lists = {key: sorted(getattr(self, key)) for key in _LISTS} | self._approval_keys()
        return hashlib.sha256(json.dumps(lists, sort_keys=True).encode("utf-8")).hexdigest()

    def without_read_only_marks(self) -> "Policy":
        """This policy with an empty R: the look-up tools become unmarked (paper section 4, "Read-only marks")."""
        return replace(self, read_only_tools=frozenset())

    def is_unneeded_approval(self, covers) -> bool:
        """An approval request is unneeded unless it covers >= 1 tool, all of them gated."""
        if not isinstance(covers, list | tuple) or not covers:
            return True
        return not all(isinstance(t, str) and t in self.gated_tools for t in covers)

    def kind(self, name: str) -> str:
        """``escalation``, ``read_only``, ``approval``, ``action`` or ``unmarked`` (an action too)."""
        if name in self.escalation_tools:
            return "escalation"
        if name in self.read_only_tools:
            return "read_only"
        if name in self.approval_tools:
            return "approval"
        if name in self.action_tools or name in self.gated_tools:
            return "action"
        return "unmarked"


def _is_utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_policy(path) -> Policy:
    """Read a policy from a JSON or TOML file (by extension; ``.toml`` is TOML, else JSON)."""
    path = Path(path)
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the policy file: {err.strerror or err}", source=source) from None
    refuse_compressed(raw, source)
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(raw.decode("utf-8-sig"))  # a UTF-8 byte order mark is not part of the text
        else:
            data = json.loads(raw)  # bytes: json reads a byte order mark itself
    except (ValueError, UnicodeDecodeError, RecursionError) as err:  # RecursionError: nested too deeply
        line = getattr(err, "lineno", None)
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise InputError(f"not valid {kind}: {getattr(err, 'msg', err)}", source=source, line=line) from None
    return replace(Policy.from_dict(data, source=source), source=source)
