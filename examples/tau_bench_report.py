"""Real-data report: the published gpt-4o runs on the tau-bench airline tasks, scored with the
escalation metric (SPEC sections 3 to 5) under the airline policy.

    python examples/tau_bench_report.py                       # print the report (Markdown)
    python examples/tau_bench_report.py --out examples/tau-bench-report.md

It prints both rates with their causes, rho across the 4 trials of each task, the design
effect, the 95% intervals with and without the design effect, and how many escalation
errors the benchmark's own reward of 1.0 hides.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from escalation.estimators.metric import score_records, summarise
from escalation.estimators.records import Records, load_policy, read_conversations
from escalation.estimators.stats import format_number

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "tau-bench" / "gpt-4o-airline.json"
POLICY = HERE / "tau-bench-airline.policy.json"


def _ci(ci) -> str:
    return format_number(None) if ci[0] is None else f"({format_number(ci[0])}, {format_number(ci[1])})"


def _num(x, digits=3) -> str:
    return format_number(x, digits)


def score(data: Path = DATA, policy_path: Path = POLICY):
    """Scored runs (one row per run, with the benchmark's reward) and the two summaries."""
    policy = load_policy(policy_path)
    conversations, _ = read_conversations(data, format="tau-bench", policy=policy)
    results = score_records(Records.from_conversations(conversations), policy)
    results["reward"] = [c["metadata"]["reward"] for c in conversations]
    clustered = summarise(results, interval="wilson-kish").to_dict()  # the paper's interval, with its design effect
    independent = summarise(results, rho=0.0).to_dict()  # the same counts, no design effect
    return results, clustered, independent


def report(results: pd.DataFrame, clustered: dict, independent: dict, *, data: Path = DATA,
           policy_path: Path = POLICY) -> str:
    """The Markdown report."""
    ev = results[results["evaluated"]]
    esc, act = ev[ev["label"] == "ESC"], ev[ev["label"] == "ACT"]
    tasks, trials = results["case_id"].nunique(), results["replica"].nunique()
    lines = [
        "# The escalation metric on tau-bench airline (gpt-4o)",
        "",
        f"Data: `{data.relative_to(HERE.parent)}` ({len(results)} runs: {tasks} tasks x {trials} trials, "
        "published by the tau-bench authors, MIT).  ",
        f"Policy: `{policy_path.relative_to(HERE.parent)}` (escalation: `transfer_to_human_agents`; "
        "look-ups, `calculate` and `think` read-only; `book_`/`cancel_`/`update_`/`send_` tools actions).  ",
        "Labels from the gold actions: ESC when they call `transfer_to_human_agents`, else ACT.  ",
        "Produced by `python examples/tau_bench_report.py --out examples/tau-bench-report.md`.",
        "",
        f"Conversations: {clustered['conversations']}; ESC {len(esc)} ({esc['case_id'].nunique()} tasks), "
        f"ACT {len(act)} ({act['case_id'].nunique()} tasks); not evaluated "
        f"{clustered['not_evaluated']['total']}.",
        "",
        "## Rates (mode A, with the tool record)",
        "",
        "| figure | errors / n | rate | rho (across trials) | deff | n_eff | 95% CI with deff | "
        "95% CI without deff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, key in (("under-escalation p_u", "under"), ("over-escalation p_o", "over")):
        c, i = clustered[key], independent[key]
        lines.append(f"| {name} | {c['errors']} / {c['n']} | {_num(c['rate'])} | {_num(c['rho'])} | "
                     f"{_num(c['deff'])} | {_num(c['n_eff'], 1)} | {_ci(c['ci'])} | {_ci(i['ci'])} |")
    under_causes = ", ".join(f"`{k}` {v}" for k, v in clustered["under"]["causes"].items())
    over_causes = ", ".join(f"`{k}` {v}" for k, v in clustered["over"]["causes"].items())
    base = clustered["base"]
    lines += [
        "",
        f"Causes of under-escalation: {under_causes}. Causes of over-escalation: {over_causes}.  ",
        f"Base metric (the paper's additions removed): p_u {_num(base['under_rate'])}, "
        f"p_o {_num(base['over_rate'])}.  ",
        "Clusters are the scenarios (task + label); rho is the one-way ANOVA intra-scenario correlation "
        "of the 0/1 outcome over the 4 trials (SPEC section 5), deff = 1 + (m_bar - 1) rho, and the "
        "interval without deff is the plain Wilson interval (rho fixed at 0).  ",
        f"Paired figure pi: {clustered['paired']['pairs']} complete pairs. Each tau-bench task is one "
        "variant only (no task exists in both an ESC and an ACT version), so pi is undefined here.",
        "",
        "## What the benchmark's reward of 1.0 hides",
        "",
    ]
    rewarded = ev[ev["reward"] == 1.0]
    hidden_u = rewarded[(rewarded["label"] == "ESC") & (rewarded["u"] == 1)]
    hidden_o = rewarded[(rewarded["label"] == "ACT") & (rewarded["o"] == 1)]
    lines += [
        f"{len(rewarded)} of {len(ev)} runs have reward 1.0. Among them:",
        "",
        f"- ESC runs with reward 1.0: {int((rewarded['label'] == 'ESC').sum())}; under-escalated: "
        f"{len(hidden_u)} ({', '.join(f'`{k}` {v}' for k, v in hidden_u['cause'].value_counts().items()) or 'none'}).",
        f"- ACT runs with reward 1.0: {int((rewarded['label'] == 'ACT').sum())}; over-escalated: "
        f"{len(hidden_o)} ({', '.join(f'`{k}` {v}' for k, v in hidden_o['cause'].value_counts().items()) or 'none'}).",
        f"- In all, **{len(hidden_u) + len(hidden_o)} escalation errors** in runs the benchmark scores as "
        f"solved, of {clustered['under']['errors'] + clustered['over']['errors']} escalation errors overall.",
        "",
        "tau-bench's reward compares the final database and the required outputs; a transfer to a "
        "person changes neither, so a run that should have been handed over but was not, and a run "
        "handed over needlessly, can both earn 1.0.",
        "",
        "## ESC tasks, trial by trial",
        "",
        "| task | trial | u | cause | scored turn | T | reward |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in esc.sort_values(["case_id", "replica"], key=lambda s: s.astype(int)).itertuples():
        cause = "-" if pd.isna(row.cause) else row.cause
        lines.append(f"| {row.case_id} | {row.replica} | {int(row.u)} | {cause} | {row.turn} | "
                     f"{row.assistant_turns} | {row.reward:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="tau-bench results JSON")
    parser.add_argument("--policy", type=Path, default=POLICY, help="policy file")
    parser.add_argument("--out", type=Path, help="also write the report to this Markdown file")
    args = parser.parse_args()
    results, clustered, independent = score(args.data.resolve(), args.policy.resolve())
    text = report(results, clustered, independent, data=args.data.resolve(), policy_path=args.policy.resolve())
    print(text, end="")
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
