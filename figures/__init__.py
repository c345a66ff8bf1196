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

Reproduction of the paper
=========================
plot_profiles, plot_record_vs_text

Leaderboard
===========
plot_leaderboard
"""
from ._coverage import coverage_by_p, coverage_by_scenarios, misses_by_method, width_against_coverage
from ._differences import difference_coverage, mode_b_coverage
from ._judges import plot_calibration_bias, plot_mode_b, plot_reliability
from ._leaderboard import plot_leaderboard
from ._reproduce import plot_profiles, plot_record_vs_text
from ._sample_size import plot_interval_validation, plot_power_validation, plot_scenarios_by_replicas, plot_scenarios_grid

__all__ = [
    "coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "misses_by_method",
    "plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation", "plot_power_validation",
    "difference_coverage", "mode_b_coverage",
    "plot_reliability", "plot_calibration_bias", "plot_mode_b",
    "plot_profiles", "plot_record_vs_text",
    "plot_leaderboard",
]
