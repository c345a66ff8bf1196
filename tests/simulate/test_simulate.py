"""The synthetic world (simulate/): scenarios, profiles, truth, correlation, determinism, I/O, CLI."""
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pandas as pd
import pytest

import escalation.simulate as S
from escalation.estimators.records import Records, read_jsonl
from escalation.estimators.stats import anova_icc

REQUIRED_PROFILES = ("follows_policy", "escalates_everything", "never_escalates", "invents_actions",
                     "acts_then_escalates", "asks_approval_for_everything", "pressure_susceptible",
                     "threshold_confused", "lookup_before_escalating")


def values(column):
    """A column as a Python list with None for null, for exact comparison."""
    series = pd.Series(column)
    return series.astype(object).where(series.notna(), None).tolist()


# ---- scenarios -------------------------------------------------------------------------------

def test_scenarios_are_pairs_with_attributes():
    scen = S.make_scenarios(250, seed=3)
    assert len(scen) == 500
    esc, act = scen.iloc[0::2], scen.iloc[1::2]
    assert (esc["label"] == "ESC").all() and (act["label"] == "ACT").all()
    assert (esc["case_id"].to_numpy() == act["case_id"].to_numpy()).all()
    assert scen["scenario_id"].is_unique
    for col in ("kind", "language", "pressure", "assistant_turns", "facts_turn", "reference", "threshold"):
        assert (esc[col].to_numpy() == act[col].to_numpy()).all(), col
    assert (esc["amount"] > esc["threshold"]).all()      # above the threshold: a person decides
    assert (act["amount"] <= act["threshold"]).all()     # at or below: the assistant may act
    assert ((scen["facts_turn"] >= 0) & (scen["facts_turn"] < scen["assistant_turns"])).all()
    assert values(esc["obligation_turn"]) == esc["facts_turn"].tolist()
    assert act["obligation_turn"].isna().all()
    assert set(scen["language"]) == {"en", "es"} and set(scen["pressure"]) == {0, 1, 2}
    assert scen["kind"].value_counts().nunique() == 1    # kinds cycle: 250 cases, 50 of each
    assert (scen.loc[scen["kind"] == "fee_waiver", "gated"].all()
            and not scen.loc[scen["kind"] != "fee_waiver", "gated"].any())


def test_scenario_arguments_are_checked():
    with pytest.raises(ValueError, match="`cases` must be a whole number >= 1; got 0"):
        S.make_scenarios(0, seed=1)
    with pytest.raises(ValueError, match="languages must be"):
        S.make_scenarios(3, seed=1, languages=("en", "fr"))
    assert set(S.make_scenarios(20, seed=1, languages=("es",))["language"]) == {"es"}


def test_world_policy_marks_every_tool_of_the_world():
    policy = S.world_policy()
    assert policy.escalation_tools == {"transfer_to_human"}
    assert policy.read_only_tools == {"get_order", "get_account"}
    assert policy.approval_tools == {"request_approval"}
    for kind in S.KINDS:
        assert policy.kind(kind.lookup_tool) == "read_only" and policy.kind(kind.action_tool) == "action"


# ---- profiles --------------------------------------------------------------------------------

def test_required_profiles_are_frozen_and_validated():
    assert set(REQUIRED_PROFILES) <= set(S.PROFILES)
    profile = S.PROFILES["follows_policy"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.esc_refused = 0.5
    with pytest.raises(ValueError, match="esc_refused must lie in"):
        dataclasses.replace(profile, esc_refused=1.5)
    with pytest.raises(ValueError, match="the esc_\\* probabilities sum to"):
        dataclasses.replace(profile, esc_refused=0.6, esc_referred=0.6)
    with pytest.raises(ValueError, match="pressure_log_odds must be a finite number"):
        dataclasses.replace(profile, pressure_log_odds=float("nan"))
    with pytest.raises(ValueError, match="`profile` must be one of follows_policy, .*; got 'nobody'"):
        S.simulate("nobody", cases=2)


@pytest.mark.parametrize("name, p_u, pi", [
    # the paper's table, section 8 ("Synthetic simulation"): under-escalation and paired figure
    ("follows_policy", 0.091, 0.85), ("escalates_everything", 0.023, 0.35),
    ("never_escalates", 0.909, 0.09), ("invents_actions", 0.352, 0.58)])
def test_default_profiles_reproduce_the_paper_in_expectation(name, p_u, pi):
    expected = S.expected_rates(S.PROFILES[name])
    assert expected["p_u"] == pytest.approx(p_u, abs=5e-4)
    assert expected["pi"] == pytest.approx(pi, abs=5e-3)   # the paper gives two decimals


def test_invents_actions_without_record_matches_the_paper():
    # paper section 6 ("Observation without a record"): 0.08 without a record
    assert S.expected_rates(S.PROFILES["invents_actions"])["p_u_text"] == pytest.approx(0.08, abs=5e-4)


@pytest.mark.parametrize("name", ["pressure_susceptible", "threshold_confused", "asks_approval_for_everything",
                                  "invents_actions"])
def test_expected_rates_agree_with_monte_carlo(name):
    """Analytic expectation vs a large simulation (independent cases, one replica, rho = 0)."""
    profile = S.PROFILES[name]
    sim = S.simulate(profile, cases=40000, replicas=1, rho=0.0, seed=11)
    expected = S.expected_rates(profile)
    realised = sim.truth_rates()
    n = 40000
    for key in ("p_u", "p_o", "pi"):
        p = expected[key]
        mcse = np.sqrt(p * (1 - p) / n)   # binomial MCSE of a mean of n independent 0/1 outcomes
        assert abs(realised[key] - p) <= 4 * mcse, (key, realised[key], p, mcse)


def test_expected_rates_given_scenarios_average_the_scenario_probabilities():
    sim = S.simulate("pressure_susceptible", cases=500, replicas=2, seed=13)
    scen = sim.scenarios
    expected = S.expected_rates(sim.profile, scen)
    esc, act = scen[scen["label"] == "ESC"], scen[scen["label"] == "ACT"]
    assert expected["p_u"] == pytest.approx(esc["p_error"].mean())
    assert expected["p_o"] == pytest.approx(act["p_error"].mean())
    pairs = (1 - esc["p_error"].to_numpy()) * (1 - act["p_error"].to_numpy())   # rows are case-major
    assert expected["pi"] == pytest.approx(pairs.mean())
    frame = sim.to_frame()
    assert len(frame) == len(sim) and {"truth_u", "truth_behaviour", "kind", "pressure", "label"} <= set(frame)
    assert values(frame["truth_cause"]) == values(sim.truth["cause"])


def test_attribute_effects_move_the_error_probability():
    pressure = S.simulate("pressure_susceptible", cases=3000, seed=2).scenarios
    esc = pressure[pressure["label"] == "ESC"]
    by_level = esc.groupby("pressure")["p_error"].mean()
    assert by_level.is_monotonic_increasing and by_level[0] == pytest.approx(0.06)
    confused = S.simulate("threshold_confused", cases=3000, seed=2).scenarios
    near = confused["distance"] < 0.06
    assert confused.loc[near, "p_error"].mean() > 3 * confused.loc[confused["distance"] > 0.5, "p_error"].mean()
    es = confused["language"] == "es"
    far = confused["distance"] > 0.5
    assert confused.loc[far & es, "p_error"].mean() > confused.loc[far & ~es, "p_error"].mean()
    flat = S.simulate("follows_policy", cases=500, seed=2).scenarios
    assert np.allclose(flat.loc[flat["label"] == "ESC", "p_error"], 0.091)


# ---- truth -----------------------------------------------------------------------------------

def all_behaviours_profile():
    """A profile that draws every behaviour."""
    return S.Profile(name="everything", description="every behaviour", esc_decided_alone=0.1, esc_refused=0.1,
                     esc_referred=0.1, esc_fake_escalation=0.1, esc_invented_action=0.1,
                     esc_acted_then_escalated=0.1, esc_approval_instead_of_handoff=0.1, act_unneeded_handoff=0.1,
                     act_acted_then_escalated=0.1, act_approval=0.2, act_refused=0.1, act_referred=0.1,
                     act_fake_escalation=0.1, act_invented_action=0.1, gate_compliance=0.5, prompt=0.4)




# ---- correlated replicas ---------------------------------------------------------------------

@pytest.mark.parametrize("rho", [0.0, 0.1, 0.4])
def test_realised_icc_matches_rho(rho):
    """The ANOVA ICC of u (ESC) and o (ACT) over all scenarios is within 4 MCSE of rho.

    follows_policy has the same error probability in every scenario, so the ICC is rho exactly
    (beta-binomial). The MCSE of the pooled estimate is the spread of the estimates of R = 25
    disjoint batches of scenarios divided by sqrt(R).
    """
    R, K, m = 25, 160, 8
    sim = S.simulate("follows_policy", cases=R * K, replicas=m, rho=rho, seed=21)
    is_esc = (sim.records.conversations["label"] == "ESC").to_numpy()
    for half, column in ((is_esc, "u"), (~is_esc, "o")):
        error = sim.truth.loc[half, column].to_numpy(float).reshape(R * K, m)
        totals, sizes = error.sum(axis=1), np.full(R * K, m)
        pooled = anova_icc(totals, sizes, truncate=False)
        batches = anova_icc(totals.reshape(R, K), sizes.reshape(R, K), truncate=False)
        mcse = batches.std(ddof=1) / np.sqrt(R)
        assert abs(pooled - rho) <= 4 * mcse, (column, pooled, rho, mcse)


def test_icc_with_attribute_effects_matches_its_expectation():
    """Between-scenario variation of p adds to rho: ICC = (Var p_s + rho E[p_s(1-p_s)]) / (p(1-p))."""
    R, K, m, rho = 25, 160, 8, 0.2
    sim = S.simulate("pressure_susceptible", cases=R * K, replicas=m, rho=rho, seed=22)
    expected = S.expected_rates(sim.profile, sim.scenarios, rho=rho)["icc_u"]
    assert expected > rho + 0.1
    is_esc = (sim.records.conversations["label"] == "ESC").to_numpy()
    error = sim.truth.loc[is_esc, "u"].to_numpy(float).reshape(R * K, m)
    totals, sizes = error.sum(axis=1), np.full(R * K, m)
    pooled = anova_icc(totals, sizes, truncate=False)
    mcse = anova_icc(totals.reshape(R, K), sizes.reshape(R, K), truncate=False).std(ddof=1) / np.sqrt(R)
    assert abs(pooled - expected) <= 4 * mcse, (pooled, expected, mcse)


def test_rho_one_makes_replicas_identical_in_error():
    sim = S.simulate("invents_actions", cases=300, replicas=4, rho=1.0, seed=3)
    is_esc = (sim.records.conversations["label"] == "ESC").to_numpy()
    u = sim.truth.loc[is_esc, "u"].to_numpy(float).reshape(300, 4)
    assert (u.min(axis=1) == u.max(axis=1)).all() and 0 < u.mean() < 1


# ---- determinism -----------------------------------------------------------------------------

def frames_equal(a, b, rows=None):
    for name in ("conversations", "calls", "messages"):
        left, right = getattr(a.records, name), getattr(b.records, name)
        if rows is not None:
            left = left[left["conv"] < rows] if "conv" in left else left.iloc[:rows]
            right = right[right["conv"] < rows] if "conv" in right else right.iloc[:rows]
        pd.testing.assert_frame_equal(left.reset_index(drop=True), right.reset_index(drop=True))
    left, right = a.truth, b.truth
    if rows is not None:
        left, right = left.iloc[:rows], right.iloc[:rows]
    pd.testing.assert_frame_equal(left.reset_index(drop=True), right.reset_index(drop=True))


def test_same_seed_gives_byte_identical_jsonl(tmp_path):
    paths = []
    for i in range(2):
        sim = S.simulate("invents_actions", cases=150, replicas=3, rho=0.2, seed=7)
        paths.append(S.write_jsonl(sim, tmp_path / f"r{i}.jsonl"))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    other = S.write_jsonl(S.simulate("invents_actions", cases=150, replicas=3, rho=0.2, seed=8), tmp_path / "o.jsonl")
    assert other.read_bytes() != paths[0].read_bytes()


def test_given_scenarios_reproduce_the_default_ones():
    sim = S.simulate("threshold_confused", cases=40, replicas=2, rho=0.1, seed=4)
    again = S.simulate("threshold_confused", replicas=2, rho=0.1, seed=4, scenarios=S.make_scenarios(40, seed=4))
    frames_equal(sim, again)
    bad = S.make_scenarios(4, seed=1).iloc[1:]
    with pytest.raises(ValueError, match="pairs of rows"):
        S.simulate("follows_policy", scenarios=bad)


# ---- records on disk ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["record", "text"])
def test_jsonl_round_trips_to_the_columnar_records(tmp_path, mode):
    sim = S.simulate(all_behaviours_profile(), cases=120, replicas=2, rho=0.2, seed=12, mode=mode)
    path = S.write_jsonl(sim, tmp_path / "records.jsonl")
    conversations = read_jsonl(path)
    back = Records.from_conversations(conversations)
    for name in ("conversations", "calls", "messages"):
        read, made = getattr(back, name), getattr(sim.records, name)
        if name == "calls":  # the simulator dictionary-encodes covers, the reader tool names: same values
            read = read.astype({"name": object})
            read = read.assign(covers=[None if c is None else tuple(c) for c in read["covers"]])
            made = made.assign(covers=[None if isinstance(c, float) else c for c in made["covers"].astype(object)])
        pd.testing.assert_frame_equal(read, made)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert all(set(line["truth"]) == {"behaviour", "u", "o", "cause", "turn", "obligation_turn"} for line in lines)
    for key in ("behaviour", "u", "o", "cause", "turn", "obligation_turn"):
        assert [line["truth"][key] for line in lines] == values(sim.truth[key])
        assert [c["metadata"]["truth"][key] for c in conversations] == values(sim.truth[key])
    if mode == "text":
        assert all(line["tool_calls"] is None for line in lines) and not back.conversations["has_record"].any()
    else:
        approvals = [c for line in lines for c in line["tool_calls"] if c["name"] == "request_approval"]
        assert approvals and all(c["covers"] == [c["arguments"]["action"]] for c in approvals)


def run_cli(monkeypatch, capsys, *args):
    """Run ``escalation ARGS`` in this process through the entry point; return (code, out, err)."""
    from escalation.cli import main

    monkeypatch.setattr(sys, "argv", ["escalation", *args])
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_writes_records_and_policy_deterministically(tmp_path, monkeypatch, capsys):
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        code, _, err = run_cli(monkeypatch, capsys, "simulate", "--profile", "invents_actions", "--cases", "30",
                               "--replicas", "2", "--rho", "0.2", "--mode", "text", "--seed", "5", "--out", str(out))
        assert code == 0, err
    assert (outs[0] / "records.jsonl").read_bytes() == (outs[1] / "records.jsonl").read_bytes()
    assert json.loads((outs[0] / "policy.json").read_text()) == json.loads(S.world_policy_path().read_text())
    lines = (outs[0] / "records.jsonl").read_text().splitlines()
    assert len(lines) == 120 and json.loads(lines[0])["tool_calls"] is None
    code, out, _ = run_cli(monkeypatch, capsys, "simulate", "--list-profiles")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == list(S.PROFILES)


def test_cli_rejects_an_unknown_profile_without_output(tmp_path, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "simulate", "--profile", "nobody", "--out", str(tmp_path / "x"))
    assert code == 2
    assert err.startswith("error: field '--profile': unknown profile 'nobody'") and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_the_papers_mode_names_are_aliases_with_a_notice(tmp_path, monkeypatch, capsys):
    """``--mode B`` (the paper's name) writes what ``--mode text`` writes, and says the new name."""
    written = {}
    for mode in ("text", "B"):
        code, _, err = run_cli(monkeypatch, capsys, "simulate", "--profile", "invents_actions", "--cases", "5",
                               "--mode", mode, "--seed", "5", "--out", str(tmp_path / mode))
        assert code == 0, err
        assert ("--mode text" in err) == (mode == "B")
        written[mode] = (tmp_path / mode / "records.jsonl").read_bytes()
    assert written["B"] == written["text"]
    assert json.loads(written["text"].splitlines()[0])["metadata"]["mode"] == "text"
    with pytest.warns(FutureWarning, match="'A' is now called 'record'"):
        old = S.simulate("follows_policy", cases=4, seed=1, mode="A")
    frames_equal(old, S.simulate("follows_policy", cases=4, seed=1, mode="record"))
    assert old.mode == "record"
    with pytest.raises(ValueError, match="`mode` must be one of record, text, A, B; got"):
        S.simulate("follows_policy", cases=4, seed=1, mode="C")
