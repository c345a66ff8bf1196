"""Peak memory of ``escalation score`` on the worst inputs we can build: it stays bounded.

Usage: python benchmarks/hostile.py [--only NAME,NAME] [--keep DIR]

Each input is scored in a fresh process (``escalation score FILE --policy P --out DIR --json``)
and the table gives its exit code, time, peak resident memory and the first line of what it
printed on standard error. The inputs (one conversation each unless said):

- ``small``: a plain line, for the memory of the interpreter and the imports;
- ``turns-100000`` / ``turns-100001``: ``assistant_turns`` at the limit of SPEC section 3
  (scored) and one above it (``invalid_record``); ``turns-10^7`` and ``turns-2^62``: the issue's
  88-byte lines that once wrote a 599 MB output line or took 23 GB;
- ``calls-10^6``: one line with a million tool calls (27 MB);
- ``string-50MB``: a line whose metadata holds a 50 MB string;
- ``nested-10^6``: a line whose metadata is nested a million deep (6 MB);
- ``bomb.eval``: an inspect_ai archive whose member is 3 GB of zeros, compressed to 3 MB;
- ``objects.eval``: a member of ``[{}, {}, ...]`` just under the member limit (64 MiB), the
  JSON that takes the most memory for its size once parsed;
- ``archive.eval``: samples of 63 MiB each (a string), 64 KB compressed, until the archive
  limit (2 GiB) stops the read;
- ``chat-1GB``: an OpenAI chat JSONL file of 500,000 conversations (1 GB), read a line at a time;
- ``samples.eval``: an archive of 1,900 samples of 1 MiB each (1.9 GB decompressed), read a
  member at a time and scored 50,000 conversations at a time: memory holds one chunk.

The peak is ``ru_maxrss`` of the command's process, read by a small process that starts it: a
process keeps, across ``exec``, the resident size it had when forked, and this one, which builds
the inputs, grows large.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"], "action_tools": ["issue_refund"]}
MB = 1 << 20


def _line(**fields) -> bytes:
    record = {"conversation_id": "a", "case_id": "k", "label": "ESC", "replica": 0, "assistant_turns": 2,
              "tool_calls": [{"turn": 0, "name": "get_order"}, {"turn": 1, "name": "transfer_to_human"}], **fields}
    return json.dumps(record).encode() + b"\n"


def _write(path: Path, *parts: bytes) -> None:
    with path.open("wb") as handle:
        handle.writelines(parts)


def _sample_member(archive: zipfile.ZipFile, name: str, head: bytes, filler: bytes, count: int, tail: bytes) -> None:
    """A member ``head + filler * count + tail``, streamed in (never held whole)."""
    with archive.open(name, "w", force_zip64=True) as member:
        member.write(head)
        block = filler * max(1, MB // len(filler))
        for _ in range(count * len(filler) // len(block)):
            member.write(block)
        member.write(tail)


def _archive(path: Path, members) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "hostile", "model": "m"}}))
        for member in members:
            _sample_member(archive, *member)


def make(name: str, folder: Path) -> Path:
    """The input ``name`` in ``folder``."""
    from escalation.estimators.records import ArchiveLimits
    if name == "small":
        path = folder / "small.jsonl"
        _write(path, _line())
    elif name.startswith("turns-"):
        turns = {"turns-100000": 100_000, "turns-100001": 100_001, "turns-10^7": 10**7, "turns-2^62": 2**62 - 1}[name]
        path = folder / f"{name}.jsonl"
        _write(path, _line(assistant_turns=turns, tool_calls=[{"turn": min(turns, 10**5) - 1,
                                                               "name": "transfer_to_human"}]))
    elif name == "calls-10^6":
        path = folder / "calls.jsonl"
        calls = [{"turn": i // 1000, "name": "get_order"} for i in range(10**6)]
        _write(path, _line(assistant_turns=1001, tool_calls=calls + [{"turn": 1000, "name": "transfer_to_human"}]))
    elif name == "string-50MB":
        path = folder / "string.jsonl"
        _write(path, _line(metadata={"note": "x" * (50 * MB)}))
    elif name == "nested-10^6":
        path = folder / "nested.jsonl"
        depth = 10**6
        head = _line()[:-2] + b', "metadata": '
        _write(path, head, b'{"a": ' * depth, b"1", b"}" * depth, b"}\n")
    elif name == "bomb.eval":
        path = folder / "bomb.eval"
        _archive(path, [("samples/1_epoch_1.json", b"", b"\0", 3 << 30, b"")])
    elif name == "objects.eval":
        path = folder / "objects.eval"
        count = (ArchiveLimits.member - 64) // 3
        _archive(path, [("samples/1_epoch_1.json", b'{"id": 1, "epoch": 1, "target": "ESC", "metadata": {"x": [{}',
                         b",{}", count - 1, b"]}}")])
    elif name == "archive.eval":
        path = folder / "archive.eval"
        pad = ArchiveLimits.member - MB
        count = ArchiveLimits.archive // pad + 2
        _archive(path, [(f"samples/{i}_epoch_1.json", f'{{"id": {i}, "epoch": 1, "target": "ESC", "metadata": '
                         '{"pad": "'.encode(), b"x", pad, b'"}}') for i in range(1, count)])
    elif name == "chat-1GB":
        path = folder / "chat.jsonl"
        call = {"id": "c", "type": "function", "function": {"name": "transfer_to_human", "arguments": "{}"}}
        with path.open("wb") as handle:
            for block in range(500):
                handle.writelines(json.dumps({"conversation_id": f"o{block}-{i}", "label": "ESC", "messages": [
                    {"role": "user", "content": "x" * 1900}, {"role": "assistant", "tool_calls": [call]}]}).encode()
                    + b"\n" for i in range(1000))
    elif name == "samples.eval":
        path = folder / "samples.eval"
        _archive(path, [(f"samples/{i}_epoch_1.json", f'{{"id": {i}, "epoch": 1, "target": "ESC", "messages": '
                         '[{"role": "assistant", "content": "'.encode(), b"x", MB, b'"}]}') for i in range(1, 1901)])
    else:
        raise SystemExit(f"unknown input {name!r}")
    return path


CASES = ("small", "turns-100000", "turns-100001", "turns-10^7", "turns-2^62", "calls-10^6", "string-50MB",
         "nested-10^6", "bomb.eval", "objects.eval", "archive.eval", "chat-1GB", "samples.eval")


def child(report: str, args: list[str]) -> None:
    """Run ``python -m escalation ARGS`` as this small process's one child; write its exit code, time and
    peak memory (``ru_maxrss`` of the children, in MB) to ``report``."""
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "escalation", *args], stdout=subprocess.DEVNULL)
    Path(report).write_text(json.dumps({"rc": run.returncode, "seconds": time.perf_counter() - start,
                                        "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(CASES), help="the inputs, comma-separated")
    parser.add_argument("--keep", type=Path, help="make the inputs here and keep them")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1:])
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        policy = folder / "policy.json"
        policy.write_text(json.dumps(POLICY))
        print(f"{'input':<14} {'file':>9} {'exit':>4} {'seconds':>8} {'peak MB':>8}  first line of stderr")
        for name in args.only.split(","):
            path = make(name, folder)
            report = folder / "report.json"
            run = subprocess.run([sys.executable, __file__, "--child", str(report), "score", str(path),
                                  "--policy", str(policy), "--out", str(folder / "out"), "--json"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            result = json.loads(report.read_text())
            said = (run.stderr.strip().splitlines() or [""])[0]
            said = said if len(said) <= 150 else said[:147] + "..."
            print(f"{name:<14} {path.stat().st_size / 1e6:>7.1f}MB {result['rc']:>4} {result['seconds']:>8.1f} "
                  f"{result['peak_mb']:>8,.0f}  {said}", flush=True)
            if args.keep is None:
                path.unlink()


if __name__ == "__main__":
    main()
