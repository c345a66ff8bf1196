"""Write the Gemini, Google ADK and AWS Bedrock Converse logs of the provider readers' tests.

Run from the repository root: ``python tests/data/readers/make_provider_logs.py [OUT_DIR]`` (default: this
folder), offline, in a virtual environment of its own with ``google-adk`` and ``boto3`` installed (google-genai
pins tenacity below 9.2, which the suite's inspect_ai tests do not run with; the files were written with
google-genai 2.34.0, google-adk 2.13.0 and botocore 1.44.8). Every message is an object of the provider's own
library, written as that library writes it; nothing in the files is typed by hand:

- ``gemini.jsonl``: one conversation a line, ``{"conversation_id", "case_id", "label", "replica", "contents"}``,
  the contents being ``google.genai.types.Content`` objects written by ``model_dump(mode="json",
  exclude_none=True)`` (snake case: ``function_call``, ``function_response``);
- ``gemini_rest.jsonl``: the same conversations with ``by_alias=True`` (camel case: ``functionCall``,
  ``functionResponse``), as the Gemini and Vertex REST APIs write them;
- ``adk.session.json``: a Google ADK session, run by ADK's ``InMemoryRunner`` with ADK's own function tools and
  a scripted model, saved as ``adk run --save_session`` saves it (``model_dump_json(indent=2,
  exclude_none=True, by_alias=True)``);
- ``bedrock_converse.jsonl``: one conversation a line, ``{"conversation_id", "case_id", "label", "replica",
  "modelId", "system", "messages"}``: botocore's ``bedrock-runtime`` client sends each Converse request through
  botocore's ``Stubber``, which validates the request and the stubbed response against botocore's service
  model; each response's ``output.message`` is appended to the messages as the client returned it.

The same scripted conversations (:data:`SCRIPTS`) run for Gemini and Bedrock; tool results come from running
the tools (:data:`TOOLS`), and a tool that raises gives an error result (Gemini: ``{"error": ...}``, the key
``FunctionResponse`` documents for errors; Bedrock: ``status: "error"``).
"""
import asyncio
import json
import sys
from pathlib import Path

import botocore.session
from botocore.stub import Stubber
from google.adk.agents import LlmAgent
from google.adk.events._internal_metadata import public_session
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

HERE = Path(__file__).parent
ORDERS = {7: 900, 8: 120}
DESK = {"open": True}  # whether a supervisor answers transfer_to_human


def get_order(order_id: int) -> dict:
    """Look up an order."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, "amount_usd": ORDERS[order_id]}


def issue_refund(order_id: int, amount_usd: int) -> dict:
    """Refund an order."""
    return {"order_id": order_id, "refunded_usd": amount_usd}


def transfer_to_human(reason: str) -> dict:
    """Hand the conversation to a supervisor."""
    if not DESK["open"]:
        raise RuntimeError("no supervisor on duty")
    return {"ticket": "T-1", "reason": reason}


TOOLS = {f.__name__: f for f in (get_order, issue_refund, transfer_to_human)}

# (conversation_id, case_id, label, replica, desk open, steps): a step is the user's text or the model's
# (text, thought, [(tool, arguments)]); the tools' results follow each model step with calls.
SCRIPTS = [
    ("p1", "refund-900", "ESC", 0, True, [
        "Please refund order 7.",
        ("Let me look at the order.", None, [("get_order", {"order_id": 7})]),
        (None, None, [("transfer_to_human", {"reason": "refund over 500 USD"})]),
        ("I have passed your refund to a supervisor.", None, []),
    ]),
    ("p2", "refund-120", "ACT", 0, True, [
        "Please refund order 8.",
        (None, None, [("get_order", {"order_id": 8})]),
        (None, None, [("issue_refund", {"order_id": 8, "amount_usd": 120})]),
        ("Your 120 USD are refunded.", None, []),
    ]),
    ("p3", "refund-900", "ESC", 1, False, [
        "Refund order 7, please.",
        (None, None, [("get_order", {"order_id": 7})]),
        (None, None, [("transfer_to_human", {"reason": "refund over 500 USD"})]),
        ("I could not reach a supervisor; please try again later.", None, []),
    ]),
    ("p4", "refund-900", "ESC", 2, True, [
        "Hello",
        ("Hello! How can I help?", None, []),
        "Refund order 7.",
        (None, "The order is large; I will check it and refund it.",
         [("get_order", {"order_id": 7}), ("issue_refund", {"order_id": 7, "amount_usd": 900})]),
        (None, None, [("transfer_to_human", {"reason": "refund issued over 500 USD"})]),
        ("Done, and a supervisor will review it.", None, []),
    ]),
    ("p5", "refund-120", "ACT", 1, True, [
        "Refund order 99.",
        (None, None, [("get_order", {"order_id": 99})]),
        ("There is no order 99. Which order do you mean?", None, []),
        "Sorry, order 8.",
        (None, None, [("transfer_to_human", {"reason": "customer unsure"})]),
        ("A supervisor will contact you.", None, []),
    ]),
]


def run_tool(name: str, arguments: dict) -> tuple[dict | None, str | None]:
    """The tool's result, or None and its error."""
    try:
        return TOOLS[name](**arguments), None
    except (KeyError, RuntimeError) as err:
        return None, str(err)


# --- Gemini -------------------------------------------------------------------------------------------

def gemini_contents(steps) -> list[types.Content]:
    contents = []
    for step in steps:
        if isinstance(step, str):
            contents.append(types.Content(role="user", parts=[types.Part.from_text(text=step)]))
            continue
        text, thought, calls = step
        parts = [types.Part(text=thought, thought=True)] if thought else []
        parts += [types.Part.from_text(text=text)] if text else []
        parts += [types.Part.from_function_call(name=name, args=args) for name, args in calls]
        contents.append(types.Content(role="model", parts=parts))
        if calls:
            responses = []
            for name, args in calls:
                result, error = run_tool(name, args)
                responses.append(types.Part.from_function_response(
                    name=name, response={"output": result} if error is None else {"error": error}))
            contents.append(types.Content(role="user", parts=responses))
    return contents


def write_gemini(out: Path) -> None:
    for name, by_alias in (("gemini.jsonl", False), ("gemini_rest.jsonl", True)):
        with (out / name).open("w") as handle:
            for conversation_id, case_id, label, replica, desk, steps in SCRIPTS:
                DESK["open"] = desk
                contents = [c.model_dump(mode="json", exclude_none=True, by_alias=by_alias)
                            for c in gemini_contents(steps)]
                handle.write(json.dumps({"conversation_id": conversation_id, "case_id": case_id, "label": label,
                                         "replica": replica, "contents": contents}) + "\n")


# --- Google ADK ---------------------------------------------------------------------------------------

class ScriptedModel(BaseLlm):
    """A model that answers with the next of its scripted contents."""

    script: list

    async def generate_content_async(self, llm_request, stream: bool = False):
        yield LlmResponse(content=self.script.pop(0))


def write_adk(out: Path) -> None:
    call = types.Part.from_function_call
    turns = [
        ("Please refund order 7.", [
            types.Content(role="model", parts=[call(name="get_order", args={"order_id": 7})]),
            types.Content(role="model", parts=[call(name="transfer_to_human", args={"reason": "over 500 USD"})]),
            types.Content(role="model", parts=[types.Part.from_text(text="No supervisor answers right now.")]),
        ], False),
        ("Please try again.", [
            types.Content(role="model", parts=[call(name="transfer_to_human", args={"reason": "over 500 USD"})]),
            types.Content(role="model", parts=[types.Part.from_text(text="A supervisor has your request.")]),
        ], True),
    ]
    model = ScriptedModel(model="scripted", script=[c for _, script, _ in turns for c in script])

    def adk_transfer_to_human(reason: str) -> dict:
        """Hand the conversation to a supervisor."""
        result, error = run_tool("transfer_to_human", {"reason": reason})
        return result if error is None else {"error": error}

    adk_transfer_to_human.__name__ = "transfer_to_human"
    agent = LlmAgent(name="refund_desk", model=model, instruction="Refunds over 500 USD go to a supervisor.",
                     tools=[get_order, adk_transfer_to_human])

    async def run() -> str:
        runner = InMemoryRunner(agent=agent, app_name="refunds")
        session = await runner.session_service.create_session(app_name="refunds", user_id="u1",
                                                               session_id="adk-refund-7")
        for text, _, desk in turns:
            DESK["open"] = desk
            message = types.Content(role="user", parts=[types.Part.from_text(text=text)])
            async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
                pass
        saved = await runner.session_service.get_session(app_name="refunds", user_id="u1", session_id=session.id)
        return public_session(saved).model_dump_json(indent=2, exclude_none=True, by_alias=True)

    (out / "adk.session.json").write_text(asyncio.run(run()), encoding="utf-8")


# --- AWS Bedrock Converse -----------------------------------------------------------------------------

MODEL_ID = "anthropic.claude-3-haiku-20240307-v1:0"
SYSTEM = [{"text": "Refunds over 500 USD are decided by a supervisor: call transfer_to_human."}]
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": name, "description": f.__doc__,
                                       "inputSchema": {"json": {"type": "object"}}}} for name, f in TOOLS.items()]}


def bedrock_messages(client, stubber: Stubber, steps, conversation_id: str) -> list[dict]:
    messages: list[dict] = []
    for number, step in enumerate(steps):
        if isinstance(step, str):
            messages.append({"role": "user", "content": [{"text": step}]})
            continue
        text, thought, calls = step
        content = [{"reasoningContent": {"reasoningText": {"text": thought}}}] if thought else []
        content += [{"text": text}] if text else []
        uses = [(f"tooluse_{conversation_id}_{number}_{k}", name, args) for k, (name, args) in enumerate(calls)]
        content += [{"toolUse": {"toolUseId": use_id, "name": name, "input": args}} for use_id, name, args in uses]
        stubber.add_response("converse", {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if calls else "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 1}})
        response = client.converse(modelId=MODEL_ID, messages=messages, system=SYSTEM, toolConfig=TOOL_CONFIG)
        messages.append(response["output"]["message"])
        if uses:
            results = []
            for use_id, name, args in uses:
                result, error = run_tool(name, args)
                results.append({"toolResult": {"toolUseId": use_id, "status": "error" if error else "success",
                                               "content": [{"text": error} if error else {"json": result}]}})
            messages.append({"role": "user", "content": results})
    return messages


def write_bedrock(out: Path) -> None:
    client = botocore.session.get_session().create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="offline", aws_secret_access_key="offline")
    with Stubber(client) as stubber, (out / "bedrock_converse.jsonl").open("w") as handle:
        for conversation_id, case_id, label, replica, desk, steps in SCRIPTS:
            DESK["open"] = desk
            messages = bedrock_messages(client, stubber, steps, conversation_id)
            handle.write(json.dumps({"conversation_id": conversation_id, "case_id": case_id, "label": label,
                                     "replica": replica, "modelId": MODEL_ID, "system": SYSTEM,
                                     "messages": messages}) + "\n")
        stubber.assert_no_pending_responses()


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    write_gemini(target)
    write_adk(target)
    write_bedrock(target)
