"""Figures of the sample-size study: they draw the tables of :mod:`studies.sample_size`.

Each function takes a table and returns a :class:`~matplotlib.figure.Figure`; the study saves it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from ._style import subplots

__all__ = ["plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation",
           "plot_power_validation"]

_MARKERS = ("o", "s", "^", "D")


def plot_scenarios_grid(table: pd.DataFrame) -> Figure:
    """Heatmap of the planned scenarios ``K`` over ``p`` (rows) and ``rho`` (columns), annotated."""
    grid = table.pivot(index="p", columns="rho", values="scenarios")
    fig, ax = subplots(figsize=(1.0 + 0.8 * grid.shape[1], 0.8 + 0.5 * grid.shape[0]))
    image = ax.imshow(grid.to_numpy(float), cmap="viridis", norm=LogNorm(), aspect="auto",
                      origin="lower")
    for (i, j), value in np.ndenumerate(grid.to_numpy()):
        ax.text(j, i, f"{int(value)}", ha="center", va="center", fontsize=8,
                color="white" if value < np.sqrt(grid.min().min() * grid.max().max()) else "black")
    ax.set_xticks(range(grid.shape[1]), [f"{c:g}" for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [f"{r:g}" for r in grid.index])
    ax.set_xlabel("intra-scenario correlation rho")
    ax.set_ylabel("expected rate p")
    first = table.iloc[0]
    ax.set_title(f"Scenarios K for half-width {first['half_width']:g} with m = {int(first['replicas'])}")
    fig.colorbar(image, ax=ax, label="scenarios K (log scale)")
    return fig


def plot_scenarios_by_replicas(table: pd.DataFrame) -> Figure:
    """``K`` against replicas ``m`` for each ``rho``, with the floor ``z^2 p q rho / h^2`` dashed."""
    fig, ax = subplots(figsize=(6.0, 4.0))
    for (rho, part), marker in zip(table.groupby("rho"), _MARKERS * 4):
        line, = ax.plot(part["replicas"], part["scenarios"], marker=marker, label=f"rho = {rho:g}")
        ax.axhline(part["floor"].iloc[0], color=line.get_color(), linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("replicas per scenario m")
    ax.set_ylabel("scenarios K (Wilson-Kish)")
    first = table.iloc[0]
    ax.set_title(f"p = {first['p']:g}, half-width {first['half_width']:g}: dashed = floor no m goes below")
    ax.legend()
    return fig


_SHORT = {"replicas": "m", "scenarios": "K"}


def _cell_labels(table: pd.DataFrame, columns) -> list[str]:
    """``rate p=0.1 rho=0.2 m=5 K=51``: one short label per row."""
    def part(name, value):
        if isinstance(value, str):
            return value
        return f"{_SHORT.get(name, name)}={value:g}"
    return [" ".join(part(name, row[name]) for name in columns) for _, row in table.iterrows()]


def _dot_panel(ax, table, value, mcse, labels, reference, xlabel, exact=None, exact_name="exact"):
    """One horizontal dot plot: a row per cell, a marker per method, bars of +-2 MCSE.

    ``exact`` names a column drawn as crosses beside the Monte Carlo estimates.
    """
    methods = list(dict.fromkeys(table["method"]))
    # within each row, spread the methods present in that row around the row's position
    rank = table.groupby("_label", sort=False).cumcount().to_numpy()
    count = table.groupby("_label", sort=False)["method"].transform("size").to_numpy()
    table = table.assign(_y=[labels.index(label) for label in table["_label"]]
                         + np.where(count > 1, 0.4 * rank / np.maximum(count - 1, 1) - 0.2, 0.0))
    for method, marker in zip(methods, _MARKERS):
        part = table[table["method"] == method]
        y = part["_y"].to_numpy()
        bars = ax.errorbar(part[value], y, xerr=2 * part[mcse], fmt=marker, markersize=4, capsize=2,
                           label=method)
        if exact is not None:
            ax.plot(part[exact], y, "x", color=bars[0].get_color(), markersize=5,
                    label=f"{method}, {exact_name}")
    for x in np.atleast_1d(reference):
        ax.axvline(x, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_xlabel(xlabel)
    ax.invert_yaxis()


def plot_interval_validation(table: pd.DataFrame) -> Figure:
    """Coverage (+-2 MCSE, nominal dashed) and realised median half-width (target dashed) per plan."""
    table = table.copy()
    table["_label"] = _cell_labels(table, ["kind", "p", "rho", "replicas", "scenarios"])
    labels = list(dict.fromkeys(table["_label"]))
    fig, (left, right) = subplots(1, 2, sharey=True, figsize=(10.0, 1.5 + 0.22 * len(labels)),
                                      layout="constrained")
    _dot_panel(left, table, "coverage", "coverage_mcse", labels, table["confidence"].iloc[0],
               "coverage (bars: 2 MCSE; x: exact)", exact="exact_coverage")
    _dot_panel(right, table, "median_half_width", "median_half_width_mcse", labels,
               table["half_width"].unique(), "median half-width (dashed: target h)")
    left.set_ylabel("plan")
    left.legend(loc="lower left", fontsize=7)
    fig.suptitle("Interval plans simulated: coverage and half-width")
    return fig


def plot_power_validation(table: pd.DataFrame) -> Figure:
    """Realised power (+-2 MCSE) of each power plan, target dashed."""
    table = table.copy()
    table["_label"] = _cell_labels(table, ["design", "p_a", "p_b", "rho", "replicas", "scenarios"])
    labels = list(dict.fromkeys(table["_label"]))
    fig, ax = subplots(figsize=(7.0, 1.5 + 0.25 * len(labels)), layout="constrained")
    _dot_panel(ax, table, "realised_power", "realised_power_mcse", labels,
               table["power_target"].unique(),
               "realised power (bars: 2 MCSE; x: planned; dashed: target)",
               exact="planned_power", exact_name="planned")
    ax.set_ylabel("plan")
    ax.legend(loc="best", fontsize=7)
    ax.set_title("Power plans simulated")
    return fig
