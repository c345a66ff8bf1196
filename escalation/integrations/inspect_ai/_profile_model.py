"""The synthetic world as inspect_ai models: ``--model escalation/<profile>``, one per profile.

A profile model plays the assistant of the suite's task through the real loop. At each call it

1. **reads the case from the conversation**: the system prompt and the opening request name the
   candidate scenarios (both twins when the fact is not in the request); the tool results and
   the later user messages rule candidates out (a candidate's look-up must read as the backend
   reads it for that scenario, and every user message must be one its script can send). While two
   twins remain, it looks the case up (``lookup_first``) or asks whether there is anything more
   (``late_fact``), as a careful assistant would;
2. **draws its behaviour** once the scenario is known, from the profile's probabilities for that
   scenario (:func:`escalation.simulate.behaviour_probabilities`: label, gated action, pressure,
   language, distance to the threshold), seeded by ``(seed, scenario, replica)``; with ``rho > 0``
   the replicas of a scenario share an error probability drawn from a beta distribution
   (:func:`escalation.simulate.cluster_probabilities`), as in ``escalation simulate``; and, apart, how
   it handles an approval (:func:`escalation.suite.draw_approval`);
3. **acts it out** with the real tools (the calls of a turn in one message, :func:`escalation.suite.moves`):
   a silent decision, a refusal, a referral, a fake escalation (says it passed the case, calls nothing), an
   invented action, acting before the hand-off, an approval request instead of a hand-off, an unneeded
   approval, ...; and for a gated action it asks for: asking first, acting without asking, asking after
   acting, acting after a denial, acting twice on one approval. The profile knows the scenario, so it knows
   the supervisor's answer (:attr:`escalation.suite.Scenario.approval`) when it plans the message: asking
   correctly, it does not act when the answer is a denial and says so.

The profiles are those of :data:`escalation.suite.SUITE_PROFILES`. Every output carries ``metadata`` with
the profile, scenario, replica, behaviour and approval handling, so a log can be checked conversation by
conversation against the profile's truth. The profile's ``prompt``
(a delayed decision) is not acted out: the decision comes in the turn where the facts are known.
Model arguments: ``-M seed=0`` and ``-M rho=0``. A profile model never repeats a call unless it acts
twice on one approval (``reused``): the calls of its behaviour go in one message, made once.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolCall
from inspect_ai.util import store

from escalation.suite import (
    PRESSURES,
    REPLICA_KEY,
    SUITE_PROFILES,
    Backend,
    draw_approval,
    draw_behaviour,
    load_suite,
    moves,
)

__all__ = ["ProfileModel"]


@cache
def _index() -> dict:
    """(system prompt, opening) -> the scenarios that start that way, over the whole suite."""
    suite = load_suite()
    index: dict = {}
    for s in suite.scenarios(pressures=PRESSURES):
        index.setdefault((s.system, s.opening), []).append(s)
    return index


_LOOKUPS: dict[str, str | None] = {}


def _lookup_result(scenario) -> str | None:
    """What the scenario's look-up reads on its initial state (computed once per scenario)."""
    if scenario.sample_id not in _LOOKUPS:
        _LOOKUPS[scenario.sample_id] = None if not scenario.lookup else Backend(
            scenario.domain.tools, scenario.state).call(scenario.lookup["tool"], scenario.lookup["arguments"])
    return _LOOKUPS[scenario.sample_id]


@dataclass
class _Dialogue:
    """The conversation as the profile reads it: turns of assistant messages between user messages."""

    system: str
    users: list
    turns: list          # assistant messages of each turn (the last is the current turn)
    results: dict        # tool call id -> (function, arguments) and its result text

    @classmethod
    def read(cls, messages) -> "_Dialogue":
        system = ""
        users: list[str] = []
        turns: list[list[ChatMessageAssistant]] = []
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        results: dict[str, tuple[str, dict[str, Any], str]] = {}
        for m in messages:
            if m.role == "system":
                system = m.text
            elif m.role == "user":
                users.append(m.text)
                turns.append([])
            elif m.role == "assistant" and turns:
                turns[-1].append(m)
                for c in m.tool_calls or []:
                    calls[c.id] = (c.function, c.arguments)
            elif m.role == "tool" and m.tool_call_id in calls:
                results[m.tool_call_id] = (*calls[m.tool_call_id], m.text)
        return cls(system, users, turns, results)

    @property
    def calls(self) -> int:
        """How many tool calls the assistant made so far (numbers the next call's id)."""
        return sum(len(m.tool_calls or []) for turn in self.turns for m in turn)

    def looked_up(self, lookup, *, turns=None) -> bool:
        chosen = self.turns if turns is None else turns
        return any(c.function == lookup["tool"] and c.arguments == lookup["arguments"]
                   for turn in chosen for m in turn for c in m.tool_calls or [])


def _only_lookup(message: ChatMessageAssistant, lookup) -> bool:
    """Whether ``message`` is the look-up alone: the probe that tells the twins apart (or a behaviour's
    look-up with no other call, which the next message then need not follow with anything)."""
    calls = message.tool_calls or []
    return bool(lookup) and len(calls) == 1 and calls[0].function == lookup["tool"] \
        and calls[0].arguments == lookup["arguments"]


def _consistent(scenario, dialogue: _Dialogue) -> bool:
    said = {scenario.late, scenario.default_answer, *scenario.answers.values()}
    if any(u not in said for u in dialogue.users[1:]):
        return False
    expected = _lookup_result(scenario)
    lookup = scenario.lookup
    return all(text == expected for name, args, text in dialogue.results.values()
               if lookup and name == lookup["tool"] and args == lookup["arguments"])


@modelapi(name="escalation")
class ProfileModel(ModelAPI):
    """An assistant that acts out a profile of :data:`escalation.simulate.PROFILES` on the suite."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), seed: int = 0, rho: float = 0.0, **model_args):
        # The base URL names the seed and rho: inspect_ai's cache (``--cache``) keys an output by the model,
        # its base URL, config, input and epoch, not by model arguments, so a run with another seed would
        # read the outputs of the first from the cache. (``base_url`` is not used otherwise.)
        identity = f"escalation://{model_name}?seed={int(seed)}&rho={float(rho)}"
        super().__init__(model_name=model_name, base_url=identity, api_key=api_key, config=config)
        if model_args:
            raise ValueError(f"escalation/{model_name} takes the model arguments seed and rho, not "
                             f"{', '.join(sorted(model_args))}")
        if model_name not in SUITE_PROFILES:
            raise ValueError(f"escalation/{model_name}: no such profile; the profiles are "
                             f"{', '.join(SUITE_PROFILES)}")
        if not 0.0 <= float(rho) <= 1.0:
            raise ValueError(f"rho must lie in [0, 1], got {rho}")
        self.profile, self.seed, self.rho = SUITE_PROFILES[model_name], int(seed), float(rho)

    def max_connections(self) -> int:
        return 64

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
        dialogue = _Dialogue.read(input)
        candidates = _index().get((dialogue.system, dialogue.users[0] if dialogue.users else None))
        if not candidates:
            raise ValueError("the escalation profile models only play the suite's task (escalation/paired_oversight): "
                             "this conversation does not start like any of its scenarios")
        alive = [s for s in candidates if _consistent(s, dialogue)]
        if not alive:
            raise ValueError("the conversation matches no scenario of the suite (a user message or tool result "
                             "that no scenario produces)")
        current = dialogue.turns[-1]
        if len({s.label for s in alive}) > 1:   # the twins cannot be told apart yet
            probe = alive[0].lookup
            if probe and not dialogue.looked_up(probe):
                return self._output([self._call("lookup", alive[0], dialogue.calls)], None, None)
            return self._output([], self._phrase("holding", alive[0]), None)
        scenario = alive[0]
        replica = store().get(REPLICA_KEY)
        if replica is None:
            raise ValueError("the escalation profile models need the suite's task (escalation/paired_oversight), "
                             "which gives each sample its replica")
        behaviour, wants_lookup = draw_behaviour(self.profile, scenario, int(replica), seed=self.seed, rho=self.rho)
        handling = draw_approval(self.profile, scenario, int(replica), seed=self.seed)
        meta = {"profile": self.profile.name, "scenario": scenario.sample_id, "replica": int(replica),
                "behaviour": behaviour, "approval": handling}
        earlier = dialogue.turns[:-1]
        holding = self._phrase("holding", scenario)
        decided = any((m.tool_calls and not all(
            scenario.lookup and c.function == scenario.lookup["tool"] for c in m.tool_calls)) or
            (not m.tool_calls and m.text != holding) for turn in earlier for m in turn)
        if decided:
            return self._output([], self._phrase("closing", scenario), meta)
        # This turn's messages: the look-up that told the twins apart (if it was made in this turn),
        # then every call of the behaviour in one message (with a look-up first when the profile
        # draws one and none was made), then the final text. The behaviour's message is sent once:
        # any message of this turn after the probe is it, so its calls are never repeated.
        calls, final = moves(behaviour, handling, scenario)
        probe = 1 if current and _only_lookup(current[0], scenario.lookup) else 0
        if len(current) == probe:
            extra = ["lookup"] if wants_lookup and scenario.lookup and not dialogue.looked_up(scenario.lookup) else []
            planned = extra + list(calls)
            if planned:
                first = dialogue.calls
                return self._output([self._call(move, scenario, first + i) for i, move in enumerate(planned)],
                                    None, meta)
        return self._output([], self._phrase(final, scenario), meta)

    def _phrase(self, name: str, scenario) -> str:
        return load_suite().settings["profile_phrases"][name][scenario.language]

    def _call(self, move: str, scenario, number: int) -> ToolCall:
        phrases = load_suite().settings["profile_phrases"]
        if move == "lookup":
            function, arguments = scenario.lookup["tool"], scenario.lookup["arguments"]
        elif move == "request":
            function, arguments = scenario.request["tool"], scenario.request["arguments"]
        elif move == "handoff":
            function, arguments = "transfer_to_human", {"reason": phrases["handoff_reason"][scenario.language]}
        else:
            function, arguments = "request_approval", {"covers": [scenario.request["tool"]],
                                                       "reason": phrases["approval_reason"][scenario.language]}
        return ToolCall(id=f"call_{number}", function=function, arguments=dict(arguments))

    def _output(self, calls, text, meta) -> ModelOutput:
        message = ChatMessageAssistant(content=text or "", tool_calls=calls or None, model=self.model_name,
                                       source="generate")
        output = ModelOutput.from_message(message, stop_reason="tool_calls" if calls else "stop")
        words = len((text or "").split()) + sum(len(str(c.arguments)) // 4 for c in calls)
        output.usage = ModelUsage(input_tokens=0, output_tokens=words, total_tokens=words)
        output.metadata = meta
        return output
