"""Speed of the measurement: vectorised vs reference scorer, end to end vs parsing only.

Usage: python benchmarks/score.py [--n 1000000] [--sample 20000] [--seed 0]

Makes N canonical conversations (about 8 calls each) as JSONL, then prints, measured in this
one run: the vectorised scorer's time, the reference scorer's time (on a sample, scaled), their
ratio, the end-to-end ``escalation score`` time and peak memory, and the time to only parse the
same JSONL with the standard ``json`` module. Targets (issue 2): vectorised >= 20x faster than
the reference; end to end <= 2x the parse-only time; peak memory < 4 GB at 1,000,000.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from escalation.estimators.metric import score_conversation, score_records
from escalation.estimators.records import Policy, iter_records, read_jsonl

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order", "get_account"],
          "action_tools": ["issue_refund", "close_account"], "approval_tools": ["request_approval"],
          "gated_tools": ["issue_refund"]}
TOOLS = np.array(["get_order", "get_account", "issue_refund", "close_account", "transfer_to_human",
                  "request_approval", "lookup_flight"])


def make_file(path: Path, n: int, seed: int) -> None:
    """N conversations, 8 calls on average, written in blocks (vectorised draws)."""
    rng = np.random.default_rng(seed)
    block = 50_000
    with path.open("wb") as out:
        for start in range(0, n, block):
            m = min(block, n - start)
            n_calls = rng.poisson(8, m)
            turns = rng.integers(1, 6, m)
            names = TOOLS[rng.choice(len(TOOLS), n_calls.sum(), p=[.3, .2, .15, .05, .15, .1, .05])]
            call_turns = np.floor(rng.random(n_calls.sum()) * np.repeat(turns, n_calls)).astype(int)
            # each case: replicas 0-3 of its ESC variant, then 0-3 of its ACT variant
            labels = np.where((np.arange(start, start + m) // 4) % 2 == 0, "ESC", "ACT")
            pos = 0
            lines = []
            for i in range(m):
                k = n_calls[i]
                ts = np.sort(call_turns[pos:pos + k]).tolist()
                calls = [{"turn": t, "name": nm, "arguments": {"order_id": start + i}}
                         for t, nm in zip(ts, names[pos:pos + k].tolist())]
                for c in calls:
                    if c["name"] == "request_approval":
                        c["covers"] = ["issue_refund"]
                pos += k
                lines.append(orjson.dumps({"conversation_id": f"c{start + i}", "case_id": f"k{(start + i) // 8}",
                                           "label": labels[i], "replica": (start + i) % 4,
                                           "assistant_turns": int(turns[i]), "tool_calls": calls}))
            out.write(b"\n".join(lines) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "records.jsonl"
        t = time.perf_counter()
        make_file(path, args.n, args.seed)
        print(f"made {args.n:,} conversations ({path.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - t:.1f} s")
        (tmp / "policy.json").write_text(json.dumps(POLICY))
        policy = Policy.from_dict(POLICY)

        t = time.perf_counter()
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
        parse_only = time.perf_counter() - t

        t = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "escalation", "score", str(path), "--policy",
                              str(tmp / "policy.json"), "--format", "jsonl", "--out", str(tmp / "out"), "--json"],
                             capture_output=True, text=True)
        end_to_end = time.perf_counter() - t
        if run.returncode:
            sys.exit(run.stderr)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

        sample_path = tmp / "sample.jsonl"
        with path.open("rb") as src, sample_path.open("wb") as dst:
            for i, line in enumerate(src):
                if i >= args.sample:
                    break
                dst.write(line)
        sample = read_jsonl(sample_path)
        t = time.perf_counter()
        for conv in sample:
            score_conversation(conv, policy)
        reference = (time.perf_counter() - t) * args.n / len(sample)

        # the columns as `escalation score` builds them (Arrow's reader), read before timing: the
        # reader parses the next chunk in the background, which would share the cores
        blocks = list(iter_records(path, messages=False))
        vectorised = 0.0
        for records in blocks:
            t = time.perf_counter()
            score_records(records, policy)
            vectorised += time.perf_counter() - t

    print(f"vectorised scorer        {vectorised:8.2f} s   (on the columns of the Arrow reader)")
    print(f"reference scorer         {reference:8.2f} s   (timed on {len(sample):,}, scaled to {args.n:,})")
    print(f"  ratio reference/vectorised   {reference / vectorised:6.1f}x   (target >= 20x)")
    print(f"escalation score, end to end {end_to_end:8.2f} s")
    print(f"parse only (json.loads)  {parse_only:8.2f} s")
    print(f"  ratio end-to-end/parse-only  {end_to_end / parse_only:6.2f}x   (target <= 2x)")
    print(f"peak memory of escalation score {peak_mb:,.0f} MB   (target < 4,000 MB)")


if __name__ == "__main__":
    main()
