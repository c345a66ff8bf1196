"""Sample-size study: do the plans of :mod:`estimators.stats._planning` deliver what they promise?

ADEMP (Morris, White & Crowther 2019):

- **Aims**: check that a plan's scenarios give the planned half-width and the nominal
  coverage, with equal and with unequal scenario sizes; that every test the planner plans for
  holds its level (size) with few and with many scenarios and reaches the planned power; show
  how ``K`` moves with ``p``, ``rho``, ``m`` and the spread of the sizes, and that replicas
  cannot take ``K`` below the floor.
- **Data-generating mechanism**: the plain beta-binomial model (not the synthetic world):
  scenario rates ``theta_j ~ Beta(p (1-rho)/rho, (1-p)(1-rho)/rho)`` (``theta_j = p`` when
  ``rho = 0``), ``y_j ~ Binomial(n_j, theta_j)``, for ``K`` scenarios planned by the planner
  (or fixed, for the size of the tests). Sizes ``n_j = m`` when ``size_cv = 0``, else
  ``n_j = 1 + NegativeBinomial`` with mean ``m`` and coefficient of variation ``size_cv``, drawn
  afresh for every data set (:func:`draw_sizes`). The paired figure's plans draw the pair
  outcomes of a case the same way (the case is the cluster). Two assistants on the same
  scenarios have rates with correlation ``r``: with probability ``c = r / r_max`` the second
  rate is the comonotone (countermonotone if ``r < 0``) transform of the first, else
  independent, where ``r_max`` is the correlation of the comonotone pair, so the Pearson
  correlation is exactly ``r``; they share the scenario sizes. The size of the tests is
  measured under ``p_a = p_b = p`` with the same mechanism.
- **Estimands**: the rate ``p`` (or ``pi``); the difference ``p_b - p_a`` for the tests.
- **Methods**: the interval the plan is made for, ``wilson-kish`` or ``wilson-kish-t``
  (:func:`estimators.clustered_interval`), with rho estimated as SPEC section 5 says (ANOVA,
  ``rho_used = 1`` where undefined, ``m_bar = sum n_j^2 / N``) and with the planned (true)
  rho; with unequal sizes also the true rho with ``m_bar = N / k`` (the rule before
  2026-12-01). Tests at level ``alpha`` (:func:`difference_statistics`): ``paired_z`` and
  ``paired_t`` on the scenario differences, ``cluster_z`` and ``cluster_t`` on the two
  assistants' scenario rates, ``donner_klar`` and ``donner_klar_t`` (Wald with each
  assistant's design effect, SPEC section 5).
- **Performance**: coverage, misses below and above, median and mean half-width, rejection
  rate under the null (size) and under the planned alternative (power); each with its Monte
  Carlo standard error; beside the coverage, the exact coverage of both interval methods
  where the sizes are equal (:mod:`estimators.stats._exact`, no Monte Carlo error).
- **Checks**: median half-width <= h; coverage >= nominal - 2 MCSE; size within
  ``alpha +- 2 MCSE``; power of the test a plan is made for >= target - 2 MCSE.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import integrate, stats
from scipy.special import betainc, betaincinv

from escalation.estimators.stats import (cluster_design, clustered_interval, critical_value, exact_coverage,
    plan_difference, plan_interval, plan_paired_figure, wilson_kish_interval, z_value)
from escalation.simulate import cluster_probabilities
from ._beta_binomial import beta_shape, cluster_pmf
from ._constants import SAMPLE_SIZE_SEED as DEFAULT_SEED
from ._engine import record_outputs, run_cells, step
from ._figure_files import save_figure
from ._performance import interval_rows, mean, median, share
from ._report_files import write_reports
from ._tables import write_table

__all__ = ["DEFAULT_SEED", "SIZE_REPLICATIONS", "TESTS", "PLANNED_TESTS", "report_markdown", "draw_cluster_totals",
           "draw_sizes", "draw_paired_rates", "interval_performance", "exact_interval_coverage", "difference_statistics",
           "rejection_rows", "design_grid", "run_cell", "planning_tables", "summarise_validation", "run_sample_size_study"]

#: The tests measured for each design.
TESTS = {"paired": ("paired_z", "paired_t"),
         "unpaired": ("cluster_z", "cluster_t", "donner_klar", "donner_klar_t")}
#: The tests a power plan of ``(design, test)`` is made for (``estimators.plan_difference``).
PLANNED_TESTS = {("paired", "z"): ("paired_z",), ("paired", "t"): ("paired_t",),
                 ("unpaired", "z"): ("cluster_z", "donner_klar"), ("unpaired", "t"): ("cluster_t", "donner_klar_t")}
#: A size cell runs this many times ``nsim`` data sets: a rejection rate near 0.05 then has an
#: MCSE of 0.0017 at the default 4,000 (0.0034 at ``nsim`` alone).
SIZE_REPLICATIONS = 4


def draw_cluster_totals(p, rho, reps, clusters, replicas, *, rng: np.random.Generator):
    """Beta-binomial totals: ``y[r, j] ~ Binomial(m, theta_j)``, shape ``(reps, clusters)``.

    ``replicas`` may be an array of sizes of that shape (:func:`draw_sizes`).
    """
    return rng.binomial(replicas, cluster_probabilities(p, rho, (reps, clusters), rng=rng))


def draw_sizes(mean_size, size_cv, shape, *, rng: np.random.Generator) -> np.ndarray:
    """Scenario sizes ``>= 1`` of mean ``m`` and coefficient of variation ``size_cv``.

    ``n_j - 1`` is negative binomial with mean ``m - 1`` and variance ``(cv m)^2`` (so ``n_j`` has
    mean ``m`` and standard deviation ``cv m``): ``NB(r, q)`` with ``q = (m - 1) / (cv m)^2`` and
    ``r = (m - 1)^2 / ((cv m)^2 - (m - 1))``, which needs ``(cv m)^2 > m - 1 > 0``. ``size_cv = 0``
    gives ``m`` everywhere (and draws nothing).
    """
    if size_cv == 0:
        return np.full(shape, int(mean_size), dtype=np.int64)
    mu, var = mean_size - 1.0, (size_cv * mean_size) ** 2
    if not 0.0 < mu < var:
        raise ValueError(f"sizes of mean {mean_size} and cv {size_cv} are not 1 + a negative binomial: "
                         f"need (cv m)^2 > m - 1 > 0")
    return 1 + rng.negative_binomial(mu * mu / (var - mu), mu / var, size=shape)


def _extreme_correlation(p_a, p_b, rho, sign):
    """Pearson correlation of ``(F_a^-1(U), F_b^-1(U))`` (sign +1) or ``F_b^-1(1 - U)`` (-1)."""
    first, second = stats.beta(*beta_shape(p_a, rho)), stats.beta(*beta_shape(p_b, rho))
    moment, _ = integrate.quad(lambda u: first.ppf(u) * second.ppf(u if sign > 0 else 1.0 - u),
                               0.0, 1.0, limit=200)
    return (moment - p_a * p_b) / math.sqrt(first.var() * second.var())


def draw_paired_rates(p_a, p_b, rho, correlation, reps, clusters, *, rng: np.random.Generator):
    """Two assistants' rates on the same scenarios, with Pearson correlation ``correlation``.

    Returns ``(theta_a, theta_b)``, each ``(reps, clusters)``. See the module notes: a
    mixture of the comonotone (or countermonotone) coupling, with probability
    ``|r| / |r_extreme|``, and independence. ValueError if ``|r|`` exceeds what the two
    beta marginals allow.
    """
    theta_a = cluster_probabilities(p_a, rho, (reps, clusters), rng=rng)
    theta_b = cluster_probabilities(p_b, rho, (reps, clusters), rng=rng)
    if rho == 0.0 or correlation == 0.0:
        return theta_a, theta_b
    sign = 1 if correlation > 0 else -1
    extreme = _extreme_correlation(p_a, p_b, rho, sign)
    mixing = correlation / extreme
    if mixing > 1.0:
        raise ValueError(f"correlation={correlation} is beyond the {extreme:.3f} that beta "
                         f"rates with p_a={p_a}, p_b={p_b}, rho={rho} allow")
    coupled = rng.random((reps, clusters)) < mixing
    if p_a == p_b and sign > 0:  # the comonotone transform of a law onto itself is the identity
        theta_b[coupled] = theta_a[coupled]
        return theta_a, theta_b
    u = betainc(*beta_shape(p_a, rho), theta_a[coupled])
    theta_b[coupled] = betaincinv(*beta_shape(p_b, rho), u if sign > 0 else 1.0 - u)
    return theta_a, theta_b


def interval_performance(totals, sizes, p, rho, confidence, interval: str = "wilson-kish"):
    """Coverage and half-width of clustered intervals over replicated data sets.

    Parameters
    ----------
    totals : ndarray, shape (reps, clusters)
        Errors per cluster.
    sizes : int or ndarray of the shape of ``totals``
        Conversations per cluster.
    p, rho : float
        True rate and the planned intra-cluster correlation.
    confidence : float
    interval : {"wilson-kish", "wilson-kish-t"}
        The interval of the plan (:func:`estimators.clustered_interval`).

    Returns
    -------
    list of dict
        Rows ``method, stat, est, mcse`` for methods ``<interval>_est_rho`` (SPEC section 5:
        ANOVA estimate, 1 where undefined, ``m_bar = sum n_j^2 / N``) and ``<interval>_true_rho``
        (``wilson_kish_est_rho`` and ``wilson_kish_true_rho`` for the paper's interval); with
        unequal sizes and the paper's interval also ``wilson_kish_true_rho_n_over_k`` (``m_bar =
        N / k``, the rule before 2026-12-01); stats ``coverage``, ``miss_below`` (the interval
        lies below ``p``), ``miss_above``, ``median_half_width``, ``mean_half_width``.
    """
    base = interval.replace("-", "_")
    sizes = np.broadcast_to(np.asarray(sizes), totals.shape)
    intervals = [(f"{base}_est_rho", clustered_interval(totals, sizes, interval, confidence=confidence)),
                 (f"{base}_true_rho", clustered_interval(totals, sizes, interval, confidence=confidence, rho=rho))]
    if interval == "wilson-kish" and np.any(sizes != sizes.flat[0]):
        n = sizes.sum(axis=1)
        intervals.append(("wilson_kish_true_rho_n_over_k",
                          wilson_kish_interval(totals.sum(axis=1), n, n / totals.shape[1], rho, confidence).interval))
    rows = []
    for method, (low, high) in intervals:
        half = (high - low) / 2.0
        for row in (*interval_rows(low, high, p), median(half, stat="median_half_width"),
                    mean(half, stat="mean_half_width")):
            rows.append({"method": method, **row})
    return rows


def exact_interval_coverage(p, rho, clusters, replicas, confidence, interval: str = "wilson-kish"):
    """Exact coverage of both methods of :func:`interval_performance` for equal sizes (no MC error).

    :func:`estimators.exact_coverage` on the beta-binomial pmf of one cluster; NaN for the
    estimated rho where the enumeration is too large. Rows ``method, stat="exact_coverage",
    est, mcse=0``.
    """
    pmf = cluster_pmf(p, rho, replicas)
    base = interval.replace("-", "_")
    return [{"method": f"{base}_{name}", "stat": "exact_coverage", "mcse": 0.0,
             "est": exact_coverage(pmf, clusters, method=interval, rho=fixed, confidence=confidence).coverage}
            for name, fixed in (("est_rho", None), ("true_rho", rho))]


def _robust_variance(totals, sizes, rate):
    """``k / (k - 1) sum_j (y_j - n_j rate)^2 / N^2``: the cluster-robust variance of ``Y / N``."""
    k = totals.shape[-1]
    return k / (k - 1) * ((totals - sizes * rate[..., None]) ** 2).sum(axis=-1) / sizes.sum(axis=-1) ** 2


def difference_statistics(totals_a, totals_b, sizes_a, sizes_b, design: str) -> dict:
    """The statistics of the tests of ``p_a = p_b`` for each data set, with their reference law.

    Parameters
    ----------
    totals_a, totals_b : ndarray, shape (reps, K)
        Each assistant's errors per scenario.
    sizes_a, sizes_b : int or ndarray broadcastable to them
        Conversations per scenario (the same for both assistants when ``design="paired"``).
    design : {"paired", "unpaired"}

    Returns
    -------
    dict
        ``name -> (statistic, df)``; ``df`` is None for a normal reference.

    Notes
    -----
    With ``D = (Y_b - Y_a) / N`` (size-weighted rates; the mean of the scenario rates when the
    sizes are equal) and the cluster-robust variance ``v = K / (K - 1) sum_j e_j^2 / N^2``:

    - ``paired_z``, ``paired_t``: ``e_j = (y_bj - y_aj) - n_j D``, i.e. the paired test on the
      scenario differences ``mean(d) / (sd(d) / sqrt(K))`` for equal sizes; t on ``K - 1`` df.
    - ``cluster_z``, ``cluster_t``: each assistant's ``v`` about its own rate, summed; for equal
      sizes the two-sample test on the scenario rates (pooled, as ``K`` is the same); t on
      ``2 K - 2`` df (Donner & Klar 2000, section 6.3).
    - ``donner_klar``, ``donner_klar_t``: ``(p_b - p_a) / sqrt(sum p q deff / N)`` with each
      assistant's ``deff`` from :func:`estimators.cluster_design` (SPEC section 5; Donner & Klar
      2000, section 5.2); normal, or t on ``2 K - 2`` df.
    """
    totals_a, totals_b = np.asarray(totals_a, dtype=float), np.asarray(totals_b, dtype=float)
    sizes_a = np.broadcast_to(np.asarray(sizes_a, dtype=float), totals_a.shape)
    sizes_b = np.broadcast_to(np.asarray(sizes_b, dtype=float), totals_b.shape)
    k = totals_a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate_a, rate_b = totals_a.sum(axis=-1) / sizes_a.sum(axis=-1), totals_b.sum(axis=-1) / sizes_b.sum(axis=-1)
        gap = rate_b - rate_a
        if design == "paired":
            statistic = gap / np.sqrt(_robust_variance(totals_b - totals_a, sizes_a, gap))
            return {"paired_z": (statistic, None), "paired_t": (statistic, k - 1)}
        cluster = gap / np.sqrt(_robust_variance(totals_a, sizes_a, rate_a) + _robust_variance(totals_b, sizes_b, rate_b))
        variance = 0.0
        for totals, sizes, rate in ((totals_a, sizes_a, rate_a), (totals_b, sizes_b, rate_b)):
            deff = cluster_design(totals, sizes).deff
            variance = variance + rate * (1.0 - rate) * deff / sizes.sum(axis=-1)
        wald = gap / np.sqrt(variance)
    df = 2 * k - 2
    return {"cluster_z": (cluster, None), "cluster_t": (cluster, df), "donner_klar": (wald, None),
            "donner_klar_t": (wald, df)}


def rejection_rows(statistics: dict, alpha: float, stat: str) -> list[dict]:
    """Rejection rate of each two-sided level-``alpha`` test; a 0/0 statistic does not reject."""
    rows = []
    for method, (value, df) in statistics.items():
        critical = z_value(1.0 - alpha) if df is None else float(critical_value(1.0 - alpha, df=df))
        rows.append({"method": method, **share(np.abs(np.nan_to_num(value, nan=0.0)) > critical, stat=stat)})
    return rows


# ---------------------------------------------------------------- the study

_NOMINAL = 0.95
_ALPHA = 0.05
_HALF_WIDTH = 0.05
_POWER = 0.8
_PAIRED_CORRELATION = 0.5
_COLUMNS = ["kind", "p", "p_b", "rho", "correlation", "design", "replicas", "size_cv", "interval", "test",
            "scenarios", "half_width", "confidence", "power", "alpha"]


def design_grid(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The simulated plans and tests, one row per cell (written to ``design.csv`` before the run).

    Full grid (``h = 0.05`` at 95%, 80% power at level 0.05 unless said):

    - ``rate``, equal sizes: ``p`` in (0.05, 0.1, 0.2, 0.5) with ``(rho, m)`` = (0, 1) and every
      ``rho`` in (0, 0.05, 0.1, 0.2) with ``m`` in (5, 10); unequal sizes: ``p`` in (0.05, 0.1,
      0.2), ``rho`` in (0.05, 0.2), ``m`` in (5, 10), ``size_cv`` in (0.5, 1); the t interval:
      ``p`` in (0.1, 0.2), ``rho`` in (0.1, 0.2), ``m = 10``, ``h`` in (0.05, 0.1).
    - ``pi``: ``pi`` in (0.6, 0.8), ``rho`` in (0.05, 0.2), ``m = 3``.
    - ``difference`` (power): ``p_b - p_a`` = 0.2 - 0.1, 0.2 - 0.3, 0.3 - 0.1 and 0.4 - 0.1,
      ``rho`` in (0.05, 0.2), ``m`` in (1, 5, 10), unpaired and paired (``r = 0.5``), each planned
      for the z and for the t test (``K`` from 4 to 292); unequal sizes: 0.3 - 0.1 with ``m`` in
      (5, 10) and ``size_cv`` in (0.5, 1).
    - ``size`` (``p_a = p_b = p``): ``K`` in (5, 8, 12, 24, 50, 100), ``p`` in (0.05, 0.15),
      ``rho`` in (0.05, 0.2), ``m`` in (1, 5), unpaired and paired (``r = 0.5``); unequal sizes:
      ``p = 0.15``, ``m = 5``, ``size_cv = 0.5``.

    ``nsim`` replications per cell (default 4,000; 200 with ``smoke``), :data:`SIZE_REPLICATIONS`
    times that for the size cells.
    """
    nsim = int(nsim if nsim is not None else (200 if smoke else 4000))
    rows = []

    def add(kind, **values):
        rows.append(dict(kind=kind, **values))

    interval = dict(half_width=_HALF_WIDTH, confidence=_NOMINAL, interval="wilson-kish", size_cv=0.0)
    test = dict(power=_POWER, alpha=_ALPHA, size_cv=0.0)
    if smoke:
        for rho, m in ((0.0, 1), (0.1, 5)):
            add("rate", p=0.1, rho=rho, replicas=m, **interval)
        add("rate", p=0.1, rho=0.1, replicas=5, **(interval | dict(size_cv=0.5)))
        add("rate", p=0.2, rho=0.2, replicas=10, **(interval | dict(interval="wilson-kish-t", half_width=0.1)))
        add("pi", p=0.8, rho=0.2, replicas=3, **interval)
        for design in ("unpaired", "paired"):
            for which in ("z", "t"):
                add("difference", p=0.1, p_b=0.3, rho=0.05, replicas=5, design=design, test=which, **test)
            for k in (5, 24):
                add("size", p=0.15, rho=0.05, replicas=5, design=design, scenarios=k, **test)
    else:
        for p in (0.05, 0.1, 0.2, 0.5):
            for rho, m in ((0.0, 1),) + tuple((r, m) for r in (0.0, 0.05, 0.1, 0.2) for m in (5, 10)):
                add("rate", p=p, rho=rho, replicas=m, **interval)
        for p in (0.05, 0.1, 0.2):
            for rho in (0.05, 0.2):
                for m in (5, 10):
                    for cv in (0.5, 1.0):
                        add("rate", p=p, rho=rho, replicas=m, **(interval | dict(size_cv=cv)))
        for p in (0.1, 0.2):
            for rho in (0.1, 0.2):
                for h in (0.05, 0.1):
                    add("rate", p=p, rho=rho, replicas=10, **(interval | dict(interval="wilson-kish-t", half_width=h)))
        for pi in (0.6, 0.8):
            for rho in (0.05, 0.2):
                add("pi", p=pi, rho=rho, replicas=3, **interval)
        for p_a, p_b in ((0.1, 0.2), (0.3, 0.2), (0.1, 0.3), (0.1, 0.4)):
            for rho in (0.05, 0.2):
                for m in (1, 5, 10):
                    for design in ("unpaired", "paired"):
                        for which in ("z", "t"):
                            add("difference", p=p_a, p_b=p_b, rho=rho, replicas=m, design=design, test=which, **test)
        for m in (5, 10):
            for cv in (0.5, 1.0):
                for design in ("unpaired", "paired"):
                    for which in ("z", "t"):
                        add("difference", p=0.1, p_b=0.3, rho=0.05, replicas=m, design=design, test=which,
                            **(test | dict(size_cv=cv)))
        for p in (0.05, 0.15):
            for rho in (0.05, 0.2):
                for m in (1, 5):
                    for design in ("unpaired", "paired"):
                        for k in (5, 8, 12, 24, 50, 100):
                            add("size", p=p, rho=rho, replicas=m, design=design, scenarios=k, **test)
        for rho in (0.05, 0.2):
            for design in ("unpaired", "paired"):
                for k in (5, 8, 12, 24, 50, 100):
                    add("size", p=0.15, rho=rho, replicas=5, design=design, scenarios=k, **(test | dict(size_cv=0.5)))
    table = pd.DataFrame(rows, columns=_COLUMNS)
    paired = table["design"] == "paired"
    table.loc[paired, "correlation"] = _PAIRED_CORRELATION
    table[["design", "interval", "test"]] = table[["design", "interval", "test"]].fillna("")
    return table.assign(nsim=nsim)


def _plan_of(row: dict):
    """The planner's answer for one design row."""
    if row["kind"] == "difference":
        paired = row["design"] == "paired"
        return plan_difference(row["p"], row["p_b"], rho=row["rho"], replicas=int(row["replicas"]),
                               power=row["power"], alpha=row["alpha"], design=row["design"],
                               correlation=row["correlation"] if paired else None, size_cv=row["size_cv"],
                               test=row["test"])
    plan = plan_paired_figure if row["kind"] == "pi" else plan_interval
    first = "pi" if row["kind"] == "pi" else "p"
    return plan(**{first: row["p"]}, rho=row["rho"], replicas=int(row["replicas"]),
                half_width=row["half_width"], confidence=row["confidence"], size_cv=row["size_cv"],
                method=row["interval"])


def _two_assistants(row: dict, p_a: float, p_b: float, reps: int, k: int, rng):
    """Totals and sizes of both assistants: paired (shared scenarios and sizes) or unpaired."""
    m, cv = int(row["replicas"]), float(row["size_cv"])
    if row["design"] == "paired":
        theta_a, theta_b = draw_paired_rates(p_a, p_b, row["rho"], row["correlation"], reps, k, rng=rng)
        sizes_a = sizes_b = draw_sizes(m, cv, (reps, k), rng=rng)
    else:
        theta_a = cluster_probabilities(p_a, row["rho"], (reps, k), rng=rng)
        theta_b = cluster_probabilities(p_b, row["rho"], (reps, k), rng=rng)
        sizes_a, sizes_b = draw_sizes(m, cv, (reps, k), rng=rng), draw_sizes(m, cv, (reps, k), rng=rng)
    return rng.binomial(sizes_a, theta_a), rng.binomial(sizes_b, theta_b), sizes_a, sizes_b


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Plan one design row (or take its ``K``), simulate its data sets and analyse them.

    Returns long rows ``scenarios, planned, method, stat, est, mcse``: ``scenarios`` is the
    planned ``K`` (cases for ``pi``; per assistant when unpaired; the fixed one of a size cell),
    ``planned`` the plan's own half-width or power at that ``K`` (``alpha`` for a size cell).
    """
    rng = np.random.default_rng(seed_seq)
    reps, m, cv = int(row["nsim"]), int(row["replicas"]), float(row["size_cv"])
    if row["kind"] == "size":
        k = int(row["scenarios"])
        totals_a, totals_b, sizes_a, sizes_b = _two_assistants(row, row["p"], row["p"], SIZE_REPLICATIONS * reps, k, rng)
        results = rejection_rows(difference_statistics(totals_a, totals_b, sizes_a, sizes_b, row["design"]), row["alpha"],
                                 "size")
        planned = row["alpha"]
    elif row["kind"] == "difference":
        plan = _plan_of(row)
        k = plan.scenarios
        totals_a, totals_b, sizes_a, sizes_b = _two_assistants(row, row["p"], row["p_b"], reps, k, rng)
        results = rejection_rows(difference_statistics(totals_a, totals_b, sizes_a, sizes_b, row["design"]), row["alpha"],
                                 "power")
        planned = plan.achieved_power
    else:
        plan = _plan_of(row)
        k = plan.cases if row["kind"] == "pi" else plan.scenarios
        sizes = m if cv == 0 else draw_sizes(m, cv, (reps, k), rng=rng)
        totals = draw_cluster_totals(row["p"], row["rho"], reps, k, sizes, rng=rng)
        results = interval_performance(totals, sizes, row["p"], row["rho"], row["confidence"], row["interval"])
        if cv == 0:
            results += exact_interval_coverage(row["p"], row["rho"], k, m, row["confidence"], row["interval"])
        planned = plan.achieved_half_width
    return [{"scenarios": k, "planned": planned, **result} for result in results]


def planning_tables() -> dict[str, pd.DataFrame]:
    """Plans without simulation: ``K`` over ``(p, rho)``, against ``m`` with the floor, and against the size spread.

    ``scenarios_grid``: ``h = 0.05``, ``m = 5``, 95%, ``p`` in (0.01 ... 0.5) and ``rho`` in
    (0 ... 0.5). ``scenarios_by_replicas``: ``p = 0.1``, ``h = 0.05``, ``rho`` in (0.05, 0.1,
    0.2) and ``m`` from 1 to 50, with the normal-rule and Wilson floors. ``scenarios_by_size_cv``:
    ``p = 0.1``, ``h = 0.05``, ``m`` in (5, 10), ``rho`` in (0.05, 0.1, 0.2) and ``size_cv`` from
    0 to 1, for both interval methods.
    """
    grid = [plan_interval(p, rho=rho, replicas=5, half_width=_HALF_WIDTH).to_dict()
            for p in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
            for rho in (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)]
    by_m = [plan_interval(0.1, rho=rho, replicas=m, half_width=_HALF_WIDTH).to_dict()
            for rho in (0.05, 0.1, 0.2) for m in (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50)]
    by_cv = [plan_interval(0.1, rho=rho, replicas=m, half_width=_HALF_WIDTH, size_cv=cv, method=method).to_dict()
             for method in ("wilson-kish", "wilson-kish-t") for m in (5, 10) for rho in (0.05, 0.1, 0.2)
             for cv in (0.0, 0.25, 0.5, 0.75, 1.0)]
    keep = ["p", "rho", "replicas", "half_width", "scenarios", "scenarios_normal", "conversations",
            "achieved_half_width", "floor", "floor_wilson"]
    keep_cv = ["method", "p", "rho", "replicas", "size_cv", "m_bar", "deff", "half_width", "scenarios",
               "conversations", "achieved_half_width", "floor"]
    return {"scenarios_grid": pd.DataFrame(grid)[keep], "scenarios_by_replicas": pd.DataFrame(by_m)[keep],
            "scenarios_by_size_cv": pd.DataFrame(by_cv)[keep_cv]}


def _wide(part: pd.DataFrame) -> pd.DataFrame:
    wide = part.pivot_table(index=["cell", "method"], columns="stat", values=["est", "mcse"], sort=False)
    wide.columns = [stat if kind == "est" else f"{stat}_mcse" for kind, stat in wide.columns]
    return wide.reset_index()


def summarise_validation(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Wide tables of the checks, one row per cell and method.

    ``intervals``: coverage, misses and half-widths with MCSE, and the checks
    ``half_width_ok`` (median half-width <= h) and ``coverage_ok`` (coverage >= nominal -
    2 MCSE). ``power``: the realised power with MCSE, ``planned_for`` (the plan was made for
    this test, :data:`PLANNED_TESTS`) and ``power_ok`` (>= target - 2 MCSE). ``size``: the
    rejection rate under the null with MCSE, ``size_ok`` (within ``alpha +- 2 MCSE``), and
    ``liberal`` / ``conservative`` (above / below that band).
    """
    out = {}
    cells = long.groupby("cell").first()
    part = long[long["kind"].isin(["rate", "pi"])]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["kind", "interval", "p", "rho", "replicas", "size_cv", "scenarios",
                                                  "half_width", "planned", "confidence"]]
        design = design.rename(columns={"planned": "planned_half_width"})
        wide = _wide(part).join(design, on="cell")
        if "exact_coverage" not in wide:
            wide["exact_coverage"] = np.nan
        wide["half_width_ok"] = wide["median_half_width"] <= wide["half_width"]
        wide["coverage_ok"] = wide["coverage"] >= wide["confidence"] - 2 * wide["coverage_mcse"]
        stats_ = ["coverage", "coverage_mcse", "exact_coverage", "miss_below", "miss_below_mcse", "miss_above",
                  "miss_above_mcse", "median_half_width", "median_half_width_mcse", "mean_half_width",
                  "mean_half_width_mcse", "half_width_ok", "coverage_ok"]
        out["intervals"] = wide[["cell", *design.columns, "method", *stats_]]
    part = long[long["kind"] == "difference"]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["p", "p_b", "rho", "correlation", "design", "replicas", "size_cv",
                                                  "test", "scenarios", "power", "planned"]]
        design = design.rename(columns={"p": "p_a", "power": "power_target", "planned": "planned_power"})
        wide = _wide(part).rename(columns={"power": "realised_power", "power_mcse": "realised_power_mcse"})
        wide = wide.join(design, on="cell")
        wide["planned_for"] = [method in PLANNED_TESTS[(d, t)]
                               for method, d, t in zip(wide["method"], wide["design"], wide["test"])]
        wide["power_ok"] = wide["realised_power"] >= wide["power_target"] - 2 * wide["realised_power_mcse"]
        out["power"] = wide[["cell", *design.columns, "method", "planned_for", "realised_power",
                             "realised_power_mcse", "power_ok"]]
    part = long[long["kind"] == "size"]
    if not part.empty:
        design = cells.loc[part["cell"].unique(), ["p", "rho", "correlation", "design", "replicas", "size_cv",
                                                  "scenarios", "alpha"]]
        wide = _wide(part).join(design, on="cell")
        band = 2 * wide["size_mcse"]
        wide["liberal"] = wide["size"] > wide["alpha"] + band
        wide["conservative"] = wide["size"] < wide["alpha"] - band
        wide["size_ok"] = ~(wide["liberal"] | wide["conservative"])
        out["size"] = wide[["cell", *design.columns, "method", "size", "size_mcse", "size_ok", "liberal",
                            "conservative"]]
    return out


def _number(value, digits: int = 4) -> str:
    return "-" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _failures(table: pd.DataFrame, check: str, describe, *, passed: bool = True) -> str:
    """The rows that fail ``check`` (``passed=False``: the rows where ``check`` is true), described; or "none"."""
    flags = table[check].astype(bool)
    failed = table[~flags if passed else flags]
    if failed.empty:
        return "none"
    return "; ".join(describe(row) for _, row in failed.iterrows())


def _z_or_t(size: pd.DataFrame, power: pd.DataFrame | None, *, smoke: bool) -> list[str]:
    """The paragraph on z against t: the highest size of each pair of tests with few scenarios, and the price in K;
    its conclusion, the planner's default, unless ``smoke``."""
    dense = size[(size["p"] == 0.15) & (size["replicas"] == 5)]
    if dense.empty:
        return []
    lines = ["\n### z or t\n"]
    for z_test, t_test in (("paired_z", "paired_t"), ("cluster_z", "cluster_t"), ("donner_klar", "donner_klar_t")):
        pair = dense[dense["method"].isin([z_test, t_test])]
        if pair.empty:
            continue
        few = pair[pair["scenarios"] <= 12].groupby("method")["size"].max()
        ks = [k for k in (24, 50, 100) if k in set(pair["scenarios"])]
        at = {k: pair[pair["scenarios"] == k].groupby("method")["size"].max() for k in ks}

        def rates(test):
            return ", ".join([f"{few.get(test, np.nan):.3f} with K <= 12"]
                             + [f"{at[k].get(test, np.nan):.3f} at K = {k}" for k in ks])
        text = (f"- `{z_test}` rejects up to {rates(z_test)}; `{t_test}` up to {rates(t_test)} (p = 0.15, m = 5, "
                f"highest over rho, cv and design)")
        if power is not None and not power.empty:
            design = "paired" if z_test.startswith("paired") else "unpaired"
            plans = power[power["design"] == design].groupby("cell").first()
            by_test = plans.groupby(["p_a", "p_b", "rho", "replicas", "size_cv", "test"])["scenarios"].first()
            by_test = by_test.unstack("test")
            if {"t", "z"} <= set(by_test.columns):
                extra = (by_test["t"] - by_test["z"]).dropna().astype(int)
                spread = f"{extra.min()}" if extra.min() == extra.max() else f"{extra.min()} to {extra.max()}"
                text += (f"; the t plan needs {spread} more scenario{'' if extra.max() == 1 else 's'} than the "
                         f"z plan ({design})")
        lines.append(text + ".")
    if not smoke:
        lines.append("- So `plan_difference` plans for the t test by default (`test=\"t\"`); `test=\"z\"` is the "
                     "textbook normal rule, whose tests reject a true null too often with few scenarios.")
    return lines


def report_markdown(tables: dict[str, pd.DataFrame], *, facts: dict) -> str:
    """The text of ``report.md``: the findings in a few sentences, every number read from the tables; a smoke run's
    (``facts["smoke"]``) without the conclusions its few plans cannot support."""
    grid, by_m = tables["scenarios_grid"], tables["scenarios_by_replicas"]
    at = grid[grid["p"] == 0.1].set_index("rho")["scenarios"]
    lines = ["# Sample-size plans: study report\n",
             f"Seed {facts['seed']}, {facts['nsim']} replications per plan ({SIZE_REPLICATIONS * facts['nsim']} per "
             f"size cell), beta-binomial data (design.csv, run.json).\n", "## Plans\n",
             f"- For p = 0.1, half-width 0.05 and m = 5 replicas the plan needs K = {at.iloc[0]} "
             f"scenarios at rho = {at.index[0]:g} and K = {at.iloc[-1]} at rho = {at.index[-1]:g} "
             f"(scenarios_grid): rho is rarely known, so plan for a range.",
             ]
    for rho, part in by_m.groupby("rho"):
        first, last = part.iloc[0], part.iloc[-1]
        lines.append(f"- rho = {rho:g}: K = {int(first['scenarios'])} with m = {int(first['replicas'])}, "
                     f"K = {int(last['scenarios'])} with m = {int(last['replicas'])}; the floor is "
                     f"{first['floor']:.1f} (normal rule), {first['floor_wilson']:.1f} (Wilson).")
    by_cv = tables.get("scenarios_by_size_cv")
    if by_cv is not None:
        part = by_cv[(by_cv["method"] == "wilson-kish") & (by_cv["replicas"] == 10) & (by_cv["rho"] == 0.1)]
        k = part.set_index("size_cv")["scenarios"]
        t = by_cv[(by_cv["method"] == "wilson-kish-t") & (by_cv["replicas"] == 10) & (by_cv["rho"] == 0.1)]
        kt = t.set_index("size_cv")["scenarios"]
        lines.append("- Unequal scenario sizes (scenarios_by_size_cv; m_bar = m (1 + cv^2), Eldridge, Ashby & Kerry "
                     "2006): for p = 0.1, rho = 0.1, m = 10, h = 0.05 the plan needs K = "
                     + ", ".join(f"{int(v)} at cv = {c:g}" for c, v in k.items())
                     + "; planned for the wilson-kish-t interval, K = "
                     + ", ".join(f"{int(v)}" for v in kt.values) + " at the same cv.")
    if "intervals" in tables:
        intervals = tables["intervals"]
        lines += ["\n## Interval plans (intervals.csv)\n",
                  "Each plan's K simulated (`_t_` methods: plans for the wilson-kish-t interval); with unequal "
                  "sizes (cv > 0) the sizes are drawn afresh for every data set and there is no exact coverage. "
                  "Checks: median half-width <= h, coverage >= 0.95 - 2 MCSE.\n",
                  "| method | sizes | plans | half-width ok | coverage ok | mean coverage | lowest | lowest exact |",
                  "|---|---|---|---|---|---|---|---|"]

        def describe(row):
            exact = "" if np.isnan(row["exact_coverage"]) else f" (exact {row['exact_coverage']:.4f})"
            return (f"{row['kind']} p={row['p']:g} rho={row['rho']:g} m={row['replicas']} cv={row['size_cv']:g} "
                    f"h={row['half_width']:g} K={row['scenarios']}: median {row['median_half_width']:.4f}, coverage "
                    f"{row['coverage']:.4f}{exact}")
        groups = list(intervals.groupby(["method", intervals["size_cv"] > 0], sort=False))
        for (method, unequal), part in groups:
            lines.append(f"| `{method}` | {'cv 0.5, 1' if unequal else 'equal'} | {len(part)} | "
                         f"{int(part['half_width_ok'].sum())} | {int(part['coverage_ok'].sum())} | "
                         f"{part['coverage'].mean():.4f} | {part['coverage'].min():.4f} | "
                         f"{_number(part['exact_coverage'].min())} |")
        lines.append("")
        for (method, unequal), part in groups:
            lines.append(f"- `{method}`, {'unequal' if unequal else 'equal'} sizes: half-width above h in "
                         f"{_failures(part, 'half_width_ok', describe)}; coverage short in "
                         f"{_failures(part, 'coverage_ok', describe)}.")
    if "size" in tables:
        size = tables["size"]
        lines += ["\n## Size of the tests (size.csv)\n",
                  f"Rejection rate under p_a = p_b at level {size['alpha'].iloc[0]:g}; held when within "
                  f"alpha +- 2 MCSE (MCSE about {size['size_mcse'].median():.4f}); too liberal above that band (the "
                  "test rejects a true null too often), too conservative below it (it loses power)."
                  + ("\n" if facts["smoke"] else " Cells with p = 0.05 or m = 1 have few errors per data set: there "
                     "every test is conservative.\n"),
                  "| test | held | too liberal | too conservative | lowest | highest | highest with K <= 12 |",
                  "|---|---|---|---|---|---|---|"]
        for method, part in size.groupby("method", sort=False):
            few = part[part["scenarios"] <= 12]
            lines.append(f"| `{method}` | {int(part['size_ok'].sum())} of {len(part)} | {int(part['liberal'].sum())} | "
                         f"{int(part['conservative'].sum())} | {part['size'].min():.4f} | {part['size'].max():.4f} | "
                         f"{few['size'].max():.4f} |")
        ks = sorted(size["scenarios"].unique())
        for title, part_of in (("every cell", size),
                               ("p = 0.15 and m = 5 (errors enough for the tests' large-sample law)",
                                size[(size["p"] == 0.15) & (size["replicas"] == 5)])):
            lines += ["", f"Mean (highest) rejection rate by number of scenarios K, {title}:\n",
                      "| test | " + " | ".join(f"K = {k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
            for method, part in part_of.groupby("method", sort=False):
                by_k = part.groupby("scenarios")["size"]
                means, highs = by_k.mean().reindex(ks), by_k.max().reindex(ks)
                lines.append(f"| `{method}` | " + " | ".join(f"{a:.3f} ({b:.3f})" for a, b in zip(means, highs)) + " |")
        lines.append("")

        def describe_size(row):
            return (f"{row['design']} p={row['p']:g} rho={row['rho']:g} m={row['replicas']} cv={row['size_cv']:g} "
                    f"K={row['scenarios']}: {row['size']:.4f}")
        for method, part in size.groupby("method", sort=False):
            conservative = part[part["conservative"].astype(bool)]
            sparse = int(((conservative["p"] == 0.05) | (conservative["replicas"] == 1)).sum())
            lines.append(f"- `{method}` too liberal in: {_failures(part, 'liberal', describe_size, passed=False)}; "
                         f"too conservative in {len(conservative)} cells ({sparse} of them with p = 0.05 or m = 1).")
        lines += _z_or_t(size, tables.get("power"), smoke=facts["smoke"])
    if "power" in tables:
        power = tables["power"]
        lines += ["\n## Power plans (power.csv)\n",
                  "Each test's power on the plans made for it (z plans for the z tests and `donner_klar`, t plans "
                  "for the t tests and `donner_klar_t`); power.csv also has every test on every plan.\n",
                  "| test | plans | power ok | K | lowest power | highest power |", "|---|---|---|---|---|---|"]

        def describe_power(row):
            return (f"{row['design']} {row['p_a']:g}->{row['p_b']:g} rho={row['rho']:g} m={row['replicas']} "
                    f"cv={row['size_cv']:g} K={row['scenarios']}: {row['realised_power']:.4f} "
                    f"(MCSE {row['realised_power_mcse']:.4f})")
        planned = power[power["planned_for"].astype(bool)]
        groups = list(planned.groupby("method", sort=False))
        for method, part in groups:
            lines.append(f"| `{method}` | {len(part)} | {int(part['power_ok'].sum())} | {int(part['scenarios'].min())} "
                         f"to {int(part['scenarios'].max())} | {part['realised_power'].min():.4f} | "
                         f"{part['realised_power'].max():.4f} |")
        lines.append("")
        for method, part in groups:
            lines.append(f"- `{method}` short of the target - 2 MCSE in: {_failures(part, 'power_ok', describe_power)}.")
    lines += ["\n## Figures\n", "- scenarios_grid: K over (p, rho); scenarios_by_replicas: K "
              "against m with the floor; intervals: coverage and median half-width of each plan; "
              "power: realised power of each power plan and the size of each test against K in the cells with p = 0.15 and m = 5 (PNG and PDF)."]
    return "\n".join(lines) + "\n"


def run_sample_size_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
              nsim: int | None = None, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False) -> dict[str, pd.DataFrame]:
    """Run the sample-size study and write its tables (CSV + Markdown), figures and report.

    Writes ``design.csv`` and ``run.json`` (:func:`studies._engine.run_cells`),
    ``validation.csv`` (long: design, ``scenarios, planned, method, stat, est, mcse``),
    ``intervals.*``, ``power.*`` and ``size.*`` (the checks), ``scenarios_grid.*``,
    ``scenarios_by_replicas.*`` and ``scenarios_by_size_cv.*`` (plans), the figures of
    :mod:`figures.sample_size`, ``report.md`` and ``report.html``. The tables are identical for
    any ``n_jobs`` and ``backend``; a stopped run resumes in the same folder
    (:func:`studies._engine.run_cells`); ``force`` recomputes into a folder that holds an earlier
    run (its cells and outputs are removed first).
    """
    out_dir = Path(out_dir)
    design = design_grid(smoke=smoke, nsim=nsim)
    facts = {"study": "sample-size", "smoke": smoke, "nsim": int(design["nsim"].iloc[0])}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="sample-size plans", run_facts=facts,
                     force=force)
    with step("planning and summarising", progress=progress) as say:
        tables = {**planning_tables(), **summarise_validation(long)}
        say("writing the tables, drawing the figures")
        written = _write_outputs(out_dir, long, tables)
        say("writing report.md and report.html")
        written += write_reports(out_dir, report_markdown(tables, facts={"seed": seed, **facts}), smoke=smoke,
                                 outputs=written)
    record_outputs(out_dir, written)
    return {"validation": long, **tables}


def _write_outputs(out_dir: Path, long: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> list[Path]:
    """The study's tables (CSV and Markdown) and figures (PNG and PDF); the paths written."""
    from escalation.figures import (plot_interval_validation, plot_power_validation, plot_scenarios_by_replicas,
                                    plot_scenarios_grid)
    written = write_table(long, out_dir, "validation")
    titles = {"scenarios_grid": "Scenarios K for h = 0.05, m = 5, 95% (Wilson-Kish and normal rule)",
              "scenarios_by_replicas": "Scenarios K against replicas m (p = 0.1, h = 0.05) and the floor",
              "scenarios_by_size_cv": "Scenarios K against the coefficient of variation of the scenario sizes "
                                      "(p = 0.1, h = 0.05; m_bar = m (1 + cv^2))",
              "intervals": "Realised half-width and coverage of each interval plan",
              "power": "Realised power of each power plan, every test",
              "size": "Rejection rate of each test under the null (size)"}
    for name, table in tables.items():
        written += write_table(table, out_dir, name, titles[name])
    written += save_figure(plot_scenarios_grid(tables["scenarios_grid"]), out_dir / "scenarios_grid")
    written += save_figure(plot_scenarios_by_replicas(tables["scenarios_by_replicas"]),
                           out_dir / "scenarios_by_replicas")
    if "intervals" in tables:
        written += save_figure(plot_interval_validation(tables["intervals"]), out_dir / "intervals")
    if "power" in tables:
        size = tables.get("size")
        dense = None if size is None else size[(size["p"] == 0.15) & (size["replicas"] == 5)]
        written += save_figure(plot_power_validation(tables["power"], size=dense,
                                                     size_note="\ncells with p = 0.15, m = 5"), out_dir / "power")
    return written
