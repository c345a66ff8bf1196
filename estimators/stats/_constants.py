"""The measurement's named choices and limits that the command line shows in its options and help
(``--interval``'s methods, the largest plan), in a module that imports nothing, so that
``escalation --help`` imports no numerical library. Each is defined here only: the modules that
use it (:mod:`estimators.stats._clustered`, :mod:`estimators.stats._planning`) import it from here, and the
door exports it from here.
"""
from __future__ import annotations

__all__ = ["INTERVAL_METHODS", "DEFAULT_INTERVAL", "AUTO_INTERVAL", "INTERVAL_CHOICES",
           "SUMS_METHODS", "LIKELIHOOD_METHODS", "BOOTSTRAP_METHODS",
           "INTERVAL_USES", "RHO_BOUND_LEVEL", "MAX_PLAN_SIZE"]

# ------------------------------------------------------------------ intervals (estimators.stats._clustered)

#: The methods that are a function of the cluster sums (:class:`ClusterSums`), hence exact-able.
SUMS_METHODS = ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb", "wilson-cluster-t", "korn-graubard")
#: The beta-binomial model's intervals (:mod:`estimators.stats._beta_binomial`): functions of the histogram of
#: the cluster totals, not of the sums.
LIKELIHOOD_METHODS = ("beta-binomial-profile", "beta-binomial-bayes")
BOOTSTRAP_METHODS = ("bootstrap-percentile", "bootstrap-bca")
INTERVAL_METHODS = SUMS_METHODS + LIKELIHOOD_METHODS + BOOTSTRAP_METHODS
#: The paper's interval (SPEC section 5), the default of the functions that compute one interval.
DEFAULT_INTERVAL = "wilson-kish"
#: ``--interval auto``, the default of ``score``, ``compare``, ``leaderboard`` and ``gate``: each figure's interval
#: is the narrowest that held 95% in the coverage study for its number of scenarios and replicas
#: (:func:`estimators.choose_interval`).
AUTO_INTERVAL = "auto"
#: What ``--interval`` accepts.
INTERVAL_CHOICES = (AUTO_INTERVAL,) + INTERVAL_METHODS
#: What ``rho_used``, ``deff`` and ``n_eff`` of a summary are for each method: the design its interval used.
INTERVAL_USES = {
    "wilson-kish": "rho_used is the estimate of rho (1 where undefined), deff Kish's, n_eff = n / deff",
    "wilson-kish-t": "rho_used is the estimate of rho (1 where undefined), deff Kish's, n_eff = n / deff",
    "wilson-kish-ucb": "rho_used is the upper confidence bound of rho, deff Kish's at it, n_eff = n / deff",
    "wilson-cluster-t": "n_eff is p (1 - p) / v (v: the cluster variance), at most n, deff = n / n_eff; no rho",
    "korn-graubard": "n_eff is p (1 - p) / v (v: the cluster variance) before the degrees-of-freedom adjustment, "
                     "deff = n / n_eff; no rho",
    "beta-binomial-profile": "rho_used is the maximum-likelihood rho, deff Kish's at it, n_eff = n / deff",
    "beta-binomial-bayes": "rho_used is the posterior mean of rho, deff Kish's at it, n_eff = n / deff",
    "bootstrap-percentile": "the bootstrap uses no rho and no effective size: rho_used, deff and n_eff are null",
    "bootstrap-bca": "the bootstrap uses no rho and no effective size: rho_used, deff and n_eff are null",
}
#: One-sided level of the upper confidence bound of rho in ``wilson-kish-ucb``. Chosen from the
#: exact coverage over the coverage study's 576 equal-size cells with replicas (issue 14): at
#: 0.5, 0.8, 0.9 and 0.95 the share of cells below 0.93 is 13.0%, 5.0%, 1.7% and 1.4%, the lowest
#: coverage 0.846, 0.868, 0.902 and 0.903, and the mean width 1.18, 1.27, 1.32 and 1.36 times the
#: true-rho interval's: 0.9 buys most of the coverage for 5% more width than 0.8.
RHO_BOUND_LEVEL = 0.9

# ------------------------------------------------------------------ planning (estimators.stats._planning)

#: The most scenarios (or cases), and the most replicas, of a plan (see :mod:`estimators.stats._planning`).
MAX_PLAN_SIZE = 1_000_000
