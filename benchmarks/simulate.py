"""Speed of the synthetic world: columnar generation and JSONL writing.

Run: python benchmarks/simulate.py [--conversations 1000000] [--jsonl 200000]

Prints the time to generate the conversations in columnar form (Records + truth; target: one
million in at most 10 s on the project's 2-core machine), for one replica per scenario and
for ten, in modes record and text, and the JSONL writing rate (conversations and MB per second).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import escalation.simulate as S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1_000_000)
    parser.add_argument("--jsonl", type=int, default=200_000, help="conversations written to JSONL")
    parser.add_argument("--profile", default="invents_actions")
    args = parser.parse_args()
    n = args.conversations
    print(f"simulate: {n:,} conversations of {args.profile}, rho 0.2, seed 1 (cpu count {os.cpu_count()})")
    print(f"{'replicas':>8} {'mode':>6} {'seconds':>8} {'conv/s':>12} {'calls':>10} {'messages':>11}")
    S.simulate(args.profile, cases=10, seed=0)   # warm-up: imports and cached tables
    slowest = 0.0
    for replicas in (1, 10):
        for mode in ("record", "text"):
            start = time.perf_counter()
            sim = S.simulate(args.profile, cases=n // (2 * replicas), replicas=replicas, rho=0.2, mode=mode, seed=1)
            seconds = time.perf_counter() - start
            print(f"{replicas:>8} {mode:>6} {seconds:>8.2f} {len(sim) / seconds:>12,.0f} "
                  f"{len(sim.records.calls):>10,} {len(sim.records.messages):>11,}")
            slowest = max(slowest, seconds)
            del sim
    budget = 10.0 * n / 1_000_000   # the target: one million conversations in 10 s
    verdict = "within" if slowest <= budget else "OVER"
    print(f"slowest: {slowest:.2f} s, {verdict} the budget of {budget:.1f} s (10 s per million; load average "
          f"{os.getloadavg()[0]:.1f})")

    m = args.jsonl
    sim = S.simulate(args.profile, cases=m // 2, replicas=1, rho=0.2, mode="record", seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.jsonl")
        start = time.perf_counter()
        S.write_jsonl(sim, path)
        seconds = time.perf_counter() - start
        size = os.path.getsize(path)
    print(f"write_jsonl: {len(sim):,} conversations in {seconds:.2f} s: {len(sim) / seconds:,.0f} conv/s, "
          f"{size / seconds / 1e6:.1f} MB/s ({size / len(sim):.0f} bytes per conversation)")


if __name__ == "__main__":
    main()
