"""The names of ``escalation.estimators.stats``, read by lazy_loader (``attach_stub``) for the lazy door,
``__all__`` and type checkers alike."""

from ._beta_binomial import (
    MU_PRIOR as MU_PRIOR,
    RHO_PRIOR as RHO_PRIOR,
    BetaBinomialFit as BetaBinomialFit,
    beta_binomial_bayes_interval as beta_binomial_bayes_interval,
    beta_binomial_fit as beta_binomial_fit,
    beta_binomial_profile_interval as beta_binomial_profile_interval,
)
from ._bootstrap import (
    ClusterBootstrapResult as ClusterBootstrapResult,
    DegenerateIntervalWarning as DegenerateIntervalWarning,
    cluster_bootstrap as cluster_bootstrap,
    cluster_bootstrap_pi as cluster_bootstrap_pi,
    paired_cluster_bootstrap as paired_cluster_bootstrap,
    percentile_interval as percentile_interval,
    percentile_positions as percentile_positions,
    resampled_cluster_sums as resampled_cluster_sums,
)
from ._checks import (
    check_choice as check_choice,
    check_count as check_count,
    check_level as check_level,
    check_probability as check_probability,
    check_range as check_range,
    refuse as refuse,
)
from ._choice import (
    INTERVAL_CHOICE_SOURCE as INTERVAL_CHOICE_SOURCE,
    SCENARIO_RANGES as SCENARIO_RANGES,
    GroupCoverage as GroupCoverage,
    IntervalChoice as IntervalChoice,
    choose_interval as choose_interval,
    design_group as design_group,
    group_coverage as group_coverage,
    resolve_interval as resolve_interval,
)
from ._clustered import (
    IntervalDesign as IntervalDesign,
    check_interval_method as check_interval_method,
    clustered_interval as clustered_interval,
    interval_design as interval_design,
    korn_graubard_size as korn_graubard_size,
    rho_upper_bound as rho_upper_bound,
)
from ._constants import (
    AUTO_INTERVAL as AUTO_INTERVAL,
    BOOTSTRAP_METHODS as BOOTSTRAP_METHODS,
    DEFAULT_INTERVAL as DEFAULT_INTERVAL,
    INTERVAL_CHOICES as INTERVAL_CHOICES,
    INTERVAL_METHODS as INTERVAL_METHODS,
    INTERVAL_USES as INTERVAL_USES,
    LIKELIHOOD_METHODS as LIKELIHOOD_METHODS,
    MAX_PLAN_SIZE as MAX_PLAN_SIZE,
    RHO_BOUND_LEVEL as RHO_BOUND_LEVEL,
    SUMS_METHODS as SUMS_METHODS,
)
from ._design import (
    RHO_WHEN_UNDEFINED as RHO_WHEN_UNDEFINED,
    ClusterDesign as ClusterDesign,
    ClusterSums as ClusterSums,
    anova_icc as anova_icc,
    cluster_design as cluster_design,
    size_weighted_mean as size_weighted_mean,
)
from ._difference import newcombe_paired_interval as newcombe_paired_interval, paired_correlation as paired_correlation
from ._difference_plan import DifferencePlan as DifferencePlan, plan_difference as plan_difference
from ._exact import (
    MAX_ESTIMATED_RHO_STATES as MAX_ESTIMATED_RHO_STATES,
    MAX_UNEQUAL_STATES as MAX_UNEQUAL_STATES,
    ExactCoverage as ExactCoverage,
    exact_coverage as exact_coverage,
    exact_coverages as exact_coverages,
)
from ._icc import fleiss_cuzick_icc as fleiss_cuzick_icc
from ._interval_plan import (
    IntervalPlan as IntervalPlan,
    PairedFigurePlan as PairedFigurePlan,
    plan_interval as plan_interval,
    plan_paired_figure as plan_paired_figure,
    scenarios_needed as scenarios_needed,
    wilson_sample_size as wilson_sample_size,
)
from ._intervals import (
    ConfidenceInterval as ConfidenceInterval,
    WilsonKishInterval as WilsonKishInterval,
    critical_value as critical_value,
    design_effect as design_effect,
    wilson_interval as wilson_interval,
    wilson_kish_interval as wilson_kish_interval,
    z_value as z_value,
)
from ._numbers import counted as counted, format_number as format_number, nan_to_none as nan_to_none
from ._queue import erlang_b as erlang_b, erlang_c as erlang_c, mean_wait_minutes as mean_wait_minutes
from ._risk import (
    MAX_THRESHOLD as MAX_THRESHOLD,
    RISK_SOURCE as RISK_SOURCE,
    RISK_THRESHOLDS as RISK_THRESHOLDS,
    WHOLE_GROUP_SHARE as WHOLE_GROUP_SHARE,
    RiskRule as RiskRule,
    interval_at_risk as interval_at_risk,
    minority_spread as minority_spread,
    risk_group as risk_group,
    risk_reason as risk_reason,
)
