"""Figures of the studies: each function draws a table it is given and saves it as PNG and PDF.

Nothing here computes a result, and importing it changes no matplotlib setting: figures are
drawn on :class:`matplotlib.figure.Figure` objects, never through pyplot's global state.

Coverage study
==============
coverage_by_p, coverage_by_scenarios, width_against_coverage

Sample-size study
=================
plot_scenarios_grid, plot_scenarios_by_replicas, plot_interval_validation, plot_power_validation

Calibration study
=================
plot_reliability, plot_calibration_bias, plot_mode_b

Reproduction of the paper
=========================
plot_profiles, plot_record_vs_text

Saving
======
save_figure                        PNG and PDF, each written under a temporary name then renamed
"""
from ._calibration import plot_calibration_bias, plot_mode_b, plot_reliability
from ._coverage import coverage_by_p, coverage_by_scenarios, width_against_coverage
from ._reproduce import plot_profiles, plot_record_vs_text
from ._sample_size import plot_interval_validation, plot_power_validation, plot_scenarios_by_replicas, plot_scenarios_grid
from ._style import save_figure

__all__ = [
    "coverage_by_p", "coverage_by_scenarios", "width_against_coverage",
    "plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation", "plot_power_validation",
    "plot_reliability", "plot_calibration_bias", "plot_mode_b",
    "plot_profiles", "plot_record_vs_text",
    "save_figure",
]
