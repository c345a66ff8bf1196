"""Cluster bootstrap of a rate and of the paired figure pi: whole clusters are resampled.

A rate is ``sum_j y_j / sum_j n_j`` over clusters (scenarios) with ``y_j`` errors out of ``n_j``
conversations; ``pi`` is the same ratio over cases, with ``y_j`` the correct pairs of case ``j``
and ``n_j`` its complete pairs. The bootstrap draws ``K`` clusters with replacement, ``B`` times,
and reads percentile, basic and BCa intervals off the ``B`` resampled rates.
:func:`paired_cluster_bootstrap` resamples the clusters of two assistants at once, for the
difference of their rates; both share the input checks, the direct resampling of clusters and
the jackknife acceleration written here.

Everything is vectorised over leading axes: one call bootstraps thousands of data sets.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._checks import check_choice, check_count, check_level
from ._intervals import ConfidenceInterval

__all__ = ["ClusterBootstrapResult", "DegenerateIntervalWarning", "cluster_bootstrap", "cluster_bootstrap_pi",
           "resampled_cluster_sums", "percentile_positions", "percentile_interval",
           "paired_cluster_bootstrap"]

# Largest (data sets x grid points) array the exact-distribution sampler builds; beyond it the
# clusters themselves are resampled (same distribution, more random numbers).
_MAX_GRID_CELLS = 2**23
# Probabilities below this are rounding noise of the Fourier transform (about 1e-15) and are set
# to zero, so that no resample lands on an impossible value.
_PMF_FLOOR = 1e-13
_METHODS = ("percentile", "basic", "bca")
# Resamples drawn at once when clusters are resampled directly, so memory stays bounded.
_BLOCK = 256


class DegenerateIntervalWarning(RuntimeWarning):
    """An interval is undefined for some data sets and was returned as NaN."""


@dataclass(frozen=True)
class ClusterBootstrapResult:
    """Bootstrap distribution of a ratio of cluster sums, for each data set.

    Attributes
    ----------
    estimate : ndarray
        ``sum y / sum n`` of each data set (NaN when it has no cluster).
    support : ndarray, shape (..., G)
        Values the resampled ratio can take, ascending along the last axis.
    counts : ndarray, shape (..., G)
        How many of the ``n_resamples`` resamples took each value of ``support``.
    acceleration : ndarray
        Jackknife acceleration ``a`` of the BCa interval (NaN where undefined).
    n_resamples : int
        Number of bootstrap resamples ``B``.
    """

    estimate: np.ndarray
    support: np.ndarray
    counts: np.ndarray
    acceleration: np.ndarray
    n_resamples: int

    @cached_property
    def _cumulative(self) -> np.ndarray:
        """Number of resamples at or below each value of ``support``."""
        return np.cumsum(self.counts, axis=-1)

    def _count_below(self, value, *, inclusive: bool) -> np.ndarray:
        """Resamples below (or at or below) ``value``, one value per data set."""
        below = self.support <= value[..., None] if inclusive else self.support < value[..., None]
        index = below.sum(axis=-1, keepdims=True)
        counted = np.take_along_axis(self._cumulative, np.maximum(index - 1, 0), axis=-1)[..., 0]
        return np.where(index[..., 0] > 0, counted, 0)

    @property
    def standard_error(self) -> np.ndarray:
        """Standard deviation of the resampled ratios (``ddof=1``); NaN when ``B < 2``."""
        support = np.where(self.counts > 0, self.support, 0.0)
        mean = (self.counts * support).sum(axis=-1) / self.n_resamples
        ss = (self.counts * (support - mean[..., None]) ** 2).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(ss / (self.n_resamples - 1)) if self.n_resamples > 1 else np.full_like(mean, np.nan)

    def confidence_interval(self, method: str = "percentile", confidence: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval at ``confidence``.

        Parameters
        ----------
        method : {"percentile", "basic", "bca"}
            Percentile or bias-corrected and accelerated interval (Efron & Tibshirani 1993,
            sections 13.3 and 14.3), or basic interval (Davison & Hinkley 1997, eq. 5.6).
        confidence : float
            Two-sided level, strictly between 0 and 1.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``. The BCa interval is NaN, with a ``DegenerateIntervalWarning``,
            where its acceleration is undefined (every cluster has the same rate, so the
            jackknife does not vary, or fewer than two clusters) or its bias correction is
            infinite (the estimate lies outside the bootstrap distribution).

        Notes
        -----
        Quantiles interpolate linearly between order statistics (``numpy.quantile``'s
        default). The BCa bias correction counts ties half (``z0 = Phi^-1((#{< est} +
        #{<= est}) / 2B)``), as ``scipy.stats.bootstrap`` does, which matters for a rate
        because its resampled values are few and tied.
        """
        method = check_choice("method", str(method).lower(), _METHODS)
        confidence = check_level("confidence", confidence)
        alpha = (1.0 - confidence) / 2.0
        levels = np.broadcast_to(np.array([alpha, 1.0 - alpha]), self.estimate.shape + (2,))
        if method == "bca":
            levels = self._bca_levels(alpha)
        quantiles = _quantile_from_counts(self.support, self._cumulative, levels)
        low, high = quantiles[..., 0], quantiles[..., 1]
        if method == "basic":
            low, high = 2.0 * self.estimate - high, 2.0 * self.estimate - low
        return ConfidenceInterval(low[()], high[()])

    def _bca_levels(self, alpha: float) -> np.ndarray:
        """Adjusted quantile levels of the BCa interval (Efron & Tibshirani 1993, eq. 14.10)."""
        from scipy.special import ndtr, ndtri  # here: importing this module (to score) needs no scipy

        below = self._count_below(self.estimate, inclusive=False)
        at_or_below = self._count_below(self.estimate, inclusive=True)
        z0 = ndtri((below + at_or_below) / (2.0 * self.n_resamples))
        a = self.acceleration
        undefined = ~(np.isfinite(z0) & np.isfinite(a)) & np.isfinite(self.estimate)
        if undefined.any():
            warnings.warn(
                f"BCa interval undefined for {int(undefined.sum())} of {undefined.size} data set(s): "
                "every cluster has the same rate (the jackknife does not vary) or the estimate lies "
                "outside the bootstrap distribution; returned NaN.",
                DegenerateIntervalWarning, stacklevel=3)
        z = ndtri(np.array([alpha, 1.0 - alpha]))
        with np.errstate(invalid="ignore", divide="ignore"):
            shifted = z0[..., None] + z
            levels = ndtr(z0[..., None] + shifted / (1.0 - a[..., None] * shifted))
        return np.where(undefined[..., None], np.nan, levels)


def cluster_bootstrap(totals, sizes, *, n_resamples: int = 999, rng: np.random.Generator) -> ClusterBootstrapResult:
    """Cluster bootstrap of the ratio ``sum_j y_j / sum_j n_j``: resample whole clusters.

    Parameters
    ----------
    totals : array_like of int, shape (..., K)
        Ones (errors, or correct pairs for ``pi``) in each cluster, on the last axis.
    sizes : array_like of int, broadcastable to ``totals``
        Cluster sizes ``n_j``. A size of 0 marks an absent cluster: it is not resampled, so
        data sets with fewer clusters can share one array.
    n_resamples : int
        Number of bootstrap resamples ``B`` (default 999).
    rng : numpy.random.Generator
        Source of randomness (keyword, required).

    Returns
    -------
    ClusterBootstrapResult
        Call ``.confidence_interval(method, confidence)`` for percentile, basic or BCa intervals.

    Notes
    -----
    A resample draws ``k`` of the ``k`` present clusters with replacement and takes the ratio
    of the drawn sums, ``Y* / N*`` (Davison & Hinkley 1997, section 3.8). Only the pair
    ``(Y*, N*)`` matters, and its distribution is the ``k``-fold convolution of the empirical
    distribution of ``(y_j, n_j)``; it is computed exactly with a Fourier transform and the
    ``B`` resampled values are then drawn from it as one multinomial count per possible value.
    This gives the ``B`` resampled ratios the same joint distribution as drawing cluster
    indices, with ``O(G)`` random numbers per data set instead of ``O(B K)`` (``G`` = number
    of possible values of ``(Y*, N*)``; probabilities below 1e-13, the transform's rounding
    level, are set to zero). When the grid of values is too large (many clusters of very
    different sizes) the clusters are resampled directly with multinomial counts.

    The BCa acceleration comes from the leave-one-cluster-out jackknife (Efron & Tibshirani
    1993, eq. 14.15).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> res = cluster_bootstrap([0, 1, 3, 0, 2, 0, 1, 0], 4, rng=rng)
    >>> float(res.estimate)
    0.21875
    >>> low, high = res.confidence_interval("percentile")
    """
    y, n = _bootstrap_iv(totals, sizes, n_resamples, rng)
    batch_shape = y.shape[:-1]
    y = y.reshape(-1, y.shape[-1])
    n = n.reshape(-1, n.shape[-1])
    present = n > 0
    clusters = present.sum(axis=-1)
    Y, N = y.sum(axis=-1), n.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(N > 0, Y / np.where(N > 0, N, 1), np.nan)
    grid_y = clusters.max() * y.max() + 1
    smallest = np.where(present, n, n.max()).min(axis=-1)
    grid_n = clusters.max() * (np.where(present, n - smallest[:, None], 0)).max() + 1
    if len(y) * grid_y * grid_n <= _MAX_GRID_CELLS:
        support, pmf = _ratio_distribution(y, n, present, clusters, smallest)
        counts = rng.multinomial(n_resamples, pmf)
    else:
        support, counts = _resample_clusters(y, n, present, clusters, n_resamples, rng)
    empty = clusters == 0
    support[empty] = np.nan
    acceleration = _ratio_acceleration(y, n, present, Y, N)
    G = support.shape[-1]
    return ClusterBootstrapResult(
        estimate=estimate.reshape(batch_shape),
        support=support.reshape(batch_shape + (G,)),
        counts=counts.reshape(batch_shape + (G,)),
        acceleration=acceleration.reshape(batch_shape),
        n_resamples=n_resamples,
    )


def cluster_bootstrap_pi(u, o, *, n_resamples: int = 999, rng: np.random.Generator) -> ClusterBootstrapResult:
    """Cluster bootstrap of the paired figure ``pi``, resampling cases (SPEC section 5).

    Parameters
    ----------
    u : array_like, shape (..., cases, replicas)
        Under-escalation outcome (0/1) of the ESC conversation of each case and replica;
        NaN where that conversation is missing or not evaluated.
    o : array_like, same shape
        Over-escalation outcome (0/1) of the ACT conversation with the same replica.
    n_resamples : int
        Number of bootstrap resamples.
    rng : numpy.random.Generator
        Source of randomness (keyword, required).

    Returns
    -------
    ClusterBootstrapResult
        The bootstrap of ``pi = mean over complete pairs of (1 - u)(1 - o)``, where a case's
        cluster total is its number of correct pairs and its size its number of complete pairs.
        Cases without a complete pair are not resampled.
    """
    u = np.asarray(u, dtype=float)
    o = np.asarray(o, dtype=float)
    if u.shape != o.shape or u.ndim < 2:
        raise ValueError(f"u and o must have the same shape (..., cases, replicas), got {u.shape} and {o.shape}")
    complete = np.isfinite(u) & np.isfinite(o)
    correct = complete & (np.where(complete, u, 1.0) == 0) & (np.where(complete, o, 1.0) == 0)
    return cluster_bootstrap(correct.sum(axis=-1), complete.sum(axis=-1), n_resamples=n_resamples, rng=rng)


def paired_cluster_bootstrap(totals_a, sizes_a, totals_b, sizes_b, *, n_resamples: int = 2000,
                             rng: np.random.Generator) -> list[ClusterBootstrapResult]:
    """Paired cluster bootstrap of ``Y_b / N_b - Y_a / N_a``: clusters resampled for A and B at once.

    Parameters
    ----------
    totals_a, sizes_a, totals_b, sizes_b : array_like of int, shape (M, K) or (K,)
        Ones and sizes of each of ``K`` clusters (last axis) for assistants A and B, for
        ``M`` figures of the *same* clusters (e.g. ``p_u``, ``p_o`` and ``pi`` per case).
        All figures share every resample, so their joint distribution is kept. A cluster of
        size 0 in one figure is still drawn (it adds nothing to that figure).
    n_resamples : int
        Bootstrap resamples ``B``.
    rng : numpy.random.Generator
        Source of randomness (keyword, required).

    Returns
    -------
    list of ClusterBootstrapResult
        One per figure, so ``.confidence_interval(method, confidence)`` gives percentile,
        basic or BCa intervals. Resamples where a side has ``N = 0`` are left out
        (``n_resamples`` of the result counts the others); the acceleration is the
        leave-one-cluster-out jackknife of the difference (Efron & Tibshirani 1993, eq. 14.15).

    Raises
    ------
    ValueError, TypeError
        As :func:`cluster_bootstrap` for each side; also when the two sides do not broadcast.

    Notes
    -----
    Each resample draws multiplicities ``w ~ Multinomial(K, 1/K)`` and sums ``w * y`` and
    ``w * n`` for both assistants (Davison & Hinkley 1997, section 3.8; pairs resampled as
    units), in blocks of 256 resamples so memory stays bounded. A resampled difference equal to
    the estimate as a fraction is equal to it in the result (:func:`_ties_counted_exactly`), so
    BCa counts its ties exactly.
    """
    ya, na = _bootstrap_iv(totals_a, sizes_a, n_resamples, rng)
    yb, nb = _bootstrap_iv(totals_b, sizes_b, n_resamples, rng)
    try:
        ya, na, yb, nb = (np.atleast_2d(x).astype(float) for x in np.broadcast_arrays(ya, na, yb, nb))
    except ValueError:
        raise ValueError(f"the clusters of A (shape {ya.shape}) and B (shape {yb.shape}) do not match") from None
    if ya.ndim != 2:
        raise ValueError(f"totals must have shape (figures, clusters) or (clusters,), got {ya.shape}")
    figures, clusters = ya.shape
    if clusters == 0:
        raise ValueError("there must be at least one cluster")
    blocks: list[np.ndarray] = []
    uniform = np.full((1, clusters), 1.0 / clusters)
    for weights in _multiplicities(np.array([clusters]), uniform, n_resamples, rng):
        weights = weights[:, 0].astype(float)
        blocks.append(np.stack([weights @ x.T for x in (yb, nb, ya, na)]))  # (4, b, figures): whole numbers
    sums = np.concatenate(blocks, axis=1).transpose(0, 2, 1)  # (4, figures, B)
    totals = np.stack([x.sum(-1) for x in (yb, nb, ya, na)])  # (4, figures)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = sums[0] / sums[1] - sums[2] / sums[3]
        estimate = totals[0] / totals[1] - totals[2] / totals[3]
        leave_out = ((yb.sum(-1, keepdims=True) - yb) / (nb.sum(-1, keepdims=True) - nb)
                     - (ya.sum(-1, keepdims=True) - ya) / (na.sum(-1, keepdims=True) - na))
    draws = _ties_counted_exactly(draws, sums, estimate, totals)
    acceleration = _acceleration(leave_out, np.isfinite(leave_out))
    results = []
    for i in range(figures):
        finite = np.isfinite(draws[i])
        support = np.sort(draws[i][finite]) if finite.any() else np.array([np.nan])
        results.append(ClusterBootstrapResult(
            estimate=np.asarray(estimate[i]), support=support,
            counts=np.ones(support.shape, dtype=np.int64) * finite.any(),
            acceleration=np.asarray(acceleration[i]), n_resamples=max(int(finite.sum()), 1)))
    return results


#: How far apart two differences of rates ``Y_b / N_b - Y_a / N_a`` (rates in [0, 1]) can be computed when they
#: are equal as fractions: each division and the subtraction round by at most 2^-53 of a value at most 1, so
#: each difference is within 3 * 2^-53 of its value and two equal ones within 6 * 2^-53; a margin above it.
_TIE_TOLERANCE = 8 * 2.0**-53


def _ties_counted_exactly(draws, sums, estimate, totals):
    """The paired bootstrap's ``draws`` with their order against the ``estimate`` made exact.

    A draw ``Y*_b / N*_b - Y*_a / N*_a`` equal to the estimate as a fraction can differ from it in floating
    point (``3/10 - 1/10`` is 0.19999999999999998, ``4/10 - 2/10`` is 0.2), which miscounts BCa's ties. The
    draws within :data:`_TIE_TOLERANCE` of the estimate are compared with it in integer arithmetic (``sums``
    (4, figures, B) and ``totals`` (4, figures) hold ``Y_b, N_b, Y_a, N_a``, whole numbers): an equal one takes
    the estimate's value, and one on the other side of it in floating point the next value on its own side.
    """
    near = np.abs(draws - estimate[:, None]) <= _TIE_TOLERANCE
    if not near.any():
        return draws
    figure, resample = np.nonzero(near)
    yb, nb, ya, na = (np.rint(x[figure, resample]).astype(np.int64).astype(object) for x in sums)
    Yb, Nb, Ya, Na = (np.rint(x[figure]).astype(np.int64).astype(object) for x in totals)
    # sign of (yb / nb - ya / na) - (Yb / Nb - Ya / Na), in Python's unbounded integers
    excess = (yb * na - ya * nb) * (Nb * Na) - (Yb * Na - Ya * Nb) * (nb * na)
    value, drawn = estimate[figure], draws[figure, resample]
    fixed = np.where(excess == 0, value,
                     np.where(excess > 0, np.maximum(drawn, np.nextafter(value, np.inf)),
                              np.minimum(drawn, np.nextafter(value, -np.inf))))
    out = draws.copy()
    out[figure, resample] = fixed
    return out


def _bootstrap_iv(totals, sizes, n_resamples, rng):
    """Validate the inputs of ``cluster_bootstrap``; return int64 arrays of equal shape."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    check_count("n_resamples", n_resamples, whole_floats=True)
    y = np.asarray(totals)
    n = np.asarray(sizes)
    if y.ndim < 1:
        raise ValueError("totals must have at least one axis (the clusters)")
    try:
        y, n = np.broadcast_arrays(y, n)
    except ValueError:
        raise ValueError(f"sizes of shape {n.shape} do not broadcast to totals of shape {y.shape}") from None
    for name, a in (("totals", y), ("sizes", n)):
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)) or np.any(a < 0):
            raise ValueError(f"{name} must be non-negative integers")
    if np.any(y > n):
        raise ValueError("totals must not exceed sizes")
    return y.astype(np.int64), n.astype(np.int64)


def _ratio_distribution(y, n, present, clusters, smallest):
    """Exact bootstrap distribution of ``Y*/N*``: (values ascending, probabilities), per data set."""
    from scipy import fft

    D = len(y)
    n_shift = np.where(present, n - smallest[:, None], 0)
    span_y, span_n = y.max() + 1, n_shift.max() + 1
    flat = (np.arange(D)[:, None] * span_y + y) * span_n + n_shift
    weights = np.where(present, 1.0 / np.maximum(clusters, 1)[:, None], 0.0)
    empirical = np.bincount(flat[present], weights=weights[present], minlength=D * span_y * span_n)
    empirical = empirical.reshape(D, span_y, span_n)
    grid_y = clusters.max() * (span_y - 1) + 1
    grid_n = clusters.max() * (span_n - 1) + 1
    # the k-fold convolution, as a power of the Fourier transform (1-d when sizes are equal); the
    # 2-d transform is rfftn's, the last axis transformed before the padding of the other
    if grid_n == 1:
        length = fft.next_fast_len(grid_y, real=True)
        transform = fft.rfft(empirical[:, :, 0], n=length, axis=-1)
        pmf = fft.irfft(_power(transform, clusters), n=length, axis=-1, overwrite_x=True)[:, :grid_y]
    else:
        shape = (fft.next_fast_len(grid_y, real=True), fft.next_fast_len(grid_n, real=True))
        transform = fft.fft(fft.rfft(empirical, n=shape[1], axis=2), n=shape[0], axis=1)
        pmf = fft.irfftn(_power(transform, clusters), s=shape, axes=(1, 2), overwrite_x=True)[:, :grid_y, :grid_n]
    pmf = np.ascontiguousarray(pmf.reshape(D, -1))
    pmf[pmf < _PMF_FLOOR] = 0.0
    totals = pmf.sum(axis=-1, keepdims=True)
    pmf[totals[:, 0] == 0, 0] = 1.0  # data sets without clusters: a placeholder, masked later
    # values that no data set can reach are dropped; a value (Y*, N* - k n_min) is the ratio Y* / N*, so
    # the data sets of the same (clusters, smallest size) share their support and its order
    reachable = np.flatnonzero(pmf.any(axis=0))
    _, first, group = np.unique(clusters * (smallest.max() + 1) + smallest, return_index=True, return_inverse=True)
    group = group.ravel()
    values = (reachable // grid_n)[None, :] / ((np.maximum(clusters, 1) * smallest)[first, None]
                                               + (reachable % grid_n)[None, :])
    order = np.argsort(values, axis=-1, kind="stable")
    support = np.take_along_axis(values, order, axis=-1)[group]
    columns = reachable[order]
    if len(first) == 1:
        pmf = pmf[:, columns[0]]
    else:
        pmf = np.take_along_axis(pmf, columns[group], axis=-1)
    pmf /= np.where(totals > 0, totals, 1.0)
    return support, pmf


def _power(transform, exponents):
    """``transform[d] ** exponents[d]``; by repeated squaring when all exponents are equal (``transform`` is
    overwritten then)."""
    if np.any(exponents != exponents[0]):
        return transform ** exponents.reshape((-1,) + (1,) * (transform.ndim - 1))
    exponent, result, base = int(exponents[0]), None, transform
    while exponent:
        if exponent & 1:
            result = base.copy() if result is None else np.multiply(result, base, out=result)
        exponent >>= 1
        if exponent:
            base *= base
    return np.ones_like(transform) if result is None else result


def _multiplicities(clusters, weights, n_resamples, rng):
    """Cluster multiplicities of direct resampling, :data:`_BLOCK` resamples at a time.

    Yields int arrays of shape (b, D, K): for each resample and each of the ``D`` data sets,
    how often each cluster is drawn, ``Multinomial(clusters[d], weights[d])`` (Davison &
    Hinkley 1997, section 3.8). The blocks follow one another in the generator's stream, so
    they are the draws of a single call of size ``(n_resamples, D)``.
    """
    for start in range(0, n_resamples, _BLOCK):
        yield rng.multinomial(clusters, weights, size=(min(_BLOCK, n_resamples - start), len(clusters)))


def resampled_cluster_sums(totals, n_resamples: int, *, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``totals`` over resamples of its rows (the clusters) with replacement.

    Parameters
    ----------
    totals : array_like, shape (K, C)
        One row per cluster, one column per total (conversations, errors, ...).
    n_resamples : int
        Resamples ``B``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (B, C)
        Each row the column sums of one resample: multiplicities ``Multinomial(K, 1/K)`` drawn
        as :func:`cluster_bootstrap` draws them with unequal sizes (Davison & Hinkley 1997,
        section 3.8), :data:`_BLOCK` resamples at a time, so ratios of two columns of one
        resample keep their dependence.
    """
    totals = np.asarray(totals)
    check_count("n_resamples", n_resamples, low=1)
    k = len(totals)
    weights = np.full((1, k), 1.0 / k)
    return np.concatenate([draws[:, 0, :] @ totals
                           for draws in _multiplicities(np.array([k]), weights, n_resamples, rng)])


def percentile_positions(count: int, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the ends of the percentile interval of ``count`` sorted draws lie: the indices ``low``,
    ``high`` of the order statistics around each end and the ``fraction`` of the way from one to
    the other (``numpy.quantile``'s linear rule, as :meth:`ClusterBootstrapResult.confidence_interval`
    reads its percentile interval; Efron & Tibshirani 1993, section 13.3)."""
    alpha = (1.0 - confidence) / 2.0
    position = (count - 1) * np.array([alpha, 1.0 - alpha])
    low = np.floor(position).astype(int)
    return low, np.ceil(position).astype(int), position - low


def percentile_interval(draws, confidence: float, *, undefined_high: bool = True) -> ConfidenceInterval:
    """The percentile interval of bootstrap ``draws`` that may hold undefined values (NaN).

    A NaN draw ranks above every number (``undefined_high``: for example the wait of an unstable
    queue, which grows without bound) or below every number; an end that falls on or between
    undefined draws is NaN. Quantiles interpolate linearly between order statistics
    (:func:`percentile_positions`).

    Examples
    --------
    >>> percentile_interval([1.0, 2.0, 3.0, float("nan")], 0.5)
    ConfidenceInterval(low=1.75, high=nan)
    """
    check_level("confidence", confidence)
    values = np.asarray(draws, dtype=float)
    undefined = np.isnan(values)
    nan = np.full(int(undefined.sum()), np.nan)
    order = np.sort(values[~undefined])
    x = np.concatenate([order, nan] if undefined_high else [nan, order])
    low, high, fraction = percentile_positions(len(x), confidence)
    ends = np.where(fraction > 0, x[low] + fraction * (x[high] - x[low]), x[low])
    return ConfidenceInterval(float(ends[0]), float(ends[1]))


def _resample_clusters(y, n, present, clusters, n_resamples, rng):
    """Draw cluster multiplicities directly: ``B`` multinomial(k, 1/k) vectors per data set."""
    weights = np.where(present, 1.0 / np.maximum(clusters, 1)[:, None], 0.0)
    weights[clusters == 0, 0] = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.concatenate([(draws * y).sum(axis=-1) / (draws * n).sum(axis=-1)
                                 for draws in _multiplicities(clusters, weights, n_resamples, rng)])
    support = np.sort(ratios.T, axis=-1)
    return support, np.ones(support.shape, dtype=np.int64)


def _acceleration(leave_out, use):
    """BCa acceleration from leave-one-cluster-out estimates, one row per data set.

    ``a = sum c^3 / (6 (sum c^2)^(3/2))`` with ``c`` the mean minus each estimate, over the
    estimates marked in ``use`` (Efron & Tibshirani 1993, eq. 14.15). NaN where fewer than
    two are used or they do not vary.
    """
    weight = use.astype(float)
    count = use.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(use, leave_out, 0.0)
        centred = (values.sum(axis=-1) / count)[:, None] - values
        centred *= weight
        squares = centred * centred
        spread = squares.sum(axis=-1)
        acceleration = (squares * centred).sum(axis=-1) / (6.0 * spread * np.sqrt(spread))
    return np.where((count >= 2) & (spread > 0), acceleration, np.nan)


def _ratio_acceleration(y, n, present, Y, N):
    """:func:`_acceleration` of the ratio ``Y / N``; NaN unless the cluster rates differ."""
    clusters = present.sum(axis=-1)
    first = np.argmax(present, axis=-1)[:, None]
    y_first = np.take_along_axis(y, first, axis=-1)
    n_first = np.take_along_axis(n, first, axis=-1)
    # the jackknife varies unless every present cluster has the same rate y_j / n_j (tested
    # exactly on the integers: equal rates can give leave-one-out ratios a rounding apart)
    varies = ((y * n_first != y_first * n) & present).any(axis=-1) & (clusters >= 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        leave_out = (Y[:, None] - y) / np.where(present, N[:, None] - n, 1)
    return np.where(varies, _acceleration(leave_out, present), np.nan)


def _quantile_from_counts(support, cumulative, levels):
    """Quantiles of resampled values given as (sorted values, cumulative counts); linear interpolation.

    ``support`` and ``cumulative`` have shape (..., G), ``levels`` shape (..., J); NaN levels give NaN.
    """
    G = support.shape[-1]
    support2 = support.reshape(-1, G)
    cumulative = cumulative.reshape(-1, G)
    levels2 = levels.reshape(len(support2), -1)
    B = cumulative[:, -1:]
    position = levels2 * (B - 1)
    lower = np.floor(position)
    fraction = position - lower
    # order statistic r (0-based) is the first value whose cumulative count exceeds r; one
    # search over all rows at once after lifting row d by d * (B + 1)
    offset = np.arange(len(support2))[:, None] * (B + 1)
    flat = (cumulative + offset).ravel()
    rows = np.arange(len(support2))[:, None] * G
    finite = np.isfinite(lower)
    lower = np.where(finite, lower, 0).astype(np.int64)

    def order_statistic(r):
        index = np.searchsorted(flat, (r + offset).ravel(), side="right").reshape(r.shape) - rows
        return np.take_along_axis(support2, np.minimum(index, G - 1), axis=-1)

    value_low = order_statistic(lower)
    value_high = order_statistic(np.minimum(lower + 1, B - 1))
    quantiles = np.where(finite, value_low + fraction * (value_high - value_low), np.nan)
    return quantiles.reshape(levels.shape)
