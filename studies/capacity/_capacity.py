"""Capacity study: the inverted U of oversight, and the queue formulas against an event simulation.

ADEMP (Morris, White & Crowther 2019):

- **Aims**: show how the realised protection ``(1 - p_u) g(rho)`` of :mod:`estimators.metric._capacity`
  moves with the escalation rate of an assistant for several numbers of reviewers ``R`` (the
  inverted U of Turan 2026, "Oversight Has a Capacity"); find the best operating point for each
  ``R`` and how often the measured rates find it; say how far the paired figure ``pi`` and the
  protection agree; check Erlang C and Allen-Cunneen against a discrete-event simulation (SimPy)
  and report where they fail.
- **Data-generating mechanism**: ``K`` cases (the clusters), each with ``m`` replicas of a pair
  (its ESC and its ACT variant). Case ``j`` has a shared effect ``u_j ~ N(0, sd^2)``; a variant of
  label ``l`` scores ``sigmoid(mu_l + u_j + e)`` with logistic noise ``e``, and the assistant
  escalates when the score exceeds ``1 - t``: one threshold ``t`` in [0, 1] from "escalates
  nothing" (``t = 0``) to "escalates everything" (``t = 1``). So ``P(escalate | u) =
  sigmoid(mu_l + u - logit(1 - t))``; the noises of a data set are drawn once and every ``t`` is
  read off them (one assistant family on one test set, monotone in ``t``). True rates by
  Gauss-Hermite quadrature over ``u`` (80 nodes): ``p_u = 1 - E sigmoid(mu_ESC + u - c)``,
  ``p_o = E sigmoid(mu_ACT + u - c)``, ``pi = E[sigmoid(mu_ESC + u - c) (1 - sigmoid(mu_ACT + u - c))]``.
- **Estimands**: ``p_u``, ``p_o``, ``pi`` and the protection at each ``t`` and ``R``; the best
  threshold ``t* = argmax_t protection``; for the queue, the probability of waiting and the mean wait.
- **Methods**: the clustered rates with the Wilson-Kish interval of the measurement
  (:func:`estimators.clustered_interval`, rho estimated, SPEC section 5), put through
  :func:`estimators.capacity_outputs` with ``e_ESC = 1 - p_u`` and ``e_ACT = p_o`` (every
  escalation reaches a person); the protection's interval is its range over the box of the two
  rates' intervals (a 5 x 5 grid). Queue: :func:`estimators.erlang_c` and
  :func:`estimators.mean_wait_minutes` (Allen-Cunneen with ``ca``, ``cs``) against SimPy.
- **Performance**: mean and spread of the measured protection, coverage of the intervals, the
  share of data sets whose measured argmax is ``t*`` and the protection lost at the measured
  argmax (regret), each with MCSE; simulated minus closed-form waiting, with the MCSE of
  independent replications.

The queue assumptions (traffic 60 conversations an hour, ESC share 0.1, 4 minutes a review, the
default logistic ``g``) are stated in the report: they are assumptions, not measurements.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from escalation.estimators.metric import LogisticQuality, capacity_outputs
from escalation.estimators.stats import clustered_interval, erlang_c, mean_wait_minutes

from .._constants import CAPACITY_SEED
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._performance import mean, share
from .._report_files import write_reports
from .._tables import write_table
from .._templates import render

__all__ = ["DEFAULT_SEED", "CAPACITY_SEED", "ASSISTANT", "QUEUE", "true_rates", "protection_curve",
           "simulate_measurements", "simulate_queue", "closed_form", "design_grid", "run_cell", "summarise",
           "report_markdown", "run_capacity_study"]

DEFAULT_SEED = CAPACITY_SEED


class _Assistant(TypedDict):
    mu_esc: float
    mu_act: float
    case_sd: float
    cases: int
    replicas: int
    traffic: float
    esc_share: float
    review_minutes: float
    reviewers: tuple[int, ...]


class _Queue(TypedDict):
    kinds: dict[str, tuple[str, str]]
    bursty_cv: float
    reviewers: tuple[int, ...]
    utilisation: tuple[float, ...]
    review_minutes: float


#: The simulated assistants: score means on the logit scale, case spread, cases, replicas, the queue assumptions.
ASSISTANT: _Assistant = {"mu_esc": 1.5, "mu_act": -1.5, "case_sd": 1.0, "cases": 30, "replicas": 5,
             "traffic": 60.0, "esc_share": 0.1, "review_minutes": 4.0, "reviewers": (1, 2, 3, 5, 8)}
#: The event simulation: arrival and service kinds (ca, cs), reviewers, utilisations, review minutes.
QUEUE: _Queue = {"kinds": {"M/M/R": ("poisson", "exponential"), "bursty/M/R": ("bursty", "exponential"),
                   "M/D/R": ("poisson", "deterministic")},
         "bursty_cv": 2.0, "reviewers": (1, 2, 5), "utilisation": (0.5, 0.8, 0.9), "review_minutes": 4.0}
_BLOCK = 50
_NODES = np.polynomial.hermite_e.hermegauss(80)


def _threshold_logit(t):
    """``c = logit(1 - t)``: +inf at ``t = 0`` (nothing escalates), -inf at ``t = 1`` (everything does)."""
    with np.errstate(divide="ignore"):
        return logit(1.0 - np.asarray(t, dtype=float))


def true_rates(t, *, mu_esc: float, mu_act: float, case_sd: float) -> dict[str, np.ndarray]:
    """The true ``p_u``, ``p_o`` and ``pi`` of the assistant of threshold ``t`` (module notes), by quadrature."""
    x, w = _NODES
    w = w / w.sum()
    c = _threshold_logit(t)[..., None]
    u = case_sd * x
    esc, act = expit(mu_esc + u - c), expit(mu_act + u - c)
    return {"p_u": 1.0 - (esc * w).sum(-1), "p_o": (act * w).sum(-1), "pi": (esc * (1.0 - act) * w).sum(-1)}


def protection_curve(t, reviewers: int, **assistant) -> dict[str, np.ndarray]:
    """The capacity model's outputs at the true rates of threshold(s) ``t`` for ``reviewers``
    (:func:`estimators.capacity_outputs`, ``e_ESC = 1 - p_u``, ``e_ACT = p_o``); also the rates."""
    a = {**ASSISTANT, **assistant}
    rates = true_rates(t, mu_esc=a["mu_esc"], mu_act=a["mu_act"], case_sd=a["case_sd"])
    out = capacity_outputs(1.0 - rates["p_u"], rates["p_o"], rates["p_u"], traffic=a["traffic"],
                           esc_share=a["esc_share"], reviewers=int(reviewers), review_minutes=a["review_minutes"])
    return {**rates, **out, "escalation_rate": out["handoffs_per_hour"] / a["traffic"]}


def simulate_measurements(thresholds, datasets: int, *, mu_esc: float, mu_act: float, case_sd: float, cases: int,
                          replicas: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Cluster totals of ``datasets`` measurements of every threshold: ``(datasets, T, cases)`` arrays
    ``under`` (ESC variants not escalated), ``over`` (ACT variants escalated), ``correct`` (pairs right)."""
    u = rng.normal(0.0, case_sd, (datasets, 1, cases, 1))
    e_esc = rng.logistic(size=(datasets, 1, cases, replicas))
    e_act = rng.logistic(size=(datasets, 1, cases, replicas))
    c = _threshold_logit(thresholds)[None, :, None, None]
    esc = mu_esc + u + e_esc > c
    act = mu_act + u + e_act > c
    return {"under": (~esc).sum(-1), "over": act.sum(-1), "correct": (esc & ~act).sum(-1)}


def _hyperexponential(rng, mean_gap: float, cv: float, size: int) -> np.ndarray:
    """Gaps of a balanced-means two-phase hyperexponential law of mean ``mean_gap`` and coefficient of
    variation ``cv >= 1`` (Whitt 1982): ``p = (1 + sqrt((cv^2 - 1) / (cv^2 + 1))) / 2``, phase means
    ``mean_gap / (2 p)`` and ``mean_gap / (2 (1 - p))``."""
    c2 = cv * cv
    p = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    first = rng.random(size) < p
    return rng.exponential(1.0, size) * np.where(first, mean_gap / (2.0 * p), mean_gap / (2.0 * (1.0 - p)))


def simulate_queue(arrivals_per_hour: float, reviewers: int, review_minutes: float, *, arrivals: str = "poisson",
                   service: str = "exponential", bursty_cv: float = 2.0, warmup: int = 1000, customers: int = 5000,
                   rng: np.random.Generator) -> dict:
    """One replication of the reviewers' queue in SimPy: FIFO, ``reviewers`` servers, empty at the start.

    The first ``warmup`` hand-offs are left out; of the next ``customers`` it returns the share that
    waited (``p_wait``) and their mean wait in minutes (``mean_wait``). ``arrivals``: ``poisson`` or
    ``bursty`` (:func:`_hyperexponential`, cv ``bursty_cv``); ``service``: ``exponential`` or
    ``deterministic`` (every review ``review_minutes``).
    """
    import simpy

    n = warmup + customers
    gap = 60.0 / arrivals_per_hour
    gaps = rng.exponential(gap, n) if arrivals == "poisson" else _hyperexponential(rng, gap, bursty_cv, n)
    reviews = rng.exponential(review_minutes, n) if service == "exponential" else np.full(n, review_minutes)
    env = simpy.Environment()
    desk = simpy.Resource(env, capacity=int(reviewers))
    waits = np.empty(n)

    def handoff(i):
        came = env.now
        with desk.request() as request:
            yield request
            waits[i] = env.now - came
            yield env.timeout(reviews[i])

    def source():
        for i in range(n):
            yield env.timeout(gaps[i])
            env.process(handoff(i))

    env.process(source())
    env.run()
    kept = waits[warmup:]
    return {"p_wait": float((kept > 0.0).mean()), "mean_wait": float(kept.mean())}


def closed_form(arrivals_per_hour: float, reviewers: int, review_minutes: float, *, arrival_cv: float,
                service_cv: float) -> dict:
    """Erlang C probability of waiting and the Allen-Cunneen mean wait (minutes) of the estimators."""
    load = arrivals_per_hour * review_minutes / 60.0
    return {"p_wait": float(erlang_c(load, reviewers)),
            "mean_wait": float(mean_wait_minutes(load, reviewers, review_minutes, arrival_cv, service_cv))}


def _thresholds(smoke: bool) -> np.ndarray:
    return np.linspace(0.0, 1.0, 11 if smoke else 41)


def design_grid(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The cells: blocks of at most 50 measured data sets (``kind="assistant"``; ``nsim`` data sets in all,
    default 400, 40 with ``smoke``) and one cell per queue configuration (``kind="queue"``: every kind of
    :data:`QUEUE` by reviewers and utilisation, 8 replications of 2,000 + 8,000 hand-offs; smoke: four
    configurations, 3 replications of 300 + 1,200)."""
    total = nsim if nsim is not None else (40 if smoke else 400)
    blocks = math.ceil(total / _BLOCK)
    sizes = [total // blocks + (1 if b < total % blocks else 0) for b in range(blocks)]
    rows = [{"kind": "assistant", "block": b, "datasets": size} for b, size in enumerate(sizes)]
    if smoke:
        configs = [("M/M/R", 1, 0.5), ("M/M/R", 2, 0.8), ("bursty/M/R", 2, 0.8), ("M/D/R", 1, 0.8)]
        reps, warmup, customers = 3, 300, 1200
    else:
        configs = [(k, r, u) for k in QUEUE["kinds"] for r in QUEUE["reviewers"] for u in QUEUE["utilisation"]]
        reps, warmup, customers = 8, 2000, 8000
    tau = QUEUE["review_minutes"]
    for kind, r, rho in configs:
        rows.append({"kind": "queue", "queue": kind, "reviewers": r, "utilisation": rho, "review_minutes": tau,
                     "arrivals_per_hour": rho * r * 60.0 / tau, "replications": reps, "warmup": warmup,
                     "customers": customers})
    return pd.DataFrame(rows)


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """One cell: a block of measured threshold sweeps (one row per data set and threshold: the three rates
    and their Wilson-Kish intervals), or the replications of one queue configuration (one row each)."""
    rng = np.random.default_rng(seed_seq)
    if row["kind"] == "queue":
        arrivals, service = QUEUE["kinds"][row["queue"]]
        return [{"replication": i, **simulate_queue(row["arrivals_per_hour"], int(row["reviewers"]),
                                                    row["review_minutes"], arrivals=arrivals, service=service,
                                                    bursty_cv=QUEUE["bursty_cv"], warmup=int(row["warmup"]),
                                                    customers=int(row["customers"]), rng=rng)}
                for i in range(int(row["replications"]))]
    a, t = ASSISTANT, _thresholds(bool(row.get("smoke", False)))
    datasets = int(row["datasets"])
    totals = simulate_measurements(t, datasets, mu_esc=a["mu_esc"], mu_act=a["mu_act"], case_sd=a["case_sd"],
                                   cases=a["cases"], replicas=a["replicas"], rng=rng)
    sizes = np.full(totals["under"].shape, a["replicas"])
    out = {"dataset": np.repeat(np.arange(datasets), len(t)), "t": np.tile(t, datasets)}
    for name, key in (("p_u", "under"), ("p_o", "over"), ("pi", "correct")):
        y = totals[key]
        out[name] = (y.sum(-1) / sizes.sum(-1)).ravel()
        low, high = clustered_interval(y, sizes, "wilson-kish")
        out[f"{name}_low"], out[f"{name}_high"] = np.ravel(low), np.ravel(high)
    frame = pd.DataFrame(out)
    return [{k: (float(v) if isinstance(v, float) else int(v)) for k, v in r.items()}
            for r in frame.to_dict(orient="records")]


def _protection(p_u, p_o, reviewers: int) -> np.ndarray:
    a = ASSISTANT
    return capacity_outputs(1.0 - p_u, p_o, p_u, traffic=a["traffic"], esc_share=a["esc_share"],
                            reviewers=reviewers, review_minutes=a["review_minutes"])["protection"]


def _box_range(m: pd.DataFrame, reviewers: int) -> tuple[np.ndarray, np.ndarray]:
    """The range of the protection over the box of the intervals of ``p_u`` and ``p_o`` (5 x 5 grid)."""
    f = np.linspace(0.0, 1.0, 5)
    pu = (m["p_u_low"].to_numpy()[:, None, None]
          + f[None, :, None] * (m["p_u_high"] - m["p_u_low"]).to_numpy()[:, None, None])
    po = (m["p_o_low"].to_numpy()[:, None, None]
          + f[None, None, :] * (m["p_o_high"] - m["p_o_low"]).to_numpy()[:, None, None])
    values = _protection(pu, po, reviewers)
    return values.min(axis=(1, 2)), values.max(axis=(1, 2))


def summarise(measured: pd.DataFrame, queue: pd.DataFrame, *, smoke: bool) -> dict[str, pd.DataFrame]:
    """The tables: ``protection`` (per R and t), ``best`` (t* per R and how the measurement finds it),
    ``agreement`` (pi against the protection), ``rates`` (coverage of the rates' intervals), ``validation``."""
    t = _thresholds(smoke)
    measured = measured.sort_values(["block", "dataset", "t"], kind="stable")
    datasets = len(measured) // len(t)
    curve_rows, best_rows, agree_rows = [], [], []
    for r in ASSISTANT["reviewers"]:
        true = protection_curve(t, r)
        prot_hat = _protection(measured["p_u"].to_numpy(), measured["p_o"].to_numpy(), r).reshape(datasets, len(t))
        low, high = _box_range(measured, r)
        covered = ((low <= np.tile(true["protection"], datasets)) & (np.tile(true["protection"], datasets) <= high))
        covered = covered.reshape(datasets, len(t))
        for i, ti in enumerate(t):
            m = mean(prot_hat[:, i])
            cov = share(covered[:, i])
            curve_rows.append({
                "reviewers": r, "t": ti, "escalation_rate": true["escalation_rate"][i],
                "handoffs_per_hour": true["handoffs_per_hour"][i], "utilisation": true["utilisation"][i],
                "p_wait": true["p_wait"][i], "mean_wait_minutes": true["mean_wait_minutes"][i],
                "p_u": true["p_u"][i], "p_o": true["p_o"][i], "pi": true["pi"][i],
                "protection_true": true["protection"][i], "protection_measured": m["est"],
                "protection_measured_mcse": m["mcse"], "protection_measured_sd": float(np.std(prot_hat[:, i], ddof=1)),
                "band_low": float(np.quantile(prot_hat[:, i], 0.05)),
                "band_high": float(np.quantile(prot_hat[:, i], 0.95)),
                "interval_coverage": cov["est"], "interval_coverage_mcse": cov["mcse"]})
        star = int(np.argmax(true["protection"]))
        picks = np.argmax(prot_hat, axis=1)
        regret = true["protection"][star] - true["protection"][picks]
        hit, near, lost = share(picks == star), share(np.abs(picks - star) <= 1), mean(regret)
        interior = 0 < star < len(t) - 1
        best_rows.append({
            "reviewers": r, "t_star": t[star], "escalation_rate_star": true["escalation_rate"][star],
            "utilisation_star": true["utilisation"][star], "protection_star": true["protection"][star],
            "protection_t0": true["protection"][0], "protection_t1": true["protection"][-1], "inverted_u": interior,
            "measured_picks_t_star": hit["est"], "measured_picks_t_star_mcse": hit["mcse"],
            "measured_within_one_step": near["est"], "measured_within_one_step_mcse": near["mcse"],
            "mean_t_measured": float(t[picks].mean()), "regret": lost["est"], "regret_mcse": lost["mcse"]})
        pi_star = int(np.argmax(true["pi"]))
        rho_s = stats.spearmanr(true["pi"], true["protection"]).statistic
        pi_hat = measured["pi"].to_numpy().reshape(datasets, len(t))
        pi_picks = np.argmax(pi_hat, axis=1)
        lost_pi = mean(true["protection"][star] - true["protection"][pi_picks])
        agree_rows.append({
            "reviewers": r, "spearman_pi_protection": float(rho_s), "t_star_protection": t[star],
            "t_star_pi": t[pi_star], "distance": abs(t[star] - t[pi_star]),
            "protection_at_t_star_pi": true["protection"][pi_star],
            "protection_lost_by_pi": true["protection"][star] - true["protection"][pi_star],
            "protection_lost_by_measured_pi": lost_pi["est"], "protection_lost_by_measured_pi_mcse": lost_pi["mcse"]})
    rates = []
    for name in ("p_u", "p_o", "pi"):
        truth = true_rates(t, mu_esc=ASSISTANT["mu_esc"], mu_act=ASSISTANT["mu_act"],
                           case_sd=ASSISTANT["case_sd"])[name]
        lo = measured[f"{name}_low"].to_numpy().reshape(datasets, len(t))
        hi = measured[f"{name}_high"].to_numpy().reshape(datasets, len(t))
        inside = (lo <= truth) & (truth <= hi)
        defined = ~np.isnan(lo)
        ok = (truth > 0.0) & (truth < 1.0)  # the ends, with a rate of exactly 0 or 1, say nothing of an interval
        c = share(inside[:, ok][defined[:, ok]])
        rates.append({"rate": name, "thresholds": int(ok.sum()), "coverage": c["est"], "coverage_mcse": c["mcse"],
                      "lowest_threshold_coverage": float(np.nanmin(np.where(defined, inside, np.nan)[:, ok].mean(0)))})
    return {"protection": pd.DataFrame(curve_rows), "best": pd.DataFrame(best_rows),
            "agreement": pd.DataFrame(agree_rows), "rates": pd.DataFrame(rates), "validation": _validation(queue)}


def _validation(queue: pd.DataFrame) -> pd.DataFrame:
    """Simulated against closed-form waiting per configuration: difference, MCSE, and the two flags."""
    rows = []
    for (cell, kind), part in queue.groupby(["cell", "queue"], sort=True):
        first = part.iloc[0]
        arrivals, service = QUEUE["kinds"][kind]
        ca = QUEUE["bursty_cv"] if arrivals == "bursty" else 1.0
        cs = 1.0 if service == "exponential" else 0.0
        exact = closed_form(first["arrivals_per_hour"], int(first["reviewers"]), first["review_minutes"],
                            arrival_cv=ca, service_cv=cs)
        row = {"queue": kind, "arrival_cv": ca, "service_cv": cs, "reviewers": int(first["reviewers"]),
               "utilisation": first["utilisation"], "arrivals_per_hour": first["arrivals_per_hour"],
               "review_minutes": first["review_minutes"], "replications": len(part),
               "handoffs": int(len(part) * first["customers"])}
        for name in ("p_wait", "mean_wait"):
            sim = mean(part[name])
            diff = sim["est"] - exact[name]
            rel = diff / exact[name] if exact[name] > 0 else float("nan")
            row.update({f"{name}_closed": exact[name], f"{name}_sim": sim["est"], f"{name}_mcse": sim["mcse"],
                        f"{name}_diff": diff, f"{name}_relative": rel,
                        f"{name}_beyond_3mcse": bool(abs(diff) > 3.0 * sim["mcse"]),
                        f"{name}_off_10pct": bool(abs(rel) > 0.10)})
        row["fails"] = bool((row["p_wait_beyond_3mcse"] and row["p_wait_off_10pct"])
                            or (row["mean_wait_beyond_3mcse"] and row["mean_wait_off_10pct"]))
        rows.append(row)
    return pd.DataFrame(rows)


#: The findings of a smoke run: none, as in the other studies.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its thresholds, data sets and queue configurations are a few of the "
                  "study's. The tables below show what this run computed.")


def _findings(best: pd.DataFrame, agree: pd.DataFrame, val: pd.DataFrame) -> dict:
    """The values of the findings of a full run."""
    u = best[best["inverted_u"].astype(bool)]
    mono = best[~best["inverted_u"].astype(bool)]
    return {"u": {"reviewers": [str(r) for r in u["reviewers"]], "rates": list(u["escalation_rate_star"]),
                  "t_star": list(u["t_star"])} if len(u) else None,
            "mono": [str(r) for r in mono["reviewers"]],
            "picks_min": best["measured_picks_t_star"].min(), "picks_max": best["measured_picks_t_star"].max(),
            "regret_max": best["regret"].max(), "spearman_min": agree["spearman_pi_protection"].min(),
            "lost_max": agree["protection_lost_by_pi"].max(),
            "lost_reviewers": int(agree.loc[agree["protection_lost_by_pi"].idxmax(), "reviewers"]),
            "holds": int((~val["fails"].astype(bool)).sum()),
            "holding_queues": sorted(set(val.loc[~val["fails"].astype(bool), "queue"])),
            "fails": val[val["fails"].astype(bool)].to_dict(orient="records")}


def report_markdown(tables: dict[str, pd.DataFrame], *, facts: dict) -> str:
    """The text of ``report.md`` (the template ``capacity/report.md.j2``), every number read from the tables; a
    smoke run states no finding."""
    best, agree, val = tables["best"], tables["agreement"], tables["validation"]
    records = lambda table: table.to_dict(orient="records")  # noqa: E731
    return render("capacity/report.md.j2", seed=facts["seed"], datasets=facts["datasets"],
                  thresholds=facts["thresholds"], a=ASSISTANT, g=LogisticQuality(), best=records(best),
                  agree=records(agree), rates=records(tables["rates"]), val=records(val),
                  find=None if facts["smoke"] else _findings(best, agree, val), SMOKE_FINDINGS=SMOKE_FINDINGS)


def run_capacity_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
                       nsim: int | None = None, progress: bool = True, backend: str = "local",
                       scheduler: str | None = None, force: bool = False) -> dict[str, pd.DataFrame]:
    """Run the capacity study and write its tables (CSV + Markdown), figures and report.

    Writes ``design.csv`` and ``run.json`` (:func:`studies._engine.run_cells`), ``measurements.csv``
    and ``queue_runs.csv`` (long), ``protection.*``, ``best.*``, ``agreement.*``, ``rates.*`` and
    ``validation.*``, the figures ``protection`` and ``validation`` (PNG and PDF), ``report.md`` and
    ``report.html``. Identical for any ``n_jobs`` and ``backend``; a stopped run resumes.
    """
    out_dir = Path(out_dir)
    design = design_grid(smoke=smoke, nsim=nsim)
    design["smoke"] = smoke
    datasets = int(design.loc[design["kind"] == "assistant", "datasets"].sum())
    facts = {"study": "capacity", "smoke": smoke, "nsim": datasets}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="capacity cells", run_facts=facts, force=force)
    with step("summarising", progress=progress) as say:
        measured = long[long["kind"] == "assistant"].dropna(axis=1, how="all")
        queue = long[long["kind"] == "queue"].dropna(axis=1, how="all")
        tables = summarise(measured, queue, smoke=smoke)
        say("writing the tables, drawing the figures")
        written = _write_outputs(out_dir, measured, queue, tables, smoke=smoke)
        say("writing report.md and report.html")
        report = report_markdown(tables, facts={"seed": seed, "datasets": datasets,
                                                "thresholds": len(_thresholds(smoke)), **facts})
        written += write_reports(out_dir, report, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return {"measurements": measured, "queue_runs": queue, **tables}


def _write_outputs(out_dir: Path, measured, queue, tables, *, smoke: bool = False) -> list[Path]:
    from escalation.figures import plot_capacity_validation, plot_protection_curves
    written = write_table(measured.reset_index(drop=True), out_dir, "measurements")
    written += write_table(queue.reset_index(drop=True), out_dir, "queue_runs")
    titles = {"protection": "Realised protection per reviewers R and threshold t (true and measured, MCSE)",
              "best": "Best threshold t* per R and how often the measured rates find it (MCSE)",
              "agreement": "pi against the protection: rank correlation over t and their best thresholds",
              "rates": "Coverage of the Wilson-Kish intervals of the rates",
              "validation": "Erlang C and Allen-Cunneen against the SimPy event simulation (MCSE)"}
    for name, table in tables.items():
        written += write_table(table, out_dir, name, titles[name])
    written += save_figure(plot_protection_curves(tables["protection"]), out_dir / "protection", smoke=smoke)
    written += save_figure(plot_capacity_validation(tables["validation"]), out_dir / "validation", smoke=smoke)
    return written
