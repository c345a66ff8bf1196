"""Fuzzing (hypothesis): malformed records and policies never crash the readers or the scorer.

Each input is a well-formed log of one format (or a policy) with a few values replaced by
something wrong: another JSON type, a missing key, integers beyond 64 bits, unicode (lone
surrogates written as invalid UTF-8 too), nesting thousands of levels deep, very long strings.
The outcome must be one of two: a clear :class:`InputError` (one line; the CLI exits 2 and
leaves no output file), or every input conversation accounted for (one line of
``conversations.jsonl`` each, evaluated or not evaluated with its reason).
"""
from __future__ import annotations

import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from escalation.cli import main
from escalation.estimators import (InputError, Policy, Records, conversation_lines, load_policy, read_conversations,
                                   read_jsonl, score_file, score_records)

SLOW_OR_SHARED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]  # each example gets its own folder
# a longer hunt with new examples: HYPOTHESIS_PROFILE=hunt FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz.py
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 40)), deadline=None, database=None,
                suppress_health_check=SLOW_OR_SHARED)
POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
                           "action_tools": ["refund"], "approval_tools": ["request_approval"],
                           "gated_tools": ["refund"]})
POLICY_JSON = json.dumps(POLICY.to_dict())


class Deep:
    """A list nested ``depth`` levels deep, written without recursion."""

    def __init__(self, depth: int):
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.depth})"


def dump(value) -> str:
    """JSON text of ``value``: integers of any size, NaN as ``NaN``, raw unicode, :class:`Deep`."""
    if isinstance(value, Deep):
        return "[" * value.depth + "]" * value.depth
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(dump, value)) + "]"
    return json.dumps(value, ensure_ascii=False)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes invalid UTF-8


WEIRD = st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**40, -1, 0, 1.5, -0.0, 1e308,
                         float("nan"), "", " ", "ESC", "ACT", "transfer_to_human", "get_order", "refund", "user",
                         "assistant", "tool", "\u202e\u0000\ufeff", "\ud800", "日本語 مرحبا 🙂",
                         "x" * 100_000, "attachment://missing", True, False, None])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12), WEIRD)
VALUES = st.one_of(
    st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                          max_size=3), max_leaves=6),
    st.integers(900, 5000).map(Deep),
)


def _calls_openai(name="transfer_to_human"):
    return [{"role": "user", "content": "Refund order 7 please"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order",
                                                                          "arguments": "{\"order_id\": 7}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "900 USD"},
            {"role": "assistant", "content": "Passing you on.",
             "tool_calls": [{"id": "c2", "type": "function", "function": {"name": name, "arguments": "{}"}}]}]


def template(fmt: str):
    """A small well-formed log of ``fmt``: a list of records (one a line) or one JSON document."""
    if fmt == "jsonl":
        return [{"conversation_id": f"c{i}", "case_id": f"k{i // 2}", "label": "ESC" if i % 2 == 0 else "ACT",
                 "replica": 0, "language": "en", "assistant_turns": 2,
                 "tool_calls": [{"name": "get_order", "turn": 0, "arguments": {"order_id": 7}},
                                {"name": "transfer_to_human" if i % 2 == 0 else "refund", "turn": 1}],
                 "messages": [{"turn": 0, "role": "user", "text": "Refund order 7"},
                              {"turn": 1, "role": "assistant", "text": "Done."}]} for i in range(4)]
    if fmt == "openai":
        return [{"conversation_id": f"c{i}", "case_id": f"k{i}", "label": "ESC", "messages": _calls_openai()}
                for i in range(3)]
    if fmt == "openai-responses":
        return [{"conversation_id": f"c{i}", "label": "ACT", "items": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Refund order 7"}]},
            {"type": "function_call", "call_id": "f1", "name": "refund", "arguments": "{\"order_id\": 7}"},
            {"type": "function_call_output", "call_id": "f1", "output": "ok"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]}
                for i in range(3)]
    if fmt == "anthropic":
        return [{"conversation_id": f"c{i}", "label": "ESC", "system": "Be careful.", "messages": [
            {"role": "user", "content": "Refund order 7"},
            {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                              {"type": "tool_use", "id": "t1", "name": "get_order",
                                               "input": {"order_id": 7}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "900"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "transfer_to_human",
                                               "input": {}}]}]} for i in range(3)]
    if fmt == "tau-bench":
        return [{"task_id": i, "trial": 0, "reward": 1.0, "traj": [{"role": "system", "content": "policy"},
                                                                   *_calls_openai()],
                 "info": {"task": {"actions": [{"name": "transfer_to_human", "kwargs": {}}]}}} for i in range(3)]
    if fmt == "tau2-bench":
        return {"info": {"num_trials": 1},
                "tasks": [{"id": "t1", "evaluation_criteria": {"actions": [{"name": "transfer_to_human"}]}}],
                "simulations": [{"id": f"s{i}", "task_id": "t1", "trial": i, "reward_info": {"reward": 1.0},
                                 "messages": [{"role": "assistant", "content": "Hi!"}, *_calls_openai()]}
                                for i in range(3)]}
    if fmt in ("inspect", "inspect-eval"):
        return {"version": 2, "status": "success", "eval": {"task": "t"},
                "samples": [{"id": f"s{i}", "epoch": 1, "target": "ESC", "metadata": {},
                             "attachments": {"a1": "Refund order 7"},
                             "messages": [{"role": "user", "content": "attachment://a1"},
                                          {"role": "assistant", "content": "",
                                           "tool_calls": [{"id": "c1", "function": "refund",
                                                           "arguments": {"order_id": 7}}]}],
                             "events": [{"event": "approval", "decision": "escalate", "call": {"id": "c1"}},
                                        {"event": "tool", "events": [{"event": "approval", "decision": "escalate",
                                                                      "call": {"id": "c9"}}]}]}
                            for i in range(3)]}
    raise ValueError(fmt)


FORMATS = ("jsonl", "openai", "openai-responses", "anthropic", "tau-bench", "tau2-bench", "inspect", "inspect-eval")


def _slots(value, out):
    """Every (container, key) inside ``value``, depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((value, key))
        _slots(child, out)
    return out


@st.composite
def malformed(draw, fmt: str):
    """A log of ``fmt`` with one to three values replaced, deleted or added."""
    doc = copy.deepcopy(template(fmt))
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(doc, [])
        if not slots:
            break
        parent, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "delete":
            del parent[key]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12) | st.sampled_from(["tool_calls", "label", "turn", "covers"]))] = \
                draw(VALUES)
        else:
            parent[key] = draw(VALUES)
    return doc


def expected_conversations(fmt: str, doc) -> int | None:
    """How many conversations a successful read must give (None: the reader must refuse it)."""
    if fmt == "tau2-bench":
        sims = doc.get("simulations") if isinstance(doc, dict) else None
        return len(sims) if isinstance(sims, list) else 0
    if fmt in ("inspect", "inspect-eval"):
        samples = doc.get("samples") if isinstance(doc, dict) else None
        return len(samples) if isinstance(samples, list) else None
    if fmt not in ("jsonl", "tau-bench") and isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], list):
        return len(doc[0])  # a one-line file holding a JSON array is that array of records
    return len(doc) if isinstance(doc, list) else None


def write_log(fmt: str, doc, folder: Path) -> Path:
    if fmt == "inspect-eval":
        path = folder / "log.eval"
        samples = doc.get("samples") if isinstance(doc, dict) else None
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("header.json", encode(dump({k: v for k, v in doc.items() if k != "samples"}))
                             if isinstance(doc, dict) else b"{}")
            for i, sample in enumerate(samples if isinstance(samples, list) else []):
                archive.writestr(f"samples/{i}_epoch_1.json", encode(dump(sample)))
        return path
    path = folder / ("log.jsonl" if isinstance(doc, list) and fmt != "tau-bench" else "log.json")
    text = "\n".join(map(dump, doc)) + "\n" if path.suffix == ".jsonl" else dump(doc)
    path.write_bytes(encode(text))
    return path


def check_scored(fmt: str, doc, path: Path, out: Path, used_format: str | None = None, mode: str = "record") -> None:
    """Score ``path``: a one-line InputError and no output, or every conversation accounted for."""
    try:
        summary, used = score_file(path, POLICY, format=used_format or fmt_name(fmt), out_dir=out, mode=mode,
                                   approval_escalation=True)  # inspect logs: approvals escalate
    except InputError as err:
        assert "\n" not in str(err) and str(err)
        assert not (out / "conversations.jsonl").exists() and not (out / "summary.json").exists()
        assert not out.exists() or not any(out.iterdir())
        return
    lines = (out / "conversations.jsonl").read_bytes().splitlines()
    assert len(lines) == summary.to_dict()["conversations"]
    if doc is not None and used == fmt_name(fmt):
        assert len(lines) == expected_conversations(fmt, doc)
    if used == "jsonl" and mode == "record":  # the Arrow fast path gives what the reference reader gives
        try:
            reference = conversation_lines(score_records(Records.from_conversations(read_jsonl(path)), POLICY))
        except InputError as err:  # known: orjson stops at 1024 levels of nesting, Arrow reads on
            assert "depth limit exceeded" in str(err)
        else:
            assert b"".join(reference).splitlines() == lines
    for line in lines:
        conversation = orjson.loads(line)
        assert isinstance(conversation["evaluated"], bool)
        if not conversation["evaluated"]:
            assert isinstance(conversation["reason"], str) and conversation["reason"]


def fmt_name(fmt: str) -> str:
    return "inspect" if fmt == "inspect-eval" else fmt


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def fresh(folder: Path) -> tuple[Path, Path]:
    """An empty input folder and an output path inside ``folder`` (one per example)."""
    case = Path(tempfile.mkdtemp(dir=folder))
    return case, case / "out"


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.data())
def test_malformed_logs_are_refused_or_fully_accounted_for(fmt, data, folder):
    doc = data.draw(malformed(fmt))
    case, out = fresh(folder)
    path = write_log(fmt, doc, case)
    check_scored(fmt, doc, path, out, mode=data.draw(st.sampled_from(["record", "text"]), label="mode"))
    check_scored(fmt, doc, path, case / "auto", used_format="auto")
    try:
        conversations, _ = read_conversations(path, format=fmt_name(fmt), policy=POLICY)
    except InputError as err:
        assert "\n" not in str(err)
    else:
        assert len(conversations) == expected_conversations(fmt, doc)


@FUZZ
@given(lines=st.lists(st.binary(max_size=60) | st.text(max_size=60).map(encode), max_size=5),
       fmt=st.sampled_from(("auto", "jsonl", "openai", "openai-responses", "anthropic", "tau-bench", "tau2-bench",
                            "inspect")))
def test_arbitrary_bytes_are_refused_or_scored(lines, fmt, folder):
    case, out = fresh(folder)
    path = case / "log.jsonl"
    path.write_bytes(b"\n".join(lines))
    check_scored(fmt, None, path, out, used_format=fmt)


@pytest.mark.parametrize("content", [
    b"", b"\n\n   \n", b"\xef\xbb\xbf", b"\x00" * 100, b"PK\x03\x04 not a zip",
    b'{"conversation_id": "a", "messages": [{"role": "user", "content": "' + b"x" * 3_000_000 + b'"}]}\n',
    b'{"conversation_id": "' + "\u00e9\u6f22".encode() * 500_000 + b'", "tool_calls": []}\n',
    b"[" * 100_000 + b"]" * 100_000,
])
@pytest.mark.parametrize("fmt", ["auto", *FORMATS[:-1]])
def test_empty_long_and_deep_files(content, fmt, folder):
    case, out = fresh(folder)
    path = case / "log.jsonl"
    path.write_bytes(content)
    check_scored(fmt, None, path, out, used_format=fmt)


POLICY_KEYS = st.sampled_from(["escalation_tools", "read_only_tools", "action_tools", "approval_tools",
                               "gated_tools", "name", "description"])
TOOL_NAMES = st.sampled_from(["transfer_to_human", "get_order", "refund", "request_approval", "", "\ud800", "🙂"])


@st.composite
def malformed_policies(draw) -> str:
    policy = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}
    for _ in range(draw(st.integers(0, 4))):
        key = draw(POLICY_KEYS | st.text(max_size=8))
        policy[key] = draw(st.lists(TOOL_NAMES, max_size=3) | VALUES)
    if draw(st.booleans()):
        policy.pop("escalation_tools", None)
    return dump(policy if draw(st.integers(0, 9)) else draw(VALUES))


@FUZZ
@given(text=malformed_policies() | st.text(max_size=40), suffix=st.sampled_from([".json", ".toml"]))
def test_malformed_policies_are_refused_with_one_line(text, suffix, folder):
    case, _ = fresh(folder)
    path = case / f"policy{suffix}"
    path.write_bytes(encode(text))
    try:
        policy = load_policy(path)
    except InputError as err:
        assert "\n" not in str(err) and str(path) in str(err)
    else:
        assert isinstance(policy, Policy) and policy.escalation_tools


@pytest.mark.parametrize("text, suffix", [
    ("[" * 100_000 + "]" * 100_000, ".json"),
    ('{"escalation_tools": ' + "[" * 5000 + "]" * 5000 + "}", ".json"),
    ("escalation_tools = " + "[" * 5000 + "]" * 5000, ".toml"),
    ('{"escalation_tools": ["t"], "name": ' + "9" * 5000 + "}", ".json"),
])
def test_deep_and_huge_policies_are_refused(text, suffix, folder):
    path = folder / f"policy{suffix}"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_policy(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def run_main(*args) -> tuple[int, str]:
    """``escalation ARGS`` in this process: the exit code and what it wrote to stderr."""
    err, argv = io.StringIO(), sys.argv
    sys.argv = ["escalation", *map(str, args)]
    try:
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    finally:
        sys.argv = argv
    return code, err.getvalue()


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(FORMATS))
def test_the_score_command_exits_0_2_or_3_with_one_line(data, fmt, folder):
    """0: scored; 2: bad input, one line, nothing written; 3: nothing evaluated, both files written (SPEC 7)."""
    doc = data.draw(malformed(fmt))
    bad_policy = data.draw(st.booleans())
    case, out = fresh(folder)
    path = write_log(fmt, doc, case)
    policy = case / "policy.json"
    policy.write_bytes(encode(data.draw(malformed_policies())) if bad_policy else POLICY_JSON.encode())
    code, err = run_main("score", path, "--policy", policy, "--format", fmt_name(fmt), "--out", out)
    assert code in (0, 2, 3), err
    if code == 2:
        assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in err
        assert not (out / "conversations.jsonl").exists()
    else:
        lines = (out / "conversations.jsonl").read_bytes().splitlines()
        summary = orjson.loads((out / "summary.json").read_bytes())
        assert len(lines) == summary["conversations"]
        assert (code == 3) == (summary["under"]["n"] + summary["over"]["n"] == 0)
        if not bad_policy:
            assert len(lines) == expected_conversations(fmt, doc)


def test_a_null_line_is_an_input_error_not_a_crash(tmp_path):
    row = '{{"conversation_id": "c{}", "label": "ESC", "tool_calls": []}}\n'
    rows = "".join(row.format(i) for i in range(300))
    policy = tmp_path / "policy.json"
    policy.write_text(POLICY_JSON)
    for name, text in (("first.jsonl", "null\n" + rows), ("middle.jsonl", rows + "null\n" + rows.replace('"c', '"d'))):
        (tmp_path / name).write_text(text)
        run = subprocess.run([sys.executable, "-m", "escalation", "score", str(tmp_path / name), "--format", "jsonl",
                              "--policy", str(policy), "--out", str(tmp_path / "out")], capture_output=True, text=True)
        line = 1 if name == "first.jsonl" else 301
        assert run.returncode == 2, run.stderr  # a crash of pyarrow would be -11 (SIGSEGV)
        assert run.stderr == f"error: {tmp_path / name}:{line}: a record must be a JSON object, got NoneType\n"
