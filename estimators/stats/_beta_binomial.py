"""Intervals of a clustered rate from the beta-binomial model: profile likelihood and hierarchical Bayes.

The model (Skellam 1948; Williams 1975): cluster ``j`` has ``y_j`` ones of ``n_j``, ``y_j | q_j ~
Binomial(n_j, q_j)`` with ``q_j ~ Beta`` of mean ``mu`` and intra-cluster correlation ``rho`` (``alpha =
mu (1 - rho) / rho``, ``beta = (1 - mu) (1 - rho) / rho``), the clusters independent. ``mu`` is the
estimand (``p_u``, ``p_o``, ``pi``: the mean over scenarios of the scenario rate). With ``A_r``, ``B_r`` and
``C_r`` the numbers of clusters with more than ``r`` ones, more than ``r`` zeros and more than ``r``
members, and ``X = A_0 + B_0 - C_0`` the clusters holding both, the log-likelihood is, up to a constant
(the product form of the beta-binomial of Griffiths 1973, Biometrics 29:637-648, written in ``rho``)::

    l(mu, rho) = A_0 log mu + B_0 log(1 - mu) + X log(1 - rho)
                 + sum_{r >= 1} [A_r log(mu (1 - rho) + r rho) + B_r log((1 - mu)(1 - rho) + r rho)
                                 - C_r log(1 - rho + r rho)]

finite on the closed square: ``rho = 0`` is the binomial, ``rho = 1`` clusters that are all ones or all
zeros. It depends on the data through the histogram of ``(y_j, n_j)`` only, so data sets with the same
histogram (most of them where errors are rare) are computed once.

Everything is vectorised over data sets (leading axes of ``totals``): fixed numbers of grid points and
bisection steps on arrays, no per-data-set optimiser. A data set with fewer than two clusters has no
interval (NaN), as the t-based ones.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit, ndtri, roots_legendre, xlogy

from ._checks import check_choice, check_level
from ._constants import LIKELIHOOD_METHODS
from ._intervals import ConfidenceInterval

__all__ = ["BetaBinomialFit", "beta_binomial_fit", "beta_binomial_profile_interval", "beta_binomial_bayes_interval",
           "MU_PRIOR", "RHO_PRIOR"]

#: Prior of ``mu`` in :func:`beta_binomial_bayes_interval`: Beta(1/2, 1/2), Jeffreys' prior of a proportion.
MU_PRIOR = (0.5, 0.5)
#: Prior of ``rho``: Beta(1, 1), flat on the intra-cluster correlation (a Beta prior whose parameters are at
#: least 1: its density is finite on the closed interval, whose ends the grid holds).
RHO_PRIOR = (1.0, 1.0)
# logit(mu) is searched in [-_LOGIT_SPAN, _LOGIT_SPAN]: mu from 9e-14 to 1 - 9e-14.
_LOGIT_SPAN = 30.0
# data sets computed at once: the grids hold (data sets x points) arrays, bounded by this many values
_BATCH_VALUES = 2**21
_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


class BetaBinomialFit(NamedTuple):
    """An interval of the beta-binomial mean with the rho it rests on (:func:`beta_binomial_fit`; floats, or
    arrays over data sets).

    ``low`` and ``high`` the interval of ``mu``; ``rho`` the maximum-likelihood rho (profile) or the
    posterior mean of rho (Bayes); NaN where the interval is undefined.
    """

    low: float | np.ndarray
    high: float | np.ndarray
    rho: float | np.ndarray


class _Histogram(NamedTuple):
    """``A``, ``B``, ``C`` (shape (U, R), ``r = 0 .. R - 1``), the mixed clusters ``X`` and the clusters ``K``
    of ``U`` distinct data sets."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    mixed: np.ndarray
    clusters: np.ndarray

    def rows(self, index) -> _Histogram:
        """The data sets ``index`` (a slice or a mask) of these."""
        return _Histogram(self.A[index], self.B[index], self.C[index], self.mixed[index], self.clusters[index])


def _histogram(totals, sizes) -> tuple[_Histogram, np.ndarray, tuple[int, ...]]:
    """The counts of the log-likelihood for each distinct data set, the row of each data set among them, and
    the data sets' shape."""
    y = np.rint(np.asarray(totals, dtype=float)).astype(np.int64)
    n = np.broadcast_to(np.rint(np.asarray(sizes, dtype=float)).astype(np.int64), y.shape)
    shape = y.shape[:-1]
    y, n = (x.reshape(int(np.prod(shape)), x.shape[-1]) for x in (y, n))
    present = n > 0
    width = max(int(n.max(initial=0)), 1) + 1  # r = 0 .. largest size - 1, at least r = 0
    rows = np.broadcast_to(np.arange(len(y))[:, None] * width, y.shape)[present]

    def above(values):  # column r: the present clusters whose value exceeds r, r = 0 .. width - 2
        counts = np.bincount(rows + values[present], minlength=len(y) * width).reshape(len(y), width)
        return np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][:, 1:]

    A, B, C = above(y), above(n - y), above(n)
    _, first, inverse = np.unique(np.concatenate([A, B, C], axis=1), axis=0, return_index=True,
                                  return_inverse=True)
    A, B, C = A[first], B[first], C[first]
    return _Histogram(A, B, C, A[:, 0] + B[:, 0] - C[:, 0], present.sum(axis=1)[first]), inverse.ravel(), shape


def _log_likelihood(h: _Histogram, mu, rho) -> np.ndarray:
    """``l(mu, rho)`` (module docstring) at points of shape ``(U, ...)``, one row per distinct data set.

    ``mu`` is kept within ``[1e-300, 1 - 2^-53]``, so that every logarithm but ``log(1 - rho)`` (0 at ``rho =
    1``, where its count is 0 or the likelihood is 0) is of a positive number.
    """
    extra = (1,) * (np.ndim(mu) - 1)
    column = lambda a: a.reshape(a.shape[:1] + extra)  # noqa: E731
    mu = np.clip(mu, 1e-300, 1.0 - 2.0**-53)
    q = 1.0 - rho
    out = column(h.A[:, 0]) * np.log(mu) + column(h.B[:, 0]) * np.log1p(-mu) + xlogy(column(h.mixed), q)
    ones, zeros = (int(np.count_nonzero(x.any(axis=0))) for x in (h.A, h.B))  # A_r, B_r are 0 from there on
    for r in range(1, h.C.shape[1]):
        if r < ones:
            out += column(h.A[:, r]) * np.log(mu * q + r * rho)
        if r < zeros:
            out += column(h.B[:, r]) * np.log((1.0 - mu) * q + r * rho)
        out -= column(h.C[:, r]) * np.log(q + r * rho)
    return out


def _batches(h: _Histogram, points: int):
    """Slices of the distinct data sets whose ``points`` evaluations fit :data:`_BATCH_VALUES`."""
    step = max(1, _BATCH_VALUES // points)
    for start in range(0, len(h.A), step):
        part = slice(start, start + step)
        yield part, h.rows(part)


# ------------------------------------------------------------------ profile likelihood

def _golden_max(f, low, high, iterations: int):
    """Maximise ``f`` elementwise on ``[low, high]`` (arrays) by golden-section search: ``(argmax, max)``."""
    a, b = low, high
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        left = fc >= fd  # the maximum is in [a, d]: d is dropped, c becomes the inner point on the right
        a, b = np.where(left, a, c), np.where(left, d, b)
        kept, f_kept = np.where(left, c, d), np.where(left, fc, fd)
        new = np.where(left, b - _GOLDEN * (b - a), a + _GOLDEN * (b - a))
        f_new = f(new)
        c, fc = np.where(left, new, kept), np.where(left, f_new, f_kept)
        d, fd = np.where(left, kept, new), np.where(left, f_kept, f_new)
    best = fc >= fd
    return np.where(best, c, d), np.where(best, fc, fd)


def _grid_then_golden(f, grid: np.ndarray, shape, iterations: int):
    """Maximise ``f`` over ``[grid[0], grid[-1]]`` for each element of ``shape``: the best of ``grid``, then a
    golden-section search between its neighbours. ``f`` takes arrays of ``shape + (points,)`` or ``shape``."""
    values = f(np.broadcast_to(grid, shape + grid.shape))
    best = values.argmax(axis=-1)
    low, high = grid[np.maximum(best - 1, 0)], grid[np.minimum(best + 1, len(grid) - 1)]
    at, value = _golden_max(f, low, high, iterations)
    top = values.max(axis=-1)
    better = top >= value  # a grid point at an end of the range can beat the search (a maximum on the boundary)
    return np.where(better, grid[best], at), np.where(better, top, value)


_RHO_GRID = np.linspace(0.0, 1.0, 9) ** 2


def _profile(h: _Histogram, mu: np.ndarray):
    """``(rho, l)``: the rho that maximises ``l(mu, rho)`` and that maximum, for ``mu`` of shape (U, ...)."""
    return _grid_then_golden(lambda rho: _log_likelihood(h, mu[..., None] if np.ndim(rho) > np.ndim(mu) else mu,
                                                         rho), _RHO_GRID, mu.shape, 25)


def _profile_bound(h: _Histogram, u_hat, threshold, side: float, bisections: int = 12, secants: int = 8):
    """The ``logit(mu)`` beyond ``u_hat`` on ``side`` (-1 below, +1 above) where the profile log-likelihood
    falls to ``threshold``: bisection from ``u_hat`` to ``side * _LOGIT_SPAN``, then regula falsi (Illinois)."""
    def excess(u):
        return _profile(h, expit(u))[1] - threshold

    inside, outside = u_hat, np.full_like(u_hat, side * _LOGIT_SPAN)
    f_in, f_out = excess(inside), excess(outside)
    beyond = f_out >= 0  # the likelihood never falls that far: the bound is the end of the range
    for _ in range(bisections):
        mid = 0.5 * (inside + outside)
        f_mid = excess(mid)
        keep = f_mid >= 0
        inside, f_in = np.where(keep, mid, inside), np.where(keep, f_mid, f_in)
        outside, f_out = np.where(keep, outside, mid), np.where(keep, f_out, f_mid)

    def secant(f_a, f_b):  # the regula falsi point of the bracket, its midpoint where the values do not allow one
        with np.errstate(divide="ignore", invalid="ignore"):
            step = f_a / (f_a - f_b)
        return np.where(np.isfinite(step), inside + np.clip(step, 0.0, 1.0) * (outside - inside),
                        0.5 * (inside + outside))

    weight_in, weight_out = f_in, f_out  # the values the Illinois steps halve
    side_kept = np.zeros(u_hat.shape, dtype=np.int8)  # which end the last step kept
    for _ in range(secants):
        mid = secant(weight_in, weight_out)
        f_mid = excess(mid)
        keep = f_mid >= 0
        weight_out = np.where(keep & (side_kept == 1), 0.5 * weight_out, weight_out)
        weight_in = np.where(~keep & (side_kept == -1), 0.5 * weight_in, weight_in)
        side_kept = np.where(keep, 1, -1).astype(np.int8)
        inside, f_in, weight_in = (np.where(keep, mid, inside), np.where(keep, f_mid, f_in),
                                   np.where(keep, f_mid, weight_in))
        outside, f_out, weight_out = (np.where(keep, outside, mid), np.where(keep, f_out, f_mid),
                                      np.where(keep, weight_out, f_mid))
    return np.where(beyond, side * np.inf, secant(f_in, f_out))


def _profile_rows(h: _Histogram, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Low, high and the maximum-likelihood rho of each distinct data set."""
    crit = ndtri(0.5 + confidence / 2.0) ** 2  # the chi-square(1) quantile (Wilks 1938)
    ones, zeros = h.A[:, 0], h.B[:, 0]
    interior = (ones > 0) & (zeros > 0)
    u_grid = np.linspace(-_LOGIT_SPAN, _LOGIT_SPAN, 21)
    u_hat, l_max = _grid_then_golden(lambda u: _profile(h, expit(u))[1], u_grid, ones.shape, 25)
    # no ones (or no zeros): the likelihood is largest, 0, at mu = 0 (or 1), whatever rho
    u_hat = np.where(interior, u_hat, np.where(ones > 0, np.inf, -np.inf))
    l_max = np.where(interior, l_max, 0.0)
    threshold = l_max - crit / 2.0
    finite = np.clip(u_hat, -_LOGIT_SPAN, _LOGIT_SPAN)
    low = np.where(ones > 0, expit(_profile_bound(h, finite, threshold, -1.0)), 0.0)
    high = np.where(zeros > 0, expit(_profile_bound(h, finite, threshold, 1.0)), 1.0)
    # without ones (zeros) every rho fits mu_hat = 0 (1): the rho of the interval's other end is reported
    at = np.where(interior, expit(finite), np.where(ones > 0, low, high))
    return low, high, _profile(h, at)[0]


def beta_binomial_profile_interval(totals, sizes, confidence: float = 0.95) -> ConfidenceInterval:
    """Profile-likelihood interval of the beta-binomial mean ``mu``, rho profiled out.

    Parameters
    ----------
    totals, sizes : array_like, shape (..., K)
        Ones and members of each cluster, clusters on the last axis (size 0 = absent); leading axes are
        data sets.
    confidence : float
        Two-sided level.

    Returns
    -------
    ConfidenceInterval
        ``{mu : 2 (l_p(mu_hat) - l_p(mu)) <= chi2_1(confidence)}`` with ``l_p(mu) = max_rho l(mu, rho)``
        (module docstring) over ``rho`` in ``[0, 1]``; NaN with fewer than two clusters. Without ones
        (zeros) the likelihood is largest at ``mu = 0`` (1) whatever rho, and the lower (upper) end is
        0 (1). :func:`beta_binomial_fit` gives it with the maximum-likelihood rho.

    Notes
    -----
    The profile-likelihood interval (Cox & Hinkley 1974, section 7.2; Venzon & Moolgavkar 1988, Appl.
    Statist. 37:87-94) with the chi-square(1) calibration of Wilks (1938); the beta-binomial likelihood of
    Griffiths (1973), which R's ``aod::betabin`` maximises (intercept only). Computed on ``logit(mu)``:
    the maximum by a 21-point grid and a golden-section search, each end by 12 bisections and 8 Illinois
    steps (about 1e-9 in logit), the inner maximum over ``rho`` by a 9-point grid in ``sqrt(rho)`` and 25
    golden-section steps; a bound where the profile does not fall to the threshold within ``mu`` in
    ``[9e-14, 1 - 9e-14]`` is 0 (1).

    Examples
    --------
    Four scenarios of 5, one error in one of them:

    >>> low, high = beta_binomial_profile_interval([1, 0, 0, 0], 5)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0029, 0.3211)
    """
    return ConfidenceInterval(*beta_binomial_fit(totals, sizes, "beta-binomial-profile", confidence)[:2])


# ------------------------------------------------------------------ hierarchical Bayes

# nodes of each pass that locates the posterior (logit mu x sqrt rho), and of the final one
_LOCATE = (24, 12)
_LOCATE_PASSES = 4
_FINAL = (201, 24)
# a grid point counts as inside the posterior when its log density is within this of the largest
_INSIDE = 30.0


def _log_posterior(h: _Histogram, u, t, mu_prior, rho_prior) -> np.ndarray:
    """Log posterior density of ``(logit mu, sqrt rho) = (u, t)``, up to a constant, at points (U, ...)."""
    mu, rho = expit(u), t * t
    with np.errstate(divide="ignore", invalid="ignore"):
        # the priors' densities in (u, t): Beta(a, b) of mu times mu (1 - mu), Beta(c, d) of rho times 2 t
        prior = (xlogy(mu_prior[0], mu) + xlogy(mu_prior[1], 1.0 - mu)
                 + xlogy(rho_prior[0] - 1.0, rho) + xlogy(rho_prior[1] - 1.0, 1.0 - rho) + np.log(t))
        return np.where(t > 0, _log_likelihood(h, mu, rho) + prior, -np.inf)


def _box_grid(box, nodes):
    """Uniform grid of ``nodes = (I, J)`` points over ``box = (u_lo, u_hi, t_lo, t_hi)`` (arrays (U,)):
    ``u`` of shape (U, I, 1), ``t`` of shape (U, 1, J)."""
    u_lo, u_hi, t_lo, t_hi = box
    s = np.linspace(0.0, 1.0, nodes[0])
    v = np.linspace(0.0, 1.0, nodes[1])
    return (u_lo[:, None, None] + (u_hi - u_lo)[:, None, None] * s[None, :, None],
            t_lo[:, None, None] + (t_hi - t_lo)[:, None, None] * v[None, None, :])


def _locate(h: _Histogram, mu_prior, rho_prior):
    """The box ``(u_lo, u_hi, t_lo, t_hi)`` that holds the posterior: grids zoomed onto the points within
    :data:`_INSIDE` of the largest log density, one grid step added on each side."""
    U = len(h.A)
    box = (np.full(U, -_LOGIT_SPAN), np.full(U, _LOGIT_SPAN), np.zeros(U), np.ones(U))
    for _ in range(_LOCATE_PASSES):
        u, t = _box_grid(box, _LOCATE)
        lp = _log_posterior(h, u, t, mu_prior, rho_prior)
        inside = lp >= lp.max(axis=(1, 2), keepdims=True) - _INSIDE
        rows, columns = inside.any(axis=2), inside.any(axis=1)
        du = (box[1] - box[0]) / (_LOCATE[0] - 1)
        dt = (box[3] - box[2]) / (_LOCATE[1] - 1)
        first_u, last_u = rows.argmax(axis=1), _LOCATE[0] - 1 - rows[:, ::-1].argmax(axis=1)
        first_t, last_t = columns.argmax(axis=1), _LOCATE[1] - 1 - columns[:, ::-1].argmax(axis=1)
        box = (np.maximum(box[0] + (first_u - 1) * du, -_LOGIT_SPAN), np.minimum(box[0] + (last_u + 1) * du,
                                                                                  _LOGIT_SPAN),
               np.maximum(box[2] + (first_t - 1) * dt, 0.0), np.minimum(box[2] + (last_t + 1) * dt, 1.0))
    return box


def _quantiles_of(u, density, levels, tails, bisections: int = 40):
    """Quantiles at ``levels`` of a density known at the equally spaced points ``u`` (U, I) of each row, with
    exponential tails beyond them.

    Between the points the density is the cubic Hermite interpolant of its values and centred differences,
    so its integral over a step is ``h (f_k + f_k+1) / 2 + h^2 (f'_k - f'_k+1) / 12`` (the corrected
    trapezoid rule, error O(h^4)); a quantile in a step is found by bisection on the interpolant's integral.
    Beyond the first (last) point the density is taken as ``f exp(c (u - u_end))`` with ``c`` the rates of
    ``tails`` (arrays (U,)): mass ``f / c``.
    """
    h = u[:, 1] - u[:, 0]
    slope = np.gradient(density, axis=1, edge_order=2) / h[:, None]
    f0, f1, d0, d1 = density[:, :-1], density[:, 1:], h[:, None] * slope[:, :-1], h[:, None] * slope[:, 1:]
    steps = np.maximum(h[:, None] * ((f0 + f1) / 2.0 + (d0 - d1) / 12.0), 0.0)
    below, above = density[:, 0] / tails[0], density[:, -1] / tails[1]
    cumulative = below[:, None] + np.concatenate([np.zeros((len(u), 1)), np.cumsum(steps, axis=1)], axis=1)
    total = cumulative[:, -1] + above
    rows = np.arange(len(u))
    out = []
    for level in levels:
        target = level * total
        k = np.clip((cumulative < target[:, None]).sum(axis=1) - 1, 0, u.shape[1] - 2)
        left = target - cumulative[rows, k]
        a, b, da, db = f0[rows, k], f1[rows, k], d0[rows, k], d1[rows, k]

        def integral(s):  # the interpolant's integral over [0, s] of step k, in units of h
            s2, s3, s4 = s * s, s**3, s**4
            return (a * (s4 / 2.0 - s3 + s) + da * (s4 / 4.0 - 2.0 * s3 / 3.0 + s2 / 2.0)
                    + b * (s3 - s4 / 2.0) + db * (s4 / 4.0 - s3 / 3.0))

        low, high = np.zeros(len(u)), np.ones(len(u))
        for _ in range(bisections):
            mid = 0.5 * (low + high)
            short = h * integral(mid) < left
            low, high = np.where(short, mid, low), np.where(short, high, mid)
        inner = u[rows, k] + 0.5 * (low + high) * h
        with np.errstate(divide="ignore", invalid="ignore"):
            first = u[:, 0] + np.log(target * tails[0] / density[:, 0]) / tails[0]
            last = u[:, -1] - np.log((total - target) * tails[1] / density[:, -1]) / tails[1]
        out.append(np.where(target < below, first, np.where(target > cumulative[:, -1], last, inner)))
    return out


def _bayes_rows(h: _Histogram, confidence: float, mu_prior, rho_prior):
    """Low, high and the posterior mean of rho of each distinct data set."""
    box = _locate(h, mu_prior, rho_prior)
    u, _ = _box_grid(box, _FINAL)
    nodes, weights = roots_legendre(_FINAL[1])  # Gauss-Legendre in t over the box
    half = ((box[3] - box[2]) / 2.0)[:, None, None]
    t, w = box[2][:, None, None] + half * (nodes + 1.0), half * weights
    lp = _log_posterior(h, u, t, mu_prior, rho_prior)
    peak = lp.max(axis=(1, 2), keepdims=True)
    joint = np.exp(lp - peak) * w
    marginal = joint.sum(axis=2)  # the density of u, up to a constant, at the u nodes
    alpha = (1.0 - confidence) / 2.0
    # near mu = 0 the likelihood goes as mu^A_0 and the prior of u as mu^a: the density's tail rates in u
    tails = (mu_prior[0] + h.A[:, 0], mu_prior[1] + h.B[:, 0])
    low, high = _quantiles_of(u[:, :, 0], marginal / marginal.max(axis=1, keepdims=True), (alpha, 1.0 - alpha),
                              tails)
    rho = (joint * (t * t)).sum(axis=(1, 2)) / joint.sum(axis=(1, 2))
    return expit(low), expit(high), rho


def beta_binomial_bayes_interval(totals, sizes, confidence: float = 0.95) -> ConfidenceInterval:
    """Equal-tailed credible interval of the beta-binomial mean ``mu`` under a hierarchical model.

    Parameters
    ----------
    totals, sizes
        As :func:`beta_binomial_profile_interval`.
    confidence : float
        Posterior probability of the interval.

    Returns
    -------
    ConfidenceInterval
        The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the marginal posterior of
        ``mu``; NaN with fewer than two clusters. :func:`beta_binomial_fit` gives it with the posterior
        mean of rho.

    Notes
    -----
    The hierarchy of Gelman et al. (2013), Bayesian Data Analysis, 3rd ed., section 5.3 (scenario rates
    ``q_j ~ Beta``, ``y_j ~ Binomial(n_j, q_j)``) in the parameters ``(mu, rho)``, with proper priors,
    independent: ``mu ~ Beta(1/2, 1/2)`` (:data:`MU_PRIOR`), Jeffreys' prior of a proportion (the prior of
    the Jeffreys interval, Brown, Cai & DasGupta 2001), and ``rho ~ Uniform(0, 1)`` (:data:`RHO_PRIOR`).
    BDA's ``(alpha + beta)^(-5/2)`` prior is improper in ``rho`` and gives an improper posterior when every
    cluster is all zeros or all ones (the rare-errors case), so it is not used. With one conversation
    per cluster rho does not enter the likelihood and the interval is the Jeffreys interval.

    The posterior is integrated on a grid, not sampled: in ``(logit mu, sqrt rho)`` a 24 x 12 grid zoomed
    four times onto the points within 30 of the largest log density (one grid step added on each side)
    locates it, then 201 points in ``logit mu`` by 24 Gauss-Legendre points in ``sqrt rho`` integrate it.
    The marginal density of ``logit mu`` is integrated by the corrected trapezoid rule (cubic Hermite
    interpolation, error O(h^4)) with the exact tails ``mu^(a + A_0)`` and ``(1 - mu)^(b + B_0)`` beyond
    the grid; its quantiles are found by bisection. Against adaptive quadrature (``scipy.integrate.quad``,
    ``tests/reference/beta_binomial.csv``) the ends agree to about 1e-5, relatively.

    Examples
    --------
    >>> low, high = beta_binomial_bayes_interval([1, 0, 0, 0], 5)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0089, 0.4199)
    """
    return ConfidenceInterval(*beta_binomial_fit(totals, sizes, "beta-binomial-bayes", confidence)[:2])


def beta_binomial_fit(totals, sizes, method: str, confidence: float = 0.95) -> BetaBinomialFit:
    """The interval of ``method`` (``beta-binomial-profile`` or ``beta-binomial-bayes``) with its rho.

    Parameters
    ----------
    totals, sizes, confidence
        As :func:`beta_binomial_profile_interval`.
    method : str
        One of :data:`LIKELIHOOD_METHODS`.

    Returns
    -------
    BetaBinomialFit
        ``low``, ``high`` and ``rho``: the maximum-likelihood rho (without ones, or without zeros, the rho
        profiled at the interval's other end: 1 when every cluster is all zeros) or the posterior mean of rho.
    """
    check_choice("method", method, LIKELIHOOD_METHODS)
    confidence = check_level("confidence", confidence)
    if method == "beta-binomial-profile":
        return _by_rows(totals, sizes, lambda h: _profile_rows(h, confidence), 2 * 21 * len(_RHO_GRID))
    return _by_rows(totals, sizes, lambda h: _bayes_rows(h, confidence, MU_PRIOR, RHO_PRIOR), _FINAL[0] * _FINAL[1])


def _by_rows(totals, sizes, rows_of, points: int) -> BetaBinomialFit:
    """``rows_of`` on the distinct data sets, in batches of ``points`` evaluations each, spread back over the
    data sets; NaN with fewer than two clusters."""
    h, inverse, shape = _histogram(totals, sizes)
    out = np.full((len(h.A), 3), np.nan)
    defined = h.clusters >= 2
    for part, batch in _batches(h.rows(defined), points):
        out[np.flatnonzero(defined)[part]] = np.column_stack(rows_of(batch))
    low, high, rho = (column[inverse].reshape(shape)[()] for column in out.T)
    return BetaBinomialFit(low, high, rho)
