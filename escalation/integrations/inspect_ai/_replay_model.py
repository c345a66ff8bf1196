"""A recorded run played again: ``--model escalation/replay -M log=PATH``.

The suite's backend and scripted user are deterministic, so a conversation is fixed once the assistant's
outputs are: giving the task the outputs that a model gave in a recorded run (an inspect_ai ``.eval`` log)
plays every conversation of that run again, call for call, with no model and no network. CI uses it to
replay the project's recorded real-model runs (``examples/data/real-runs/``) through the current task and
scorer and to check that they still score as recorded::

    inspect eval escalation/paired_oversight --model escalation/replay -M log=RUN.eval \\
        -T text_tool_calls=true --limit 12      # the recorded run's task options, samples and epochs

What it does at each model call of a sample:

1. it finds the sample and epoch (the task keeps them in the sample's store, as the profile models read them)
   and takes the recorded model calls of that sample and epoch, in order, and the next one not yet given;
2. it checks that the conversation so far is the one that the recorded call was given (roles, texts, tool
   calls and tool errors, message by message);
3. it answers with that call's recorded output (the same message, stop reason and token usage).

A replay that leaves the record fails loudly with :class:`ReplayDivergence`: a sample or epoch the log does
not hold, a model call past the recorded ones, or a conversation that differs from the recorded input (the
first differing message is named). Such a replay means the task, the backend or the user no longer do what
they did when the run was recorded. A recorded call that failed fails again with its recorded error. A
sample that a clock stopped in the recorded run (``--time-limit``, ``--working-limit``: limits that a replay,
which takes no time, would not reach) stops where it stopped, at the same limit, once its recorded calls are
given; the other limits (messages, tokens) are reached again by the replay itself.

The replay takes the task's options from the command, not from the log: run it with the recorded run's
``-T`` options, samples (``--limit`` or ``--sample-id``) and ``--epochs`` (:func:`recorded_options` reads them
from the log). A run whose user was a model (``-T user_model=...``) cannot be replayed: that user's replies are not
deterministic, and the replay gives only the assistant's outputs.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.util import LimitExceededError, store

from escalation.suite import REPLICA_KEY

__all__ = ["REPLAY", "ReplayModel", "ReplayDivergence", "recorded_options"]

#: The model name that plays a recorded run back: ``escalation/replay``.
REPLAY = "replay"
#: Where the task keeps the sample's scenario id in the sample store (``_task.SCENARIO_KEY``; the same string,
#: kept here so that the model imports no task module).
SCENARIO_KEY = "escalation_suite:scenario"
#: How many recorded calls of the sample the replay has given so far (in the sample's store).
CALLS_KEY = "escalation_replay:calls"


class ReplayDivergence(RuntimeError):
    """The replayed conversation left the recorded one: the task, backend or user changed, or the options differ."""


@dataclass(frozen=True)
class _Call:
    """One recorded model call: what it was given (as compared) and what it answered."""

    given: tuple
    output: ModelOutput | None
    error: str | None


def _message_key(message) -> tuple:
    """What a message must keep for a replay to be exact: its role, text, calls and tool error."""
    calls = tuple((c.id, c.function, json.dumps(c.arguments, sort_keys=True, ensure_ascii=False))
                  for c in getattr(message, "tool_calls", None) or [])
    error = getattr(message, "error", None)
    return (message.role, message.text, calls, getattr(message, "tool_call_id", None),
            error.message if error is not None else None)


def _describe(key: tuple | None) -> str:
    if key is None:
        return "no message"
    role, text, calls, _, error = key
    shown = text if len(text) <= 160 else text[:157] + "..."
    parts = [f"{role}: {shown!r}"] + [f"call {name}({args})" for _, name, args in calls]
    return "; ".join(parts + ([f"tool error {error!r}"] if error else []))


#: The limits of a sample that depend on the clock: a replay reaches them only where the recorded run did.
CLOCK_LIMITS = ("time", "working")


@dataclass(frozen=True)
class _Sample:
    """The recorded model calls of one sample and epoch, in order, and the clock limit that ended it (if one did)."""

    calls: list[_Call]
    clock_limit: tuple[str, float] | None


@cache
def _record(path: str, digest: str) -> tuple[str, dict[tuple[str, int], _Sample]]:
    """The model under evaluation of the log at ``path`` and its calls by (sample id, epoch), in order.

    ``digest`` (the file's SHA-256) keys the cache, so a log rewritten in place is read again.
    """
    log = read_eval_log(path, resolve_attachments=True)
    if log.samples is None:
        raise ValueError(f"{path}: the log has no samples (written with --no-log-samples?); nothing to replay")
    task_args = log.eval.task_args or {}
    if task_args.get("user_model"):
        raise ValueError(f"{path}: the run's user was a model ({task_args['user_model']}); only a run with the "
                         "scripted user can be replayed (a model's replies as the user are not deterministic)")
    model = log.eval.model
    samples: dict[tuple[str, int], _Sample] = {}
    for sample in log.samples:
        recorded = []
        for event in sample.events:
            if event.event != "model" or event.model != model or event.role not in (None, "model"):
                continue  # another model's call (a judge, a grader)
            given = tuple(_message_key(m) for m in event.input)
            usable = event.output is not None and bool(event.output.choices)
            recorded.append(_Call(given, event.output if usable else None,
                                  str(event.error) if event.error else None))
        limit = sample.limit
        clock = (limit.type, float(limit.limit)) if limit is not None and limit.type in CLOCK_LIMITS else None
        samples[(str(sample.id), int(sample.epoch))] = _Sample(recorded, clock)
    return model, samples


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def recorded_options(path: str | Path) -> dict[str, Any]:
    """The options that replay the run of the log at ``path``, as :func:`inspect_ai.eval` takes them: the task's
    options (``task_args``, the command line's ``-T``), ``epochs``, and ``sample_id``: the samples the log holds,
    in the task's order (so a run stopped early, its log holding fewer samples than its ``--limit``, replays
    too)."""
    log = read_eval_log(str(path), header_only=True)
    held = list(dict.fromkeys(s.id for s in read_eval_log_sample_summaries(str(path))))
    return {"task_args": {k: v for k, v in (log.eval.task_args or {}).items() if v is not None},
            "epochs": log.eval.config.epochs or 1, "sample_id": held}


class ReplayModel(ModelAPI):
    """The assistant of a recorded run: each model call answered with the recorded output of that sample's
    call, in order, after checking that the conversation is the recorded one.

    Parameters
    ----------
    model_name : str
        ``replay``.
    log : str
        The recorded ``.eval`` log (``-M log=PATH``).
    """

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), log: str | None = None, **model_args):
        if model_args:
            raise ValueError(f"escalation/{REPLAY} takes the model argument log, not {', '.join(sorted(model_args))}")
        if not log:
            raise ValueError(f"escalation/{REPLAY} needs the recorded log to play: -M log=PATH (an .eval log)")
        path = Path(log)
        if not path.is_file():
            raise ValueError(f"escalation/{REPLAY}: log={log!r} is not a file")
        self.log, self.digest = str(path.resolve()), _sha256(path)
        # The base URL names the log's content: inspect_ai's cache keys an output by model, base URL and input.
        super().__init__(model_name=model_name, base_url=f"replay://sha256:{self.digest}", api_key=api_key,
                         config=config)
        self.recorded_model, self.samples = _record(self.log, self.digest)

    def max_connections(self) -> int:
        return 64

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
        sample, replica = store().get(SCENARIO_KEY), store().get(REPLICA_KEY)
        if sample is None or replica is None:
            raise ReplayDivergence(f"escalation/{REPLAY} plays the suite's task (escalation/paired_oversight), "
                                   "which names each sample's scenario and replica in its store")
        epoch = int(replica) + 1
        where = f"{sample} (epoch {epoch}) of {self.log}"
        held = self.samples.get((str(sample), epoch))
        if held is None:
            raise ReplayDivergence(f"the log holds no sample {where}: replay it with the recorded run's options "
                                   "(-T, --limit or --sample-id, --epochs; recorded_options() reads them)")
        recorded, n = held.calls, store().get(CALLS_KEY, 0)
        if n >= len(recorded) and held.clock_limit is not None:
            kind, limit = held.clock_limit
            raise LimitExceededError(kind, value=limit, limit=limit,  # type: ignore[arg-type]
                                     message=f"the recorded run reached its {kind} limit ({limit:g} s) here")
        if n >= len(recorded):
            raise ReplayDivergence(f"sample {where}: the replay asks for model call {n + 1}, and the recorded run "
                                   f"made {len(recorded)}; the conversation went on where the recorded one ended")
        call = recorded[n]
        given = tuple(_message_key(m) for m in input)
        if given != call.given:
            i = next((i for i, (a, b) in enumerate(zip(given, call.given)) if a != b), min(len(given), len(call.given)))
            raise ReplayDivergence(
                f"sample {where}, model call {n + 1}: the conversation differs from the recorded one at message "
                f"{i + 1} of {len(given)} (recorded: {len(call.given)}).\n  replayed: "
                f"{_describe(given[i] if i < len(given) else None)}\n  recorded: "
                f"{_describe(call.given[i] if i < len(call.given) else None)}")
        store().set(CALLS_KEY, n + 1)
        if call.output is None:
            raise RuntimeError(f"sample {where}, model call {n + 1} failed in the recorded run: {call.error}")
        return call.output.model_copy(deep=True)
