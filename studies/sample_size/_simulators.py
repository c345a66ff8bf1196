"""The sample-size study's simulators and test statistics: cluster totals, sizes, paired rates, the
interval and test performance of a data set."""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats
from scipy.special import betainc, betaincinv

from escalation.estimators.stats import (
    cluster_design,
    clustered_interval,
    critical_value,
    exact_coverage,
    wilson_kish_interval,
    z_value,
)
from escalation.simulate import cluster_probabilities

from .._beta_binomial import beta_shape, cluster_pmf
from .._performance import interval_rows, mean, median, share

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
        cluster = gap / np.sqrt(_robust_variance(totals_a, sizes_a, rate_a)
                                + _robust_variance(totals_b, sizes_b, rate_b))
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
