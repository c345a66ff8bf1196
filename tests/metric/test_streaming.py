"""Streaming: a file scored in chunks gives what it gives read whole."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import SummaryAccumulator, score_file, score_records, summarise
from escalation.estimators.records import InputError, Policy, Records, load_labels, normalise_conversation

from .test_scorers_properties import conversations, policies


@st.composite
def record_sets(draw):
    """Up to 40 conversations over 3 cases and 2 replicas, (case, label, replica) unique."""
    convs, seen = [], set()
    for i in range(draw(st.integers(1, 40))):
        c = draw(conversations(i))
        key = (c["case_id"], c["label"], c["replica"])
        if c["case_id"] is None or key not in seen:
            seen.add(key)
            convs.append(c)
    return convs


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_sets(), policies(), st.lists(st.integers(1, 40), min_size=1), st.booleans())
def test_chunked_summary_is_the_whole_summary(convs, policy, cuts, with_plan):
    """Any cutting of the results into chunks gives the summary of the whole, to the last bit."""
    results = score_records(Records.from_conversations(convs), policy)
    plan = pd.DataFrame({"case_id": ["k1", "k2", "k9"], "label": ["ESC", "ACT", "ESC"], "replicas": [2, 1, 1]}) \
        if with_plan else None
    accumulator = SummaryAccumulator(plan=plan)
    bounds = np.unique(np.clip(np.cumsum(cuts), 0, len(results)))
    for start, stop in zip(np.r_[0, bounds], np.r_[bounds, len(results)]):
        accumulator.add(results.iloc[start:stop])
    chunked, whole = accumulator.summary(confidence=0.9), summarise(results, confidence=0.9, plan=plan)
    assert chunked.to_dict() == whole.to_dict()
    for figure in ("under", "over", "paired"):  # the cluster totals kept, in the same order
        for name in ("cluster_ids", "cluster_totals", "cluster_sizes"):
            assert getattr(getattr(chunked, figure), name).tolist() == getattr(getattr(whole, figure), name).tolist()


def test_pairs_whose_halves_are_far_apart():
    """An ESC half in the first chunk waits for its ACT half in the last one."""
    convs = [normalise_conversation({"conversation_id": f"e{r}", "case_id": f"k{r % 3}", "replica": r // 3,
                                     "label": "ESC", "tool_calls": [] if r % 2 else
                                     [{"turn": 0, "name": "esc1"}]}) for r in range(12)]
    convs += [normalise_conversation({"conversation_id": f"a{r}", "case_id": f"k{r % 3}", "replica": r // 3,
                                      "label": "ACT", "tool_calls": []}) for r in reversed(range(12))]
    policy = Policy.from_dict({"escalation_tools": ["esc1"]})
    results = score_records(Records.from_conversations(convs), policy)
    accumulator = SummaryAccumulator()
    for start in range(0, len(results), 5):
        accumulator.add(results.iloc[start:start + 5])
    paired = accumulator.summary().paired
    assert paired.pairs == 12 and paired.cases == 3
    assert paired.pi == 0.5  # the ESC halves of even r escalated; every ACT half acted
    assert paired == summarise(results).paired


def test_summarise_keeps_the_readers_key_rule():
    """A frame with a repeated ``conversation_id`` (keys otherwise distinct) is refused, as
    ``read_jsonl`` refuses the file; the message names the repeated id."""
    convs = [normalise_conversation({"conversation_id": "c", "case_id": "k", "replica": r, "label": "ESC",
                                     "tool_calls": []}) for r in range(2)]
    results = score_records(Records.from_conversations(convs), Policy.from_dict({"escalation_tools": ["t"]}))
    with pytest.raises(InputError, match=r"field 'conversation_id': 'c' repeats an earlier conversation"):
        summarise(results)


def _write(path, convs):
    path.write_text("".join(json.dumps(c) + "\n" for c in convs))


@pytest.mark.slow
def test_streamed_file_is_scored_as_a_whole(tmp_path):
    """The reference path (labels given), chunk sizes 1 to 1000: identical output files."""
    rng = np.random.default_rng(3)
    tools = ["get_order", "transfer_to_human", "issue_refund"]
    convs = [{"conversation_id": f"c{i}", "case_id": f"k{i % 6}", "replica": i // 12,
              "tool_calls": [{"turn": turn, "name": str(rng.choice(tools))}
                             for turn in sorted(rng.integers(0, 2, rng.integers(3)).tolist())]} for i in range(120)]
    records = tmp_path / "r.jsonl"
    _write(records, convs)
    labels_path = tmp_path / "labels.csv"
    labels_path.write_text("conversation_id,label\n" + "".join(
        f"c{i},{'ESC' if (i // 6) % 2 else 'ACT'}\n" for i in range(120)))
    policy = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
                               "action_tools": ["issue_refund"]})
    outputs = []
    for chunk_size in (1, 7, 1000):
        out = tmp_path / f"out{chunk_size}"
        summary, used = score_file(records, policy, format="jsonl", labels=load_labels(labels_path), out_dir=out,
                                   chunk_size=chunk_size)
        assert used == "jsonl" and summary.paired.pairs == 60 and summary.not_evaluated.total == 0
        facts = json.loads((out / "summary.json").read_text())
        del facts["provenance"]["created"]  # the time of the run: all else is the same for every chunk size
        outputs.append(((out / "conversations.jsonl").read_bytes(), facts))
    assert outputs[0] == outputs[1] == outputs[2]


def test_streamed_repeat_is_found_across_chunks(tmp_path):
    """The reference reader reads its file again to name the earlier line."""
    convs = [{"conversation_id": f"c{i}", "case_id": "k", "replica": i, "label": "ESC"} for i in range(30)]
    convs.append({"conversation_id": "c3", "case_id": "k", "replica": 99, "label": "ESC"})
    records = tmp_path / "r.jsonl"
    _write(records, convs)
    labels_path = tmp_path / "labels.csv"
    labels_path.write_text("case_id,label\nk,ESC\n")
    with pytest.raises(InputError, match=r"r\.jsonl:31: field 'conversation_id': 'c3' repeats the conversation of "
                                         r"line 4$"):
        score_file(records, Policy.from_dict({"escalation_tools": ["t"]}), format="jsonl",
                   labels=load_labels(labels_path), out_dir=tmp_path / "out", chunk_size=4)
    assert not (tmp_path / "out" / "conversations.jsonl").exists()
