"""Part 1 of the judges study: calibrate the per-turn judge per language, and how many pairs a calibration needs.

The simulated judge (:class:`escalation.simulate.SimulatedTurnJudge`) is calibrated in English
and too eager and too sure in Spanish. A map (raw ``p``, Platt scaling, isotonic regression) is
fitted on ``pairs`` labelled pairs and measured on :data:`TEST_PAIRS` fresh pairs of the same
language (ECE, calibration bias = mean ``p`` minus mean label, each with its MCSE), and,
cross-fitted on the labelled pairs themselves (5 folds by case), on the obligation turn.
"""
from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from escalation.estimators.judges import (
    CALIBRATION_METHODS,
    Calibration,
    CrossFit,
    TurnProbabilities,
    calibration_bias,
    cross_fit,
    expected_calibration_error,
    fit_calibration,
    reliability_table,
    turn_questions,
)
from escalation.simulate import SimulatedTurnJudge, simulate, world_instructions

from .._performance import mean
from ._common import TAU, int_seed, wide

__all__ = ["FOLDS", "PAIRS", "TEST_PAIRS", "TITLES", "design_rows", "cell", "tables", "report_values"]

FOLDS = 5
LANGUAGES = ("en", "es")
PAIRS = (25, 50, 100, 200, 400, 800, 1600)
#: Fresh pairs per data set on which a calibration fitted on the labelled pairs is measured.
TEST_PAIRS = 1000
#: Data sets simulated together: bounds a cell's memory; the results do not depend on it.
BLOCK = 25

TITLES = {
    "calibration": "Calibration of the per-turn judge per language: ECE and bias on fresh pairs of the map fitted on "
                   "`pairs` labelled pairs (raw: no map)",
    "calibration_detail": "Calibration on fresh pairs, cross-fitted on the labelled pairs, and the obligation turn of "
                          "the labelled conversations, with Monte Carlo standard errors",
    "reliability": "Reliability diagram of the per-turn judge on fresh pairs (pooled data sets, largest sample)",
}


def design_rows(*, smoke: bool) -> list[dict]:
    """One cell per language and number of labelled pairs (two sizes with ``smoke``)."""
    pairs = (50, 400) if smoke else PAIRS
    return [dict(part="calibration", language=lang, pairs=n, cases=n) for lang in LANGUAGES for n in pairs]


def _obligation_errors(probabilities: TurnProbabilities, is_esc: np.ndarray, true_turn: np.ndarray):
    """Share of ESC conversations whose obligation turn is not the true one (none counts), and share
    of ACT conversations given an obligation turn at all."""
    judged = probabilities.obligation_turn(TAU).to_numpy(np.int64, na_value=-1)
    return float(np.mean(judged[is_esc] != true_turn[is_esc])), float(np.mean(judged[~is_esc] >= 0))


def _replications(n: int, language: str, seeds: list[list[np.random.SeedSequence]]):
    """Data sets of ``n`` labelled pairs (all turns judged) and :data:`TEST_PAIRS` fresh pairs,
    one per item of ``seeds`` (its ``[sim, test, judge, fold]`` seeds), simulated together.

    Yields per data set the statistics of :func:`cell` per method, the fresh sample's calibrated
    ``p`` and its labels (for the reliability diagram). A data set's records, judge and folds come
    from its own seeds alone: the stacked simulation (:func:`escalation.simulate.simulate` with a
    sequence of seeds) gives each data set the records its seed gives alone, and each data set's
    judge is asked about its own questions only.
    """
    instructions = world_instructions()
    # the per-turn judge reads no record (mode text leaves out the calls, and changes nothing else)
    sim = simulate("follows_policy", n, mode="text", languages=(language,), seed=[int_seed(s[0]) for s in seeds])
    # one turn per fresh conversation: its p is the last-turn p of a conversation of any length
    test = simulate("follows_policy", TEST_PAIRS, mode="text", languages=(language,), max_turns=1,
                    seed=[int_seed(s[1]) for s in seeds])
    questions, item_conv, item_turn = turn_questions(sim.records, instructions)
    test_questions, test_conv, test_turn = turn_questions(test.records, instructions)
    sets = np.arange(len(seeds) + 1)
    bounds, test_bounds = np.searchsorted(item_conv, sets * 2 * n), np.searchsorted(test_conv, sets * 2 * TEST_PAIRS)
    labels = (sim.records.conversations["label"].to_numpy(object) == "ESC").astype(float).reshape(len(seeds), -1)
    test_labels = (test.records.conversations["label"].to_numpy(object) == "ESC").astype(float).reshape(len(seeds), -1)
    true_turns = sim.truth["obligation_turn"].to_numpy(np.int64, na_value=-1).reshape(len(seeds), 2 * n)
    case = np.arange(2 * n) // 2
    probs, test_ps = [], []
    for k, (_, _, judge_seed, _) in enumerate(seeds):  # each data set's judge: its labelled pairs, then fresh ones
        judge = SimulatedTurnJudge(seed=int_seed(judge_seed))
        lo, hi, test_lo, test_hi = bounds[k], bounds[k + 1], test_bounds[k], test_bounds[k + 1]
        probs.append(TurnProbabilities(item_conv[lo:hi] - k * 2 * n, item_turn[lo:hi],
                                       judge.probabilities(questions[lo:hi])[None, :], 2 * n))
        test_ps.append(TurnProbabilities(test_conv[test_lo:test_hi] - k * 2 * TEST_PAIRS, test_turn[test_lo:test_hi],
                                         judge.probabilities(test_questions[test_lo:test_hi])[None, :],
                                         2 * TEST_PAIRS).final())
    finals = np.stack([prob.final() for prob in probs])
    folds_rngs = [np.random.default_rng(s[3]) for s in seeds]
    # per method, in order, as one data set at a time did: the cross-fits of every data set (each data
    # set's generator deals its Platt folds, then its isotonic ones), then the maps fitted on all its pairs
    # one fit per data set: finals and labels hold a row for each (lists, for 2-D input)
    fitted = {method: (cast(list[CrossFit], cross_fit(finals, labels, case, method, folds=FOLDS, rng=folds_rngs)),
                       cast(list[Calibration], fit_calibration(finals, labels, method)))
              for method in CALIBRATION_METHODS if method != "raw"}
    for k, (prob, test_p) in enumerate(zip(probs, test_ps)):
        label, test_label, true_turn, final = labels[k], test_labels[k], true_turns[k], finals[k]
        stats, fresh = {}, {}
        for method in CALIBRATION_METHODS:
            if method == "raw":
                crossfitted, item_p, calibrated = final, prob.p, test_p
            else:
                fits, maps = fitted[method]
                crossfitted, item_p = fits[k].calibrated, fits[k].apply(prob.p, case[prob.conversation])
                calibrated = maps[k](test_p)
            turns = TurnProbabilities(prob.conversation, prob.turn, item_p[None, :], 2 * n)
            esc_error, act_false = _obligation_errors(turns, label == 1, true_turn)
            stats[method] = {"ece": expected_calibration_error(calibrated, test_label),
                             "bias": calibration_bias(calibrated, test_label),
                             "ece_crossfit": expected_calibration_error(crossfitted, label),
                             "bias_crossfit": calibration_bias(crossfitted, label),
                             "obligation_esc_error": esc_error, "obligation_act_false": act_false}
            fresh[method] = calibrated
        yield stats, fresh, test_label


def cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Calibration from ``pairs`` labelled pairs of one language, over ``reps`` data sets.

    Each data set has its own judge (a new seed: a new persistent error per question). The map
    is fitted on the labelled pairs: cross-fitted (5 folds by case) for the labelled
    conversations themselves (``*_crossfit``, the obligation turn), and on all of them for
    :data:`TEST_PAIRS` fresh pairs of the same language (``ece``, ``bias``: the calibration a
    language gets from that many pairs). The data sets are simulated :data:`BLOCK` at a time.
    """
    n, reps, language = int(row["pairs"]), int(row["reps"]), row["language"]
    per_method: dict[str, dict[str, list]] = {m: {} for m in CALIBRATION_METHODS}
    pooled: dict[str, list[np.ndarray]] = {m: [] for m in CALIBRATION_METHODS}
    labels = []
    seeds = [rep_seed.spawn(4) for rep_seed in seed_seq.spawn(reps)]
    for start in range(0, reps, BLOCK):
        for stats, fresh, test_label in _replications(n, language, seeds[start:start + BLOCK]):
            labels.append(test_label)
            for method in CALIBRATION_METHODS:
                for stat, value in stats[method].items():
                    per_method[method].setdefault(stat, []).append(value)
                pooled[method].append(fresh[method])
    out = [mean(values, method=method, stat=stat) for method in CALIBRATION_METHODS
           for stat, values in per_method[method].items()]
    for method in CALIBRATION_METHODS:
        table = reliability_table(np.concatenate(pooled[method]), np.concatenate(labels))
        for record in table.to_dict(orient="records"):
            for stat in ("count", "mean_p", "label_rate"):
                out.append({"method": method, "stat": f"reliability_{stat}", "bin": record["bin"],
                            "est": float(record[stat]), "mcse": float("nan")})
    return out


def tables(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``calibration``, ``calibration_detail`` and ``reliability`` from the long results."""
    tables = {}
    method_order = {m: i for i, m in enumerate(CALIBRATION_METHODS)}
    detail = wide(long, "calibration", ["language", "method", "pairs"],
                  ["ece", "bias", "ece_crossfit", "bias_crossfit", "obligation_esc_error", "obligation_act_false"])
    detail = detail.sort_values(["language", "method", "pairs"], key=lambda c: c.map(method_order)
                                if c.name == "method" else c, kind="stable").reset_index(drop=True)
    detail["pairs"] = detail["pairs"].astype(np.int64)
    tables["calibration"] = detail[["language", "method", "pairs", "ece", "bias", "bias_mcse"]]
    tables["calibration_detail"] = detail[["language", "method", "pairs", "ece", "ece_mcse", "bias", "bias_mcse",
                                           "ece_crossfit", "ece_crossfit_mcse", "bias_crossfit", "bias_crossfit_mcse",
                                           "obligation_esc_error", "obligation_esc_error_mcse",
                                           "obligation_act_false", "obligation_act_false_mcse"]]
    largest = long.loc[long["part"] == "calibration", "pairs"].max()
    rel = long[(long["part"] == "calibration") & (long["pairs"] == largest)
               & long["stat"].str.startswith("reliability_")]
    rel = rel.pivot_table(index=["language", "method", "bin"], columns="stat", values="est", sort=False,
                          dropna=False).reset_index()
    rel.columns = [c.removeprefix("reliability_") for c in rel.columns]
    rel.insert(2, "pairs", int(largest))
    tables["reliability"] = rel[["language", "method", "pairs", "bin", "count", "mean_p", "label_rate"]]
    return tables


def _from_on(holds: pd.Series) -> dict:
    """Where ``holds`` starts to hold for good: ``first``, the smallest N from which it is true at every
    larger size too (None when it fails at ``largest``, the largest size)."""
    if not holds.iloc[-1]:
        return {"first": None, "largest": holds.index[-1]}
    failing = holds.index[~holds.to_numpy(bool)]
    first = holds.index[holds.index > failing.max()].min() if len(failing) else holds.index.min()
    return {"first": first, "largest": holds.index[-1]}


def _fitted_values(part: pd.DataFrame, raw: pd.DataFrame, method: str, most) -> dict:
    """One fitted map of one language: its ECE by pairs, its bias at ``most`` pairs and where it beats the raw judge."""
    fitted = part[part["method"] == method].set_index("pairs")
    gap = fitted["ece"] - raw.loc[fitted.index, "ece"]
    noise = 2 * np.hypot(fitted["ece_mcse"], raw.loc[fitted.index, "ece_mcse"])
    return {"method": method, "curve": list(fitted["ece"].items()), "bias": fitted.loc[most, "bias"],
            "bias_mcse": fitted.loc[most, "bias_mcse"], "below": _from_on(gap < -noise),
            "not_above": _from_on(gap <= noise)}


def report_values(tables: dict[str, pd.DataFrame]) -> dict:
    """The numbers of the report's section on calibration (``judges/report.md.j2``), read from the tables."""
    detail = tables["calibration_detail"]
    most = detail["pairs"].max()
    languages = []
    for language, part in detail.groupby("language", sort=False):
        raw = part[part["method"] == "raw"].set_index("pairs")
        languages.append({"language": language, "ece": raw["ece"].mean(), "bias": raw["bias"].mean(),
                          "methods": [_fitted_values(part, raw, method, most) for method in ("platt", "isotonic")]})
    small = detail[detail["pairs"] == detail["pairs"].min()]
    obligation = [{"language": language, "method": method, **part.iloc[0].to_dict()}
                  for (language, method), part in detail[detail["pairs"] == most].groupby(["language", "method"],
                                                                                           sort=False)]
    return {"test_conversations": 2 * TEST_PAIRS, "most": most, "languages": languages,
            "crossfit_bias": detail.loc[detail["method"] != "raw", "bias_crossfit"].abs().max(),
            "small_pairs": int(small["pairs"].iloc[0]),
            "small_crossfit": (small["ece_crossfit"].min(), small["ece_crossfit"].max()),
            "small_fresh": (small["ece"].min(), small["ece"].max()),
            # the conclusion only where the numbers show it
            "over": small["ece_crossfit"].min() > small["ece"].max(), "obligation": obligation}
