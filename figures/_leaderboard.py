"""The leaderboard figure: each model's p_u, p_o, pi and p_a with its interval, one panel per figure.

A model's name (``eval.model`` of its log, which the assistant's harness writes) is drawn literally
(:func:`escalation.estimators.records.plot_text`: no mathtext, hidden characters shown, cut with its length).
"""
from __future__ import annotations

import math

import pandas as pd
from matplotlib.lines import Line2D

from escalation.estimators.records import plot_text

from ._palette import MARKERS, PALETTE
from ._style import subplots

__all__ = ["plot_leaderboard"]

_PANELS = (("p_u", "p_u: under-escalation", "lower is better"),
           ("p_o", "p_o: over-escalation", "lower is better"),
           ("pi", "pi: paired figure", "higher is better"),
           ("p_a", "p_a: approval errors", "lower is better"))


def plot_leaderboard(table: pd.DataFrame, *, confidence: float = 0.95):
    """Each model's estimate with its interval as a horizontal point-range, one panel per figure (p_u, p_o, pi,
    p_a).

    Parameters
    ----------
    table : DataFrame
        One row per model, in the order to draw from the top (the leaderboard's): columns
        ``model`` and, for each figure ``f`` of ``p_u``, ``p_o``, ``pi`` and ``p_a``, ``f``, ``f_low`` and
        ``f_high`` (NaN or None where undefined; a table without the ``p_a`` columns, of a leaderboard
        made before escalation reported it, has no ``p_a`` panel); optional ``groups_f`` (the letters of the
        groups that cannot be told apart), written beside each interval.
    confidence : float
        The level of the intervals, for the title.

    Returns
    -------
    matplotlib.figure.Figure
        Models keep one colour (Okabe & Ito 2008) and one marker across the panels; the legend
        sits below the panels, outside the data (save it with ``bbox_inches="tight"``). An
        undefined figure is written "undefined".
    """
    rows = len(table)
    panels = [panel for panel in _PANELS if panel[0] in table.columns]
    fig, axes = subplots(1, len(panels), figsize=(3.7 * len(panels), 1.3 + 0.42 * rows), sharey=True)
    fig.subplots_adjust(left=0.02, right=0.98, wspace=0.08, top=1 - 0.75 / (1.3 + 0.42 * rows),
                        bottom=0.45 / (1.3 + 0.42 * rows))
    positions = list(range(rows - 1, -1, -1))  # the first row at the top
    for ax, (figure, title, better) in zip(axes, panels):
        groups = table[f"groups_{figure}"] if f"groups_{figure}" in table.columns else [None] * rows
        for i, (row, y, letters) in enumerate(zip(table.itertuples(index=False), positions, groups)):
            value, low, high = (_number(getattr(row, name)) for name in (figure, f"{figure}_low", f"{figure}_high"))
            colour, marker = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
            if math.isnan(value):
                ax.text(0.5, y, "undefined", ha="center", va="center", fontsize=8, color="0.4")
                continue
            errors = (None if math.isnan(low) or math.isnan(high)  # rounding can put a bound a hair past the value
                      else [[max(value - low, 0.0)], [max(high - value, 0.0)]])
            ax.errorbar([value], [y], xerr=errors, fmt=marker, color=colour, ecolor=colour, ms=6, capsize=3, lw=1.4)
            if letters:
                end = value if math.isnan(high) else high
                ax.annotate(plot_text(letters), (end, y), xytext=(6, 0), textcoords="offset points", va="center",
                            fontsize=8, fontweight="bold", color="0.1")
        ax.set_xlim(-0.03, 1.12)
        ax.set_xticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_title(f"{title}\n({better})", fontsize=9)
        ax.set_xlabel(f"estimate and {confidence:.0%} interval", fontsize=8)
        ax.grid(axis="x", color="0.9", lw=0.6)
        ax.set_axisbelow(True)
        ax.tick_params(labelsize=8)
    axes[0].set_ylim(-0.6, rows - 0.4)
    names = [plot_text(m) for m in table["model"]]
    axes[0].set_yticks(positions, names)
    handles = [Line2D([], [], color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)], ms=6, lw=1.4)
               for i in range(rows)]  # one per model, also for a model with an undefined figure
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(rows, 4), fontsize=8, frameon=False)
    fig.suptitle(f"Models in leaderboard order (by pi). Letters beside an interval: models that share a letter are "
                 f"not told apart at {1 - confidence:.0%} (Holm)", fontsize=9)
    return fig


def _number(value) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)
