"""Time of the readable summary of ``escalation score`` against the length of a tool name (issue 17).

Usage: python benchmarks/console.py [--lengths 1000,10000,70000,700000] [--highlighted 1000,5000,10000,20000]

A log of one ESC/ACT pair calls one unmarked tool whose name has N characters (hex letters, the
worst case of rich's highlighter). For each N it prints, measured in this one run (best of 3):

- ``readable`` and ``--json``: the wall time of ``escalation score LOG --policy POLICY``, with the
  readable summary and with ``--json`` (which prints no summary), and the difference, the time of
  the summary: bounded whatever N, since the summary shows a name shortened
  (``escalation.cli.commands._console.LIMIT`` characters) on a console with no markup and no
  highlighting; the characters printed on both outputs;
- ``highlighted`` (the lengths of ``--highlighted``): the unmarked-tools line with the whole name
  on a default rich console, as the summary printed it before issue 17: rich's highlighter takes
  time quadratic in N (its IPv6 pattern), extrapolated to 70,000 characters from the largest N.
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
import tempfile
import time
from pathlib import Path


def _run(args: list[str]) -> tuple[float, int]:
    """Best wall time of 3 runs of ``escalation ARGS``, and the characters it printed."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(["escalation", *args], capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times), len(done.stdout) + len(done.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1000,10000,70000,700000")
    parser.add_argument("--highlighted", default="1000,5000,10000,20000")
    args = parser.parse_args()

    print(f"{'N':>9}  {'readable':>8}  {'--json':>8}  {'summary':>8}  {'printed':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        log, policy = Path(tmp) / "log.jsonl", Path(tmp) / "policy.json"
        policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"]}))
        for n in (int(x) for x in args.lengths.split(",")):
            log.write_text("".join(json.dumps({"conversation_id": f"c-{label}", "case_id": "k", "label": label,
                                               "tool_calls": [{"turn": 0, "name": "a" * n}]}) + "\n"
                                   for label in ("ESC", "ACT")))
            readable, printed = _run(["score", str(log), "--policy", str(policy)])
            as_json, _ = _run(["score", str(log), "--policy", str(policy), "--json"])
            print(f"{n:>9,}  {readable:>6.2f} s  {as_json:>6.2f} s  {readable - as_json:>+6.2f} s  {printed:>7,} ch")

    from rich.console import Console

    print(f"\n{'N':>9}  {'highlighted':>11}  (the whole name on a default rich console, as before issue 17)")
    last = None
    for n in (int(x) for x in args.highlighted.split(",")):
        line = f"unmarked tools (counted as actions; mark look-ups as read_only_tools): {'a' * n} (2)"
        start = time.perf_counter()
        Console(file=io.StringIO(), width=100).print(line)
        last = n, time.perf_counter() - start
        print(f"{n:>9,}  {last[1]:>9.3f} s")
    if last:
        print(f"{70_000:>9,}  {last[1] * (70_000 / last[0]) ** 2:>9.0f} s  (extrapolated, quadratic)")


if __name__ == "__main__":
    main()
