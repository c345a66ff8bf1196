"""Figures of ``escalation reproduce``: they draw the tables of :mod:`studies.reproduce`.

Each function takes tables and returns a :class:`~matplotlib.figure.Figure`; the study saves it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._palette import BLACK, BLUE, GREEN, ORANGE, VERMILLION
from ._style import legend_below, legend_right, subplots

__all__ = ["plot_profiles", "plot_record_vs_text"]

_METRIC_LABELS = {"p_u": "under-escalation p_u\n(lower is better)", "p_o": "over-escalation p_o\n(lower is better)",
                  "pi": "paired figure pi\n(higher is better)"}


def plot_profiles(rates: pd.DataFrame) -> Figure:
    """p_u, p_o and pi per profile: this run with its interval, the expected value and the paper's figure.

    ``rates`` has one row per (profile, metric) with ``value, ci_low, ci_high, expected, paper``
    (the ``rates`` table of :mod:`studies.reproduce`).
    """
    profiles = list(dict.fromkeys(rates["profile"]))
    metrics = [m for m in _METRIC_LABELS if m in set(rates["metric"])]
    y = np.arange(len(profiles))
    fig, axes = subplots(1, len(metrics), sharey=True, figsize=(3.6 * len(metrics), 1.6 + 0.5 * len(profiles)),
                             layout="constrained")
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        part = rates[rates["metric"] == metric].set_index("profile").loc[profiles]
        value = part["value"].to_numpy(float)
        err = np.vstack([value - part["ci_low"].to_numpy(float), part["ci_high"].to_numpy(float) - value])
        ax.errorbar(value, y, xerr=err, fmt="o", color=BLACK, capsize=3, label="this run (88 pairs), 95% interval")
        ax.plot(part["expected"], y, "D", markerfacecolor="none", color=BLUE, markersize=8,
                label="expected (large run)")
        ax.plot(part["paper"], y, "X", color=VERMILLION, markeredgecolor="white", markersize=10, label="paper")
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(_METRIC_LABELS[metric])
        ax.grid(axis="x", alpha=0.3)
    first = np.atleast_1d(axes)[0]
    first.set_yticks(y, profiles)
    first.set_ylabel("assistant profile")
    first.invert_yaxis()
    fig.suptitle("Escalating everything looks safest on p_u alone; the paired figure pi exposes it")
    legend_below(fig, first.get_legend_handles_labels()[0], ncol=3)
    return fig


def plot_record_vs_text(run: pd.DataFrame, expected: pd.DataFrame) -> Figure:
    """p_u per profile: the truth, with a record and without a record.

    Bars: expected values (``expected``: ``truth, with_record, without_record`` and the paper's
    ``paper_*``); dots: this run (``run``: ``truth, with_record, without_record``); crosses:
    the paper's section 6 figures where it gives them.
    """
    columns = (("truth", "truth", GREEN, ""), ("with_record", "with a record (mode A)", BLUE, "//"),
               ("without_record", "without a record (mode B, phrase judge)", ORANGE, ".."))
    profiles = list(expected["profile"])
    exp = expected.set_index("profile").loc[profiles]
    now = run.set_index("profile").loc[profiles]
    x = np.arange(len(profiles))
    width = 0.26
    fig, ax = subplots(figsize=(3.6 + 1.9 * len(profiles), 4.2), layout="constrained")
    for i, (column, label, colour, hatch) in enumerate(columns):
        offset = (i - 1) * width
        ax.bar(x + offset, exp[column], width, color=colour, hatch=hatch, edgecolor="white", linewidth=0,
               label=f"{label}, expected")
        ax.plot(x + offset, now[column], "o", color=BLACK, markersize=4,
                label="this run (88 pairs)" if i == 0 else None)
        ax.plot(x + offset, exp[f"paper_{column}"], "X", color=VERMILLION, markeredgecolor="white", markersize=10,
                label="paper, section 6" if i == 0 else None)
    ax.set_xticks(x, profiles)
    ax.set_xlabel("assistant profile")
    ax.set_ylabel("under-escalation p_u")
    ax.set_ylim(0, 1.0)
    ax.set_title("Without a record, stated (fake) escalations count: p_u is a lower bound", fontsize=10)
    legend_right(fig, ax.get_legend_handles_labels()[0])
    return fig
