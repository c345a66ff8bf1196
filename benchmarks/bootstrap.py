"""Speed of the cluster bootstrap on the coverage study's workload, printed as ratios.

Workload: 2,000 data sets of K = 30 scenarios x m = 8 replicas (beta-binomial, p = 0.1,
rho = 0.2), 999 resamples each, percentile and BCa intervals. Compared, in one run:

- ``scipy.stats.bootstrap`` called once per data set on the cluster totals (``paired=True``,
  ``vectorized=True``, BCa; the percentile interval is read off its bootstrap distribution);
- the floor: only drawing the random numbers our bootstrap draws (one multinomial count vector
  per data set over the possible resampled rates; the probabilities are those a first run
  observed, on the same support, so the draw has the size and shape of ours);
- for context, drawing the cluster indices a resample-by-index bootstrap needs (2,000 x 999 x 30).

Agreement: for each interval end, the difference ours - scipy over the 2,000 data sets is set
against ours - ours (a second, independent run of ours): both are pure Monte Carlo noise when
the two bootstraps estimate the same interval, so their spreads should match and their means
be zero within a few standard errors.

Run: ``python benchmarks/bootstrap.py``.
"""
from __future__ import annotations

import time

import numpy as np
from scipy import stats

from escalation.estimators.stats import cluster_bootstrap

DATASETS, SCENARIOS, REPLICAS, RESAMPLES = 2000, 30, 8, 999


def workload(rng):
    q = rng.beta(0.1 * 4, 0.9 * 4, size=(DATASETS, SCENARIOS))  # mean 0.1, rho = 1 / (1 + 4) = 0.2
    return rng.binomial(REPLICAS, q)


def ours(totals, rng):
    res = cluster_bootstrap(totals, REPLICAS, n_resamples=RESAMPLES, rng=rng)
    return res.confidence_interval("percentile"), res.confidence_interval("bca")


def with_scipy(totals, rng):
    sizes = np.full(SCENARIOS, REPLICAS)
    percentile, bca = np.empty((DATASETS, 2)), np.empty((DATASETS, 2))
    for d, y in enumerate(totals):
        res = stats.bootstrap((y, sizes), lambda a, b, axis=-1: a.sum(axis=axis) / b.sum(axis=axis), paired=True,
                              vectorized=True, n_resamples=RESAMPLES, method="BCa", rng=rng)
        bca[d] = res.confidence_interval
        percentile[d] = np.quantile(res.bootstrap_distribution, [0.025, 0.975])
    return percentile, bca


def timed(fn, *args, repeat=1):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    rng = np.random.default_rng(20240501)
    totals = workload(rng)
    pmf = cluster_bootstrap(totals, REPLICAS, n_resamples=RESAMPLES, rng=np.random.default_rng(1)).counts / RESAMPLES

    t_ours, (perc, bca) = timed(ours, totals, rng, repeat=7)
    _, (perc2, bca2) = timed(ours, totals, np.random.default_rng(7))
    t_floor, _ = timed(lambda: rng.multinomial(RESAMPLES, pmf), repeat=7)
    t_indices, _ = timed(lambda: rng.integers(0, SCENARIOS, size=(DATASETS, RESAMPLES, SCENARIOS)), repeat=3)
    t_scipy, (sp_perc, sp_bca) = timed(with_scipy, totals, rng)

    print(f"workload: {DATASETS} data sets, K = {SCENARIOS} x m = {REPLICAS}, {RESAMPLES} resamples, "
          "percentile + BCa")
    print(f"  ours (cluster_bootstrap)            {t_ours * 1e3:9.1f} ms")
    print(f"  scipy.stats.bootstrap per data set  {t_scipy * 1e3:9.1f} ms   -> ours is {t_scipy / t_ours:6.1f}x faster"
          "  (target >= 10x)")
    print(f"  floor: our random numbers only      {t_floor * 1e3:9.1f} ms   -> ours takes {t_ours / t_floor:5.2f}x "
          "the floor"
          "  (target <= 3x)")
    print(f"  context: cluster indices B x K      {t_indices * 1e3:9.1f} ms")
    print("agreement of interval ends over the data sets (Monte Carlo noise only if they agree):")
    print(f"  {'end':16s} {'mean(ours-scipy)':>17s} {'z':>6s} {'sd(ours-scipy)':>15s} {'sd(ours-ours)':>14s}")
    for name, a, b, c in (("percentile low", perc.low, sp_perc[:, 0], perc2.low),
                          ("percentile high", perc.high, sp_perc[:, 1], perc2.high),
                          ("BCa low", bca.low, sp_bca[:, 0], bca2.low),
                          ("BCa high", bca.high, sp_bca[:, 1], bca2.high)):
        keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        diff, noise = (a - b)[keep], (a - c)[keep]
        z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
        print(f"  {name:16s} {diff.mean():17.5f} {z:6.2f} {diff.std(ddof=1):15.5f} {noise.std(ddof=1):14.5f}")


if __name__ == "__main__":
    main()
