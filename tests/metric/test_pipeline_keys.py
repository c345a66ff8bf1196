"""The key rule across logs scored together (``estimators.metric._pipeline._KeysAcrossLogs``, SPEC 6).

A hash shared by two logs is confirmed on the keys, read again from both logs. A key whose hash
is not found again means the log changed between the reads: that is an error, never taken for
two keys that merely share a hash (the audit: a file changed during the read could slip a
repeated ``conversation_id`` through).
"""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from escalation.estimators.metric._pipeline import _KeysAcrossLogs
from escalation.estimators.records import InputError


def _conversations(*ids) -> pd.DataFrame:
    return pd.DataFrame({"conversation_id": list(ids), "case_id": list(ids), "label": ["ESC"] * len(ids),
                         "replica": [0] * len(ids)})


def _two_logs(second_reread):
    keys = _KeysAcrossLogs()
    first, second = SimpleNamespace(name="a.jsonl"), SimpleNamespace(name="b.jsonl")
    keys.add(SimpleNamespace(conversations=_conversations("x", "y")))
    keys.end_of(first, lambda: iter([_conversations("x", "y")]))
    keys.add(SimpleNamespace(conversations=_conversations("y", "z")))
    keys.end_of(second, second_reread)


def test_a_key_in_two_logs_is_an_error_naming_both():
    with pytest.raises(InputError, match=r"^b.jsonl: field 'conversation_id': conversation_id 'y' is also in "
                                         r"a.jsonl: logs scored together must not repeat a key; .*escalation "
                                         r"leaderboard"):
        _two_logs(lambda: iter([_conversations("y", "z")]))


def test_a_log_that_changed_between_the_reads_is_an_error_not_a_hash_collision():
    with pytest.raises(InputError) as err:
        _two_logs(lambda: iter([_conversations("w", "z")]))  # y is gone on the second read
    assert str(err.value) == ("b.jsonl: field 'conversation_id': changed while it was read (a key read once is not "
                              "there the second time): score it when nothing writes to it")
