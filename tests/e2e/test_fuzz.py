"""Fuzzing: malformed logs, bytes and policies never crash the readers or the scorer.

The seeded fuzzer (:mod:`tools.fuzz_hunt`) mutates the valid logs of every format, real fixtures
among them, and runs ``escalation score`` on each: it must exit 0, 2 or 3, with one line naming
the file and nothing left in ``--out`` on 2, every conversation of the input in
``conversations.jsonl`` on 0 and 3, and the same outputs through the Arrow fast path and the
reference reader of canonical JSONL. Hypothesis adds arbitrary bytes and malformed policies.
Repeatable in CI; ``pytest tests/e2e/test_fuzz.py --hunt N`` tries N new inputs a test, and
``python -m tools.fuzz_hunt`` runs a long hunt with a report.
"""
from __future__ import annotations

import importlib.util
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import conversation_lines, score_file, score_records
from escalation.estimators.records import FORMATS, InputError, Policy, Records, load_policy, read_jsonl

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


def _fuzz_hunt():
    """The fuzzing tool, ``tools/fuzz_hunt.py``, loaded from its file (the repository root is not on
    ``sys.path`` in the tests: see conftest.py)."""
    if "tools.fuzz_hunt" not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "tools" / "fuzz_hunt.py"
        spec = importlib.util.spec_from_file_location("tools.fuzz_hunt", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["tools.fuzz_hunt"] = module
        spec.loader.exec_module(module)
    return sys.modules["tools.fuzz_hunt"]


CI_SEED, VARIANTS, Deep, check_case, dump, encode, explain, indices, make_case, save_case = (
    getattr(_fuzz_hunt(), _name)
    for _name in ('CI_SEED', 'VARIANTS', 'Deep', 'check_case', 'dump', 'encode', 'explain', 'indices', 'make_case',
                  'save_case'))

SLOW_OR_SHARED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]  # each example gets its own folder
HUNTING = settings.get_current_profile_name() == "hunt"  # pytest --hunt N: N examples, drawn anew
FUZZ = settings(max_examples=settings.default.max_examples if HUNTING else 40, deadline=None, database=None,
                suppress_health_check=SLOW_OR_SHARED)
CI_CASES = 30
"""Mutated inputs of each format in CI (10 formats: 300 inputs)."""
POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
                           "action_tools": ["refund"], "approval_tools": ["request_approval"],
                           "gated_tools": ["refund"]})


@pytest.mark.parametrize("variant", [v.name for v in VARIANTS])
def test_mutated_logs_exit_0_2_or_3_and_lose_no_conversation(variant, hunt, tmp_path):
    seed = secrets.randbits(32) if hunt else CI_SEED
    failed = []
    for index in indices(variant, hunt or CI_CASES):
        result = check_case(make_case(seed, index), tmp_path / str(index), seconds=120, memory=4 << 30)
        if result.failures:
            failed.append(explain(result, save_case(result, tmp_path / "failures")))
        shutil.rmtree(tmp_path / str(index))
    assert not failed, f"{len(failed)} of {hunt or CI_CASES} inputs failed (seed {seed}):\n" + "\n".join(failed)


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


def check_scored(path: Path, out: Path, fmt: str) -> None:
    """Score ``path``: a one-line InputError and no output, or every conversation accounted for."""
    try:
        summary, used = score_file(path, POLICY, format=fmt, out_dir=out,
                                   approval_escalation=True)  # inspect logs: approvals escalate
    except InputError as err:
        assert "\n" not in str(err) and str(err)
        assert not out.exists() or not any(out.iterdir())
        return
    lines = (out / "conversations.jsonl").read_bytes().splitlines()
    assert len(lines) == summary.to_dict()["conversations"]
    if used == "jsonl":  # the Arrow fast path gives what the reference reader gives
        reference = conversation_lines(score_records(Records.from_conversations(read_jsonl(path)), POLICY))
        assert b"".join(reference).splitlines() == lines
    for line in lines:
        conversation = orjson.loads(line)
        assert isinstance(conversation["evaluated"], bool)
        if not conversation["evaluated"]:
            assert isinstance(conversation["reason"], str) and conversation["reason"]


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def fresh(folder: Path) -> tuple[Path, Path]:
    """An empty input folder and an output path inside ``folder`` (one per example)."""
    case = Path(tempfile.mkdtemp(dir=folder))
    return case, case / "out"


@FUZZ
@given(lines=st.lists(st.binary(max_size=60) | st.text(max_size=60).map(encode), max_size=5),
       fmt=st.sampled_from(("auto", *FORMATS)))
def test_arbitrary_bytes_are_refused_or_scored(lines, fmt, folder):
    case, out = fresh(folder)
    path = case / "log.jsonl"
    path.write_bytes(b"\n".join(lines))
    check_scored(path, out, fmt)


@pytest.mark.parametrize("content", [
    b"", b"\n\n   \n", b"\xef\xbb\xbf", b"\x00" * 100, b"PK\x03\x04 not a zip",
    b'{"conversation_id": "a", "messages": [{"role": "user", "content": "' + b"x" * 3_000_000 + b'"}]}\n',
    b'{"conversation_id": "' + "\u00e9\u6f22".encode() * 500_000 + b'", "tool_calls": []}\n',
    b"[" * 100_000 + b"]" * 100_000,
], ids=["empty", "blank lines", "BOM", "NUL bytes", "zip magic", "3 MB string", "long id", "deep"])
@pytest.mark.parametrize("fmt", ["auto", *FORMATS])
def test_empty_long_and_deep_files(content, fmt, folder):
    case, out = fresh(folder)
    path = case / "log.jsonl"
    path.write_bytes(content)
    check_scored(path, out, fmt)


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


def test_a_null_line_is_an_input_error_not_a_crash(tmp_path):
    row = '{{"conversation_id": "c{}", "label": "ESC", "tool_calls": []}}\n'
    rows = "".join(row.format(i) for i in range(300))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY.to_dict()))
    for name, text in (("first.jsonl", "null\n" + rows), ("middle.jsonl", rows + "null\n" + rows.replace('"c', '"d'))):
        (tmp_path / name).write_text(text)
        run = subprocess.run([sys.executable, "-m", "escalation", "score", str(tmp_path / name), "--format", "jsonl",
                              "--policy", str(policy), "--out", str(tmp_path / "out")], capture_output=True, text=True)
        line = 1 if name == "first.jsonl" else 301
        assert run.returncode == 2, run.stderr  # a crash of pyarrow would be -11 (SIGSEGV)
        assert run.stderr == f"error: {tmp_path / name}:{line}: a record must be a JSON object, got NoneType\n"
