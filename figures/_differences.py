"""Figures of the differences study: coverage of compare's difference intervals and of the mode-B corrections."""
from __future__ import annotations

import math

import pandas as pd

from ._style import log_ticks

__all__ = ["difference_coverage", "mode_b_coverage"]


def _axes_grid(rows, cols):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(3.1 * len(cols) + 1, 2.4 * len(rows) + 1.2))
    axes = fig.subplots(len(rows), len(cols), sharex=True, sharey=True, squeeze=False)
    return fig, axes


def _nominal(ax, nsim: int, nominal: float, fails_below: float) -> None:
    """The nominal level with its 95% Monte Carlo band (grey) and the failure line (dotted)."""
    band = 1.959964 * math.sqrt(nominal * (1 - nominal) / nsim)
    ax.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
    ax.axhline(nominal, color="black", lw=0.8, zorder=1)
    ax.axhline(fails_below, color="0.5", lw=0.6, ls=":", zorder=1)


def _finish(fig, axes, table: pd.DataFrame, title: str, bottom: float):
    axes[0, 0].set_ylim(max(0.0, min(0.7, table["coverage"].min() - 0.02)), 1.0)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(bottom=bottom, hspace=0.35)
    return fig


def difference_coverage(table: pd.DataFrame, *, methods, names: dict, colours: dict, nominal: float = 0.95,
                        fails_below: float = 0.93):
    """Coverage of each difference interval against K: mean over the rate pairs (line) and lowest (dashed).

    ``table`` has columns ``method, rho, between, replicas, scenarios, coverage, nsim``; one panel per
    (rho, between) row and replicas column.
    """
    designs = table[["rho", "between"]].drop_duplicates().sort_values(["rho", "between"]).to_numpy()
    replicas = sorted(table["replicas"].unique())
    fig, axes = _axes_grid(designs, replicas)
    for i, (rho, between) in enumerate(designs):
        for j, m in enumerate(replicas):
            ax = axes[i, j]
            _nominal(ax, int(table["nsim"].iloc[0]), nominal, fails_below)
            part = table[(table["rho"] == rho) & (table["between"] == between) & (table["replicas"] == m)]
            for method in methods:
                stats = part[part["method"] == method].groupby("scenarios")["coverage"].agg(["mean", "min"])
                ax.plot(stats.index, stats["mean"], "-o", ms=3, lw=1.2, color=colours[method],
                        label=names[method] + " (mean)")
                ax.plot(stats.index, stats["min"], "--", lw=0.9, color=colours[method])
            log_ticks(ax, table["scenarios"])
            ax.set_title(f"rho = {rho:g}, between = {between:g}, m = {m}", fontsize=8)
            if i == len(designs) - 1:
                ax.set_xlabel("scenarios K")
            if j == 0:
                ax.set_ylabel("coverage")
    return _finish(fig, axes, table, "Coverage of the interval of p_b - p_a (dashed: lowest over the rate pairs)",
                   0.14)


def mode_b_coverage(table: pd.DataFrame, drawn: pd.DataFrame, *, methods, names: dict, colours: dict, title: str,
                    nominal: float = 0.95, fails_below: float = 0.93):
    """Coverage of the mode-B intervals against K, per rho (rows) and m (columns); dashed: the smaller rates.

    ``drawn`` holds the rows to draw (the cells where the correction is defined often enough, with
    their ``coverage``); the panels and the axis come from every row of ``table``.
    """
    rhos, replicas = sorted(table["rho"].unique()), sorted(table["replicas"].unique())
    ps = sorted(table["p"].unique())
    scenarios = table["scenarios"]
    fig, axes = _axes_grid(rhos, replicas)
    for i, rho in enumerate(rhos):
        for j, m in enumerate(replicas):
            ax = axes[i, j]
            _nominal(ax, int(table["nsim"].iloc[0]), nominal, fails_below)
            part = drawn[(drawn["rho"] == rho) & (drawn["replicas"] == m)]
            for method in methods:
                for p in ps:
                    rows = part[(part["method"] == method) & (part["p"] == p)].sort_values("scenarios")
                    ax.plot(rows["scenarios"], rows["coverage"], "-o" if p == ps[-1] else "--s", ms=3, lw=1.1,
                            color=colours[method], label=f"{names[method]}, p = {p:g}")
            log_ticks(ax, scenarios)
            ax.set_title(f"rho = {rho:g}, m = {m}", fontsize=8)
            if i == len(rhos) - 1:
                ax.set_xlabel("scenarios K")
            if j == 0:
                ax.set_ylabel("coverage")
    return _finish(fig, axes, drawn, title, 0.17)
