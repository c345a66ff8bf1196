"""Speed and memory of scoring production traces: OTLP JSON spans against canonical JSONL.

Usage: python benchmarks/traces.py [--megabytes 1000] [--files 20] [--workers 2]

Makes a folder of OTLP JSON trace files (JSON Lines, one export a line, as the OpenTelemetry
Collector's file exporter writes them) of about MEGABYTES in FILES files, by repeating the traces of
``tests/data/readers/otel/openai_v2.jsonl`` (written by the OpenTelemetry SDK and the OpenAI
instrumentation) with fresh trace and span ids, and the same conversations as canonical JSONL. Then
prints, measured in this one run: ``escalation score`` on the folder (time, spans a second, peak
memory of the process), the same with ``--backend dask`` on a local cluster of WORKERS workers (a task a
file; its output compared byte for byte), and on the canonical file (time, conversations a second), so the cost
of reading traces is read beside the canonical reader's.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

_CASE = re.compile(rb'("key":"escalation\.case_id","value":\{"stringValue":")([^"]*)')

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "readers" / "otel" / "openai_v2.jsonl"
POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "approval_tools": ["request_approval"], "gated_tools": ["issue_refund"]}


def _exports() -> list[bytes]:
    """The source file's lines: one OTLP export each."""
    return [line for line in SOURCE.read_bytes().splitlines() if line.strip()]


def _spans(exports: list[bytes]) -> int:
    return sum(len(scope["spans"]) for line in exports for resource_ in orjson.loads(line).get("resourceSpans", [])
               for scope in resource_.get("scopeSpans", []))


def _renamed(line: bytes, copy: int) -> bytes:
    """An export line whose trace and span ids are those of copy ``copy`` (same length, hex), and whose case ids
    name the copy (each copy's conversations are other cases: the keys of SPEC section 6 stay unique)."""
    text = line.decode()
    data = orjson.loads(line)
    ids = {span[key] for resource_ in data.get("resourceSpans", []) for scope in resource_.get("scopeSpans", [])
           for span in scope["spans"] for key in ("traceId", "spanId", "parentSpanId") if span.get(key)}
    for old in sorted(ids, key=len, reverse=True):
        text = text.replace(old, f"{copy:0{len(old)}x}"[-len(old):] if len(old) <= 8 else
                            old[:len(old) - 8] + f"{copy:08x}")
    return _CASE.sub(lambda m: m.group(1) + m.group(2) + b"-" + str(copy).encode(), text.encode())


def make_folder(folder: Path, megabytes: float, files: int) -> tuple[int, int]:
    """Trace files of about ``megabytes`` in all; returns ``(copies, spans)``."""
    exports = _exports()
    size = sum(len(line) + 1 for line in exports)
    copies = max(1, int(megabytes * 1e6 / size))
    per_file = -(-copies // files)
    folder.mkdir()
    for f in range(files):
        with (folder / f"traces-{f:03d}.jsonl").open("wb") as out:
            for copy in range(f * per_file, min(copies, (f + 1) * per_file)):
                out.write(b"\n".join(_renamed(line, copy + 1) for line in exports) + b"\n")
    return copies, copies * _spans(exports)


#: Runs a command and writes, as its last line of standard error, the peak resident memory (KB) of the largest of
#: its processes (itself, and with --backend dask a local cluster's workers), this run's alone.
_PEAK = ("import resource, subprocess, sys\n"
         "code = subprocess.run(sys.argv[1:]).returncode\n"
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
         "sys.exit(code)")


def _score(args: list[str]) -> tuple[float, float]:
    """``escalation score ARGS`` in a child process: (seconds, peak resident memory in MB of its largest
    process)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-m", "escalation", "score", *args],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(done.stderr)
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=1000.0)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2, help="Workers of the local Dask cluster.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "policy.json").write_text(json.dumps(POLICY))
        start = time.perf_counter()
        copies, spans = make_folder(tmp / "traces", args.megabytes, args.files)
        size = sum(p.stat().st_size for p in (tmp / "traces").iterdir())
        print(f"made {args.files} OTLP JSON files, {size / 1e6:,.0f} MB, {spans:,} spans "
              f"({copies:,} copies of {SOURCE.name}) in {time.perf_counter() - start:.1f} s")
        seconds, peak = _score([str(tmp / "traces"), "--policy", str(tmp / "policy.json"), "--out", str(tmp / "o1"),
                                "--no-report"])
        conversations = sum(1 for _ in (tmp / "o1" / "conversations.jsonl").open("rb"))
        print(f"escalation score, otel folder   {seconds:7.1f} s   {spans / seconds:,.0f} spans/s, "
              f"{conversations / seconds:,.0f} conversations/s; peak {peak:,.0f} MB")
        seconds_d, peak_d = _score([str(tmp / "traces"), "--policy", str(tmp / "policy.json"), "--out",
                                    str(tmp / "o3"), "--no-report", "--backend", "dask", "--n-jobs", str(args.workers)])
        same = (tmp / "o3" / "conversations.jsonl").read_bytes() == (tmp / "o1" / "conversations.jsonl").read_bytes()
        print(f"  --backend dask, {args.workers} workers {seconds_d:7.1f} s   {spans / seconds_d:,.0f} spans/s "
              f"(a local cluster started and stopped); peak {peak_d:,.0f} MB in its largest process; "
              f"conversations.jsonl {'the same bytes' if same else 'DIFFERENT'}")
        canonical = tmp / "canonical.jsonl"
        subprocess.run([sys.executable, "-c", "import sys, orjson\n"
                        "from escalation.estimators.records import read_conversations\n"
                        "convs, _ = read_conversations(sys.argv[1])\n"
                        "sys.stdout.buffer.write(b''.join(orjson.dumps(c) + b'\\n' for c in convs))",
                        str(tmp / "traces" / "traces-000.jsonl")], check=True, stdout=canonical.open("wb"))
        lines = canonical.read_bytes().splitlines()
        with canonical.open("wb") as out:  # as many conversations as the folder, ids made unique
            for k in range(-(-conversations // len(lines))):
                for line in lines:
                    record = orjson.loads(line)
                    record["conversation_id"] = f"{record['conversation_id']}-{k}"
                    if record.get("case_id") is not None:
                        record["case_id"] = f"{record['case_id']}#{k}"
                        record.pop("scenario_id", None)
                    out.write(orjson.dumps(record) + b"\n")
        seconds_c, peak_c = _score([str(canonical), "--policy", str(tmp / "policy.json"), "--out", str(tmp / "o2"),
                                    "--no-report"])
        rows = sum(1 for _ in (tmp / "o2" / "conversations.jsonl").open("rb"))
        print(f"escalation score, canonical     {seconds_c:7.1f} s   {rows / seconds_c:,.0f} conversations/s "
              f"({canonical.stat().st_size / 1e6:,.0f} MB); peak {peak_c:,.0f} MB")
        print(f"  traces cost {seconds / seconds_c * rows / conversations:.1f}x the canonical reader a conversation")


if __name__ == "__main__":
    main()
