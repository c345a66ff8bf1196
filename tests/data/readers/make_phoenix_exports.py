"""Write the Arize Phoenix span exports of ``--format openinference`` with a real Phoenix server.

Run from the repository root, offline::

    python tests/data/readers/make_phoenix_exports.py [PHOENIX_PYTHON]

``PHOENIX_PYTHON`` (default ``/opt/phoenix-server/bin/python``) is a Python with ``arize-phoenix`` (the server,
20.26.1 for the files here); this script's Python needs ``arize-phoenix-client``, ``arize-phoenix-otel``,
``openinference-instrumentation-openai``, ``openai`` and ``pandas``. The server is started on free local ports with
its SQLite store in a temporary folder, and stopped at the end.

The traces are made as in ``tests/integrations/test_phoenix_roundtrip.py``: the ``openai`` client, instrumented by
``openinference-instrumentation-openai`` and registered to that Phoenix by ``phoenix.otel.register``, calls a
scripted OpenAI-compatible server started here, inside an AGENT span that carries ``escalation.case_id``,
``escalation.label`` and ``escalation.replica``; the tools run as TOOL spans of OpenInference's ``@tracer.tool``.
A tool that raises makes its TOOL span's status ERROR (the agent then tells the model); a tool whose error the agent
does not catch makes the AGENT span, the root, ERROR too. One trace more is a single CHAIN span (a health check):
not a conversation. :data:`SCENARIOS` states what each trace holds.

Files written beside this script, in ``phoenix/``, each read back from the server by Phoenix's own API or client:

- ``rest.json``: the answer of the REST API's ``GET /v1/projects/{project}/spans`` (``{"data": [...],
  "next_cursor": null}``), byte for byte;
- ``spans.jsonl``: ``Client.spans.get_spans(project_identifier=...)``, one span a line (``json.dumps``);
- ``dataframe.jsonl``: ``Client.spans.get_spans_dataframe(project_identifier=...)`` written by pandas'
  ``to_json(orient="records", lines=True)``, the times in epoch milliseconds (pandas' default up to 3.x);
- ``dataframe.json``: the same dataframe as one JSON list, ``to_json(orient="records", date_format="iso")``, the
  times in ISO 8601 (the default pandas announces).

Not written: Parquet. ``DataFrame.to_parquet`` (and ``phoenix.trace.TraceDataset.save``, which calls it) fails on
this dataframe (pyarrow cannot write the empty ``properties.order_id`` object of ``attributes.tool.parameters``), and
the scorer reads JSON only.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent / "phoenix"
PROJECT = "support-bot"
#: name: (case, label, replica, user messages, the assistant's replies in order (tool names, or a text), the tools
#: that fail (the agent tells the model), the tool whose failure the agent does not catch (the run fails)).
#: What each trace holds: the calls in order, one TOOL span each, those of the failing tools failed; the run of
#: ``crash`` ends at its failed ``get_order`` with the root span ERROR (``run_error``).
SCENARIOS = {
    "handoff": ("c-charged-twice", "ESC", 0, ["I was charged twice and I want a person."],
                [["transfer_to_human"], "A colleague will take it from here."], (), None),
    "refund-first": ("c-charged-twice", "ESC", 1, ["I was charged twice and I want a person."],
                     [["get_order"], ["issue_refund"], ["transfer_to_human"], "Refunded, and passed on."], (), None),
    "refund": ("c-late-parcel", "ACT", 0, ["My parcel is late, please refund order 7."],
               [["get_order", "issue_refund"], "Refunded."], (), None),
    "failed-handoff": ("c-late-parcel", "ACT", 1, ["Where is order 7?", "Then refund it please."],
                       [["get_order"], "It left yesterday.", ["transfer_to_human"], ["issue_refund"],
                        "Refunded: no colleague was free."], ("transfer_to_human",), None),
    "crash": ("c-lost-parcel", "ACT", 0, ["Order 9 never came."], [["get_order"]], (), "get_order"),
}


class _ToolError(RuntimeError):
    pass


def _free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Replies(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``POST /v1/chat/completions``: the reply of the scenario named by the system message,
    the one after as many as the request already holds."""

    def do_POST(self):  # noqa: N802 (the name http.server calls)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        scenario = SCENARIOS[body["messages"][0]["content"].removeprefix("scenario: ")]
        step = scenario[4][sum(m["role"] == "assistant" for m in body["messages"])]
        if isinstance(step, str):
            message, finish = {"role": "assistant", "content": step}, "stop"
        else:
            arguments = json.dumps({"order_id": 7})
            calls = [{"id": f"call_{os.urandom(4).hex()}", "type": "function",
                      "function": {"name": name, "arguments": arguments}} for name in step]
            message, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
        data = json.dumps({"id": f"chatcmpl-{os.urandom(4).hex()}", "object": "chat.completion", "created": 0,
                           "model": "scripted", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def _start_phoenix(python: str, folder: Path) -> tuple[subprocess.Popen, str]:
    """A Phoenix server on free local ports, its SQLite store in ``folder``; its process and URL once healthy."""
    import httpx

    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(folder), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    with (folder / "server.log").open("wb") as log:
        server = subprocess.Popen([python, "-m", "phoenix.server.main", "serve"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while server.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    _stop(server)
    raise SystemExit(f"Phoenix did not start: {(folder / 'server.log').read_text()[-2000:]}")


def _stop(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _send(url: str) -> tuple[dict[str, str], int]:
    """Run every scenario as an agent would, traced into Phoenix; ``{trace id: scenario}`` and the number of spans
    sent, once all are exported."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace import SpanProcessor
    from phoenix.otel import register

    class Count(SpanProcessor):
        def __init__(self):
            self.ended = 0

        def on_end(self, span):
            self.ended += 1

    model = ThreadingHTTPServer(("127.0.0.1", 0), _Replies)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    provider = register(endpoint=f"{url}/v1/traces", project_name=PROJECT, batch=False,
                        set_global_tracer_provider=False, verbose=False)
    count = Count()
    provider.add_span_processor(count, replace_default_processor=False)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("support-agent")
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{model.server_port}/v1", api_key="unused", max_retries=0)
    sent = {}
    try:
        for name, (case, label, replica, users, _, failing, crash) in SCENARIOS.items():
            tools = {tool: _tool(tracer, tool, tool in failing or tool == crash)
                     for tool in ("get_order", "issue_refund", "transfer_to_human")}
            try:
                with tracer.start_as_current_span("support-agent", openinference_span_kind="agent",
                                                  attributes={"escalation.case_id": case, "escalation.label": label,
                                                              "escalation.replica": replica}) as root:
                    sent[format(root.get_span_context().trace_id, "032x")] = name
                    _converse(client, tools, name, users, crash)
            except _ToolError:
                pass  # the run failed: its root span holds the error
        with tracer.start_as_current_span("health-check", openinference_span_kind="chain") as check:
            sent[format(check.get_span_context().trace_id, "032x")] = "health-check"
        provider.force_flush()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        model.shutdown()
    return sent, count.ended


def _tool(tracer, name: str, fails: bool):
    """The tool ``name`` as OpenInference's ``@tracer.tool`` makes it: one TOOL span a call."""
    def run_tool(order_id: int) -> str:
        if fails:
            raise _ToolError(f"{name}: the service is down for order {order_id}")
        return f"{name} done for order {order_id}"
    run_tool.__name__ = name
    return tracer.tool(name=name)(run_tool)


def _converse(client, tools: dict, name: str, users: list[str], crash: str | None) -> None:
    messages = [{"role": "system", "content": f"scenario: {name}"}]
    for user in users:
        messages.append({"role": "user", "content": user})
        while True:
            reply = client.chat.completions.create(model="scripted", messages=messages).choices[0]
            messages.append(reply.message.model_dump(exclude_none=True))
            if not reply.message.tool_calls:
                break
            for call in reply.message.tool_calls:
                try:
                    result = tools[call.function.name](**json.loads(call.function.arguments))
                except _ToolError as err:
                    if call.function.name == crash:
                        raise
                    result = f"error: {err}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def _export(url: str, sent: int) -> None:
    """Read the project's spans back through Phoenix's REST API and client, and write the export files."""
    import httpx
    from phoenix.client import Client

    deadline = time.monotonic() + 30
    while True:  # the server inserts the spans (and makes the project: 404 until then) a moment after it gets them
        answer = httpx.get(f"{url}/v1/projects/{PROJECT}/spans", params={"limit": 1000}, timeout=30)
        held = 0 if answer.status_code == 404 else len(answer.raise_for_status().json()["data"])
        if held == sent:
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"Phoenix holds {held} of the {sent} spans sent")
        time.sleep(0.5)
    (HERE / "rest.json").write_bytes(answer.content)
    phoenix = Client(base_url=url)
    spans = phoenix.spans.get_spans(project_identifier=PROJECT, limit=1000)
    (HERE / "spans.jsonl").write_text("".join(json.dumps(span) + "\n" for span in spans))
    frame = phoenix.spans.get_spans_dataframe(project_identifier=PROJECT, limit=1000)
    frame.to_json(HERE / "dataframe.jsonl", orient="records", lines=True, date_format="epoch")  # pandas' default
    frame.to_json(HERE / "dataframe.json", orient="records", date_format="iso")  # pandas' default to come
    print(f"{len(spans)} spans; dataframe columns: {', '.join(frame.columns)}")


def main(python: str) -> None:
    HERE.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="phoenix-") as folder:
        server, url = _start_phoenix(python, Path(folder))
        try:
            traces, spans = _send(url)
            _export(url, spans)
        finally:
            _stop(server)
    for trace, name in traces.items():
        print(trace, name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/opt/phoenix-server/bin/python")
