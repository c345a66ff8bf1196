"""The names of ``escalation.estimators.stats``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._bootstrap import (
    ClusterBootstrapResult as ClusterBootstrapResult,
)
from ._bootstrap import (
    DegenerateIntervalWarning as DegenerateIntervalWarning,
)
from ._bootstrap import (
    cluster_bootstrap as cluster_bootstrap,
)
from ._bootstrap import (
    cluster_bootstrap_pi as cluster_bootstrap_pi,
)
from ._bootstrap import (
    paired_cluster_bootstrap as paired_cluster_bootstrap,
)
from ._checks import (
    check_choice as check_choice,
)
from ._checks import (
    check_count as check_count,
)
from ._checks import (
    check_level as check_level,
)
from ._checks import (
    check_probability as check_probability,
)
from ._checks import (
    check_range as check_range,
)
from ._checks import (
    refuse as refuse,
)
from ._clustered import (
    check_interval_method as check_interval_method,
)
from ._clustered import (
    clustered_interval as clustered_interval,
)
from ._clustered import (
    korn_graubard_size as korn_graubard_size,
)
from ._clustered import (
    rho_upper_bound as rho_upper_bound,
)
from ._constants import (
    DEFAULT_INTERVAL as DEFAULT_INTERVAL,
)
from ._constants import (
    INTERVAL_METHODS as INTERVAL_METHODS,
)
from ._constants import (
    MAX_PLAN_SIZE as MAX_PLAN_SIZE,
)
from ._constants import (
    RHO_BOUND_LEVEL as RHO_BOUND_LEVEL,
)
from ._constants import (
    WILSON_METHODS as WILSON_METHODS,
)
from ._design import (
    RHO_WHEN_UNDEFINED as RHO_WHEN_UNDEFINED,
)
from ._design import (
    ClusterDesign as ClusterDesign,
)
from ._design import (
    ClusterSums as ClusterSums,
)
from ._design import (
    anova_icc as anova_icc,
)
from ._design import (
    cluster_design as cluster_design,
)
from ._design import (
    size_weighted_mean as size_weighted_mean,
)
from ._difference import newcombe_paired_interval as newcombe_paired_interval
from ._difference import paired_correlation as paired_correlation
from ._difference_plan import DifferencePlan as DifferencePlan
from ._difference_plan import plan_difference as plan_difference
from ._exact import (
    MAX_ESTIMATED_RHO_STATES as MAX_ESTIMATED_RHO_STATES,
)
from ._exact import (
    ExactCoverage as ExactCoverage,
)
from ._exact import (
    exact_coverage as exact_coverage,
)
from ._exact import (
    exact_coverages as exact_coverages,
)
from ._icc import fleiss_cuzick_icc as fleiss_cuzick_icc
from ._interval_plan import (
    IntervalPlan as IntervalPlan,
)
from ._interval_plan import (
    PairedFigurePlan as PairedFigurePlan,
)
from ._interval_plan import (
    plan_interval as plan_interval,
)
from ._interval_plan import (
    plan_paired_figure as plan_paired_figure,
)
from ._interval_plan import (
    scenarios_needed as scenarios_needed,
)
from ._interval_plan import (
    wilson_sample_size as wilson_sample_size,
)
from ._intervals import (
    ConfidenceInterval as ConfidenceInterval,
)
from ._intervals import (
    WilsonKishInterval as WilsonKishInterval,
)
from ._intervals import (
    critical_value as critical_value,
)
from ._intervals import (
    design_effect as design_effect,
)
from ._intervals import (
    wilson_interval as wilson_interval,
)
from ._intervals import (
    wilson_kish_interval as wilson_kish_interval,
)
from ._intervals import (
    z_value as z_value,
)
from ._numbers import nan_to_none as nan_to_none
from ._queue import erlang_b as erlang_b
from ._queue import erlang_c as erlang_c
from ._queue import mean_wait_minutes as mean_wait_minutes
