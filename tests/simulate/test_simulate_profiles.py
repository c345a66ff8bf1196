"""The profiles' error tables (``simulate._profiles``) against the generated truth."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import escalation.simulate as S
from escalation.simulate._profiles import ACT_ERROR, ESC_ERROR

from .test_simulate import all_behaviours_profile, values


@pytest.mark.slow
def test_truth_is_consistent_with_the_behaviour():
    sim = S.simulate(all_behaviours_profile(), cases=600, replicas=3, rho=0.3, seed=5)
    truth, conv = sim.truth, sim.records.conversations
    assert set(truth["behaviour"]) == set(S.BEHAVIOURS)
    b = pd.Index(S.BEHAVIOURS).get_indexer(truth["behaviour"])
    is_esc = (conv["label"] == "ESC").to_numpy()
    assert values(truth.loc[is_esc, "u"]) == ESC_ERROR[b[is_esc]].astype(int).tolist()
    assert truth.loc[is_esc, "o"].isna().all() and truth.loc[~is_esc, "u"].isna().all()
    gated = sim.scenarios["gated"].to_numpy()[truth["scenario"]]
    act_error = ACT_ERROR[b] & ~(gated & (truth["behaviour"] == "approved_then_resolved").to_numpy())
    assert values(truth.loc[~is_esc, "o"]) == act_error[~is_esc].astype(int).tolist()
    only_esc = {"escalated", "lookup_then_escalated", "decided_alone", "approval_instead_of_handoff"}
    only_act = {"unneeded_handoff", "unneeded_approval", "resolved", "approved_then_resolved"}
    assert not set(truth.loc[is_esc, "behaviour"]) & only_act
    assert not set(truth.loc[~is_esc, "behaviour"]) & only_esc
    assert set(truth.loc[gated & ~is_esc, "behaviour"]).isdisjoint({"unneeded_approval"})
    assert set(truth.loc[~gated, "behaviour"]).isdisjoint({"approved_then_resolved"})
    # causes: none when compliant; the acted-then-escalated ESC conversations are the only
    # acted_before_handoff ones
    error = np.where(is_esc, truth["u"].fillna(0), truth["o"].fillna(0)).astype(bool)
    assert truth.loc[~error, "cause"].isna().all() and truth.loc[error, "cause"].notna().all()
    abh = (truth["cause"] == "acted_before_handoff").to_numpy()
    assert (abh == (is_esc & (truth["behaviour"] == "acted_then_escalated").to_numpy())).all()
    # turns: the scored turn is a turn of the conversation, escalations come at or after the
    # obligation turn, events keep record order
    T = conv["assistant_turns"].to_numpy()
    turn = truth["turn"].to_numpy(np.int64)
    assert ((turn >= 0) & (turn < T)).all()
    handed = is_esc & truth["escalation_turn"].notna().to_numpy()
    assert (truth["escalation_turn"][handed].to_numpy(np.int64)
            >= truth["obligation_turn"][handed].to_numpy(np.int64)).all()
    ev = truth[["lookup_turn", "approval_turn", "action_turn", "escalation_turn"]].astype("Float64")
    ordered = ev.ffill(axis=1).diff(axis=1).iloc[:, 1:].fillna(0) >= 0
    assert ordered.all().all()
    silent = truth["behaviour"].isin(["refused", "referred", "fake_escalation", "invented_action"]).to_numpy()
    assert (turn[silent & is_esc] == T[silent & is_esc] - 1).all()
