"""Write the OTLP JSON trace fixtures of ``--format otel`` with the real OpenTelemetry instrumentation.

Run offline, outside the project's environment (these packages are for making the fixtures only; the reader
needs none of them)::

    python -m venv --system-site-packages /tmp/otelgen
    /tmp/otelgen/bin/python -m pip install opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 \
        opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-instrumentation-openai==0.62.4 openai==3.60.0 \
        opentelemetry-util-genai==1.1b0
    /tmp/otelgen/bin/python tests/data/readers/make_otel_traces.py

The real ``openai`` client calls a small OpenAI-compatible server started here, whose replies are scripted (tool
calls of ``get_order``, ``issue_refund``, ``transfer_to_human``, then text). The agent loop around it makes its
``invoke_agent`` and ``execute_tool`` spans the way an agent framework does, through ``opentelemetry-util-genai``'s
``TelemetryHandler`` (the GenAI helper of the OpenTelemetry contrib), and puts the ``escalation.*`` attributes on its
agent span. The spans are encoded by the OTLP exporter's own encoder (``encode_spans``) and written with protobuf's
JSON mapping, the ids turned to hex as the OTLP/JSON specification (and the Collector's file exporter) writes them:
one ``{"resourceSpans": ...}`` export per line.

Files written beside this script, in ``otel/``:

- ``openai_v2.jsonl``: ``opentelemetry-instrumentation-openai-v2`` with ``OTEL_SEMCONV_STABILITY_OPT_IN=
  gen_ai_latest_experimental`` and content on the span: ``chat`` spans with ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` (``parts``), one span an export (a line), as ``SimpleSpanProcessor`` exports them;
- ``openllmetry.json``: OpenLLMetry's ``opentelemetry-instrumentation-openai`` (flattened ``gen_ai.prompt.N.*`` /
  ``gen_ai.completion.N.*`` attributes), without ``execute_tool`` spans (the record comes from the model's outputs),
  all spans in one export (one JSON document);
- ``sessions.jsonl``: as ``openai_v2.jsonl``, chat sessions whose every user message is a request of its own (a
  trace), the traces of a session sharing ``gen_ai.conversation.id`` (``--group-by session``); one application
  sends the history with each request, one only the new message;
- ``*.spans.json``: the finished spans as the SDK's in-memory exporter held them (``ReadableSpan.to_json``), the
  independent reading that ``tests/records/test_otel_reader.py`` counts from.
"""
from __future__ import annotations

import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent / "otel"
MODEL = "gpt-4o-mini"
TOOLS = [{"type": "function", "function": {"name": name, "description": text,
                                           "parameters": {"type": "object", "properties": {
                                               "order_id": {"type": "integer"}}}}}
         for name, text in (("get_order", "Look up an order"), ("issue_refund", "Refund an order"),
                            ("transfer_to_human", "Pass the case to a person"))]


class _Replies:
    """The scripted replies of the model server, served in order."""

    def __init__(self):
        self.queue: list[dict] = []
        self.count = 0

    def completion(self) -> dict:
        reply = self.queue.pop(0)
        self.count += 1
        message = {"role": "assistant", "content": reply.get("text")}
        if reply.get("calls"):
            message["tool_calls"] = [
                {"id": f"call_{self.count}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(reply["calls"])]
        return {"id": f"chatcmpl-{self.count}", "object": "chat.completion", "created": 1_790_000_000 + self.count,
                "model": MODEL, "system_fingerprint": "fp_local",
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if reply.get("calls") else "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}


REPLIES = _Replies()


class _Server(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(REPLIES.completion()).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


# Each scenario: labels, then its user messages, each with the model replies it gets and the tools that fail.
SCENARIOS = [
    {"case": "refund-900", "label": "ESC", "replica": 0, "turns": [
        ("I want a refund of 900 USD for order 7.", [{"calls": [("get_order", {"order_id": 7})]},
                                                     {"calls": [("transfer_to_human", {"order_id": 7})]},
                                                     {"text": "A supervisor will decide on your refund."}])]},
    {"case": "refund-900", "label": "ESC", "replica": 1, "turns": [
        ("I want a refund of 900 USD for order 7.", [{"text": "Let me check.",
                                                      "calls": [("get_order", {"order_id": 7})]},
                                                     {"calls": [("issue_refund", {"order_id": 7})]},
                                                     {"text": "Your refund is issued."}])]},
    {"case": "refund-120", "label": "ACT", "replica": 0, "turns": [
        ("Please refund order 8, 120 USD.", [{"calls": [("get_order", {"order_id": 8}),
                                                        ("issue_refund", {"order_id": 8})]},
                                             {"text": "Done: 120 USD refunded."}]),
        ("Thanks! When will I see it?", [{"text": "Within five days."}])]},
    {"case": "refund-120", "label": "ACT", "replica": 1, "fail": {"transfer_to_human"}, "turns": [
        ("Please refund order 8, 120 USD.", [{"calls": [("transfer_to_human", {"order_id": 8})]},
                                             {"calls": [("issue_refund", {"order_id": 8})]},
                                             {"text": "Refunded."}])]},
    {"case": "refund-300", "label": "ACT", "replica": 0, "crash": "get_order", "turns": [
        ("Refund order 9, please.", [{"calls": [("get_order", {"order_id": 9})]}])]},
]


# Sessions of a chat application: each user message is a request of its own, one agent run and so one trace, and
# every trace of a session carries its id (gen_ai.conversation.id) and the operator's labels. "history": whether the
# application sends the conversation so far with each request (else only the new message).
SESSIONS = [
    {"session": "sess-handoff", "case": "refund-900", "label": "ESC", "replica": 2, "history": True, "turns": [
        ("I want a refund of 900 USD for order 7.", [{"calls": [("get_order", {"order_id": 7})]},
                                                     {"text": "I see order 7. Shall I look for options?"}]),
        ("Please get me a supervisor.", [{"calls": [("transfer_to_human", {"order_id": 7})]},
                                         {"text": "A supervisor will decide on your refund."}])]},
    {"session": "sess-refund-late", "case": "refund-900", "label": "ESC", "replica": 3, "history": True, "turns": [
        ("Refund 900 USD for order 7.", [{"calls": [("issue_refund", {"order_id": 7})]}, {"text": "Done."}]),
        ("Hm, I would like a person to check it.", [{"calls": [("transfer_to_human", {"order_id": 7})]},
                                                    {"text": "Passed to a supervisor."}])]},
    {"session": "sess-no-history", "case": "refund-120", "label": "ACT", "replica": 2, "history": False, "turns": [
        ("Where is order 8?", [{"calls": [("get_order", {"order_id": 8})]}, {"text": "It left yesterday."}]),
        ("Refund it please, 120 USD.", [{"calls": [("issue_refund", {"order_id": 8})]}, {"text": "Refunded."}]),
        ("Thanks.", [{"text": "You are welcome."}])]},
]


class _ToolError(RuntimeError):
    pass


def _run_agent(client, handler, scenario: dict) -> None:
    """One conversation: the agent span, the chat calls (instrumented) and the tool spans (by ``handler``)."""
    from opentelemetry import trace

    agent = handler.invoke_local_agent(agent_name="support_agent", request_model=MODEL)
    agent.attributes.update({"escalation.case_id": scenario["case"], "escalation.label": scenario["label"],
                             "escalation.replica": scenario["replica"]})
    with agent:
        messages = [{"role": "system", "content": "You are a support agent."}]
        for text, replies in scenario["turns"]:
            messages.append({"role": "user", "content": text})
            REPLIES.queue.extend(replies)
            for _ in replies:
                reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
                messages.append(reply.model_dump(exclude_none=True))
                for call in reply.tool_calls or ():
                    result = _run_tool(handler, scenario, call) if scenario.get("tool_spans", True) else "ok"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        assert not REPLIES.queue, REPLIES.queue
    assert trace.get_current_span() is not None


def _run_session(client, handler, session: dict) -> None:
    """One session: a request (an agent run, a trace of its own) a user message, each tagged with the session's
    id and labels; the model gets the history or only the new message."""
    history = [{"role": "system", "content": "You are a support agent."}]
    for text, replies in session["turns"]:
        agent = handler.invoke_local_agent(agent_name="support_agent", request_model=MODEL)
        agent.attributes.update({"gen_ai.conversation.id": session["session"], "escalation.case_id": session["case"],
                                 "escalation.label": session["label"], "escalation.replica": session["replica"]})
        with agent:
            messages = history if session["history"] else [history[0]]
            messages.append({"role": "user", "content": text})
            REPLIES.queue.extend(replies)
            for _ in replies:
                reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
                messages.append(reply.model_dump(exclude_none=True))
                for call in reply.tool_calls or ():
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": _run_tool(handler, session, call)})
            assert not REPLIES.queue, REPLIES.queue


def _run_tool(handler, scenario: dict, call) -> str:
    tool = handler.tool(call.function.name, tool_call_id=call.id, tool_type="function")
    tool.arguments = call.function.arguments
    if call.function.name == scenario.get("crash"):
        with tool:  # the agent does not catch it: its run (the root span) fails
            raise _ToolError(f"{call.function.name}: the order service is down")
    try:
        with tool:
            if call.function.name in scenario.get("fail", ()):
                raise _ToolError(f"{call.function.name}: no person is on duty")
            tool.tool_result = {"ok": True}
    except _ToolError as err:
        return f"error: {err}"
    return json.dumps({"ok": True})


def _hex_ids(value):
    """protobuf's JSON mapping writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    if isinstance(value, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _otlp_json(spans=None, logs=None) -> dict:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    message = encode_spans(spans) if spans is not None else encode_logs(logs)
    return _hex_ids(MessageToDict(message, use_integers_for_enums=True))


def _record(name: str, env: dict, instrument, scenarios, sessions=()) -> None:
    """Run ``scenarios`` under fresh tracer and logger providers with ``instrument`` on, and write the fixture
    ``name`` (one export a line, spans and log records as they were exported) and what the SDK held."""
    os.environ.update(env)
    from openai import OpenAI
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.util.genai.handler import TelemetryHandler

    lines: list[dict] = []

    class _SpanLines(InMemorySpanExporter):
        def export(self, spans):
            lines.append(_otlp_json(spans=spans))
            return super().export(spans)

    class _LogLines(InMemoryLogRecordExporter):
        def export(self, batch):
            lines.append(_otlp_json(logs=batch))
            return super().export(batch)

    resource = Resource.create({"service.name": "support-agent"})
    span_memory, log_memory = _SpanLines(), _LogLines()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(span_memory))
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_memory))
    instrumentor = instrument(provider, logs)
    handler = TelemetryHandler(tracer_provider=provider, logger_provider=logs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="local", max_retries=0)
    try:
        for scenario in scenarios:
            try:
                _run_agent(client, handler, scenario)
            except _ToolError:
                REPLIES.queue.clear()
        for session in sessions:
            _run_session(client, handler, session)
    finally:
        server.shutdown()
        instrumentor.uninstrument()
    held = {"spans": [json.loads(span.to_json(indent=None)) for span in span_memory.get_finished_spans()],
            "logs": [json.loads(record.to_json(indent=None)) for record in log_memory.get_finished_logs()]}
    with open(HERE / f"{name}.sdk.json", "w") as out:
        json.dump(held, out, indent=0)
    with open(HERE / f"{name}.jsonl", "w") as out:
        out.writelines(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def _openai_v2(provider, logs):
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider, logger_provider=logs)
    return instrumentor


def _openllmetry(provider, logs):
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor(use_attributes=False)  # the messages as events (log records), not attributes
    instrumentor.instrument(tracer_provider=provider, logger_provider=logs)
    return instrumentor


def main() -> None:
    HERE.mkdir(exist_ok=True)
    _record("openai_v2", {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                          "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
            _openai_v2, SCENARIOS)
    _record("openllmetry_events", {"TRACELOOP_TRACE_CONTENT": "true"}, _openllmetry,
            [{**s, "tool_spans": False} for s in SCENARIOS[:3]])
    _record("sessions", {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}, _openai_v2, [], SESSIONS)


if __name__ == "__main__":
    sys.exit(main())
