"""The statistics of the measurement: clustered rates, their intervals, plans and the reviewers' queue.

numpy and scipy only; nothing here reads a file or knows a label. Each section lists one topic, as
``scipy.stats`` does; the implementation is in private modules.

Arguments
=========
check_probability, check_level, check_count, check_choice, check_range
                                 the validators every public function calls at entry (ValueError naming
                                 the parameter and quoting the value)
refuse                           such a ValueError of a message of one's own, naming its parameters

Intervals and the design effect (SPEC section 5)
================================================
ConfidenceInterval               ``(low, high)``: every interval of the package is one
z_value, critical_value, wilson_interval, wilson_kish_interval, WilsonKishInterval, design_effect
                                 Wilson intervals and the Kish formula
cluster_design, ClusterDesign, ClusterSums, size_weighted_mean, RHO_WHEN_UNDEFINED, anova_icc
                                 the design effect of SPEC section 5: the one rule
fleiss_cuzick_icc                the Fleiss-Cuzick ICC of clustered 0/1 outcomes
clustered_interval, check_interval_method, INTERVAL_METHODS, DEFAULT_INTERVAL, SUMS_METHODS,
LIKELIHOOD_METHODS, BOOTSTRAP_METHODS, rho_upper_bound, korn_graubard_size, RHO_BOUND_LEVEL
                                 the interval of a clustered rate, by name (``--interval``)
interval_design, IntervalDesign, INTERVAL_USES
                                 what each interval used: its rho, design effect and effective size
choose_interval, resolve_interval, IntervalChoice, AUTO_INTERVAL, INTERVAL_CHOICES, group_coverage, GroupCoverage,
design_group, SCENARIO_RANGES, INTERVAL_CHOICE_SOURCE
                                 ``--interval auto``: the narrowest interval that held 95% in the coverage
                                 study for the data's number of scenarios and replicas
beta_binomial_profile_interval, beta_binomial_bayes_interval, beta_binomial_fit, BetaBinomialFit,
MU_PRIOR, RHO_PRIOR
                                 the beta-binomial model's profile-likelihood and credible intervals
cluster_bootstrap, cluster_bootstrap_pi, paired_cluster_bootstrap, ClusterBootstrapResult,
DegenerateIntervalWarning        the cluster bootstrap, of one rate or of two assistants' difference
resampled_cluster_sums, percentile_interval, percentile_positions
                                 its resampling and percentile rule, for draws of several totals at once
newcombe_paired_interval, paired_correlation   Newcombe's interval of a paired difference
interval_at_risk, risk_reason, minority_spread, risk_group, RiskRule, RISK_THRESHOLDS, RISK_SOURCE,
MAX_THRESHOLD, WHOLE_GROUP_SHARE
                                 whether an interval is at risk on the data at hand (the rarer outcome in
                                 few scenarios), its thresholds measured by ``escalation study warnings``
exact_coverage, exact_coverages, ExactCoverage, MAX_ESTIMATED_RHO_STATES, MAX_UNEQUAL_STATES
                                 the exact coverage of the intervals of the cluster sums
nan_to_none                      an undefined number as JSON's null
format_number                    a number as text for a person, ``n/a`` where undefined
counted                          a count with its noun, singular for one

Planning
========
plan_interval, plan_paired_figure, plan_difference, scenarios_needed, wilson_sample_size,
IntervalPlan, PairedFigurePlan, DifferencePlan, MAX_PLAN_SIZE
                                 scenarios and replicas for a target width or power

The reviewers' queue (docs/capacity.md)
=======================================
erlang_b, erlang_c, mean_wait_minutes   the M/M/R queue (Erlang B and C) and the Allen-Cunneen wait
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
