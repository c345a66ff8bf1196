"""The figures a report page draws itself, as inline SVG: no matplotlib, so ``escalation score``
writes its report.html without the second it takes to import and draw with it.

Each function here only places things: it turns the values it is given into the coordinates,
ticks and texts of a chart (a dict), and ``templates/charts.svg.j2`` draws them. The charts are
those of :mod:`figures._score` (which draws the same values with matplotlib for PNG and PDF), in
the colours and markers of :data:`figures._palette.METHODS`; an undefined value (None or NaN)
is written "undefined", never drawn at 0. A name from the input is shown by the one rule
(:func:`escalation.estimators.records.html_text`), and cut to fit where it is drawn.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from escalation.estimators.records import NAME_LIMIT, html_text

from ._palette import BLACK, METHODS
from ._text import counted

__all__ = ["interval_chart", "scenario_chart", "scenario_shares", "nice_ticks", "sizes_each"]

#: Width of every chart, in the page's pixels (the page scales it to its column).
WIDTH = 720
#: Most characters of a scenario's name beside its bar: 16 at 11px fit the 114 px left of the bars.
_LABEL_CHARS = 16
_ROW = 30
_TOP, _BOTTOM, _LEGEND = 30, 46, 24
#: Marker outlines centred on (0, 0), about 10 pixels across, for matplotlib's marker codes.
_MARKERS = {
    "o": "M-4.5,0a4.5,4.5 0 1,0 9,0a4.5,4.5 0 1,0 -9,0Z",
    "s": "M-4,-4h8v8h-8Z",
    "^": "M0,-5L4.6,3.5H-4.6Z",
    "v": "M0,5L4.6,-3.5H-4.6Z",
    "D": "M0,-5.2L4.2,0L0,5.2L-4.2,0Z",
    "P": "M-1.7,-5h3.4v3.3h3.3v3.4h-3.3v3.3h-3.4v-3.3h-3.3v-3.4h3.3Z",
    "X": "M-3.6,-5.1L0,-1.5L3.6,-5.1L5.1,-3.6L1.5,0L5.1,3.6L3.6,5.1L0,1.5L-3.6,5.1L-5.1,3.6L-1.5,0L-5.1,-3.6Z",
}
#: Above this many scenarios a panel draws the sorted shares as a step line instead of one bar each
#: (as :func:`figures.plot_scenario_errors`); the line keeps at most this many points.
MOST_BARS, MOST_POINTS = 30, 600


def _number(value) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def nice_ticks(low: float, high: float, *, most: int = 7) -> list[float]:
    """Round ticks covering ``[low, high]``: steps of 1, 2, 2.5 or 5 times a power of ten, at most ``most``."""
    span = high - low
    if not span > 0:
        return [low]
    for power in range(int(math.floor(math.log10(span / most))), 10):
        for mantissa in (1, 2, 2.5, 5):
            step = mantissa * 10.0 ** power
            first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
            if last - first + 1 <= most:
                return [round(k * step, 12) + 0.0 for k in range(first, last + 1)]
    return [low, high]


def _tick_text(value: float) -> str:
    return f"{value:g}" if value else "0"


def interval_chart(rows, *, domain, axis_label: str, title: str = "", zero: bool = False, notes_width: int = 0,
                   legend=()) -> dict:
    """A dot-and-whisker chart: one row per value with its interval, on a horizontal axis.

    Parameters
    ----------
    rows : list of dict
        ``label`` (list of lines), ``value``, ``low``, ``high`` (None or NaN: undefined),
        ``method`` (a key of :data:`METHODS`, or None for black circles), optional ``note``
        (text right of the axes) and ``rule`` (a line above the row: a new group).
    domain : (float, float)
        The axis's range.
    axis_label, title : str
    zero : bool
        Draw a vertical line at 0 (a difference).
    notes_width : int
        Pixels right of the axes for the rows' notes.
    legend : sequence of (method, text)
        Entries drawn below the axis label.

    Returns
    -------
    dict
        What ``charts.svg.j2``'s ``intervals`` macro draws.
    """
    left, right = 230, 20 + notes_width
    plot = WIDTH - left - right
    low_end, high_end = domain

    def x(value):
        return round(left + (value - low_end) / (high_end - low_end) * plot, 1)

    top = _TOP if title else 12
    items = []
    for i, row in enumerate(rows):
        y = top + _ROW * i + _ROW / 2
        colour, marker, _ = METHODS[row["method"]] if row.get("method") else (BLACK, "o", "-")
        value, low, high = (_number(row.get(k)) for k in ("value", "low", "high"))
        item = {"y": y, "label": list(row["label"]), "note": row.get("note", ""), "colour": colour,
                "marker": _MARKERS[marker], "rule": top + _ROW * i if row.get("rule") else None,
                "undefined": math.isnan(value), "centre": x((low_end + high_end) / 2)}
        if not item["undefined"]:
            item["x"] = x(min(max(value, low_end), high_end))
            bounded = not (math.isnan(low) or math.isnan(high))
            item["interval"] = (x(max(min(low, value), low_end)), x(min(max(high, value), high_end))) if bounded \
                else None
        items.append(item)
    bottom = top + _ROW * len(rows)
    ticks = [(x(t), _tick_text(t)) for t in nice_ticks(low_end, high_end) if low_end - 1e-12 <= t <= high_end + 1e-12]
    entries = []
    for j, (method, text) in enumerate(legend):
        colour, marker, _ = METHODS[method]
        entries.append({"x": left + 230 * j, "y": bottom + _BOTTOM + _LEGEND / 2, "colour": colour,
                        "marker": _MARKERS[marker], "text": text})
    height = bottom + _BOTTOM + (_LEGEND if entries else 0)
    return {"width": WIDTH, "height": round(height), "left": left, "right": left + plot, "top": top,
            "bottom": bottom, "title": title, "axis_label": axis_label, "ticks": ticks, "items": items,
            "zero": x(0.0) if zero and low_end < 0 < high_end else None, "legend": entries}


def scenario_shares(conversations: pd.DataFrame, label: str, column: str) -> pd.DataFrame:
    """Per scenario of ``label``: its evaluated conversations ``n`` (those with a 0 or 1 in ``column``),
    their ``errors`` and the ``share`` in error, by scenario id, highest share first (then most
    conversations, then first seen). Used by this chart and by :func:`figures.plot_scenario_errors`."""
    errors = pd.to_numeric(conversations[column], errors="coerce").to_numpy(float, na_value=np.nan)
    rows = ((conversations["label"] == label).to_numpy(bool) & conversations["evaluated"].eq(True).to_numpy(bool)
            & ~np.isnan(errors))
    codes, names = pd.factorize(conversations["scenario_id"].to_numpy(object)[rows])  # in order of first appearance
    n = np.bincount(codes, minlength=len(names))
    wrong = np.bincount(codes, weights=errors[rows], minlength=len(names))
    share = wrong / n  # every scenario found has n >= 1
    order = np.lexsort((-n, -share))  # stable: ties keep the order of first appearance
    return pd.DataFrame({"errors": wrong[order], "n": n[order], "share": share[order]},
                        index=pd.Index(np.asarray(names, dtype=object)[order], name="scenario_id"))


def sizes_each(low: int, high: int) -> str:
    """``3 conversations each``, ``1 to 4 conversations each``: the range of the scenarios' sizes."""
    return f"{counted(low, 'conversation')} each" if low == high else f"{low:,} to {high:,} conversations each"


def scenario_chart(conversations: pd.DataFrame) -> dict:
    """Where the errors are: each scenario's share of evaluated conversations in error, ESC (u) beside ACT (o).

    Both panels share one axis on [0, 1]. Up to :data:`MOST_BARS` scenarios a panel has one bar
    each (its errors/n beside it); beyond, a step line over the scenarios sorted by their share,
    sampled at :data:`MOST_POINTS` ranks at most.

    Parameters
    ----------
    conversations : DataFrame
        ``scenario_id``, ``label``, ``evaluated``, ``u`` and ``o`` of each conversation.

    Returns
    -------
    dict
        What ``charts.svg.j2``'s ``scenarios`` macro draws.
    """
    colour = METHODS["wilson-kish"][0]
    tables = [(label, title, scenario_shares(conversations, label, column)) for label, column, title in
              (("ESC", "u", "ESC scenarios: share under-escalated (u)"),
               ("ACT", "o", "ACT scenarios: share over-escalated (o)"))]
    most = max(len(table) for _, _, table in tables)
    bars = most <= MOST_BARS
    panel_width, gap = (WIDTH - 20) / 2, 20
    label_width = 120 if bars else 46
    plot_height = 16 * max(most, 1) if bars else 180
    top, bottom = 46, 46 + plot_height
    panels = []
    for k, (label, title, table) in enumerate(tables):
        x0 = k * (panel_width + gap) + label_width
        x1 = k * (panel_width + gap) + panel_width - (44 if bars else 8)
        n = int(table["n"].sum())
        panel: dict[str, Any] = {
            "title": title, "subtitle": f"{counted(len(table), 'scenario')}, {counted(n, 'evaluated conversation')}",
            "x0": round(x0, 1), "x1": round(x1, 1), "left": round(k * (panel_width + gap), 1),
            "centre": round(k * (panel_width + gap) + panel_width / 2, 1),  # of the titles: they fit the panel
            "empty": f"no evaluated {label} conversation" if table.empty else None, "bars": [], "line": None}
        share = table["share"].to_numpy(float)
        if bars:
            for i, (scenario, errors, count, part) in enumerate(zip(table.index, table["errors"], table["n"], share)):
                name = str(scenario)  # from the input: shown by the one rule (html_text)
                short = name if len(name) <= _LABEL_CHARS else name[:_LABEL_CHARS - 1]
                panel["bars"].append({"y": top + 16 * i + 2, "width": round(part * (x1 - x0), 1),
                                      "name": html_text(short, None) + ("" if short is name else "\u2026"),
                                      "full": html_text(name, NAME_LIMIT),
                                      "count": f"{int(errors)}/{int(count)}"})
            panel["ticks"] = [(round(x0 + t * (x1 - x0), 1), _tick_text(t)) for t in nice_ticks(0.0, 1.0, most=6)]
        elif share.size:
            ranks = np.unique(np.linspace(0, share.size - 1, min(share.size, MOST_POINTS)).round().astype(int))
            xs = x0 + (ranks + 0.5) / share.size * (x1 - x0)
            ys = bottom - share[ranks] * plot_height
            points = [f"{round(x0, 1)},{round(ys[0], 1)}"]
            for i in range(ranks.size):  # a step at the middle between two sampled ranks
                mid = xs[i] if i == 0 else (xs[i - 1] + xs[i]) / 2
                if i:
                    points.append(f"{round(mid, 1)},{round(ys[i - 1], 1)}")
                points.append(f"{round(mid, 1)},{round(ys[i], 1)}")
            points.append(f"{round(x1, 1)},{round(ys[-1], 1)}")
            panel["line"] = " ".join(points)
            counts = table["n"]
            low, high = int(counts.min()), int(counts.max())
            panel["axis_note"] = (f"scenarios by share in error ({int((share > 0).sum()):,} with errors)",
                                  sizes_each(low, high))
        panels.append(panel)
    y_ticks = [] if bars else [(round(bottom - t * plot_height, 1), _tick_text(t))
                               for t in nice_ticks(0.0, 1.0, most=6)]
    return {"width": WIDTH, "height": bottom + (44 if bars else 54), "top": top, "bottom": bottom, "bars": bars,
            "panels": panels, "colour": colour, "y_ticks": y_ticks,
            "axis_label": "share of the scenario's evaluated conversations in error",
            "bar_axis_label": "share of its conversations in error"}  # under a panel: the long one overflowed
