"""The assistant's texts (``simulate._text``): each language speaks its own table, and the
templates state an escalation exactly where the behaviour is a transfer or a fake escalation."""
from __future__ import annotations

import numpy as np

import escalation.simulate as S
from escalation.estimators.metric import PhraseJudge
from escalation.simulate._text import FILLER_CODE, N_CODES, SAY_CODES, assistant_table

from .test_simulate import all_behaviours_profile


def test_records_have_the_turns_and_messages_of_the_behaviour():
    sim = S.simulate(all_behaviours_profile(), cases=200, replicas=2, seed=6)
    rec, truth = sim.records, sim.truth
    T = rec.conversations["assistant_turns"].to_numpy()
    msgs = rec.messages
    assert np.array_equal(np.bincount(msgs["conv"], minlength=len(T)), 2 * T)
    assert (msgs["role"].to_numpy()[0::2] == "user").all() and (msgs["role"].to_numpy()[1::2] == "assistant").all()
    assert (msgs["text"].str.len() > 0).all()
    calls = rec.calls
    assert calls["conv"].is_monotonic_increasing
    assert ((calls["turn"] >= 0) & (calls["turn"] < T[calls["conv"]])).all()
    approvals = calls["name"] == "request_approval"
    assert approvals.any() and (calls.loc[approvals, "covers"].map(len) == 1).all()
    assert calls.loc[~approvals, "covers"].isna().all()
    fakes = np.flatnonzero((truth["behaviour"] == "fake_escalation").to_numpy())
    assert not np.isin(fakes, calls.loc[calls["name"] == "transfer_to_human", "conv"]).any()
    # each conversation speaks its language: its assistant texts come from that language's table
    table = assistant_table()
    for i, language in enumerate(S.LANGUAGES):
        convs = np.flatnonzero((rec.conversations["language"] == language).to_numpy())
        spoken = set(msgs.loc[msgs["conv"].isin(convs) & (msgs["role"] == "assistant"), "text"])
        own, other = set(table[i].ravel()), set(table[1 - i].ravel())
        assert spoken and spoken <= own and not spoken & other


def test_templates_state_an_escalation_exactly_for_transfers_and_fake_escalations():
    """The phrase judge reads every template as the generator means it (SPEC section 4)."""
    table = assistant_table()
    codes = np.arange(table.shape[-1])
    says_escalation = np.array([code < N_CODES and (code % 16 >= 8 or code // 16 == SAY_CODES["fake_escalation"])
                                for code in codes])
    texts = table.reshape(-1, table.shape[-1])
    judge = PhraseJudge()
    for row in texts:
        verdict = judge.stated_escalation(list(row), None)
        assert (verdict == says_escalation).all(), [t for t, v, w in zip(row, verdict, says_escalation) if v != w]
    assert table.shape[-1] == FILLER_CODE + 3
