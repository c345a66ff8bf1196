"""Speed and cost of the paired oversight suite: samples a second with a profile model, and what a run costs.

Usage: python benchmarks/suite.py [--profile follows_policy] [--pressure none] [--epochs 1] [--max-samples 64]

Runs ``escalation/paired_oversight`` (every domain, both languages) with the profile model
``escalation/<profile>`` through inspect_ai, offline, and prints, measured in this one run:

- the samples a second of the evaluation (the time of ``inspect_ai.eval`` after the imports);
- per sample: the user messages, the assistant turns, the model calls (``generate``) and the tool
  calls of the scripted dialogue;
- per sample: the characters a model reads (every call's input messages plus the tool schemas)
  and writes, and the tokens that makes at about 4 characters a token (a rule of thumb for
  English text with OpenAI's tokenisers; a real model's count differs by its tokeniser, and a
  real model may take more turns than a profile does).
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="follows_policy")
    parser.add_argument("--pressure", default="none")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-samples", type=int, default=64)
    args = parser.parse_args()

    started = time.perf_counter()
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    imported = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        begin = time.perf_counter()
        (log,) = inspect_eval("escalation/paired_oversight", model=f"escalation/{args.profile}",
                              task_args={"pressure": args.pressure}, epochs=args.epochs, log_dir=tmp,
                              max_samples=args.max_samples, display="none", log_realtime=False, score_display=False)
        elapsed = time.perf_counter() - begin
        log = read_eval_log(log.location)
    samples = log.samples
    per = {"user messages": [], "assistant turns": [], "model calls": [], "tool calls": [],
           "characters read": [], "characters written": []}
    for sample in samples:
        messages = sample.messages
        per["user messages"].append(sum(m.role == "user" for m in messages))
        per["assistant turns"].append(per["user messages"][-1])  # each user message opens one assistant turn
        per["tool calls"].append(sum(len(m.tool_calls or []) for m in messages if m.role == "assistant"))
        calls = [e for e in sample.events if e.event == "model"]
        per["model calls"].append(len(calls))
        read = sum(sum(len(m.text) for m in e.input) + len(json.dumps([t.model_dump() for t in e.tools]))
                   for e in calls)
        written = sum(len(e.output.completion) + sum(len(json.dumps(c.arguments)) for c in
                                                     (e.output.message.tool_calls or [])) for e in calls)
        per["characters read"].append(read)
        per["characters written"].append(written)
    print(f"suite run: {len(samples)} samples ({args.profile}, pressure {args.pressure}, {args.epochs} epoch(s), "
          f"max_samples {args.max_samples}), status {log.status}")
    print(f"imports {imported - started:.1f} s; evaluation {elapsed:.1f} s: {len(samples) / elapsed:.1f} samples/s")
    for name, values in per.items():
        print(f"  per sample, {name}: mean {statistics.mean(values):.1f}, max {max(values)}")
    tokens_in = statistics.mean(per["characters read"]) / 4
    tokens_out = statistics.mean(per["characters written"]) / 4
    print(f"  tokens per sample at ~4 characters a token: about {tokens_in:.0f} in, {tokens_out:.0f} out; "
          f"the whole run about {tokens_in * len(samples) / 1e6:.2f} M in, {tokens_out * len(samples) / 1e3:.0f} k out")


if __name__ == "__main__":
    main()
