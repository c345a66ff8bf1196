"""Hostile input meets limits (issue 17): archives, numeric options, the judge's network, the dashboard.

Each test is made from a reproduction of the issue, with small files: a member of zeros that
decompresses past the limit, corrupt deflate data, an encrypted member, a cut archive; absurd
numbers for every command's options; a judge's model at plain http:// or behind a redirect to
another host; the Dask dashboard of a local cluster.
"""
from __future__ import annotations

import asyncio
import json
import sys
import threading
import tracemalloc
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cloudpickle
import httpx
import numpy as np
import pandas as pd
import psutil
import pytest
import zstandard
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi

from escalation.estimators.judges import turn_questions
from escalation.estimators.metric import score_file
from escalation.estimators.records import (
    ArchiveLimits,
    InputError,
    Records,
    load_policy,
    normalise_conversation,
    read_conversations,
)
from escalation.integrations.inspect_ai import InspectTurnJudge, TurnJudgeError
from escalation.studies import run_cells

from .._helpers import run_cli_output

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the dask workers cannot import this module

SAMPLE = {"id": 1, "epoch": 1, "target": "ESC",
          "messages": [{"role": "user", "content": "I want a refund of 900 USD."},
                       {"role": "assistant", "content": "A person will decide.",
                        "tool_calls": [{"id": "c1", "function": "transfer_to_human", "arguments": {}}]}]}
POLICY = {"escalation_tools": ["transfer_to_human"], "action_tools": ["issue_refund"]}
MB = 1 << 20


@pytest.fixture()
def policy(tmp_path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(POLICY))
    return path


def _sample(i: int, pad: int = 0) -> bytes:
    return json.dumps({**SAMPLE, "id": i, "metadata": {"pad": "x" * pad}}).encode()


def _eval(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A .eval archive: a header and ``members`` (name: content)."""
    with zipfile.ZipFile(path, "w", method) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _zeros_member(path: Path, name: str, size: int) -> Path:
    """A .eval archive with a sample member of ``size`` zero bytes, streamed in (a zip bomb)."""
    _eval(path, {"samples/1_epoch_1.json": _sample(1)})
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive, \
            archive.open(name, "w", force_zip64=True) as member:
        block = bytes(MB)
        for _ in range(size // MB):
            member.write(block)
    return path


def _data_offset(path: Path, name: str) -> int:
    """Where the compressed data of member ``name`` starts (after its local header, APPNOTE 4.3.7)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    raw = path.read_bytes()
    name_length, extra_length = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    return info.header_offset + 30 + name_length + extra_length


def _zstd_eval(path: Path, compressed: bytes, content: bytes) -> Path:
    """A .eval archive whose one sample member is ``compressed``, marked zstd (method 93, APPNOTE 4.4.5)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("samples/1_epoch_1.json", compressed)
    raw = bytearray(path.read_bytes())
    local, central = raw.find(b"PK\x03\x04"), raw.find(b"PK\x01\x02")
    method, crc = (93).to_bytes(2, "little"), zlib.crc32(content).to_bytes(4, "little")
    size = min(len(content), 0xFFFFFFFF).to_bytes(4, "little")
    raw[local + 8:local + 10], raw[local + 14:local + 18], raw[local + 22:local + 26] = method, crc, size
    raw[central + 10:central + 12], raw[central + 16:central + 20], raw[central + 24:central + 28] = method, crc, size
    path.write_bytes(bytes(raw))
    return path


def _error_line(monkeypatch, capsys, *args) -> str:
    """The one line the command prints for a refused input (exit 2, nothing on stdout)."""
    code, out, err = run_cli_output(monkeypatch, capsys, *args)
    assert code == 2, (code, out, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    return err.strip()


# ------------------------------------------------------------------ inspect archives

def test_a_zip_bomb_member_is_refused_as_soon_as_it_passes_the_limit(tmp_path):
    path = _zeros_member(tmp_path / "bomb.eval", "samples/2_epoch_1.json", 64 * MB)  # 64 MB of zeros in 65 KB
    assert path.stat().st_size < MB
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as refused:
            read_conversations(path, limits=ArchiveLimits(member=MB))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(refused.value) == (f"{path}: member samples/2_epoch_1.json decompresses to more than 1M, the limit of "
                                  "one member (--max-member-bytes raises it)")
    assert peak < 8 * MB  # read in blocks and stopped at the limit, not decompressed whole


def test_the_samples_of_an_archive_are_bounded_together(tmp_path):
    path = _eval(tmp_path / "many.eval", {f"samples/{i}_epoch_1.json": _sample(i, pad=400_000) for i in range(1, 4)})
    with pytest.raises(InputError, match=r"many.eval: the samples decompress to more than 1M by member "
                                         r"samples/3_epoch_1.json, the limit of one archive \(--max-archive-bytes "
                                         r"raises it\)$"):
        read_conversations(path, limits=ArchiveLimits(member=MB, archive=MB))
    assert len(read_conversations(path, limits=ArchiveLimits(member=MB, archive=2 * MB))[0]) == 3


def test_score_names_the_member_and_the_option_and_the_option_raises_the_limit(tmp_path, policy, monkeypatch,
                                                                                capsys):
    path = _eval(tmp_path / "big.eval", {"samples/1_epoch_1.json": _sample(1, pad=2 * MB)})
    line = _error_line(monkeypatch, capsys, "score", path, "--policy", policy, "--max-member-bytes", "1M")
    assert line == (f"error: {path}: member samples/1_epoch_1.json decompresses to more than 1M, the limit of one "
                    "member (--max-member-bytes raises it)")
    line = _error_line(monkeypatch, capsys, "score", path, "--policy", policy, "--max-member-bytes", "3M",
                       "--max-archive-bytes", "1.5M")
    assert "the samples decompress to more than 1.5M by member samples/1_epoch_1.json" in line
    code, out, _ = run_cli_output(monkeypatch, capsys, "score", path, "--policy", policy, "--json",
                                  "--max-member-bytes", "3M")
    assert code == 0 and json.loads(out)["conversations"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("command", [("policy", "init"), ("policy", "check", "--policy", "{policy}"),
                                     ("leaderboard", "--policy", "{policy}", "--out", "{out}")])
def test_every_command_that_reads_archives_has_the_limits_its_error_names(command, tmp_path, policy, monkeypatch,
                                                                          capsys):
    path = _eval(tmp_path / "big.eval", {"samples/1_epoch_1.json": _sample(1, pad=2 * MB)})
    args = [a.format(policy=policy, out=tmp_path / "board") for a in command] + [path]
    if command[0] == "leaderboard":
        args += [path, "--name", "a", "--name", "b"]  # two models
    line = _error_line(monkeypatch, capsys, *args, "--max-member-bytes", "1M")
    assert line == (f"error: {path}: member samples/1_epoch_1.json decompresses to more than 1M, the limit of one "
                    "member (--max-member-bytes raises it)")
    line = _error_line(monkeypatch, capsys, *args, "--max-member-bytes", "3M", "--max-archive-bytes", "1.5M")
    assert "the samples decompress to more than 1.5M by member samples/1_epoch_1.json" in line
    code, _, err = run_cli_output(monkeypatch, capsys, *args, "--max-member-bytes", "3M")
    assert code == 0, err


@pytest.mark.parametrize("size", ["lots", "0", "-1M", "1.5X", ""])
def test_a_size_option_that_is_no_size_is_named(size, tmp_path, policy, monkeypatch, capsys):
    path = _eval(tmp_path / "log.eval", {"samples/1_epoch_1.json": _sample(1)})
    line = _error_line(monkeypatch, capsys, "score", path, "--policy", policy, "--max-archive-bytes", size)
    assert line == (f"error: field '--max-archive-bytes': must be a size such as 512M or 4G (K, M, G, T: powers of "
                    f"1024), got {size!r}")


def test_corrupt_deflate_data_is_an_error_naming_the_member(tmp_path, policy, monkeypatch, capsys):
    path = _eval(tmp_path / "corrupt.eval", {"samples/1_epoch_1.json": _sample(1, pad=5000)})
    raw = bytearray(path.read_bytes())
    start = _data_offset(path, "samples/1_epoch_1.json")
    raw[start:start + 8] = b"\xff" * 8  # deflate block type 3 does not exist: zlib.error, a traceback before
    path.write_bytes(bytes(raw))
    line = _error_line(monkeypatch, capsys, "score", path, "--policy", policy)
    assert line.startswith(f"error: {path}: member samples/1_epoch_1.json cannot be read, the archive is damaged ("
                           "Error -3 while decompressing data")


def test_an_encrypted_member_is_an_error_naming_the_member(tmp_path, policy, monkeypatch, capsys):
    path = _eval(tmp_path / "locked.eval", {"samples/1_epoch_1.json": _sample(1)})
    raw = bytearray(path.read_bytes())
    central = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"samples/1_epoch_1.json"))
    raw[central + 8] |= 0x1  # general purpose flag bit 0: encrypted (APPNOTE 4.4.4); a RuntimeError before
    path.write_bytes(bytes(raw))
    assert _error_line(monkeypatch, capsys, "score", path, "--policy", policy) == (
        f"error: {path}: member samples/1_epoch_1.json is encrypted, which an inspect_ai log never is")


def test_a_cut_archive_and_a_bzip2_member_are_errors(tmp_path, policy, monkeypatch, capsys):
    whole = _eval(tmp_path / "whole.eval", {"samples/1_epoch_1.json": _sample(1, pad=3000)})
    cut = tmp_path / "cut.eval"
    cut.write_bytes(whole.read_bytes()[:-40])  # the end of the central directory is gone
    assert _error_line(monkeypatch, capsys, "score", cut, "--policy", policy) == (
        f"error: {cut}: cannot read the .eval archive (File is not a zip file)")
    bz2 = _eval(tmp_path / "bz2.eval", {"samples/1_epoch_1.json": _sample(1)}, method=zipfile.ZIP_BZIP2)
    assert _error_line(monkeypatch, capsys, "score", bz2, "--policy", policy) == (
        f"error: {bz2}: member samples/1_epoch_1.json is compressed with zip method 12; an inspect_ai log's members "
        "are stored, deflated, zstd")


def test_a_zstd_member_is_read_across_its_frames_and_bounded(tmp_path):
    content = _sample(5, pad=3000)
    frames = zstandard.ZstdCompressor().compress(content[:1000]) + zstandard.ZstdCompressor().compress(content[1000:])
    conversations, _ = read_conversations(_zstd_eval(tmp_path / "frames.eval", frames, content))
    assert [c["conversation_id"] for c in conversations] == ["5:1"]
    bomb = bytes(8 * MB)
    path = _zstd_eval(tmp_path / "bomb.eval", zstandard.ZstdCompressor().compress(bomb), bomb)
    with pytest.raises(InputError, match=r"member samples/1_epoch_1.json decompresses to more than 1M"):
        read_conversations(path, limits=ArchiveLimits(member=MB))
    broken = _zstd_eval(tmp_path / "broken.eval", b"\x28\xb5\x2f\xfd" + b"\xff" * 40, content)
    with pytest.raises(InputError, match=r"member samples/1_epoch_1.json cannot be read, the archive is damaged"):
        read_conversations(broken)


# ------------------------------------------------------------------ numeric options

@pytest.mark.parametrize("args, message", [
    (["plan", "--p", "0.1", "--rho", "0.1", "--half-width", "0.05", "--replicas", "100000000000"],
     "--replicas must be at most 1,000,000 (no evaluation runs more); got 100000000000"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "1e-10"],
     "no plan of at most 1,000,000 scenarios reaches --half-width 1e-10: it needs about 6.57e+18 "
     "scenarios"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--replicas", "10", "--half-width", "1e-10", "--interval",
      "wilson-kish-t"], "no plan of at most 1,000,000 scenarios reaches --half-width 1e-10"),
    (["plan", "--p", "0.1", "--rho", "0", "--scenarios", "10", "--half-width", "1e-10"],
     "no plan of at most 1,000,000 replicas reaches --half-width 1e-10 with --scenarios 10"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--p-b", "0.1000001", "--power", "0.8", "--replicas", "10"],
     "no plan of at most 1,000,000 scenarios reaches --power 0.8: it needs about 2.68e+13"),
    (["plan", "--p", "0.1", "--rho", "0", "--p-b", "0.1000000001", "--power", "0.99", "--scenarios", "100000"],
     "no plan of at most 1,000,000 replicas reaches --power 0.99 with --scenarios 100000"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--half-width", "0.05", "--replicas", "10", "--size-cv", "1e300"],
     "--size-cv must lie in [0, 100]; got 1e+300"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--half-width", "0.05", "--replicas", "10", "--sizes",
      "1,100000000000000000000"], "--sizes must be whole numbers >= 1 (conversations per scenario), "
     "at most 1,000,000"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--half-width", "0.05", "--replicas", "10", "--rho-grid",
      ",".join(str(i / 1000) for i in range(101))],
     "--rho-grid takes at most 100 values (a row of the table each), got 101"),
    (["simulate", "--profile", "follows_policy", "--cases", "1000000000000", "--out", "{tmp}/s"],
     "escalation simulate: 2 x --cases 1000000000000 x --replicas 1 x --max-turns 4 is 8,000,000,000,000 turns, "
     "more than the 4,000,000 a simulation holds in memory (about 1 KB a turn): lower one of them"),
    (["simulate", "--profile", "follows_policy", "--replicas", "100000000000", "--out", "{tmp}/s"],
     "escalation simulate: 2 x --cases 88 x --replicas 100000000000 x --max-turns 4 is"),
    (["simulate", "--profile", "follows_policy", "--max-turns", "100000000000", "--out", "{tmp}/s"],
     "escalation simulate: 2 x --cases 88 x --replicas 1 x --max-turns 100000000000 is"),
    (["simulate", "--profile", "follows_policy", "--n-jobs", "100000", "--out", "{tmp}/s"],
     "escalation simulate: --n-jobs must be at most"),
    (["study", "coverage", "--smoke", "--nsim", "1000000000", "--out", "{tmp}/s"],
     "escalation study coverage: --nsim must be at most 100,000, got 1000000000"),
    (["study", "differences", "--smoke", "--nsim", "1000000000", "--out", "{tmp}/s"],
     "escalation study differences: --nsim must be at most 100,000"),
    (["study", "judges", "--smoke", "--nsim", "1000000000", "--out", "{tmp}/s"],
     "escalation study judges: --nsim must be at most 100,000"),
    (["study", "sample-size", "--smoke", "--nsim", "1000000000", "--out", "{tmp}/s"],
     "escalation study sample-size: --nsim must be at most 100,000"),
    (["study", "coverage", "--smoke", "--n-jobs", "100000", "--out", "{tmp}/s"],
     "escalation study coverage: --n-jobs must be at most"),
    (["reproduce", "--expected-pairs", "1000000000000", "--out", "{tmp}/s"],
     "escalation reproduce: --expected-pairs must be at most 10,000,000, got 1000000000000"),
])
def test_an_absurd_number_is_refused_naming_its_flag_and_the_limit(args, message, tmp_path, monkeypatch, capsys):
    line = _error_line(monkeypatch, capsys, *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert line.startswith(f"error: {message}")
    assert not (tmp_path / "s").exists()


def test_compare_refuses_a_number_of_resamples_it_would_never_finish(tmp_path, policy, monkeypatch, capsys):
    log = tmp_path / "log.eval"
    _eval(log, {f"samples/{i}_epoch_1.json": _sample(i) for i in range(1, 4)})
    for folder in ("a", "b"):
        assert run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", tmp_path / folder)[0] == 0
    assert _error_line(monkeypatch, capsys, "compare", tmp_path / "a", tmp_path / "b", "--n-boot",
                       "100000000000") == "error: --n-boot must be at most 100,000; got 100000000000"


def test_the_plan_of_a_score_is_kept_by_rows_and_names_what_is_missing_and_unplanned(tmp_path):
    plan = pd.DataFrame({"case_id": ["k", "k"], "label": ["ESC", "ACT"], "replicas": [3, 2]})
    records = [{"conversation_id": cid, "case_id": case, "label": label, "replica": replica, "assistant_turns": 1,
                "tool_calls": []}
               for cid, case, label, replica in (("a", "k", "ESC", 0), ("b", "k", "ESC", 5), ("c", "k", "ACT", 1),
                                                 ("d", "j", "ESC", 0))]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    summary, _ = score_file(log, load_policy(policy), plan=plan, out_dir=tmp_path / "out", chunk_size=2)
    missing = summary.to_dict()["not_evaluated"]["missing"]
    assert missing == [{"case_id": "k", "label": "ESC", "replica": 1}, {"case_id": "k", "label": "ESC", "replica": 2},
                       {"case_id": "k", "label": "ACT", "replica": 0}]
    lines = [json.loads(line) for line in (tmp_path / "out" / "conversations.jsonl").read_text().splitlines()]
    assert [line["unplanned"] for line in lines] == [False, True, False, True]


@pytest.mark.parametrize("replicas, message", [
    ("\u00b2", "field 'replicas': must be an integer >= 1 written in the digits 0-9, got '\u00b2'"),
    ("100000000000", "field 'replicas': brings the plan to 100,000,000,001 conversations, more than the "
                     "1,000,000 a plan may hold")])
def test_a_plan_with_a_superscript_or_an_absurd_number_of_replicas_is_one_line(replicas, message, tmp_path, policy,
                                                                               monkeypatch, capsys):
    # The audit's reproductions: replicas "\u00b2" passed str.isdigit and failed int() with a
    # traceback; 1e11 replicas tried to allocate 745 GiB.
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "a", "label": "ESC", "assistant_turns": 1, "tool_calls": []}) + "\n")
    plan = tmp_path / "plan.csv"
    plan.write_text(f"case_id,label,replicas\nb,ACT,1\na,ESC,{replicas}\n", encoding="utf-8")
    line = _error_line(monkeypatch, capsys, "score", log, "--policy", policy, "--plan", plan, "--out", tmp_path / "out")
    assert line == f"error: {plan}:3: {message}"
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ the judge's network

class _Server:
    """A local HTTP server on 127.0.0.1 that keeps the headers of every request it gets.

    ``redirect`` (a URL): every request is answered 307 to it; else with a turn judge's answer.
    """

    def __init__(self, redirect: str | None = None):
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests.append({k.lower(): v for k, v in self.headers.items()})
                if redirect:
                    self.send_response(307)
                    self.send_header("Location", redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"text": '{"p": 0.5}'}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class _SDKClient:
    """Stands for a provider SDK's client: it keeps its base URL and an httpx client that follows
    redirects (as the OpenAI and Anthropic SDKs' DefaultHttpxClient does), and sends an API key
    header that is not Authorization (Anthropic's X-Api-Key)."""

    def __init__(self, base_url: str):
        self._base_url = base_url
        self._client = httpx.AsyncClient(follow_redirects=True)

    async def complete(self, text: str) -> str:
        response = await self._client.post(f"{self._base_url}/complete", json={"prompt": text},
                                           headers={"X-Api-Key": "secret-key", "Authorization": "Bearer secret-token"})
        response.raise_for_status()
        return response.json()["text"]


@modelapi(name="hostile_judge")
class HostileJudge(ModelAPI):
    """A provider as inspect_ai's are: its base URL from ``base_url=`` or from its variable
    ``HOSTILE_JUDGE_BASE_URL`` (which the provider reads, not ``ModelAPI``), kept by its SDK client."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
        super().__init__(model_name, base_url, api_key, [], config)
        import os
        self.client = _SDKClient(base_url or os.environ.get("HOSTILE_JUDGE_BASE_URL", "https://judge.invalid/v1"))

    async def generate(self, input, tools, tool_choice, config):
        return ModelOutput.from_content(model=self.model_name, content=await self.client.complete(input[-1].text))

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


def _questions():
    conversation = normalise_conversation({"conversation_id": "c", "case_id": "k", "label": "ESC", "replica": 0,
                                           "assistant_turns": 1, "tool_calls": [], "language": "en",
                                           "messages": [{"turn": 0, "role": "user", "text": "Refund 900 USD."}]})
    return turn_questions(Records.from_conversations([conversation]), "Refunds over 500 USD go to a person.")[0]


@pytest.mark.parametrize("url", ["http://192.0.2.7:8000/v1", "http://judge.example.com/v1", "HTTP://10.0.0.1/v1"])
def test_a_model_at_plain_http_on_another_machine_is_refused(url, monkeypatch):
    with pytest.raises(ValueError, match=r"plain http to another machine: the key and the conversations would cross "
                                         r"the network unencrypted"):
        InspectTurnJudge(get_model("hostile_judge/direct", base_url=url, memoize=False))
    monkeypatch.setenv("HOSTILE_JUDGE_BASE_URL", url)  # the provider's variable, as OPENAI_BASE_URL
    with pytest.raises(ValueError, match=r"is reached at .*, plain http to another machine"):
        InspectTurnJudge(get_model("hostile_judge/env", memoize=False))


@pytest.mark.parametrize("url", ["http://localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://127.8.9.1/v1",
                                 "http://[::1]:8000/v1", "https://judge.example.com/v1"])
def test_https_and_plain_http_to_this_machine_are_accepted(url):
    assert InspectTurnJudge(get_model("hostile_judge/ok", base_url=url, memoize=False)).model is not None


def test_score_refuses_a_judge_at_plain_http_with_one_line(tmp_path, policy, monkeypatch, capsys):
    log = _eval(tmp_path / "log.eval", {"samples/1_epoch_1.json": _sample(1)})
    rules = tmp_path / "rules.txt"
    rules.write_text("Refunds over 500 USD go to a person.\n")
    monkeypatch.setenv("HOSTILE_JUDGE_BASE_URL", "http://192.0.2.7/v1")
    line = _error_line(monkeypatch, capsys, "score", log, "--policy", policy, "--judge-model", "hostile_judge/cli",
                       "--instructions", rules, "--out", tmp_path / "out")
    assert line.startswith("error: --judge-model 'hostile_judge/cli': the model hostile_judge/cli is reached at "
                           "http://192.0.2.7/v1, plain http to another machine")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_redirect_to_another_host_gets_neither_the_key_nor_the_conversations():
    other = _Server()  # another host: "localhost" is not the origin "127.0.0.1"
    first = _Server(redirect=f"http://localhost:{other.port}/v1/complete")
    try:
        async def plain_httpx():  # what the SDKs' clients do, unguarded: httpx keeps X-Api-Key across hosts
            async with httpx.AsyncClient(follow_redirects=True) as client:
                return await client.post(f"http://127.0.0.1:{first.port}/v1/complete", json={"prompt": "p"},
                                         headers={"X-Api-Key": "secret-key", "Authorization": "Bearer secret-token"})
        assert asyncio.run(plain_httpx()).status_code == 200
        assert len(other.requests) == 1 and other.requests[0]["x-api-key"] == "secret-key"
        assert "authorization" not in other.requests[0]  # the only header httpx drops
        other.requests.clear()

        judge = InspectTurnJudge(get_model("hostile_judge/redirected", base_url=f"http://127.0.0.1:{first.port}/v1",
                                           memoize=False))
        with pytest.raises(TurnJudgeError, match=r"failed at turn 0: HTTPStatusError: Redirect response '307"):
            judge.probabilities(_questions())
        assert first.requests and other.requests == []  # (inspect_ai may ask again: to the first host only)
    finally:
        first.close()
        other.close()


def test_a_judge_of_a_model_that_answers_at_its_own_host_works():
    server = _Server()
    try:
        judge = InspectTurnJudge(get_model("hostile_judge/local", base_url=f"http://127.0.0.1:{server.port}/v1",
                                           memoize=False))
        assert judge.probabilities(_questions()).tolist() == [0.5]
        assert server.requests[0]["x-api-key"] == "secret-key"
    finally:
        server.close()


# ------------------------------------------------------------------ the dask dashboard

def _listening(process: psutil.Process) -> set[tuple[str, int]]:
    """``(address, port)`` of every listening TCP socket of ``process`` and its children."""
    out = set()
    for p in [process, *process.children(recursive=True)]:
        try:
            out |= {(s.laddr.ip, s.laddr.port) for s in p.net_connections(kind="inet")
                    if s.status == psutil.CONN_LISTEN}
        except psutil.Error:
            pass
    return out


def _a_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    return [{"draw": float(np.random.default_rng(seed_seq).random())}]


@pytest.mark.slow
def test_the_local_dask_cluster_and_its_dashboard_listen_on_this_machine_only(tmp_path, monkeypatch):
    import distributed

    seen = {}

    class Watched(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            before = _listening(psutil.Process())
            super().__init__(*args, **kwargs)
            seen["sockets"] = _listening(psutil.Process()) - before
            seen["dashboard"] = int(self.dashboard_link.split(":")[2].split("/")[0])

    monkeypatch.setattr(distributed, "LocalCluster", Watched)
    table = run_cells(pd.DataFrame({"x": [0, 1]}), _a_cell, seed=1, out_dir=tmp_path, progress=False, backend="dask",
                      n_jobs=1)
    assert len(table) == 2
    assert seen["dashboard"] in {port for _, port in seen["sockets"]}
    assert {address for address, _ in seen["sockets"]} == {"127.0.0.1"}  # ":0" served the dashboard on 0.0.0.0
