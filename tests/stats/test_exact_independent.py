"""The exact coverage of the Wilson-Kish interval (SPEC 5), recomputed by brute force.

Every vector of cluster totals ``(t_1, ..., t_K)`` is enumerated (``itertools.product``), its
probability is the product of the clusters' pmfs (beta-binomial with mean ``p`` and intra-cluster
correlation ``rho``, from ``math.lgamma``; binomial when ``rho = 0``), and the interval of that data
set is the standard-library reference of ``test_spec5_independent`` (SPEC 5: Donner's ANOVA rho
with ``n0``, truncated to [0, 1], ``rho_used = 1`` when undefined, ``m_bar = sum n_j^2 / N``, Kish's
design effect, Wilson's interval at ``n_eff``). No numpy, no scipy, no code of the package in the
reference; the package is only called through its public ``exact_coverage``.

Beta-binomial: with ``alpha = p (1 - rho) / rho`` and ``beta = (1 - p)(1 - rho) / rho`` the
correlation of two outcomes of one cluster is ``1 / (alpha + beta + 1) = rho`` (Skellam 1948;
Griffiths 1973), and ``P(t) = C(m, t) B(t + alpha, m - t + beta) / B(alpha, beta)``.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from escalation.estimators.stats import exact_coverage

from ..e2e.test_spec5_independent import anova_rho, wilson

TOL = 1e-9


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def beta_binomial_pmf(m: int, p: float, rho: float) -> list[float]:
    """The pmf of a cluster total of ``m`` 0/1 outcomes with mean ``p`` and correlation ``rho``."""
    if rho == 0:
        return [math.comb(m, t) * p ** t * (1 - p) ** (m - t) for t in range(m + 1)]
    a, b = p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho
    return [math.comb(m, t) * math.exp(_log_beta(t + a, m - t + b) - _log_beta(a, b)) for t in range(m + 1)]


def interval(sizes: list[int], totals: list[int], confidence: float, rho_fixed: float | None):
    """SPEC 5 for one data set given by its cluster sizes and totals."""
    N, T = sum(sizes), sum(totals)
    m_bar = Fraction(sum(n * n for n in sizes), N)
    rho = anova_rho(sizes, totals)
    rho_used = Fraction(rho_fixed) if rho_fixed is not None else rho if rho is not None else Fraction(1)
    deff = 1 + (m_bar - 1) * rho_used
    return wilson(T / N, float(N / deff), confidence)


def enumerate_coverage(pmfs: list[list[float]], confidence: float = 0.95, rho_fixed: float | None = None):
    """Coverage, miss below (the interval lies wholly below p), miss above, mean width."""
    sizes = [len(pmf) - 1 for pmf in pmfs]
    p = sum(sum(t * q for t, q in enumerate(pmf)) for pmf in pmfs) / sum(sizes)
    cover = low = high = width = total = 0.0
    for totals in itertools.product(*(range(n + 1) for n in sizes)):
        prob = math.prod(pmf[t] for pmf, t in zip(pmfs, totals))
        lo, hi = interval(sizes, list(totals), confidence, rho_fixed)
        total += prob
        width += prob * (hi - lo)
        if hi < p:
            low += prob
        elif lo > p:
            high += prob
        else:
            cover += prob
    assert abs(total - 1) < 1e-12
    return {"coverage": cover, "miss_low": low, "miss_high": high, "mean_width": width, "truth": p}


def _get(result, field):
    return result[field] if isinstance(result, dict) else getattr(result, field)


CONFIGURATIONS = [  # (K clusters, m replicas, p, rho)
    (3, 2, 0.1, 0.2),
    (4, 3, 0.3, 0.05),
    (5, 1, 0.05, 0.0),
    (2, 4, 0.5, 0.5),
    (6, 2, 0.02, 0.1),     # rare errors: mostly no variation, rho undefined -> 1
    (3, 3, 0.2, 0.0),      # binomial
]


def test_beta_binomial_reference():
    pmf = beta_binomial_pmf(4, 0.3, 0.2)
    assert sum(pmf) == pytest.approx(1, abs=1e-14)
    mean = sum(t * q for t, q in enumerate(pmf))
    var = sum((t - mean) ** 2 * q for t, q in enumerate(pmf))
    assert mean == pytest.approx(4 * 0.3, abs=1e-12)
    # Var of a cluster total: m p (1 - p) (1 + (m - 1) rho)   (Kish 1965; Griffiths 1973)
    assert var == pytest.approx(4 * 0.3 * 0.7 * (1 + 3 * 0.2), abs=1e-12)


@pytest.mark.parametrize("K, m, p, rho", CONFIGURATIONS)
def test_exact_coverage_wilson_kish_estimated_rho(K, m, p, rho):
    pmf = beta_binomial_pmf(m, p, rho)
    want = enumerate_coverage([pmf] * K)
    got = exact_coverage(pmf, K, method="wilson-kish")
    wrong = [f"{f}: expected {want[f]!r}, got {_get(got, f)!r}"
             for f in ("coverage", "miss_low", "miss_high", "mean_width", "truth")
             if abs(_get(got, f) - want[f]) > TOL]
    assert not wrong, f"K={K}, m={m}, p={p}, rho={rho}:\n" + "\n".join(wrong)


def test_exact_coverage_unequal_sizes_fixed_rho():
    """Sizes 1, 2, 4 with a fixed rho of 0.2: deff = 1 + (21/7 - 1) 0.2 = 1.4 on every data set."""
    p, rho = 0.25, 0.2
    pmfs = [beta_binomial_pmf(n, p, rho) for n in (1, 2, 4)]
    want = enumerate_coverage(pmfs, rho_fixed=rho)
    got = exact_coverage(pmfs, 3, rho=rho)
    wrong = [f"{f}: expected {want[f]!r}, got {_get(got, f)!r}"
             for f in ("coverage", "miss_low", "miss_high", "mean_width", "truth")
             if abs(_get(got, f) - want[f]) > TOL]
    assert not wrong, "sizes 1, 2, 4, p=0.25, rho=0.2 fixed:\n" + "\n".join(wrong)
