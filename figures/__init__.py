"""Figures of the studies: each function draws a table it is given and returns the Figure.

Nothing here computes a result or writes a file, and importing it changes no matplotlib
setting: every figure is a :class:`matplotlib.figure.Figure` of its own, never pyplot's global
state, and needs no backend chosen. The studies save it (PNG and PDF, each under a temporary
name then renamed) with their own helper, so drawing depends on no other layer of the project.

Coverage study
==============
coverage_by_scenarios, coverage_by_p, width_against_coverage, misses_by_method

Sample-size study
=================
plot_scenarios_grid, plot_scenarios_by_replicas, plot_interval_validation, plot_power_validation

Differences study
=================
difference_coverage, mode_b_coverage

Judges study
============
plot_reliability, plot_calibration_bias, plot_mode_b

Capacity study
==============
plot_protection_curves, plot_capacity_validation

Gate study
==========
plot_gate_rules

Reproduction of the paper
=========================
plot_profiles, plot_record_vs_text

Leaderboard
===========
plot_leaderboard

Score and compare
=================
plot_rates, plot_difference_forest, plot_scenario_errors

Reports
=======
score_report, compare_report     one self-contained HTML page (returned as text) of a scoring, of a comparison
report_data                      the data such a page holds, read back
study_page, SMOKE_BANNER         one self-contained HTML page of a study's report.md, its figures and tables
figure_bytes                     a Figure as PNG or PDF bytes, for a page and for the files beside it
p_value_text                     a p-value as the command line and the pages write it
counted                          a count with its noun, singular for one (``1 conversation``)
"""
import lazy_loader

__all__ = [
    "coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "misses_by_method",
    "plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation", "plot_power_validation",
    "difference_coverage", "mode_b_coverage",
    "plot_reliability", "plot_calibration_bias", "plot_mode_b",
    "plot_protection_curves", "plot_capacity_validation",
    "plot_gate_rules",
    "plot_profiles", "plot_record_vs_text",
    "plot_leaderboard",
    "plot_rates", "plot_difference_forest", "plot_scenario_errors",
    "score_report", "compare_report", "report_data", "figure_bytes", "p_value_text", "counted",
    "study_page", "SMOKE_BANNER",
]

#: The public names by the module that defines each: lazy_loader imports a module the first time one
#: of its names is asked for (PEP 562), so ``escalation --help`` imports no numerical library.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_capacity": ["plot_capacity_validation", "plot_protection_curves"],
    "_coverage": ["coverage_by_p", "coverage_by_scenarios", "misses_by_method", "width_against_coverage"],
    "_differences": ["difference_coverage", "mode_b_coverage"],
    "_gate": ["plot_gate_rules"],
    "_judges": ["plot_calibration_bias", "plot_mode_b", "plot_reliability"],
    "_leaderboard": ["plot_leaderboard"],
    "_report": ["compare_report", "figure_bytes", "report_data", "score_report"],
    "_text": ["counted", "p_value_text"],
    "_reproduce": ["plot_profiles", "plot_record_vs_text"],
    "_score": ["plot_difference_forest", "plot_rates", "plot_scenario_errors"],
    "_study_page": ["SMOKE_BANNER", "study_page"],
    "_sample_size": [
        "plot_interval_validation", "plot_power_validation", "plot_scenarios_by_replicas", "plot_scenarios_grid",
    ],
})
