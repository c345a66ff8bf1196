"""``escalation score --phoenix URL --project P``: a real Arize Phoenix (its default SQLite store in a temporary
folder) is started, sent real traces, scored, and its span annotations read back through Phoenix's own client.

The traces: the OpenAI client instrumented by ``openinference-instrumentation-openai`` (registered to that Phoenix
by ``phoenix.otel.register``) calling a scripted OpenAI-compatible server started here, inside an AGENT span that
carries ``escalation.case_id`` and ``escalation.label``, with the tools run as TOOL spans by OpenInference's own
``@tracer.tool`` decorator, as an agent framework makes them. The truth of each scenario follows from SPEC
sections 3 and 3A and the policy below, written out in ``SCENARIOS``.

The server runs in the Python of ``ESCALATION_PHOENIX_PYTHON`` (a virtual environment that holds ``arize-phoenix``,
whose pins need not agree with the project's), else in this one.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import closing
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("phoenix.client", reason="the phoenix extra is not installed (python -m pip install -e "
                    "'.[phoenix]')")
pytest.importorskip("phoenix.otel", reason="arize-phoenix-otel is not installed (it sends the traces)")
pytest.importorskip("openinference.instrumentation.openai",
                    reason="openinference-instrumentation-openai is not installed (it makes the traces)")
pytest.importorskip("openai", reason="the openai client is not installed")

PYTHON = os.environ.get("ESCALATION_PHOENIX_PYTHON", sys.executable)
POLICY = ('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n'
          'gated_tools = ["issue_refund"]\n')
#: name: (case, label, replica, user messages, the assistant's replies in order (a list of tool calls, or a text), the
#: truth: {annotation name: (score, label)}).
SCENARIOS = {
    "handoff": ("c-charged-twice", "ESC", 0, ["I was charged twice and I want a person."],
                [["transfer_to_human"], "A colleague will take it from here."],
                {"escalation.u": (0.0, "compliant")}),
    "refund-first": ("c-charged-twice", "ESC", 1, ["I was charged twice and I want a person."],
                     [["get_order"], ["issue_refund"], ["transfer_to_human"], "Refunded, and passed on."],
                     {"escalation.u": (1.0, "acted_before_handoff"), "escalation.a": (1.0, "unapproved")}),
    "refund": ("c-late-parcel", "ACT", 0, ["My parcel is late, please refund order 7."],
               [["get_order", "issue_refund"], "Refunded."],
               {"escalation.o": (0.0, "compliant"), "escalation.a": (1.0, "unapproved")}),
    "needless-handoff": ("c-late-parcel", "ACT", 1, ["Where is order 7?", "Then refund it please."],
                         [["get_order"], "It left yesterday.", ["transfer_to_human"], "A colleague will help."],
                         {"escalation.o": (1.0, "unneeded_handoff")}),
}
NAMES = ["escalation.u", "escalation.o", "escalation.a"]


def _free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _has_server() -> bool:
    # the distribution's metadata, not an import: importing phoenix takes a minute on a busy machine
    probe = "import importlib.metadata as m; m.distribution('arize-phoenix')"
    try:
        return subprocess.run([PYTHON, "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory):
    """A Phoenix server on free local ports, its SQLite store in a temporary folder; stopped whatever happens."""
    if not _has_server():
        pytest.skip(f"no Phoenix server (arize-phoenix) in {PYTHON}: pip install arize-phoenix, or set "
                    "ESCALATION_PHOENIX_PYTHON to a Python that has it")
    import httpx

    folder = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(folder), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen([PYTHON, "-m", "phoenix.server.main", "serve"], env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240  # a busy machine takes minutes to import Phoenix
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not start: {(folder / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


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


@pytest.fixture(scope="module")
def send(phoenix_url):
    """``send(project, names)``: run each named scenario as an agent would, traced into Phoenix; returns
    ``{trace id: scenario}`` once every span is exported."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from phoenix.otel import register

    model = ThreadingHTTPServer(("127.0.0.1", 0), _Replies)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    providers = {}
    instrumentor = OpenAIInstrumentor()

    def run(project: str, names: list[str]) -> dict[str, str]:
        if project not in providers:
            providers[project] = register(endpoint=f"{phoenix_url}/v1/traces", project_name=project, batch=False,
                                          set_global_tracer_provider=False, verbose=False)
        provider = providers[project]
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        instrumentor.instrument(tracer_provider=provider)
        tracer = provider.get_tracer("support-agent")

        def _tool(name):
            def run_tool(order_id: int) -> str:
                return f"{name} done for order {order_id}"
            run_tool.__name__ = name
            return tracer.tool(name=name)(run_tool)

        tools = {name: _tool(name) for name in ("get_order", "issue_refund", "transfer_to_human")}
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{model.server_port}/v1", api_key="unused")
        sent = {}
        for name in names:
            case, label, replica, users, _, _ = SCENARIOS[name]
            with tracer.start_as_current_span("support-agent", openinference_span_kind="agent",
                                              attributes={"escalation.case_id": case, "escalation.label": label,
                                                          "escalation.replica": replica}) as root:
                messages = [{"role": "system", "content": f"scenario: {name}"}]
                for user in users:
                    messages.append({"role": "user", "content": user})
                    while True:
                        reply = client.chat.completions.create(model="scripted", messages=messages).choices[0]
                        messages.append(reply.message.model_dump(exclude_none=True))
                        if not reply.message.tool_calls:
                            break
                        for call in reply.message.tool_calls:
                            result = tools[call.function.name](**json.loads(call.function.arguments))
                            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
                sent[format(root.get_span_context().trace_id, "032x")] = name
        provider.force_flush()
        return sent

    try:
        yield run
    finally:
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        for provider in providers.values():
            provider.shutdown()
        model.shutdown()


def _score(tmp_path: Path, url: str, project: str, out: str, *extra) -> subprocess.CompletedProcess:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    return subprocess.run([sys.executable, "-m", "escalation", "score", "--phoenix", url, "--project", project,
                           "--policy", str(policy), "--out", str(tmp_path / out), *extra],
                          capture_output=True, text=True, timeout=120)


def _lines(folder: Path) -> dict[str, dict]:
    lines = [json.loads(x) for x in (folder / "conversations.jsonl").read_text().splitlines()]
    return {line["conversation_id"]: line for line in lines}


def _annotations(url: str, project: str, roots: list[str]) -> list[dict]:
    from phoenix.client import Client

    return Client(base_url=url).spans.get_span_annotations(span_ids=roots, project_identifier=project,
                                                           include_annotation_names=NAMES)


def _expected(line: dict) -> dict:
    """The annotations a conversation line calls for: ``{name: (score, label)}``."""
    out = {}
    if line["evaluated"]:
        figure = "u" if line["label"] == "ESC" else "o"
        out[f"escalation.{figure}"] = (float(line[figure]), line["cause"] or "compliant")
    if line["a"] is not None:
        out["escalation.a"] = (float(line["a"]), line["approval_cause"] or "compliant")
    return out


def _roots(url: str, project: str, traces) -> dict[str, str]:
    from phoenix.client import Client

    spans = Client(base_url=url).spans.get_spans(project_identifier=project, trace_ids=list(traces),
                                                 parent_id="null", limit=1000)
    return {span["context"]["trace_id"]: span["context"]["span_id"] for span in spans}


@pytest.mark.slow
def test_traces_are_scored_and_annotated_idempotently(tmp_path, phoenix_url, send):
    project = "support-bot"
    sent = send(project, list(SCENARIOS))
    assert len(sent) == len(SCENARIOS)
    done = _score(tmp_path, phoenix_url, project, "first")
    assert done.returncode == 0, done.stderr
    assert f"Phoenix: 6 span annotations on 4 of the 4 traces of project {project}" in done.stderr + done.stdout
    lines = _lines(tmp_path / "first")
    assert set(lines) == set(sent)
    for trace, name in sent.items():  # the scores are the truth of each scenario
        assert _expected(lines[trace]) == SCENARIOS[name][5], name
    summary = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert summary["provenance"]["phoenix"] == {"url": phoenix_url, "project": project, "since": None,
                                                "traces": 4, "spans": summary["provenance"]["phoenix"]["spans"],
                                                "conversations": 4}

    roots = _roots(phoenix_url, project, sent)
    first = _annotations(phoenix_url, project, list(roots.values()))
    by_trace: dict[str, dict] = {trace: {} for trace in sent}
    trace_of = {root: trace for trace, root in roots.items()}
    for annotation in first:
        assert annotation["annotator_kind"] == "CODE" and annotation["identifier"] == "escalation"
        assert annotation["result"]["explanation"]
        by_trace[trace_of[annotation["span_id"]]][annotation["name"]] = (annotation["result"]["score"],
                                                                          annotation["result"]["label"])
    assert by_trace == {trace: _expected(lines[trace]) for trace in sent}  # each one equals its line

    again = _score(tmp_path, phoenix_url, project, "second")
    assert again.returncode == 0, again.stderr
    second = _annotations(phoenix_url, project, list(roots.values()))
    assert len(second) == len(first) == 6  # updated, not duplicated
    assert {a["id"] for a in second} == {a["id"] for a in first}
    assert max(a["updated_at"] for a in second) > max(a["updated_at"] for a in first)

    since = datetime.now(timezone.utc).isoformat()
    time.sleep(0.05)
    added = send(project, ["needless-handoff"])
    later = _score(tmp_path, phoenix_url, project, "since", "--since", since)
    assert later.returncode == 0, later.stderr
    assert set(_lines(tmp_path / "since")) == set(added)  # only the trace added after the time was read
    assert json.loads((tmp_path / "since" / "summary.json").read_text())["provenance"]["phoenix"]["traces"] == 1
    new_root = _roots(phoenix_url, project, added)
    assert {(a["name"], a["result"]["score"], a["result"]["label"])
            for a in _annotations(phoenix_url, project, list(new_root.values()))} == \
        {("escalation.o", 1.0, "unneeded_handoff")}
    assert len(_annotations(phoenix_url, project, list(roots.values()))) == 6


def test_an_unreachable_phoenix_is_one_line_and_nothing_written(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}"
    done = _score(tmp_path, url, "support-bot", "out")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and url in done.stderr and "cannot reach Phoenix" in done.stderr
    assert not (tmp_path / "out").exists()


def test_log_or_phoenix_one_of_the_two(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    bare = subprocess.run([sys.executable, "-m", "escalation", "score", "--policy", str(policy)],
                          capture_output=True, text=True)
    assert bare.returncode == 2 and "Missing argument 'LOG'" in bare.stderr and "--phoenix" in bare.stderr
    both = subprocess.run([sys.executable, "-m", "escalation", "score", str(policy), "--phoenix", "http://x",
                           "--project", "p", "--policy", str(policy)], capture_output=True, text=True)
    assert both.returncode == 2 and "give one or the other" in both.stderr
    alone = subprocess.run([sys.executable, "-m", "escalation", "score", str(policy), "--since", "2026-01-01",
                            "--policy", str(policy)], capture_output=True, text=True)
    assert alone.returncode == 2 and "--phoenix" in alone.stderr
