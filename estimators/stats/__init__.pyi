"""The names of ``escalation.estimators.stats``: read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._checks import check_choice, check_count, check_level, check_probability, check_range, refuse
from ._bootstrap import (
    cluster_bootstrap, cluster_bootstrap_pi, ClusterBootstrapResult, DegenerateIntervalWarning,
    paired_cluster_bootstrap,
)
from ._clustered import check_interval_method, clustered_interval, korn_graubard_size, rho_upper_bound
from ._constants import DEFAULT_INTERVAL, INTERVAL_METHODS, MAX_PLAN_SIZE, RHO_BOUND_LEVEL, WILSON_METHODS
from ._design import RHO_WHEN_UNDEFINED, anova_icc, cluster_design, ClusterDesign, ClusterSums, size_weighted_mean
from ._difference import newcombe_paired_interval, paired_correlation
from ._exact import MAX_ESTIMATED_RHO_STATES, exact_coverage, exact_coverages, ExactCoverage
from ._icc import fleiss_cuzick_icc
from ._intervals import (
    ConfidenceInterval, critical_value, design_effect, wilson_interval, wilson_kish_interval, WilsonKishInterval,
    z_value,
)
from ._numbers import nan_to_none
from ._interval_plan import (
    IntervalPlan, PairedFigurePlan, plan_interval, plan_paired_figure, scenarios_needed, wilson_sample_size,
)
from ._difference_plan import DifferencePlan, plan_difference
from ._queue import erlang_b, erlang_c, mean_wait_minutes
