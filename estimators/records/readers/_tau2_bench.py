"""tau2-bench results (``--format tau2-bench``).

tau2-bench writes one JSON file per run, ``{"info", "tasks", "simulations"}``, or (its
``dir`` format) a ``results.json`` without the simulations next to a ``simulations/``
folder of one JSON file each; give the file, the folder, or that ``results.json`` alone
(its simulations are then read from the folder beside it). A simulation is::

    {"id": "...", "task_id": "3", "trial": 0, "termination_reason": "user_stop",
     "reward_info": {"reward": 1.0, ...},
     "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"},
                  {"role": "user", "content": "...", "tool_calls": null},
                  {"role": "assistant", "content": null,
                   "tool_calls": [{"id": "c1", "name": "get_user_details",
                                   "arguments": {...}, "requestor": "assistant"}]},
                  {"role": "tool", "id": "c1", "content": "...", "requestor": "assistant"}, ...]}

- In tau2-bench the simulated user has tools of its own (telecom). Only calls whose
  ``requestor`` is the assistant (the default when absent) are calls of the record; a user
  message made only of the user's own tool calls does not speak to the assistant and opens
  no turn; tool results (also inside a ``tool_messages`` list) open none.
- The assistant's greeting before the first user message belongs to turn 0 (SPEC section 1).
- ``conversation_id`` is ``"{task_id}:{trial}"``, ``case_id`` the task id, ``replica`` the
  trial (when a run has no trial, its order among the runs of its task).
- The label comes from the task's gold actions ``evaluation_criteria.actions`` (those whose
  requestor is the assistant): ``ESC`` when one calls an escalation tool of the policy, else
  ``ACT``; a task without gold actions gives no label.
- A full-duplex (voice) simulation stored only as ``ticks`` has no message list to read
  and is kept without a record (``no_record``).
- ``metadata`` keeps ``reward``, ``simulation_id`` and ``termination_reason``.
- A simulation ended by a failure of the run, not of the assistant (``termination_reason`` one of
  :data:`RUN_ERRORS`: tau2-bench's ``agent_error``, ``user_error``, ``infrastructure_error``,
  ``unexpected_error`` and ``context_window_exceeded``) is ``run_error`` (SPEC section 3).
  tau2-bench itself leaves ``infrastructure_error`` and ``context_window_exceeded`` out of its
  denominators; an agent or user simulator that raised did not finish the conversation either.
  ``max_steps``, ``timeout`` and ``too_many_errors`` are limits of the task that the assistant
  reached: those records are scored.
- :func:`tool_annotations` gives the assistant's tools that the gold actions name, with the
  ``tool_type`` (``read``, ``write``, ``think``, ``generic``: tau2-bench's ``ToolType``) that
  each simulation's ``reward_info.action_checks`` gives them (``escalation policy init``).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from .._errors import InputError
from .._records import BOM
from ._chat import Transcript
from ._chat_records import chat_record, normalised, refuse_nested_id, where
from ._openai import add_messages
from ._source import Document, ReadOptions
from ._tau_bench import gold_label

__all__ = ["NAME", "EXPECTS", "sniff", "read", "tool_annotations", "RUN_ERRORS"]

#: tau2-bench's ``TerminationReason`` values that end a run by a failure of the harness (``run_error``).
RUN_ERRORS = frozenset({"agent_error", "user_error", "infrastructure_error", "unexpected_error",
                        "context_window_exceeded"})

NAME = "tau2-bench"
EXPECTS = "a tau2-bench results JSON {info, tasks, simulations} or its results folder"


def _by_assistant(item) -> bool:
    return not isinstance(item, dict) or item.get("requestor", "assistant") == "assistant"


def _flatten(messages):
    """Messages with each ``tool_messages`` list spread out, user tool traffic dropped."""
    for message in messages:
        if isinstance(message, dict) and isinstance(message.get("tool_messages"), list):
            yield from (m for m in message["tool_messages"] if _by_assistant(m))
        elif isinstance(message, dict) and message.get("role") == "tool":
            if _by_assistant(message):
                yield {**message, "tool_call_id": message.get("id")}
        elif isinstance(message, dict) and message.get("role") == "user":
            own_calls = isinstance(message.get("tool_calls"), list) and message["tool_calls"]
            text = message.get("content")
            if own_calls and not (isinstance(text, str) and text.strip()):
                continue  # the user acting on its own device, not speaking to the assistant
            yield {k: v for k, v in message.items() if k != "tool_calls"}
        else:
            yield message


def _load_json(path: Path):
    try:
        return orjson.loads(path.read_bytes().removeprefix(BOM))
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", source=str(path)) from None
    except orjson.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg})", source=str(path), line=err.lineno) from None


def _results(doc: Document):
    """``(results, [(source, json path, simulation), ...])`` of a file or a results folder."""
    if doc.kind == "dir":
        meta_path = doc.path / "results.json"
        results = _load_json(meta_path) if meta_path.exists() else {}
        sims_dir = doc.path / "simulations"
    elif doc.kind == "json" and _is_results(doc.data):
        results, sims_dir = doc.data, doc.path.parent / "simulations"
    else:
        raise InputError(f"expected {EXPECTS}", source=doc.source)
    if not isinstance(results, dict):
        raise InputError(f"expected {EXPECTS}", source=doc.source)
    listed = results.get("simulations")
    if isinstance(listed, list) and listed:
        return results, [(doc.source, f"simulations[{i}]", s) for i, s in enumerate(listed)]
    if listed not in (None, []) and not isinstance(listed, list):
        raise InputError("must be a list", source=doc.source, field="simulations")
    if not sims_dir.is_dir():
        raise InputError("holds no simulations, and no simulations/ folder lies beside it (tau2-bench's dir "
                         "format keeps them there): give the results folder, or the file that holds them",
                         source=doc.source, field="simulations")
    files = sorted(sims_dir.glob("*.json"))
    return results, [(str(f), "", _load_json(f)) for f in files]


def _gold_names(task) -> list | None:
    criteria = task.get("evaluation_criteria") if isinstance(task, dict) else None
    actions = criteria.get("actions") if isinstance(criteria, dict) else None
    if not isinstance(actions, list):
        return None
    return [a.get("name") for a in actions if isinstance(a, dict) and _by_assistant(a)]


def _is_results(data) -> bool:
    """Whether parsed JSON is a tau2-bench results object: ``simulations`` beside ``tasks`` or
    ``info``, or (the ``results.json`` of its dir format, without the simulations) ``info``
    with ``tasks``."""
    if not isinstance(data, dict):
        return False
    if "simulations" in data:
        return "tasks" in data or "info" in data
    return isinstance(data.get("info"), dict) and isinstance(data.get("tasks"), list)


def is_results_folder(path) -> bool:
    """Whether a folder is a tau2-bench results folder (``results.json``, or a ``simulations`` folder): one log."""
    return (Path(path) / "results.json").exists() or (Path(path) / "simulations").is_dir()


def sniff(doc: Document) -> bool:
    if doc.kind == "dir":
        return is_results_folder(doc.path)
    return doc.kind == "json" and _is_results(doc.data)


def read(doc: Document, options: ReadOptions) -> Iterator[tuple[int | str, dict]]:
    results, simulations = _results(doc)
    tasks = results.get("tasks") if isinstance(results.get("tasks"), list) else []
    gold = {str(t.get("id")): _gold_names(t) for t in tasks  # a task with a nested id gives no gold label
            if isinstance(t, dict) and not isinstance(t.get("id"), list | dict)}
    seen_trials: dict[str, int] = {}
    for source, path, sim in simulations:
        location = ("path", path)
        file_doc = doc if source == doc.source else Document(Path(source), "json")
        if not isinstance(sim, dict) or sim.get("task_id") is None:
            raise InputError("a simulation must be an object with a task_id", source=source, **where(location))
        refuse_nested_id(sim["task_id"], file_doc, location, "task_id")
        refuse_nested_id(sim.get("trial"), file_doc, location, "trial")
        task_id = str(sim["task_id"])
        trial = sim.get("trial")
        if trial is None:
            trial = seen_trials.get(task_id, 0)
        seen_trials[task_id] = seen_trials.get(task_id, 0) + 1
        names = gold.get(task_id)
        reward_info = sim.get("reward_info")
        record = {
            "conversation_id": f"{task_id}:{trial}",
            "case_id": task_id,
            "replica": trial,
            "label": gold_label(names, options.policy) if options.policy is not None else None,
            "metadata": {"reward": reward_info.get("reward") if isinstance(reward_info, dict) else None,
                         "simulation_id": sim.get("id"), "termination_reason": sim.get("termination_reason")},
        }
        reason = sim.get("termination_reason")
        if isinstance(reason, str) and reason in RUN_ERRORS:
            record["run_error"] = f"tau2-bench ended the simulation: {reason}"
        messages = sim.get("messages")
        if messages is None:
            canonical = chat_record(record, {"tool_calls": None, "messages": []})
        else:
            transcript = Transcript()
            if isinstance(messages, list):
                add_messages(transcript, _flatten(messages), call_filter=_by_assistant)
            else:
                transcript.unreadable()
            canonical = chat_record(record, transcript.record())
        place = path or f"simulations/{Path(source).name}"  # its JSON path, else its file
        yield place, normalised(canonical, file_doc, location, {"replica": "trial"})


def tool_annotations(doc: Document) -> dict[str, frozenset]:
    """The assistant's tools named by the gold actions, each with the tool types the results give it.

    A tool of a task's ``evaluation_criteria.actions`` (requestor the assistant) is named with no
    type unless a simulation's ``reward_info.action_checks`` checks it and gives its
    ``tool_type``. A tool given two types has both.

    Returns
    -------
    dict
        Tool name to a frozenset of lower-case types (``read``, ``write``, ``think``, ``generic``).
    """
    results, simulations = _results(doc)
    tasks = results.get("tasks") if isinstance(results.get("tasks"), list) else []
    found: dict[str, set] = {}
    for task in tasks:
        for name in _gold_names(task) or ():
            if isinstance(name, str) and name:
                found.setdefault(name, set())
    for _, _, sim in simulations:
        reward_info = sim.get("reward_info") if isinstance(sim, dict) else None
        checks = reward_info.get("action_checks") if isinstance(reward_info, dict) else None
        for check in checks if isinstance(checks, list) else ():
            action = check.get("action") if isinstance(check, dict) else None
            if not isinstance(action, dict) or not _by_assistant(action):
                continue
            name, kind = action.get("name"), check.get("tool_type")
            if isinstance(name, str) and name:
                types = found.setdefault(name, set())
                if isinstance(kind, str) and kind.strip():
                    types.add(kind.strip().lower().removeprefix("tooltype."))
    return {name: frozenset(types) for name, types in found.items()}
