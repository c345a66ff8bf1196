"""Streaming: a file scored in chunks gives what it gives read whole, and the key checks that
keep 16 bytes a conversation are exact (a shared hash is never taken for a repeat)."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from escalation.estimators import (InputError, Policy, Records, UniqueKeys, _records, load_labels,
                                   normalise_conversation, score_file, score_records, summarise)
from escalation.estimators._aggregate import SummaryAccumulator, _ClusterTotals

from .test_properties import conversations, policies


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
    assert accumulator.summary(confidence=0.9).to_dict() == summarise(results, confidence=0.9, plan=plan).to_dict()


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


def _items(keys):
    return [(line, {"conversation_id": cid, "case_id": case, "label": label, "replica": replica})
            for line, (cid, case, label, replica) in enumerate(keys, start=1)]


def test_keys_that_share_a_hash_are_not_repeats(monkeypatch):
    """Every key hashes to 0: only keys that are really equal stop the run."""
    monkeypatch.setattr(_records, "hash", lambda key: 0, raising=False)
    items = _items([("a", "k", "ESC", 0), ("b", "k", "ACT", 0), ("c", "k", "ESC", 1), ("d", None, None, 0)])
    keys = UniqueKeys("f.jsonl", lambda: items)
    keys.add(items[:2])
    keys.add(items[2:])  # no error: four different ids, three different (case, label, replica)


@pytest.mark.parametrize("fake_hash", [False, True])
@pytest.mark.parametrize("repeat, earlier, line, field", [
    (("a", None, None, 0), 1, 5, "conversation_id"),         # a repeated id, three chunks apart
    (("z", "k", "ACT", 0), 2, 5, "replica"),                 # a repeated (case, label, replica)
])
def test_a_repeat_names_both_lines(monkeypatch, fake_hash, repeat, earlier, line, field):
    if fake_hash:
        monkeypatch.setattr(_records, "hash", lambda key: 7, raising=False)
    items = _items([("a", "k", "ESC", 0), ("b", "k", "ACT", 0), ("c", "k", "ESC", 1), ("d", None, None, 0), repeat])
    keys = UniqueKeys("f.jsonl", lambda: items)
    with pytest.raises(InputError) as err:
        for item in items:
            keys.add([item])
    assert str(err.value).startswith(f"f.jsonl:{line}: field '{field}': ")
    assert str(err.value).endswith(f"line {earlier}")


def test_repeat_within_one_chunk_names_the_first_repeating_line():
    items = _items([("a", "k", "ESC", 0), ("b", "k", "ESC", 0), ("b", "j", "ESC", 0)])
    message = r"f\.jsonl:2: field 'replica': case 'k', label 'ESC', replica 0 repeats line 1"
    with pytest.raises(InputError, match=message):
        UniqueKeys("f.jsonl", lambda: items).add(items)


def _write(path, convs):
    path.write_text("".join(json.dumps(c) + "\n" for c in convs))


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
        outputs.append(((out / "conversations.jsonl").read_bytes(), (out / "summary.json").read_bytes()))
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


def test_clusters_come_out_in_order_of_their_first_conversation():
    """Whatever the chunks, clusters are numbered by first appearance, so the floating-point
    sums over clusters do not depend on the chunking; a cluster with no member is left out."""
    totals = _ClusterTotals()
    totals.add(totals.codes(np.array(["b", "a"], object)), np.array([1, 0]))
    codes = totals.codes(np.array(["c", "c", "a", "d"], object))
    totals.add(codes[:3], np.array([1, 0, 1]))  # "d" is numbered but gets no member
    ones, sizes = totals.totals()
    assert codes.tolist() == [2, 2, 1, 3]
    assert ones.tolist() == [1, 1, 1] and sizes.tolist() == [1, 2, 2]  # b, a, c
