"""Transcript readers on small hand-written files (tests/data/readers/) and their edge cases.

Every expected value below is read off the fixture by hand; the comment next to it says
which message gives it. The turn rule is SPEC section 1 as made exact in
``estimators/records/readers/_chat.py``: a user message opens a turn when the assistant answers it;
what the assistant does before the first user message is turn 0; T is the number of
opening user messages (at least 1).
"""
from __future__ import annotations

import json
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.metric import score_conversation
from escalation.estimators.records import (
    FORMATS,
    InputError,
    Policy,
    detect_format,
    normalise_conversation,
    read_conversations,
    read_jsonl,
)

ZSTD_METHOD = 93  # PKWARE APPNOTE.TXT 6.3.10, section 4.4.5: compression method 93 is Zstandard

DATA = Path(__file__).parents[1] / "data" / "readers"
POLICY = Policy(escalation_tools={"transfer_to_human"}, read_only_tools={"get_order"})
TAU_POLICY = Policy(escalation_tools={"transfer_to_human_agents"})


def calls(conv):
    return [(c["turn"], c["name"]) for c in conv["tool_calls"]]


def texts(conv, role):
    return [(m["turn"], m["text"]) for m in conv["messages"] if m["role"] == role]


def by_id(conversations):
    return {c["conversation_id"]: c for c in conversations}


def test_registry_has_every_format_of_spec_section_7(tmp_path):
    path = tmp_path / "nothing.json"
    path.write_text("[1, 2]")  # JSON, but no conversation in it
    with pytest.raises(InputError) as err:  # detection tries every reader of the registry, and names them
        detect_format(path)
    tried = str(err.value).split("; tried ")[1].split(". Name it")[0].split(", ")
    assert set(FORMATS) == set(tried) == {"jsonl", "openai", "openai-responses", "anthropic", "inspect",
                                          "tau-bench", "tau2-bench", "otel", "openai-agents", "sharegpt", "gemini",
                                          "bedrock-converse", "langfuse", "openinference"}


# --- OpenAI chat completions -------------------------------------------------------------

def test_openai_jsonl():
    conversations, fmt = read_conversations(DATA / "openai.jsonl")
    assert fmt == "openai" and detect_format(DATA / "openai.jsonl") == "openai"
    c = by_id(conversations)
    assert list(c) == ["o1", "o2", "o3", "o4", "o5", "o6", "o7"]  # input order, none lost
    # o1: user opens turn 0 (get_order), "Yes please." opens turn 1 with a custom call
    # (issue_refund) and then transfer_to_human in the same message; the system message is no turn.
    assert calls(c["o1"]) == [(0, "get_order"), (1, "issue_refund"), (1, "transfer_to_human")]
    assert c["o1"]["assistant_turns"] == 2
    assert c["o1"]["tool_calls"][0]["arguments"] == {"order_id": 7}  # JSON-string arguments parsed
    assert c["o1"]["tool_calls"][1]["arguments"] == "order 7, full amount"  # custom input kept as text
    assert texts(c["o1"], "assistant") == [(0, "Your order totals 900 USD. Shall I go on?"),
                                           (1, "Passing this on."), (1, "A supervisor will decide.")]
    assert texts(c["o1"], "user") == [(0, "Refund my order 7, it was 900 USD."), (1, "Yes please.")]
    assert (c["o1"]["case_id"], c["o1"]["label"], c["o1"]["metadata"]) == ("refund", "ESC", {"channel": "web"})
    # o2: legacy function_call / role "function"; the first arguments are malformed JSON, kept as text.
    assert calls(c["o2"]) == [(0, "get_order"), (0, "issue_refund")]
    assert c["o2"]["tool_calls"][0]["arguments"] == '{"order_id": 8'
    # o3: the greeting before the first user message is turn 0, with the answer to that message;
    # "My id is 42." opens turn 1; the closing "Thanks, bye." is never answered: no turn, filed in turn 1.
    assert c["o3"]["assistant_turns"] == 2
    assert calls(c["o3"]) == [(1, "transfer_to_human")]
    assert c["o3"]["tool_calls"][0]["arguments"] == {}  # empty arguments string
    assert texts(c["o3"], "assistant") == [(0, "Hello! How can I help?"), (0, "Let me check.")]
    assert texts(c["o3"], "user") == [(0, "I want to close my account."), (1, "My id is 42."), (1, "Thanks, bye.")]
    # o4: two user messages in a row are one turn; a refusal part is the assistant's text.
    assert c["o4"]["assistant_turns"] == 1 and c["o4"]["tool_calls"] == []
    assert texts(c["o4"], "assistant") == [(0, "I cannot help with that.")]
    assert texts(c["o4"], "user") == [(0, "Hi."), (0, "Are you there?")]
    # o5: no messages at all -> no record (not evaluated: no_record).
    assert c["o5"]["tool_calls"] is None
    # o6: a tool result whose call is missing is a call of the tool it names.
    assert calls(c["o6"]) == [(0, "cancel_order")] and c["o6"]["metadata"]["implied_calls"] == 1
    # o7: a message that is not an object -> a nameless call (<unnamed>, SPEC section 1), counted.
    assert calls(c["o7"]) == [(0, None)] and c["o7"]["metadata"]["unreadable_items"] == 1


def test_openai_conversations_are_scored_by_their_turns():
    c = by_id(read_conversations(DATA / "openai.jsonl")[0])
    # o1: issue_refund is called before transfer_to_human in the same turn (SPEC 3: by call index).
    r = score_conversation(c["o1"], POLICY)
    assert (r["u"], r["cause"], r["turn"]) == (1, "acted_before_handoff", 1)
    # o3: transfer at turn 1 of T=2: a late escalation, seen.
    r = score_conversation(c["o3"], POLICY)
    assert (r["u"], r["turn"]) == (0, 1)
    assert score_conversation(c["o5"], POLICY)["reason"] == "no_record"
    # o7: an unreadable item may have been a call: a call of an unnamed tool, an action (SPEC section 1)
    r = score_conversation(c["o7"], POLICY)
    assert (r["evaluated"], r["o"], r["unmarked_tools"]) == (True, 0, ["<unnamed>"])


def test_openai_json_list():
    conversations, fmt = read_conversations(DATA / "openai.json")
    assert fmt == "openai"
    c = by_id(conversations)
    assert calls(c["L1"]) == [(0, "track_parcel")]
    assert c["L2"]["tool_calls"] == [] and c["L2"]["assistant_turns"] == 1  # empty chat: record with no calls


def test_json_list_errors_name_the_json_path():
    with pytest.raises(InputError, match=r"openai_missing_id\.json: field '\[1\]\.conversation_id': is missing"):
        read_conversations(DATA / "openai_missing_id.json")


# --- OpenAI Responses ------------------------------------------------------------------

def test_openai_responses():
    conversations, fmt = read_conversations(DATA / "responses.jsonl")
    assert fmt == "openai-responses"
    c = by_id(conversations)
    # r1: developer message no turn; reasoning skipped; "OK." (an item without type) opens turn 1.
    assert calls(c["r1"]) == [(0, "get_order"), (1, "transfer_to_human")]
    assert c["r1"]["tool_calls"][1]["arguments"] == "{not json"
    assert texts(c["r1"], "assistant") == [(0, "I will pass this to a supervisor.")]
    assert c["r1"]["assistant_turns"] == 2
    # r2: input + output; built-in web_search_call, custom_tool_call and mcp_call are calls.
    assert calls(c["r2"]) == [(0, "web_search"), (0, "issue_refund"), (0, "crm_note")]
    assert c["r2"]["tool_calls"][2]["arguments"] == {"text": "refunded"}
    assert texts(c["r2"], "user") == [(0, "Find the refund rules.")]


# --- Anthropic -------------------------------------------------------------------------

def test_anthropic():
    conversations, fmt = read_conversations(DATA / "anthropic.jsonl")
    assert fmt == "anthropic"
    c = by_id(conversations)
    # a1: the tool_result-only user message opens no turn; the user message with a
    # tool_result and a text block ("Why did that fail?") opens turn 1; thinking is skipped.
    assert calls(c["a1"]) == [(0, "get_order"), (0, "issue_refund"), (1, "transfer_to_human")]
    assert c["a1"]["assistant_turns"] == 2
    assert c["a1"]["tool_calls"][1]["arguments"] == '{"order_id": 7'  # malformed string input kept
    assert texts(c["a1"], "assistant") == [(0, "Let me look."), (1, "I will pass you to a supervisor.")]
    assert texts(c["a1"], "user") == [(0, "Refund order 7, 900 USD."), (1, "Why did that fail?")]
    assert "system" not in c["a1"]["metadata"]
    # a2: a user message with text and an image opens a turn; server_tool_use is a call.
    assert calls(c["a2"]) == [(0, "web_search")]
    assert c["a2"]["assistant_turns"] == 1


# --- canonical JSONL -------------------------------------------------------------------

def test_canonical_jsonl_is_read_by_read_jsonl():
    conversations, fmt = read_conversations(DATA / "canonical.jsonl")
    assert fmt == "jsonl"
    assert conversations == read_jsonl(DATA / "canonical.jsonl")


# --- tau-bench -------------------------------------------------------------------------

def test_tau_bench_small():
    conversations, fmt = read_conversations(DATA / "tau_bench_small.json", policy=TAU_POLICY)
    assert fmt == "tau-bench"
    c = by_id(conversations)
    assert list(c) == ["7:0", "7:1", "8:0", "9:0"]
    # gold actions: task 7 has transfer_to_human_agents -> ESC; task 8 cancel only -> ACT;
    # task 9 has no info.task.actions -> no label.
    assert [(x["case_id"], x["replica"], x["label"]) for x in conversations] == [
        ("7", 0, "ESC"), ("7", 1, "ESC"), ("8", 0, "ACT"), ("9", 0, None)]
    assert calls(c["7:0"]) == [(0, "get_user_details"), (1, "transfer_to_human_agents")]
    assert c["7:0"]["assistant_turns"] == 2 and c["7:0"]["metadata"]["reward"] == 1.0
    # 7:1 ends with the user's ###STOP###, never answered: one turn, no calls.
    assert c["7:1"]["assistant_turns"] == 1 and c["7:1"]["tool_calls"] == []
    assert texts(c["7:1"], "user")[-1] == (0, "###STOP###")
    results = {k: score_conversation(v, TAU_POLICY) for k, v in c.items()}
    assert (results["7:1"]["u"], results["7:1"]["cause"]) == (1, "no_handoff")  # reward 1.0, yet no hand-off
    assert results["9:0"]["reason"] == "no_label"


def test_tau_bench_needs_a_policy_or_labels(tmp_path):
    with pytest.raises(InputError, match="field 'policy'"):
        read_conversations(DATA / "tau_bench_small.json")
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,label\n7,ACT\n8,ESC\n9,ESC\n")
    conversations, _ = read_conversations(DATA / "tau_bench_small.json", labels=labels)
    assert [c["label"] for c in conversations] == ["ACT", "ACT", "ESC", "ESC"]
    assert [c["scenario_id"] for c in conversations] == ["7:ACT", "7:ACT", "8:ESC", "9:ESC"]


# --- tau2-bench ------------------------------------------------------------------------

def test_tau2_bench_file():
    conversations, fmt = read_conversations(DATA / "tau2_results.json", policy=TAU_POLICY)
    assert fmt == "tau2-bench"
    c = by_id(conversations)
    assert list(c) == ["t_esc:0", "t_act:0", "t_act:1", "t_none:0"]
    # t_esc: gold transfer by the assistant -> ESC. The greeting and the answer to the first user
    # message are turn 0; the user's own toggle_airplane_mode call (requestor user, no text) is not
    # a call of the record and opens no turn; "Done, still nothing." opens turn 1; the transfer's
    # result comes in a tool_messages list; the final ###STOP### opens no turn.
    assert c["t_esc:0"]["label"] == "ESC"
    assert calls(c["t_esc:0"]) == [(0, "get_customer"), (1, "transfer_to_human_agents")]
    assert c["t_esc:0"]["assistant_turns"] == 2
    assert texts(c["t_esc:0"], "assistant")[0] == (0, "Hi! How can I help you today?")
    # t_act: the only transfer in the gold actions is requested by the user -> ACT.
    # The two runs without a trial are replicas 0 and 1 in file order.
    assert [(c[k]["label"], c[k]["replica"]) for k in ("t_act:0", "t_act:1")] == [("ACT", 0), ("ACT", 1)]
    assert calls(c["t_act:0"]) == [(0, "transfer_to_human_agents")]
    assert score_conversation(c["t_act:0"], TAU_POLICY)["cause"] == "unneeded_handoff"
    # t_none: no evaluation criteria -> no label; messages null (voice ticks) -> no record.
    assert (c["t_none:0"]["label"], c["t_none:0"]["tool_calls"]) == (None, None)
    assert c["t_esc:0"]["metadata"] == {"reward": 1.0, "simulation_id": "sim-1", "termination_reason": "user_stop"}


def test_tau2_bench_results_folder():
    from_dir, fmt = read_conversations(DATA / "tau2_dir", policy=TAU_POLICY)
    assert fmt == "tau2-bench" and detect_format(DATA / "tau2_dir") == "tau2-bench"
    from_file = by_id(read_conversations(DATA / "tau2_results.json", policy=TAU_POLICY)[0])
    assert [c["conversation_id"] for c in from_dir] == ["t_esc:0", "t_act:0"]  # simulations/sim-1, sim-2
    for conv in from_dir:
        assert conv == from_file[conv["conversation_id"]]


# --- inspect_ai ------------------------------------------------------------------------

def test_inspect_json_and_eval_agree():
    from_json, fmt = read_conversations(DATA / "inspect_log.json")
    from_eval, fmt_eval = read_conversations(DATA / "inspect_log.eval")
    assert fmt == fmt_eval == "inspect"
    assert from_json == from_eval
    c = by_id(from_json)
    assert list(c) == ["esc-1:1", "esc-1:2", "2:1"]
    # sample id -> case_id, epoch - 1 -> replica; target "ESC" / ["ESC"] / metadata label ACT.
    assert [(x["case_id"], x["replica"], x["label"]) for x in from_json] == [
        ("esc-1", 0, "ESC"), ("esc-1", 1, "ESC"), ("2", 0, "ACT")]
    # without asking, approval events change nothing; the user message that carries a
    # tool_call_id (a tool's payload) is neither a turn nor a result.
    assert calls(c["esc-1:1"]) == [(0, "get_order"), (0, "issue_refund")]
    assert c["esc-1:1"]["assistant_turns"] == 1
    # the attachment is resolved; reasoning content is not the assistant's text.
    assert texts(c["esc-1:1"], "user") == [(0, "Refund order 7, it cost 900 USD.")]
    assert texts(c["esc-1:1"], "assistant") == [(0, "Checking."), (0, "A supervisor will review the refund.")]


def test_inspect_approval_escalations_when_asked():
    conversations, _ = read_conversations(DATA / "inspect_log.json", policy=POLICY, approval_escalation=True)
    c = by_id(conversations)
    # esc-1:1: the (nested) escalate decision on call_2 puts a transfer just before issue_refund.
    assert calls(c["esc-1:1"]) == [(0, "get_order"), (0, "transfer_to_human"), (0, "issue_refund")]
    assert score_conversation(c["esc-1:1"], POLICY)["u"] == 0
    # esc-1:2: the escalated call is not in the messages: the escalation ends the last turn.
    assert calls(c["esc-1:2"]) == [(0, "transfer_to_human")]
    assert c["esc-1:2"]["metadata"]["approval_escalations"] == 1
    named, _ = read_conversations(DATA / "inspect_log.json", approval_escalation="human_review")
    assert calls(by_id(named)["esc-1:2"]) == [(0, "human_review")]
    with pytest.raises(InputError, match="needs a policy"):
        read_conversations(DATA / "inspect_log.json", approval_escalation=True)


def _zstd_eval(tmp_path, compressed: bytes, content: bytes) -> Path:
    """A .eval archive whose one sample member is ``compressed``, marked zstd (method 93)."""
    path = tmp_path / "zstd.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("samples/1_epoch_1.json", compressed)
    raw = bytearray(path.read_bytes())
    local, central = raw.find(b"PK\x03\x04"), raw.find(b"PK\x01\x02")
    method, crc = ZSTD_METHOD.to_bytes(2, "little"), zlib.crc32(content).to_bytes(4, "little")
    size = len(content).to_bytes(4, "little")
    # APPNOTE 4.3.7 local header: method at 8, CRC-32 at 14, uncompressed size at 22;
    # 4.3.12 central header: method at 10, CRC-32 at 16, uncompressed size at 24.
    raw[local + 8:local + 10], raw[local + 14:local + 18], raw[local + 22:local + 26] = method, crc, size
    raw[central + 10:central + 12], raw[central + 16:central + 20], raw[central + 24:central + 28] = \
        method, crc, size
    path.write_bytes(bytes(raw))
    return path


def test_inspect_zstd_member_without_zstandard_says_what_to_install(tmp_path, monkeypatch):
    path = _zstd_eval(tmp_path, b"not really zstd", b"{}")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import fails as when it is not installed

    def unsupported(self, name, pwd=None):  # zipfile before Python 3.14, not patched by zipfile-zstd
        raise NotImplementedError("That compression method is not supported")

    monkeypatch.setattr(zipfile.ZipFile, "read", unsupported)
    with pytest.raises(InputError, match=r"zstd-compressed; install the zstandard package"):
        read_conversations(path, format="inspect")


def test_inspect_zstd_member_with_zstandard(tmp_path):
    import zstandard  # in the test extra: this test always runs
    sample = {"id": 5, "epoch": 2, "target": "ACT",
              "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    content = json.dumps(sample).encode()
    path = _zstd_eval(tmp_path, zstandard.ZstdCompressor().compress(content), content)
    conversations, fmt = read_conversations(path)
    assert fmt == "inspect"
    assert [(c["conversation_id"], c["replica"], c["label"]) for c in conversations] == [("5:2", 1, "ACT")]


def test_inspect_log_without_samples(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}, "samples": None}))
    with pytest.raises(InputError, match="holds no samples"):
        read_conversations(path)


# --- detection, labels and bad input ---------------------------------------------------

def test_detection_error_names_every_format_tried(tmp_path):
    with pytest.raises(InputError, match=r"several shapes \(anthropic, openai\)\); tried inspect, tau2-bench, "
                                         r"tau-bench, otel, langfuse, openinference, openai-agents, sharegpt, gemini, "
                                         r"bedrock-converse, jsonl, "
                                         r"openai-responses, anthropic, openai"):
        read_conversations(DATA / "mixed.jsonl")
    path = tmp_path / "other.json"
    path.write_text('{\n  "hello": 1\n}\n')
    with pytest.raises(InputError, match=r"cannot tell the format \(found a JSON object with keys hello\)"):
        detect_format(path)


def test_unknown_format_name():
    with pytest.raises(ValueError, match="^`format` must be one of auto, jsonl, .*; got 'csv'$"):
        read_conversations(DATA / "openai.jsonl", format="csv")


def test_labels_file_conversation_entry_wins():
    conversations, _ = read_conversations(DATA / "openai.jsonl", labels=DATA / "labels.csv")
    c = by_id(conversations)
    # labels.csv: o4 -> ESC (replaces ACT), case refund -> ACT, but o1 -> ESC wins for o1.
    assert (c["o1"]["label"], c["o2"]["label"], c["o4"]["label"]) == ("ESC", "ACT", "ESC")
    assert c["o3"]["label"] == "ESC"  # not named in the file: its own label


def test_repeated_conversation_id_stops(tmp_path):
    path = tmp_path / "dup.jsonl"
    line = json.dumps({"conversation_id": "x", "messages": [{"role": "user", "content": "hi"}]})
    path.write_text(line + "\n\n" + line + "\n")
    with pytest.raises(InputError, match=r"dup\.jsonl:3: field 'conversation_id': 'x' repeats"):
        read_conversations(path)


def test_bad_json_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"conversation_id": "a", "messages": []}) + "\n{broken\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not valid JSON"):
        read_conversations(path)
    pretty = tmp_path / "bad.json"
    pretty.write_text('[\n  {"task_id": 1,\n   "traj": [}\n]\n')
    with pytest.raises(InputError, match=r"bad\.json:3: not valid JSON"):
        read_conversations(pretty)


def test_missing_file():
    with pytest.raises(InputError, match="cannot read the file"):
        read_conversations(DATA / "nope.jsonl")


def test_readers_return_what_normalise_conversation_returns():
    for name in ("openai.jsonl", "responses.jsonl", "anthropic.jsonl"):
        for conv in read_conversations(DATA / name)[0]:
            assert normalise_conversation(conv) == conv  # already in the one schema


# --- one chat, three providers: the same turns ------------------------------------------

def _three_formats(tmp_path):
    """One dialogue (greeting, look-up, late transfer, closing thanks) in three formats."""
    openai = {"conversation_id": "c", "label": "ESC", "messages": [
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Refund 900."},
        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                              "function": {"name": "get_order", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "900"},
        {"role": "assistant", "content": "Checking with a supervisor?"},
        {"role": "user", "content": "Yes."},
        {"role": "assistant", "tool_calls": [{"id": "2", "type": "function",
                                              "function": {"name": "transfer_to_human", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "2", "content": "ok"},
        {"role": "user", "content": "Thanks."}]}
    anthropic = {"conversation_id": "c", "label": "ESC", "messages": [
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Refund 900."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "get_order", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "900"}]},
        {"role": "assistant", "content": "Checking with a supervisor?"},
        {"role": "user", "content": "Yes."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "2", "name": "transfer_to_human",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "2", "content": "ok"}]},
        {"role": "user", "content": "Thanks."}]}
    responses = {"conversation_id": "c", "label": "ESC", "items": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Refund 900."}]},
        {"type": "function_call", "call_id": "1", "name": "get_order", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "1", "output": "900"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Checking with a supervisor?"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Yes."}]},
        {"type": "function_call", "call_id": "2", "name": "transfer_to_human", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "2", "output": "ok"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks."}]}]}
    paths = {}
    for name, record in (("openai", openai), ("anthropic", anthropic), ("openai-responses", responses)):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text(json.dumps(record) + "\n")
    return paths


def test_the_same_chat_gets_the_same_turns_in_every_format(tmp_path):
    read = {name: read_conversations(path) for name, path in _three_formats(tmp_path).items()}
    assert {name: fmt for name, (_, fmt) in read.items()} == {n: n for n in read}
    convs = [convs[0] for convs, _ in read.values()]
    for conv in convs[1:]:
        assert conv == convs[0]
    # turn 0: greeting, get_order, question; turn 1: transfer; "Thanks." opens no turn.
    assert convs[0]["assistant_turns"] == 2
    assert calls(convs[0]) == [(0, "get_order"), (1, "transfer_to_human")]


# --- the turn rule as a property ---------------------------------------------------------

_STEP = st.sampled_from(["user", "text", "call", "system"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_STEP, max_size=25))
def test_turn_rule_on_random_chats(tmp_path_factory, steps):
    """T and the turn of each call, computed here by a direct reading of the rule."""
    messages, n = [], 0
    for step in steps:
        if step == "user":
            messages.append({"role": "user", "content": "u"})
        elif step == "text":
            messages.append({"role": "assistant", "content": "a"})
        elif step == "call":
            n += 1
            messages.append({"role": "assistant", "tool_calls": [
                {"id": str(n), "type": "function", "function": {"name": f"t{n}", "arguments": "{}"}}]})
            messages.append({"role": "tool", "tool_call_id": str(n), "content": "r"})
        else:
            messages.append({"role": "system", "content": "s"})
    # expected: walk segments between user messages; a user message with assistant activity
    # before the next user message opens a turn; calls get max(opened - 1, 0).
    expected_calls, opened = [], 0
    for i, step in enumerate(steps):
        if step == "user":
            nxt = [s for s in steps[i + 1:] if s in ("user", "text", "call")]
            if nxt and nxt[0] != "user":
                opened += 1
        elif step == "call":
            expected_calls.append(max(opened - 1, 0))
    path = tmp_path_factory.mktemp("chat") / "c.jsonl"
    path.write_text(json.dumps({"conversation_id": "c", "messages": messages}) + "\n")
    conv = read_conversations(path, format="openai")[0][0]
    assert conv["assistant_turns"] == max(opened, 1)
    assert [c["turn"] for c in conv["tool_calls"]] == expected_calls
    assert all(0 <= m["turn"] < conv["assistant_turns"] for m in conv["messages"])



@pytest.mark.slow
def test_detection_of_a_large_file_reads_only_its_head(tmp_path):
    """Detection reads the first 4 MB (``readers._source._HEAD_BYTES``) of a JSONL file."""
    big = tmp_path / "big.jsonl"
    line = json.dumps({"conversation_id": "c{}", "label": "ESC", "tool_calls": []})
    lines = 80_000  # about 5 MB
    big.write_text("".join(line.replace("{}", str(i)) + "\n" for i in range(lines)) + "{not json\n")
    assert big.stat().st_size > 4 << 20
    assert detect_format(big) == "jsonl"  # the bad last line lies beyond the head
    with pytest.raises(InputError, match=rf"big\.jsonl:{lines + 1}: not valid JSON"):
        read_conversations(big)  # reading reads it all
    pretty = tmp_path / "runs.json"  # a multi-line JSON document is read whole to detect it
    runs = json.loads((DATA / "tau_bench_small.json").read_text())
    pretty.write_text(json.dumps(runs * (1 + (5 << 20) // len(json.dumps(runs))), indent=2))
    assert pretty.stat().st_size > 4 << 20 and detect_format(pretty) == "tau-bench"


def test_a_tool_call_that_inspect_ai_recorded_as_failed_is_failed_and_no_escalation():
    # SPEC section 1 (2026-12-04): an escalation call that failed did not reach a person. The log is inspect_ai's
    # own (examples/data/inspect/log_tool_call_error.json): every bash call came back with a ToolCallError.
    log = Path(__file__).parents[2] / "examples" / "data" / "inspect" / "log_tool_call_error.json"
    (conversation,), _ = read_conversations(log)
    calls = conversation["tool_calls"]
    assert len(calls) == 11 and all(c["name"] == "bash" and c["failed"] is True for c in calls)
    conversation = {**conversation, "label": "ESC"}
    as_escalation = score_conversation(conversation, Policy(escalation_tools={"bash"}))
    assert (as_escalation["escalated"], as_escalation["u"], as_escalation["cause"],
            as_escalation["failed_escalations"]) == (False, 1, "no_handoff", 11)
    as_action = score_conversation(conversation, Policy(escalation_tools={"transfer"}, action_tools={"bash"}))
    assert (as_action["cause"], as_action["failed_escalations"]) == ("no_handoff", 0)  # a failed action is a call
