"""Speed and cost of the paired oversight suite: samples a second with a profile model, and what a run costs.

Usage: python benchmarks/suite.py [--profile follows_policy] [--pressure none] [--epochs 1] [--max-samples 64]
       python benchmarks/suite.py --log RUN.eval [--log RUN2.eval ...]

Runs ``escalation/paired_oversight`` (every domain, both languages) with the profile model
``escalation/<profile>`` through inspect_ai, offline, and prints, measured in this one run:

- the samples a second of the evaluation (the time of ``inspect_ai.eval`` after the imports);
- per sample: the user messages, the assistant turns, the model calls (``generate``) and the tool
  calls of the scripted dialogue;
- per sample: the characters a model reads (every call's input messages plus the tool schemas)
  and writes, and the tokens that makes at about 4 characters a token (a rule of thumb for
  English text with OpenAI's tokenisers; a real model's count differs by its tokeniser, and a
  real model may take more turns than a profile does).

With ``--log``, nothing is run: the recorded runs of real models (``examples/data/real-runs/``) are read
and, per sample, their turns, model and tool calls (failed ones apart), seconds, and the tokens the
server counted (``usage``) are given, with where the input tokens go: the first call of a sample (the
system prompt with the rule, the tools' descriptions and the customer's opening) and the later calls,
each of which sends the whole conversation again. The tokens of an epoch of the default task (576
samples) follow from the mean per sample.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

#: samples in one epoch of the default task (six domains, 24 cases, ESC and ACT, two languages)
EPOCH = 576


def recorded(paths: list[str]) -> None:
    """What recorded runs cost, per sample, from their logs (tokens as the server counted them)."""
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    rows = []
    for path in paths:
        log = read_eval_log(path)
        for sample in map(resolve_sample_attachments, log.samples or []):
            calls = [e for e in sample.events if e.event == "model"]
            usage = [e.output.usage for e in calls if e.output is not None and e.output.usage is not None]
            tools = [e for e in sample.events if e.event == "tool"]
            first = calls[0]
            system = sum(len(m.text) for m in first.input if m.role == "system")
            schemas = len(json.dumps([t.model_dump(exclude_none=True) for t in first.tools]))
            opening = sum(len(m.text) for m in first.input if m.role != "system")
            rows.append({
                "model": log.eval.model, "seconds": sample.total_time or 0.0,
                "user messages": sum(m.role == "user" for m in sample.messages),
                "model calls": len(calls), "tool calls": len(tools),
                "failed tool calls": sum(e.error is not None for e in tools),
                "input tokens": sum(u.input_tokens for u in usage),
                "output tokens": sum(u.output_tokens for u in usage),
                "first call input": usage[0].input_tokens if usage else 0,
                "share of the first call: system prompt": system / (system + schemas + opening),
                "share of the first call: tool schemas (JSON)": schemas / (system + schemas + opening),
                "share of the first call: customer's opening": opening / (system + schemas + opening)})
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        print(f"{model}: {len(mine)} samples")
        for key in [k for k in mine[0] if k != "model"]:
            values = [r[key] for r in mine]
            print(f"  per sample, {key}: median {statistics.median(values):.3g}, mean {statistics.mean(values):.3g}, "
                  f"range {min(values):.3g} to {max(values):.3g}")
        total_in = sum(r["input tokens"] for r in mine)
        first = sum(r["first call input"] for r in mine)
        calls = sum(r["model calls"] for r in mine)
        mean_in = total_in / len(mine)
        print(f"  input tokens: {first / total_in:.0%} in the samples' first calls, {1 - first / total_in:.0%} in "
              f"the later ones; {total_in / calls:.0f} a call")
        print(f"  an epoch of the default task ({EPOCH} samples) at this mean: {mean_in * EPOCH / 1e6:.2f} M input "
              f"tokens, {statistics.mean(r['output tokens'] for r in mine) * EPOCH / 1e3:.0f} k output; "
              f"four epochs {4 * mean_in * EPOCH / 1e6:.2f} M input")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="follows_policy")
    parser.add_argument("--pressure", default="none")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-samples", type=int, default=64)
    parser.add_argument("--log", action="append", help="a recorded run's .eval log: read it, run nothing")
    args = parser.parse_args()
    if args.log:
        recorded(args.log)
        return

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
