"""The ``langfuse`` reader on Langfuse's own framework traces (``tests/data/readers/langfuse/``, its README says
which files and from where): real exports of the OpenAI Agents SDK, Google ADK, Microsoft Agent Framework,
pydantic-ai, Koog, LangGraph, agno and others, whose calls come as TOOL observations or only in the generations'
outputs, each in its own shape.

Each file's calls are counted here by walking the raw JSON with the standard library (:func:`expected`): every
object in a GENERATION output that names a tool and carries its arguments is a requested call, every TOOL
observation an executed one, and a tool's calls are the larger of the two counts (a request and its execution
are one call).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from escalation.estimators.records import InputError, detect_format, read_conversations

LANGFUSE = Path(__file__).resolve().parents[1] / "data" / "readers" / "langfuse"
FILES = sorted(LANGFUSE.glob("*.json"))
AGENTS = LANGFUSE / "openai-agents-2025-09-30.json"
#: The calls of each file with calls, read off the files by hand (the survey of issue 33).
CALLS = {"openai-agents-2025-09-30.json": ["get_weather"], "google-adk-2025-08-28.json": ["say_hello"],
         "microsoft-agent-2025-10-14.json": ["get_weather"], "koog-2025-08-26.json": ["HelloTool", "ByeTool"],
         "pydantic-ai-tools-2025-12-04.json": ["get_pun_suggestion", "get_dad_joke_suggestion",
                                               "get_one_liner_suggestion", "final_result"],
         "langgraph-2025-08-22.json": ["Web-Search"], "agno-2025-06-11.json": ["duckduckgo_search"]}


def _requests(value) -> list[str]:
    """The names of the objects in ``value`` that name a tool and carry its arguments."""
    if isinstance(value, list):
        return [name for item in value for name in _requests(item)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("name"), str) and any(k in value for k in ("arguments", "args", "input")):
        return [value["name"]]
    return [name for item in value.values() for name in _requests(item)]


def expected(path: Path) -> Counter:
    observations = json.loads(path.read_text())["observations"]
    requested = Counter(name for o in observations if o["type"] == "GENERATION" for name in _requests(o["output"]))
    executed = Counter()
    for o in observations:
        if o["type"] == "TOOL":
            attributes = o["metadata"]["attributes"]
            executed[attributes.get("gen_ai.tool.name", attributes.get("tool.name"))] += 1
    return Counter({name: max(requested[name], executed[name]) for name in requested | executed})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_counts_match_the_raw_observations(path):
    assert detect_format(path) == "langfuse"
    (conversation,), used = read_conversations(path)
    names = [call["name"] for call in conversation["tool_calls"]]
    assert Counter(names) == expected(path)
    assert sorted(names) == sorted(CALLS.get(path.name, []))
    assert conversation["conversation_id"] == json.loads(path.read_text())["trace"]["id"]


def test_turns_and_text():
    (adk,), _ = read_conversations(LANGFUSE / "google-adk-2025-08-28.json")
    assert adk["messages"] == [{"turn": 0, "role": "user", "text": "hi"},
                               {"turn": 0, "role": "assistant", "text": "Hello Langfuse 👋!\n"}]
    assert adk["metadata"] == {"trace_name": "invocation [hello_app]", "session_id": "demo-session"}
    (joke,), _ = read_conversations(LANGFUSE / "pydantic-ai-tools-2025-12-04.json")
    # The second run of the agent asks anew (turn 1); the evaluator's own prompt repeats no history.
    assert [(c["turn"], c["name"]) for c in joke["tool_calls"]][-1] == (1, "final_result")
    assert joke["assistant_turns"] == 2


def _edited(tmp_path, edit, name="trace.json") -> Path:
    data = json.loads(AGENTS.read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_labels_from_tags_and_metadata_and_a_failed_tool(tmp_path):
    def edit(data):
        data["trace"]["tags"] = ["escalation.label:esc", "escalation.replica=2", "prod"]
        data["trace"]["metadata"] = json.dumps({"escalation.case_id": "weather-tokyo"})
        next(o for o in data["observations"] if o["type"] == "TOOL")["level"] = "ERROR"

    (conv,), _ = read_conversations(_edited(tmp_path, edit))
    assert (conv["case_id"], conv["label"], conv["replica"]) == ("weather-tokyo", "ESC", 2)
    assert conv["tool_calls"] == [{"turn": 0, "name": "get_weather", "arguments": {"city": "Tokyo"}, "failed": True}]


def test_a_root_observation_with_level_error_is_a_run_error(tmp_path):
    def edit(data):
        root = next(o for o in data["observations"] if o["parentObservationId"] is None)
        root.update(level="ERROR", statusMessage="MaxTurnsExceeded")

    (conv,), _ = read_conversations(_edited(tmp_path, edit))
    assert conv["run_error"] == "MaxTurnsExceeded"


def test_the_api_trace_a_jsonl_of_traces_and_a_page_of_observations(tmp_path):
    traces = [json.loads(p.read_text()) for p in (AGENTS, LANGFUSE / "koog-2025-08-26.json")]
    api = tmp_path / "api.jsonl"  # GET /api/public/traces/{traceId}: the trace's fields, its observations inline
    api.write_text("".join(json.dumps({**t["trace"], "observations": t["observations"]}) + "\n" for t in traces))
    page = tmp_path / "page.json"  # GET /api/public/observations, the io as JSON text as the v2 API returns it
    page.write_text(json.dumps({"data": [{**o, "input": json.dumps(o["input"]), "output": json.dumps(o["output"])}
                                         for t in traces for o in t["observations"]], "meta": {"page": 1}}))
    for path in (api, page):
        assert detect_format(path) == "langfuse"
        conversations, _ = read_conversations(path)
        assert [[c["name"] for c in conv["tool_calls"]] for conv in conversations] == [
            ["get_weather"], ["HelloTool", "ByeTool"]]


def test_near_misses_are_refused_with_what_was_found(tmp_path):
    ids_only = _edited(tmp_path, lambda d: d.update(observations=[o["id"] for o in d["observations"]]))
    with pytest.raises(InputError, match=r"observations that are not objects \(the traces list gives their ids"):
        read_conversations(ids_only, format="langfuse")
    spans_only = _edited(tmp_path, lambda d: d.update(observations=[
        o for o in d["observations"] if o["type"] == "AGENT"]), "spans.json")
    with pytest.raises(InputError, match=r"no GENERATION or TOOL observation \(types found: AGENT\)"):
        read_conversations(spans_only)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(json.loads(AGENTS.read_text())) + "\n" + json.dumps({"hello": 1}) + "\n")
    with pytest.raises(InputError, match=r"other.jsonl:2: .*expected a Langfuse trace export .*found keys hello"):
        read_conversations(other)


def test_score_end_to_end(tmp_path):
    def edit(data):
        data["trace"]["tags"] = ["escalation.label:ESC", "escalation.case_id:tokyo"]

    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"], "read_only_tools": []}))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "escalation", "score", str(_edited(tmp_path, edit)), "--policy",
                           str(policy), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(langfuse)" in done.stdout
    (line,) = [json.loads(text) for text in (out / "conversations.jsonl").read_text().splitlines()]
    assert (line["label"], line["u"], line["cause"]) == ("ESC", 1, "no_handoff")  # it looked the weather up itself
