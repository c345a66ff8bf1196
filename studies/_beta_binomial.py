"""The plain beta-binomial model of the coverage and sample-size studies (not the synthetic world).

Cluster ``j`` has probability ``q_j ~ Beta`` with mean ``p`` and intra-cluster correlation
``rho`` and its ``m`` replicas are Bernoulli(``q_j``). The draws are
:func:`escalation.simulate.cluster_probabilities`, which the synthetic world uses too; this
module gives the distributions that the exact calculations need.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["beta_shape", "cluster_pmf"]


def beta_shape(p, rho):
    """Beta parameters with mean ``p`` and intra-cluster correlation ``rho = 1 / (a + b + 1)``."""
    return p * (1.0 - rho) / rho, (1.0 - p) * (1.0 - rho) / rho


def cluster_pmf(p: float, rho: float, replicas: int) -> np.ndarray:
    """``P(Y = t)``, ``t = 0 .. m``, of a cluster's total: beta-binomial (binomial when ``rho = 0``)."""
    t = np.arange(replicas + 1)
    if rho == 0:
        return stats.binom.pmf(t, replicas, p)
    return stats.betabinom.pmf(t, replicas, *beta_shape(p, rho))

