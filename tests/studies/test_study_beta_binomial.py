"""The beta-binomial model of the coverage and sample-size studies (``studies._beta_binomial``)."""
from __future__ import annotations

import numpy as np
import pytest

from escalation.simulate import cluster_probabilities
from escalation.studies._beta_binomial import beta_shape, cluster_pmf


@pytest.mark.parametrize("p, rho, m", [(0.1, 0.2, 5), (0.5, 0.05, 10), (0.3, 0.0, 4)])
def test_cluster_pmf_has_the_beta_binomial_mean_and_variance(p, rho, m):
    # a cluster total of m replicas: mean m p, variance m p (1 - p) (1 + (m - 1) rho) (design effect)
    pmf, t = cluster_pmf(p, rho, m), np.arange(m + 1)
    assert pmf.sum() == pytest.approx(1.0)
    assert (pmf * t).sum() == pytest.approx(m * p)
    assert (pmf * (t - m * p) ** 2).sum() == pytest.approx(m * p * (1 - p) * (1 + (m - 1) * rho))


def test_beta_shape_gives_mean_p_and_icc_rho():
    a, b = beta_shape(0.2, 0.25)
    assert a / (a + b) == pytest.approx(0.2) and 1 / (a + b + 1) == pytest.approx(0.25)


def test_cluster_probabilities_draw_var_rho_p_q_and_keep_the_edge_cases():
    q = cluster_probabilities(0.2, 0.25, (200_000,), rng=np.random.default_rng(3))
    assert q.mean() == pytest.approx(0.2, abs=0.003) and q.var() == pytest.approx(0.25 * 0.2 * 0.8, rel=0.02)
    np.testing.assert_array_equal(cluster_probabilities(0.3, 0.0, (2, 2), rng=None), np.full((2, 2), 0.3))
    edges = cluster_probabilities(np.array([0.0, 1.0]), 0.5, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(edges, [0.0, 1.0])
    assert set(cluster_probabilities(np.full(50, 0.5), 1.0, rng=np.random.default_rng(0))) <= {0.0, 1.0}
