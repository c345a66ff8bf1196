"""Approval reviews in the reviewers' queue (issue 32, point 5): a second stream of reviews with its own time.

Reference values are computed here by other routes: the moments of a two-point mixture of review times in exact
fractions (law of total expectation: ``E[S^k] = sum_i w_i E[S_i^k]``, and ``E[S_i^2] = tau_i^2 (1 + c_i^2)``;
for two exponential kinds this is the hyperexponential H2, ``cs^2 = 2 sum p_i m_i^2 / (sum p_i m_i)^2 - 1``,
from its second moment ``sum p_i 2 m_i^2`` (Kleinrock 1975, chapter 4, the method of stages), used here as a
second check); Erlang C by its direct sum
in fractions (Kleinrock 1975, section 3.5); the approval reviews of a folder counted by hand from the lines of
``conversations.jsonl`` read with the ``json`` module (SPEC sections 3A and 7).
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from escalation.estimators.metric import (
    NO_APPROVALS,
    CapacityModel,
    HandoffTotals,
    approval_reviews,
    capacity_outputs,
    review_mix,
    score_file,
)
from escalation.estimators.records import load_policy, read_scored

from .._helpers import run_cli_output


def _erlang_c_exact(a: Fraction, r: int) -> Fraction:
    """The direct sum: ``(A^R / R!) R / (R - A)`` over ``sum_{k<R} A^k / k! + (A^R / R!) R / (R - A)``."""
    top = a ** r / math.factorial(r) * Fraction(r) / (r - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(r)) + top)


def _mixture(a_h, a_p, tau, tau_p, c_h, c_p) -> tuple[Fraction, Fraction]:
    """Mean and squared cv of the review time of a queue fed by both streams, in fractions."""
    w = Fraction(a_h) / (a_h + a_p)
    mean = w * tau + (1 - w) * tau_p
    second = w * Fraction(tau) ** 2 * (1 + Fraction(c_h) ** 2) + (1 - w) * Fraction(tau_p) ** 2 * (
        1 + Fraction(c_p) ** 2)
    return mean, second / mean ** 2 - 1


# --- the queue with two kinds of review -----------------------------------------------------------


@pytest.mark.parametrize("a_h, a_p, tau, tau_p, c_h, c_p", [(10, 30, 6, 2, 1, Fraction(1, 2)),
                                                            (12, 3, 4, 10, Fraction(1, 2), 0),
                                                            (5, 5, 3, 3, Fraction(3, 2), Fraction(3, 2)),
                                                            (7, 0, 4, 9, 1, 2)])
def test_the_mixture_of_review_times_is_the_law_of_total_expectation(a_h, a_p, tau, tau_p, c_h, c_p):
    load, mean, cv = review_mix(a_h, a_p, tau, tau_p, float(c_h), float(c_p))
    want_mean, want_cs2 = _mixture(a_h, a_p, tau, tau_p, c_h, c_p)
    assert float(load) == pytest.approx((a_h * tau + a_p * tau_p) / 60, rel=1e-14)
    assert float(mean) == pytest.approx(float(want_mean), rel=1e-14)
    assert float(cv) ** 2 == pytest.approx(float(want_cs2), rel=1e-12, abs=1e-14)
    assert float(load) == pytest.approx((a_h + a_p) * float(mean) / 60, rel=1e-14)  # A = a tau_bar / 60


def test_the_mixture_by_hand_and_as_a_hyperexponential():
    # 10 hand-offs of 6 minutes and 30 approvals of 2 an hour, cv 1 and 0.5: w = 1/4, tau_bar = 3,
    # E[S^2] = 1/4 36 2 + 3/4 4 1.25 = 21.75, cs^2 = 21.75 / 9 - 1 = 17/12
    _, mean, cv = review_mix(10.0, 30.0, 6.0, 2.0, 1.0, 0.5)
    assert (float(mean), float(cv) ** 2) == (pytest.approx(3.0), pytest.approx(17 / 12))
    # two exponential kinds: H2 with p = (1/4, 3/4), means (6, 2): 2 (9 + 3) / 9 - 1 = 5/3
    _, _, cv = review_mix(10.0, 30.0, 6.0, 2.0)
    assert float(cv) ** 2 == pytest.approx(2 * (0.25 * 36 + 0.75 * 4) / 3.0 ** 2 - 1, rel=1e-14)
    # nothing arrives: the hand-offs' own review
    load, mean, cv = review_mix(0.0, 0.0, 4.0, 9.0, 0.5, 2.0)
    assert (float(load), float(mean), float(cv)) == (0.0, 4.0, 0.5)


def test_the_outputs_with_approval_reviews_by_hand():
    # lambda 100, s 0.2: hand-offs 100 (0.2 0.5 + 0.8 0.1) = 18 an hour of 5 minutes; approvals 100 (0.2 0.25 +
    # 0.8 0.5) = 45 an hour of 2 minutes: A = (90 + 90) / 60 = 3 Erlangs over R = 4, rho = 0.75;
    # tau_bar = 60 A / 63 = 20/7 minutes; cs^2 of the mixture (cv 1 and 0.5); W_q = C tau_bar / (R - A) (ca^2 +
    # cs^2) / 2 (Allen-Cunneen)
    out = capacity_outputs(0.5, 0.1, 0.2, 0.25, 0.5, traffic=100.0, esc_share=0.2, reviewers=4, review_minutes=5.0,
                           approval_minutes=2.0, approval_cv=0.5)
    mean, cs2 = _mixture(18, 45, 5, 2, 1, Fraction(1, 2))
    assert mean == Fraction(20, 7)
    c = _erlang_c_exact(Fraction(3), 4)
    assert float(out["handoffs_per_hour"]) == pytest.approx(18.0) and float(out["approvals_per_hour"]) == 45.0
    assert float(out["utilisation"]) == pytest.approx(0.75, rel=1e-14)
    assert float(out["mean_review_minutes"]) == pytest.approx(20 / 7, rel=1e-14)
    assert float(out["review_cv"]) ** 2 == pytest.approx(float(cs2), rel=1e-12)
    assert float(out["p_wait"]) == pytest.approx(float(c), rel=1e-12)
    assert float(out["mean_wait_minutes"]) == pytest.approx(float(c * mean / (4 - 3) * (1 + cs2) / 2), rel=1e-12)
    # no approval review, or reviews of the same time and cv: the queue of the hand-offs alone
    alone = capacity_outputs(0.5, 0.1, 0.2, traffic=100.0, esc_share=0.2, reviewers=2, review_minutes=5.0)
    same = capacity_outputs(0.5, 0.1, 0.2, 0.0, 0.0, traffic=100.0, esc_share=0.2, reviewers=2, review_minutes=5.0,
                            approval_minutes=1.0, approval_cv=3.0)
    assert {k: float(v) for k, v in same.items()} == pytest.approx({k: float(v) for k, v in alone.items()})


# --- what a folder's lines count --------------------------------------------------------------------


def _frame(rows) -> pd.DataFrame:
    columns = ["label", "cause", "approval_requests", "inline_decisions"]
    return pd.DataFrame([dict(zip(columns, row)) for row in rows], columns=columns)


def test_the_approval_reviews_of_each_line():
    frame = _frame([
        ("ESC", "no_handoff", 1, 0),                              # a request without a gated call: 1
        ("ACT", None, 1, 0),                                      # a gated call approved by the request: 1
        ("ACT", None, 0, 2),                                      # two gated calls decided inline: 2
        ("ACT", None, 2, 1),                                      # 2 requests and one inline decision: 3
        ("ACT", "unneeded_approval_request", 2, 0),               # one of the 2 is the hand-off: 1
        ("ESC", None, 0, 0),                                      # gated calls nobody decided: 0
        (None, None, None, None),                                 # no record: 0
    ])
    assert approval_reviews(frame).tolist() == [1, 1, 2, 3, 1, 0, 0]
    assert approval_reviews(frame.drop(columns=["approval_requests"])) is None
    assert approval_reviews(frame.drop(columns=["inline_decisions"])) is None
    assert approval_reviews(frame.assign(approval_requests=None)) is None  # lines written before approvals


def test_the_totals_and_their_draws_carry_the_approval_reviews():
    totals = HandoffTotals(*(np.asarray(x, dtype=np.int64) for x in ([4, 4, 4], [1, 2, 3], [3, 2, 1], [5, 5],
                                                                     [1, 0], [0, 4, 8], [10, 0])))
    assert totals.rates() == pytest.approx((0.5, 0.1, 0.5, 1.0, 1.0))
    e_esc, e_act, p_u, r_esc, r_act = totals.draws(2000, np.random.default_rng(0))
    # r_ESC and e_ESC share their resample: scenario j has (reached, reviews) = (j + 1, 4 j), so in every draw
    # reviews = 4 (reached - n / 4) and r_ESC = 4 e_ESC - 1; likewise r_ACT = 10 e_ACT (ACT scenarios (1, 10), (0, 0))
    assert np.allclose(r_esc, 4 * e_esc - 1) and np.allclose(r_act, 10 * e_act) and r_esc.std() > 0
    assert np.allclose(e_esc + p_u, 1.0)
    inputs = totals.inputs()
    assert inputs["r_esc"] == {"value": 1.0, "reviews": 12, "n": 12, "scenarios": 3, "recorded": True}
    assert inputs["r_act"]["reviews"] == 10 and inputs["r_act"]["n"] == 10


def test_a_folder_without_approval_evidence_counts_none_and_says_so():
    old = HandoffTotals(*(np.asarray(x, dtype=np.int64) for x in ([4, 4], [1, 2], [3, 2], [5, 5], [1, 0])))
    assert not old.approvals_recorded and old.rates()[3:] == (0.0, 0.0)
    report = CapacityModel(old, traffic=100.0, esc_share=0.3, review_minutes=4.0, approval_minutes=1.0).report(2)
    assert NO_APPROVALS in report["notes"] and report["approvals_per_hour"]["value"] == 0.0
    assert report["inputs"]["r_esc"]["recorded"] is False


def test_the_budget_leaves_room_for_the_approval_reviews():
    totals = HandoffTotals(*(np.asarray(x, dtype=np.int64) for x in ([4, 4], [2, 2], [2, 2], [5, 5], [1, 1],
                                                                     [2, 2], [2, 3])))
    model = CapacityModel(totals, traffic=60.0, esc_share=0.5, review_minutes=4.0, approval_minutes=2.0)
    budget = model.budget(3, 0.8)
    # r_ESC = 4/8, r_ACT = 5/10; rho_ESC = 60 0.5 0.5 4 / 180 = 1/3; approvals 60 (0.5 0.5 + 0.5 0.5) = 30 an hour
    # of 2 minutes: rho_P = 1/3;
    # u_ACT = 60 0.5 4 / 180 = 2/3: e_ACT* = (0.8 - 2/3) / (2/3) = 0.2
    assert (budget["esc_utilisation"], budget["approval_utilisation"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert budget["e_act_max"]["value"] == pytest.approx(0.2)
    rho = capacity_outputs(0.5, 0.2, 0.5, 0.5, 0.5, traffic=60.0, esc_share=0.5, reviewers=3, review_minutes=4.0,
                           approval_minutes=2.0)["utilisation"]
    assert float(rho) == pytest.approx(0.8)
    assert budget["within"] is True  # e_ACT 0.2 measured


def test_solve_reviewers_with_approval_reviews_meets_the_wait_exactly():
    rng = np.random.default_rng(11)
    totals = HandoffTotals(*(np.asarray(x, dtype=np.int64) for x in (
        [5] * 40, rng.binomial(5, 0.6, 40), [1] * 40, [5] * 40, rng.binomial(5, 0.1, 40), rng.poisson(3, 40),
        rng.poisson(2, 40))))
    model = CapacityModel(totals, traffic=300.0, esc_share=0.2, review_minutes=6.0, approval_minutes=1.5,
                          approval_cv=0.3, draws=500)
    solution = model.reviewers_for(wait=1.0)
    r, bound = solution["reviewers"], solution["reviewers_interval"]
    assert model.at(r)["mean_wait_minutes"]["value"] <= 1.0 < (model.at(r - 1)["mean_wait_minutes"]["value"]
                                                               or math.inf)
    assert model.at(bound)["mean_wait_minutes"]["ci"][1] <= 1.0 < (model.at(bound - 1)["mean_wait_minutes"]["ci"][1]
                                                                   or math.inf)
    assert bound >= r


# --- the command on a scored folder -----------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund", "waive_fee"], "approval_tools": ["request_approval"],
          "gated_tools": ["waive_fee"]}
ASK = {"name": "request_approval", "covers": ["waive_fee"]}
FEE = {"name": "waive_fee"}


def _record(case: str, label: str, calls: list[dict]) -> dict:
    return {"conversation_id": f"{case}:{label}", "case_id": case, "label": label, "assistant_turns": 2,
            "tool_calls": [{"turn": min(k, 1), **call} for k, call in enumerate(calls)]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("approvals")
    records = []
    for i in range(12):
        records.append(_record(f"c{i}", "ESC", [{"name": "transfer_to_human"}] if i % 3 else [ASK]))
        act = [[ASK, FEE], [FEE], [{**FEE, "approval": {"decision": "granted", "approver": "ann"}}],
               [{"name": "request_approval", "covers": ["issue_refund"]}, {"name": "issue_refund"}]][i % 4]
        records.append(_record(f"c{i}", "ACT", act))
    (tmp / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp / "policy.json").write_text(json.dumps(POLICY))
    score_file(tmp / "records.jsonl", load_policy(tmp / "policy.json"), out_dir=tmp / "scored")
    return tmp / "scored"


def test_the_command_counts_the_folders_approval_reviews(monkeypatch, capsys, folder):
    frame, _ = read_scored(folder)
    assert approval_reviews(frame[frame["evaluated"]]).sum() == 10  # 4 ESC, 6 ACT, as counted below
    lines = [json.loads(line) for line in (folder / "conversations.jsonl").read_text().splitlines() if line]
    # by hand, SPEC 3A: ESC c0, c3, c6, c9 ask without a hand-off (1 review each); ACT i % 4: 0 request + approved
    # call (1), 1 unapproved call (0), 2 approved inline (1), 3 unneeded request, its hand-off (1 - 1 = 0)
    assert [line["approval_requests"] for line in lines if line["label"] == "ACT"][:4] == [1, 0, 0, 1]
    hand = {"r_esc": (4, 12), "r_act": (6, 12), "e_esc": (8, 12), "e_act": (3, 12)}
    code, out, err = run_cli_output(monkeypatch, capsys, "capacity", folder, "--traffic", "120", "--esc-share", "0.25",
                                    "--reviewers", "8", "--review-minutes", "6", "--approval-minutes", "2",
                                    "--approval-cv", "0.5", "--json")
    assert code == 0, err
    data = json.loads(out)
    for name, (count, n) in hand.items():
        entry = data["inputs"][name]
        assert (entry["reviews" if name.startswith("r_") else "reached"], entry["n"]) == (count, n), name
    a_h = Fraction(120) * (Fraction(1, 4) * Fraction(8, 12) + Fraction(3, 4) * Fraction(3, 12))  # 42.5 an hour
    a_p = Fraction(120) * (Fraction(1, 4) * Fraction(4, 12) + Fraction(3, 4) * Fraction(6, 12))  # 55 an hour
    load = (a_h * 6 + a_p * 2) / 60  # 6.083 Erlangs over 8 reviewers
    mean, cs2 = _mixture(a_h, a_p, 6, 2, 1, Fraction(1, 2))
    c = _erlang_c_exact(load, 8)
    assert data["approvals_per_hour"]["value"] == pytest.approx(float(a_p))
    assert data["utilisation"]["value"] == pytest.approx(float(load / 8), rel=1e-12)
    assert data["mean_wait_minutes"]["value"] == pytest.approx(float(c * mean / (8 - load) * (1 + cs2) / 2), rel=1e-12)
    assert NO_APPROVALS not in data["notes"]
    assert data["assumptions"]["approval_minutes"] == 2.0 and data["assumptions"]["approval_cv"] == 0.5
