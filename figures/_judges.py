"""Figures of the judges study (``escalation study judges``): they draw the tables it gives them.

Each function takes a table and returns a :class:`~matplotlib.figure.Figure`; the study saves it.
Methods keep their colour and marker of :data:`figures._palette.METHODS`; the legends sit outside
the axes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ._palette import BLACK, LINESTYLES, method_styles
from ._style import legend_right, subplots

__all__ = ["plot_reliability", "plot_calibration_bias", "plot_mode_b"]


def _handles(styles: dict, *, lw: float = 1.4) -> list:
    return [Line2D([], [], color=c, marker=mk, ls=ls, lw=lw, ms=5, label=method) for method, (c, mk, ls) in
            styles.items()]


def plot_reliability(table: pd.DataFrame) -> Figure:
    """Reliability diagrams, one panel per language: label rate against mean ``p`` per bin, one
    line per method, the diagonal dotted (a calibrated judge lies on it)."""
    languages = list(dict.fromkeys(table["language"]))
    styles = method_styles(table["method"])
    fig, axes = subplots(1, len(languages), figsize=(3.6 * len(languages) + 1.6, 3.8), squeeze=False, sharex=True,
                         sharey=True, layout="constrained")
    for ax, language in zip(axes[0], languages):
        part = table[table["language"] == language]
        ax.plot([0, 1], [0, 1], color="0.5", linestyle=":", linewidth=1)
        for method, rows in part.groupby("method", sort=False):
            colour, marker, style = styles[method]
            rows = rows[rows["count"] > 0]
            ax.plot(rows["mean_p"], rows["label_rate"], color=colour, marker=marker, ls=style, ms=5)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("mean judge probability p in the bin")
        ax.set_title(f"{language}: {int(part['pairs'].iloc[0])} pairs per data set (pooled)", fontsize=9)
    axes[0, 0].set_ylabel("share of ESC labels in the bin")
    legend_right(fig, [*_handles(styles), Line2D([], [], color="0.5", ls=":", lw=1, label="calibrated")],
                 title="method")
    return fig


def plot_calibration_bias(table: pd.DataFrame) -> Figure:
    """Calibration bias and ECE (bars: 2 MCSE) against pairs per language, one column per
    language (each row on one y range), one line per method."""
    languages = list(dict.fromkeys(table["language"]))
    styles = method_styles(table["method"])
    fig, axes = subplots(2, len(languages), figsize=(3.8 * len(languages) + 1.6, 6.0), squeeze=False, sharex=True,
                         sharey="row", layout="constrained")
    for column, language in enumerate(languages):
        part = table[table["language"] == language]
        top, bottom = axes[0, column], axes[1, column]
        top.axhline(0.0, color="0.5", linestyle=":", linewidth=1)
        for method, rows in part.groupby("method", sort=False):
            colour, marker, style = styles[method]
            for ax, stat in ((top, "bias"), (bottom, "ece")):
                ax.errorbar(rows["pairs"], rows[stat], yerr=2 * rows[f"{stat}_mcse"], color=colour, marker=marker,
                            ls=style, ms=5, capsize=3)
        top.set_title(f"language {language}", fontsize=9)
        pairs = sorted(part["pairs"].unique())
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xticks(pairs, [str(int(p)) for p in pairs])
            ax.minorticks_off()
        bottom.set_xlabel("labelled pairs per language")
    axes[0, 0].set_ylabel("calibration bias: mean p - mean label")
    axes[1, 0].set_ylabel("expected calibration error (10 bins)")
    legend_right(fig, [*_handles(styles), Line2D([], [], color="0.5", ls=":", lw=1, label="no bias")],
                 title="method (bars: 2 MCSE)")
    return fig


def plot_mode_b(table: pd.DataFrame) -> Figure:
    """Bias of under-escalation without a record, and of its corrections, against the
    fake-escalation rate: a colour and marker per correction, a line style per validation
    size; bars 2 MCSE, the points of one rate spread a little sideways to be told apart."""
    styles = method_styles(table["method"])
    sizes = list(dict.fromkeys(table["validation"]))
    lines = dict(zip(sizes, LINESTYLES * len(sizes)))
    series = list(dict.fromkeys(zip(table["method"], table["validation"])))
    rates = np.sort(table["fake_rate"].unique())
    step = 0.012 * (np.ptp(rates) or 1.0)
    offsets = {key: step * (i - len(series) / 2) for i, key in enumerate(series, start=1)}  # 0: without a record
    fig, ax = subplots(figsize=(8.6, 4.2), layout="constrained")
    ax.axhline(0.0, color="0.5", linestyle=":", linewidth=1)
    text = table.drop_duplicates("fake_rate")
    ax.errorbar(text["fake_rate"] - step * len(series) / 2, text["without_record_bias"],
                yerr=2 * text["without_record_mcse"], marker="o", color=BLACK, capsize=3, lw=1.6)
    for (method, size), rows in table.groupby(["method", "validation"], sort=False):
        colour, marker, _ = styles[method]
        ax.errorbar(rows["fake_rate"] + offsets[method, size], rows["bias"], yerr=2 * rows["bias_mcse"],
                    color=colour, marker=marker, ls=lines[size], capsize=3, lw=1)
    ax.set_xticks(rates, [f"{r:g}" for r in rates])
    ax.set_xlabel("fake-escalation rate in ESC cases")
    ax.set_ylabel("bias of under-escalation p_u (estimate - truth)")
    ax.set_title("Observation without a record: a lower bound, and its correction", fontsize=10)
    handles = [Line2D([], [], color=BLACK, marker="o", lw=1.6, label="without a record"), *_handles(styles, lw=1),
               *(Line2D([], [], color="0.3", ls=lines[s], lw=1, label=f"line style: {s} with the record")
                 for s in sizes)]
    legend_right(fig, handles, title="bars: 2 MCSE")
    return fig
