"""Figures of the judges study (``escalation study judges``): they draw the tables it gives them.

Each function takes a table and returns a :class:`~matplotlib.figure.Figure`; the study saves it.
"""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ._style import subplots

__all__ = ["plot_reliability", "plot_calibration_bias", "plot_mode_b"]

_MARKERS = {"raw": "o", "platt": "s", "isotonic": "^", "predictive_values": "s", "rogan_gladen": "D"}


def plot_reliability(table: pd.DataFrame) -> Figure:
    """Reliability diagrams, one panel per language: label rate against mean ``p`` per bin, one
    line per method, the diagonal dashed (a calibrated judge lies on it)."""
    languages = list(dict.fromkeys(table["language"]))
    fig, axes = subplots(1, len(languages), figsize=(4.2 * len(languages), 4.0), squeeze=False, sharey=True)
    for ax, language in zip(axes[0], languages):
        part = table[table["language"] == language]
        for method, rows in part.groupby("method", sort=False):
            rows = rows[rows["count"] > 0]
            ax.plot(rows["mean_p"], rows["label_rate"], marker=_MARKERS.get(method, "o"), label=method)
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean judge probability p in the bin")
        ax.set_title(f"{language}: {int(part['pairs'].iloc[0])} pairs per data set (pooled)")
    axes[0, 0].set_ylabel("share of ESC labels in the bin")
    axes[0, -1].legend(title="method")
    return fig


def plot_calibration_bias(table: pd.DataFrame) -> Figure:
    """Calibration bias (with 2 MCSE bars) and ECE against pairs per language, one column per
    language, one line per method."""
    languages = list(dict.fromkeys(table["language"]))
    fig, axes = subplots(2, len(languages), figsize=(4.6 * len(languages), 6.4), squeeze=False, sharex=True)
    for column, language in enumerate(languages):
        part = table[table["language"] == language]
        top, bottom = axes[0, column], axes[1, column]
        for method, rows in part.groupby("method", sort=False):
            marker = _MARKERS.get(method, "o")
            top.errorbar(rows["pairs"], rows["bias"], yerr=2 * rows["bias_mcse"], marker=marker, capsize=3,
                         label=method)
            bottom.errorbar(rows["pairs"], rows["ece"], yerr=2 * rows["ece_mcse"], marker=marker, capsize=3,
                            label=method)
        top.axhline(0.0, color="grey", linestyle="--", linewidth=1)
        top.set_title(f"language {language}")
        pairs = sorted(part["pairs"].unique())
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xticks(pairs, [str(int(p)) for p in pairs])
            ax.minorticks_off()
        bottom.set_xlabel("labelled pairs per language")
    axes[0, 0].set_ylabel("calibration bias: mean p - mean label")
    axes[1, 0].set_ylabel("expected calibration error (10 bins)")
    axes[0, -1].legend(title="method (bars: 2 MCSE)")
    return fig


def plot_mode_b(table: pd.DataFrame) -> Figure:
    """Bias of under-escalation without a record, and of its corrections, against the
    fake-escalation rate (one line per correction and validation size; bars: 2 MCSE)."""
    fig, ax = subplots(figsize=(6.4, 4.2))
    text = table.drop_duplicates("fake_rate")
    ax.errorbar(text["fake_rate"], text["without_record_bias"], yerr=2 * text["without_record_mcse"],
                marker="o", color="black", capsize=3, label="without a record")
    for (method, size), rows in table.groupby(["method", "validation"], sort=False):
        ax.errorbar(rows["fake_rate"], rows["bias"], yerr=2 * rows["bias_mcse"], marker=_MARKERS.get(method, "o"),
                    capsize=3, linewidth=1, label=f"{method}, {size} with the record")
    ax.axhline(0.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("fake-escalation rate in ESC cases")
    ax.set_ylabel("bias of under-escalation p_u (estimate - truth)")
    ax.set_title("Observation without a record: a lower bound, and its correction")
    ax.legend(fontsize=7)
    return fig
