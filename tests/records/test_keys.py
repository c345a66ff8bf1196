"""The key rule (SPEC sections 5 and 6), written once in ``estimators.records._keys``: every reader
and the table check accept and refuse the same inputs, with the same message.

SPEC 6: "``conversation_id`` (string) is required and unique in a file"; SPEC 5: "Two
conversations with the same (case, label, replica) are an input error", for the
conversations that have a case and a label (a string: a label outside ESC/ACT is still a label,
whose conversation is not evaluated).
"""
import json

import pandas as pd
import pytest

from escalation.estimators.metric import score_file
from escalation.estimators.records import (
    InputError,
    Policy,
    UniqueKeys,
    _keys,
    check_unique_keys,
    normalise_conversation,
    read_conversations,
    read_jsonl,
)

POLICY = Policy.from_dict({"escalation_tools": ["esc"]})

# (records, None when accepted, else (line, field, the end of the message))
CASES = {
    "unique": ([{"conversation_id": "a", "case_id": "k", "label": "ESC"},
                {"conversation_id": "b", "case_id": "k", "label": "ACT"},
                {"conversation_id": "c", "case_id": "k", "label": "ESC", "replica": 1}], None),
    "repeated id": ([{"conversation_id": "a", "case_id": "k", "label": "ESC"},
                     {"conversation_id": "b"},
                     {"conversation_id": "a", "case_id": "j", "label": "ACT"}],
                    (3, "conversation_id", "'a' repeats the conversation of line 1")),
    "repeated (case, ESC, replica)": ([{"conversation_id": "a", "case_id": "k", "label": "ESC"},
                                       {"conversation_id": "b", "case_id": "k", "label": "ESC", "replica": 0}],
                                      (2, "replica", "case 'k', label 'ESC', replica 0 repeats line 1")),
    "repeated (case, maybe, replica)": ([{"conversation_id": "a", "case_id": "k", "label": "maybe", "replica": 2},
                                         {"conversation_id": "b", "case_id": "k", "label": "ACT", "replica": 2},
                                         {"conversation_id": "c", "case_id": "k", "label": "maybe", "replica": 2}],
                                        (3, "replica", "case 'k', label 'maybe', replica 2 repeats line 1")),
    "esc and ' ESC' are one label": ([{"conversation_id": "a", "case_id": "k", "label": "esc", "replica": 2},
                                      {"conversation_id": "b", "case_id": "k", "label": "ACT", "replica": 2},
                                      {"conversation_id": "c", "case_id": "k", "label": " ESC", "replica": 2}],
                                     (3, "replica", "case 'k', label 'ESC', replica 2 repeats line 1")),
    "a case id given as an integer is its text": ([{"conversation_id": "a", "case_id": 1, "label": "ACT"},
                                                   {"conversation_id": "b", "case_id": "1", "label": "ACT"}],
                                                  (2, "replica", "case '1', label 'ACT', replica 0 repeats line 1")),
    "no label: no (case, label, replica)": ([{"conversation_id": "a", "case_id": "k"},
                                             {"conversation_id": "b", "case_id": "k"}], None),
    "no case: no (case, label, replica)": ([{"conversation_id": "a", "label": "ESC"},
                                            {"conversation_id": "b", "label": "ESC"}], None),
}


def _write(tmp_path, records):
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _outcome(call):
    try:
        call()
    except InputError as err:
        return err.line, err.field, err.detail
    return None


def _frame(path):
    """The conversations of ``path`` as a table, each normalised on its own (no reader's check)."""
    rows = [normalise_conversation(json.loads(line)) for line in path.read_text().splitlines()]
    return pd.DataFrame(rows, columns=["conversation_id", "case_id", "label", "replica"])


@pytest.mark.parametrize("name", CASES)
def test_every_path_applies_one_rule(tmp_path, name):
    records, expected = CASES[name]
    path = _write(tmp_path, records)
    frame = _frame(path)
    outcomes = {
        "read_jsonl": _outcome(lambda: read_jsonl(path)),
        "read_conversations": _outcome(lambda: read_conversations(path, format="jsonl")),
        "score_file (Arrow, then the reference reader)": _outcome(lambda: score_file(path, POLICY, format="jsonl")),
        "score_file --mode text (the reference reader)": _outcome(
            lambda: score_file(path, POLICY, format="jsonl", mode="text")),
        "check_unique_keys": _outcome(lambda: check_unique_keys(frame, source=str(path),
                                                                lines=range(1, len(frame) + 1))),
    }
    if expected is None:
        assert set(outcomes.values()) == {None}, outcomes
    else:
        line, field, message = expected
        assert set(outcomes.values()) == {(line, field, message)}, outcomes


def test_the_table_check_without_lines_names_the_conversations():
    frame = pd.DataFrame({"conversation_id": ["a", "b"], "case_id": ["k", "k"], "label": ["esc", "esc"],
                          "replica": [0, 0]})
    with pytest.raises(InputError, match=r"^field 'replica': case 'k', label 'esc', replica 0 repeats "
                                         r"conversation 'a'$"):
        check_unique_keys(frame)


def test_the_table_check_takes_nan_for_a_missing_case():
    """A table read by pandas holds NaN where JSON held null: no case, so no (case, label, replica)."""
    frame = pd.DataFrame({"conversation_id": ["a", "b"], "case_id": [float("nan"), float("nan")],
                          "label": ["ESC", "ESC"], "replica": [0, 0]})
    check_unique_keys(frame)  # no error
    frame.loc[1, "conversation_id"] = "a"
    with pytest.raises(InputError, match="field 'conversation_id'"):
        check_unique_keys(frame)


def test_keys_that_share_a_hash_are_not_repeats_in_a_table(monkeypatch):
    """Every key hashes to 0: the table check still refuses only keys that are really equal."""
    monkeypatch.setattr(_keys, "hash", lambda key: 0, raising=False)
    frame = pd.DataFrame({"conversation_id": ["a", "b", "c"], "case_id": ["k", "k", None],
                          "label": ["ESC", "ACT", "ESC"], "replica": [0, 0, 0]})
    check_unique_keys(frame)  # no error
    frame.loc[2, "case_id"] = "k"
    with pytest.raises(InputError, match="case 'k', label 'ESC', replica 0 repeats conversation 'a'"):
        check_unique_keys(frame)


# The streaming checker's own tests (moved here from tests/metric/test_streaming.py).

def _items(keys):
    return [(line, {"conversation_id": cid, "case_id": case, "label": label, "replica": replica})
            for line, (cid, case, label, replica) in enumerate(keys, start=1)]


def test_keys_that_share_a_hash_are_not_repeats(monkeypatch):
    """Every key hashes to 0: only keys that are really equal stop the run."""
    monkeypatch.setattr(_keys, "hash", lambda key: 0, raising=False)
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
        monkeypatch.setattr(_keys, "hash", lambda key: 7, raising=False)
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
