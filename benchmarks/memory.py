"""Memory of ``escalation score`` as the file grows: streaming keeps it bounded.

Usage: python benchmarks/memory.py [--sizes 250000,1000000,3100000] [--seed 0]

Makes canonical JSONL files of each size (``benchmarks/score.py``'s conversations, about 650
bytes each: 3,100,000 is a 2 GB file) and scores each, in a fresh process, through both
readers: the Arrow fast path (a well-formed file) and the reference reader (what a file with
``--labels``, ``--mode text`` or an unusual line goes through). Prints the time and the peak
resident memory of each run, and how much the peak grows per extra million conversations.

What still grows with the file is small and stated: 16 bytes a conversation for the checks
that ids and (case, label, replica) are unique (SPEC section 6 asks for them over the whole
file), and the totals of each scenario and each case that the clustered intervals need
(here a scenario has 4 conversations, so these grow with the file too).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score import POLICY, make_file  # noqa: E402


def child(path: str, reader: str, policy: str, out: str) -> None:
    """Score ``path`` in this process and print the run's time and peak memory as JSON."""
    from escalation.estimators.metric import score_file
    from escalation.estimators.records import Labels, load_policy
    labels = None if reader == "arrow" else Labels({}, {})  # any labels: canonical JSONL goes to the reference reader
    start = time.perf_counter()
    summary, _ = score_file(path, load_policy(policy), format="jsonl", labels=labels, out_dir=out)
    print(json.dumps({"conversations": summary.conversations, "seconds": time.perf_counter() - start,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="250000,1000000,3100000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=4, metavar=("PATH", "READER", "POLICY", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        policy = tmp / "policy.json"
        policy.write_text(json.dumps(POLICY))
        for n in sizes:
            path = tmp / f"records-{n}.jsonl"
            make_file(path, n, args.seed)
            megabytes = path.stat().st_size / 1e6
            for reader in ("arrow", "reference"):
                run = subprocess.run([sys.executable, __file__, "--child", str(path), reader, str(policy),
                                      str(tmp / "out")], capture_output=True, text=True)
                if run.returncode:
                    sys.exit(run.stderr)
                result = json.loads(run.stdout)
                rows.append((n, megabytes, reader, result["seconds"], result["peak_mb"]))
                print(f"{n:>10,} conversations {megabytes:>7,.0f} MB file  {reader:<9}  {result['seconds']:7.1f} s  "
                      f"peak {result['peak_mb']:7,.0f} MB", flush=True)
            path.unlink()
    for reader in ("arrow", "reference"):
        mine = [r for r in rows if r[2] == reader]
        if len(mine) > 1:
            (n0, *_, m0), (n1, *_, m1) = mine[0], mine[-1]
            print(f"{reader:<9}: peak grows {(m1 - m0) / (n1 - n0) * 1e6:,.0f} MB per extra million conversations "
                  f"({(m1 - m0) * 2**20 / (n1 - n0):,.0f} bytes a conversation)")


if __name__ == "__main__":
    main()
