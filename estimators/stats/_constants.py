"""The measurement's named choices and limits that the command line shows in its options and help
(``--interval``'s methods, the largest plan), in a module that imports nothing, so that
``escalation --help`` imports no numerical library. Each is defined here only: the modules that
use it (:mod:`estimators.stats._clustered`, :mod:`estimators.stats._planning`) import it from here, and the
door exports it from here.
"""
from __future__ import annotations

__all__ = ["INTERVAL_METHODS", "DEFAULT_INTERVAL", "WILSON_METHODS", "RHO_BOUND_LEVEL", "MAX_PLAN_SIZE"]

# ------------------------------------------------------------------ intervals (estimators.stats._clustered)

INTERVAL_METHODS = ("wilson-kish", "wilson-kish-t", "wilson-kish-ucb", "korn-graubard", "bootstrap-percentile",
                    "bootstrap-bca")
DEFAULT_INTERVAL = "wilson-kish"
#: The methods that are a function of the cluster sums (:class:`ClusterSums`), hence exact-able.
WILSON_METHODS = INTERVAL_METHODS[:4]
#: One-sided level of the upper confidence bound of rho in ``wilson-kish-ucb``. Chosen from the
#: exact coverage over the coverage study's 576 equal-size cells with replicas (issue 14): at
#: 0.5, 0.8, 0.9 and 0.95 the share of cells below 0.93 is 13.0%, 5.0%, 1.7% and 1.4%, the lowest
#: coverage 0.846, 0.868, 0.902 and 0.903, and the mean width 1.18, 1.27, 1.32 and 1.36 times the
#: true-rho interval's: 0.9 buys most of the coverage for 5% more width than 0.8.
RHO_BOUND_LEVEL = 0.9

# ------------------------------------------------------------------ planning (estimators.stats._planning)

#: The most scenarios (or cases), and the most replicas, of a plan (see :mod:`estimators.stats._planning`).
MAX_PLAN_SIZE = 1_000_000
