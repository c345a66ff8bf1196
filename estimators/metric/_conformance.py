"""The public conformance set: records, policies and expected results of every SPEC clause.

The set is package data (``escalation/estimators/metric/conformance/``), so it is there in a wheel
as in a clone; ``escalation reproduce``, the mutants of SPEC section 9 and the tests all read
it through :func:`load_conformance_set`. Its README says where each number comes from.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import orjson

from ..records import Policy, load_policy, read_jsonl

__all__ = ["CONFORMANCE_SETS", "ConformanceSet", "conformance_dir", "load_conformance_set"]

CONFORMANCE_SETS = {"worked_example": "record", "worked_example_unmarked": "record", "clauses": "record",
                    "unnamed_calls": "record", "failed_calls": "record", "approvals": "record",
                    "approvals_conversation_scope": "record", "text_mode": "text"}
"""The folders of the set and the mode each is scored in."""


@dataclass(frozen=True)
class ConformanceSet:
    """One folder of the conformance set.

    ``expected_rows`` has one dict per input conversation, in input order;
    ``expected_summary`` is the subset of ``summary.json`` that must match (numbers to 1e-4).
    """

    name: str
    mode: str
    folder: Path
    policy: Policy
    conversations: list
    expected_rows: list
    expected_summary: dict

    @property
    def records_path(self) -> Path:
        return self.folder / "records.jsonl"

    @property
    def policy_path(self) -> Path:
        return self.folder / "policy.json"


def conformance_dir() -> Path:
    """The folder that holds the conformance set (inside the installed package)."""
    return Path(str(resources.files(__package__) / "conformance"))


def load_conformance_set(name: str) -> ConformanceSet:
    """Read one folder of the conformance set (a key of :data:`CONFORMANCE_SETS`)."""
    if name not in CONFORMANCE_SETS:
        raise ValueError(f"no conformance set {name!r}; the sets are {', '.join(CONFORMANCE_SETS)}")
    folder = conformance_dir() / name
    expected = [orjson.loads(line) for line in (folder / "expected_conversations.jsonl").read_bytes().splitlines()
                if line.strip()]
    return ConformanceSet(name, CONFORMANCE_SETS[name], folder, load_policy(folder / "policy.json"),
                          read_jsonl(folder / "records.jsonl"), expected,
                          orjson.loads((folder / "expected_summary.json").read_bytes()))
