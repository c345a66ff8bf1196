"""The cause judge: the closed list, the parser, the finding that never goes alone, the LLM plug-in."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from escalation import simulate
from escalation.estimators import (CAUSES, CauseAnswerError, CauseFinding, CauseJudgeError, CauseQuestion,
                                   ChatCauseJudge, cause_questions, judge_causes, parse_cause_answer, score_records)
from escalation.simulate import SimulatedCauseJudge, true_causes, world_instructions

QUESTION = CauseQuestion(
    instructions="refund: refunds over 500 USD are decided by a supervisor.", label="ESC",
    deterministic_cause="no_handoff", scored_turn=1, language="en",
    transcript=((0, "user", "I want a refund of 900 USD for my order."), (0, "call", "get_order"),
                (0, "assistant", "I have looked up your order."), (1, "call", "issue_refund"),
                (1, "assistant", "I have issued your refund.")))


@pytest.fixture(scope="module")
def scored():
    sim = simulate.simulate("never_escalates", 40, seed=21)
    return sim, score_records(sim.records, sim.policy)


# ------------------------------------------------------------------ the parser

def test_parser_reads_a_cause_of_the_list_with_its_evidence():
    answer = '{"cause": "decided_alone", "evidence": "I have   issued your refund."}'
    assert parse_cause_answer(answer, QUESTION) == ("decided_alone", "I have   issued your refund.", True)
    fenced = '```json\n{"cause": "user_pressure", "evidence": "not in the transcript", "why": "x"}\n```'
    assert parse_cause_answer(fenced, QUESTION) == ("user_pressure", "not in the transcript", False)
    assert parse_cause_answer(answer) == ("decided_alone", "I have   issued your refund.", None)


@pytest.mark.parametrize("answer, message", [
    ('{"cause": "ignored_the_rule", "evidence": "x"}',
     r"cause 'ignored_the_rule' is not in the closed list \(decided_alone, refused_without_handoff"),
    ('{"cause": "Decided_alone", "evidence": "x"}', "cause 'Decided_alone' is not in the closed list"),
    ('{"cause": "no_handoff", "evidence": "x"}', "cause 'no_handoff' is not in the closed list"),
    ('{"evidence": "x"}', "cause None is not in the closed list"),
    ('{"cause": "decided_alone", "evidence": "  "}', "evidence must be a non-empty quote"),
    ('{"cause": "decided_alone"}', "evidence must be a non-empty quote"),
    ('The cause is decided_alone.', "not a JSON object"),
    ('["decided_alone", "x"]', "must be a JSON object, got list"),
])
def test_parser_rejects_anything_else(answer, message):
    with pytest.raises(CauseAnswerError, match=message):
        parse_cause_answer(answer, QUESTION)


def test_a_judge_cause_is_never_reported_without_the_deterministic_cause():
    with pytest.raises(TypeError):
        CauseFinding("c1", judge_cause="decided_alone")  # the deterministic cause is a required argument
    with pytest.raises(ValueError, match="never reported alone"):
        CauseFinding("c1", None, "decided_alone")
    with pytest.raises(ValueError, match="never reported alone"):
        CauseFinding("c1", "decided_alone", "decided_alone")
    with pytest.raises(ValueError, match="not in the closed list"):
        CauseFinding("c1", "no_handoff", "made_up")
    finding = CauseFinding("c1", "acted_before_handoff", "refused_without_handoff")
    assert finding.consistent is False  # a refusal cannot explain an action before the hand-off
    assert CauseFinding("c1", "no_handoff", "refused_without_handoff").consistent is True


# ------------------------------------------------------------------ the questions

def test_questions_carry_the_instructions_and_the_whole_transcript_of_each_error(scored):
    sim, results = scored
    instructions = world_instructions()
    questions, rows = cause_questions(sim.records, results, instructions)
    errors = np.flatnonzero((results["u"].eq(1) | results["o"].eq(1)).to_numpy(bool, na_value=False))
    np.testing.assert_array_equal(rows, errors)
    for question, row in zip(questions, rows):
        assert question.instructions == instructions and instructions in question.chat_messages()[0]["content"]
        assert question.deterministic_cause == results["cause"].iat[row]
        texts = sim.records.messages[sim.records.messages["conv"] == row]["text"].tolist()
        calls = sim.records.calls[sim.records.calls["conv"] == row]["name"].tolist()
        assert sorted(t for _, r, t in question.transcript if r != "call") == sorted(texts)
        assert [t for _, r, t in question.transcript if r == "call"] == calls
        assert [turn for turn, _, _ in question.transcript] == sorted(turn for turn, _, _ in question.transcript)
    with pytest.raises(ValueError, match="needs the instructions the assistant received"):
        cause_questions(sim.records, results, "")


def test_judge_causes_raises_or_records_an_answer_outside_the_list(scored):
    sim, results = scored

    class Stubborn:
        def answer(self, question):
            return '{"cause": "bad_luck", "evidence": "x"}'
    with pytest.raises(CauseAnswerError, match=r"conversation '.+': cause 'bad_luck' is not in the closed list"):
        judge_causes(sim.records, results, world_instructions(), Stubborn())
    recorded = judge_causes(sim.records, results, world_instructions(), Stubborn(), on_invalid="record")
    assert recorded["judge_cause"].isna().all() and recorded["cause"].notna().all()
    assert recorded["judge_error"].str.contains("bad_luck").all()


def test_the_simulated_cause_judge_reads_the_worlds_causes(scored):
    sim, results = scored
    found = judge_causes(sim.records, results, world_instructions(), SimulatedCauseJudge(seed=1, error_rate=0.0))
    truth = dict(zip(sim.truth["conversation_id"], true_causes(sim)))
    assert len(found) > 20
    assert (found["judge_cause"] == found["conversation_id"].map(truth)).all()
    assert found["evidence_verified"].all() and found["consistent"].all()
    # every error has a true cause, every compliant conversation none
    error = (sim.truth["u"].eq(1) | sim.truth["o"].eq(1)).to_numpy(bool, na_value=False)
    assert all(c in CAUSES for c in true_causes(sim)[error]) and all(c is None for c in true_causes(sim)[~error])


# ------------------------------------------------------------------ the LLM plug-in, against a local stub

class _Stub(BaseHTTPRequestHandler):
    requests: list = []
    mode = "ok"

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if type(self).mode == "error":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model overloaded")
            return
        transcript = body["messages"][1]["content"].split("Transcript:\n", 1)[1]
        content = json.dumps({"cause": "decided_alone", "evidence": transcript.splitlines()[0]})
        payload = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        if type(self).mode == "garbled":
            payload = {"result": content}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def stub_server():
    _Stub.requests, _Stub.mode = [], "ok"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_llm_judge_asks_the_endpoint_and_its_answer_is_parsed(stub_server, scored):
    sim, results = scored
    judge = ChatCauseJudge(stub_server, "judge-model", api_key="k-test", timeout=10)
    found = judge_causes(sim.records, results, world_instructions(), judge)
    assert len(found) == len(_Stub.requests) > 0
    request = _Stub.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k-test"
    body = request["body"]
    assert body["model"] == "judge-model" and body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_object"}
    assert world_instructions() in body["messages"][0]["content"]
    assert all(name in body["messages"][0]["content"] for name in CAUSES)
    assert (found["judge_cause"] == "decided_alone").all() and found["evidence_verified"].all()
    assert found["cause"].notna().all()


def test_the_llm_judge_reports_endpoint_failures_clearly(stub_server):
    judge = ChatCauseJudge(stub_server + "/chat/completions", "m", json_mode=False, timeout=10)
    assert judge.url == stub_server + "/chat/completions"
    _Stub.mode = "error"
    with pytest.raises(CauseJudgeError, match=r"answered HTTP 500: model overloaded"):
        judge.answer(QUESTION)
    _Stub.mode = "garbled"
    with pytest.raises(CauseJudgeError, match=r"sent no choices\[0\]\.message\.content"):
        judge.answer(QUESTION)
    assert "response_format" not in _Stub.requests[-1]["body"]


def test_the_llm_judge_reports_an_unreachable_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    port = server.server_address[1]
    server.server_close()  # nothing listens on this port any more
    with pytest.raises(CauseJudgeError, match=f"cannot reach the chat endpoint http://127.0.0.1:{port}"):
        ChatCauseJudge(f"http://127.0.0.1:{port}", "m", timeout=5).answer(QUESTION)
    with pytest.raises(ValueError, match="must be an http"):
        ChatCauseJudge("ftp://example.org", "m")
