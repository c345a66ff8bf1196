"""Reproduce the paper's tables and figures: ``escalation reproduce --out DIR``.

Every number comes from the project's real pipeline: conversations of the synthetic world
(:mod:`simulate`) scored by :func:`estimators.score_records` and aggregated by
:func:`estimators.summarise` (Wilson-Kish intervals, SPEC section 5). Two kinds of simulation run:

- **paper size**: 88 paired cases, one replica (the paper's size; its figures are multiples of
  1/88), one run per profile, reported with its 95% interval whatever it is;
- **expected**: at least 100,000 paired cases per profile, in chunks of :data:`CHUNK_CASES`, to
  estimate each profile's expected value with its Monte Carlo standard error (the outcomes are
  0/1 and the cases independent, so ``MCSE = sqrt(p (1 - p) / n)``), beside the exact
  expectation of :func:`simulate.expected_rates`.

Each run is a design cell of :func:`studies._engine.run_cells`: cell ``i`` simulates with a seed
drawn from child ``i`` of the root ``SeedSequence``, the paper-size cells come first, and every
cell returns integer counts, so the tables are byte-identical for any ``n_jobs``. Mode B (no
record) re-simulates a cell with the same seed, which gives the same behaviours and truth without
the tool record, and scores it with the default phrase judge.

Tables (CSV and Markdown) written to ``DIR``: ``worked_example``, ``worked_example_rates``,
``profiles`` (the output contract: :data:`PROFILES_COLUMNS`), ``rates``, ``profile_parameters``,
``record_vs_text`` (contract: :data:`RECORD_VS_TEXT_COLUMNS`), ``record_vs_text_expected``,
``mutants``, ``base_metric``, ``read_only_mark``; figures ``profiles`` and ``record_vs_text``
(PNG, PDF); ``design.csv`` and ``run.json`` (:func:`studies._engine.run_cells`), ``report.md`` and
``report.html``.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from escalation import __version__
from escalation.estimators.metric import PhraseJudge, load_conformance_set, score_records, summarise
from escalation.estimators.records import Records
from escalation.estimators.stats import DEFAULT_INTERVAL  # the paper's Wilson-Kish: its tables are reproduced
from escalation.simulate import PROFILES, Profile, expected_rates, simulate

from .._constants import EXPECTED_PAIRS, REPRODUCE_SEED as DEFAULT_SEED, SMOKE_EXPECTED_PAIRS
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._mutants import catching_cases
from .._performance import binomial_mcse
from .._report_files import write_reports
from .._tables import markdown_table, write_table
from .._templates import render

__all__ = ["DEFAULT_SEED", "PAPER_CASES", "EXPECTED_PAIRS", "SMOKE_EXPECTED_PAIRS", "CHUNK_CASES",
           "PAPER_PROFILES", "PAPER_TABLE", "PAPER_RECORD_VS_TEXT", "PAPER_WORKED_EXAMPLE", "TOLERANCE",
           "PROFILES_COLUMNS", "RECORD_VS_TEXT_COLUMNS", "TABLE_TITLES", "build_design", "run_cell",
           "build_tables", "report_markdown", "reproduce"]

PAPER_CASES = 88
CHUNK_CASES = 25_000
TOLERANCE = 0.01
CONFIDENCE = 0.95

PAPER_PROFILES = ("follows_policy", "escalates_everything", "never_escalates", "invents_actions")
# Paper, section 8 "Synthetic simulation", the table of p_u and pi per profile.
PAPER_TABLE = {
    "follows_policy": {"p_u": 0.091, "pi": 0.85},
    "escalates_everything": {"p_u": 0.023, "pi": 0.35},
    "never_escalates": {"p_u": 0.909, "pi": 0.09},
    "invents_actions": {"p_u": 0.352, "pi": 0.58},
}
# Paper, section 6 "Observation without a record": the profile that invents actions.
PAPER_RECORD_VS_TEXT = {"invents_actions": {"truth": 0.32, "with_record": 0.32, "without_record": 0.08}}
# Paper, section 7 "Illustrative example": each figure 1/2, 95% Wilson interval (0.09, 0.91).
PAPER_WORKED_EXAMPLE = {"p_u": (0.5, 0.09, 0.91), "p_o": (0.5, 0.09, 0.91), "pi": (0.5, 0.09, 0.91)}

PROFILES_COLUMNS = ("profile", "metric", "paper", "value", "ci_low", "ci_high", "expected", "expected_mcse")
RECORD_VS_TEXT_COLUMNS = ("profile", "truth", "with_record", "without_record")
METRICS = ("p_u", "p_o", "pi")

TABLE_TITLES = {
    "worked_example": "Worked example (paper section 7), scored conversation by conversation",
    "worked_example_rates": "Worked example (paper section 7): rates with 95% Wilson intervals",
    "profiles": "Profile table (paper section 8): 88 paired cases and the expected value",
    "rates": "All three figures per profile, with the exact expectation and the check against the paper",
    "profile_parameters": "Profile parameters that differ from the defaults (simulate.PROFILES)",
    "record_vs_text": "Observation without a record (paper section 6): 88 paired cases",
    "record_vs_text_expected": "Observation without a record: expected values (large run and exact)",
    "mutants": "The implementation errors (SPEC section 9) and the conformance cases that catch them",
    "base_metric": "The base metric beside the strict one",
    "read_only_mark": "A missing read-only mark: p_u with and without the look-up tools in R",
}

# integer counts a cell returns (sums over its conversations or pairs); u_text and o_text only when scored in mode B
_COUNTS = ("n_esc", "n_act", "pairs", "u", "o", "pi", "u_base", "o_base", "pi_base", "truth_u", "truth_o",
           "truth_pi", "u_unmarked", "only_unmarked_esc", "only_unmarked", "unmarked_conversations",
           "u_text", "o_text")


def build_design(*, smoke: bool = False, expected_pairs: int | None = None) -> pd.DataFrame:
    """One row per simulation run: ``profile, run, cases, chunk, text``.

    The paper-size runs of every profile come first (cells ``0 .. len(PROFILES) - 1``, the same
    seeds in a smoke run and a full one), then the expected runs, ``CHUNK_CASES`` cases a cell.
    ``text`` marks the runs also scored without a record (the four profiles of the paper).
    """
    pairs = int(expected_pairs if expected_pairs is not None else SMOKE_EXPECTED_PAIRS if smoke else EXPECTED_PAIRS)
    if pairs < 1:
        raise ValueError(f"expected_pairs must be at least 1, got {pairs}")
    rows = [{"profile": name, "run": "paper", "cases": PAPER_CASES, "chunk": 0, "text": name in PAPER_PROFILES}
            for name in PROFILES]
    sizes = [CHUNK_CASES] * (pairs // CHUNK_CASES) + ([pairs % CHUNK_CASES] if pairs % CHUNK_CASES else [])
    rows += [{"profile": name, "run": "expected", "cases": size, "chunk": j, "text": name in PAPER_PROFILES}
             for name in PROFILES for j, size in enumerate(sizes)]
    return pd.DataFrame(rows)


def _halves(results: pd.DataFrame):
    """ESC and ACT rows of a one-replica run, aligned pair by pair (the simulator orders case, ESC, ACT)."""
    if not results["evaluated"].all():
        raise RuntimeError("a simulated conversation was not evaluated")
    is_esc = (results["label"] == "ESC").to_numpy(bool)
    esc, act = results[is_esc], results[~is_esc]
    if not np.array_equal(esc["case_id"].to_numpy(object), act["case_id"].to_numpy(object)):
        raise RuntimeError("the ESC and ACT conversations of the run are not aligned by case")
    return esc, act


def _counts(truth: pd.DataFrame, marked: pd.DataFrame, unmarked: pd.DataFrame, text: pd.DataFrame | None) -> dict:
    """Integer sums of one run: errors, correct pairs, base-metric counts, notices, truth, mode B (if scored)."""
    esc, act = _halves(marked)
    u, o = esc["u"].to_numpy(np.int64), act["o"].to_numpy(np.int64)
    esc_cause, act_cause = esc["cause"].to_numpy(object), act["cause"].to_numpy(object)
    is_esc = (marked["label"] == "ESC").to_numpy(bool)
    truth_u = truth["u"].to_numpy(np.int64, na_value=0)[is_esc]
    truth_o = truth["o"].to_numpy(np.int64, na_value=0)[~is_esc]
    unmarked_esc, _ = _halves(unmarked)
    counts = {
        "n_esc": len(esc), "n_act": len(act), "pairs": len(esc),
        "u": u.sum(), "o": o.sum(), "pi": ((1 - u) * (1 - o)).sum(),
        "u_base": (esc_cause == "no_handoff").sum(), "o_base": (act_cause == "unneeded_handoff").sum(),
        "pi_base": ((esc_cause != "no_handoff") & (act_cause != "unneeded_handoff")).sum(),
        "truth_u": truth_u.sum(), "truth_o": truth_o.sum(), "truth_pi": ((1 - truth_u) * (1 - truth_o)).sum(),
        "u_unmarked": unmarked_esc["u"].to_numpy(np.int64).sum(),
        "only_unmarked_esc": unmarked_esc["only_unmarked_before_handoff"].sum(),
        "only_unmarked": unmarked["only_unmarked_before_handoff"].sum(),
        "unmarked_conversations": (unmarked["unmarked_tools"].map(len) > 0).sum(),
    }
    if text is not None:
        text_esc, text_act = _halves(text)
        counts["u_text"] = text_esc["u"].to_numpy(np.int64).sum()
        counts["o_text"] = text_act["o"].to_numpy(np.int64).sum()
    return {k: int(v) for k, v in counts.items()}


def _intervals(marked: pd.DataFrame, unmarked: pd.DataFrame, text: pd.DataFrame | None) -> dict:
    """95% Wilson-Kish intervals of a paper-size run, from :func:`estimators.summarise`."""
    strict = summarise(marked, confidence=CONFIDENCE, interval=DEFAULT_INTERVAL)
    halves = {"p_u": strict.under, "p_o": strict.over, "pi": strict.paired,
              "p_u_unmarked": summarise(unmarked, confidence=CONFIDENCE, interval=DEFAULT_INTERVAL).under}
    if text is not None:
        halves["p_u_text"] = summarise(text, confidence=CONFIDENCE, mode="text", interval=DEFAULT_INTERVAL).under
    out = {}
    for name, half in halves.items():
        out[f"{name}_low"], out[f"{name}_high"] = half.ci()
    return out


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Simulate one run, score it with and without the read-only marks (and without a record).

    Returns one dict: the simulation seed, the integer counts of :data:`_COUNTS` and, for a
    paper-size run, the 95% intervals (``*_low``, ``*_high``).
    """
    sim_seed = int(seed_seq.generate_state(1)[0])
    sim = simulate(row["profile"], int(row["cases"]), 1, 0.0, "record", sim_seed)
    marked = score_records(sim.records, sim.policy)
    unmarked = score_records(sim.records, sim.policy.without_read_only_marks())
    text = None
    if row["text"]:
        sim_b = simulate(row["profile"], int(row["cases"]), 1, 0.0, "text", sim_seed)
        if not sim_b.truth["behaviour"].equals(sim.truth["behaviour"]):
            raise RuntimeError("mode B with the same seed drew other behaviours than mode A")
        text = score_records(sim_b.records, sim_b.policy, mode="text", judge=PhraseJudge())
    result = {"simulation_seed": sim_seed, **_counts(sim.truth, marked, unmarked, text)}
    if row["run"] == "paper":
        result.update(_intervals(marked, unmarked, text))
    return [result]


# ---- tables ---------------------------------------------------------------------------------

_DENOMINATOR = {"p_u": "n_esc", "p_o": "n_act", "pi": "pairs"}
_COUNT = {"p_u": "u", "p_o": "o", "pi": "pi"}


def _worked_example() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's section 7 example (the conformance set's ``worked_example``) scored with and without the mark."""
    example = load_conformance_set("worked_example")
    policy = example.policy
    records = Records.from_conversations(example.conversations)
    conversations, rates = [], []
    for name, pol in (("get_order marked read-only", policy), ("get_order unmarked", policy.without_read_only_marks())):
        scored = score_records(records, pol)
        frame = scored[["conversation_id", "case_id", "label", "evaluated", "reason", "u", "o", "cause", "turn",
                        "only_unmarked_before_handoff"]].astype(object)
        frame.insert(0, "policy", name)
        frame["unmarked_tools"] = scored["unmarked_tools"].map(" ".join)
        conversations.append(frame.where(frame.notna(), ""))
        summary = summarise(scored, confidence=CONFIDENCE, interval=DEFAULT_INTERVAL)
        for metric, part in (("p_u", summary.under), ("p_o", summary.over)):
            rates.append({"policy": name, "metric": metric, "count": part.errors, "n": part.n, "value": part.rate,
                          "ci_low": part.ci().low, "ci_high": part.ci().high})
        paired = summary.paired
        rates.append({"policy": name, "metric": "pi", "count": int(round(paired.pi * paired.pairs)),
                      "n": paired.pairs, "value": paired.pi, "ci_low": paired.ci().low,
                      "ci_high": paired.ci().high})
    rates = pd.DataFrame(rates)
    marked = rates["policy"] == "get_order marked read-only"
    for i, column in enumerate(("paper", "paper_ci_low", "paper_ci_high")):
        rates[column] = [PAPER_WORKED_EXAMPLE[m][i] if k else np.nan for m, k in zip(rates["metric"], marked)]
    return pd.concat(conversations, ignore_index=True), rates


def _rates(paper: pd.DataFrame, expected: pd.DataFrame, analytic: dict) -> pd.DataFrame:
    """p_u, p_o and pi of the paper's profiles: this run, expected (large run), exact, paper and the check."""
    rows = []
    for profile in PAPER_PROFILES:
        run, big = paper.loc[profile], expected.loc[profile]
        for metric in METRICS:
            n, count = run[_DENOMINATOR[metric]], run[_COUNT[metric]]
            value = count / n
            exp = big[_COUNT[metric]] / big[_DENOMINATOR[metric]]
            mcse = float(binomial_mcse(exp, big[_DENOMINATOR[metric]]))
            reference = PAPER_TABLE[profile].get(metric, np.nan)
            deviation = exp - reference
            rows.append({"profile": profile, "metric": metric, "paper": reference, "value": value,
                         "ci_low": run[f"{metric}_low"], "ci_high": run[f"{metric}_high"], "expected": exp,
                         "expected_mcse": mcse, "analytic": analytic[profile][metric], "count": int(count),
                         "n": int(n), "expected_n": int(big[_DENOMINATOR[metric]]), "expected_minus_paper": deviation,
                         "within_tolerance": "" if np.isnan(reference) else
                         "yes" if abs(deviation) <= TOLERANCE + 2 * mcse else "no"})
    return pd.DataFrame(rows)


def _profile_parameters() -> pd.DataFrame:
    """Every profile field that differs from the :class:`simulate.Profile` default."""
    defaults = Profile("default", "")
    rows = [{"profile": name, "parameter": f.name, "value": float(getattr(profile, f.name)),
             "default": float(getattr(defaults, f.name))}
            for name, profile in PROFILES.items() for f in fields(Profile)
            if f.name not in ("name", "description") and getattr(profile, f.name) != getattr(defaults, f.name)]
    return pd.DataFrame(rows)


def _record_vs_text(paper: pd.DataFrame) -> pd.DataFrame:
    rows = [{"profile": p, "truth": paper.loc[p, "truth_u"] / paper.loc[p, "n_esc"],
             "with_record": paper.loc[p, "u"] / paper.loc[p, "n_esc"],
             "without_record": paper.loc[p, "u_text"] / paper.loc[p, "n_esc"]} for p in PAPER_PROFILES]
    return pd.DataFrame(rows, columns=list(RECORD_VS_TEXT_COLUMNS))


def _record_vs_text_expected(paper: pd.DataFrame, expected: pd.DataFrame, analytic: dict) -> pd.DataFrame:
    rows = []
    for p in PAPER_PROFILES:
        big, n = expected.loc[p], expected.loc[p, "n_esc"]
        reference = PAPER_RECORD_VS_TEXT.get(p, {})
        truth, without = big["truth_u"] / n, big["u_text"] / n
        rows.append({"profile": p, "paper_truth": reference.get("truth", np.nan),
                     "paper_with_record": reference.get("with_record", np.nan),
                     "paper_without_record": reference.get("without_record", np.nan),
                     "truth": truth, "with_record": big["u"] / n, "without_record": without,
                     "truth_mcse": float(binomial_mcse(truth, n)),
                     "without_record_mcse": float(binomial_mcse(without, n)),
                     "analytic_truth": analytic[p]["p_u"], "analytic_without_record": analytic[p]["p_u_text"],
                     "run_without_low": paper.loc[p, "p_u_text_low"], "run_without_high": paper.loc[p, "p_u_text_high"],
                     "n_esc": int(n)})
    return pd.DataFrame(rows)


def _base_metric(paper: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for p in PROFILES:
        for metric in METRICS:
            n, count = _DENOMINATOR[metric], _COUNT[metric]
            rows.append({"profile": p, "metric": metric,
                         "strict": paper.loc[p, count] / paper.loc[p, n],
                         "base": paper.loc[p, f"{count}_base"] / paper.loc[p, n],
                         "strict_expected": expected.loc[p, count] / expected.loc[p, n],
                         "base_expected": expected.loc[p, f"{count}_base"] / expected.loc[p, n]})
    return pd.DataFrame(rows)


def _read_only_mark(paper: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for p in PROFILES:
        run, big = paper.loc[p], expected.loc[p]
        rows.append({"profile": p, "p_u_marked": run["u"] / run["n_esc"], "ci_low_marked": run["p_u_low"],
                     "ci_high_marked": run["p_u_high"], "p_u_unmarked": run["u_unmarked"] / run["n_esc"],
                     "ci_low_unmarked": run["p_u_unmarked_low"], "ci_high_unmarked": run["p_u_unmarked_high"],
                     "added_errors": int(run["u_unmarked"] - run["u"]),
                     "only_unmarked_before_handoff_esc": int(run["only_unmarked_esc"]),
                     "only_unmarked_before_handoff": int(run["only_unmarked"]),
                     "with_unmarked_tools": int(run["unmarked_conversations"]),
                     "conversations": int(run["n_esc"] + run["n_act"]),
                     "p_u_marked_expected": big["u"] / big["n_esc"],
                     "p_u_unmarked_expected": big["u_unmarked"] / big["n_esc"],
                     "notice_share_expected": big["only_unmarked_esc"] / big["n_esc"]})
    return pd.DataFrame(rows)


def build_tables(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction from the cells' results (:func:`run_cell` rows with the design)."""
    paper = results[results["run"] == "paper"].set_index("profile")
    expected = results[results["run"] == "expected"].groupby("profile", sort=False)[list(_COUNTS)].sum(min_count=1)
    analytic = {p: expected_rates(PROFILES[p]) for p in PAPER_PROFILES}
    worked, worked_rates = _worked_example()
    rates = _rates(paper, expected, analytic)
    profiles = rates[rates["metric"].isin(["p_u", "pi"])][list(PROFILES_COLUMNS)].reset_index(drop=True)
    return {
        "worked_example": worked, "worked_example_rates": worked_rates, "profiles": profiles, "rates": rates,
        "profile_parameters": _profile_parameters(), "record_vs_text": _record_vs_text(paper),
        "record_vs_text_expected": _record_vs_text_expected(paper, expected, analytic),
        "mutants": catching_cases(), "base_metric": _base_metric(paper, expected),
        "read_only_mark": _read_only_mark(paper, expected),
    }


# ---- report ---------------------------------------------------------------------------------

def _multiple_of_88(x: float) -> str:
    k = round(x * PAPER_CASES)
    return f"{k}/{PAPER_CASES} = {k / PAPER_CASES:.3f}"


def report_markdown(tables: dict[str, pd.DataFrame], *, facts: dict) -> str:
    """The text of ``report.md``: one short paragraph per table and figure (``report.md.j2`` beside it),
    every number read from the tables."""
    rates = tables["rates"].set_index(["profile", "metric"])
    rvt = tables["record_vs_text"].set_index("profile")
    rvte = tables["record_vs_text_expected"].set_index("profile")
    base = tables["base_metric"].set_index(["profile", "metric"])
    ro = tables["read_only_mark"].set_index("profile")
    we = tables["worked_example_rates"].set_index(["policy", "metric"])
    worked = {"marked": we.loc["get_order marked read-only"], "unmarked": we.loc["get_order unmarked"]}
    checks = tables["rates"][tables["rates"]["within_tolerance"] != ""]
    return render(
        "reproduction/report.md.j2", facts=facts, PAPER_CASES=PAPER_CASES, TOLERANCE=TOLERANCE, PAPER_TABLE=PAPER_TABLE,
        PAPER_RECORD_VS_TEXT=PAPER_RECORD_VS_TEXT, PROFILES=PROFILES,
        ee="escalates_everything", inv="invents_actions", nev="never_escalates",
        section=lambda name: f"Table `{name}.csv`: {TABLE_TITLES[name]}.\n\n" + markdown_table(tables[name]),
        of_88=_multiple_of_88,
        r=lambda profile, metric, column="value": rates.loc[(profile, metric), column],
        worked=lambda policy, metric, column: worked[policy].loc[metric, column],
        rvt=lambda profile, column: rvt.loc[profile, column],
        rvte=lambda profile, column: rvte.loc[profile, column],
        base=lambda profile, metric, column: base.loc[(profile, metric), column],
        ro=lambda profile, column: ro.loc[profile, column],
        passing=int((checks["within_tolerance"] == "yes").sum()), checked=len(checks),
        largest=checks.loc[checks["expected_minus_paper"].abs().idxmax()],
        caught=int(tables["mutants"]["caught"].sum()), mutants=len(tables["mutants"]),
        notice_explains_all=bool((ro["added_errors"] == ro["only_unmarked_before_handoff_esc"]).all()))


def reproduce(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
              expected_pairs: int | None = None, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False) -> dict[str, pd.DataFrame]:
    """Run the reproduction and write its tables, figures, ``report.md`` and ``report.html`` to ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Output folder (created if missing).
    smoke : bool
        Expected values from :data:`SMOKE_EXPECTED_PAIRS` pairs instead of :data:`EXPECTED_PAIRS`.
    seed : int
        Root seed of :func:`studies._engine.run_cells`.
    n_jobs : int
        joblib workers; the tables do not depend on it.
    expected_pairs : int, optional
        Paired cases per profile of the expected runs (overrides the default size).
    progress : bool
        Show the progress bar of the simulation cells, and a spinner during the steps after them.
    backend, scheduler : str
        Where the cells run (``"local"`` or ``"dask"``, and a Dask scheduler address); a
        stopped run resumes in the same folder (:func:`studies._engine.run_cells`).
    force : bool
        Recompute into a folder that holds an earlier run (its cells and outputs are removed
        first; every other file stays).

    Returns
    -------
    dict of pandas.DataFrame
        The tables, by name (:data:`TABLE_TITLES`), and ``results``: one row per cell.
    """
    from escalation.figures import plot_profiles, plot_record_vs_text

    out_dir = Path(out_dir)
    design = build_design(smoke=smoke, expected_pairs=expected_pairs)
    pairs = int(design.loc[design["run"] == "expected", "cases"].sum() // len(PROFILES))
    facts = {"study": "reproduce", "smoke": smoke, "expected_pairs": pairs, "paper_cases": PAPER_CASES}
    results = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                        backend=backend, scheduler=scheduler, description="simulating and scoring",
                        run_facts=facts, force=force)
    run = orjson.loads((out_dir / "run.json").read_bytes())
    cells_seconds, resumed = run["cells_seconds"], int(run["cells_resumed"])
    with step("scoring the worked example and the implementation errors", progress=progress) as say:
        tables = build_tables(results)
        say("writing the tables")
        written = []
        for name, table in tables.items():
            written += write_table(table, out_dir, name, TABLE_TITLES[name])
        say("drawing the figures")
        written += save_figure(plot_profiles(tables["rates"]), out_dir / "profiles", smoke=smoke)
        written += save_figure(plot_record_vs_text(tables["record_vs_text"], tables["record_vs_text_expected"]),
                               out_dir / "record_vs_text", smoke=smoke)
        say("writing report.md and report.html")
        text = report_markdown(tables, facts={**facts, "seed": seed, "n_jobs": n_jobs, "version": __version__,
                                              "cells_seconds": cells_seconds, "cells": len(design),
                                              "cells_resumed": resumed})
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {**tables, "results": results}
