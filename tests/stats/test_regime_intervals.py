"""The intervals for the regimes where Wilson-Kish fails (issue 36): Korn & Graubard's Clopper-Pearson interval, the
beta-binomial profile likelihood and the hierarchical Bayes interval, and what each interval used
(``interval_design``).

Reference values (``tests/reference/korn_graubard.csv``, ``tests/reference/beta_binomial.csv``) come from the
functions below, which share no code with the package: scipy's beta and beta-binomial distributions, its optimisers
and adaptive quadrature, one cluster at a time. Closed forms check the limits: with one conversation a scenario the
Bayes interval is Jeffreys' and the profile interval the binomial likelihood-ratio one; without an error the profile
interval's upper end is ``1 - exp(-chi2 / (2 K))``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from escalation.estimators.stats import (
    INTERVAL_METHODS,
    INTERVAL_USES,
    LIKELIHOOD_METHODS,
    beta_binomial_bayes_interval,
    beta_binomial_fit,
    beta_binomial_profile_interval,
    cluster_design,
    clustered_interval,
    interval_design,
    korn_graubard_size,
    rho_upper_bound,
)

from .._reference import table

KG = table("korn_graubard")
BB = table("beta_binomial")
CHI2 = stats.chi2.ppf(0.95, 1)


def _data(row):
    return [int(x) for x in row["totals"].split()], [int(x) for x in row["sizes"].split()]


# ------------------------------------------------------------------ independent routes

def _beta_cdf_by_quadrature(q, a, b):
    """I_q(a, b) by integrating the beta density (not scipy's incomplete beta)."""
    log_b = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return integrate.quad(lambda t: math.exp((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) - log_b), 0, q,
                          epsabs=0, epsrel=1e-13, limit=200)[0]


def _korn_graubard_by_quadrature(totals, sizes, confidence=0.95):
    """Korn & Graubard (1998) as R's survey::svyciprop(method = "beta") computes it, with the NCHS cap at N."""
    K, N, Y = len(totals), sum(sizes), sum(totals)
    p = Y / N
    v = K / (K - 1) * sum((y - n * p) ** 2 for y, n in zip(totals, sizes)) / N**2
    alpha = 1 - confidence
    size = N
    if 0 < p < 1 and v > 0:
        size = min(N, p * (1 - p) / v * (stats.t.ppf(alpha / 2, N - 1) / stats.t.ppf(alpha / 2, K - 1)) ** 2)
    x = size * p
    low = 0.0 if x == 0 else optimize.brentq(lambda q: _beta_cdf_by_quadrature(q, x, size - x + 1) - alpha / 2,
                                             1e-15, 1 - 1e-15, xtol=1e-15, rtol=1e-14)
    high = 1.0 if x == size else optimize.brentq(
        lambda q: _beta_cdf_by_quadrature(q, x + 1, size - x) - (1 - alpha / 2), 1e-15, 1 - 1e-15, xtol=1e-15,
        rtol=1e-14)
    return low, high


def _log_likelihood(mu, rho, totals, sizes):
    """scipy.stats.betabinom (binom at rho = 0), without the binomial coefficients."""
    y, n = np.asarray(totals), np.asarray(sizes)
    const = sum(math.log(math.comb(int(a), int(b))) for a, b in zip(n, y))
    if rho <= 0:
        return float(stats.binom.logpmf(y, n, mu).sum()) - const
    rho = min(rho, 1 - 1e-12)
    return float(stats.betabinom.logpmf(y, n, mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho).sum()) - const


def _profile(mu, totals, sizes):
    """The largest of l(mu, 0), l(mu, 1) and a bounded search over rho in [1e-4, 1] (below 1e-4 scipy's
    betabinom, with alpha and beta above 1e4, loses digits)."""
    best = optimize.minimize_scalar(lambda r: -_log_likelihood(mu, r, totals, sizes), bounds=(1e-4, 1),
                                    method="bounded", options={"xatol": 1e-12})
    return max(-best.fun, _log_likelihood(mu, 0.0, totals, sizes), _log_likelihood(mu, 1.0, totals, sizes))


def _profile_interval_by_optimiser(totals, sizes):
    Y = sum(totals)
    if Y == 0:
        mu_hat, l_max = 0.0, 0.0
    else:
        fit = optimize.minimize_scalar(lambda m: -_profile(m, totals, sizes), bounds=(1e-9, 1 - 1e-9),
                                       method="bounded", options={"xatol": 1e-12})
        mu_hat, l_max = fit.x, -fit.fun
    excess = lambda m: _profile(m, totals, sizes) - (l_max - CHI2 / 2)  # noqa: E731
    low = 0.0 if Y == 0 else optimize.brentq(excess, 1e-12, mu_hat, xtol=1e-14)
    return low, optimize.brentq(excess, max(mu_hat, 1e-12), 1 - 1e-12, xtol=1e-14)


def _bayes_interval_by_quadrature(totals, sizes, confidence=0.95):
    """mu ~ Beta(1/2, 1/2), rho ~ Uniform(0, 1): the marginal posterior of mu by nested adaptive quadrature."""
    def density(mu):
        like = integrate.quad(lambda r: math.exp(_log_likelihood(mu, r, totals, sizes)), 0, 1, epsabs=0,
                              epsrel=1e-11, limit=200)[0]
        return stats.beta.pdf(mu, 0.5, 0.5) * like
    total = integrate.quad(density, 0, 1, epsabs=0, epsrel=1e-11, limit=400)[0]
    cdf = lambda x: integrate.quad(density, 0, x, epsabs=0, epsrel=1e-11, limit=400)[0] / total  # noqa: E731
    a = (1 - confidence) / 2
    return tuple(optimize.brentq(lambda x: cdf(x) - level, 1e-14, 1 - 1e-14, xtol=1e-15, rtol=1e-12)
                 for level in (a, 1 - a))


# ------------------------------------------------------------------ Korn & Graubard

@pytest.mark.parametrize("row", KG, ids=[r["name"] for r in KG])
def test_korn_graubard_is_the_reference_clopper_pearson_interval(row):
    totals, sizes = _data(row)
    got = clustered_interval(totals, sizes, "korn-graubard")
    expected = (float(row["low"]), float(row["high"]))
    assert got == pytest.approx(expected, rel=float(row["tolerance"]), abs=1e-300)
    assert _korn_graubard_by_quadrature(totals, sizes) == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_korn_graubard_caps_its_size_and_needs_two_clusters():
    # the clusters vary less than binomial data would (deff < 1): n* (t_{N-1} / t_{k-1})^2 > N, so N is used
    totals, sizes = [5, 5, 4, 5, 5, 5], [10] * 6
    assert korn_graubard_size(totals, sizes) > 60
    low, high = clustered_interval(totals, sizes, "korn-graubard")
    assert (low, high) == pytest.approx((stats.beta.ppf(0.025, 29, 32), stats.beta.ppf(0.975, 30, 31)), rel=1e-12)
    assert all(math.isnan(x) for x in clustered_interval([1], [3], "korn-graubard"))
    # every error: the upper end is 1, the lower one Clopper-Pearson's at N
    assert clustered_interval([3, 2], [3, 2], "korn-graubard") == pytest.approx((0.025 ** (1 / 5), 1.0))


def test_wilson_cluster_t_is_the_former_korn_graubard_and_korn_graubard_is_not_wilson():
    # a rare-error data set: the Wilson form at n* (inspect_ai's ci_wilson(cluster=)) against Clopper-Pearson
    totals, sizes = [1] + [0] * 29, [3] * 30
    wilson_form = clustered_interval(totals, sizes, "wilson-cluster-t")
    korn_graubard = clustered_interval(totals, sizes, "korn-graubard")
    assert korn_graubard[0] < wilson_form[0] / 5  # Clopper-Pearson reaches much further down
    assert korn_graubard == pytest.approx(_korn_graubard_by_quadrature(totals, sizes), rel=1e-10)


# ------------------------------------------------------------------ the beta-binomial intervals

@pytest.mark.parametrize("row", [r for r in BB if r["method"] == "profile"], ids=lambda r: r["name"])
def test_profile_interval_is_the_reference(row):
    totals, sizes = _data(row)
    expected = (float(row["low"]), float(row["high"]))
    assert beta_binomial_profile_interval(totals, sizes) == pytest.approx(expected, rel=float(row["tolerance"]))
    assert _profile_interval_by_optimiser(totals, sizes) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("row", [r for r in BB if r["method"] == "bayes"], ids=lambda r: r["name"])
def test_bayes_interval_is_the_reference(row):
    totals, sizes = _data(row)
    expected = (float(row["low"]), float(row["high"]))
    assert beta_binomial_bayes_interval(totals, sizes) == pytest.approx(expected, rel=float(row["tolerance"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["one_error", "no_error"])
def test_the_bayes_reference_values_come_from_quadrature(name):
    row = next(r for r in BB if r["method"] == "bayes" and r["name"] == name)
    assert _bayes_interval_by_quadrature(*_data(row)) == pytest.approx((float(row["low"]), float(row["high"])),
                                                                      rel=1e-9)


def test_closed_forms_at_the_limits():
    # one conversation a scenario: rho is not in the likelihood; Bayes is Jeffreys' interval, the profile the
    # binomial likelihood-ratio interval
    y, N = 3, 40
    totals, sizes = [1] * y + [0] * (N - y), [1] * N
    jeffreys = stats.beta.ppf([0.025, 0.975], y + 0.5, N - y + 0.5)
    assert beta_binomial_bayes_interval(totals, sizes) == pytest.approx(tuple(jeffreys), rel=1e-5)
    deviance = lambda p: 2 * (stats.binom.logpmf(y, N, y / N) - stats.binom.logpmf(y, N, p)) - CHI2  # noqa: E731
    ratio = (optimize.brentq(deviance, 1e-9, y / N, xtol=1e-15), optimize.brentq(deviance, y / N, 1 - 1e-9,
                                                                                  xtol=1e-15))
    assert beta_binomial_profile_interval(totals, sizes) == pytest.approx(ratio, rel=1e-8)
    # no error in K scenarios: the profile is K log(1 - mu), at rho = 1
    low, high, rho = beta_binomial_fit([0] * 7, [5] * 7, "beta-binomial-profile")
    assert (low, rho) == (0.0, pytest.approx(1.0, abs=1e-6))
    assert high == pytest.approx(1 - math.exp(-CHI2 / 14), rel=1e-9)
    assert beta_binomial_profile_interval([5] * 7, [5] * 7) == pytest.approx((math.exp(-CHI2 / 14), 1.0), rel=1e-9)


@pytest.mark.parametrize("method", LIKELIHOOD_METHODS)
def test_vectorised_over_data_sets(method):
    rng = np.random.default_rng(4)
    sizes = np.array([3, 1, 5, 2, 4, 0])  # the last cluster is absent
    totals = rng.binomial(sizes, rng.beta(1, 4, (2, 3, 6)))
    totals[0, 1] = totals[0, 0]  # two equal data sets: computed once, given twice
    low, high = clustered_interval(totals, sizes, method)
    assert low.shape == high.shape == (2, 3)
    for index in np.ndindex(2, 3):
        assert (low[index], high[index]) == pytest.approx(tuple(clustered_interval(totals[index][:5], sizes[:5],
                                                                                   method)), rel=1e-12)
    assert (low[0, 1], high[0, 1]) == (low[0, 0], high[0, 0])
    assert all(math.isnan(x) for x in clustered_interval([2], [3], method))  # one cluster: undefined
    assert all(math.isnan(x) for x in clustered_interval(np.zeros((2, 0)), np.zeros(0), method)[0])  # none


# ------------------------------------------------------------------ what each interval used

TOTALS, SIZES = [3, 1, 0, 2, 5, 0], [5, 5, 5, 5, 5, 4]
N = sum(SIZES)


def test_interval_design_says_what_each_interval_used():
    point = cluster_design(TOTALS, SIZES)
    for method in ("wilson-kish", "wilson-kish-t"):
        assert tuple(interval_design(TOTALS, SIZES, method)) == (point.rho_used, point.deff, point.n_eff)
    bound = rho_upper_bound(TOTALS, SIZES)
    ucb = interval_design(TOTALS, SIZES, "wilson-kish-ucb")
    assert ucb.rho_used == bound > point.rho_used and ucb.n_eff == pytest.approx(N / ucb.deff)
    assert ucb == tuple(cluster_design(TOTALS, SIZES, rho=bound)[4:])
    size = korn_graubard_size(TOTALS, SIZES)
    for method in ("wilson-cluster-t", "korn-graubard"):
        used = interval_design(TOTALS, SIZES, method)
        assert math.isnan(used.rho_used) and used.n_eff == pytest.approx(min(size, N)) and used.deff == N / used.n_eff
    for method in LIKELIHOOD_METHODS:
        used = interval_design(TOTALS, SIZES, method)
        assert used.rho_used == pytest.approx(float(beta_binomial_fit(TOTALS, SIZES, method).rho))
        assert used.deff == pytest.approx(1 + (cluster_design(TOTALS, SIZES).m_bar - 1) * used.rho_used)
    assert all(math.isnan(x) for x in interval_design(TOTALS, SIZES, "bootstrap-bca"))
    assert set(INTERVAL_USES) == set(INTERVAL_METHODS)
    # a fixed rho is the Wilson-Kish methods' only
    assert interval_design(TOTALS, SIZES, "wilson-kish", rho=0.1).rho_used == 0.1
