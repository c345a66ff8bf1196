"""Figures of the coverage study: they draw the summary tables of :mod:`studies._coverage_report`.

Every figure draws the summaries, not the cells: the mean and the lowest coverage of each
method over the cells of a panel, the mean width against the mean coverage by range of
scenarios, and the misses on each side. The coverage of a cell is its exact coverage where
that is computable and the Monte Carlo one elsewhere (the tables say which). The nominal level
is a solid line, 0.93 a dashed one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ._palette import BLUE, VERMILLION, method_styles
from ._style import legend_below, log_ticks, subplots

if TYPE_CHECKING:
    from matplotlib.typing import FillStyleType

__all__ = ["coverage_by_scenarios", "coverage_by_p", "width_against_coverage", "misses_by_method"]

_NAMES = {
    "wilson": "Wilson (ignores clustering)",
    "wilson-kish-true-rho": "Wilson-Kish, true rho (oracle)",
    "wilson-kish": "Wilson-Kish (the paper's)",
    "wilson-kish-t": "Wilson-Kish, t",
    "wilson-kish-ucb": "Wilson-Kish, upper bound of rho",
    "wilson-cluster-t": "Wilson, cluster variance, t",
    "korn-graubard": "Korn-Graubard (Clopper-Pearson)",
    "beta-binomial-profile": "Beta-binomial, profile likelihood",
    "beta-binomial-bayes": "Beta-binomial, Bayes",
    "bootstrap-percentile": "Cluster bootstrap, percentile",
    "bootstrap-bca": "Cluster bootstrap, BCa",
}
_FLOOR = 0.93


def _styles(methods) -> dict[str, tuple[str, str, str]]:
    """``(colour, marker, line style)`` of each method of ``methods`` that a figure draws: the study's in their
    order and style, then a researcher's own (studies.coverage ``methods=``), each with a pair no other has."""
    given = list(dict.fromkeys(methods))
    styles = method_styles([*_NAMES, *given])
    return {m: styles[m] for m in [*_NAMES, *given] if m in set(given)}


def _name(method: str) -> str:
    return _NAMES.get(method, f"{method} (yours)")


def _levels(ax, nominal: float) -> None:
    ax.axhline(nominal, color="black", lw=0.8, zorder=1)
    ax.axhline(_FLOOR, color="black", lw=0.6, ls="--", zorder=1)


def _level_handles(nominal: float) -> list:
    return [Line2D([], [], color="black", lw=0.8, label=f"nominal {nominal:g}"),
            Line2D([], [], color="black", lw=0.6, ls="--", label=f"{_FLOOR:g}")]


def _method_handles(methods) -> list:
    return [Line2D([], [], color=c, marker=mk, ls=ls, ms=4, lw=1.1, label=_name(m))
            for m, (c, mk, ls) in _styles(methods).items()]


def _designs(table: pd.DataFrame) -> list[tuple[int, float]]:
    return sorted({(int(m), float(cv)) for m, cv in zip(table["replicas"], table["size_cv"])})


def _design_title(m: int, cv: float) -> str:
    return f"m = {m}, equal sizes" if cv == 0 else f"m = {m}, size cv {cv:g}"


#: Lower edges of the two rows; a value below is drawn on the edge (the bootstraps fall far lower).
_CLIP = {"mean": 0.75, "min": 0.5}


def _by(table: pd.DataFrame, x: str, xlabel: str, title: str, nominal: float):
    """Mean (top row) and lowest (bottom row) coverage against ``x``, one column per size design.

    Each row has one y range, the same in every figure, so the figures of both estimands compare.
    """
    designs = _designs(table)
    fig, axes = subplots(2, len(designs), figsize=(2.3 * len(designs) + 1.2, 6.0), sharex=True, sharey="row",
                         squeeze=False, layout="constrained")
    for j, (m, cv) in enumerate(designs):
        part = table[(table["replicas"] == m) & (table["size_cv"] == cv)]
        for i, stat in enumerate(("mean", "min")):
            ax = axes[i, j]
            _levels(ax, nominal)
            for method, (colour, marker, style) in _styles(table["method"]).items():
                rows = part[part["method"] == method].sort_values(x)
                if rows[stat].notna().any():
                    ax.plot(rows[x], np.maximum(rows[stat], _CLIP[stat]), marker=marker, ls=style, ms=4, lw=1.1,
                            color=colour, label=_name(method), clip_on=False)
            log_ticks(ax, table[x])
            ax.set_ylim(_CLIP[stat], 1.0)
            if i == 0:
                ax.set_title(_design_title(m, cv), fontsize=9)
            else:
                ax.set_xlabel(xlabel)
    axes[0, 0].set_ylabel(f"mean coverage\n(below {_CLIP['mean']:g}: on the edge)")
    axes[1, 0].set_ylabel(f"lowest coverage\n(below {_CLIP['min']:g}: on the edge)")
    fig.suptitle(title, fontsize=10)
    legend_below(fig, [*_method_handles(table["method"]), *_level_handles(nominal)], ncol=4)
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
    """Mean coverage against mean width (relative to the true-rho oracle), one panel per range of scenarios.

    ``table`` is ``studies._coverage_report.by_range(cells)``: columns ``method, replicas_group,
    scenarios_range, mean, min, relative_width``. Each method is one line from its point with
    one replica (hollow marker) to its point with several (filled): the best methods sit high
    and near width 1. The panels share both axes; a mean coverage below the lowest tick is drawn
    on the edge.
    """
    groups = list(dict.fromkeys(table["replicas_group"]))
    ranges = list(dict.fromkeys(table["scenarios_range"]))
    fig, axes = subplots(1, len(ranges), figsize=(2.9 * len(ranges) + 1.0, 3.9), sharex=True, sharey=True,
                         squeeze=False, layout="constrained")
    fills: tuple[FillStyleType, ...] = ("none", "full", "left", "bottom")
    for ax, scenarios in zip(axes[0], ranges):
        _levels(ax, nominal)
        ax.axvline(1.0, color="0.6", lw=0.6, ls=":", zorder=1)
        part = table[table["scenarios_range"] == scenarios]
        for method, (colour, marker, style) in _styles(table["method"]).items():
            rows = part[part["method"] == method].set_index("replicas_group").reindex(groups)
            y = np.maximum(rows["mean"], _CLIP["mean"])
            ax.plot(rows["relative_width"], y, ls=style, lw=1.0, color=colour, clip_on=False)
            for group, fill in zip(groups, fills):
                ax.plot(rows.loc[[group], "relative_width"], y.loc[[group]], marker=marker, ms=6, ls="none",
                        color=colour, fillstyle=fill, clip_on=False, zorder=3)
        ax.set_ylim(_CLIP["mean"], 1.0)
        ax.set_title(f"scenarios {scenarios}" if scenarios.startswith("K") else f"scenarios K = {scenarios}",
                     fontsize=9)
        ax.set_xlabel("mean width / oracle's width")
    axes[0, 0].set_ylabel(f"mean coverage\n(below {_CLIP['mean']:g}: on the edge)")
    fig.suptitle("Coverage and width of each interval by number of scenarios (both estimands; dotted: the oracle's "
                 "width)", fontsize=10)
    replicas = [Line2D([], [], color="black", marker="o", ls="none", fillstyle=fill, label=f"marker: {group}")
                for group, fill in zip(groups, fills)]
    legend_below(fig, [*_method_handles(table["method"]), *_level_handles(nominal), *replicas], ncol=4)
    return fig


def misses_by_method(table: pd.DataFrame):
    """Mean share of intervals wholly below and wholly above the truth, per method and estimand.

    ``table`` is ``studies._coverage_report.misses(cells)``: columns ``estimand, method,
    miss_low, miss_high``. A symmetric 95% interval misses 0.025 on each side (dotted line).
    """
    estimands = list(dict.fromkeys(table["estimand"]))
    methods = list(_styles(table["method"]))
    fig, axes = subplots(1, len(estimands), figsize=(5.5 * len(estimands), 4.2), sharex=True, sharey=True,
                         squeeze=False, layout="constrained")
    y = np.arange(len(methods))
    sides = (("miss_low", -1, BLUE, "", "interval below the truth"),
             ("miss_high", 1, VERMILLION, "////", "interval above the truth"))
    for j, estimand in enumerate(estimands):
        ax = axes[0, j]
        part = table[table["estimand"] == estimand].set_index("method").reindex(methods)
        for column, sign, colour, hatch, _ in sides:
            ax.barh(y, sign * part[column], color=colour, hatch=hatch, edgecolor="white", lw=0)
        for side in (-0.025, 0.025):
            ax.axvline(side, color="black", lw=0.6, ls=":")
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y, [_name(m) for m in methods])
        ax.set_ylim(len(methods) - 0.5, -0.5)
        ax.xaxis.set_major_formatter(lambda v, _: f"{abs(v):g}")
        ax.set_xlabel("mean share of misses (below | above)")
        ax.set_title(estimand, fontsize=9)
    fig.suptitle("Misses on each side, mean over cells", fontsize=10)
    legend_below(fig, [*(Patch(facecolor=colour, hatch=hatch, edgecolor="white", label=label)
                         for _, _, colour, hatch, label in sides),
                       Line2D([], [], color="black", lw=0.6, ls=":", label="0.025 each side (a symmetric 95% "
                              "interval)")], ncol=3)
    return fig
