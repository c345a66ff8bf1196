"""OpenInference spans (Arize Phoenix's REST shape) as conversations: ``estimators.records.readers._openinference``.

The shapes of the spans are those Phoenix returns (``GET /v1/projects/{project}/spans``); the last test makes them
with the real instrumentation (``openinference-instrumentation-openai`` and OpenInference's ``@tracer.tool``) and
counts the calls independently, from the raw attributes.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from escalation.estimators.records.readers._openinference import genai_attributes, openinference_conversation

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=timezone.utc)


def span(span_id, kind, at, attributes=None, *, parent="root", name=None, status="OK", message=""):
    """A span as Phoenix's REST API returns it, ``at`` seconds after T0, lasting one second."""
    return {"name": name or kind.lower(), "context": {"trace_id": "t1", "span_id": span_id},
            "parent_id": None if span_id == "root" else parent, "span_kind": kind,
            "start_time": (T0 + timedelta(seconds=at)).isoformat(),
            "end_time": (T0 + timedelta(seconds=at + 1)).isoformat(), "status_code": status,
            "status_message": message, "attributes": attributes or {}}


def llm(span_id, at, inputs, outputs):
    """An LLM span with flattened messages: each ``(role, text or None, [(call id, tool)...])``."""
    attrs = {}
    for prefix, messages in (("llm.input_messages", inputs), ("llm.output_messages", outputs)):
        for i, (role, text, calls) in enumerate(messages):
            attrs[f"{prefix}.{i}.message.role"] = role
            if text is not None:
                attrs[f"{prefix}.{i}.message.content"] = text
            for j, (call_id, tool) in enumerate(calls):
                key = f"{prefix}.{i}.message.tool_calls.{j}.tool_call"
                attrs.update({f"{key}.function.name": tool, f"{key}.function.arguments": '{"order_id": 7}'})
                if call_id is not None:
                    attrs[f"{key}.id"] = call_id
    return span(span_id, "LLM", at, attrs)


def tool(span_id, at, name, call_id=None, **kw):
    attrs = {"tool.name": name, "input.value": '{"order_id": 7}'}
    if call_id is not None:
        attrs["tool_call.id"] = call_id
    return span(span_id, "TOOL", at, attrs, **kw)


ROOT = span("root", "AGENT", 0, {"escalation.case_id": "c1", "escalation.label": "ESC", "escalation.replica": 2,
                                 "session.id": "s-9"}, name="support-agent")
USER = ("user", "I was charged twice.", [])


def calls(conversation):
    return [(c["name"], c["turn"], c.get("failed", False)) for c in conversation["tool_calls"]]


def test_a_call_requested_and_run_is_one_call_each_on_its_span():
    spans = [ROOT, llm("m1", 1, [USER], [("assistant", None, [("k1", "get_order")])]),
             tool("x1", 3, "get_order", "k1"),
             llm("m2", 5, [USER], [("assistant", None, [("k2", "transfer_to_human")])]),
             tool("x2", 7, "transfer_to_human", "k2"),
             llm("m3", 9, [USER], [("assistant", "A colleague will call you.", [])])]
    conversation = openinference_conversation("t1", reversed(spans))  # any order
    assert calls(conversation) == [("get_order", 0, False), ("transfer_to_human", 0, False)]
    assert (conversation["case_id"], conversation["label"], conversation["replica"]) == ("c1", "ESC", 2)
    metadata = conversation["metadata"]
    assert metadata["root_span_id"] == "root" and metadata["session_id"] == "s-9"
    assert metadata["otel"]["call_spans"] == ["x1", "x2"] and metadata["otel"]["turn_spans"] == ["m1"]
    assert [m["text"] for m in conversation["messages"]] == ["I was charged twice.", "A colleague will call you."]


def test_without_ids_a_tool_span_is_the_earliest_request_of_its_tool_and_unrequested_runs_count():
    spans = [ROOT, llm("m1", 1, [USER], [("assistant", None, [(None, "get_order"), (None, "issue_refund")])]),
             tool("x1", 3, "get_order"), tool("x9", 4, "lookup_faq", status="ERROR", message="timeout")]
    conversation = openinference_conversation("t1", spans)
    # issue_refund was requested and never run: still a call (an attempted call is a call, SPEC section 1)
    assert sorted(calls(conversation)) == [("get_order", 0, False), ("issue_refund", 0, False),
                                           ("lookup_faq", 0, True)]


def test_two_turns_and_a_root_span_in_error():
    second = ("user", "Refund it then.", [])
    spans = [span("root", "CHAIN", 0, status="ERROR", message="agent crashed"),
             llm("m1", 1, [USER], [("assistant", "Let me look.", [("k1", "get_order")])]),
             llm("m2", 5, [USER, ("assistant", None, [("k1", "get_order")]), second],
                 [("assistant", None, [("k2", "issue_refund")])])]
    conversation = openinference_conversation("t1", spans)
    assert calls(conversation) == [("get_order", 0, False), ("issue_refund", 1, False)]
    assert conversation["assistant_turns"] == 2 and conversation["run_error"] == "agent crashed"
    assert conversation["metadata"]["otel"]["turn_spans"] == ["m1", "m2"]


def test_nested_attributes_content_parts_and_the_older_function_call():
    nested = {"openinference": {"span": {"kind": "LLM"}}, "llm": {
        "input_messages": [{"message": {"role": "user", "contents": [
            {"message_content": {"type": "text", "text": "Where is"}},
            {"message_content": {"type": "image", "image": {"url": "x"}}},
            {"message_content": {"type": "text", "text": "order 7?"}}]}}],
        "output_messages": [{"message": {"role": "assistant", "function_call_name": "get_order",
                                         "function_call_arguments_json": '{"order_id": 7}'}}]}}
    attrs = genai_attributes(nested)
    assert attrs["gen_ai.operation.name"] == "chat"
    conversation = openinference_conversation("t1", [span("root", "UNKNOWN", 0, nested)])
    assert calls(conversation) == [("get_order", 0, False)]
    assert conversation["tool_calls"][0]["arguments"] == {"order_id": 7}
    assert conversation["messages"][0]["text"] == "Where is\norder 7?"


def test_a_tool_span_reads_its_name_and_arguments_where_openinference_puts_them():
    assert genai_attributes({"tool_call.function.name": "get_order", "tool_call.function.arguments": "{}",
                             "tool_call.id": "k1", "input.value": "ignored"}, "TOOL") == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order", "gen_ai.tool.call.id": "k1",
        "gen_ai.tool.call.arguments": "{}"}
    assert genai_attributes({"openinference.span.kind": "CHAIN", "escalation.label": "ACT"}) == {
        "escalation.label": "ACT"}


def test_a_trace_with_no_llm_agent_or_tool_span_is_not_a_conversation():
    assert openinference_conversation("t1", [span("root", "CHAIN", 0), span("r", "RETRIEVER", 1)]) is None


def test_spans_of_the_real_instrumentation(tmp_path):
    """openinference-instrumentation-openai on a scripted model and ``@tracer.tool``, exported in memory and put
    in Phoenix's shape; the calls counted from the raw attributes (each TOOL span, and each requested call no TOOL
    span ran) are the conversation's."""
    pytest.importorskip("openinference.instrumentation.openai",
                        reason="openinference-instrumentation-openai is not installed")
    import httpx
    import openai
    from openinference.instrumentation import TracerProvider
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    replies = iter([[("get_order", "k1"), ("issue_refund", "k2")], [("transfer_to_human", "k3")], "Passed on."])

    def model(request: httpx.Request) -> httpx.Response:
        step = next(replies)
        message = {"role": "assistant", "content": step} if isinstance(step, str) else {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": '{"order_id": 7}'}}
                for n, i in step]}
        return httpx.Response(200, json={"id": "r", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("agent")
        client = openai.OpenAI(api_key="x", base_url="http://model/v1",
                               http_client=httpx.Client(transport=httpx.MockTransport(model)))

        @tracer.tool(name="get_order")
        def get_order(order_id: int) -> str:
            return "shipped"

        with tracer.start_as_current_span("agent", openinference_span_kind="agent",
                                          attributes={"escalation.label": "ESC"}):
            messages = [{"role": "user", "content": "I was charged twice."}]
            while True:
                reply = client.chat.completions.create(model="m", messages=messages).choices[0].message
                messages.append(reply.model_dump(exclude_none=True))
                if not reply.tool_calls:
                    break
                for call in reply.tool_calls:  # only get_order is traced as a TOOL span
                    result = get_order(7) if call.function.name == "get_order" else "done"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    finally:
        instrumentor.uninstrument()

    def iso(ns):
        return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat()

    spans = [{"name": s.name, "context": {"trace_id": format(s.context.trace_id, "032x"),
                                          "span_id": format(s.context.span_id, "016x")},
              "parent_id": format(s.parent.span_id, "016x") if s.parent else None,
              "span_kind": s.attributes.get("openinference.span.kind"), "start_time": iso(s.start_time),
              "end_time": iso(s.end_time), "status_code": s.status.status_code.name,
              "attributes": dict(s.attributes)} for s in exporter.get_finished_spans()]
    ran = [s["attributes"]["tool.name"] for s in spans if s["span_kind"] == "TOOL"]
    requested = [v for s in spans for k, v in s["attributes"].items()
                 if k.startswith("llm.output_messages.") and k.endswith(".tool_call.function.name")]
    unrun = list(requested)
    for name in ran:
        unrun.remove(name)
    conversation = openinference_conversation(spans[0]["context"]["trace_id"], spans)
    assert sorted(c["name"] for c in conversation["tool_calls"]) == sorted(ran + unrun)
    assert [c["name"] for c in conversation["tool_calls"]] == ["get_order", "issue_refund", "transfer_to_human"]
    assert conversation["label"] == "ESC" and json.dumps(conversation)
