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

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


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
        if exact is not None and part[exact].notna().any():
            ax.plot(part[exact], y, "x", color=bars[0].get_color(), markersize=5,
                    label=f"{method}, {exact_name}")
    for x in np.atleast_1d(reference):
        ax.axvline(x, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_xlabel(xlabel)
    ax.invert_yaxis()


def plot_interval_validation(table: pd.DataFrame) -> Figure:
    """Coverage (+-2 MCSE, nominal dashed) and realised median half-width (target dashed) per plan.

    A row per plan: its kind, rate, rho, replicas, spread of the scenario sizes (``cv``), interval
    and ``K``.
    """
    table = table.copy()
    columns = ["kind", "p", "rho", "replicas", "size_cv", "scenarios"]
    if "size_cv" not in table:
        columns.remove("size_cv")
    table["_label"] = _cell_labels(table, columns)
    if "interval" in table:
        table["_label"] = [label + (" t" if interval == "wilson-kish-t" else "")
                           for label, interval in zip(table["_label"], table["interval"])]
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


def plot_power_validation(table: pd.DataFrame, size: pd.DataFrame | None = None, *, size_note: str = "") -> Figure:
    """Realised power (+-2 MCSE) of each power plan, target dashed; with ``size``, the size of each test.

    ``table`` is the power table (one row per plan and test, ``planned_for`` marking the test the
    plan was made for, of which only those rows are drawn when the column is there). ``size`` is
    the size table: the rejection rate under the null against the number of scenarios ``K``, the
    mean over its cells per test (dotted: the highest cell), with the band ``alpha +- 2 MCSE`` of one
    cell shaded; ``size_note`` says which cells in the panel's title.
    """
    table = table.copy()
    if "planned_for" in table:
        table = table[table["planned_for"].astype(bool)]
    columns = [c for c in ("design", "test", "p_a", "p_b", "rho", "replicas", "size_cv", "scenarios") if c in table]
    table["_label"] = _cell_labels(table, columns)
    labels = list(dict.fromkeys(table["_label"]))
    height = 1.5 + 0.16 * len(labels)
    if size is None:
        fig, ax = subplots(figsize=(7.0, height), layout="constrained")
    else:
        fig, (ax, right) = subplots(1, 2, figsize=(13.0, height), layout="constrained",
                                    gridspec_kw={"width_ratios": (1.3, 1.0)})
    _dot_panel(ax, table, "realised_power", "realised_power_mcse", labels,
               table["power_target"].unique(),
               "realised power (bars: 2 MCSE; x: planned; dashed: target)",
               exact="planned_power", exact_name="planned")
    ax.set_ylabel("plan (each drawn for the tests it was made for)")
    ax.legend(loc="best", fontsize=7)
    ax.set_title("Power plans simulated")
    if size is not None:
        alpha = float(size["alpha"].iloc[0])
        band = 2 * float(size["size_mcse"].median())
        right.axhspan(alpha - band, alpha + band, color="grey", alpha=0.2, linewidth=0)
        right.axhline(alpha, color="grey", linestyle="--", linewidth=1)
        for (method, part), marker in zip(size.groupby("method", sort=False), _MARKERS * 2):
            by_k = part.groupby("scenarios")["size"]
            line, = right.plot(by_k.mean().index, by_k.mean().to_numpy(), marker=marker, label=f"{method} (mean)")
            right.plot(by_k.max().index, by_k.max().to_numpy(), linestyle=":", color=line.get_color(), linewidth=1)
        right.set_xscale("log")
        right.set_xlabel("scenarios K")
        right.set_ylabel("rejection rate under the null (dotted: highest cell)")
        right.set_title(f"Size of each test (dashed: {alpha:g}; band: +-2 MCSE){size_note}", fontsize=9)
        right.legend(loc="best", fontsize=7)
    return fig
