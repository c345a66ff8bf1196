"""Figures of the coverage study: they draw the summary tables of :mod:`studies._coverage_report`.

Every figure draws the summaries, not the cells: the mean and the lowest coverage of each
method over the cells of a panel, the mean width against the mean coverage by range of
scenarios, and the misses on each side. The coverage of a cell is its exact coverage where
that is computable and the Monte Carlo one elsewhere (the tables say which). The nominal level
is a solid line, 0.93 a dashed one.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import log_ticks, subplots

__all__ = ["coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "misses_by_method"]

_STYLE = {
    "wilson": ("Wilson (ignores clustering)", "tab:red"),
    "wilson-kish-true-rho": ("Wilson-Kish, true rho (oracle)", "tab:green"),
    "wilson-kish": ("Wilson-Kish (the paper's)", "tab:blue"),
    "wilson-kish-t": ("Wilson-Kish, t", "tab:cyan"),
    "wilson-kish-ucb": ("Wilson-Kish, upper bound of rho", "tab:olive"),
    "korn-graubard": ("Korn-Graubard", "tab:brown"),
    "bootstrap-percentile": ("Cluster bootstrap, percentile", "tab:orange"),
    "bootstrap-bca": ("Cluster bootstrap, BCa", "tab:purple"),
}
_FLOOR = 0.93


def _levels(ax, nominal: float) -> None:
    ax.axhline(nominal, color="black", lw=0.8, zorder=1)
    ax.axhline(_FLOOR, color="black", lw=0.6, ls="--", zorder=1)


def _designs(table: pd.DataFrame) -> list[tuple[int, float]]:
    return sorted({(int(m), float(cv)) for m, cv in zip(table["replicas"], table["size_cv"])})


def _design_title(m: int, cv: float) -> str:
    return f"m = {m}, equal sizes" if cv == 0 else f"m = {m}, size cv {cv:g}"


#: Lower edges of the two rows; a value below is drawn on the edge (the bootstraps fall far lower).
_CLIP = {"mean": 0.75, "min": 0.5}


def _by(table: pd.DataFrame, x: str, xlabel: str, title: str, nominal: float):
    """Mean (top row) and lowest (bottom row) coverage against ``x``, one column per size design."""
    designs = _designs(table)
    fig, axes = subplots(2, len(designs), figsize=(2.2 * len(designs) + 1, 5.6), sharex=True, sharey="row",
                         squeeze=False)
    for j, (m, cv) in enumerate(designs):
        part = table[(table["replicas"] == m) & (table["size_cv"] == cv)]
        for i, stat in enumerate(("mean", "min")):
            ax = axes[i, j]
            _levels(ax, nominal)
            for method, (label, colour) in _STYLE.items():
                rows = part[part["method"] == method].sort_values(x)
                if rows[stat].notna().any():
                    ax.plot(rows[x], np.maximum(rows[stat], _CLIP[stat]), "-o", ms=3, lw=1.1, color=colour,
                            label=label, clip_on=False)
            log_ticks(ax, table[x])
            ax.set_ylim(_CLIP[stat], 1.0)
            if i == 0:
                ax.set_title(_design_title(m, cv), fontsize=9)
            else:
                ax.set_xlabel(xlabel)
    axes[0, 0].set_ylabel(f"mean coverage\n(below {_CLIP['mean']:g}: on the edge)")
    axes[1, 0].set_ylabel(f"lowest coverage\n(below {_CLIP['min']:g}: on the edge)")
    fig.suptitle(title, fontsize=10)
    _legend(fig, axes, ncol=4)
    return fig


def coverage_by_scenarios(table: pd.DataFrame, *, nominal: float = 0.95):
    """Mean and lowest coverage of each method against the number of scenarios K.

    Parameters
    ----------
    table : pandas.DataFrame
        ``studies._coverage_report.aggregate(cells, "scenarios")`` of one estimand: columns
        ``estimand, method, replicas, size_cv, scenarios, mean, min``; the mean and the
        minimum run over the true values and rho of a size design.
    nominal : float
        Nominal level.
    """
    estimand = table["estimand"].iloc[0]
    return _by(table, "scenarios", "scenarios K",
               f"Coverage of {estimand} intervals against the number of scenarios (over true values and rho; "
               "exact where computable)", nominal)


def coverage_by_p(table: pd.DataFrame, *, nominal: float = 0.95):
    """Mean and lowest coverage against the distance of the true value from the boundary.

    ``table`` is ``aggregate(cells, "p")`` of one estimand; the x axis is the true ``p_u``, or
    ``1 - pi``; the mean and the minimum run over K and rho of a size design.
    """
    part = table.copy()
    estimand = part["estimand"].iloc[0]
    if estimand == "pi":
        part["p"] = (1.0 - part["p"]).round(12)
    return _by(part, "p", "1 - true pi" if estimand == "pi" else "true p_u",
               f"Coverage of {estimand} intervals against the true value (over K and rho; exact where computable)",
               nominal)


def width_against_coverage(table: pd.DataFrame, *, nominal: float = 0.95):
    """Mean width (relative to the true-rho oracle) against mean coverage, by range of scenarios.

    ``table`` is ``studies._coverage_report.by_range(cells)``: columns ``method, replicas_group,
    scenarios_range, mean, min, relative_width``; one panel per replicas group, one line per
    method through its ranges of K (marker size grows with K).
    """
    groups = list(dict.fromkeys(table["replicas_group"]))
    ranges = list(dict.fromkeys(table["scenarios_range"]))
    fig, axes = subplots(1, len(groups), figsize=(5.8 * len(groups), 4.8), sharey=True, squeeze=False)
    for j, group in enumerate(groups):
        ax = axes[0, j]
        _levels(ax, nominal)
        part = table[table["replicas_group"] == group]
        for method, (label, colour) in _STYLE.items():
            rows = part[part["method"] == method].set_index("scenarios_range").reindex(ranges)
            ax.plot(rows["relative_width"], rows["mean"], "-", lw=0.8, color=colour, alpha=0.6)
            ax.scatter(rows["relative_width"], rows["mean"], s=[12 + 14 * k for k in range(len(ranges))],
                       color=colour, label=label, zorder=3)
        ax.set_xlabel("mean width / width of Wilson-Kish with the true rho")
        ax.set_title(f"{group}; marker size: K range {', '.join(ranges)}", fontsize=9)
    axes[0, 0].set_ylabel("mean coverage")
    fig.suptitle("Width against coverage by range of scenarios (both estimands)", fontsize=10)
    _legend(fig, axes, ncol=4)
    return fig


def misses_by_method(table: pd.DataFrame):
    """Mean share of intervals wholly below and wholly above the truth, per method and estimand.

    ``table`` is ``studies._coverage_report.misses(cells)``: columns ``estimand, method,
    miss_low, miss_high``. A symmetric 95% interval misses 0.025 on each side (dotted line).
    """
    estimands = list(dict.fromkeys(table["estimand"]))
    methods = [m for m in _STYLE if m in set(table["method"])]
    fig, axes = subplots(1, len(estimands), figsize=(5.5 * len(estimands), 4.2), sharex=True, squeeze=False)
    y = np.arange(len(methods))
    for j, estimand in enumerate(estimands):
        ax = axes[0, j]
        part = table[table["estimand"] == estimand].set_index("method").reindex(methods)
        ax.barh(y, -part["miss_low"], color="tab:blue", label="interval below the truth")
        ax.barh(y, part["miss_high"], color="tab:red", label="interval above the truth")
        for side in (-0.025, 0.025):
            ax.axvline(side, color="black", lw=0.6, ls=":")
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y, [_STYLE[m][0] for m in methods] if j == 0 else [])
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(lambda v, _: f"{abs(v):g}")
        ax.set_xlabel("mean share of misses (below | above)")
        ax.set_title(estimand, fontsize=9)
    fig.suptitle("Misses on each side, mean over cells (dotted: 0.025 each side)", fontsize=10)
    _legend(fig, axes, ncol=2)
    return fig


def _legend(fig, axes, *, ncol: int) -> None:
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
