"""tau-bench result files (``--format tau-bench``, SPEC section 7).

A JSON list of runs, as tau-bench's ``run.py`` writes them::

    [{"task_id": 0, "trial": 0, "reward": 1.0,
      "info": {"task": {"user_id": "...", "actions": [{"name": "book_reservation", "kwargs": {...}}]}},
      "traj": [{"role": "system", ...}, {"role": "user", ...}, {"role": "assistant", ...}, ...]}]

- ``traj`` is an OpenAI chat transcript, read as :mod:`~estimators.records.readers._openai` reads
  one; its system message belongs to no turn.
- ``conversation_id`` is ``"{task_id}:{trial}"``, ``case_id`` the task id, ``replica`` the
  trial.
- The label comes from the gold actions ``info.task.actions``: ``ESC`` when one of them
  calls an escalation tool of the policy, else ``ACT``; no gold actions, no label.
- ``metadata`` keeps the benchmark's ``reward`` and the names of the gold actions.
"""
from __future__ import annotations

from collections.abc import Iterator

from .._errors import InputError
from .._vocabulary import ACT, ESC
from ._chat import Transcript
from ._chat_records import chat_record, normalised, records_of, refuse_nested_id, where
from ._markers import record_markers
from ._openai import add_messages
from ._source import Document, ReadOptions

__all__ = ["NAME", "EXPECTS", "sniff", "read", "gold_label"]

NAME = "tau-bench"
EXPECTS = "a JSON list of tau-bench runs {task_id, trial, traj, info.task.actions}"


def gold_label(action_names, policy) -> str | None:
    """``ESC`` when a gold action is an escalation tool of ``policy``, else ``ACT``.

    None when there are no gold actions to read (``action_names`` is None).
    """
    if action_names is None:
        return None
    return ESC if any(isinstance(name, str) and name in policy.escalation_tools for name in action_names) else ACT


def _gold_actions(run: dict):
    info = run.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    actions = task.get("actions") if isinstance(task, dict) else None
    if not isinstance(actions, list):
        return None
    return [a.get("name") for a in actions if isinstance(a, dict)]


def conversation(run: dict, policy, doc: Document, location) -> dict:
    task_id, trial = run.get("task_id"), run.get("trial", 0)
    refuse_nested_id(task_id, doc, location, "task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)):
        raise InputError(f"must be an integer or a string, got {task_id!r}", source=doc.source,
                         **where(location, "task_id"))
    refuse_nested_id(trial, doc, location, "trial")
    names = _gold_actions(run)
    record = {
        "conversation_id": f"{task_id}:{trial}",
        "case_id": str(task_id),
        "replica": trial,
        "label": gold_label(names, policy) if policy is not None else None,
        "metadata": {"reward": run.get("reward"), "gold_actions": names},
    }
    traj = run.get("traj")
    if traj is None:
        return chat_record(record, {"tool_calls": None, "messages": []})
    transcript = Transcript()
    if isinstance(traj, list):
        add_messages(transcript, traj)
    else:
        transcript.unreadable()
    return chat_record(record, transcript.record())


def sniff(doc: Document) -> bool:
    return record_markers(doc) == {"tau-bench"}


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    for location, run in records_of(doc, EXPECTS):
        if not isinstance(run, dict) or "task_id" not in run:
            raise InputError("a tau-bench run must be an object with task_id, trial and traj",
                             source=doc.source, **where(location))
        canonical = conversation(run, options.policy, doc, location)
        yield location[1], normalised(canonical, doc, location, {"replica": "trial"})
