"""Figures of the sample-size study: they draw the tables of :mod:`studies.sample_size`.

Each function takes a table and returns a :class:`~matplotlib.figure.Figure`; the study saves it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ._palette import BLACK, MARKERS, PALETTE, method_styles
from ._style import legend_below, legend_right, log_ticks, subplots

__all__ = ["plot_scenarios_grid", "plot_scenarios_by_replicas", "plot_interval_validation",
           "plot_power_validation"]


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
    fig, ax = subplots(figsize=(7.4, 4.0), layout="constrained")
    handles = []
    for i, (rho, part) in enumerate(table.groupby("rho")):
        colour, marker = PALETTE[i % (len(PALETTE) - 1)], MARKERS[i % len(MARKERS)]
        ax.plot(part["replicas"], part["scenarios"], color=colour, marker=marker, ms=5)
        ax.axhline(part["floor"].iloc[0], color=colour, linestyle="--", linewidth=1)
        handles.append(Line2D([], [], color=colour, marker=marker, ms=5, label=f"rho = {rho:g}"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("replicas per scenario m")
    ax.set_ylabel("scenarios K (Wilson-Kish)")
    first = table.iloc[0]
    ax.set_title(f"p = {first['p']:g}, half-width {first['half_width']:g}", fontsize=10)
    handles.append(Line2D([], [], color="0.3", ls="--", lw=1, label="floor no m goes below\n(z^2 p q rho / h^2)"))
    legend_right(fig, handles)
    return fig


_SHORT = {"replicas": "m", "scenarios": "K"}


def _cell_labels(table: pd.DataFrame, columns) -> list[str]:
    """``rate p=0.1 rho=0.2 m=5 K=51``: one short label per row."""
    def part(name, value):
        if isinstance(value, str):
            return value
        return f"{_SHORT.get(name, name)}={value:g}"
    return [" ".join(part(name, row[name]) for name in columns) for _, row in table.iterrows()]


def _dot_panel(ax, table, value, mcse, labels, styles, reference, xlabel, exact=None):
    """One horizontal dot plot: a row per cell, a marker per method, bars of +-2 MCSE.

    ``exact`` names a column drawn as crosses of the method's colour beside the Monte Carlo estimates.
    """
    # within each row, spread the methods present in that row around the row's position
    rank = table.groupby("_label", sort=False).cumcount().to_numpy()
    count = table.groupby("_label", sort=False)["method"].transform("size").to_numpy()
    table = table.assign(_y=[labels.index(label) for label in table["_label"]]
                         + np.where(count > 1, 0.4 * rank / np.maximum(count - 1, 1) - 0.2, 0.0))
    for method, (colour, marker, _) in styles.items():
        part = table[table["method"] == method]
        y = part["_y"].to_numpy()
        ax.errorbar(part[value], y, xerr=2 * part[mcse], fmt=marker, color=colour, markersize=4, capsize=2)
        if exact is not None and part[exact].notna().any():
            ax.plot(part[exact], y, "x", color=colour, markersize=5)
    for x in np.atleast_1d(reference):
        ax.axvline(x, color="0.4", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlabel(xlabel, fontsize=8)


def _method_handles(styles: dict, exact: str | None = None) -> list:
    handles = [Line2D([], [], color=c, marker=mk, ls="none", ms=4, label=m) for m, (c, mk, _) in styles.items()]
    if exact:
        handles.append(Line2D([], [], color=BLACK, marker="x", ls="none", ms=5, label=f"x: {exact}"))
    return handles


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
    styles = method_styles(table["method"])
    fig, (left, right) = subplots(1, 2, sharey=True, figsize=(10.0, 2.2 + 0.24 * len(labels)),
                                  layout="constrained")
    _dot_panel(left, table, "coverage", "coverage_mcse", labels, styles, table["confidence"].iloc[0],
               "coverage (bars: 2 MCSE; dashed: nominal)", exact="exact_coverage")
    _dot_panel(right, table, "median_half_width", "median_half_width_mcse", labels, styles,
               table["half_width"].unique(), "median half-width (bars: 2 MCSE; dashed: target h)")
    left.set_ylabel("plan")
    fig.suptitle("Interval plans simulated: coverage and half-width", fontsize=10)
    legend_below(fig, _method_handles(styles, "exact coverage"), ncol=3)
    return fig


def plot_power_validation(table: pd.DataFrame, size: pd.DataFrame | None = None, *, size_note: str = "") -> Figure:
    """Realised power (+-2 MCSE) of each power plan, target dashed; with ``size``, the size of each test.

    ``table`` is the power table (one row per plan and test, ``planned_for`` marking the test the
    plan was made for, of which only those rows are drawn when the column is there). ``size`` is
    the size table: the rejection rate under the null against the number of scenarios ``K``, the
    mean over its cells per test (dotted: the highest cell), with the band ``alpha +- 2 MCSE`` of one
    cell shaded; ``size_note`` says which cells in the panel's title. A test has one colour and
    marker in both panels.
    """
    table = table.copy()
    if "planned_for" in table:
        table = table[table["planned_for"].astype(bool)]
    columns = [c for c in ("design", "test", "p_a", "p_b", "rho", "replicas", "size_cv", "scenarios") if c in table]
    table["_label"] = _cell_labels(table, columns)
    labels = list(dict.fromkeys(table["_label"]))
    styles = method_styles([*table["method"], *([] if size is None else size["method"])])
    height = max(3.6, 1.8 + 0.2 * len(labels))
    if size is None:
        fig, ax = subplots(figsize=(7.0, height), layout="constrained")
    else:
        fig, (ax, right) = subplots(1, 2, figsize=(13.0, height), layout="constrained",
                                    gridspec_kw={"width_ratios": (1.3, 1.0)})
    _dot_panel(ax, table, "realised_power", "realised_power_mcse", labels,
               {m: styles[m] for m in dict.fromkeys(table["method"])}, table["power_target"].unique(),
               "realised power (bars: 2 MCSE; dashed: target)", exact="planned_power")
    ax.set_ylabel("plan (each drawn for the tests it was made for)", fontsize=8)
    ax.set_title("Power plans simulated", fontsize=10)
    handles = _method_handles(styles, "planned power")
    if size is not None:
        alpha = float(size["alpha"].iloc[0])
        band = 2 * float(size["size_mcse"].median())
        right.axhspan(alpha - band, alpha + band, color="0.88", linewidth=0)
        right.axhline(alpha, color="0.4", linestyle="--", linewidth=1)
        for method, part in size.groupby("method", sort=False):
            colour, marker, _ = styles[method]
            by_k = part.groupby("scenarios")["size"]
            right.plot(by_k.mean().index, by_k.mean().to_numpy(), color=colour, marker=marker, ms=5)
            right.plot(by_k.max().index, by_k.max().to_numpy(), linestyle=":", color=colour, linewidth=1)
        log_ticks(right, size["scenarios"])
        right.set_xlabel("scenarios K", fontsize=8)
        right.set_ylabel("rejection rate under the null", fontsize=8)
        right.set_title(f"Size of each test{size_note}", fontsize=9)
        handles += [Line2D([], [], color="0.3", lw=1.4, label="size: mean over the cells"),
                    Line2D([], [], color="0.3", lw=1, ls=":", label="size: highest cell"),
                    Line2D([], [], color="0.4", lw=1, ls="--", label=f"alpha = {alpha:g}"),
                    Patch(facecolor="0.88", label="band: alpha +- 2 MCSE of one cell")]
    legend_below(fig, handles, ncol=4)
    return fig
