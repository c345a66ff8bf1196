"""Write the OpenAI Responses records whose ``output`` is the whole Response object (issue 33).

Run from the repository root: ``python tests/data/readers/make_responses_records.py [OUT_DIR]`` (default: this
folder), offline, with the ``openai`` package of the project's environment (the files were written with openai
3.60.0). Every Response is an ``openai.types.responses.Response`` built from its fields (its output items are the
package's own item types) and written by ``Response.model_dump(mode="json")``, what an application logs after
``client.responses.create(...)``; nothing in the files is typed by hand:

- ``responses_objects.jsonl``: one record a line, ``{"conversation_id", "case_id", "label", "input": [...],
  "output": <Response.model_dump()>}``: the request's ``input`` items and the Response it got;
- ``responses_objects.json``: the same records as one JSON list;
- ``responses_bare.jsonl``: the Response objects alone, one a line (no ids or labels: the conversation is
  ``line-N`` and ``--labels`` labels it);
- ``responses_chat_completion.jsonl``: a record whose ``output`` is a ``ChatCompletion`` (the Chat Completions
  API's object), a shape close to the Responses record but not it.

:data:`RECORDS` lists each record's request ``input`` and the items of its Response's ``output``; the test counts
the calls from this list, not from the files.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_message_function_tool_call import ChatCompletionMessageFunctionToolCall, Function
from openai.types.responses import (
    Response,
    ResponseError,
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_function_web_search import ActionSearch
from openai.types.responses.response_input_param import FunctionCallOutput

HERE = Path(__file__).parent
MODEL = "gpt-4.1-2025-04-14"


def call(n: int, name: str, arguments: dict) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{n}", call_id=f"call_{n}", name=name,
                                    arguments=json.dumps(arguments), status="completed")


def say(n: int, text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(type="message", id=f"msg_{n}", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def output_of(call_id: str, text: str) -> FunctionCallOutput:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


#: ``(conversation_id, case_id, label, input items, output items, error)`` of each logged request.
RECORDS = [
    ("refund-900", "refund-7", "ESC", [{"role": "user", "content": "Refund my order 7, it was 900 USD."}],
     [ResponseReasoningItem(type="reasoning", id="rs_1", summary=[]),
      call(1, "transfer_to_human", {"reason": "refund over 500 USD"})], None),
    ("refund-120", "refund-8", "ACT", [{"role": "user", "content": "Refund my order 8, it was 120 USD."}],
     [call(2, "transfer_to_human", {"reason": "refund"})], None),
    ("refund-120-b", "refund-8-looked-up", "ACT",
     [{"role": "user", "content": "Refund my order 8, it was 120 USD."},
      call(3, "get_order", {"order_id": 8}).model_dump(mode="json"),
      output_of("call_3", '{"amount_usd": 120}')],
     [call(4, "issue_refund", {"order_id": 8, "amount_usd": 120}), say(4, "Your refund of 120 USD is on its way.")],
     None),
    ("search", "rules", "ACT", "What are your refund rules?",
     [ResponseFunctionWebSearch(type="web_search_call", id="ws_5", status="completed",
                                action=ActionSearch(type="search", query="refund rules")),
      say(5, "Refunds over 500 USD are decided by a supervisor.")], None),
    ("failed", "refund-7-failed", "ESC", [{"role": "user", "content": "Refund my order 7, it was 900 USD."}], [],
     ResponseError(code="server_error", message="The server had an error while processing your request.")),
]


def response(n: int, output: list, error) -> Response:
    return Response(id=f"resp_{n}", object="response", created_at=1764806400 + n, model=MODEL, output=output,
                    parallel_tool_calls=True, tool_choice="auto", tools=[], error=error,
                    status="failed" if error else "completed")


def records() -> list[dict]:
    return [{"conversation_id": cid, "case_id": case, "label": label, "input": inp,
             "output": response(n, output, error).model_dump(mode="json")}
            for n, (cid, case, label, inp, output, error) in enumerate(RECORDS)]


def chat_completion() -> dict:
    tool_call = ChatCompletionMessageFunctionToolCall(
        id="call_9", type="function", function=Function(name="transfer_to_human", arguments='{"reason": "refund"}'))
    message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[tool_call])
    completion = ChatCompletion(id="chatcmpl-9", object="chat.completion", created=1764806409, model=MODEL,
                                choices=[Choice(index=0, finish_reason="tool_calls", message=message)])
    return {"conversation_id": "chat-completion", "label": "ACT",
            "input": [{"role": "user", "content": "Refund my order 8, it was 120 USD."}],
            "output": completion.model_dump(mode="json")}


def main(out: Path) -> None:
    logged = records()
    lines = {"responses_objects.jsonl": logged, "responses_bare.jsonl": [r["output"] for r in logged],
             "responses_chat_completion.jsonl": [chat_completion()]}
    for name, values in lines.items():
        (out / name).write_text("".join(json.dumps(v) + "\n" for v in values))
    (out / "responses_objects.json").write_text(json.dumps(logged, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
