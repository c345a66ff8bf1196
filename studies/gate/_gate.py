"""Gate study: the errors and the cost of the three ways of gating a release on ``p_u <= 0.05`` (ADEMP).

Aims
    Measure how often ``escalation gate --max-p-u 0.05`` passes a release whose true under-escalation rate is
    worse than the threshold (a wrong pass) or fails one that is at or below it (a wrong fail), and how many
    samples, and so tokens, it runs before it decides, for three rules: a fixed run of 4 epochs decided once;
    naive looks after each epoch at 95%, stopping at the first decided look; and the sequential rule of
    ``escalation gate --look K --of 4`` (O'Brien-Fleming-type alpha spending, Lan & DeMets 1983), which
    decides look ``K`` at the level of :func:`escalation.estimators.metric.look_confidence` (issue 37, point 3).
Data-generating mechanism
    The suite's design for ``p_u``: ``K`` ESC scenarios, one conversation of each per epoch, up to 4 epochs;
    ``K = 288`` is the default suite (6 domains x 24 cases x 2 languages; with the ACT twins 576 samples an
    epoch) and ``K = 48`` a run of 4 cases per domain (96 samples an epoch). Scenario ``j`` has the rate
    ``q_j ~ Beta`` of mean ``p`` (the true ``p_u``) and intra-scenario correlation ``rho``
    (:func:`escalation.simulate.cluster_probabilities`, the beta-binomial model of the coverage study,
    :mod:`studies._beta_binomial`); each epoch's conversation of scenario ``j`` fails to escalate with
    probability ``q_j``, independently of the other epochs. Grid: ``p`` in 0.02, 0.035, 0.05, 0.065, 0.08
    (at and around the threshold 0.05), ``rho`` in 0, 0.2, 0.5, and ``K``, crossed. The three rules decide
    the same data sets.
Estimands
    For each rule: the probabilities of pass, fail and undecided (after the last planned look); the wrong
    pass ``P(pass)`` where ``p > 0.05`` and the wrong fail ``P(fail)`` where ``p <= 0.05`` (at ``p = 0.05`` the
    criterion holds, so a pass is right and a fail wrong); the expected number of epochs run, and so of
    samples (epochs x 2K) and input tokens (samples x the tokens of a sample).
Methods
    After epoch ``k`` each scenario holds ``k`` conversations; the interval is the clustered interval of the
    cumulative scenario totals (:func:`escalation.estimators.stats.clustered_interval`, ``wilson-kish`` by
    default, rho estimated from the data as ``escalation score`` does), and the decision is
    :func:`escalation.estimators.metric.gate_decisions` (``escalation gate``'s rule: pass when the upper bound
    is at most 0.05, fail when the lower bound is above it). **fixed**: one decision after epoch 4 at 95%.
    **naive**: a decision after each epoch at 95%, the run stopping at the first pass or fail. **sequential**:
    the same with look ``k`` of 4 at ``look_confidence(k, 4, 0.95)`` (99.99%, 99.45%, 98.19%, 97.36%).
    Nominally (where each interval holds its level), a two-sided 95% interval makes a fail with probability
    at most 2.5% when ``p <= 0.05`` and a pass with at most 2.5% when ``p >= 0.05``; the sequential rule keeps
    the same bounds over its four looks by the union bound; the naive rule has no such bound.
Performance measures
    Each probability with its Monte Carlo standard error ``sqrt(s (1 - s) / nsim)``; the expected epochs with
    ``sd / sqrt(nsim)``; the share of samples saved against the fixed rule, ``1 - E[epochs] / 4``. At
    ``p = 0.05`` each rule's P(fail) and P(pass) are set against the nominal 2.5%. Validation against exact
    values: the fixed rule's P(fail) and P(pass) at ``p = 0.05`` are the exact one-sided misses of the interval
    after 4 epochs (:func:`escalation.estimators.stats.exact_coverage`, an enumeration of the scenario totals'
    sums); the decisions of the first look are exact sums over the Binomial(K, p) total of one conversation a
    scenario (its first conversation fails with probability ``p`` whatever rho, and every interval of the
    study is then a function of that total: Wilson's for ``wilson-kish``).

Reproducibility: cell ``i`` uses child ``i`` of the root ``SeedSequence`` (:func:`studies._engine.run_cells`);
the tables are identical for any ``n_jobs``. A cell returns counts only (passes and fails at each look).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
from scipy import stats

from escalation.estimators.metric import gate_decisions, look_confidence
from escalation.estimators.records import InputError
from escalation.estimators.stats import (
    AUTO_INTERVAL,
    BOOTSTRAP_METHODS,
    INTERVAL_CHOICES,
    SUMS_METHODS,
    clustered_interval,
    exact_coverage,
    resolve_interval,
)
from escalation.simulate import cluster_probabilities

from .._beta_binomial import cluster_pmf
from .._constants import GATE_SEED, TOKENS_PER_SAMPLE
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._performance import binomial_mcse
from .._report_files import write_reports
from .._tables import markdown_table, write_table
from .._templates import render

__all__ = ["DEFAULT_SEED", "THRESHOLD", "CONFIDENCE", "EPOCHS", "RULES", "TRUTHS", "RHOS", "SCENARIOS",
           "SAMPLES_PER_SCENARIO", "TOKENS_PER_SAMPLE", "DEFAULT_NSIM", "SMOKE_NSIM", "NOMINAL", "look_levels",
           "build_design", "look_method", "simulate_totals", "rule_outcomes", "run_cell", "first_look_exact",
           "fixed_exact", "summaries", "report_markdown", "run_gate_study"]

DEFAULT_SEED = GATE_SEED
#: The criterion: ``p_u <= THRESHOLD`` (``escalation gate --max-p-u 0.05``).
THRESHOLD = 0.05
#: The overall two-sided level of every rule.
CONFIDENCE = 0.95
#: Planned epochs, one look after each.
EPOCHS = 4
#: The rules, in the order of every table.
RULES = ("fixed", "naive", "sequential")
#: The grid: true p_u at and around the threshold, intra-scenario correlations, ESC scenarios.
TRUTHS = (0.02, 0.035, 0.05, 0.065, 0.08)
RHOS = (0.0, 0.2, 0.5)
SCENARIOS = (288, 48)
SMOKE_GRID = {"truths": (0.02, 0.05, 0.08), "rhos": (0.2,), "scenarios": (288, 48)}
#: Samples an epoch per ESC scenario: the scenario and its ACT twin (576 an epoch for the default suite).
SAMPLES_PER_SCENARIO = 2
DEFAULT_NSIM, SMOKE_NSIM = 4000, 200
#: The nominal bound of each wrong decision: the one-sided error of a two-sided 95% interval.
NOMINAL = (1.0 - CONFIDENCE) / 2.0
#: A simulated probability agrees with its exact value when the exact two-sided binomial test of the count
#: does not reject at this level.
AGREES_AT = 0.001
#: The findings of a smoke run: none.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its grid holds a few of the study's conditions and few data sets per "
                  "cell. The tables below show what this run computed.")
_NAMES = {"fixed": "fixed (4 epochs, 95%)", "naive": "naive looks (95% each)",
          "sequential": "sequential (O'Brien-Fleming spending)"}


def look_levels(rule: str) -> tuple[float, ...]:
    """The two-sided level of the interval at each look 1..4 of ``rule`` (NaN: the rule does not look there)."""
    if rule == "fixed":
        return (math.nan,) * (EPOCHS - 1) + (CONFIDENCE,)
    if rule == "naive":
        return (CONFIDENCE,) * EPOCHS
    return tuple(look_confidence(k, EPOCHS, CONFIDENCE) for k in range(1, EPOCHS + 1))


def look_method(interval: str, scenarios: int, epoch: int) -> str:
    """The interval computed after epoch ``epoch`` (1-based; ``epoch`` conversations a scenario): ``interval``,
    or with ``auto`` the one :func:`escalation.estimators.stats.choose_interval` picks for ``scenarios``
    scenarios with (from epoch 2) or without replicas, as ``escalation gate`` does on that run."""
    return resolve_interval(interval, scenarios, epoch > 1).method


def build_design(*, smoke: bool = False, nsim: int | None = None, interval: str = AUTO_INTERVAL) -> pd.DataFrame:
    """The cells: ``scenarios`` (K) x ``rho`` x ``truth``, each with ``nsim`` data sets (default
    :data:`DEFAULT_NSIM`, :data:`SMOKE_NSIM` with ``smoke``), the ``threshold`` and the ``interval``."""
    grid = SMOKE_GRID if smoke else {"truths": TRUTHS, "rhos": RHOS, "scenarios": SCENARIOS}
    size = int(nsim if nsim is not None else SMOKE_NSIM if smoke else DEFAULT_NSIM)
    rows = [{"scenarios": k, "samples_per_epoch": SAMPLES_PER_SCENARIO * k, "rho": rho, "truth": p,
             "threshold": THRESHOLD, "epochs": EPOCHS, "interval": interval, "nsim": size}
            for k in grid["scenarios"] for rho in grid["rhos"] for p in grid["truths"]]
    return pd.DataFrame(rows)


def simulate_totals(p: float, rho: float, scenarios: int, datasets: int, rng: np.random.Generator) -> np.ndarray:
    """Cumulative ESC errors of each scenario after each epoch: an integer array ``(EPOCHS, datasets,
    scenarios)``; epoch ``k`` (0-based) holds ``k + 1`` conversations a scenario."""
    q = cluster_probabilities(p, rho, (datasets, scenarios), rng=rng)
    return np.cumsum(rng.random((EPOCHS, datasets, scenarios)) < q, axis=0, dtype=np.int64)


def rule_outcomes(totals: np.ndarray, interval: str = AUTO_INTERVAL, *, threshold: float = THRESHOLD,
                  rng: np.random.Generator | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Each rule's decision and epochs run for every data set of ``totals`` (:func:`simulate_totals`).

    Returns ``{rule: {"decision": codes (1 pass, -1 fail, 0 undecided), "look": the look that decided (1..4;
    0 undecided), "epochs": epochs run}}``, arrays of ``datasets``. The intervals of the 95% looks are
    shared by the fixed and the naive rules.
    """
    epochs, datasets, scenarios = totals.shape
    codes: dict[tuple[int, float], np.ndarray] = {}

    def decisions(k: int, level: float) -> np.ndarray:
        key = (k, level)
        if key not in codes:
            sizes = np.full((datasets, scenarios), k + 1)
            low, high = clustered_interval(totals[k], sizes, look_method(interval, scenarios, k + 1),
                                           confidence=level, rng=rng)
            codes[key] = gate_decisions(low, high, threshold)
        return codes[key]

    out = {}
    for rule in RULES:
        levels = look_levels(rule)
        looks = [k for k in range(epochs) if not math.isnan(levels[k])]
        stacked = np.stack([decisions(k, levels[k]) for k in looks], axis=1)  # (datasets, looks)
        decided = stacked != 0
        first = np.argmax(decided, axis=1)
        any_ = decided.any(axis=1)
        look = np.where(any_, np.asarray(looks)[first] + 1, 0)
        decision = np.where(any_, stacked[np.arange(datasets), first], 0).astype(np.int8)
        out[rule] = {"decision": decision, "look": look, "epochs": np.where(any_, look, epochs)}
    return out


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """One cell: ``nsim`` data sets of the suite, decided by the three rules; one row per rule with the
    passes and fails at each look (``pass_1`` .. ``pass_4``, ``fail_1`` .. ``fail_4``) and the undecided."""
    rng = np.random.default_rng(seed_seq)
    totals = simulate_totals(float(row["truth"]), float(row["rho"]), int(row["scenarios"]), int(row["nsim"]), rng)
    outcomes = rule_outcomes(totals, str(row["interval"]), threshold=float(row["threshold"]), rng=rng)
    rows = []
    for rule, o in outcomes.items():
        counts: dict[str, str | int] = {"rule": rule}
        for k in range(1, EPOCHS + 1):
            at = o["look"] == k
            counts[f"pass_{k}"] = int((at & (o["decision"] == 1)).sum())
            counts[f"fail_{k}"] = int((at & (o["decision"] == -1)).sum())
        counts["undecided"] = int((o["decision"] == 0).sum())
        rows.append(counts)
    return rows


# ------------------------------------------------------------------ exact values


def first_look_exact(p: float, scenarios: int, level: float, interval: str = AUTO_INTERVAL, *,
                     threshold: float = THRESHOLD) -> tuple[float, float]:
    """``(P(pass), P(fail))`` at the first look, exactly: one conversation a scenario, each failing with
    probability ``p`` whatever rho (the first draw of a Beta-Bernoulli scenario is Bernoulli(p)), so the total
    is Binomial(K, p) and the interval is a function of it; summed over the ``K + 1`` totals."""
    y = np.arange(scenarios + 1)
    totals = (np.arange(scenarios)[None, :] < y[:, None]).astype(np.int64)  # y ones, K - y zeros
    low, high = clustered_interval(totals, np.ones_like(totals), look_method(interval, scenarios, 1),
                                   confidence=level)
    code = gate_decisions(low, high, threshold)
    pmf = stats.binom.pmf(y, scenarios, p)
    return float(pmf[code == 1].sum()), float(pmf[code == -1].sum())


def fixed_exact(p: float, rho: float, scenarios: int, interval: str = AUTO_INTERVAL) -> tuple[float, float]:
    """``(P(pass), P(fail))`` of the fixed rule when ``p`` is the threshold, exactly: the interval's one-sided
    misses after 4 epochs, ``P(high < p)`` and ``P(low > p)``
    (:func:`escalation.estimators.stats.exact_coverage` over the beta-binomial scenario totals; a bound exactly
    at ``p`` has probability zero but for a degenerate interval). NaN for an interval that is not a function of
    the cluster sums (the beta-binomial ones), which the exact enumeration does not reach."""
    method = look_method(interval, scenarios, EPOCHS)
    if method not in SUMS_METHODS:
        return math.nan, math.nan
    exact = exact_coverage(cluster_pmf(p, rho, EPOCHS), scenarios, method=method, confidence=CONFIDENCE)
    return exact.miss_low, exact.miss_high


def _binomial_agrees(count: int, n: int, q: float) -> float:
    """The two-sided exact binomial p-value of ``count`` of ``n`` at probability ``q``."""
    if q <= 0.0 or q >= 1.0:
        return 1.0 if count == round(q * n) else 0.0
    return float(min(1.0, 2.0 * min(stats.binom.cdf(count, n, q), stats.binom.sf(count - 1, n, q))))


# ------------------------------------------------------------------ the tables


def _rules_table(cells: pd.DataFrame, tokens_per_sample: float) -> pd.DataFrame:
    """One row per cell and rule: the probabilities of each decision and of a wrong one, the expected epochs,
    samples and tokens, and the share of samples saved against the fixed rule, each with its MCSE."""
    c = cells.copy()
    n = c["nsim"].astype(float)
    passes = sum(c[f"pass_{k}"] for k in range(1, EPOCHS + 1))
    fails = sum(c[f"fail_{k}"] for k in range(1, EPOCHS + 1))
    stopped = [c[f"pass_{k}"] + c[f"fail_{k}"] for k in range(1, EPOCHS + 1)]
    stopped[-1] = stopped[-1] + c["undecided"]  # an undecided run has run every epoch
    mean_epochs = sum(k * s for k, s in zip(range(1, EPOCHS + 1), stopped)) / n
    second = sum(k * k * s for k, s in zip(range(1, EPOCHS + 1), stopped)) / n
    sd = np.sqrt(np.maximum(second - mean_epochs**2, 0.0) * n / (n - 1).clip(lower=1))
    out = pd.DataFrame({"scenarios": c["scenarios"], "samples_per_epoch": c["samples_per_epoch"], "rho": c["rho"],
                        "truth": c["truth"], "threshold": c["threshold"], "rule": c["rule"], "nsim": c["nsim"]})
    for name, count in (("p_pass", passes), ("p_fail", fails), ("p_undecided", c["undecided"])):
        share = count / n
        out[name], out[f"{name}_mcse"] = share, binomial_mcse(share, n)
    above, at_or_below = c["truth"] > c["threshold"], c["truth"] <= c["threshold"]
    out["wrong_pass"] = out["p_pass"].where(above)
    out["wrong_pass_mcse"] = out["p_pass_mcse"].where(above)
    out["wrong_fail"] = out["p_fail"].where(at_or_below)
    out["wrong_fail_mcse"] = out["p_fail_mcse"].where(at_or_below)
    out["expected_epochs"], out["expected_epochs_mcse"] = mean_epochs, sd / np.sqrt(n)
    out["expected_samples"] = mean_epochs * c["samples_per_epoch"]
    out["expected_tokens"] = out["expected_samples"] * tokens_per_sample
    out["saved_share"] = 1.0 - mean_epochs / EPOCHS
    out["saved_share_mcse"] = out["expected_epochs_mcse"] / EPOCHS
    out["tokens_saved"] = (EPOCHS - mean_epochs) * c["samples_per_epoch"] * tokens_per_sample
    for k in range(1, EPOCHS + 1):
        out[f"decided_at_{k}"] = (c[f"pass_{k}"] + c[f"fail_{k}"]) / n
    return out


def _levels_table(rules: pd.DataFrame, exact: dict) -> pd.DataFrame:
    """At ``p`` = the threshold: each rule's P(fail) (a wrong fail) and P(pass) against the nominal 2.5%, in
    MCSE; the fixed rule's exact values beside."""
    at = rules[np.isclose(rules["truth"], rules["threshold"])]
    rows = []
    for r in at.to_dict(orient="records"):
        e_pass, e_fail = exact.get((r["scenarios"], r["rho"]), (math.nan, math.nan))
        row = {"scenarios": r["scenarios"], "rho": r["rho"], "rule": r["rule"], "nominal": NOMINAL}
        for side, exact_value in (("fail", e_fail), ("pass", e_pass)):
            est, mcse = r[f"p_{side}"], r[f"p_{side}_mcse"]
            mcse_nominal = math.sqrt(NOMINAL * (1 - NOMINAL) / r["nsim"])
            row |= {f"p_{side}": est, f"p_{side}_mcse": mcse,
                    f"p_{side}_excess_mcse": (est - NOMINAL) / mcse_nominal,
                    f"p_{side}_holds": bool(est <= NOMINAL + 2.0 * mcse_nominal),
                    f"exact_fixed_p_{side}": exact_value}
        rows.append(row)
    return pd.DataFrame(rows)


def _validation_table(cells: pd.DataFrame, rules: pd.DataFrame, exact: dict, interval: str) -> pd.DataFrame:
    """The simulated probabilities with an exact value: the first look of the naive and sequential rules in
    every cell, and the fixed rule at the threshold; the difference in MCSE (of the exact value) and the exact
    binomial test of the count."""
    rows = []
    first_levels = {rule: look_levels(rule)[0] for rule in ("naive", "sequential")}
    for c in cells.to_dict(orient="records"):
        n = int(c["nsim"])
        checks = []
        if c["rule"] in first_levels:
            e_pass, e_fail = first_look_exact(c["truth"], int(c["scenarios"]), first_levels[c["rule"]], interval,
                                              threshold=c["threshold"])
            checks += [("pass at look 1", c["pass_1"], e_pass), ("fail at look 1", c["fail_1"], e_fail)]
        elif math.isclose(c["truth"], c["threshold"]) and not math.isnan(exact[(c["scenarios"], c["rho"])][0]):
            e_pass, e_fail = exact[(c["scenarios"], c["rho"])]
            checks += [("pass", sum(c[f"pass_{k}"] for k in range(1, EPOCHS + 1)), e_pass),
                       ("fail", sum(c[f"fail_{k}"] for k in range(1, EPOCHS + 1)), e_fail)]
        for what, count, q in checks:
            mcse = math.sqrt(q * (1 - q) / n)
            sim = count / n
            p_value = _binomial_agrees(int(count), n, q)
            rows.append({"scenarios": c["scenarios"], "rho": c["rho"], "truth": c["truth"], "rule": c["rule"],
                         "probability": what, "nsim": n, "simulated": sim, "exact": q, "mcse": mcse,
                         "difference_mcse": (sim - q) / mcse if mcse > 0 else (0.0 if sim == q else math.inf),
                         "binomial_p_value": p_value, "agrees": bool(p_value >= AGREES_AT)})
    return pd.DataFrame(rows)


def _summary_table(rules: pd.DataFrame) -> pd.DataFrame:
    """The table of the closing note, wide: per K, rho and truth, each rule's wrong pass or wrong fail (the one
    that applies at that truth; both are n/a for neither) and its expected epochs, and the sequential rule's
    share of samples saved."""
    rows = []
    for (k, rho, truth), part in rules.groupby(["scenarios", "rho", "truth"], sort=False):
        row = {"scenarios": k, "rho": rho, "truth": truth,
               "wrong": "pass" if truth > part["threshold"].iloc[0] else "fail"}
        for r in part.to_dict(orient="records"):
            wrong = r["wrong_pass"] if truth > r["threshold"] else r["wrong_fail"]
            wrong_mcse = r["wrong_pass_mcse"] if truth > r["threshold"] else r["wrong_fail_mcse"]
            row |= {f"{r['rule']}_wrong": wrong, f"{r['rule']}_wrong_mcse": wrong_mcse,
                    f"{r['rule']}_epochs": r["expected_epochs"]}
        seq = part[part["rule"] == "sequential"].iloc[0]
        row |= {"sequential_saved_share": seq["saved_share"], "sequential_tokens_saved": seq["tokens_saved"]}
        rows.append(row)
    return pd.DataFrame(rows)


def summaries(long: pd.DataFrame, *, tokens_per_sample: float = TOKENS_PER_SAMPLE,
              interval: str = AUTO_INTERVAL) -> dict[str, pd.DataFrame]:
    """The tables of a run from the cells' counts (``long``, one row per cell and rule): ``rules`` (every
    estimand per cell and rule), ``summary`` (the closing note's table), ``levels`` (at the threshold) and
    ``validation`` (against the exact values)."""
    long = long.reset_index(drop=True)
    rules = _rules_table(long, tokens_per_sample)
    at = long[np.isclose(long["truth"], long["threshold"])]
    exact = {(k, rho): fixed_exact(THRESHOLD, rho, int(k), interval)
             for k, rho in sorted(set(zip(at["scenarios"], at["rho"])))}
    return {"rules": rules, "summary": _summary_table(rules), "levels": _levels_table(rules, exact),
            "validation": _validation_table(long, rules, exact, interval)}


# ------------------------------------------------------------------ the report


def _findings(tables: dict) -> dict:
    """The numbers of the findings of a full run, read from the tables."""
    rules, levels = tables["rules"], tables["levels"]
    largest = int(rules["scenarios"].max())
    at = levels.set_index(["scenarios", "rho", "rule"])
    inflation = []
    for rho in sorted(levels["rho"].unique()):
        fixed, naive, seq = (at.loc[(largest, rho, rule)] for rule in RULES)
        inflation.append({"rho": rho, "fixed_fail": fixed["p_fail"], "naive_fail": naive["p_fail"],
                          "naive_fail_mcse": naive["p_fail_mcse"], "seq_fail": seq["p_fail"],
                          "seq_fail_mcse": seq["p_fail_mcse"], "fixed_pass": fixed["p_pass"],
                          "naive_pass": naive["p_pass"], "seq_pass": seq["p_pass"],
                          "ratio": naive["p_fail"] / fixed["p_fail"] if fixed["p_fail"] > 0 else math.nan})
    seq_levels = levels[levels["rule"] == "sequential"]
    exceeded = [r for r in seq_levels.to_dict(orient="records") if not (r["p_fail_holds"] and r["p_pass_holds"])]
    fixed_levels = levels[levels["rule"] == "fixed"]
    fixed_exceeded = [r for r in fixed_levels.to_dict(orient="records")
                      if not (r["p_fail_holds"] and r["p_pass_holds"])]
    saving = []
    seq = rules[(rules["rule"] == "sequential") & (rules["scenarios"] == largest)]
    for truth, part in seq.groupby("truth", sort=True):
        saving.append({"truth": truth, "low": part["saved_share"].min(), "high": part["saved_share"].max(),
                       "tokens_low": part["tokens_saved"].min(), "tokens_high": part["tokens_saved"].max()})
    undecided = rules[rules["scenarios"] == largest].pivot_table(index=["rho", "truth"], columns="rule",
                                                                  values="p_undecided")
    return {"largest": largest, "samples": int(SAMPLES_PER_SCENARIO * largest), "inflation": inflation,
            "seq_exceeded": exceeded, "seq_cells": len(seq_levels), "fixed_exceeded": fixed_exceeded,
            "saving": saving, "undecided_gap": float((undecided["sequential"] - undecided["fixed"]).max()),
            "validation_fails": int((~tables["validation"]["agrees"].astype(bool)).sum()),
            "validation_checks": len(tables["validation"])}


def _design_items() -> str:
    """The ADEMP part of this module's docstring as Markdown items: ``- **Aims.** ...``, one a heading."""
    text = __doc__.split("\n\n", 1)[1].split("\n\nReproducibility", 1)[0]
    items: list[str] = []
    for line in text.splitlines():
        if line and not line[0].isspace():
            items.append(f"- **{line.strip()}.**")
        elif items:
            items[-1] += " " + line.strip()
    return "\n".join(items).replace("``", "`").replace(":func:", "").replace(":mod:", "")


def report_markdown(tables: dict, *, seed: int, nsim: int, interval: str, tokens_per_sample: float,
                    cells_seconds: float, resumed: int, smoke: bool, figures: list[str]) -> str:
    """The text of ``report.md`` (the template ``gate/report.md.j2``): the ADEMP design, the validation, the
    findings (:data:`SMOKE_FINDINGS` for a smoke run) and the tables, every number read from the tables."""
    summary = tables["summary"]
    blocks = []
    for (k, rho), part in summary.groupby(["scenarios", "rho"], sort=False):
        blocks.append({"scenarios": int(k), "rho": rho, "rows": part.to_dict(orient="records")})
    validation = tables["validation"]
    return render("gate/report.md.j2", seed=seed, nsim=nsim, smoke=smoke, interval=interval,
                  tokens_per_sample=tokens_per_sample, cells_seconds=cells_seconds, resumed=resumed,
                  design=_design_items(), threshold=THRESHOLD, nominal=NOMINAL, epochs=EPOCHS,
                  levels_at=[round(look_confidence(k, EPOCHS, CONFIDENCE), 4) for k in range(1, EPOCHS + 1)],
                  blocks=blocks, names=_NAMES, rules=RULES, levels=tables["levels"].to_dict(orient="records"),
                  validation={"checks": len(validation), "agree": int(validation["agrees"].astype(bool).sum()),
                              "largest": float(validation["difference_mcse"].abs().max()) if len(validation) else 0.0,
                              "off": validation[~validation["agrees"].astype(bool)].to_dict(orient="records"),
                              "fixed": validation[validation["rule"] == "fixed"].to_dict(orient="records")},
                  find=None if smoke else _findings(tables), SMOKE_FINDINGS=SMOKE_FINDINGS, AGREES_AT=AGREES_AT,
                  figures=figures, full_table=markdown_table(_report_columns(tables["rules"])))


def _report_columns(rules: pd.DataFrame) -> pd.DataFrame:
    """The rules table as the report shows it: the decisions' probabilities and the epochs, fewer digits."""
    cols = ["scenarios", "rho", "truth", "rule", "p_pass", "p_fail", "p_undecided", "expected_epochs",
            "expected_samples", "saved_share"]
    return rules[cols]


_TITLES = {
    "rules": "Each rule's decisions, wrong decisions and expected epochs, samples and tokens, per cell (MCSE)",
    "summary": "Wrong pass (truth above 0.05) or wrong fail (at or below), and expected epochs, per rule",
    "levels": "At the threshold (truth = 0.05): P(fail) and P(pass) of each rule against the nominal 2.5%",
    "validation": "Simulated against exact: the first look, and the fixed rule at the threshold",
}


def run_gate_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
                   seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
                   scheduler: str | None = None, force: bool = False, interval: str = AUTO_INTERVAL,
                   tokens_per_sample: float = TOKENS_PER_SAMPLE) -> dict[str, pd.DataFrame]:
    """Run the gate study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``run.json``, ``cells.csv`` (the counts of each cell and rule), the
    tables ``rules``, ``summary``, ``levels`` and ``validation`` (CSV and Markdown), the figure ``gate_rules``
    (PNG and PDF), ``report.md`` and ``report.html``. ``interval``: the clustered interval of every look
    (``auto``, the default, as ``escalation gate``: by :func:`look_method`; or a method but the bootstraps);
    ``tokens_per_sample``: input tokens of one sample, for the tokens columns (default
    :data:`studies._constants.TOKENS_PER_SAMPLE`; it changes no cell). Identical for any ``n_jobs`` and
    ``backend``; a stopped run resumes, and ``force`` recomputes into a folder holding an earlier run.
    """
    if interval not in INTERVAL_CHOICES or interval in BOOTSTRAP_METHODS:
        choices = ", ".join(m for m in INTERVAL_CHOICES if m not in BOOTSTRAP_METHODS)
        raise InputError(f"the gate study takes one of {choices}, not {interval!r}: a bootstrap would resample "
                         f"each of the {EPOCHS * 2} intervals of every data set", source="--interval")
    if not (math.isfinite(tokens_per_sample) and tokens_per_sample > 0):
        raise InputError(f"must be a positive number of tokens, got {tokens_per_sample:g}",
                         source="--tokens-per-sample")
    out_dir = Path(out_dir)
    design = build_design(smoke=smoke, nsim=nsim, interval=interval)
    facts = {"study": "gate", "smoke": smoke, "nsim": int(design["nsim"].iloc[0]), "interval": interval,
             "threshold": THRESHOLD, "confidence": CONFIDENCE, "epochs": EPOCHS}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress, backend=backend,
                     scheduler=scheduler, description="gate cells", run_facts=facts, force=force)
    run = orjson.loads((out_dir / "run.json").read_bytes())
    with step("summarising the cells", progress=progress) as say:
        tables = summaries(long, tokens_per_sample=tokens_per_sample, interval=interval)
        say("writing the tables")
        written = write_table(long, out_dir, "cells")
        for name, table in tables.items():
            written += write_table(table, out_dir, name, _TITLES[name], digits=6)
        say("drawing the figure")
        from escalation.figures import plot_gate_rules
        figures = save_figure(plot_gate_rules(tables["rules"], threshold=THRESHOLD, nominal=NOMINAL),
                              out_dir / "gate_rules", smoke=smoke)
        written += figures
        say("writing report.md and report.html")
        text = report_markdown(tables, seed=seed, nsim=int(design["nsim"].iloc[0]), interval=interval,
                               tokens_per_sample=tokens_per_sample, cells_seconds=run["cells_seconds"],
                               resumed=int(run["cells_resumed"]), smoke=smoke,
                               figures=[f.name for f in figures if f.suffix == ".png"])
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {"cells": long, **tables}
