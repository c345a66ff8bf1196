"""The fast paths of the judges study give the very numbers of the slow ones (issue 18, point 3).

Stacked data sets are the data sets of their seeds; a batch of Platt fits, cross-fits or
calibrations is the fits of its rows one by one; a slice of questions is asked like the batch
it comes from; the simulated judge's log-sum-exp and persistent noise are scipy's and the keyed
hash's, bit for bit.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import escalation.simulate as S
from escalation.estimators.judges import cross_fit, fit_calibration, platt_fit, turn_questions
from escalation.simulate._judges import _ACT_MEANS, _ESC_MEANS, _logsumexp, _unit_normals, ideal_logit


@pytest.mark.parametrize("kwargs", [dict(cases=30, languages=("es",)), dict(cases=2100, replicas=2, rho=0.3),
                                    dict(cases=7, max_turns=1, mode="text")])
def test_stacked_data_sets_are_the_data_sets_of_their_seeds(kwargs):
    seeds = (5, 17)
    stacked = S.simulate("invents_actions", seed=seeds, **kwargs)
    size = 2 * kwargs["cases"] * kwargs.get("replicas", 1)
    assert stacked.seed == seeds and len(stacked) == 2 * size
    for k, seed in enumerate(seeds):
        alone = S.simulate("invents_actions", seed=seed, **kwargs)
        conv = stacked.records.conversations.iloc[k * size:(k + 1) * size].reset_index(drop=True)
        for column in ("conversation_id", "case_id", "scenario_id"):
            assert (conv[column].str.removeprefix(f"{k}/") == alone.records.conversations[column]).all()
        assert conv.drop(columns=["conversation_id", "case_id", "scenario_id"]).equals(
            alone.records.conversations.drop(columns=["conversation_id", "case_id", "scenario_id"]))
        truth = stacked.truth.iloc[k * size:(k + 1) * size].drop(columns=["conversation_id", "scenario"])
        assert truth.reset_index(drop=True).equals(alone.truth.drop(columns=["conversation_id", "scenario"]))
        for name in ("messages", "calls"):
            frame = getattr(stacked.records, name)
            part = frame[(frame["conv"] >= k * size) & (frame["conv"] < (k + 1) * size)].reset_index(drop=True)
            assert part.assign(conv=part["conv"] - k * size).equals(getattr(alone.records, name))


def test_a_sequence_of_seeds_needs_cases_not_scenarios():
    scenarios = S.make_scenarios(3, seed=1)
    with pytest.raises(ValueError, match="give cases, not scenarios"):
        S.simulate("follows_policy", seed=[1, 2], scenarios=scenarios)
    with pytest.raises(ValueError, match="`seed` must be a whole number >= 0; got -2"):
        S.simulate("follows_policy", 3, seed=[1, -2])
    with pytest.raises(ValueError, match="give at least one seed"):
        S.simulate("follows_policy", 3, seed=[])


def test_a_slice_of_questions_is_asked_like_the_questions_of_its_data_set():
    instructions = S.world_instructions()
    stacked = S.simulate("follows_policy", 40, seed=[3, 4])
    questions, conversation, _ = turn_questions(stacked.records, instructions)
    start = np.searchsorted(conversation, 80)
    alone, _, _ = turn_questions(S.simulate("follows_policy", 40, seed=4).records, instructions)
    part = questions[start:]
    for field in ("language", "turn", "message_item", "message_text"):
        np.testing.assert_array_equal(getattr(part, field), getattr(alone, field))
    np.testing.assert_array_equal(S.SimulatedTurnJudge(seed=9).probabilities(part),
                                  S.SimulatedTurnJudge(seed=9).probabilities(alone))
    with pytest.raises(ValueError, match="contiguous range"):
        questions[::2]


def test_batched_platt_fits_and_cross_fits_are_the_fits_of_their_rows():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.01, 0.99, (6, 60))
    y = (rng.random((6, 60)) < p).astype(float)
    batch = platt_fit(p, y)
    for i in range(6):
        np.testing.assert_array_equal(batch[i], platt_fit(p[i], y[i]))
    case = np.arange(60) // 2
    for method in ("raw", "platt", "isotonic"):
        fits = cross_fit(p, y, case, method, folds=5, rng=[np.random.default_rng(i) for i in range(6)])
        maps = fit_calibration(p, y, method)
        for i in range(6):
            one = cross_fit(p[i], y[i], case, method, folds=5, rng=np.random.default_rng(i))
            np.testing.assert_array_equal(fits[i].calibrated, one.calibrated)
            np.testing.assert_array_equal(fits[i].apply(p[i, ::-1], case[::-1]), one.apply(p[i, ::-1], case[::-1]))
            np.testing.assert_array_equal(maps[i](p[i]), fit_calibration(p[i], y[i], method)(p[i]))
    with pytest.raises(ValueError, match="one generator per sample"):
        cross_fit(p, y, case, "platt", rng=[np.random.default_rng(0)])


def test_the_judges_log_sum_exp_is_scipys_bit_for_bit():
    rng = np.random.default_rng(0)
    midpoints = np.r_[(_ESC_MEANS[1:] + _ESC_MEANS[:-1]) / 2, _ESC_MEANS]  # ties of two terms, and a zero term
    score = np.r_[rng.normal(0.0, 3.0, 20000), midpoints, -2.5]
    expected = (logsumexp(-0.5 * (score[:, None] - _ESC_MEANS) ** 2, axis=-1)
                - logsumexp(-0.5 * (score[:, None] - _ACT_MEANS) ** 2, axis=-1))
    np.testing.assert_array_equal(ideal_logit(score), expected)
    tied = rng.normal(size=(200, 7))
    tied[:, 3] = tied[:, 1]
    np.testing.assert_array_equal(_logsumexp(tied.copy()), logsumexp(tied, axis=-1))


def test_the_persistent_noise_is_the_inverse_normal_of_the_keyed_hash():
    texts = ["refund of 600 USD", "hola", ""]
    expected = [norm.ppf((int.from_bytes(hashlib.blake2b(f"7\x1fkey\x1f{text}".encode(), digest_size=8).digest(),
                                         "big") + 0.5) / 2.0**64) for text in texts]
    np.testing.assert_array_equal(_unit_normals("7\x1fkey", texts), expected)
