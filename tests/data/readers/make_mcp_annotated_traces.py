"""Write traces that carry MCP tool annotations, for ``escalation policy init`` (issue 33, point 5).

One MCP server, made with the MCP Python SDK (``mcp`` 2.3.0: ``MCPServer``, v1's ``FastMCP``), gives its tools the
annotations of :data:`TOOLS` (``ToolAnnotations``); a real MCP client lists them (``tools/list``) and calls them.
Three producers then write what they would log of the same runs (:data:`CONVERSATIONS`), offline, in ``mcp/``:

- ``responses_mcp.jsonl`` (``openai-responses``): one record a line, ``{"conversation_id", "input", "output":
  <Response.model_dump()>}``, as an application logs a Responses API call with a hosted MCP tool: the Response's
  output holds an ``mcp_list_tools`` item (openai-python's ``McpListTools``: each tool's name, ``input_schema``,
  description and the server's ``annotations``), an ``mcp_call`` item for each call and the reply. The listing is
  the in-process client's ``tools/list`` result (``mcp.Client(server)``), the calls' outputs its ``tools/call``
  results; written with openai 3.60.0's own types.
- ``openai_agents_state.json`` (``openai-agents``): the ``RunState.to_string()`` of an OpenAI Agents SDK run
  (openai-agents 0.24.0) of the first conversation, whose agent has a ``HostedMCPTool`` and whose scripted model
  (``make_openai_agents_logs.ScriptedModel``) answers with that Response's output items: the state keeps the
  listing as an ``mcp_list_tools_item``.
- ``pydantic_ai_otel.jsonl`` (``otel``): OTLP JSON spans of pydantic-ai's instrumentation (``pydantic-ai-slim``
  2.68.0), one export a line as ``SimpleSpanProcessor`` exports them: an ``Agent`` with an ``MCPToolset`` that
  runs this script as a stdio MCP server (``serve``), and a scripted model (``FunctionModel``) that makes the calls
  of :data:`CONVERSATIONS`. Its ``chat`` spans carry ``model_request_parameters``, whose ``function_tools[]``
  hold each MCP tool's ``metadata.annotations``; its ``gen_ai.tool.definitions`` hold no annotations.

Run from the repository root; the OTLP file needs pydantic-ai, for making the fixture only (the reader needs none
of these packages)::

    python -m venv --system-site-packages /tmp/mcpgen
    /tmp/mcpgen/bin/python -m pip install "pydantic-ai-slim[mcp]==2.68.0"
    /tmp/mcpgen/bin/python tests/data/readers/make_mcp_annotated_traces.py [OUT_DIR]

The tests read the expected placements from :data:`TOOLS`, not from the files.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "mcp"
SERVER = "support-desk"
SERVER_URL = "https://mcp.example/mcp"
MODEL = "gpt-4.1-2025-04-14"

#: Each tool of the server and the annotations it gives it (MCP's camelCase keys; None: no annotations).
TOOLS: dict[str, dict | None] = {
    "get_order": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    "fetch_invoice": {"readOnlyHint": True, "openWorldHint": False},  # read-only, though no look-up verb says so
    "get_or_create_ticket": {"readOnlyHint": False, "destructiveHint": False},  # a look-up verb, yet it writes
    "issue_refund": {"destructiveHint": True, "openWorldHint": True},
    "cancel_order": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    "transfer_to_human": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True},
    "delete_account": {"readOnlyHint": False, "destructiveHint": True},  # never called
    "search_kb": {"readOnlyHint": True},  # never called
    "list_refund_rules": None,  # never called, and not annotated
}

#: ``(conversation_id, user message, calls as (tool, arguments), reply)`` of each run.
CONVERSATIONS = [
    ("refund-8", "Refund my order 8, it was 120 USD.",
     [("get_order", {"order_id": 8}), ("fetch_invoice", {"order_id": 8}), ("get_or_create_ticket", {"order_id": 8}),
      ("issue_refund", {"order_id": 8})], "Your refund of 120 USD is on its way."),
    ("cancel-7", "Cancel my order 7 and refund the 900 USD.",
     [("get_order", {"order_id": 7}), ("cancel_order", {"order_id": 7}), ("transfer_to_human", {"order_id": 7})],
     "A colleague will decide on the refund of 900 USD."),
]


def server():
    """The MCP server: one tool of :data:`TOOLS` each, returning a short sentence."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    made = MCPServer(SERVER)

    def tool(name: str):
        def run(order_id: int = 0) -> str:
            return f"{name} done for order {order_id}"
        run.__name__ = name  # the name of its arguments' schema
        annotations = TOOLS[name]
        made.tool(name=name, description=name.replace("_", " ").capitalize() + ".",
                  annotations=ToolAnnotations.model_validate(annotations) if annotations else None)(run)

    for name in TOOLS:
        tool(name)
    return made


async def _responses() -> list:
    """The Responses of :data:`CONVERSATIONS`, the listing and the calls' outputs from a real MCP client."""
    from mcp import Client
    from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText
    from openai.types.responses.response_output_item import McpCall, McpListTools, McpListToolsTool
    from openai.types.responses.tool import Mcp

    responses = []
    async with Client(server()) as client:
        listed = (await client.list_tools()).tools
        for n, (conversation_id, text, calls, reply) in enumerate(CONVERSATIONS):
            tools = [McpListToolsTool(name=t.name, description=t.description, input_schema=t.input_schema,
                                      annotations=t.annotations.model_dump(mode="json", by_alias=True,
                                                                           exclude_none=True)
                                      if t.annotations else None) for t in listed]
            output: list = [McpListTools(type="mcp_list_tools", id=f"mcpl_{n}", server_label=SERVER, tools=tools)]
            for m, (name, arguments) in enumerate(calls):
                result = await client.call_tool(name, arguments)
                output.append(McpCall(type="mcp_call", id=f"mcp_{n}_{m}", server_label=SERVER, name=name,
                                      arguments=json.dumps(arguments), output=result.content[0].text,
                                      status="completed"))
            output.append(ResponseOutputMessage(type="message", id=f"msg_{n}", role="assistant", status="completed",
                                                content=[ResponseOutputText(type="output_text", text=reply,
                                                                            annotations=[])]))
            responses.append(Response(id=f"resp_{n}", object="response", created_at=1764806400 + n, model=MODEL,
                                      output=output, parallel_tool_calls=True, tool_choice="auto",
                                      tools=[Mcp(type="mcp", server_label=SERVER, server_url=SERVER_URL,
                                                 require_approval="never")], status="completed"))
    return responses


def _openai_agents_state(response) -> str:
    """The saved ``RunState`` of an OpenAI Agents SDK run whose model answers with ``response``'s output items."""
    from agents import Agent, HostedMCPTool, Runner, set_tracing_disabled
    from make_openai_agents_logs import ScriptedModel

    set_tracing_disabled(True)
    agent = Agent(name="support", model=ScriptedModel([response.output]),
                  tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": SERVER, "server_url": SERVER_URL,
                                                    "require_approval": "never"})])
    return Runner.run_sync(agent, CONVERSATIONS[0][1]).to_state().to_string()


def _otlp_line(spans) -> dict:
    """One OTLP/JSON export: the OTLP exporter's encoder, protobuf's JSON mapping, the ids in hex."""
    import base64

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    def hex_ids(value):
        if isinstance(value, dict):
            return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else hex_ids(v)
                    for k, v in value.items()}
        return [hex_ids(v) for v in value] if isinstance(value, list) else value

    return hex_ids(MessageToDict(encode_spans(spans), use_integers_for_enums=True))


def _pydantic_ai_lines() -> list[dict]:
    """The OTLP exports of pydantic-ai's instrumentation for :data:`CONVERSATIONS`, over a stdio MCP server."""
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    lines: list[dict] = []

    class _Lines(InMemorySpanExporter):
        def export(self, spans):
            lines.append(_otlp_line(spans))
            return super().export(spans)

    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(_Lines()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    for _, text, calls, reply in CONVERSATIONS:
        def scripted(messages, info, calls=calls, reply=reply):
            if len(messages) == 1:  # the user's request: every call at once
                return ModelResponse(parts=[ToolCallPart(name, arguments) for name, arguments in calls])
            return ModelResponse(parts=[TextPart(reply)])

        toolset = MCPToolset(Client(StdioTransport(command=sys.executable, args=[str(Path(__file__).resolve()),
                                                                                  "serve"])))
        Agent(FunctionModel(scripted, model_name=MODEL), toolsets=[toolset]).run_sync(text)
    return lines


def main(out: Path) -> None:
    import anyio

    out.mkdir(exist_ok=True)
    responses = anyio.run(_responses)
    (out / "responses_mcp.jsonl").write_text("".join(
        json.dumps({"conversation_id": conversation[0], "input": [{"role": "user", "content": conversation[1]}],
                    "output": response.model_dump(mode="json")}) + "\n"
        for conversation, response in zip(CONVERSATIONS, responses)))
    (out / "openai_agents_state.json").write_text(_openai_agents_state(responses[0]))
    lines = _pydantic_ai_lines()
    (out / "pydantic_ai_otel.jsonl").write_text("".join(json.dumps(line, separators=(",", ":")) + "\n"
                                                        for line in lines))


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:  # the stdio MCP server that pydantic-ai's MCPToolset starts
        server().run()
    else:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
