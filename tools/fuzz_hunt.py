"""Seeded fuzzing of ``escalation score``: valid logs of every format, mutated, run through the command.

The seeds are the real fixtures (``tests/data/readers``, ``examples/data``: a three-run slice of
the tau-bench airline log), a small simulated canonical log and one hand-made log a format. A
case mutates one seed: values of the JSON swapped for another type or an awkward value (integers
beyond 64 bits, NaN, lone surrogates, nesting thousands deep, markup and escape codes in tool
names, 100,000-character strings), keys deleted or added, records duplicated, dropped, swapped or
replaced; bytes flipped, deleted, inserted or cut off; lines swapped or repeated; a BOM, CRLF line
ends, UTF-16 or gzip around the whole; a ``.eval`` archive re-packed (members deflated, stored or
zstd-compressed, dropped, repeated, renamed, flagged encrypted, with a wrong CRC, header.json
removed, compressed data or the central directory corrupted, a 32 MB member); a tau2-bench results
folder with its files mutated, removed or repeated. One case in 25 mutates the policy too.

The oracle runs ``escalation score INPUT --policy P --out DIR`` in this process (``escalation.cli.main``,
its argument list patched, ``SystemExit`` caught) and fails on

- any exception other than ``SystemExit`` (a traceback), or an exit code other than 0, 2, 3;
- exit 2 with a message that is not one line ``error: ...`` naming the input (or the mutated policy),
  that names a line the file does not have, or (JSON Lines) a line after the first bad one (the lines
  before it are scored alone: they must not be refused at an earlier line), or with ``DIR`` left behind;
- exit 0 or 3 with a file in ``DIR`` besides ``conversations.jsonl``, ``summary.json``,
  ``report.html`` and its figures, a conversation lost or added (the count is taken from the
  mutated input itself: its non-blank lines, its list of records, its ``samples``, its
  ``simulations`` or their files, the sample members of its archive), in ``conversations.jsonl``
  or in the report's table, or a line that is not a scored or not-evaluated conversation;
- for canonical JSONL, any difference between the Arrow fast path and the reference reader
  (exit code, message, ``conversations.jsonl``, ``summary.json``, the report's table and
  timelines), each with its own chunk size.

The report's figures are drawn by a stand-in (a tiny Figure): drawing is not what is fuzzed.

Case ``i`` of seed ``S`` is drawn from ``numpy.random.default_rng([S, i])`` alone, so a failure is
reproduced from its two numbers: ``python -m tools.fuzz_hunt --seed S --case i --out DIR`` runs
it again and writes its input to ``DIR``. A long hunt, in worker processes (a crashed or killed
worker is a failure of the case it was running; each case has a time and a memory limit)::

    python -m tools.fuzz_hunt --n 20000 --seed 17 --out /tmp/hunt --jobs 2 --minutes 20

writes ``report.md`` and ``report.json`` (inputs per format, exit codes, failures by kind with
their reproductions) and each failing input under ``failures/``. ``tests/e2e/test_fuzz.py`` runs a
small repeatable share of the cases; ``pytest tests/e2e/test_fuzz.py --hunt N`` runs N new ones a format.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import io
import json
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zipfile
import zlib
from collections import Counter, defaultdict
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import typer

from escalation import cli, figures
from tests._fuzz_arrow import reference_reader

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "readers"
EXAMPLES = ROOT / "examples" / "data"
CI_SEED = 20261201
"""The seed of the cases ``tests/e2e/test_fuzz.py`` runs in CI."""

POLICY = {"escalation_tools": ["transfer_to_human", "transfer_to_human_agents"],
          "read_only_tools": ["get_order", "get_account", "get_customer", "get_user_details", "track_parcel",
                              "get_reservation_details", "web_search", "calculate", "think"],
          "action_tools": ["issue_refund", "refund", "waive_fee", "close_account", "cancel_reservation",
                           "cancel_order", "refuel_data", "web_browser_click", "bash"],
          "approval_tools": ["request_approval"], "gated_tools": ["refund", "waive_fee"]}
POLICY_JSON = json.dumps(POLICY).encode()


@dataclass(frozen=True)
class Variant:
    """A format as the fuzzer writes it: ``kind`` is ``jsonl`` (a record a line), ``json`` (one
    document), ``eval`` (an inspect_ai archive) or ``dir`` (a tau2-bench results folder);
    ``records`` says where a document's records are (``""``: the document is their list)."""

    name: str
    format: str
    kind: str
    records: str | None


VARIANTS = (Variant("jsonl", "jsonl", "jsonl", ""), Variant("openai-jsonl", "openai", "jsonl", ""),
            Variant("openai-json", "openai", "json", ""), Variant("openai-responses", "openai-responses", "jsonl", ""),
            Variant("anthropic", "anthropic", "jsonl", ""), Variant("inspect-json", "inspect", "json", "samples"),
            Variant("inspect-eval", "inspect", "eval", None), Variant("tau-bench", "tau-bench", "json", ""),
            Variant("tau2-file", "tau2-bench", "json", "simulations"),
            Variant("tau2-dir", "tau2-bench", "dir", "simulations"))
BY_NAME = {v.name: v for v in VARIANTS}


# --- JSON text of any value -------------------------------------------------------------------------------------

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
    """UTF-8, a lone surrogate written as the invalid UTF-8 it would be."""
    return text.encode("utf-8", "surrogatepass")


def document_text(value) -> bytes:
    """A JSON document on several lines: each record of a top-level list, or each key of an object, on its own."""
    if isinstance(value, list) and value:
        return encode("[\n" + ",\n".join(map(dump, value)) + "\n]\n")
    if isinstance(value, dict) and value:
        return encode("{\n" + ",\n".join(json.dumps(str(k), ensure_ascii=False) + ": " + dump(v)
                                         for k, v in value.items()) + "\n}\n")
    return encode(dump(value) + "\n")


def jsonl_text(values) -> bytes:
    return b"".join(encode(dump(v) + "\n") for v in values)


# --- seeds --------------------------------------------------------------------------------------------------------

def _calls_openai(name="transfer_to_human"):
    return [{"role": "user", "content": "Refund order 7 please"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order",
                                                                          "arguments": "{\"order_id\": 7}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "900 USD"},
            {"role": "assistant", "content": "Passing you on.",
             "tool_calls": [{"id": "c2", "type": "function", "function": {"name": name, "arguments": "{}"}}]}]


def template(fmt: str):
    """A small hand-made log of ``fmt`` (a format name of SPEC section 7): a list of records, or one document."""
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
    if fmt == "inspect":
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


@dataclass
class Member:
    """A member of a zip archive as the fuzzer writes it (``method``: 0 stored, 8 deflate, 93 zstd)."""

    name: str
    data: bytes
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0
    crc: int | None = None  # None: the right one


def unpack(raw: bytes) -> list[Member]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return [Member(info.filename, archive.read(info), info.compress_type) for info in archive.infolist()]


def _compress(data: bytes, method: int) -> bytes:
    if method == zipfile.ZIP_DEFLATED:
        packer = zlib.compressobj(6, zlib.DEFLATED, -15)
        return packer.compress(data) + packer.flush()
    if method == 93:
        import zstandard
        return zstandard.ZstdCompressor().compress(data)
    return data


def pack(members: list[Member]) -> tuple[bytes, list[tuple[int, int]], int]:
    """A zip archive of ``members``: its bytes, where each member's compressed data lies, \
the central directory's offset."""
    out, central, spans = bytearray(), bytearray(), []
    for m in members:
        data, name = _compress(m.data, m.method), m.name.encode("utf-8", "surrogatepass")
        crc = zlib.crc32(m.data) if m.crc is None else m.crc
        flags = m.flags | 0x800  # names in UTF-8
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, m.method, 0, 0x21, crc, len(data), len(m.data),
                           len(name), 0) + name
        spans.append((len(out), len(out) + len(data)))
        out += data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, m.method, 0, 0x21, crc, len(data),
                               len(m.data), len(name), 0, 0, 0, 0, 0, offset) + name
    start = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), start, 0)
    return bytes(out), spans, start


@dataclass(frozen=True)
class Seed:
    """A valid log: its files by relative path, and the one the command is given (a file or a folder)."""

    name: str
    files: dict
    target: str


def _file(path: Path, name: str | None = None) -> Seed:
    name = name or path.name
    return Seed(str(path.relative_to(ROOT)), {name: path.read_bytes()}, name)


def _tree(folder: Path, name: str) -> Seed:
    files = {f"{name}/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in sorted(folder.rglob("*"))
             if p.is_file()}
    return Seed(str(folder.relative_to(ROOT)), files, name)


def _made(fmt: str, name: str, raw: bytes) -> Seed:
    return Seed(f"template({fmt!r})", {name: raw}, name)


@lru_cache(maxsize=None)
def seeds() -> dict[str, tuple[Seed, ...]]:
    """The valid logs of each variant."""
    from escalation import simulate

    with tempfile.TemporaryDirectory() as folder:
        simulated = simulate.write_jsonl(simulate.simulate("lookup_before_escalating", cases=3, replicas=2,
                                                           rho=0.2, seed=3), Path(folder) / "simulated.jsonl")
        simulated = Seed("simulate('lookup_before_escalating', cases=3, replicas=2)",
                         {"simulated.jsonl": simulated.read_bytes()}, "simulated.jsonl")
    inspect_made = template("inspect")
    eval_made = pack([Member("header.json", encode(dump({k: v for k, v in inspect_made.items() if k != "samples"}))),
                      *(Member(f"samples/{s['id']}_epoch_1.json", encode(dump(s)))
                        for s in inspect_made["samples"])])[0]
    airline = json.loads((EXAMPLES / "tau-bench" / "gpt-4o-airline.json").read_bytes())[:3]
    return {
        "jsonl": (_file(DATA / "canonical.jsonl"), simulated,
                  _made("jsonl", "log.jsonl", jsonl_text(template("jsonl")))),
        "openai-jsonl": (_file(DATA / "openai.jsonl"), _made("openai", "log.jsonl", jsonl_text(template("openai")))),
        "openai-json": (_file(DATA / "openai.json"), _made("openai", "log.json", document_text(template("openai")))),
        "openai-responses": (_file(DATA / "responses.jsonl"),
                             _made("openai-responses", "log.jsonl", jsonl_text(template("openai-responses")))),
        "anthropic": (_file(DATA / "anthropic.jsonl"),
                      _made("anthropic", "log.jsonl", jsonl_text(template("anthropic")))),
        "inspect-json": (_file(DATA / "inspect_log.json"), _file(EXAMPLES / "inspect" / "log_tool_call_error.json"),
                         _file(EXAMPLES / "inspect" / "2025-05-12T20-27-36-04-00_browser.json", "browser.json"),
                         _made("inspect", "log.json", document_text(inspect_made))),
        "inspect-eval": (_file(DATA / "inspect_log.eval"), _file(EXAMPLES / "inspect" / "log_read_sample.eval"),
                         _made("inspect", "log.eval", eval_made)),
        "tau-bench": (_file(DATA / "tau_bench_small.json"),
                      Seed("examples/data/tau-bench/gpt-4o-airline.json[:3]",
                           {"airline.json": json.dumps(airline, indent=1).encode()}, "airline.json"),
                      _made("tau-bench", "log.json", document_text(template("tau-bench")))),
        "tau2-file": (_file(DATA / "tau2_results.json"), _made("tau2-bench", "log.json",
                                                                document_text(template("tau2-bench")))),
        "tau2-dir": (_tree(DATA / "tau2_dir", "tau2_dir"),),
    }


# --- mutations ----------------------------------------------------------------------------------------------------

POOL = (None, True, False, 0, 1, -1, 2, 1.5, -0.0, 1e308, float("nan"), 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64,
        -(2**63) - 1, 10**40, 100_000, 100_001, "", " ", "ESC", "ACT", "esc", " Act ", "E S C", "transfer_to_human",
        "transfer_to_human_agents", "get_order", "refund", "user", "assistant", "tool", "system", "[/bold]",
        "[bold red]x", "\x1b[31mred\x1b[0m\x07", "\u202e\u0000\ufeff\r\n", "\ud800", "日本語 مرحبا 🙂", "x" * 100_000,
        "attachment://missing", "attachment://", "line-1", "NaN", "1e999", [], {}, [None], [{}], {"": None},
        [{"name": "transfer_to_human", "turn": 0}], {"role": "assistant", "content": None, "tool_calls": None},
        Deep(1_000), Deep(5_000))
KEYS = ("tool_calls", "label", "turn", "covers", "conversation_id", "case_id", "replica", "scenario_id",
        "assistant_turns", "messages", "content", "role", "name", "function", "arguments", "id", "epoch", "trial",
        "task_id", "requestor", "tool_messages", "events", "attachments", "metadata", "simulations", "samples",
        "target", "type", "input", "items", "call_id", "output", "traj", "info", "reward", "", "\ud800", "[/bold]")
TOKENS = (b'"', b"{", b"}", b"[", b"]", b",", b":", b"null", b"\x00", b"\xed\xa0\x80", b"\xff", b"\xc3", b"NaN",
          b"-Infinity", b"1e999", b"\n", b"\r", b"\\", b"\\u0000", b"\\ud800", b" ", b"\xef\xbb\xbf", b"9" * 30,
          b"{}", b"[]", b"\n\n", b"\x1b[31m")
TREE_OPS = ("swap", "swap", "swap", "delete", "delete", "add", "add", "rename_tool", "swap_id", "big_number",
            "dup_record", "drop_record", "swap_records", "retype_record", "empty_records")
IDS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "id", "task_id", "trial", "epoch", "target",
       "call_id", "tool_call_id", "tool_use_id")
BIG = (100_000, 100_001, 10**7, 2**31, 2**62 - 1, 2**63 - 1, 2**64, -1, -(2**63), 0)
BYTE_OPS = ("flip", "flip", "delete_bytes", "insert", "insert", "truncate", "swap_lines", "dup_line", "drop_line")
WRAPPERS = ("bom", "bom", "crlf", "crlf", "bom+crlf", "utf16", "gzip")


def _pick(rng, items):
    return items[int(rng.integers(len(items)))]


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}...({len(text)} chars)"


def _value(rng, old=None, differ: bool = True):
    """A value of the pool (a fresh copy), of another type than ``old`` when ``differ``."""
    for _ in range(8):
        value = _pick(rng, POOL)
        if not differ or type(value) is not type(old):
            break
    return copy.deepcopy(value)


def _slots(value, path: str, out: list, depth: int = 0) -> list:
    """``(container, key, path)`` of everything inside ``value`` down to 40 levels, depth first (deeper
    values are never mutated, so mutations do not nest a :class:`Deep` inside another)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        here = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
        out.append((value, key, here))
        if depth < 40:
            _slots(child, here, out, depth + 1)
    return out


def _record_list(box: list, variant: Variant | None):
    """The list of records inside ``box[0]`` (the document), and its path; None when there is none."""
    doc = box[0]
    if variant is None or variant.records is None:
        return None, ""
    if variant.records == "":
        return (doc, "$") if isinstance(doc, list) else (None, "")
    listed = doc.get(variant.records) if isinstance(doc, dict) else None
    return (listed, f"$.{variant.records}") if isinstance(listed, list) else (None, "")


def tree_op(rng, box: list, variant: Variant | None, lines: bool) -> str:
    """One mutation of the JSON document ``box[0]`` (records one a line when ``lines``), in place; what it did."""
    records, where = _record_list(box, variant)
    op = _pick(rng, TREE_OPS)
    name = (lambda i: f"line {i + 1}") if lines else (lambda i: f"{where}[{i}]")
    if op in ("dup_record", "drop_record", "swap_records", "retype_record", "empty_records") and records:
        i, j = int(rng.integers(len(records))), int(rng.integers(len(records)))
        if op == "dup_record":
            records.insert(j, copy.deepcopy(records[i]))
            return f"dup_record {name(i)} as {name(j)}"
        if op == "drop_record":
            del records[i]
            return f"drop_record {name(i)}"
        if op == "swap_records":
            records[i], records[j] = records[j], records[i]
            return f"swap_records {name(i)} {name(j)}"
        if op == "retype_record":
            records[i] = _value(rng, records[i])
            return f"retype_record {name(i)} -> {_short(records[i])}"
        records.clear()
        return "empty_records"
    if records and rng.random() < 0.75:
        i = int(rng.integers(len(records)))
        slots = _slots(records[i], "$", [])
        label = f"{name(i)}: " if lines else f"{where}[{i}]"
        if not lines:
            slots = [(p, k, label + path[1:]) for p, k, path in slots]
        else:
            slots = [(p, k, label + path) for p, k, path in slots]
    else:
        slots = _slots(box, "", [])
        slots = [(p, k, "$" + path[3:]) for p, k, path in slots]  # box[0] is the document, "$"
    if op == "rename_tool":
        named = [s for s in slots if s[1] in ("name", "function") and isinstance(s[0][s[1]], str)]
        if named:
            parent, key, path = _pick(rng, named)
            parent[key] = _pick(rng, ("[/bold]", "[bold red]x", "\x1b[2J\x1b[31mred", "x" * 100_000, "\ud800",
                                      "\u202e\u0000", "", " transfer_to_human", "TRANSFER_TO_HUMAN"))
            return f"rename_tool {path} -> {_short(parent[key])}"
        op = "swap"
    if op == "swap_id":  # the fields a reader makes ids and labels of
        keyed = [s for s in slots if s[1] in IDS]
        if keyed:
            parent, key, path = _pick(rng, keyed)
            old, parent[key] = parent[key], _value(rng, parent[key])
            return f"swap_id {path}: {_short(old)} -> {_short(parent[key])}"
        op = "swap"
    if op == "big_number":  # a turn, a count, an epoch, a trial: SPEC 3 bounds T, nothing may allocate by it
        numbers = [s for s in slots if type(s[0][s[1]]) is int]
        if numbers:
            parent, key, path = _pick(rng, numbers)
            old, parent[key] = parent[key], _pick(rng, BIG)
            return f"big_number {path}: {old} -> {parent[key]}"
        op = "swap"
    if op == "add":
        objects = [(p[k], path) for p, k, path in slots if isinstance(p[k], dict)]
        if objects:
            target, path = _pick(rng, objects)
            key, value = _pick(rng, KEYS), _value(rng, differ=False)
            target[key] = value
            return f"add {path}.{key} = {_short(value)}"
        op = "swap"
    if not slots:
        return "nothing to mutate"
    parent, key, path = _pick(rng, slots)
    if op == "delete" and parent is not box:
        del parent[key]
        return f"delete {path}"
    old = parent[key]
    parent[key] = _value(rng, old, differ=rng.random() < 0.7)
    return f"swap {path}: {_short(old)} -> {_short(parent[key])}"


def byte_op(rng, raw: bytes) -> tuple[bytes, str]:
    """One mutation of the bytes ``raw``: the new bytes and what it did."""
    op = _pick(rng, BYTE_OPS) if raw else "insert"
    at = int(rng.integers(len(raw) + 1))
    if op == "flip":
        at = min(at, len(raw) - 1)
        bit = int(rng.integers(8))
        return raw[:at] + bytes([raw[at] ^ (1 << bit)]) + raw[at + 1:], f"flip bit {bit} of byte {at}"
    if op == "delete_bytes":
        n = int(rng.integers(1, 17))
        return raw[:at] + raw[at + n:], f"delete bytes {at}..{at + n - 1}"
    if op == "insert":
        token = _pick(rng, TOKENS)
        return raw[:at] + token + raw[at:], f"insert {token!r} at byte {at}"
    if op == "truncate":
        return raw[:at], f"truncate at byte {at} of {len(raw)}"
    lines = raw.split(b"\n")
    i, j = int(rng.integers(len(lines))), int(rng.integers(len(lines)))
    if op == "swap_lines":
        lines[i], lines[j] = lines[j], lines[i]
        what = f"swap_lines {i + 1} {j + 1}"
    elif op == "dup_line":
        lines.insert(j, lines[i])
        what = f"dup_line {i + 1} as {j + 1}"
    else:
        del lines[i]
        what = f"drop_line {i + 1}"
    return b"\n".join(lines), what


def wrap(rng, raw: bytes) -> tuple[bytes, str]:
    """The whole file re-encoded: a BOM, CRLF line ends, UTF-16, gzip."""
    op = _pick(rng, WRAPPERS)
    if "crlf" in op:
        raw = raw.replace(b"\n", b"\r\n")
    if "bom" in op:
        raw = b"\xef\xbb\xbf" + raw
    if op == "utf16":
        raw = raw.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass") \
            if _decodes(raw) else b"\xff\xfe" + raw
    if op == "gzip":
        raw = gzip.compress(raw, mtime=0)
    return raw, op


def _decodes(raw: bytes) -> bool:
    try:
        raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    return True


def parse(raw: bytes, lines: bool):
    """The JSON of ``raw`` (a list of its lines' values when ``lines``); None when it does not parse.

    Python's parser, whatever the project reads with; nesting as deep as the pool's :class:`Deep` is read.
    """
    with deep_recursion():
        try:
            if lines:
                return [json.loads(line) for line in raw.splitlines() if line.strip()]
            return json.loads(raw)
        except (ValueError, RecursionError):
            return None


@contextlib.contextmanager
def deep_recursion():
    """Recursion as deep as a parsed :class:`Deep` (5,000 levels, a few more for its place) needs."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 12_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def mutate_text(rng, raw: bytes, variant: Variant | None, lines: bool, ops: list, *, wrappers: bool = True) -> bytes:
    """``raw`` with one to four mutations of its JSON and its bytes; each is appended to ``ops``."""
    n_tree, n_bytes = int(_pick(rng, (0, 1, 1, 2, 3))), int(_pick(rng, (0, 0, 1, 1, 2)))
    if n_tree + n_bytes == 0:
        n_tree = 1
    if n_tree:
        doc = parse(raw, lines)
        if doc is not None:
            box = [doc]
            ops.extend(tree_op(rng, box, variant, lines) for _ in range(n_tree))
            raw = jsonl_text(box[0]) if lines and isinstance(box[0], list) else document_text(box[0])
    for _ in range(n_bytes):
        raw, what = byte_op(rng, raw)
        ops.append(what)
    if wrappers and rng.random() < 0.15:
        raw, what = wrap(rng, raw)
        ops.append(what)
    return raw


def _sample_like(name: str) -> bool:
    return name.startswith("samples/") and name.endswith(".json")


def mutate_archive(rng, raw: bytes, ops: list) -> bytes:
    """A ``.eval`` archive re-packed with its members mutated, then (sometimes) its bytes corrupted."""
    members = unpack(raw)
    n_member, n_bytes = int(_pick(rng, (0, 1, 1, 1, 2))), int(_pick(rng, (0, 0, 0, 1)))
    recompress = rng.random() < 0.4
    if n_member + n_bytes == 0 and not recompress:
        n_member = 1
    for _ in range(n_member):
        op = _pick(rng, ("json", "json", "json", "drop", "drop_header", "dup", "rename", "junk", "encrypt", "bad_crc",
                         "bomb"))
        if not members and op != "junk":
            op = "junk"
        if op == "json":
            samples = [m for m in members if _sample_like(m.name)]
            member = _pick(rng, samples) if samples and rng.random() < 0.8 else _pick(rng, members)
            before = len(ops)
            member.data = mutate_text(rng, member.data, None, False, ops, wrappers=rng.random() < 0.5)
            ops[before:] = [f"member {member.name}: {what}" for what in ops[before:]]
            continue
        if op == "drop":
            member = members.pop(int(rng.integers(len(members))))
            ops.append(f"drop member {member.name}")
        elif op == "drop_header":
            members = [m for m in members if m.name not in ("header.json", "_journal/start.json")]
            ops.append("drop header.json and _journal/start.json")
        elif op == "dup":
            member = _pick(rng, members)
            members.insert(int(rng.integers(len(members) + 1)), copy.copy(member))
            ops.append(f"dup member {member.name}")
        elif op == "rename":
            member = _pick(rng, members)
            old, member.name = member.name, _pick(rng, ("samples/x.JSON", "x.json", "samples/../x.json",
                                                        "samples/\u00e9\ud800.json", "samples/", "/samples/a.json",
                                                        "samples/sub/a_epoch_1.json"))
            ops.append(f"rename member {old} -> {member.name!r}")
        elif op == "junk":
            data = _pick(rng, (b"", b"\xff\xfe\x00", b"null", b"[]", b"{}", b'{"id": null}', b'{"id": "j"}'))
            members.append(Member("samples/junk_epoch_1.json", data))
            ops.append(f"add member samples/junk_epoch_1.json = {data!r}")
        elif op == "encrypt":
            member = _pick(rng, members)
            member.flags |= 1
            ops.append(f"flag member {member.name} encrypted")
        elif op == "bad_crc":
            member = _pick(rng, members)
            member.crc = zlib.crc32(member.data) ^ 1
            ops.append(f"wrong CRC of member {member.name}")
        else:
            members.append(Member("samples/bomb_epoch_1.json", b'{"id": "bomb", "epoch": 1, "messages": []' +
                                  b" " * (32 << 20) + b"}"))
            ops.append("add member samples/bomb_epoch_1.json of 32 MB (deflated: 32 KB)")
    if recompress:
        methods = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, 93)
        if rng.random() < 0.5:
            method = _pick(rng, methods)
            for m in members:
                m.method = method
            ops.append(f"re-pack every member with method {method}")
        else:
            for m in members:
                m.method = _pick(rng, methods)
            ops.append("re-pack with methods " + ",".join(str(m.method) for m in members))
    raw, spans, directory = pack(members)
    for _ in range(n_bytes):
        op = _pick(rng, ("corrupt_data", "corrupt_data", "corrupt_directory", "truncate", "flip", "prefix", "append"))
        spans = [s for s in spans if s[1] > s[0]]
        if op == "corrupt_data" and spans:
            start, end = _pick(rng, spans)
            at = int(rng.integers(start, end))
            raw = raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:]
            ops.append(f"corrupt compressed data at byte {at}")
        elif op == "corrupt_directory" and directory < len(raw):
            at = int(rng.integers(directory, len(raw)))
            raw = raw[:at] + bytes([raw[at] ^ (1 << int(rng.integers(8)))]) + raw[at + 1:]
            ops.append(f"corrupt the central directory at byte {at}")
        elif op == "prefix":
            raw = b"junk" + raw
            ops.append("prepend 4 bytes")
        elif op == "append":
            raw = raw + b"\x00" * 7
            ops.append("append 7 bytes")
        else:
            raw, what = byte_op(rng, raw)
            ops.append(what)
    return raw


def mutate_folder(rng, files: dict, target: str, ops: list) -> dict:
    """A tau2-bench results folder with a file mutated, removed, repeated or added."""
    files = dict(files)
    results, sims = f"{target}/results.json", sorted(k for k in files if k.startswith(f"{target}/simulations/"))
    op = _pick(rng, ("results", "results", "sim", "sim", "sim", "drop_sim", "dup_sim", "junk", "drop_results",
                     "no_sims"))
    if op == "results" and results in files:
        before = len(ops)
        files[results] = mutate_text(rng, files[results], BY_NAME["tau2-dir"], False, ops)
        ops[before:] = [f"results.json: {what}" for what in ops[before:]]
    elif op in ("sim", "drop_sim", "dup_sim") and sims:
        name = _pick(rng, sims)
        if op == "sim":
            before = len(ops)
            files[name] = mutate_text(rng, files[name], None, False, ops)
            ops[before:] = [f"{name}: {what}" for what in ops[before:]]
        elif op == "drop_sim":
            del files[name]
            ops.append(f"remove {name}")
        else:
            files[f"{target}/simulations/sim-copy.json"] = files[name]
            ops.append(f"copy {name} to simulations/sim-copy.json")
    elif op == "junk":
        name, data = _pick(rng, (("simulations/notes.txt", b"hello"), ("simulations/junk.json", b"\xff{"),
                                 ("simulations/empty.json", b""), ("simulations/null.json", b"null"),
                                 ("results.json.bak", b"{}")))
        files[f"{target}/{name}"] = data
        ops.append(f"add {name} = {data!r}")
    elif op == "drop_results" and results in files:
        del files[results]
        ops.append("remove results.json")
    else:
        for name in sims:
            del files[name]
        files[f"{target}/simulations/.keep"] = b""
        ops.append("remove every simulation file")
    return files


@dataclass
class Case:
    """One fuzz input: ``files`` (relative path to bytes), the ``target`` given to the command, its ``options``."""

    seed: int
    index: int
    variant: Variant
    source: str
    files: dict
    target: str
    ops: list
    options: list
    reference_chunk: int | None  # chunk size of the reference reader's run (canonical JSONL)
    policy: bytes = POLICY_JSON

    @property
    def compares_readers(self) -> bool:
        fmt = self.options[self.options.index("--format") + 1]
        return fmt == "jsonl" or (fmt == "auto" and self.variant.format == "jsonl")

    def describe(self) -> dict:
        return {"seed": self.seed, "case": self.index, "variant": self.variant.name, "seed_file": self.source,
                "mutations": self.ops, "options": self.options, "reference_chunk_size": self.reference_chunk,
                "reproduce": f"python -m tools.fuzz_hunt --seed {self.seed} --case {self.index} --out DIR"}


def make_case(seed: int, index: int) -> Case:
    """Case ``index`` of ``seed``: made from ``numpy.random.default_rng([seed, index])`` alone."""
    with deep_recursion():  # a document with a Deep is written again by dump()
        return _make_case(seed, index)


def _make_case(seed: int, index: int) -> Case:
    rng = np.random.default_rng([seed, index])
    variant = VARIANTS[index % len(VARIANTS)]
    source = _pick(rng, seeds()[variant.name])
    ops: list[str] = []
    files = dict(source.files)
    if variant.kind == "dir":
        files = mutate_folder(rng, files, source.target, ops)
    elif variant.kind == "eval":
        files[source.target] = mutate_archive(rng, files[source.target], ops)
    else:
        files[source.target] = mutate_text(rng, files[source.target], variant, variant.kind == "jsonl", ops)
    options = ["--format", variant.format if rng.random() < 0.8 else "auto"]
    if rng.random() < 0.15:
        options += ["--mode", "text"]
    if variant.format == "inspect" and rng.random() < 0.5:
        options.append("--approval-escalation")
    if rng.random() < 0.3:
        options += ["--chunk-size", str(_pick(rng, (1, 2, 3)))]
    reference_chunk = int(_pick(rng, (1, 2, 3))) if rng.random() < 0.5 else None
    case = Case(seed, index, variant, source.name, files, source.target, ops, options, reference_chunk)
    if rng.random() < 0.04:  # a bad policy: exit 2 naming it, or the policy is still read right
        before = len(ops)
        case.policy = mutate_text(rng, case.policy, None, False, ops)
        ops[before:] = [f"policy: {what}" for what in ops[before:]]
    return case


# --- the oracle ---------------------------------------------------------------------------------------------------

def _count_records(raw: bytes, lines_only: bool) -> int | None:
    """Conversations of a record file: its list, its one object, else its non-blank lines."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    if not lines_only:
        value = parse(raw, False)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, dict):
            return 1
        if value is not None:
            return None
    return sum(1 for line in raw.split(b"\n") if line.strip())


def expected_conversations(case: Case) -> int | None:
    """How many conversations the mutated input holds, counted from its bytes (None: not countable)."""
    v, raw = case.variant, case.files.get(case.target)
    if v.kind == "dir":
        results = parse(case.files.get(f"{case.target}/results.json", b"{}").removeprefix(b"\xef\xbb\xbf"), False)
        listed = results.get("simulations") if isinstance(results, dict) else None
        if isinstance(listed, list) and listed:
            return len(listed)
        return sum(1 for name in case.files if re.fullmatch(re.escape(case.target) + r"/simulations/[^/]*\.json",
                                                            name))
    if v.kind == "eval":
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                return sum(1 for info in archive.infolist() if _sample_like(info.filename))
        except (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError):
            return None
    if v.records:  # an object holding its records (inspect samples, tau2 simulations)
        doc = parse(raw.removeprefix(b"\xef\xbb\xbf"), False)
        listed = doc.get(v.records) if isinstance(doc, dict) else None
        return len(listed) if isinstance(listed, list) else None
    return _count_records(raw, lines_only=v.format == "jsonl")


class CaseTimeout(BaseException):
    """A run took longer than its time limit (BaseException: no ``except Exception`` of the code swallows it)."""


@contextlib.contextmanager
def limits(seconds: float | None, memory_bytes: int | None):
    """A time limit (SIGALRM, main thread only) and an address-space limit above what the process holds now."""
    timer = seconds is not None and threading.current_thread() is threading.main_thread()
    if timer:
        def expire(signum, frame):
            raise CaseTimeout(f"still running after {seconds} s")
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    saved = resource.getrlimit(resource.RLIMIT_AS)
    if memory_bytes is not None:
        in_use = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
        cap = in_use + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (cap if saved[1] == resource.RLIM_INFINITY else min(cap, saved[1]),
                                                saved[1]))
    try:
        yield
    finally:
        if memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, saved)
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


@lru_cache(maxsize=None)
def _command():
    return typer.main.get_command(cli.app)  # what app() builds on every call: built once


@dataclass
class Run:
    code: int | None
    stderr: str
    error: str | None = None  # "Type: message" of an exception other than SystemExit
    trace: str | None = None


#: What a run that exits 0 or 3 writes into ``--out``.
OUTPUTS = ["conversations.jsonl", "report.html", "summary.json"]


def _report(out: Path) -> dict:
    return figures.report_data((out / "report.html").read_text(encoding="utf-8"))


def run_cli(args, *, reference: bool = False, seconds: float | None = None, memory: int | None = None) -> Run:
    """``escalation ARGS`` in this process (``escalation.cli.main``, its command built once); with
    ``reference``, canonical JSONL goes through the reference reader."""
    err, saved_argv, saved_app = io.StringIO(), sys.argv, cli.app
    sys.argv, cli.app = ["escalation", *map(str, args)], _command()
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(redirect_stderr(err))
            stack.enter_context(redirect_stdout(io.StringIO()))
            if reference:
                stack.enter_context(reference_reader())
            stack.enter_context(limits(seconds, memory))
            cli.main()
        return Run(0, err.getvalue())
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        return Run(code, err.getvalue())
    except (Exception, CaseTimeout) as error:
        return Run(None, err.getvalue(), f"{type(error).__name__}: {str(error)[:300]}", traceback.format_exc())
    finally:
        sys.argv, cli.app = saved_argv, saved_app


@dataclass
class Result:
    case: Case
    codes: list = field(default_factory=list)
    format: str | None = None
    failures: list = field(default_factory=list)  # {"kind", "detail", "trace"?}

    def fail(self, kind: str, detail: str, trace: str | None = None) -> None:
        self.failures.append({"kind": kind, "detail": detail, **({"trace": trace} if trace else {})})

    def to_dict(self) -> dict:
        return {**self.case.describe(), "exit_codes": self.codes, "format_read": self.format,
                "failures": self.failures}


def _outputs(run: Run, out: Path, others: tuple) -> tuple:
    """What a run gave, for comparing two runs: exit code, messages, conversations, summary without its time
    (nor the hashes of the report, which holds the time), the report's table and timelines."""
    stderr = run.stderr
    for path in others:
        stderr = stderr.replace(str(path), "OUT")
    if run.code not in (0, 3) or not (out / "summary.json").is_file():
        return run.code, run.error and run.error.split(":")[0], stderr
    summary = json.loads((out / "summary.json").read_bytes())
    summary["provenance"].pop("created", None)
    summary["provenance"].get("command", {}).pop("chunk_size", None)
    summary["provenance"]["outputs"] = {"conversations.jsonl": summary["provenance"]["outputs"]["conversations.jsonl"]}
    report = _report(out) if (out / "report.html").is_file() else {"rows": None, "timelines": None}
    return run.code, stderr, (out / "conversations.jsonl").read_bytes(), json.dumps(summary, sort_keys=True), \
        json.dumps([report["rows"], report["timelines"]], sort_keys=True)


def judge(result: Result, run: Run, out: Path, given: tuple, expected: int | None, which: str = "") -> None:
    """The failures of one run, added to ``result``; an exit 2 must name one of the files ``given``."""
    tag = f" ({which})" if which else ""
    result.codes.append(run.code if run.error is None else run.error.split(":")[0])
    if run.error is not None:
        kind = {"CaseTimeout": "timeout", "MemoryError": "memory"}.get(run.error.split(":")[0], "traceback")
        result.fail(kind, run.error + tag, run.trace)
        return
    if run.code not in (0, 2, 3):
        result.fail("exit", f"exit {run.code}{tag}: {run.stderr[-300:]}")
        return
    if "Traceback" in run.stderr:
        result.fail("traceback", f"a traceback on stderr{tag}: {run.stderr[-300:]}")
    if run.code == 2:
        lines = run.stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("error: "):
            result.fail("message", f"not one line 'error: ...'{tag}: {run.stderr[:300]!r}")
        elif not any(str(path) in lines[0] for path in given):
            result.fail("message", f"does not name the input{tag}: {lines[0][:300]!r}")
        if out.exists():
            result.fail("left", f"exit 2 left {out.name}/ with {sorted(p.name for p in out.iterdir())}{tag}")
        return
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if names != OUTPUTS:
        result.fail("left", f"exit {run.code}: {out.name}/ holds {names}{tag}")
        if not {"conversations.jsonl", "summary.json", "report.html"} <= set(names):
            return
    summary = json.loads((out / "summary.json").read_bytes())
    lines = (out / "conversations.jsonl").read_bytes().splitlines()
    result.format = summary["provenance"]["format"]
    if len(lines) != summary["conversations"]:
        result.fail("lost", f"{len(lines)} lines in conversations.jsonl, summary.json says {summary['conversations']}"
                    + tag)
    if expected is not None and result.format == result.case.variant.format and len(lines) != expected:
        result.fail("lost", f"{len(lines)} conversations written, the input holds {expected}{tag}")
    rows = len(_report(out)["rows"])
    if rows != len(lines):
        result.fail("lost", f"{rows} conversations in report.html, {len(lines)} in conversations.jsonl{tag}")
    for number, line in enumerate(lines, start=1):
        row = json.loads(line)
        if not isinstance(row.get("evaluated"), bool) or \
                (not row["evaluated"] and not (isinstance(row.get("reason"), str) and row["reason"])):
            result.fail("output", f"conversations.jsonl line {number} is neither evaluated nor given a reason{tag}")
            break
    nothing = summary["under"]["n"] + summary["over"]["n"] == 0
    if (run.code == 3) != nothing:
        result.fail("exit", f"exit {run.code} with {summary['under']['n'] + summary['over']['n']} conversations "
                    f"evaluated{tag}")


def write_case(case: Case, folder: Path) -> tuple[Path, Path]:
    """The case's input files and the policy in ``folder``: ``(input given to the command, policy)``."""
    for name, data in case.files.items():
        path = folder / "input" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if case.variant.kind == "dir":
        (folder / "input" / case.target / "simulations").mkdir(parents=True, exist_ok=True)
    policy = folder / "policy.json"
    policy.write_bytes(case.policy)
    return folder / "input" / case.target, policy


def check_case(case: Case, folder: Path, *, seconds: float | None = None, memory: int | None = None) -> Result:
    """Run the case in ``folder`` (made here) and judge it."""
    folder.mkdir(parents=True, exist_ok=True)
    given, policy = write_case(case, folder)
    expected = expected_conversations(case)
    result = Result(case)
    out = folder / "out"
    run = run_cli(["score", given, "--policy", policy, "--out", out, *case.options], seconds=seconds, memory=memory)
    named = (given, policy) if case.policy != POLICY_JSON else (given,)
    judge(result, run, out, named, expected)
    if case.compares_readers:
        options = list(case.options)
        if "--chunk-size" in options:
            del options[options.index("--chunk-size"):options.index("--chunk-size") + 2]
        if case.reference_chunk is not None:
            options += ["--chunk-size", str(case.reference_chunk)]
        out_ref = folder / "out-reference"
        ref = run_cli(["score", given, "--policy", policy, "--out", out_ref, *options], reference=True,
                      seconds=seconds, memory=memory)
        judge(result, ref, out_ref, named, expected, "reference reader")
        fast, slow = _outputs(run, out, (out, out_ref)), _outputs(ref, out_ref, (out, out_ref))
        if fast != slow:
            result.fail("readers", f"Arrow fast path ({_brief(fast)}) and reference reader "
                        f"(chunk size {case.reference_chunk or 'default'}: {_brief(slow)}) disagree")
    if run.code == 2:
        _check_first_line(result, run, given, policy, folder, seconds=seconds, memory=memory)
    return result


def _named_line(stderr: str, path: Path) -> int | None:
    """The line of ``path`` that an ``error: PATH:LINE: ...`` message names."""
    match = re.match(re.escape(f"error: {path}:") + r"(\d+): ", stderr)
    return int(match.group(1)) if match else None


def _check_first_line(result: Result, run: Run, given: Path, policy: Path, folder: Path, **limits) -> None:
    """The line an error names lies in the file; of a JSON Lines input, the lines before it are not
    refused at an earlier line (the error names the first bad line, SPEC 6)."""
    case, line = result.case, _named_line(run.stderr, given)
    if line is None:
        return
    if case.target not in case.files:
        result.fail("message", f"names line {line} of a folder: {run.stderr.strip()[:200]!r}")
        return
    lines = case.files[case.target].split(b"\n")
    if line > len(lines):
        result.fail("message", f"names line {line} of a file of {len(lines)} lines: {run.stderr.strip()[:200]!r}")
        return
    if line == 1 or case.variant.kind != "jsonl" or case.options[case.options.index("--format") + 1] == "auto" \
            or parse(lines[0].removeprefix(b"\xef\xbb\xbf"), False) is None:  # not JSON Lines: a document's error
        return
    head = folder / "head" / given.name
    head.parent.mkdir()
    head.write_bytes(b"\n".join(lines[:line - 1]) + b"\n")
    out = folder / "out-head"
    before = run_cli(["score", head, "--policy", policy, "--out", out, *case.options], **limits)
    judge(result, before, out, (head, policy), _count_records(head.read_bytes(), case.variant.format == "jsonl"),
          f"its {line - 1} lines before line {line}")
    earlier = _named_line(before.stderr, head) if before.code == 2 else None
    if earlier is not None and earlier < line:
        result.fail("first", f"the error names line {line}, but line {earlier} is refused already: "
                    f"{before.stderr.strip()[:200]!r}")


def _brief(outputs: tuple) -> str:
    if len(outputs) == 3:
        return f"exit {outputs[0]}: {str(outputs[2] or outputs[1])[:200]!r}"
    return f"exit {outputs[0]}, {len(outputs[2].splitlines())} conversations"


def save_case(result: Result, folder: Path) -> Path:
    """The failing case's input and a ``case.json`` of what failed, in ``folder/<variant>-<index>``."""
    where = folder / f"{result.case.variant.name}-{result.case.index}"
    if where.exists():
        shutil.rmtree(where)
    write_case(result.case, where)
    (where / "case.json").write_text(json.dumps(result.to_dict(), indent=1, ensure_ascii=True))
    return where


def indices(variant: str, count: int) -> range:
    """The first ``count`` case indices of ``variant``."""
    k = next(i for i, v in enumerate(VARIANTS) if v.name == variant)
    return range(k, k + count * len(VARIANTS), len(VARIANTS))


def explain(result: Result, saved: Path | None = None) -> str:
    """A failure as a person reads it: the case, its mutations, what failed."""
    c = result.case
    text = [f"seed {c.seed} case {c.index} ({c.variant.name}, from {c.source}; options {' '.join(c.options)})",
            *(f"  mutation: {op}" for op in c.ops)]
    text += [f"  {f['kind']}: {f['detail']}" for f in result.failures]
    text.append(f"  again: python -m tools.fuzz_hunt --seed {c.seed} --case {c.index} --out DIR"
                + (f"; input saved in {saved}" if saved else ""))
    return "\n".join(text)


# --- the long hunt ------------------------------------------------------------------------------------------------

def _signature(failure: dict) -> str:
    """What a failure is, without the case's numbers, for grouping: the exception and the innermost project frame."""
    detail = failure["detail"]
    if failure["kind"] in ("traceback", "memory", "timeout") and failure.get("trace"):
        frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', failure["trace"])
        project = (str(ROOT), str(Path(cli.__file__).parents[1]))
        own = [f"{Path(f).parent.name}/{Path(f).name}:{fn}" for f, fn in frames
               if f.startswith(project) and not f.startswith(str(ROOT / "tests"))] or \
            [f"{Path(f).name}:{fn}" for f, fn in frames[-1:]]
        return f"{failure['kind']}: {detail.split(':')[0]} in {own[-1] if own else '?'}"
    detail = re.sub(r"/\S+", "PATH", detail)
    detail = re.sub(r"\d+", "N", detail)
    return f"{failure['kind']}: {detail[:110]}"


def _fuzzer_error(seed: int, index: int, error: Exception) -> dict:
    """The log record of a case the fuzzer itself failed to make."""
    return {"seed": seed, "case": index, "variant": VARIANTS[index % len(VARIANTS)].name, "mutations": [],
            "options": [], "exit_codes": ["fuzzer"],
            "failures": [{"kind": "fuzzer", "detail": f"{type(error).__name__}: {error}",
                          "trace": traceback.format_exc()}]}


def _worker(args) -> None:
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    log = open(Path(args.out) / f"worker-{args.start % args.step}.jsonl", "a", buffering=1)
    work = Path(args.out) / f"work-{args.start % args.step}"  # a killed worker's case is removed by the next
    shutil.rmtree(work, ignore_errors=True)
    seeds()
    for index in range(args.start, args.n, args.step):
        if deadline is not None and time.time() > deadline:
            break
        log.write(json.dumps({"start": index}) + "\n")
        try:
            case = make_case(args.seed, index)
        except Exception as error:  # the fuzzer's own error: recorded, and the hunt goes on
            log.write(json.dumps(_fuzzer_error(args.seed, index, error)) + "\n")
            continue
        try:
            result = check_case(case, work / str(index), seconds=args.timeout,
                                memory=int(args.memory_gb * (1 << 30)))
        except Exception as error:
            result = Result(case, ["fuzzer"])
            result.fail("fuzzer", f"{type(error).__name__}: {error}", traceback.format_exc())
        if result.failures:
            save_case(result, Path(args.out) / "failures")
        log.write(json.dumps(result.to_dict(), ensure_ascii=True) + "\n")
        shutil.rmtree(work / str(index), ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


def _hunt(args) -> None:
    """Cases ``0 .. n-1`` in ``args.jobs`` worker processes; a worker that dies is a crash of its case, and
    the next worker goes on after it."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in (*out.glob("worker-*.jsonl"), *out.glob("worker-*.stderr")):
        old.unlink()
    began = time.time()
    command = [sys.executable, "-m", "tools.fuzz_hunt", "--worker", "--seed", str(args.seed), "--n", str(args.n),
               "--out", str(out), "--step", str(args.jobs), "--timeout", str(args.timeout),
               "--memory-gb", str(args.memory_gb)]

    def spawn(w: int, start: int):
        left = [] if not args.minutes else ["--minutes", str(max(args.minutes - (time.time() - began) / 60, 0.01))]
        with open(out / f"worker-{w}.stderr", "ab") as stderr:
            return subprocess.Popen([*command, "--start", str(start), *left], cwd=ROOT, stderr=stderr)

    def time_left() -> bool:
        return not args.minutes or time.time() - began < args.minutes * 60

    workers = {w: spawn(w, w) for w in range(min(args.jobs, args.n))}
    failed_starts = Counter()
    while workers:
        time.sleep(1)
        for w, proc in list(workers.items()):
            if proc.poll() is None:
                continue
            del workers[w]
            if proc.returncode == 0:
                continue
            log = out / f"worker-{w}.jsonl"
            records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
            done = {r["case"] for r in records if "case" in r}
            started = [r["start"] for r in records if "start" in r]
            running = [i for i in started if i not in done]
            if running:  # the worker died in this case
                try:
                    result = Result(make_case(args.seed, running[-1]), [f"died ({proc.returncode})"])
                except Exception as error:
                    record = _fuzzer_error(args.seed, running[-1], error)
                else:
                    result.fail("crash", f"the worker process ended with {proc.returncode} (negative: a signal)")
                    save_case(result, out / "failures")
                    record = result.to_dict()
                with open(log, "a") as handle:
                    handle.write(json.dumps(record, ensure_ascii=True) + "\n")
            else:  # outside a case (the code under test did not import?): try again, 20 times
                failed_starts[w] += 1
                tail = (out / f"worker-{w}.stderr").read_text(errors="replace")[-2000:]
                print(f"worker {w} ended with {proc.returncode} outside a case:\n{tail}", file=sys.stderr)
                if failed_starts[w] >= 20:
                    continue
                time.sleep(15)
            following = max(started, default=w - args.jobs) + args.jobs
            if following < args.n and time_left():
                workers[w] = spawn(w, following)
    for work in out.glob("work-*"):
        shutil.rmtree(work, ignore_errors=True)
    report(out, args.seed, time.time() - began)


def report(out: Path, seed: int, seconds: float) -> dict:
    """``report.json`` and ``report.md`` of a hunt, from the workers' logs in ``out``."""
    results = [json.loads(line) for log in sorted(out.glob("worker-*.jsonl"))
               for line in log.read_text().splitlines() if '"case"' in line]
    results.sort(key=lambda r: r["case"])
    per_format = defaultdict(Counter)
    groups = defaultdict(list)
    for r in results:
        per_format[r["variant"]]["inputs"] += 1
        per_format[r["variant"]]["runs"] += len(r["exit_codes"])
        per_format[r["variant"]][f"exit {r['exit_codes'][0]}"] += 1
        per_format[r["variant"]]["failing inputs"] += bool(r["failures"])
        for f in r["failures"]:
            groups[_signature(f)].append(r)
    facts = {"seed": seed, "inputs": len(results), "seconds": round(seconds),
             "per_format": {k: dict(v) for k, v in sorted(per_format.items())},
             "failures": {sig: {"inputs": len(rs), "variants": dict(Counter(r["variant"] for r in rs)),
                                "examples": [{"case": r["case"], "variant": r["variant"], "mutations": r["mutations"],
                                              "options": r["options"],
                                              "failures": [f["kind"] + ": " + f["detail"] for f in r["failures"]],
                                              "saved": str(out / "failures" / f"{r['variant']}-{r['case']}")}
                                             for r in rs[:5]]}
                          for sig, rs in sorted(groups.items(), key=lambda kv: -len(kv[1]))}}
    (out / "report.json").write_text(json.dumps(facts, indent=1))
    lines = [f"# Fuzz hunt, seed {seed}", "",
             f"{len(results)} inputs in {seconds / 60:.1f} minutes; "
             f"{sum(1 for r in results if r['failures'])} failing.", "",
             "| format | inputs | exit 0 | exit 2 | exit 3 | other | failing | runs |",
             "|---|---|---|---|---|---|---|---|"]
    for name, c in sorted(per_format.items()):
        other = sum(v for k, v in c.items() if k.startswith("exit ") and k not in ("exit 0", "exit 2", "exit 3"))
        lines.append(f"| {name} | {c['inputs']} | {c['exit 0']} | {c['exit 2']} | {c['exit 3']} | {other} | "
                     f"{c['failing inputs']} | {c['runs']} |")
    lines += ["", "Exit codes are those of the first run of each input; runs also counts the run through the "
              "reference reader (canonical JSONL) and the run on the lines before a line an error names.", ""]
    for sig, group in facts["failures"].items():
        lines += [f"## {sig}", "",
                  f"{group['inputs']} inputs ({', '.join(f'{k} {v}' for k, v in group['variants'].items())})",
                  ""]
        for ex in group["examples"][:3]:
            lines.append(f"- case {ex['case']} ({ex['variant']}; {' '.join(ex['options'])}): "
                         f"{'; '.join(ex['mutations'])}")
            lines += [f"  - {f[:300]}" for f in ex["failures"]]
            lines.append(f"  - input: {ex['saved']}")
        lines.append("")
    (out / "report.md").write_text("\n".join(lines))
    return facts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz_hunt", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="cases to try (indices 0 .. n-1)")
    parser.add_argument("--seed", type=int, default=CI_SEED)
    parser.add_argument("--out", required=True, help="folder of the report and of the failing inputs")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take")
    parser.add_argument("--memory-gb", type=float, default=3.0, help="memory a run may take above the worker's own")
    parser.add_argument("--case", type=int, default=None, help="run this one case again, its input saved in --out")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--step", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args)
    elif args.case is not None:
        case = make_case(args.seed, args.case)
        with tempfile.TemporaryDirectory() as folder:
            result = check_case(case, Path(folder), seconds=args.timeout, memory=int(args.memory_gb * (1 << 30)))
        saved = save_case(result, Path(args.out))
        print(explain(result, saved) if result.failures else f"passes: {json.dumps(case.describe())}")
        for f in result.failures:
            if f.get("trace"):
                print(f["trace"])
    else:
        _hunt(args)


if __name__ == "__main__":
    main()
