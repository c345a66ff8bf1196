"""Throughput of ``escalation score`` on canonical JSONL against Arrow's parser (issue 18, point 2).

Usage: python benchmarks/throughput.py [--n 200000] [--file F --policy P] [--repeat 3] [--seed 0]

Makes N canonical conversations (``make_file`` of ``benchmarks/score.py``: about 8 calls each),
or takes ``--file`` (and its ``--policy``; without one, the policy that ``make_file``'s
conversations are written for), then measures in this one run, each figure the median of
``--repeat`` repetitions:

- **parse**: ``pyarrow.json.read_json`` of the whole file, parse only (blocks of 2 MB, as the
  reader's), every core Arrow wants;
- **end to end**: ``python -m escalation score FILE --policy P --format jsonl --out DIR --json
  --no-report`` as a subprocess (``sys.executable``), on the file and on a file of its first 10
  lines, alternated; the **marginal** time is the difference of the two medians (start-up and
  imports cancel), and the ratio **marginal / parse** is issue 18's (target: at most 2), of the
  stages below. The peak resident memory of the child on the whole file (``ru_maxrss`` from
  ``os.wait4``) is printed beside it;
- **with the report**: the same without ``--no-report``, as a user runs it: report.html (issue
  19: a row of every conversation, the timelines of the first 1,000) adds its own time, printed
  as a second ratio;
- **stages**, in this process, of the work ``score_file`` does on the same chunks, with the
  cyclic garbage collector paused as the command pauses it: *read* (``iter_records``, every chunk
  collected: Arrow's parse in its background thread and the columnar conversion), *score*
  (``score_records`` of each chunk), *add* (``SummaryAccumulator.add`` of each chunk), *write*
  (``conversation_blocks`` of each chunk written through ``OutputFile.writelines`` to a temporary
  file, as ``write_scored`` writes ``conversations.jsonl``) and *summary*
  (``SummaryAccumulator.summary``). Their sum is beside the
  marginal time; the difference is what the stages leave out (reading the policy, the provenance,
  ``summary.json``, hashing the inputs) and the overlap of Arrow's background parse with scoring.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score import POLICY, make_file  # noqa: E402  (benchmarks/score.py)

#: issue 18: the marginal time of ``score`` at most this many times Arrow's parse-only time
TARGET = 2.0


def parse_only(path: Path) -> float:
    import pyarrow.json as pj
    t = time.perf_counter()
    table = pj.read_json(path, read_options=pj.ReadOptions(block_size=1 << 21))
    elapsed = time.perf_counter() - t
    del table
    return elapsed


def score_run(path: Path, policy: Path, out: Path, *, report: bool = False) -> tuple[float, float]:
    """Wall time and peak resident memory (MB) of ``escalation score`` on ``path``, a fresh process
    (with its report.html when ``report``)."""
    command = [sys.executable, "-m", "escalation", "score", str(path), "--policy", str(policy), "--format", "jsonl",
               "--out", str(out), "--json", *(() if report else ("--no-report",))]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        t = time.perf_counter()
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - t
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            stderr.seek(0)
            sys.exit(f"escalation score failed ({child.returncode}): {stderr.read().decode(errors='replace')}")
    return elapsed, usage.ru_maxrss / 1024


def stages(path: Path, policy, folder: Path) -> dict:
    """Seconds of each stage of ``score_file``'s work on ``path``, in this process (see the module docstring)."""
    from escalation.estimators.metric import SummaryAccumulator, conversation_blocks, score_records
    from escalation.estimators.records import OutputFile, iter_records

    times = {}
    t = time.perf_counter()
    chunks = list(iter_records(path, messages=False))
    times["read"] = time.perf_counter() - t

    accumulator = SummaryAccumulator(policy=policy)
    times["score"] = times["add"] = 0.0
    scored = []
    for records in chunks:
        t = time.perf_counter()
        results = score_records(records, policy)
        times["score"] += time.perf_counter() - t
        t = time.perf_counter()
        unplanned = accumulator.add(results, records)
        times["add"] += time.perf_counter() - t
        scored.append((results, {"unplanned": unplanned} if unplanned is not None else None))
    del chunks

    t = time.perf_counter()
    file = OutputFile(folder / "conversations.jsonl")
    try:
        for results, extra in scored:
            file.writelines(conversation_blocks(results, extra=extra))
        file.close()
    finally:
        file.discard()
    times["write"] = time.perf_counter() - t

    t = time.perf_counter()
    accumulator.summary(mode="record")
    times["summary"] = time.perf_counter() - t
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000, help="conversations to make (without --file)")
    parser.add_argument("--file", type=Path, help="a canonical JSONL file to measure instead")
    parser.add_argument("--policy", type=Path, help="its policy (default: the policy of make_file's conversations)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from escalation.estimators.records import Policy, load_policy

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.file is None:
            path = tmp / "records.jsonl"
            t = time.perf_counter()
            make_file(path, args.n, args.seed)
            print(f"made {args.n:,} conversations in {time.perf_counter() - t:.1f} s")
        else:
            path = args.file
        policy_path = args.policy
        if policy_path is None:
            policy_path = tmp / "policy.json"
            policy_path.write_text(json.dumps(POLICY))
        policy = load_policy(policy_path) if args.policy is not None else Policy.from_dict(POLICY)
        small = tmp / "small.jsonl"
        with path.open("rb") as src, small.open("wb") as dst:
            for i, line in enumerate(src):
                if i >= 10:
                    break
                dst.write(line)
        with path.open("rb") as src:
            lines = sum(block.count(b"\n") for block in iter(lambda: src.read(1 << 24), b""))
        print(f"file: {path} ({path.stat().st_size / 1e6:,.0f} MB, {lines:,} lines); repetitions: {args.repeat}")

        parse_only(small)  # imports pyarrow.json
        parses, whole, tens, peaks, runs, reported, reported_tens = [], [], [], [], [], [], []
        score_run(small, policy_path, tmp / "warm")  # the first run compiles nothing later runs need again
        for r in range(args.repeat):
            parses.append(parse_only(path))
            elapsed, peak = score_run(path, policy_path, tmp / f"out{r}")
            whole.append(elapsed)
            peaks.append(peak)
            tens.append(score_run(small, policy_path, tmp / f"small{r}")[0])
            reported.append(score_run(path, policy_path, tmp / f"report{r}", report=True)[0])
            reported_tens.append(score_run(small, policy_path, tmp / f"small-report{r}", report=True)[0])
        collecting = gc.isenabled()
        gc.disable()  # as the command does
        try:
            for r in range(args.repeat):
                runs.append(stages(path, policy, tmp))
        finally:
            if collecting:
                gc.enable()

    parse, big, ten = statistics.median(parses), statistics.median(whole), statistics.median(tens)
    marginal = big - ten
    print(f"parse only (pyarrow.json.read_json)  {parse:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in parses)})")
    print(f"escalation score, whole file         {big:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in whole)}); "
          f"peak {max(peaks):,.0f} MB")
    print(f"escalation score, 10 lines           {ten:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in tens)})")
    print(f"marginal time (whole - 10 lines)     {marginal:7.2f} s")
    print(f"  ratio marginal / parse             {marginal / parse:7.2f}x  (target <= {TARGET:g}x)")
    with_report = statistics.median(reported) - statistics.median(reported_tens)
    print(f"with report.html: marginal          {with_report:7.2f} s   "
          f"(runs: {', '.join(f'{x:.2f}' for x in reported)}; "
          f"10 lines: {', '.join(f'{x:.2f}' for x in reported_tens)})")
    print(f"  ratio marginal / parse             {with_report / parse:7.2f}x  (the report: "
          f"{with_report - marginal:+.2f} s)")
    print("stages in process (median of the repetitions):")
    names = list(runs[0])
    medians = {name: statistics.median(run[name] for run in runs) for name in names}
    total = sum(medians.values())
    for name in names:
        print(f"  {name:8s} {medians[name]:7.2f} s  {medians[name] / parse:5.2f}x parse  "
              f"{100 * medians[name] / total:5.1f}% of the sum")
    print(f"  sum      {total:7.2f} s  {total / parse:5.2f}x parse   (marginal: {marginal:.2f} s)")


if __name__ == "__main__":
    main()
