"""Coverage study: every interval of the package on the data users meet (ADEMP).

Aims
    Find where each clustered interval of :data:`escalation.estimators.stats.INTERVAL_METHODS` holds
    its 95% level and where it fails, on scenarios of unequal size, with rare errors and with
    3 to 200 scenarios, beside two oracles: the plain Wilson interval (ignores clustering) and
    Wilson-Kish with the true intra-cluster correlation of the outcome.
Data-generating mechanisms
    The plain beta-binomial model (not the synthetic world). Scenario ``j`` has ``n_j``
    conversations (:func:`scenario_sizes`: equal sizes ``m``, or the ``(j - 1/2) / K`` quantiles
    of a gamma law of mean ``m`` and coefficient of variation ``cv``, rounded, at least 1, so a
    cell's sizes are fixed, not drawn). For ``p_u`` scenario ``j`` draws ``q_j ~ Beta`` with mean
    ``p`` and intra-scenario correlation ``rho`` (``alpha = p (1 - rho) / rho``, ``beta = (1 - p)
    (1 - rho) / rho``; ``q_j = p`` when ``rho = 0``) and its errors are Binomial(``n_j, q_j``).
    For ``pi`` case ``j`` has an ESC and an ACT scenario of ``n_j`` replicas each, with
    independent ``q_u, q_o ~ Beta`` of mean ``a = 1 - sqrt(pi)`` and correlation ``rho``;
    replica ``r`` of both forms a pair whose outcome ``(1 - u)(1 - o)`` has mean ``pi``. Given
    ``q_u, q_o`` the ``n_j`` pair outcomes are independent Bernoulli(``(1 - q_u)(1 - q_o)``), so
    the case's correct pairs are drawn as one binomial; their distribution is
    :func:`pair_cluster_pmf` (derived another way, through the hypergeometric overlap of the
    errors). The pair outcomes of a case have intra-case correlation ``rho_outcome``
    (:func:`pair_outcome_icc`), below ``rho``. Grid (:data:`FULL_GRID`): the true value's
    distance from the boundary ``p`` (``p_u = p``, ``pi = 1 - p``), ``rho``, scenarios ``K`` and
    the size design ``(m, cv)``, fully crossed, except that with ``m = 1`` (every scenario one
    conversation) only ``rho = 0`` is run: the data do not depend on rho there.
Estimands
    ``p_u`` (a rate) and ``pi`` (the paired figure); the column ``p`` of the tables is the true
    value of the estimand.
Methods
    :data:`METHODS`: ``wilson`` (``wilson-kish`` with rho fixed at 0), ``wilson-kish-true-rho``
    (``wilson-kish`` with rho fixed at ``rho_outcome``), and the methods of
    :func:`escalation.estimators.stats.clustered_interval` at 95%, rho read from the data (SPEC
    section 5). The two bootstraps read their intervals off one cluster bootstrap of
    :data:`N_RESAMPLES` resamples per data set.
Performance measures
    Coverage with its Monte Carlo standard error ``sqrt(c (1 - c) / nsim)``; misses below
    (``high < truth``) and above (``low > truth``) separately; mean width over the replications
    where the interval is defined. An undefined interval (BCa with no variation between
    clusters) counts as not covering and as neither miss. Beside them, the exact coverage,
    misses and mean width (no Monte Carlo error) wherever they can be computed: every
    method of the cluster sums (``SUMS_METHODS``) with equal sizes, and with unequal sizes where
    the enumeration stays within :data:`escalation.estimators.stats.MAX_UNEQUAL_STATES` (every cell
    with K <= 10, most with K = 30 and m = 3, some beyond; :func:`escalation.estimators.stats.exact_coverages`
    with one pmf per cluster), and the two fixed-rho methods in every cell
    (:func:`escalation.estimators.stats.exact_coverage`). The
    beta-binomial methods read the histogram of the cluster totals: Monte Carlo only. The
    bootstraps are Monte Carlo only: on every replication with equal sizes, on
    :data:`BOOTSTRAP_NSIM_UNEQUAL` with unequal sizes, and not at all with unequal sizes and
    ``K > UNEQUAL_BOOTSTRAP_MAX_K`` (see there).
Borderline cells (``rerun``, on by default, off with ``smoke``)
    Whether an interval holds in a group of cells (:mod:`._report`) turns on each cell's coverage
    against :data:`FLOOR` with a tolerance of :data:`TOLERANCE_MCSE` Monte Carlo standard errors (the
    holds rule of :mod:`studies._performance`). So a cell where some candidate (not an oracle) has no
    exact value and a Monte Carlo coverage that is borderline (``c - 2 MCSE < FLOOR <= c + 2 MCSE``,
    MCSE above :data:`RERUN_MCSE`) is run again, on data sets of its own, until every such method's
    MCSE is at most :data:`RERUN_MCSE` (:func:`run_cell`); its rows of ``coverage.csv`` are the
    rerun's (column ``rerun``, their ``nsim``). Any such candidate, not only the cell's lowest: each
    method's verdict is its own.

A researcher's own (``run_coverage_study(methods=, grid=, generator=, from_run=)``, and the command's
``--method``, ``--grid``, ``--generator``, ``--from-run``): their intervals run beside the methods above on
the very data sets, with exact coverage where they declare the statistics they depend on
(:mod:`._own_exact`); a grid replaces :data:`FULL_GRID` by the full cross product of its lists
(:data:`GRID_KEYS`); another generator replaces the beta-binomial (:mod:`._generators`), and then every
method is Monte Carlo.

Reproducibility: cell ``i`` uses child ``i`` of the root ``SeedSequence``; within a cell the
replications run in chunks of ``CHUNK`` with child ``c`` of the cell's seed (data first, then
the bootstrap of the chunk's first replications), so ``replay_replication`` recomputes one
replication from the root seed alone, and the results do not depend on ``n_jobs``. A rerun is the
same with child :data:`RERUN_CHILD` of the cell's seed in place of the cell's seed (:func:`rerun_seed`):
``replay_replication(..., rerun=True)`` replays it.
"""
from __future__ import annotations

import math
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, TypedDict, cast

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from escalation.estimators.records import InputError
from escalation.estimators.stats import (
    LIKELIHOOD_METHODS,
    SUMS_METHODS,
    ClusterSums,
    DegenerateIntervalWarning,
    cluster_bootstrap,
    clustered_interval,
    exact_coverage,
    exact_coverages,
)
from escalation.simulate import cluster_probabilities

from .._beta_binomial import cluster_pmf
from .._constants import COVERAGE_METHODS as METHODS, COVERAGE_ORACLES as ORACLES, COVERAGE_SEED as DEFAULT_SEED
from .._engine import cell_seed, record_outputs, run_cells, step
from .._figure_files import save_figure
from .._performance import (
    FLOOR,
    RERUN_CHILD,
    RERUN_MCSE,
    TOLERANCE_MCSE,
    binomial_mcse,
    borderline,
    interval_rows,
    rerun_seed,
    rerun_size,
)
from .._report_files import write_reports
from .._tables import write_table
from .._user_methods import (
    CellWithOptions,
    GridKey,
    UserFunction,
    checked_bounds,
    function_identity,
    read_grid,
    user_functions,
)
from ._generators import GENERATORS, RunRates, checked_totals, logit_normal, observed_icc
from ._own_exact import exact_performance, states

__all__ = ["METHODS", "ORACLES", "FIXED_RHO_METHODS", "BOOTSTRAP_METHODS", "ESTIMANDS", "COLUMNS", "FULL_GRID",
           "SMOKE_GRID", "GRID_KEYS", "FLOOR", "TOLERANCE_MCSE", "RERUN_MCSE", "RERUN_CHILD", "scenario_sizes",
           "build_design", "cell_sizes", "run_cell", "cell_intervals", "rerun_seed", "run_coverage_study",
           "replay_replication", "pair_cluster_pmf", "pair_outcome_icc", "beta_binomial"]

#: The methods whose exact coverage is computable in every cell with unequal sizes (rho fixed; the other
#: methods of the cluster sums where the enumeration's budget allows).
FIXED_RHO_METHODS = ORACLES
BOOTSTRAP_METHODS = ("bootstrap-percentile", "bootstrap-bca")
ESTIMANDS = ("p_u", "pi")
COLUMNS = ("method", "estimand", "p", "rho", "scenarios", "replicas", "size_cv", "nsim", "rerun", "coverage",
           "coverage_mcse", "miss_low", "miss_high", "mean_width", "exact_coverage", "exact_miss_low",
           "exact_miss_high", "exact_mean_width")
CONFIDENCE = 0.95
N_RESAMPLES = 999
CHUNK = 500
DEFAULT_NSIM = 2000
SMOKE_NSIM = 200
#: Replications of the bootstraps in a cell of unequal sizes (with equal sizes: every replication).
BOOTSTRAP_NSIM_UNEQUAL = 500
#: With unequal sizes the bootstrap's exact resampling distribution has too large a grid and
#: :func:`escalation.estimators.stats.cluster_bootstrap` draws every cluster of every resample
#: (about 2e-7 s per data set, resample and cluster: 80 s for 2000 data sets of 200 clusters),
#: so the bootstraps run there only up to this many scenarios (at K = 30 they would take 40% of
#: the run; with equal sizes they run everywhere).
UNEQUAL_BOOTSTRAP_MAX_K = 10


class _Grid(TypedDict):
    p: tuple[float, ...]
    rho: tuple[float, ...]
    scenarios: tuple[int, ...]
    sizes: tuple[tuple[int, float], ...]


# p: distance of the true value from the boundary (p_u = p, pi = 1 - p); sizes: (m, cv)
FULL_GRID: _Grid = {"p": (0.01, 0.02, 0.05, 0.1, 0.2, 0.5), "rho": (0.0, 0.05, 0.2, 0.5),
                    "scenarios": (3, 5, 10, 30, 100, 200),
                    "sizes": ((1, 0.0), (3, 0.0), (3, 0.5), (3, 1.0), (8, 0.0), (8, 0.5), (8, 1.0))}
SMOKE_GRID: _Grid = {"p": (0.02, 0.2), "rho": (0.0, 0.2), "scenarios": (3, 30),
                     "sizes": ((1, 0.0), (3, 0.0), (3, 1.0))}


def scenario_sizes(scenarios: int, mean: int, cv: float) -> np.ndarray:
    """The conversations of each scenario of a cell: fixed sizes of mean about ``mean`` and spread ``cv``.

    Parameters
    ----------
    scenarios : int
        Number of scenarios ``K``.
    mean : int
        Mean size ``m``.
    cv : float
        Coefficient of variation of the sizes; 0 gives ``K`` scenarios of ``m``.

    Returns
    -------
    ndarray of int, shape (K,)
        The ``(j - 1/2) / K`` quantiles, ``j = 1 .. K``, of a gamma law with mean ``m`` and
        coefficient of variation ``cv`` (shape ``1 / cv^2``, scale ``m cv^2``), rounded to the
        nearest integer and at least 1, ascending. Quantiles instead of draws keep every
        replication of a cell on the same sizes, so the sizes are a condition of the cell, and
        the realised mean and spread (which rounding moves a little; ``design.csv`` records
        ``m_bar``) are those of a typical sample of ``K`` sizes.
    """
    if cv == 0:
        return np.full(int(scenarios), int(mean))
    shape = 1.0 / cv**2
    quantiles = stats.gamma.ppf((np.arange(scenarios) + 0.5) / scenarios, shape, scale=mean / shape)
    return np.maximum(np.rint(quantiles), 1).astype(np.int64)


def cell_sizes(row: dict) -> np.ndarray:
    """:func:`scenario_sizes` of a design row."""
    return scenario_sizes(int(row["scenarios"]), int(row["replicas"]), float(row["size_cv"]))


def _bootstrap_nsim(nsim: int, scenarios: int, cv: float) -> int:
    if cv == 0:
        return nsim
    return min(nsim, BOOTSTRAP_NSIM_UNEQUAL) if scenarios <= UNEQUAL_BOOTSTRAP_MAX_K else 0


#: The keys of a grid of the coverage study (``--grid FILE``, or ``grid=`` a dict): lists crossed in full.
GRID_KEYS = {
    "p": GridKey(float, lambda v: 0 < v < 1, "numbers in (0, 1) (the true p_u; the true pi is 1 - p)"),
    "rho": GridKey(float, lambda v: 0 <= v < 1, "numbers in [0, 1)"),
    "scenarios": GridKey(int, lambda v: 2 <= v <= 10_000, "whole numbers from 2 to 10000"),
    "replicas": GridKey(int, lambda v: 1 <= v <= 1000, "whole numbers from 1 to 1000"),
    "size_cv": GridKey(float, lambda v: 0 <= v <= 10, "numbers in [0, 10]"),
    "estimand": GridKey(str, lambda v: v in ESTIMANDS, "estimands among p_u, pi", optional=True, default=ESTIMANDS),
    "nsim": GridKey(int, lambda v: v >= 1, "a whole number from 1", optional=True, scalar=True),
}
#: With --from-run the run gives p and rho (and the estimand is p_u).
_FROM_RUN_KEYS = {**{k: v for k, v in GRID_KEYS.items() if k not in ("p", "rho")},
                  "estimand": GridKey(str, lambda v: v == "p_u", "p_u (--from-run draws under-escalation rates)",
                                      optional=True, default=("p_u",))}
_FROM_RUN_REFUSED = {k: "comes from the run of --from-run; leave it out of the grid" for k in ("p", "rho")}


def _outcome_icc(estimand: str, truth: float, rho: float, generator) -> float:
    """Intra-cluster correlation of the outcome whose mean is the estimand (the true-rho oracle's rho)."""
    if isinstance(generator, RunRates):
        return generator.rho
    if generator is logit_normal:
        return observed_icc(truth, rho) if estimand == "p_u" else pair_outcome_icc(
            truth, observed_icc(1.0 - math.sqrt(truth), rho))
    return rho if estimand == "p_u" else pair_outcome_icc(truth, rho)


def _cell_row(estimand: str, truth: float, rho: float, scenarios: int, replicas: int, cv: float, nsim: int,
              generator) -> dict:
    sizes = scenario_sizes(scenarios, replicas, cv)
    return {"estimand": estimand, "p": truth, "rho": rho, "rho_outcome": _outcome_icc(estimand, truth, rho, generator),
            "scenarios": scenarios, "replicas": replicas, "size_cv": cv, "conversations": int(sizes.sum()),
            "m_bar": float((sizes**2).sum() / sizes.sum()), "nsim": nsim,
            "nsim_bootstrap": _bootstrap_nsim(nsim, scenarios, cv)}


def build_design(*, smoke: bool = False, nsim: int | None = None, grid: Mapping[str, Any] | None = None,
                 generator=None) -> pd.DataFrame:
    """The design grid: one row per (estimand, p, rho, scenarios, replicas, size_cv).

    Columns: ``estimand, p`` (true value of the estimand), ``rho`` (intra-scenario correlation
    of the 0/1 outcomes; on the latent scale for the logit-normal generator), ``rho_outcome``
    (intra-cluster correlation of the outcome whose mean is the estimand: ``rho`` for ``p_u`` under
    the beta-binomial, that of the pair outcome for ``pi``), ``scenarios`` (K), ``replicas`` (the mean
    size m), ``size_cv`` (the spread of :func:`scenario_sizes`), ``conversations`` (N, pairs for ``pi``)
    and ``m_bar`` (``sum n_j^2 / N``) of the sizes, ``nsim``, and ``nsim_bootstrap`` (replications of
    the bootstraps; 0 = not run).

    ``grid`` (checked by :func:`read_grid` with :data:`GRID_KEYS`) replaces :data:`FULL_GRID` by the
    full cross product of its lists, ``estimand`` outermost; its ``nsim`` applies unless ``nsim`` is
    given. With a :class:`RunRates` ``generator`` ``p`` and ``rho`` are the run's.
    """
    fixed = nsim if nsim is not None else (grid or {}).get("nsim")
    nsim = int(fixed if fixed is not None else SMOKE_NSIM if smoke else DEFAULT_NSIM)
    rows = []
    if grid is not None:
        values = ({"p": (generator.p,), "rho": (generator.rho,)} if isinstance(generator, RunRates) else grid)
        for estimand in grid["estimand"]:
            for distance in values["p"]:
                truth = distance if estimand == "p_u" else round(1.0 - distance, 12)
                for rho in values["rho"]:
                    for scenarios in grid["scenarios"]:
                        for replicas in grid["replicas"]:
                            for cv in grid["size_cv"]:
                                rows.append(_cell_row(estimand, truth, rho, scenarios, replicas, cv, nsim, generator))
        return pd.DataFrame(rows)
    spec = SMOKE_GRID if smoke else FULL_GRID
    run = isinstance(generator, RunRates)
    for estimand in ("p_u",) if run else ESTIMANDS:
        for distance in (generator.p,) if run else spec["p"]:
            truth = distance if estimand == "p_u" else round(1.0 - distance, 12)
            for rho in (generator.rho,) if run else spec["rho"]:
                for scenarios in spec["scenarios"]:
                    for replicas, cv in spec["sizes"]:
                        if replicas == 1 and rho != spec["rho"][0] and not run:
                            continue  # one conversation a scenario: the data do not depend on rho
                        rows.append(_cell_row(estimand, truth, rho, scenarios, replicas, cv, nsim, generator))
    return pd.DataFrame(rows)


def pair_outcome_icc(pi: float, rho: float) -> float:
    """Intra-case correlation of the pair outcome ``(1 - u)(1 - o)`` under the study's model.

    ``Var(w) / (pi (1 - pi))`` with ``w = (1 - q_u)(1 - q_o)``, ``q ~ Beta`` of mean
    ``a = 1 - sqrt(pi)`` and correlation ``rho``: ``E[(1 - q)^2] = (1 - a)^2 + rho a (1 - a)``.
    """
    a = 1.0 - math.sqrt(pi)
    second_moment = ((1.0 - a) ** 2 + rho * a * (1.0 - a)) ** 2
    return (second_moment - pi**2) / (pi * (1.0 - pi))


def pair_cluster_pmf(pi: float, rho: float, replicas: int) -> np.ndarray:
    """Distribution of a case's number of correct pairs, ``P(T = t)``, ``t = 0 .. m``.

    Given the error counts ``x`` (ESC) and ``y`` (ACT) of a case, their positions among the
    ``m`` replicas are independent uniform subsets, so the replicas where both err number
    ``I ~ Hypergeometric(m, x, y)`` and ``T = m - x - y + I``.
    """
    a = 1.0 - math.sqrt(pi)
    half = cluster_pmf(a, rho, replicas)
    x, y, both = np.ogrid[: replicas + 1, : replicas + 1, : replicas + 1]
    weight = half[x] * half[y] * stats.hypergeom.pmf(both, replicas, x, y)  # 0 outside the support of I
    correct = np.broadcast_to(replicas - x - y + both, weight.shape)
    possible = weight > 0
    return np.bincount(correct[possible], weights=weight[possible], minlength=replicas + 1)


@lru_cache(maxsize=512)
def _size_pmf(estimand: str, p: float, rho: float, size: int) -> np.ndarray:
    """Distribution of the total of one cluster of ``size`` (errors for ``p_u``, correct pairs for ``pi``)."""
    return cluster_pmf(p, rho, size) if estimand == "p_u" else pair_cluster_pmf(p, rho, size)


def _exact(row: dict, sizes: np.ndarray, methods: tuple[UserFunction, ...] = ()) -> dict:
    """``{method: ExactCoverage}`` of the methods whose exact performance is computable in this cell (the
    researcher's ``methods`` where they declare their statistics and the enumeration runs, :mod:`._own_exact`)."""
    pmfs = [_size_pmf(row["estimand"], float(row["p"]), float(row["rho"]), int(n)) for n in sizes]
    own = {}
    enumerated: dict[str, Any] = {}
    for method in methods:
        if method.sufficient is not None:
            if method.sufficient not in enumerated:
                enumerated[method.sufficient] = states(pmfs, sizes, method.sufficient)
            found = enumerated[method.sufficient]
            if found is not None:
                prob, totals = found
                own[method.name] = exact_performance(method, prob, totals, sizes, float(row["p"]), CONFIDENCE)
    law = pmfs[0] if np.all(sizes == sizes[0]) else pmfs
    K = len(sizes)
    exact = {"wilson": exact_coverage(law, K, rho=0.0, confidence=CONFIDENCE),
             "wilson-kish-true-rho": exact_coverage(law, K, rho=float(row["rho_outcome"]), confidence=CONFIDENCE)}
    # unequal sizes: NaN beyond the enumeration's budget (MAX_UNEQUAL_STATES), Monte Carlo there
    return exact | exact_coverages(law, K, SUMS_METHODS, confidence=CONFIDENCE) | own


def _simulate(row: dict, sizes: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    """Cluster totals of ``size`` data sets of one cell, shape ``(size, K)``: errors, or correct pairs for ``pi``."""
    shape = (size, len(sizes))
    if row["estimand"] == "p_u":
        q = cluster_probabilities(row["p"], row["rho"], shape, rng=rng)
    else:
        a = 1.0 - math.sqrt(row["p"])
        q = (1.0 - cluster_probabilities(a, row["rho"], shape, rng=rng)) * (
            1.0 - cluster_probabilities(a, row["rho"], shape, rng=rng))
    return rng.binomial(sizes, q)


def beta_binomial(rng: np.random.Generator, sizes: np.ndarray, row: dict) -> np.ndarray:
    """The study's own generator, the beta-binomial (module docstring), in the contract of a generator
    (:mod:`._generators`): ``sizes`` of shape (data sets, K), equal rows."""
    return _simulate(row, sizes[0], rng, sizes.shape[0])


def _draw(row: dict, sizes: np.ndarray, rng: np.random.Generator, size: int, generator) -> np.ndarray:
    """Cluster totals of ``size`` data sets from ``generator``: None is the beta-binomial; a
    :class:`UserFunction` (the researcher's) is checked."""
    if generator is None:
        return _simulate(row, sizes, rng, size)
    tiled = np.tile(sizes, (size, 1))
    if isinstance(generator, UserFunction):
        return checked_totals(generator.function(rng, tiled, row), tiled, generator.name)
    return generator(rng, tiled, row)


def _own_intervals(methods: tuple[UserFunction, ...], totals: np.ndarray, sizes: np.ndarray) -> dict:
    """The researcher's intervals on the data sets ``totals``: ``{name: (low, high)}``, checked."""
    tiled = np.tile(sizes, (len(totals), 1))
    return {m.name: checked_bounds(m.name, m.function(totals.copy(), tiled.copy(), CONFIDENCE), len(totals))
            for m in methods}


def _intervals(row: dict, sizes: np.ndarray, totals: np.ndarray, rng: np.random.Generator, bootstrapped: int) -> dict:
    """Every method's interval for each data set: ``{method: (low, high)}``; the bootstraps for the first
    ``bootstrapped`` data sets only."""
    sums = ClusterSums.of(totals, sizes)  # what the Wilson-type methods read: one pass over the clusters
    # the two oracles in one call: a column of fixed rhos broadcasts against the data sets
    low, high = cast(tuple[np.ndarray, np.ndarray],  # arrays: a row for each rho
                     clustered_interval(sums, None, "wilson-kish", confidence=CONFIDENCE,
                                        rho=np.array([[0.0], [float(row["rho_outcome"])]])))
    out: dict[str, tuple[float | np.ndarray, float | np.ndarray]] = {"wilson": (low[0], high[0]),
                                                                       "wilson-kish-true-rho": (low[1], high[1])}
    for method in SUMS_METHODS:
        out[method] = clustered_interval(sums, None, method, confidence=CONFIDENCE)
    for method in LIKELIHOOD_METHODS:  # functions of the histogram of the cluster totals, not of the sums
        out[method] = clustered_interval(totals, sizes, method, confidence=CONFIDENCE)
    if bootstrapped:
        # one bootstrap distribution, read twice: what clustered_interval does for each method
        boot = cluster_bootstrap(totals[:bootstrapped], sizes, n_resamples=N_RESAMPLES, rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)  # undefined: counted as not covering
            for method in BOOTSTRAP_METHODS:
                out[method] = boot.confidence_interval(method.removeprefix("bootstrap-"), CONFIDENCE)
    else:
        out.update({method: (np.empty(0), np.empty(0)) for method in BOOTSTRAP_METHODS})
    return {method: (np.asarray(low, dtype=float), np.asarray(high, dtype=float))
            for method, (low, high) in out.items()}


def _chunk(row: dict, seed_seq: np.random.SeedSequence, chunk: int, methods: tuple[UserFunction, ...] = (),
           generator=None) -> tuple[np.ndarray, dict]:
    """Cluster totals and intervals of replications ``chunk * CHUNK ...`` of a cell (the researcher's
    ``methods`` after the study's own, on the same totals; ``generator`` as :func:`_draw`)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed_seq.entropy, spawn_key=seed_seq.spawn_key + (chunk,)))
    start = chunk * CHUNK
    size = min(CHUNK, int(row["nsim"]) - start)
    bootstrapped = min(size, max(int(row["nsim_bootstrap"]) - start, 0))
    sizes = cell_sizes(row)
    totals = _draw(row, sizes, rng, size, generator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)  # an undefined BCa counts as not covering
        intervals = _intervals(row, sizes, totals, rng, bootstrapped)
    return totals, intervals | _own_intervals(methods, totals, sizes)


def cell_intervals(row: dict, seed_seq: np.random.SeedSequence, *, methods: tuple[UserFunction, ...] = (),
                   generator=None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every replication's interval of every method in one cell: ``{method: (low, high)}``.

    The bootstraps have ``nsim_bootstrap`` replications (the first ones), the others ``nsim``;
    ``methods`` and ``generator`` as :func:`run_cell`.
    """
    chunks = [_chunk(row, seed_seq, c, methods, generator)[1] for c in range(math.ceil(int(row["nsim"]) / CHUNK))]
    return _joined(chunks, methods)


def _joined(chunks: list[dict], methods: tuple[UserFunction, ...]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The intervals of the chunks of a cell, one pair of arrays per method."""
    return {method: (np.concatenate([c[method][0] for c in chunks]), np.concatenate([c[method][1] for c in chunks]))
            for method in (*METHODS, *(m.name for m in methods))}


def _performance(low: np.ndarray, high: np.ndarray, truth: float) -> dict:
    """Coverage with its MCSE, the misses below and above, and the mean width of the defined intervals."""
    if low.size == 0:
        return {"nsim": 0, "coverage": math.nan, "coverage_mcse": math.nan, "miss_low": math.nan,
                "miss_high": math.nan, "mean_width": math.nan}
    coverage, below, above = (row["est"] for row in interval_rows(low, high, truth))
    width = high - low
    defined = np.isfinite(width)
    return {"nsim": int(low.size), "coverage": coverage, "coverage_mcse": float(binomial_mcse(coverage, width.size)),
            "miss_low": below, "miss_high": above,
            "mean_width": float(width[defined].mean()) if defined.any() else math.nan}


def _results(intervals: dict, exact: dict, truth: float, rerun: bool) -> list[dict]:
    """One result row per method: its Monte Carlo performance, whether it is a rerun's, and its exact one
    (NaN where not computable)."""
    rows = []
    for method, (low, high) in intervals.items():
        e = exact.get(method)
        performance = _performance(low, high, truth)
        rows.append({"method": method, "nsim": performance.pop("nsim"), "rerun": rerun, **performance,
                     "exact_coverage": e.coverage if e else math.nan, "exact_miss_low": e.miss_low if e else math.nan,
                     "exact_miss_high": e.miss_high if e else math.nan,
                     "exact_mean_width": e.mean_width if e else math.nan})
    return rows


def _borderline(rows: list[dict]) -> dict[str, dict]:
    """The rows of the candidates (not the oracles) whose Monte Carlo coverage, without an exact value, is
    :func:`studies._performance.borderline`."""
    return {r["method"]: r for r in rows if r["method"] not in ORACLES and not np.isfinite(r["exact_coverage"])
            and r["nsim"] > 0 and borderline(r["coverage"], r["coverage_mcse"])}


def _rerun_nsim(coverages) -> int:
    """:func:`studies._performance.rerun_size` in whole chunks (so that more chunks extend a rerun: its first ones
    do not change)."""
    return rerun_size(coverages, CHUNK)


def _rerun_row(row: dict, nsim: int, bootstraps: bool) -> dict:
    """The cell's row for a rerun of ``nsim`` data sets: the bootstraps on every one where ``bootstraps`` (one of
    them was borderline), else on as many as in a main pass of that size."""
    scenarios, cv = int(row["scenarios"]), float(row["size_cv"])
    return {**row, "nsim": nsim, "nsim_bootstrap": nsim if bootstraps else _bootstrap_nsim(nsim, scenarios, cv)}


def run_cell(row: dict, seed_seq: np.random.SeedSequence, *, methods: tuple[UserFunction, ...] = (),
             generator=None, rerun: bool = False) -> list[dict]:
    """Simulate and analyse one design cell: one result row per method, exact fields NaN where not computable.

    ``methods``: the researcher's, after the study's own; ``generator``: None for the beta-binomial, else a
    generator of :mod:`._generators` or a :class:`UserFunction` (then no method is exact).

    ``rerun``: where the cell is borderline (the module docstring; :func:`_borderline`), every method is run
    again on ``nsim`` fresh data sets (:func:`rerun_seed`), ``nsim`` from the borderline methods' coverages
    (:func:`_rerun_nsim`), extended by whole chunks while one of them still has an MCSE above
    :data:`RERUN_MCSE` (its rerun coverage came out nearer 0.5); the bootstraps on every data set where one
    of them was borderline, else as in a main pass. The rows are then the rerun's, with ``rerun`` true.
    """
    intervals = cell_intervals(row, seed_seq, methods=methods, generator=generator)
    exact = _exact(row, cell_sizes(row), methods) if generator is None else {}
    rows = _results(intervals, exact, row["p"], rerun=False)
    close = _borderline(rows) if rerun else {}
    if not close:
        return rows
    seed = rerun_seed(seed_seq)
    chunks: list[dict] = []
    bootstraps = bool(set(close) & set(BOOTSTRAP_METHODS))
    nsim = _rerun_nsim(r["coverage"] for r in close.values())
    while True:
        again = _rerun_row(row, nsim, bootstraps)
        chunks += [_chunk(again, seed, c, methods, generator)[1] for c in range(len(chunks), nsim // CHUNK)]
        rows = _results(_joined(chunks, methods), exact, row["p"], rerun=True)
        short = [r["coverage"] for r in rows if r["method"] in close and r["coverage_mcse"] > RERUN_MCSE]
        if not short:
            return rows
        nsim = _rerun_nsim(short)


def replay_replication(row: dict, *, seed: int, replication: int, methods: tuple[UserFunction, ...] = (),
                       generator=None, rerun: bool = False) -> dict:
    """Recompute one replication of one cell from the root seed (``methods`` and ``generator`` as the run's,
    :func:`run_cell`).

    Parameters
    ----------
    row : dict
        The cell's row of ``design.csv`` (with its ``cell`` index, ``nsim`` and ``nsim_bootstrap``); for a
        replication of a rerun (``rerun=True``), with the rerun's ``nsim`` and ``nsim_bootstrap`` in their
        place: the ``nsim`` of the cell's rows of ``coverage.csv`` (a bootstrap's for ``nsim_bootstrap``).
    seed : int
        The study's root seed (``run.json``).
    replication : int
        Replication index, ``0 .. nsim - 1``.
    rerun : bool
        Replay a replication of the cell's rerun (``rerun`` true in ``coverage.csv``), seeded by
        :func:`rerun_seed`.

    Returns
    -------
    dict
        ``sizes`` and ``totals`` of the clusters (errors, or correct pairs for ``pi``),
        ``truth``, ``intervals`` (``{method: (low, high)}``; the bootstraps only for a
        replication below ``nsim_bootstrap``) and ``covered`` (``{method: bool}``), identical
        to what the study counted.
    """
    if not 0 <= replication < int(row["nsim"]):
        raise ValueError(f"replication must lie in 0 .. {int(row['nsim']) - 1}, got {replication}")
    chunk, index = divmod(replication, CHUNK)
    cell = cell_seed(seed, int(row["cell"]))
    totals, intervals = _chunk(row, rerun_seed(cell) if rerun else cell, chunk, methods, generator)
    truth = row["p"]
    picked = {method: (float(low[index]), float(high[index])) for method, (low, high) in intervals.items()
              if index < low.size}
    return {"truth": truth, "sizes": cell_sizes(row), "totals": totals[index], "intervals": picked,
            "covered": {m: bool(lo <= truth <= hi) for m, (lo, hi) in picked.items()}}


def _draw_figure(draw, table: pd.DataFrame, stem: Path, options: dict, smoke: bool = False) -> list[Path]:
    """Draw ``draw(table, **options)`` and save it as ``stem.png`` and ``stem.pdf``: one figure of the study
    (marked when it is of a ``smoke`` run)."""
    return save_figure(draw(table, **options), stem, smoke=smoke)


def _generator(generator, from_run) -> tuple[Any, Any]:
    """The generator a run draws from (None: the beta-binomial) and what ``run-args.json`` records of it
    (None for the beta-binomial, so that such a run's arguments stay those of a run without the option)."""
    if from_run is not None:
        if generator not in (None, "beta-binomial"):
            raise InputError("give --generator or --from-run, not both", source="generator")
        rates = RunRates.read(from_run)
        return rates, rates.identity()
    if generator in (None, "beta-binomial"):
        return None, None
    if generator == "logit-normal":
        return logit_normal, "logit-normal"
    if isinstance(generator, str) or not callable(generator):
        raise InputError(f"unknown generator {generator!r}; give one of {', '.join(GENERATORS)}, or a function "
                         "g(rng, sizes, row) -> totals", source="generator")
    origin, digest = function_identity(generator)
    own = UserFunction("generator", generator, origin, digest)
    return own, {"function": origin, "source_sha256": digest}


def _probe(design: pd.DataFrame, methods: tuple[UserFunction, ...], generator) -> None:
    """Call the researcher's generator and methods on two data sets of the first cell, before anything is
    written: an error (a wrong shape, a missing bound) stops the run here, with its one-line message."""
    row = design.iloc[0].to_dict()
    totals = _draw(row, cell_sizes(row), np.random.default_rng(0), 2, generator)
    _own_intervals(methods, totals, cell_sizes(row))


def run_coverage_study(out_dir: str | Path, *, smoke: bool = False, nsim: int | None = None, n_jobs: int = 1,
              seed: int = DEFAULT_SEED, progress: bool = True, backend: str = "local",
              scheduler: str | None = None, force: bool = False,
              methods: Mapping[str, Callable | str] | None = None, grid=None, generator: str | Callable | None = None,
              from_run: str | Path | None = None, rerun: bool | None = None) -> pd.DataFrame:
    """Run the coverage study and write its outputs to ``out_dir``.

    Writes ``design.csv`` (before the run), ``coverage.csv`` (columns ``COLUMNS``, one row per
    cell and method; empty where not computable or not run), ``summary.csv`` and
    ``recommendation.csv`` (with Markdown copies), ``run.json``, the figures (PNG and PDF),
    ``report.md`` and ``report.html``. Returns the coverage table. ``backend`` and ``scheduler``
    choose where the cells run and a stopped run resumes in the same folder (:func:`studies._engine.run_cells`);
    ``force`` recomputes into a folder that holds an earlier run (its cells and outputs are
    removed first, :func:`studies._engine.run_cells`). ``rerun`` reruns the borderline cells until their
    borderline methods have an MCSE of at most :data:`RERUN_MCSE` (module docstring, :func:`run_cell`); None
    (the default) reruns them except in a ``smoke`` run, which stays quick (its numbers decide nothing).

    A researcher's own (checked before anything is written; each recorded in ``run-args.json``, so a run
    resumes only with the same):

    - ``methods``: ``{name: f}``, ``f(totals, sizes, confidence) -> (low, high)`` or ``"MODULE:FUNCTION"``
      (:mod:`studies._user_methods`), run beside the study's methods on the same data sets; exact
      where ``f.sufficient`` declares its statistics (:func:`studies.sufficient`).
    - ``grid``: a TOML file or a dict of :data:`GRID_KEYS`, whose full cross product replaces the design.
    - ``generator``: ``"beta-binomial"`` (the default), ``"logit-normal"`` or ``g(rng, sizes, row) -> totals``
      (:mod:`._generators`); ``from_run``: a scored folder whose per-scenario rates are the world. With
      either, every method is Monte Carlo.
    """
    from escalation.figures import coverage_by_p, coverage_by_scenarios, misses_by_method, width_against_coverage

    from ._report import (
        aggregate,
        by_range,
        interval_choice,
        misses,
        recommendation,
        report_markdown,
        summary_by_method,
        summary_cells,
    )

    out_dir = Path(out_dir)
    own = user_functions(methods, builtin=METHODS)
    drawn_by, drawn_as = _generator(generator, from_run)
    read = None if grid is None else (read_grid(grid, _FROM_RUN_KEYS, refused=_FROM_RUN_REFUSED)
                                      if isinstance(drawn_by, RunRates) else read_grid(grid, GRID_KEYS))
    design = build_design(smoke=smoke, nsim=nsim, grid=read, generator=drawn_by)
    if own or drawn_by is not None:
        _probe(design, own, drawn_by)
    rerun = not smoke if rerun is None else bool(rerun)
    facts = {"study": "coverage", "smoke": smoke, "nsim": int(design["nsim"].iloc[0]), "n_resamples": N_RESAMPLES,
             "confidence": CONFIDENCE, "chunk": CHUNK, "bootstrap_nsim_unequal": BOOTSTRAP_NSIM_UNEQUAL,
             "unequal_bootstrap_max_k": UNEQUAL_BOOTSTRAP_MAX_K,
             "rerun": {"floor": FLOOR, "tolerance_mcse": TOLERANCE_MCSE, "mcse": RERUN_MCSE} if rerun else False,
             # a run of other built-in methods (korn-graubard was Wilson's form before 2026-12-04) does not resume
             "builtin_methods": list(METHODS)}
    # the researcher's options enter the run's arguments only when given: a run without them resumes as before
    facts |= {key: value for key, value in (("methods", [m.identity() for m in own]), ("grid", read),
                                            ("generator", drawn_as)) if value}
    cell = CellWithOptions(run_cell, {"methods": own, "generator": drawn_by, "rerun": rerun})
    table = run_cells(design, cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                      backend=backend, scheduler=scheduler, description="coverage cells", run_facts=facts,
                      force=force)
    with step("summarising the cells", progress=progress) as say:
        coverage = table[list(COLUMNS)]
        cells = summary_cells(coverage)
        nominal = {"nominal": CONFIDENCE}
        jobs = []
        for estimand in [e for e in ESTIMANDS if e in set(cells["estimand"])]:
            part = cells[cells["estimand"] == estimand]
            jobs += [(coverage_by_scenarios, aggregate(part, "scenarios"), f"coverage_by_scenarios_{estimand}",
                      nominal), (coverage_by_p, aggregate(part, "p"), f"coverage_by_p_{estimand}", nominal)]
        jobs += [(width_against_coverage, by_range(cells), "width_against_coverage", nominal),
                 (misses_by_method, misses(cells), "misses_by_method", {})]
        say(f"drawing {len(jobs)} figures and writing the tables")
        # a figure takes seconds to draw and save: the workers draw them, like the cells, while the tables are written
        drawn = Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch="all")(
            delayed(_draw_figure)(draw, data, out_dir / stem, options, smoke) for draw, data, stem, options in jobs)
        written = write_table(coverage, out_dir, "coverage", digits=6)
        summary, advice = summary_by_method(cells), recommendation(cells)
        written += write_table(summary, out_dir, "summary",
                               "Coverage of each interval over every cell (exact where computable)", digits=6)
        written += write_table(advice, out_dir, "recommendation",
                               "Which interval holds 95%, by scenarios and replicas", digits=6)
        # what --interval auto reads: the package ships the default run's file (estimators.stats._choice)
        written += write_table(interval_choice(cells), out_dir, "interval_choice", digits=6)
        written += [path for paths in drawn for path in paths]
        say("writing report.md and report.html")
        text = report_markdown(coverage, cells=cells, summary=summary, advice=advice, seed=seed, smoke=smoke,
                               figures=[f.name for f in written if f.suffix == ".png"], confidence=CONFIDENCE,
                               n_resamples=N_RESAMPLES, design=design, own=[m.identity() for m in own],
                               generator=drawn_as, user_grid=read is not None, rerun=rerun)
        written += write_reports(out_dir, text, smoke=smoke, outputs=written)
    record_outputs(out_dir, written)
    return coverage
