"""How well mode B's phrase judge reads ordinary wording (issue 30, friction 10).

Usage: python benchmarks/phrase_judge.py [--misses] [--no-tau-bench]

1. Recall and false-positive rate of :class:`PhraseJudge` on the fixed measurement set
   (``estimators/metric/phrase_set.jsonl``: 122 English and 122 Spanish sentences, about half of
   them hand-offs, each language split into a ``dev`` half, looked at while the phrases were
   written, and a ``heldout`` half, written before and never used to tune them), one row per
   language and split (:func:`phrase_judge_accuracy`). ``--misses`` lists the sentences read wrong.
2. Against a real record: the 200-run tau-bench example (gpt-4o, airline), scored with the record
   (mode A) and with the text (mode B). Of the conversations with a transfer call, how many the
   judge reads as a stated escalation, how many have any assistant text in the turn of the call,
   and how many the judge reads as an escalation that the record does not have.

Both parts run offline in about a second.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from escalation.estimators.metric import PhraseJudge, phrase_judge_accuracy, phrase_set, score_records, turn_texts
from escalation.estimators.records import Records, load_policy, read_conversations

ROOT = Path(__file__).resolve().parents[1]
TAU_LOG = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
TAU_POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"


def phrase_table(misses: bool) -> None:
    table = phrase_judge_accuracy()
    print("Phrase judge on the measurement set (recall: hand-offs read; false positives: others read as one)")
    print(f"{'language':<9}{'split':<9}{'recall':>16}{'false positives':>22}")
    for row in table.itertuples(index=False):
        print(f"{row.language:<9}{row.split:<9}{row.read:>5}/{row.hand_offs:<3} {row.recall:6.3f}"
              f"{row.false_positives:>11}/{row.others:<3} {row.false_positive_rate:6.3f}")
    if misses:
        rows = phrase_set()
        verdict = PhraseJudge().stated_escalation(list(rows["text"]), list(rows["language"]))
        wrong = rows[verdict != rows["hands_off"].to_numpy(bool)]
        print(f"\n{len(wrong)} sentences read wrong")
        for row in wrong.itertuples(index=False):
            print(f"  {'missed' if row.hands_off else 'false positive':<15}{row.language} {row.split:<8}{row.text}")


def tau_bench_table() -> None:
    policy = load_policy(TAU_POLICY)
    conversations, _ = read_conversations(TAU_LOG, policy=policy)
    records = Records.from_conversations(conversations)
    by_record = score_records(records, policy, mode="record")
    by_text = score_records(records, policy, mode="text", judge=PhraseJudge())
    called = (by_record["escalated"] == True).to_numpy(bool)  # noqa: E712 (nullable column)
    stated = (by_text["escalated"] == True).to_numpy(bool)  # noqa: E712
    escalation_tools = set(policy.escalation_tools)
    spoken = 0
    for i in np.flatnonzero(called):
        conv = conversations[i]
        turn = next(c["turn"] for c in conv["tool_calls"] if c["name"] in escalation_tools)
        spoken += bool(turn_texts(conv).get(turn, "").strip())
    esc = (by_record["label"] == "ESC").to_numpy(bool)
    print(f"\nThe tau-bench example ({TAU_LOG.name}, {len(conversations)} conversations)")
    print(f"  conversations with a transfer call:              {called.sum()}")
    print(f"  ... with assistant text in the turn of the call: {spoken}")
    print(f"  ... read by the judge as a stated escalation:    {(called & stated).sum()}")
    print(f"  read as an escalation without a transfer call:   {(stated & ~called).sum()}")
    print(f"  p_u with the record {by_record.loc[esc, 'u'].astype(float).mean():.4f}, "
          f"with the text {by_text.loc[esc, 'u'].astype(float).mean():.4f} ({esc.sum()} ESC conversations)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the sentences the judge reads wrong")
    parser.add_argument("--no-tau-bench", action="store_true", help="leave out the tau-bench comparison")
    args = parser.parse_args()
    phrase_table(args.misses)
    if not args.no_tau_bench:
        tau_bench_table()


if __name__ == "__main__":
    main()
