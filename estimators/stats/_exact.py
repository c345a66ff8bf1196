"""Exact coverage of the clustered intervals that are functions of the cluster sums, under clustered binary data.

No Monte Carlo: the coverage is a sum over every possible data summary, weighted by its
probability. ``K`` clusters have independent totals ``y_j`` with given distributions (binomial
for independent data, beta-binomial for clustered data, any other for the paired figure). Every
method of ``estimators.stats._constants.SUMS_METHODS`` is a function of the cluster sums
(:class:`estimators.ClusterSums`), and of few of them:

- the total ``Y`` when rho is fixed (Wilson, or Wilson-Kish with a known rho); the clusters may
  then have different sizes and distributions;
- the pair ``(Y, S)``, ``S = sum_j y_j^2``, when the interval reads the data's variation (the
  estimated rho, its upper bound, the Korn-Graubard size) and the clusters are of equal size;
- with clusters of unequal sizes ``n_j`` (or laws), ``(Y, Q)``, ``Q = sum_j y_j^2 / n_j``, for the
  Wilson-Kish methods (Donner's ANOVA reads no other sum of the data) and ``(Y, S, T)``,
  ``T = sum_j y_j n_j``, for the two of the cluster variance (``sum_j (y_j - n_j p)^2 = S - 2 p T +
  p^2 sum_j n_j^2``).

The first two distributions are convolutions of the clusters' distributions computed with a Fourier
transform, the third a sparse convolution over the clusters (:func:`exact_coverages`): exact up to
floating-point rounding (about 1e-12 on a coverage) and the states left out below :data:`NEGLIGIBLE`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft

from ._checks import check_choice, check_count
from ._clustered import interval_of_sums
from ._constants import DEFAULT_INTERVAL, SUMS_METHODS
from ._design import ClusterSums

__all__ = ["ExactCoverage", "exact_coverage", "exact_coverages", "MAX_ESTIMATED_RHO_STATES", "MAX_UNEQUAL_STATES"]

#: Largest number of (Y, S) values ``(K m + 1) (K m (m - 1) / 2 + 1)`` of an estimated-rho
#: enumeration; beyond it the exact coverage is NaN. m = 8 allows K <= 211, m = 3 allows
#: K <= 1053 (the sheared lattice of :func:`exact_coverages` holds about a third of them).
MAX_ESTIMATED_RHO_STATES = 10_000_000
#: States of the enumeration with a probability below this are left out: the Fourier transform's
#: rounding is about 1e-15, so they are noise, and the mass left out is below 1e-9 even at
#: ``MAX_ESTIMATED_RHO_STATES`` states (at 200 clusters of 8, p 0.2 and rho 0.2, 112 thousand of 3.2 million
#: are kept).
NEGLIGIBLE = 1e-16
#: Largest number of candidate states of the enumeration for clusters of unequal sizes or laws (the
#: states reached before a cluster times that cluster's possible totals, before equal states are
#: merged), for each statistic; beyond it the exact coverage of the methods of that statistic is NaN,
#: as it is where a state's key would not fit in 64 bits. A candidate takes about 40 bytes at the
#: merge: 10 million about 400 MB (measured: 400 MB above the process's own). Every K <= 10 cell of the
#: coverage study's unequal sizes fits: the largest (K = 10, m = 8, cv 0.5: sizes 3 .. 16) peaks at
#: 5.0 million candidates for (Y, Q) and 2.4 million for (Y, S, T), K = 10, m = 8, cv 1 at 0.9 and 2.4
#: million. Every cell with K = 30 and m = 3 fits; with m = 8 or K = 100, 200 some do (few errors, weak
#: clustering), in up to 30 s (K = 200, m = 3); one that does not fit is given up after up to 8 s.
MAX_UNEQUAL_STATES = 10_000_000
#: The methods whose unequal-size enumeration is of ``(Y, Q)`` (Donner's ANOVA); the others of
#: :data:`SUMS_METHODS` read the cluster variance, ``(Y, S, T)``.
_ANOVA_METHODS = ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb")


@dataclass(frozen=True)
class ExactCoverage:
    """Exact performance of an interval procedure (probabilities, not estimates).

    Attributes
    ----------
    coverage : float
        ``P(low <= truth <= high)``.
    miss_low : float
        ``P(high < truth)``: the interval lies below the truth.
    miss_high : float
        ``P(low > truth)``: the interval lies above the truth.
    mean_width : float
        ``E[high - low]``.
    truth : float
        The true proportion, ``E[y_j] / m``.
    """

    coverage: float
    miss_low: float
    miss_high: float
    mean_width: float
    truth: float

    def to_dict(self) -> dict:
        """The five numbers as a dict."""
        return {"coverage": self.coverage, "miss_low": self.miss_low, "miss_high": self.miss_high,
                "mean_width": self.mean_width, "truth": self.truth}


def exact_coverage(cluster_pmf, clusters: int, *, method: str = DEFAULT_INTERVAL, rho: float | None = None,
                   confidence: float = 0.95, max_states: int = MAX_ESTIMATED_RHO_STATES,
                   max_unequal_states: int = MAX_UNEQUAL_STATES) -> ExactCoverage:
    """Exact coverage of a clustered interval of the cluster sums for ``clusters`` independent clusters.

    One method of :func:`exact_coverages`, which enumerates the data once for several.

    Parameters
    ----------
    cluster_pmf : array_like, shape (m + 1,), or a sequence of them
        ``P(y_j = t)`` for ``t = 0 .. m``: the distribution of one cluster's total, ``m`` its
        size; the clusters are i.i.d. A Bernoulli pmf ``[1 - p, p]`` with ``clusters = n``
        gives the binomial case. A sequence of ``clusters`` pmfs (of any lengths) gives
        clusters of different sizes or laws.
    clusters : int
        Number of clusters ``K``.
    method : str
        One of :data:`SUMS_METHODS` (:func:`estimators.clustered_interval`).
    rho : float or None
        A fixed intra-cluster correlation for the Wilson-Kish methods (``0`` with
        ``wilson-kish`` gives the plain Wilson interval, which ignores the clustering);
        ``None`` reads it from each data set as SPEC section 5 does.
    confidence : float
        Two-sided level of the interval.
    max_states : int
        When the interval reads the data's variation and the clusters are i.i.d., the largest
        number of ``(Y, S)`` values to enumerate; beyond it every field of the result but
        ``truth`` is NaN (see ``MAX_ESTIMATED_RHO_STATES``).
    max_unequal_states : int
        The same for clusters of unequal sizes or laws: the most candidate states of their
        sparse enumeration (see ``MAX_UNEQUAL_STATES``).

    Returns
    -------
    ExactCoverage

    Notes
    -----
    With ``method="wilson-kish"`` and a fixed rho the interval is a function of
    ``Y = sum_j y_j``, whose distribution is the convolution of the clusters' pmfs. Otherwise
    it is a function of ``(Y, S)``; rather than enumerating the ``C(K + m, m)`` multisets of
    cluster totals, we enumerate the values of ``(Y, V)``, ``V = (S - Y) / 2 - c Y`` with
    ``c = floor((m - 1) / 2)``, whose distribution is the ``K``-fold convolution of the
    one-cluster distribution placed at ``(t, t (t - 1) / 2 - c t)``, ``t = 0 .. m``. The
    shear ``c Y`` (a one-to-one map of the lattice) narrows the second coordinate of a
    cluster from ``m (m - 1) / 2 + 1`` values to about ``m^2 / 8 + 1`` (11 instead of 29 for
    m = 8). Convolutions are powers (or products) of a discrete Fourier transform of a size
    that cannot wrap around.

    With clusters of unequal sizes or laws the statistic has more coordinates (the module
    docstring) and no small lattice: it is enumerated as a sparse convolution, clusters added one
    at a time (:func:`exact_coverages`).

    Examples
    --------
    Wilson interval, n = 10, p = 0.0175 (Brown, Cai & DasGupta 2001): only ``y = 0`` covers.

    >>> p = 0.0175
    >>> round(exact_coverage([1 - p, p], 10, rho=0.0).coverage, 4)
    0.8382
    """
    return exact_coverages(cluster_pmf, clusters, (method,), rho=rho, confidence=confidence,
                           max_states=max_states, max_unequal_states=max_unequal_states)[method]


def exact_coverages(cluster_pmf, clusters: int, methods=SUMS_METHODS, *, rho: float | None = None,
                    confidence: float = 0.95, max_states: int = MAX_ESTIMATED_RHO_STATES,
                    max_unequal_states: int = MAX_UNEQUAL_STATES) -> dict[str, ExactCoverage]:
    """:func:`exact_coverage` of several methods on one enumeration of the data: ``{method: ExactCoverage}``.

    States of probability below :data:`NEGLIGIBLE` are left out (rounding noise of the transform).

    Clusters of unequal sizes or laws, with a method that reads the data's variation (or several
    methods), are enumerated by :func:`_sparse_distribution`: ``(Y, Q)`` for the Wilson-Kish
    methods, ``(Y, S, T)`` for ``wilson-cluster-t`` and ``korn-graubard``, each only where one of
    the ``methods`` needs it. The states of ``(Y, S, T)`` are then merged by ``(Y, D)``, ``D = N^2
    sum_j (y_j - n_j Y / N)^2 = N^2 S - 2 N Y T + Y^2 sum_j n_j^2`` (an integer), on which those two
    methods depend: a third as many intervals to compute. Each interval is computed by
    ``interval_of_sums`` from the sums of a reachable data set of its state (the sums the method
    does not read are NaN). Measured (one core of a shared two-core machine, numpy 2): the coverage
    study's largest unequal cell with K <= 10 (K = 10, m = 8, cv 0.5: sizes 3 .. 16; up to 1.4 million
    values of ``(Y, Q)``, 0.7 million of ``(Y, S, T)``, 0.2 million of ``(Y, D)``) takes at most 1.5 s
    for the five methods (``p_u``, p 0.5, rho 0.5); the study's 576 cells with unequal sizes and
    K <= 10 (both estimands) take 71 s in all.
    """
    methods = tuple(methods)
    for method in methods:
        check_choice("methods", method, SUMS_METHODS)
    clusters = check_count("clusters", clusters, whole_floats=True)
    pmfs, identical = _check_pmfs(cluster_pmf, clusters)
    sizes = np.array([pmf.size - 1 for pmf in pmfs])
    truth = float(sum(np.arange(pmf.size) @ pmf for pmf in pmfs) / sizes.sum())
    by_total = rho is not None and set(methods) <= {"wilson-kish"}
    if not by_total and not (identical or all(np.array_equal(pmf, pmfs[0]) for pmf in pmfs)):
        return _sparse_coverages(pmfs, methods, truth, rho=rho, confidence=confidence, max_states=max_unequal_states)
    if by_total:
        prob = (_convolution_power(pmfs[0][:, None], clusters) if identical
                else _product_of_transforms([pmf[:, None] for pmf in pmfs]))[:, 0]
        ones = np.nonzero(prob > NEGLIGIBLE)[0]
        sums = ClusterSums(np.float64(sizes.sum()), np.float64(clusters), ones.astype(float), 0.0, 0.0, 0.0,
                           np.float64((sizes**2).sum()))
        prob = prob[ones]
    else:
        size = int(sizes[0])
        if (clusters * size + 1) * (clusters * size * (size - 1) // 2 + 1) > max_states:
            return {m: ExactCoverage(np.nan, np.nan, np.nan, np.nan, truth) for m in methods}
        # a cluster of total t is placed at (t, v(t)), v(t) = t (t - 1) / 2 - c t: V = (S - Y) / 2 - c Y
        t = np.arange(size + 1)
        shear = (size - 1) // 2
        v = t * (t - 1) // 2 - shear * t
        placed = np.zeros((size + 1, v.max() - v.min() + 1))
        placed[t, v - v.min()] = pmfs[0]
        prob = _convolution_power(placed, clusters)
        ones, column = np.nonzero(prob > NEGLIGIBLE)
        half_pairs = column + clusters * v.min() + shear * ones  # (S - Y) / 2
        sums = ClusterSums.balanced(ones, 2 * half_pairs + ones, clusters, size)
        prob = prob[ones, column]
    return {m: _summarise(prob, *interval_of_sums(sums, m, confidence=confidence, rho=rho), truth) for m in methods}


def _sparse_coverages(pmfs: list[np.ndarray], methods: tuple[str, ...], truth: float, *, rho: float | None,
                      confidence: float, max_states: int) -> dict[str, ExactCoverage]:
    """:func:`exact_coverages` of clusters of unequal sizes or laws, by :func:`_sparse_distribution`."""
    sizes = np.array([pmf.size - 1 for pmf in pmfs])
    N, K, size_sq = int(sizes.sum()), len(sizes), int((sizes**2).sum())
    t = [np.arange(n + 1) for n in sizes]
    out: dict[str, ExactCoverage] = {}
    anova = [m for m in methods if m in _ANOVA_METHODS]
    lcm = math.lcm(*map(int, np.unique(sizes)))  # Q times the sizes' least common multiple is an integer
    if anova and N * lcm < 2**63:  # and at most N lcm: Q is enumerated exactly, in 64 bits
        found = _sparse_distribution(pmfs, [np.stack([tj, tj * tj * (lcm // int(n))]) for tj, n in zip(t, sizes)],
                                     max_states)
        if found is not None:
            prob, (ones, q_lcm) = found
            nan = np.full(ones.shape, np.nan)
            sums = ClusterSums(np.float64(N), np.float64(K), ones.astype(float), nan, q_lcm / lcm, nan,
                               np.float64(size_sq))
            out |= {m: _summarise(prob, *interval_of_sums(sums, m, confidence=confidence, rho=rho), truth)
                    for m in anova}
    variance = [m for m in methods if m not in _ANOVA_METHODS]
    if variance and (N + 1) * (N * N * size_sq + 1) < 2**63:  # the key of (Y, D) fits in 64 bits
        found = _sparse_distribution(pmfs, [np.stack([tj, tj * tj, tj * n]) for tj, n in zip(t, sizes)], max_states)
        if found is not None:
            prob, (ones, squares, ones_size) = found
            spread = N * N * squares - 2 * N * ones * ones_size + ones * ones * size_sq  # D: an integer
            keys, first, merged = np.unique(ones + (N + 1) * spread, return_index=True, return_inverse=True)
            prob = np.bincount(merged, weights=prob, minlength=keys.size)
            nan = np.full(first.shape, np.nan)
            sums = ClusterSums(np.float64(N), np.float64(K), ones[first].astype(float), squares[first].astype(float),
                               nan, ones_size[first].astype(float), np.float64(size_sq))
            out |= {m: _summarise(prob, *interval_of_sums(sums, m, confidence=confidence, rho=rho), truth)
                    for m in variance}
    return {m: out.get(m, ExactCoverage(np.nan, np.nan, np.nan, np.nan, truth)) for m in methods}


def _sparse_distribution(pmfs: list[np.ndarray], steps: list[np.ndarray],
                         max_states: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Distribution of ``sum_j steps[j][:, y_j]`` over independent cluster totals ``y_j ~ pmfs[j]``.

    Parameters
    ----------
    pmfs : list of ndarray
        ``P(y_j = t)``, ``t = 0 .. n_j``, of each cluster.
    steps : list of ndarray of int, shape (d, n_j + 1)
        What a total ``t`` of cluster ``j`` adds to each of the ``d`` non-negative integer coordinates.
    max_states : int
        The most candidate states (states so far times the next cluster's possible totals).

    Returns
    -------
    (prob, values) or None
        The probabilities of the reachable states above :data:`NEGLIGIBLE` and their coordinates,
        shape ``(d, states)``; None beyond ``max_states`` or where a key would not fit in 64 bits.

    Notes
    -----
    A state is one integer, its coordinates in mixed radix (each digit below its largest sum, so
    adding a cluster never carries). The clusters are added largest first (the candidates peak lower
    than smallest first: 5.0 against 6.9 million for the study's K = 10, m = 8, cv 0.5); after each, the
    ``n_j + 1`` shifted copies of the sorted keys are sorted together (a stable sort merges sorted
    runs), equal keys merged and states below :data:`NEGLIGIBLE` dropped: the mass left out is below
    ``K`` times the states times :data:`NEGLIGIBLE` (at most 1.04e-11 in the coverage study's cells with
    K = 10 and unequal sizes).
    """
    highest = sum(step.max(axis=1).astype(object) for step in steps)  # Python integers: no overflow
    if math.prod(h + 1 for h in highest) >= 2**63:
        return None
    radix = np.array([math.prod(h + 1 for h in highest[:i]) for i in range(len(highest))], dtype=np.int64)
    keys, prob = np.zeros(1, dtype=np.int64), np.ones(1)
    for j in np.argsort([-pmf.size for pmf in pmfs], kind="stable"):
        possible = np.nonzero(pmfs[j] > 0)[0]
        if keys.size * possible.size > max_states:
            return None
        candidates = (radix @ steps[j][:, possible])[:, None] + keys[None, :]  # rows: sorted runs
        order = np.argsort(candidates, axis=None, kind="stable")
        candidates = candidates.ravel()[order]
        new = np.concatenate([[True], candidates[1:] != candidates[:-1]])
        keys = candidates[new]
        prob = np.add.reduceat((pmfs[j][possible, None] * prob[None, :]).ravel()[order], np.flatnonzero(new))
        kept = prob > NEGLIGIBLE
        keys, prob = keys[kept], prob[kept]
    return prob, (keys[None, :] // radix[:, None]) % (np.array(highest, dtype=np.int64) + 1)[:, None]


def _check_pmfs(cluster_pmf, clusters: int) -> tuple[list[np.ndarray], bool]:
    """The clusters' pmfs (one per cluster) and whether they all are the same one."""
    many = isinstance(cluster_pmf, (list, tuple)) and len(cluster_pmf) > 0 and all(np.ndim(p) == 1
                                                                                  for p in cluster_pmf)
    pmfs = [np.asarray(p, dtype=float) for p in cluster_pmf] if many else [np.asarray(cluster_pmf, dtype=float)]
    lengths = np.array([pmf.size for pmf in pmfs])
    stacked = np.concatenate([pmf.ravel() for pmf in pmfs])
    if (pmfs[0].ndim != 1 or lengths.min() < 2 or np.any(stacked < 0)
            or not np.allclose(np.add.reduceat(stacked, np.cumsum(lengths) - lengths), 1.0, atol=1e-9)):
        raise ValueError("cluster_pmf must be a 1-d probability vector over totals 0 .. m (m >= 1), "
                         "or a sequence of them")
    if many and len(pmfs) != clusters:
        raise ValueError(f"{len(pmfs)} cluster pmfs given for {clusters} clusters")
    return (pmfs, False) if many else (pmfs * clusters, True)


def _product_of_transforms(pmfs_2d) -> np.ndarray:
    """Distribution of the sum of independent 2-d lattice variables (one column here).

    The transform of each distinct pmf is computed once; the product runs over the clusters in order.
    """
    length = sum(p.shape[0] - 1 for p in pmfs_2d) + 1
    shape = fft.next_fast_len(length, real=True)
    transforms: dict[bytes, np.ndarray] = {}
    transform = np.ones(shape // 2 + 1, dtype=complex)
    for pmf in pmfs_2d:
        key = pmf.tobytes()
        if key not in transforms:
            transforms[key] = fft.rfft(pmf[:, 0], n=shape)
        transform = transform * transforms[key]
    return np.maximum(fft.irfft(transform, n=shape)[:length], 0.0)[:, None]


def _convolution_power(pmf_2d, power: int) -> np.ndarray:
    """Distribution of the sum of ``power`` independent copies of a 2-d lattice variable.

    The transform is taken along the second axis for the rows of ``pmf_2d`` only, then along
    the first with zero padding: what ``rfftn`` computes, without transforming the padded rows.
    """
    out_shape = tuple(power * (s - 1) + 1 for s in pmf_2d.shape)
    shape = tuple(fft.next_fast_len(s, real=True) for s in out_shape)
    transform = fft.fft(fft.rfft(pmf_2d, n=shape[1], axis=1), n=shape[0], axis=0)
    return fft.irfftn(_integer_power(transform, power), s=shape, overwrite_x=True)[: out_shape[0], : out_shape[1]]


def _integer_power(z: np.ndarray, power: int) -> np.ndarray:
    """``z ** power`` for an integer ``power >= 1``, by multiplications only, in the memory of ``z``.

    numpy's ``**`` multiplies (binary powering) for integer exponents below 100 and from 100 on
    computes ``exp(power log z)``, about fifteen times slower; a larger power is the square of
    half of it (times ``z`` when odd), so that only the multiplying ``**`` is used. Its relative
    error grows with the power as it does below 100: an exact coverage at 200 clusters moves by
    up to 4e-14 (against a convolution without transform, both are within 5e-14).
    """
    if power < 100:
        z **= power
        return z
    odd = z.copy() if power % 2 else None
    out = _integer_power(z, power // 2)
    out *= out
    if odd is not None:
        out *= odd
    return out


def _summarise(prob, low, high, truth) -> ExactCoverage:
    """Probability-weighted coverage, misses on each side and width."""
    prob, low, high = np.broadcast_arrays(prob, low, high)
    covers = (low <= truth) & (truth <= high)
    return ExactCoverage(
        coverage=float(prob[covers].sum()),
        miss_low=float(prob[high < truth].sum()),
        miss_high=float(prob[low > truth].sum()),
        mean_width=float((prob * (high - low)).sum()),
        truth=truth,
    )
