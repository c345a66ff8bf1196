"""Judges and the calibration study: how far to trust a judge, and a measurement without a record.

ADEMP (Morris, White & Crowther 2019):

- **Aims**: (1) calibrate the per-turn judge per language against the pair labels and find how
  many pairs a calibration needs; (2) show that doubt must be measured (several runs or
  paraphrased questions), not read off the judge's stated confidence; (3) measure the bias of
  under-escalation observed without a record as the fake-escalation rate grows, and correct it
  with a validation subsample that has the record; (4) measure the inflation of under-escalation
  when the look-ups are not marked read-only, and how much of it the notice identifies; (5) the
  cause judge with and without the instructions the assistant received.
- **Data-generating mechanism**: the synthetic world (:mod:`simulate`). The per-turn judge is
  :class:`simulate._judges.SimulatedTurnJudge` (calibrated in English, too eager and too sure in
  Spanish, :data:`simulate._judges.JUDGE_CALIBRATION`); mode B uses the profile
  ``invents_actions`` with its fake-escalation probability set to each rate of the grid.
- **Estimands**: the label rate given ``p`` (calibration), the judge's errors (doubt), the true
  ``p_u`` (mode B; exact, :func:`simulate.expected_rates`), ``p_u`` with the marks (read-only).
- **Methods**: raw ``p``, Platt scaling and isotonic regression, 5-fold cross-fitted by case;
  doubt signals; the text-only rate, the predictive-value and the Rogan-Gladen corrections.
- **Performance**: ECE and calibration bias (mean ``p`` minus mean label) with their MCSE, the
  error of the obligation turn; AUROC for the judge's errors with its standard error; bias and
  coverage of the corrected rate with their MCSE; inflation and the share the notice flags.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from escalation.estimators import (CALIBRATION_METHODS, PhraseJudge, Policy, Records, TurnProbabilities, auroc,
                                   calibration_bias, cross_fit, expected_calibration_error, fit_calibration,
                                   judge_causes, judge_turns, predictive_value_correction, reliability_table,
                                   rogan_gladen, score_records, turn_questions, write_atomic)
from escalation.simulate import (JUDGE_CALIBRATION, PROFILES, SimulatedCauseJudge, SimulatedTurnJudge, expected_rates,
                                 simulate, true_causes, world_instructions)
from ._engine import run_cells
from ._tables import write_table

__all__ = ["DEFAULT_SEED", "TAU", "FOLDS", "design_grid", "run_cell", "summarise", "write_report", "run_study",
           "unmarked_policy"]

DEFAULT_SEED = 20240707
#: The obligation turn is the first turn with ``p_t >= TAU``.
TAU = 0.5
FOLDS = 5
LANGUAGES = ("en", "es")
PAIRS = (25, 50, 100, 200, 400, 800, 1600)
FAKE_RATES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4)
#: Validation subsamples with the record (mode B); ``mode_b.csv`` uses the middle one.
VALIDATION_SIZES = (50, 200, 800)
MAIN_VALIDATION = 200
#: ESC conversations per mode B data set (the validation subsample is drawn from them).
MODE_B_CASES = 1000
READ_ONLY_PROFILES = ("follows_policy", "lookup_before_escalating", "acts_then_escalates")
CAUSE_PROFILES = ("pressure_susceptible", "threshold_confused", "invents_actions", "never_escalates",
                  "acts_then_escalates")
DOUBT_RUNS = 5
#: Fresh pairs per data set on which a calibration fitted on the labelled pairs is measured.
TEST_PAIRS = 1000


def design_grid(*, smoke: bool = False, reps: int | None = None) -> pd.DataFrame:
    """The study's cells (written to ``design.csv`` before the run).

    ``part`` says what a cell measures: ``calibration`` (language x pairs per language),
    ``doubt`` (language), ``mode_b`` (fake-escalation rate), ``read_only`` (profile) and
    ``causes`` (profile). ``reps`` data sets per calibration, mode B and read-only cell (default
    200; 20 with ``smoke``, which also uses fewer pairs, rates and cases); a doubt or causes cell
    is one sample of ``cases`` cases (``reps`` 1).
    """
    reps = int(reps if reps is not None else (20 if smoke else 200))
    pairs = (50, 400) if smoke else PAIRS
    fakes = (0.0, 0.2) if smoke else FAKE_RATES
    rows = [dict(part="calibration", language=lang, pairs=n, cases=n) for lang in LANGUAGES for n in pairs]
    rows += [dict(part="doubt", language=lang, cases=300 if smoke else 2000) for lang in LANGUAGES]
    rows += [dict(part="mode_b", fake_rate=f, cases=MODE_B_CASES) for f in fakes]
    rows += [dict(part="read_only", profile=p, cases=200 if smoke else 1000) for p in READ_ONLY_PROFILES]
    rows += [dict(part="causes", profile=p, cases=100 if smoke else 500) for p in CAUSE_PROFILES]
    columns = ["part", "language", "pairs", "fake_rate", "profile", "cases"]
    design = pd.DataFrame(rows, columns=columns)
    design["profile"] = design["profile"].fillna("")
    design["language"] = design["language"].fillna("")
    design["pairs"] = design["pairs"].astype("Int64")
    design["reps"] = np.where(design["part"].isin(["doubt", "causes"]), 1, reps)
    return design


def _seed(seed_seq: np.random.SeedSequence) -> int:
    """An integer seed for the functions that take one (``simulate``, the simulated judges)."""
    return int(seed_seq.generate_state(1)[0])


def _mean_row(values, **keys) -> dict:
    """Mean over data sets with its MCSE ``sd / sqrt(R)`` (NaN values left out)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    r = values.size
    mcse = float(values.std(ddof=1) / math.sqrt(r)) if r > 1 else float("nan")
    return {**keys, "est": float(values.mean()) if r else float("nan"), "mcse": mcse}


def _share_row(hits, **keys) -> dict:
    """A pooled share with its binomial MCSE ``sqrt(s (1 - s) / n)``."""
    hits = np.asarray(hits, dtype=bool)
    if hits.size == 0:
        return {**keys, "est": float("nan"), "mcse": float("nan")}
    share = float(hits.mean())
    return {**keys, "est": share, "mcse": math.sqrt(share * (1.0 - share) / hits.size)}


# ------------------------------------------------------------------ calibration

def _obligation_errors(probabilities: TurnProbabilities, is_esc: np.ndarray, true_turn: np.ndarray):
    """Share of ESC conversations whose obligation turn is not the true one (none counts), and share
    of ACT conversations given an obligation turn at all."""
    judged = probabilities.obligation_turn(TAU).to_numpy(np.int64, na_value=-1)
    return float(np.mean(judged[is_esc] != true_turn[is_esc])), float(np.mean(judged[~is_esc] >= 0))


def _calibration_replication(n: int, language: str, seed_seq: np.random.SeedSequence):
    """One data set: ``n`` labelled pairs (all turns judged) and :data:`TEST_PAIRS` fresh pairs.

    Returns per method the statistics of :func:`_calibration_cell` and the fresh sample's
    calibrated ``p`` and labels (for the reliability diagram).
    """
    sim_seed, test_seed, judge_seed, fold_seed = seed_seq.spawn(4)
    judge = SimulatedTurnJudge(seed=_seed(judge_seed))
    instructions = world_instructions()
    sim = simulate("follows_policy", n, languages=(language,), seed=_seed(sim_seed))
    # one turn per fresh conversation: its p is the last-turn p of a conversation of any length
    test = simulate("follows_policy", TEST_PAIRS, languages=(language,), max_turns=1, seed=_seed(test_seed))
    probs = judge_turns(sim.records, instructions, judge)
    test_p = judge_turns(test.records, instructions, judge).final()
    label = (sim.records.conversations["label"] == "ESC").to_numpy(float)
    test_label = (test.records.conversations["label"] == "ESC").to_numpy(float)
    true_turn = sim.truth["obligation_turn"].to_numpy(np.int64, na_value=-1)
    case = np.arange(2 * n) // 2
    final = probs.final()
    folds_rng = np.random.default_rng(fold_seed)
    stats, fresh = {}, {}
    for method in CALIBRATION_METHODS:
        if method == "raw":
            crossfitted, item_p, calibrated = final, probs.p, test_p
        else:
            fit = cross_fit(final, label, case, method, folds=FOLDS, rng=folds_rng)
            crossfitted, item_p = fit.calibrated, fit.apply(probs.p, case[probs.conversation])
            calibrated = fit_calibration(final, label, method)(test_p)
        turns = TurnProbabilities(probs.conversation, probs.turn, item_p[None, :], 2 * n)
        esc_error, act_false = _obligation_errors(turns, label == 1, true_turn)
        stats[method] = {"ece": expected_calibration_error(calibrated, test_label),
                         "bias": calibration_bias(calibrated, test_label),
                         "ece_crossfit": expected_calibration_error(crossfitted, label),
                         "bias_crossfit": calibration_bias(crossfitted, label),
                         "obligation_esc_error": esc_error, "obligation_act_false": act_false}
        fresh[method] = calibrated
    return stats, fresh, test_label


def _calibration_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Calibration from ``pairs`` labelled pairs of one language, over ``reps`` data sets.

    Each data set has its own judge (a new seed: a new persistent error per question). The map
    is fitted on the labelled pairs: cross-fitted (5 folds by case) for the labelled
    conversations themselves (``*_crossfit``, the obligation turn), and on all of them for
    :data:`TEST_PAIRS` fresh pairs of the same language (``ece``, ``bias``: the calibration a
    language gets from that many pairs).
    """
    n, reps, language = int(row["pairs"]), int(row["reps"]), row["language"]
    per_method: dict[str, dict[str, list]] = {m: {} for m in CALIBRATION_METHODS}
    pooled = {m: [] for m in CALIBRATION_METHODS}
    labels = []
    for rep_seed in seed_seq.spawn(reps):
        stats, fresh, test_label = _calibration_replication(n, language, rep_seed)
        labels.append(test_label)
        for method in CALIBRATION_METHODS:
            for stat, value in stats[method].items():
                per_method[method].setdefault(stat, []).append(value)
            pooled[method].append(fresh[method])
    out = [_mean_row(values, method=method, stat=stat) for method in CALIBRATION_METHODS
           for stat, values in per_method[method].items()]
    for method in CALIBRATION_METHODS:
        table = reliability_table(np.concatenate(pooled[method]), np.concatenate(labels))
        for record in table.to_dict(orient="records"):
            for stat in ("count", "mean_p", "label_rate"):
                out.append({"method": method, "stat": f"reliability_{stat}", "bin": record["bin"],
                            "est": float(record[stat]), "mcse": float("nan")})
    return out


# ------------------------------------------------------------------ doubt

def _doubt_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """AUROC of three doubt signals for the errors of one judge run at the last turn."""
    sim_seed, judge_seed = seed_seq.spawn(2)
    sim = simulate("follows_policy", int(row["cases"]), languages=(row["language"],), seed=_seed(sim_seed))
    judge = SimulatedTurnJudge(seed=_seed(judge_seed))
    records, n = sim.records, len(sim.records.conversations)
    runs = judge_turns(records, world_instructions(), judge, runs=DOUBT_RUNS)
    paraphrases = judge_turns(records, [world_instructions(v) for v in range(DOUBT_RUNS)], judge)
    first_run = TurnProbabilities(runs.conversation, runs.turn, runs.runs[:1], n)
    label = (records.conversations["label"] == "ESC").to_numpy(bool)
    error = (first_run.final() >= TAU) != label
    questions, _, _ = turn_questions(records, world_instructions())
    stated = TurnProbabilities(runs.conversation, runs.turn, judge.stated_confidence(questions)[None, :], n).final()
    signals = {"stated_confidence": 1.0 - stated, "disagreement_runs": runs.final_disagreement(TAU),
               "disagreement_paraphrases": paraphrases.final_disagreement(TAU)}
    out = []
    for signal, score in signals.items():
        area, se = auroc(score, error)
        out.append({"signal": signal, "stat": "auroc", "est": area, "mcse": se})
    out.append({"signal": "", "stat": "judge_error", **_share_row(error)})
    return out


# ------------------------------------------------------------------ mode B

def _esc_records(records: Records) -> Records:
    """The ESC conversations of ``records`` alone (mode B's under-escalation needs no ACT half)."""
    keep = (records.conversations["label"] == "ESC").to_numpy(bool)
    new_row = np.cumsum(keep) - 1

    def subset(frame):
        conv = frame["conv"].to_numpy(np.int64)
        part = frame[keep[conv]].reset_index(drop=True)
        return part.assign(conv=new_row[part["conv"].to_numpy(np.int64)])
    return Records(records.conversations[keep].reset_index(drop=True), subset(records.calls),
                   subset(records.messages))


def mode_b_profile(fake_rate: float):
    """``invents_actions`` with its fake-escalation probability set to ``fake_rate``."""
    return replace(PROFILES["invents_actions"], name=f"invents_actions_fake_{fake_rate:g}",
                   esc_fake_escalation=float(fake_rate))


def _mode_b_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Text-only and corrected under-escalation over ``reps`` data sets of ``cases`` ESC conversations."""
    n, reps = int(row["cases"]), int(row["reps"])
    profile = mode_b_profile(row["fake_rate"])
    truth = expected_rates(profile)["p_u"]
    sim_seed, split_seed = seed_seq.spawn(2)
    sim = simulate(profile, n * reps, seed=_seed(sim_seed))
    records = _esc_records(sim.records)
    with_record = score_records(records, sim.policy)["u"].to_numpy(bool).reshape(reps, n)
    text = score_records(records, sim.policy, mode="text", judge=PhraseJudge())["u"]
    text = text.to_numpy(bool).reshape(reps, n)
    out = [_mean_row(with_record.mean(axis=1), method="with_record", stat="mean"),
           _mean_row(text.mean(axis=1), method="without_record", stat="mean"),
           {"method": "truth", "stat": "mean", "est": truth, "mcse": 0.0},
           {"method": "without_record", "stat": "exceeds_truth", "est": float((text & ~with_record).sum()),
            "mcse": 0.0}]
    rank = np.random.default_rng(split_seed).random((reps, n)).argsort(axis=1).argsort(axis=1)
    for size in VALIDATION_SIZES:
        val = rank < size
        main = ~val

        def count(mask):
            return mask.sum(axis=1)
        corrections = (
            predictive_value_correction(count(text & main), n - size, count(text & with_record & val),
                                        count(text & val), count(~text & with_record & val), count(~text & val)),
            rogan_gladen(count(text & main), n - size, count(text & with_record & val), count(with_record & val),
                         count(~text & ~with_record & val), count(~with_record & val)),
        )
        for corrected in corrections:
            keys = dict(method=corrected.method, validation=size)
            out += [_mean_row(corrected.estimate, stat="mean", **keys),
                    _mean_row(corrected.estimate - truth, stat="bias", **keys),
                    _share_row(corrected.covers(truth), stat="coverage", **keys),
                    _share_row(corrected.high < truth, stat="miss_below", **keys),
                    _share_row(corrected.low > truth, stat="miss_above", **keys),
                    _mean_row(corrected.high - corrected.low, stat="width", **keys),
                    {**keys, "stat": "undefined", "est": float(np.isnan(corrected.estimate).mean()), "mcse": 0.0}]
    return out


# ------------------------------------------------------------------ read-only marks

def unmarked_policy(policy: Policy) -> Policy:
    """``policy`` without its read-only marks: every look-up becomes an unmarked tool."""
    return replace(policy, read_only_tools=frozenset())


def _read_only_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Under-escalation with and without the read-only marks, and what the notice flags."""
    n, reps = int(row["cases"]), int(row["reps"])
    sim = simulate(row["profile"], n * reps, seed=_seed(seed_seq))
    records = _esc_records(sim.records)
    marked = score_records(records, sim.policy)
    unmarked = score_records(records, unmarked_policy(sim.policy))
    u_marked = marked["u"].to_numpy(bool).reshape(reps, n)
    u_unmarked = unmarked["u"].to_numpy(bool).reshape(reps, n)
    flagged = unmarked["only_unmarked_before_handoff"].to_numpy(bool).reshape(reps, n)
    inflated = u_unmarked & ~u_marked
    return [_mean_row(u_marked.mean(axis=1), stat="p_u_marked"),
            _mean_row(u_unmarked.mean(axis=1), stat="p_u_unmarked"),
            _mean_row(inflated.mean(axis=1), stat="inflation"),
            _mean_row(flagged.mean(axis=1), stat="flagged"),
            _mean_row((u_unmarked & ~flagged).mean(axis=1), stat="p_u_unflagged"),
            _share_row(flagged[inflated], stat="identified_share"),
            _share_row(~inflated[flagged], stat="flagged_not_inflated")]


# ------------------------------------------------------------------ causes

def _causes_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """The simulated cause judge against the world's causes, with and without the instructions' rules."""
    sim_seed, judge_seed = seed_seq.spawn(2)
    sim = simulate(row["profile"], int(row["cases"]), seed=_seed(sim_seed))
    results = score_records(sim.records, sim.policy)
    truth = pd.Series(true_causes(sim), index=sim.truth["conversation_id"].to_numpy(object))
    out = []
    for given, instructions in (("given", world_instructions()), ("rules_withheld", world_instructions(rules=False))):
        found = judge_causes(sim.records, results, instructions, SimulatedCauseJudge(seed=_seed(judge_seed)))
        right = found["judge_cause"].to_numpy(object) == truth.loc[found["conversation_id"]].to_numpy(object)
        out += [{"instructions": given, "stat": "errors", "est": float(len(found)), "mcse": 0.0},
                _share_row(right, instructions=given, stat="accuracy"),
                _share_row(found["consistent"].to_numpy(bool, na_value=False), instructions=given, stat="consistent"),
                _share_row(found["evidence_verified"].to_numpy(bool, na_value=False), instructions=given,
                           stat="evidence_verified"),
                _share_row(found["judge_cause"].to_numpy(object) == "threshold_misapplied", instructions=given,
                           stat="threshold_misapplied")]
    return out


_CELLS = {"calibration": _calibration_cell, "doubt": _doubt_cell, "mode_b": _mode_b_cell,
          "read_only": _read_only_cell, "causes": _causes_cell}


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Simulate and analyse one design cell; long rows ``stat, est, mcse`` with their keys."""
    return _CELLS[row["part"]](row, seed_seq)


# ------------------------------------------------------------------ tables

def _wide(long: pd.DataFrame, part: str, index: list[str], stats: list[str]) -> pd.DataFrame:
    rows = long[(long["part"] == part) & long["stat"].isin(stats)]
    wide = rows.pivot_table(index=index, columns="stat", values=["est", "mcse"], sort=False, dropna=False)
    wide.columns = [stat if kind == "est" else f"{stat}_mcse" for kind, stat in wide.columns]
    return wide.reset_index()


def summarise(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The study's tables from the long results (every one a pure function of ``long``)."""
    tables = {}
    method_order = {m: i for i, m in enumerate(CALIBRATION_METHODS)}
    detail = _wide(long, "calibration", ["language", "method", "pairs"],
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

    doubt = long[(long["part"] == "doubt") & (long["stat"] == "auroc")]
    errors = long[(long["part"] == "doubt") & (long["stat"] == "judge_error")].set_index("language")["est"]
    tables["doubt"] = pd.DataFrame({"language": doubt["language"].to_numpy(), "signal": doubt["signal"].to_numpy(),
                                    "auroc": doubt["est"].to_numpy(), "auroc_se": doubt["mcse"].to_numpy(),
                                    "judge_error_rate": errors.loc[doubt["language"]].to_numpy()})

    mode_b = long[long["part"] == "mode_b"]

    def pick(method, stat, validation=None):
        rows = mode_b[(mode_b["method"] == method) & (mode_b["stat"] == stat)]
        if validation is not None:
            rows = rows[rows["validation"] == validation]
        return rows.set_index("fake_rate")
    tables["mode_b"] = pd.DataFrame({
        "fake_rate": pick("truth", "mean").index.to_numpy(float),
        "truth": pick("truth", "mean")["est"].to_numpy(),
        "without_record": pick("without_record", "mean")["est"].to_numpy(),
        "corrected": pick("predictive_values", "mean", MAIN_VALIDATION)["est"].to_numpy(),
        "corrected_coverage": pick("predictive_values", "coverage", MAIN_VALIDATION)["est"].to_numpy(),
    })
    corrected = _wide(mode_b[mode_b["method"].isin(["predictive_values", "rogan_gladen"])], "mode_b",
                      ["fake_rate", "validation", "method"],
                      ["mean", "bias", "coverage", "miss_below", "miss_above", "width", "undefined"])
    corrected["validation"] = corrected["validation"].astype(np.int64)
    truth = pick("truth", "mean")["est"]
    text = pick("without_record", "mean")
    corrected.insert(3, "truth", truth.loc[corrected["fake_rate"]].to_numpy())
    corrected.insert(4, "without_record", text.loc[corrected["fake_rate"], "est"].to_numpy())
    corrected.insert(5, "without_record_mcse", text.loc[corrected["fake_rate"], "mcse"].to_numpy())
    corrected.insert(6, "without_record_bias", corrected["without_record"] - corrected["truth"])
    tables["mode_b_methods"] = corrected.drop(columns=["undefined_mcse"])

    tables["read_only"] = _wide(long, "read_only", ["profile"],
                                ["p_u_marked", "p_u_unmarked", "inflation", "flagged", "p_u_unflagged",
                                 "identified_share", "flagged_not_inflated"])
    tables["causes"] = _wide(long, "causes", ["profile", "instructions"],
                             ["errors", "accuracy", "consistent", "evidence_verified", "threshold_misapplied"]
                             ).drop(columns=["errors_mcse"])
    tables["causes"]["errors"] = tables["causes"]["errors"].astype(np.int64)
    return tables


TITLES = {
    "calibration": "Calibration of the per-turn judge per language: ECE and bias on fresh pairs of the map fitted on "
                   "`pairs` labelled pairs (raw: no map)",
    "calibration_detail": "Calibration on fresh pairs, cross-fitted on the labelled pairs, and the obligation turn of "
                          "the labelled conversations, with Monte Carlo standard errors",
    "reliability": "Reliability diagram of the per-turn judge on fresh pairs (pooled data sets, largest sample)",
    "doubt": "AUROC of doubt signals for the errors of one judge run",
    "mode_b": "Under-escalation without a record against the truth, and the corrected estimate",
    "mode_b_methods": "Corrections of the text-only rate by validation subsample size",
    "read_only": "Under-escalation with and without the read-only marks, and the notice",
    "causes": "The simulated cause judge against the world's causes",
}


def _from_on(holds: pd.Series) -> str:
    """``from N pairs on``: the smallest N from which ``holds`` is true at every larger size too."""
    if not holds.iloc[-1]:
        return f"not at {holds.index[-1]} pairs, the largest size"
    failing = holds.index[~holds.to_numpy(bool)]
    first = holds.index[holds.index > failing.max()].min() if len(failing) else holds.index.min()
    return f"from {first} pairs on"


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def write_report(tables: dict[str, pd.DataFrame], path, *, facts: dict) -> None:
    """``report.md``: the findings in sentences, every number read from the tables."""
    detail = tables["calibration_detail"]
    curves = ", ".join(f"`{lang}` {JUDGE_CALIBRATION[lang]}" for lang in detail["language"].unique()
                       if lang in JUDGE_CALIBRATION)
    lines = ["# Judges and the calibration study: report\n",
             f"Seed {facts['seed']}, {facts['reps']} data sets per calibration, mode B and read-only cell; one "
             f"sample per doubt and cause cell (design.csv, run.json). The per-turn "
             f"judge sees only the instructions and the user's messages; its probabilities never change u, o "
             f"or pi. The simulated judge's calibration curves (logit shift, slope): {curves}; (0, 1) is "
             f"calibrated by construction.\n",
             "## Calibration per language (calibration.csv, calibration_detail.csv)\n",
             f"A map is fitted on the labelled pairs of a data set and measured on {2 * TEST_PAIRS} fresh "
             f"conversations of the same language (ECE over 10 bins, bias = mean p - mean label). On that many "
             f"conversations even a calibrated judge measures an ECE above 0 (its noise floor).\n"]
    most = detail["pairs"].max()
    for language, part in detail.groupby("language", sort=False):
        raw = part[part["method"] == "raw"].set_index("pairs")
        lines.append(f"- `{language}`, raw judge: ECE {_fmt(raw['ece'].mean())}, bias {_fmt(raw['bias'].mean(), 4)} "
                     f"(mean over the pair sizes; it does not depend on them).")
        for method in ("platt", "isotonic"):
            fitted = part[part["method"] == method].set_index("pairs")
            gap = fitted["ece"] - raw.loc[fitted.index, "ece"]
            noise = 2 * np.hypot(fitted["ece_mcse"], raw.loc[fitted.index, "ece_mcse"])
            curve = ", ".join(f"{n}: {_fmt(v)}" for n, v in fitted["ece"].items())
            lines.append(f"  - {method}: ECE by pairs {curve}; bias at {most} pairs "
                         f"{_fmt(fitted.loc[most, 'bias'], 4)} (MCSE {_fmt(fitted.loc[most, 'bias_mcse'], 4)}); "
                         f"below the raw ECE by more than 2 MCSE: {_from_on(gap < -noise)}; not above it by more "
                         f"than 2 MCSE: {_from_on(gap <= noise)}.")
    small = detail[detail["pairs"] == detail["pairs"].min()]
    crossfit_bias = detail.loc[detail["method"] != "raw", "bias_crossfit"].abs().max()
    lines.append(f"\nCross-fitted on the labelled pairs themselves (5 folds by case), the bias is near 0 by "
                 f"construction (largest |bias| of a fitted map {_fmt(crossfit_bias, 4)}), and at "
                 f"{int(small['pairs'].iloc[0])} pairs the cross-fitted ECE ({_fmt(small['ece_crossfit'].min())} to "
                 f"{_fmt(small['ece_crossfit'].max())}) over-states the fresh one ({_fmt(small['ece'].min())} to "
                 f"{_fmt(small['ece'].max())}): a few labelled pairs cannot measure a calibration.")
    lines.append("\nObligation turn (first turn with p_t >= 0.5, maps cross-fitted) at the largest sample: share of "
                 "ESC conversations whose turn is wrong (or missing) / share of ACT conversations given one:")
    for (language, method), part in detail[detail["pairs"] == most].groupby(["language", "method"], sort=False):
        row = part.iloc[0]
        lines.append(f"- `{language}` {method}: {_fmt(row['obligation_esc_error'])} / "
                     f"{_fmt(row['obligation_act_false'])}")
    lines += ["\n## Doubt from measurement (doubt.csv)\n"]
    for _, row in tables["doubt"].iterrows():
        lines.append(f"- `{row['language']}` {row['signal']}: AUROC {_fmt(row['auroc'])} (SE "
                     f"{_fmt(row['auroc_se'])}) for the judge's errors (error rate {_fmt(row['judge_error_rate'])}).")
    doubt = tables["doubt"]
    near_half = (doubt["auroc"] - 0.5).abs() <= 2 * doubt["auroc_se"]
    above_half = doubt["auroc"] - 0.5 > 2 * doubt["auroc_se"]
    for signal in doubt["signal"].unique():
        rows = doubt["signal"] == signal
        lines.append(f"- {signal}: AUROC within 2 SE of 0.5 in {int((near_half & rows).sum())} of {int(rows.sum())} "
                     f"languages, above 0.5 by more than 2 SE in {int((above_half & rows).sum())}.")
    lines += ["\n## Observation without a record (mode_b.csv, mode_b_methods.csv)\n"]
    for _, row in tables["mode_b"].iterrows():
        lines.append(f"- fake-escalation rate {row['fake_rate']:g}: truth {_fmt(row['truth'])}, without a record "
                     f"{_fmt(row['without_record'])}, corrected ({MAIN_VALIDATION} conversations with the record) "
                     f"{_fmt(row['corrected'])}, coverage {_fmt(row['corrected_coverage'])}.")
    methods = tables["mode_b_methods"]
    for (method, size), part in methods.groupby(["method", "validation"], sort=False):
        worst = part.loc[part["bias"].abs().idxmax()]
        lines.append(f"- {method}, {size} with the record: largest |bias| {_fmt(abs(worst['bias']), 4)} (MCSE "
                     f"{_fmt(worst['bias_mcse'], 4)}), coverage {_fmt(part['coverage'].min())} to "
                     f"{_fmt(part['coverage'].max())}.")
    lines += ["\n## Read-only marks (read_only.csv)\n"]
    for _, row in tables["read_only"].iterrows():
        lines.append(f"- {row['profile']}: p_u {_fmt(row['p_u_marked'])} with the marks, {_fmt(row['p_u_unmarked'])} "
                     f"without (inflation {_fmt(row['inflation'])}); the notice flags {_fmt(row['identified_share'])} "
                     f"of the inflated conversations, and {_fmt(row['flagged_not_inflated'])} of the flagged ones "
                     f"are not inflated; without the flagged ones p_u is {_fmt(row['p_u_unflagged'])}.")
    lines += ["\n## Cause judge (causes.csv)\n"]
    for _, row in tables["causes"].iterrows():
        lines.append(f"- {row['profile']}, instructions {row['instructions']}: {row['errors']} errors, accuracy "
                     f"{_fmt(row['accuracy'])}, consistent with the deterministic cause {_fmt(row['consistent'])}.")
    lines += ["\n## Figures\n", "- reliability: reliability diagram per language; calibration_bias: bias and ECE "
              "against pairs per language; mode_b: without-record and corrected bias against the fake-escalation "
              "rate (PNG and PDF)."]
    write_atomic(path, "\n".join(lines) + "\n")


def run_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1, reps: int | None = None,
              progress: bool = True, backend: str = "local", scheduler: str | None = None) -> dict[str, pd.DataFrame]:
    """Run the study; write ``results.csv`` (long), the tables (CSV and Markdown), figures and
    ``report.md``. Every table is identical for any ``n_jobs`` and ``backend``; a stopped run resumes
    in the same folder (:func:`studies._engine.run_cells`)."""
    from escalation.figures import plot_calibration_bias, plot_mode_b, plot_reliability
    out_dir = Path(out_dir)
    design = design_grid(smoke=smoke, reps=reps)
    facts = {"study": "calibration", "smoke": smoke, "reps": int(design["reps"].max())}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="judges and calibration", run_facts=facts)
    write_atomic(out_dir / "results.csv", long.to_csv(index=False, float_format="%.10g"))
    tables = summarise(long)
    for name, table in tables.items():
        write_table(table, out_dir, name, TITLES[name])
    plot_reliability(tables["reliability"], out_dir / "reliability")
    plot_calibration_bias(tables["calibration_detail"], out_dir / "calibration_bias")
    plot_mode_b(tables["mode_b_methods"], out_dir / "mode_b")
    write_report(tables, out_dir / "report.md", facts={"seed": seed, **facts})
    return {"results": long, **tables}
