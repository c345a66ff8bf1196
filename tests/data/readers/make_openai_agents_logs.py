"""Write what an OpenAI Agents SDK deployment saves of runs whose refunds wait for a person's approval.

Run from the repository root: ``python tests/data/readers/make_openai_agents_logs.py [OUT_DIR]`` (default: this
folder). It wrote, with openai-agents 0.24.0 (RunState schema 1.21), offline: the assistant is a scripted model
(:class:`ScriptedModel`, the SDK's ``Model`` interface), so no API key and no network are used, and tracing is off.
The SDK writes the files (nothing in them is typed by hand):

- ``openai_agents/NAME.json``: the run's ``RunState.to_string()``, the state a deployment keeps to resume a run
  (saved when the run ended, or, for ``refund-pending``, at the interruption, before anyone decided);
- ``openai_agents_items.jsonl``: one line per run, ``{"conversation_id": NAME, "items": result.to_input_list()}``
  (the history a deployment keeps for the next turn; the ``conversation_id`` is this script's).

The tool ``issue_refund`` has ``needs_approval=True``: each call stops the run with an interruption, which this
script approves or rejects on the saved state (``RunState.approve`` / ``reject``) before resuming it.
``get_order`` and ``transfer_to_human`` need no approval. The runs (:data:`RUNS`):

- ``refund-split``: two refunds in one response; the 900 USD one is rejected (the SDK's default message goes
  back to the model), the 120 USD one approved; the assistant then hands the case to a person;
- ``refund-always``: the first refund is approved with ``always_approve=True``, so the second one does not stop;
- ``refund-custom-reject``: rejected with a ``rejection_message`` of the deployment's own, then a hand-off;
- ``refund-pending``: the state saved at the interruption, with no decision yet;
- ``refund-followup``: two runs, the second given ``to_input_list()`` of the first plus a new user message (as a
  chat keeps its history); the first run's refund was rejected; the saved state is the second run's.
"""
import asyncio
import json
import sys
from pathlib import Path

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

HERE = Path(__file__).parent


def call(call_id: str, name: str, **arguments) -> ResponseFunctionToolCall:
    """A function call of the model's response."""
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{call_id}", call_id=call_id, name=name,
                                    arguments=json.dumps(arguments))


def say(item_id: str, text: str) -> ResponseOutputMessage:
    """An assistant message of the model's response."""
    return ResponseOutputMessage(id=item_id, type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class ScriptedModel(Model):
    """A model that answers each request with the next response of its script (a list of output items)."""

    def __init__(self, responses):
        self.responses = list(responses)

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None, **kwargs):
        return ModelResponse(output=self.responses.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the script runs without streaming")


@function_tool
def get_order(order_id: int) -> str:
    """Look an order up."""
    return json.dumps({"order_id": order_id, "status": "delivered"})


@function_tool(needs_approval=True)
def issue_refund(order_id: int, amount: float) -> str:
    """Refund an amount on an order."""
    return f"Refunded {amount:.2f} USD on order {order_id}."


@function_tool
def transfer_to_human(reason: str) -> str:
    """Pass the case to a person."""
    return "Transferred to the support desk."


#: Per run: the user's messages (one per ``Runner.run``), the model's responses in order, and the decision on
#: each interruption in order: ``approve``, ``always`` (``always_approve=True``), ``reject``, a rejection
#: message (``reject`` with it), or None (save the state at the interruption and stop).
RUNS = {
    "refund-split": (["Refund order 7 (900 USD) and order 8 (120 USD), please."], [
        [call("split_1", "get_order", order_id=7), call("split_2", "get_order", order_id=8)],
        [call("split_3", "issue_refund", order_id=7, amount=900), call("split_4", "issue_refund", order_id=8,
                                                                          amount=120)],
        [call("split_5", "transfer_to_human", reason="refund of 900 USD on order 7 not approved")],
        [say("split_6", "Order 8 is refunded; a colleague will decide on order 7.")],
    ], ["reject", "approve"]),
    "refund-always": (["Refund 100 USD on order 9 and 50 USD on order 10."], [
        [call("always_1", "issue_refund", order_id=9, amount=100)],
        [call("always_2", "issue_refund", order_id=10, amount=50)],
        [say("always_3", "Both refunds are done.")],
    ], ["always"]),
    "refund-custom-reject": (["I want 2000 USD back on order 11."], [
        [call("custom_1", "issue_refund", order_id=11, amount=2000)],
        [call("custom_2", "transfer_to_human", reason="refund of 2000 USD")],
        [say("custom_3", "A supervisor will decide on your refund.")],
    ], ["Refunds over 500 USD are decided by a supervisor."]),
    "refund-pending": (["Refund 700 USD on order 12."], [
        [call("pending_1", "issue_refund", order_id=12, amount=700)],
    ], [None]),
    "refund-followup": (["Refund 800 USD on order 13.", "Then pass me to someone who can."], [
        [call("followup_1", "issue_refund", order_id=13, amount=800)],
        [say("followup_2", "I could not refund order 13: the refund was not approved.")],
        [call("followup_3", "transfer_to_human", reason="refund of 800 USD on order 13")],
        [say("followup_4", "A colleague will take it from here.")],
    ], ["reject"]),
}


async def run(name: str) -> tuple[str, list]:
    """``(state, items)`` of a run: its saved ``RunState.to_string()`` and ``to_input_list()``."""
    messages, responses, decisions = RUNS[name]
    agent = Agent(name="support", instructions="Help the customer with orders and refunds.",
                  tools=[get_order, issue_refund, transfer_to_human], model=ScriptedModel(responses))
    decisions = list(decisions)
    history: list = []
    for message in messages:
        result = await Runner.run(agent, history + [{"role": "user", "content": message}])
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                decision = decisions.pop(0)
                if decision is None:
                    return state.to_string(), result.to_input_list()
                if decision in ("approve", "always"):
                    state.approve(item, always_approve=decision == "always")
                elif decision == "reject":
                    state.reject(item)
                else:
                    state.reject(item, rejection_message=decision)
            result = await Runner.run(agent, state)
        history = result.to_input_list()
    assert not decisions, f"{name}: decisions left over"
    return result.to_state().to_string(), history


async def main(out: Path) -> None:
    set_tracing_disabled(True)
    (out / "openai_agents").mkdir(parents=True, exist_ok=True)
    lines = []
    for name in RUNS:
        state, items = await run(name)
        (out / "openai_agents" / f"{name}.json").write_text(state + "\n")
        lines.append(json.dumps({"conversation_id": name, "items": items}))
        print(name, len(state), "bytes of state,", len(items), "items")
    (out / "openai_agents_items.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
