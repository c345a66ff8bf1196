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
import importlib

__all__ = [
    "coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "misses_by_method",
    "plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation", "plot_power_validation",
    "difference_coverage", "mode_b_coverage",
    "plot_reliability", "plot_calibration_bias", "plot_mode_b",
    "plot_profiles", "plot_record_vs_text",
    "plot_leaderboard",
]

#: Where each public name is defined: it is imported from there when it is first asked for (PEP 562),
#: so importing the door imports no matplotlib until a figure is drawn. One entry per name; ``__all__``
#: lists the same names.
_WHERE = {
    "coverage_by_p": "._coverage", "coverage_by_scenarios": "._coverage", "misses_by_method": "._coverage",
    "width_against_coverage": "._coverage",
    "difference_coverage": "._differences", "mode_b_coverage": "._differences",
    "plot_calibration_bias": "._judges", "plot_mode_b": "._judges", "plot_reliability": "._judges",
    "plot_leaderboard": "._leaderboard",
    "plot_profiles": "._reproduce", "plot_record_vs_text": "._reproduce",
    "plot_interval_validation": "._sample_size", "plot_power_validation": "._sample_size",
    "plot_scenarios_by_replicas": "._sample_size", "plot_scenarios_grid": "._sample_size",
}


def __getattr__(name: str):
    """A public name, imported from its module (:data:`_WHERE`) the first time it is asked for."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # asked for once: later look-ups find it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
