"""Figures of the differences study: coverage of compare's difference intervals and of the mode-B corrections.

Every panel shares one y range; the grey band is the nominal level +- 1.96 Monte Carlo standard
errors of ``nsim`` data sets (where a correct interval's coverage falls 95% of the time), the
dotted line the level below which a method fails.
"""
from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ._palette import LINESTYLES, method_styles
from ._style import legend_below, log_ticks, subplots

__all__ = ["difference_coverage", "mode_b_coverage"]


def _axes_grid(rows, cols):
    return subplots(len(rows), len(cols), figsize=(3.1 * len(cols) + 1, 2.4 * len(rows) + 1.4), sharex=True,
                    sharey=True, squeeze=False, layout="constrained")


def _nominal(ax, nsim: int, nominal: float, fails_below: float) -> None:
    """The nominal level with its 95% Monte Carlo band (grey) and the failure line (dotted)."""
    band = 1.959964 * math.sqrt(nominal * (1 - nominal) / nsim)
    ax.axhspan(nominal - band, nominal + band, color="0.88", lw=0, zorder=0)
    ax.axhline(nominal, color="black", lw=0.8, zorder=1)
    ax.axhline(fails_below, color="0.4", lw=0.8, ls=":", zorder=1)


def _level_handles(nsim: int, nominal: float, fails_below: float) -> list:
    return [Line2D([], [], color="black", lw=0.8, label=f"nominal {nominal:g}"),
            Patch(facecolor="0.88", label=f"band: nominal +- 1.96 MCSE ({nsim} data sets)"),
            Line2D([], [], color="0.4", lw=0.8, ls=":", label=f"fails below {fails_below:g}")]


def _finish(fig, axes, table: pd.DataFrame, title: str, handles: list):
    axes[0, 0].set_ylim(max(0.0, min(0.7, table["coverage"].min() - 0.02)), 1.0)
    legend_below(fig, handles, ncol=2, fontsize=7)
    fig.suptitle(textwrap.fill(title, width=int(14 * fig.get_figwidth())), fontsize=9)
    return fig


def difference_coverage(table: pd.DataFrame, *, methods, names: dict, nominal: float = 0.95,
                        fails_below: float = 0.93):
    """Coverage of each difference interval against K: mean over the rate pairs (solid) and lowest (dashed).

    ``table`` has columns ``method, rho, between, replicas, scenarios, coverage, nsim``; one panel per
    (rho, between) row and replicas column; ``names`` labels each of ``methods``.
    """
    styles = method_styles(methods)
    designs = table[["rho", "between"]].drop_duplicates().sort_values(["rho", "between"]).to_numpy()
    replicas = sorted(table["replicas"].unique())
    nsim = int(table["nsim"].min())  # the main pass (a rerun cell has more)
    fig, axes = _axes_grid(designs, replicas)
    for i, (rho, between) in enumerate(designs):
        for j, m in enumerate(replicas):
            ax = axes[i, j]
            _nominal(ax, nsim, nominal, fails_below)
            part = table[(table["rho"] == rho) & (table["between"] == between) & (table["replicas"] == m)]
            for method in methods:
                colour, marker, _ = styles[method]
                stats = part[part["method"] == method].groupby("scenarios")["coverage"].agg(["mean", "min"])
                ax.plot(stats.index, stats["mean"], marker=marker, ms=4, lw=1.2, color=colour)
                ax.plot(stats.index, stats["min"], ls="--", marker=marker, ms=2.5, lw=0.9, color=colour)
            log_ticks(ax, table["scenarios"])
            ax.set_title(f"rho = {rho:g}, between = {between:g}, m = {m}", fontsize=8)
            if i == len(designs) - 1:
                ax.set_xlabel("scenarios K")
            if j == 0:
                ax.set_ylabel("coverage")
    handles = [Line2D([], [], color=styles[m][0], marker=styles[m][1], ms=4, lw=1.2, label=names[m]) for m in methods]
    handles += [Line2D([], [], color="0.3", lw=1.2, label="mean over the rate pairs"),
                Line2D([], [], color="0.3", lw=0.9, ls="--", label="lowest over the rate pairs")]
    return _finish(fig, axes, table, "Coverage of the interval of rate B - rate A", handles
                   + _level_handles(nsim, nominal, fails_below))


def mode_b_coverage(table: pd.DataFrame, drawn: pd.DataFrame, *, methods, names: dict, title: str,
                    nominal: float = 0.95, fails_below: float = 0.93):
    """Coverage of the mode-B intervals against K, per rho (rows) and m (columns), one line style per rate p.

    ``drawn`` holds the rows to draw (the cells where the correction is defined often enough, with
    their ``coverage``); the panels and the axis come from every row of ``table``; ``names``
    labels each of ``methods``.
    """
    styles = method_styles(methods)
    rhos, replicas = sorted(table["rho"].unique()), sorted(table["replicas"].unique())
    ps = sorted(table["p"].unique(), reverse=True)
    lines = dict(zip(ps, LINESTYLES * len(ps)))
    scenarios = table["scenarios"]
    nsim = int(table["nsim"].iloc[0])
    fig, axes = _axes_grid(rhos, replicas)
    for i, rho in enumerate(rhos):
        for j, m in enumerate(replicas):
            ax = axes[i, j]
            _nominal(ax, nsim, nominal, fails_below)
            part = drawn[(drawn["rho"] == rho) & (drawn["replicas"] == m)]
            for method in methods:
                colour, marker, _ = styles[method]
                for p in ps:
                    rows = part[(part["method"] == method) & (part["p"] == p)].sort_values("scenarios")
                    ax.plot(rows["scenarios"], rows["coverage"], marker=marker, ls=lines[p], ms=4, lw=1.1,
                            color=colour)
            log_ticks(ax, scenarios)
            ax.set_title(f"rho = {rho:g}, m = {m}", fontsize=8)
            if i == len(rhos) - 1:
                ax.set_xlabel("scenarios K")
            if j == 0:
                ax.set_ylabel("coverage")
    handles = [Line2D([], [], color=styles[m][0], marker=styles[m][1], ms=4, lw=1.1, label=names[m]) for m in methods]
    if len(ps) > 1:
        handles += [Line2D([], [], color="0.3", ls=lines[p], lw=1.1, label=f"line style: rate p = {p:g}") for p in ps]
    return _finish(fig, axes, drawn, title, handles + _level_handles(nsim, nominal, fails_below))
