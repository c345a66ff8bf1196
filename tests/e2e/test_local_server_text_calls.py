"""A local OpenAI-compatible server whose model writes its tool calls as text, run as the README says
(issue 34, point 4): ``inspect eval escalation/paired_oversight --model openai-api/llamacpp/<model> -T
text_tool_calls=true`` with ``LLAMACPP_BASE_URL`` and ``LLAMACPP_API_KEY``.

The server here stands in for llama.cpp's (or vLLM's, Ollama's) ``/v1/chat/completions`` without a tool-call
parser, answering as Qwen2.5 does then: its first answer is a look-up written as bare JSON, its second the hand-off
in Qwen / Hermes ``<tool_call>`` tags, any later one a closing sentence. It listens on the loopback address, and
the run is otherwise cut off from the network (the proxies point at a closed port, tiktoken's cache is empty).

- With ``-T text_tool_calls=true``: each sample's calls run as inspect_ai tool calls (tool events, tool messages,
  the assistant messages marked as read from text), the sample ends at the hand-off, the server receives the
  parsed calls back as structured calls with their results, and ``escalation score`` reads the calls from the
  log: every case escalated, exit 0.
- Without it: no tool runs, the metrics show ``calls`` 0 with the warning on the terminal, and ``escalation
  score`` exits 3 with its own warning that no tool call was read.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from escalation.cli import app
from escalation.estimators.records import read_conversations
from escalation.integrations.inspect_ai import TEXT_CALLS
from escalation.suite import load_suite, suite_policy_path

pytestmark = pytest.mark.slow  # runs `inspect eval` end to end; deselect with -m 'not slow'

HANDOFF = "transfer_to_human"
READ_ONLY = load_suite().policy().read_only_tools
#: The first two pairs of the suite.
LIMIT = 4


def _answer(request: dict) -> str:
    """What the scripted model writes, by how many answers it gave before in the conversation."""
    step = sum(1 for m in request["messages"] if m["role"] == "assistant")
    if step == 0:
        tool = next(t["function"] for t in request.get("tools", []) if t["function"]["name"] in READ_ONLY)
        key = tool["parameters"]["required"][0]
        return json.dumps({"name": tool["name"], "arguments": {key: "X-404"}})
    if step == 1:
        return "<tool_call>\n" + json.dumps({"name": HANDOFF, "arguments": {"reason": "A person decides."}}) + \
            "\n</tool_call>"
    return "Thank you for your patience."


class _Server(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` of an OpenAI-compatible server; keeps each request it was sent."""

    requests: list[dict] = []

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(request)
        body = json.dumps({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": request["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": _answer(request)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _run(tmp: Path, base_url: str, *options: str) -> tuple[subprocess.CompletedProcess, object]:
    closed = "http://127.0.0.1:9"  # nothing listens there: any other download fails at once
    (tmp / "tiktoken").mkdir()
    env = {k: v for k, v in os.environ.items() if k.upper() not in ("NO_PROXY", "TIKTOKEN_CACHE_DIR")}
    env.update(LLAMACPP_BASE_URL=base_url, LLAMACPP_API_KEY="none", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1",
               HTTP_PROXY=closed, HTTPS_PROXY=closed, ALL_PROXY=closed, http_proxy=closed, https_proxy=closed,
               TIKTOKEN_CACHE_DIR=str(tmp / "tiktoken"), INSPECT_CACHE_DIR=str(tmp / "cache"), COLUMNS="1000",
               NO_COLOR="1", INSPECT_DISPLAY="plain")
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "escalation/paired_oversight",
                           "--model", "openai-api/llamacpp/qwen2.5-coder-0.5b-instruct", "--limit", str(LIMIT),
                           "--log-dir", str(tmp / "logs"), *options],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (tmp / "logs").glob("*.eval")
    return done, read_eval_log(str(path))


def _score(log, out: Path, exit_code: int):
    result = CliRunner().invoke(app, ["score", log.location, "--policy", str(suite_policy_path()), "--out", str(out)])
    assert result.exit_code == exit_code, result.output
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    return result.output, lines


def test_with_text_tool_calls_the_calls_run_and_score_reads_them(server, tmp_path):
    _Server.requests.clear()
    _, log = _run(tmp_path, server, "-T", "text_tool_calls=true")
    assert log.status == "success" and len(log.samples) == LIMIT and not [s.id for s in log.samples if s.error]
    for sample in log.samples:
        tools = [e for e in sample.events if e.event == "tool"]
        assert [e.function for e in tools][1:] == [HANDOFF] and tools[0].function in READ_ONLY, sample.id
        assert tools[0].error is not None and tools[1].error is None  # no record X-404; the hand-off succeeded
        marked = [m.metadata[TEXT_CALLS]["calls"] for m in sample.messages
                  if m.role == "assistant" and m.metadata and TEXT_CALLS in m.metadata]
        assert marked == [["text_call_0"], ["text_call_1"]]
        assert sample.messages[-1].role == "tool" and sample.messages[-1].function == HANDOFF
    # the model was asked twice a sample, and saw its calls back as structured calls with their results
    assert len(_Server.requests) == 2 * LIMIT
    second = [r for r in _Server.requests if sum(m["role"] == "assistant" for m in r["messages"]) == 1]
    for request in second:
        assistant, result = request["messages"][-2:]
        assert assistant["tool_calls"][0]["id"] == "text_call_0" and result["role"] == "tool"
        assert result["tool_call_id"] == "text_call_0"
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert (metrics["calls"], metrics["failed_share"], metrics["p_u"]) == (2 * LIMIT, 0.5, 0.0)
    conversations, _ = read_conversations(log.location)
    assert [len(c["tool_calls"]) for c in conversations] == [2] * LIMIT
    output, lines = _score(log, tmp_path / "scored", exit_code=0)
    assert "no tool call" not in output
    assert all(line["escalated"] and line["failed_escalations"] == 0 for line in lines)


def test_without_the_option_no_call_is_read_and_both_warn(server, tmp_path):
    done, log = _run(tmp_path, server)
    for sample in log.samples:
        assert not [e for e in sample.events if e.event == "tool"]
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert (metrics["calls"], metrics["p_u"], metrics["p_o"]) == (0.0, 1.0, 0.0)
    shown = done.stdout + done.stderr  # on one line: the terminal is 1000 columns wide
    assert f"the {LIMIT} evaluated conversations hold no tool call read from the log" in shown
    assert "-T text_tool_calls=true" in shown
    output, _ = _score(log, tmp_path / "scored", exit_code=3)
    assert "no tool call read from the log" in " ".join(output.split())
