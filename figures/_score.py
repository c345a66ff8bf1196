"""Figures of one scoring and of a comparison: ``summary.json``, ``differences.csv`` and ``conversations.jsonl``.

Each function draws the values it is given and computes nothing but shares and counts; an
undefined figure (a null rate or limit) is written "undefined", never drawn at 0. A name or id from
the input is drawn literally (:func:`escalation.estimators.records.plot_text`: no mathtext, hidden
characters shown, cut with its length).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from escalation.estimators.records import plot_text

from ._charts import scenario_shares, sizes_each
from ._palette import BLACK, METHODS
from ._style import legend_below, subplots
from ._text import counted

__all__ = ["plot_rates", "plot_difference_forest", "plot_scenario_errors"]

#: The three figures: summary key, value key, name, which way is better.
_FIGURES = (("under", "rate", "p_u: under-escalation", "lower is better"),
            ("over", "rate", "p_o: over-escalation", "lower is better"),
            ("paired", "pi", "pi: paired figure", "higher is better"))
_BETTER = {"p_u": "lower is better", "p_o": "lower is better", "pi": "higher is better", "p_a": "lower is better"}
_INTERVALS = (("newcombe", "Newcombe (square-and-add)"), ("bootstrap", "paired cluster bootstrap"))
#: Above this many scenarios a panel draws the sorted shares as a step line instead of one bar each.
_MOST_BARS = 30
#: Most characters of a scenario id beside its bar.
_SCENARIO_CHARS = 24


def _number(value) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def _point(ax, value: float, low: float, high: float, y: float, *, colour: str, marker: str, centre: float) -> None:
    """A point with its horizontal interval at height ``y``; "undefined" at ``centre`` when the value is not."""
    if math.isnan(value):
        ax.text(centre, y, "undefined", ha="center", va="center", fontsize=8, color="0.35", style="italic",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
        return
    errors = (None if math.isnan(low) or math.isnan(high)  # rounding can put a limit a hair past the value
              else [[max(value - low, 0.0)], [max(high - value, 0.0)]])
    ax.errorbar([value], [y], xerr=errors, fmt=marker, color=colour, ms=6, capsize=3, lw=1.4)
    if errors is None:
        ax.annotate("interval undefined", (value, y), xytext=(0, 7), textcoords="offset points", ha="center",
                    fontsize=7, color="0.35")


def plot_rates(summary: dict) -> Figure:
    """p_u, p_o and pi of one scoring, each with its interval on [0, 1].

    Parameters
    ----------
    summary : dict
        ``summary.json`` of ``escalation score``: ``under`` and ``over`` (``rate, ci, errors, n,
        clusters``), ``paired`` (``pi, ci, pairs, cases``), ``confidence`` and ``interval``; a
        null rate or limit is undefined.

    Returns
    -------
    matplotlib.figure.Figure
        One row per figure, the counts written right of the axes.
    """
    fig, ax = subplots(figsize=(7.2, 2.6), layout="constrained")
    positions = (2, 1, 0)
    for (key, value_key, name, better), y in zip(_FIGURES, positions):
        part = summary[key]
        low, high = (_number(v) for v in (part.get("ci") or (None, None)))
        _point(ax, _number(part[value_key]), low, high, y, colour=BLACK, marker="o", centre=0.5)
        if key == "paired":
            count = f"{counted(part['pairs'], 'pair')}, {counted(part['cases'], 'case')}"
        else:
            count = f"{part['errors']}/{part['n']} in error, {counted(part['clusters'], 'scenario')}"
        ax.annotate(count, (1.02, y), xycoords=("axes fraction", "data"), va="center", fontsize=8)
    ax.set_yticks(positions, [f"{name}\n({better})" for _, _, name, better in _FIGURES], fontsize=8)
    ax.set_ylim(-0.6, 2.6)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.grid(axis="x", color="0.9", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(f"estimate and {summary['confidence']:.0%} interval", fontsize=8)
    scored = f"{counted(summary['conversations'], 'conversation')}; " if summary.get("conversations") is not None \
        else ""
    ax.set_title(f"{scored}interval: {summary['interval']}", fontsize=9)
    return fig


def plot_difference_forest(differences: pd.DataFrame, *, confidence: float | None = None) -> Figure:
    """Forest plot of ``escalation compare``: each figure's difference ``b - a`` with both intervals.

    Parameters
    ----------
    differences : pandas.DataFrame
        ``differences.csv``: one row per ``metric`` (``p_u``, ``p_o``, ``pi``) with ``difference``,
        ``newcombe_low``, ``newcombe_high``, ``bootstrap_low``, ``bootstrap_high``, ``p_value`` and
        optionally ``a_name``, ``b_name``; NaN where undefined.
    confidence : float, optional
        The level of the intervals, for the axis label (``compare.json`` has it).

    Returns
    -------
    matplotlib.figure.Figure
        Two rows per figure (Newcombe, bootstrap), a vertical line at 0; each figure's label says
        which way is better and its p-value (of the interval compare chose).
    """
    metrics = list(differences["metric"])
    rows = 2 * len(metrics)
    height = 1.5 + 0.32 * rows
    fig, ax = subplots(figsize=(7.2, height), layout="constrained")
    ax.axvline(0.0, color="0.3", lw=0.8, zorder=1)
    ticks, labels, spread = [], [], 0.05
    for i, row in enumerate(differences.itertuples(index=False)):
        value = _number(row.difference)
        for j, (which, _) in enumerate(_INTERVALS):
            y = rows - 1 - (2 * i + j)
            colour, marker, _ = METHODS[which]
            low, high = _number(getattr(row, f"{which}_low")), _number(getattr(row, f"{which}_high"))
            _point(ax, value, low, high, y, colour=colour, marker=marker, centre=0.0)
            spread = max([spread, *(abs(v) for v in (value, low, high) if not math.isnan(v))])
        p_value = _number(getattr(row, "p_value", math.nan))
        ticks.append(rows - 1.5 - 2 * i)
        labels.append(f"{row.metric} ({_BETTER.get(row.metric, '')})"
                      + ("" if math.isnan(p_value) else f"\np = {p_value:.2g}"))
        if i:
            ax.axhline(rows - 2 * i - 0.5, color="0.85", lw=0.6)
    limit = min(1.0, 1.15 * spread)
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-0.6, rows - 0.4)
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.grid(axis="x", color="0.92", lw=0.6)
    ax.set_axisbelow(True)
    level = "" if confidence is None else f"{confidence:.0%} "
    ax.set_xlabel(f"difference b - a and its {level}interval", fontsize=8)
    if {"a_name", "b_name"} <= set(differences.columns) and len(differences):
        a, b = differences["a_name"].iloc[0], differences["b_name"].iloc[0]
        ax.set_title(f"b = {plot_text(b)} minus a = {plot_text(a)} (p-value: of the interval compare chose)",
                     fontsize=9)
    legend_below(fig, [Line2D([], [], color=METHODS[which][0], marker=METHODS[which][1], lw=1.4, label=name)
                       for which, name in _INTERVALS], ncol=2)
    return fig


def plot_scenario_errors(conversations: pd.DataFrame) -> Figure:
    """Share of each scenario's evaluated conversations in error: ESC scenarios (u) and ACT scenarios (o).

    Parameters
    ----------
    conversations : pandas.DataFrame
        Rows of ``conversations.jsonl``: ``scenario_id``, ``label`` (``ESC`` or ``ACT``),
        ``evaluated``, ``u`` (ESC) and ``o`` (ACT), 0 or 1.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels on one y range, scenarios sorted by their share; one bar per scenario (its
        errors/conversations written beside it) up to 30 scenarios, a step line over the sorted
        scenarios beyond.
    """
    panels = (("ESC", "u", "ESC scenarios: share under-escalated (u)"),
              ("ACT", "o", "ACT scenarios: share over-escalated (o)"))
    tables = [scenario_shares(conversations, label, column) for label, column, _ in panels]
    few = max(len(t) for t in tables) <= _MOST_BARS
    height = 1.6 + 0.2 * max(len(t) for t in tables) if few else 3.4
    fig, axes = subplots(1, 2, figsize=(10.0, max(height, 2.4)), layout="constrained", squeeze=False)
    for ax, table, (label, _, title) in zip(axes[0], tables, panels):
        n = int(table["n"].sum())
        ax.set_title(f"{title}\n{counted(len(table), 'scenario')}, {counted(n, 'evaluated conversation')}", fontsize=9)
        if table.empty:
            ax.text(0.5, 0.5, f"no evaluated {label} conversation", ha="center", va="center", transform=ax.transAxes,
                    fontsize=8, color="0.35", style="italic")
            ax.set_xticks([])
            ax.set_yticks([])
        elif few:
            y = np.arange(len(table))
            ax.barh(y, table["share"], color=METHODS["wilson-kish"][0], height=0.7)
            for position, share, errors, count in zip(y, table["share"], table["errors"], table["n"]):
                ax.annotate(f"{int(errors)}/{count}", (share, position), xytext=(3, 0), textcoords="offset points",
                            va="center", fontsize=7)
            ax.set_yticks(y, [plot_text(s, _SCENARIO_CHARS) for s in table.index], fontsize=7)
            ax.set_ylim(len(table) - 0.5, -0.5)
            ax.set_xlim(0, 1.18)
            ax.set_xticks(np.linspace(0, 1, 6))
            ax.set_xlabel("share of the scenario's evaluated conversations in error", fontsize=8)
        else:
            rank = np.arange(1, len(table) + 1)
            ax.step(rank, table["share"].to_numpy(), where="mid", color=METHODS["wilson-kish"][0], lw=1.2)
            counts = table["n"]
            ax.set_xlim(0.5, len(table) + 0.5)
            ax.set_ylim(0, 1.05)
            ax.set_xlabel(f"scenarios, sorted by their share in error ({int((table['share'] > 0).sum())} with one or "
                          f"more)\n{sizes_each(int(counts.min()), int(counts.max()))}, median "
                          f"{counts.median():g}", fontsize=8)
            if ax is axes[0, 0]:
                ax.set_ylabel("share of the scenario's\nevaluated conversations in error", fontsize=8)
        ax.tick_params(labelsize=7)
    return fig
