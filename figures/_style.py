"""The one way a figure is made here: a :class:`matplotlib.figure.Figure` of its own, never pyplot.

A figure made this way is drawn by whatever canvas saves it (Agg for PNG, the PDF backend for
PDF), so importing this package chooses no backend and leaves pyplot's state as it was.
"""
from __future__ import annotations

from matplotlib.figure import Figure

__all__ = ["subplots", "log_ticks"]


def subplots(nrows: int = 1, ncols: int = 1, *, figsize=None, layout=None, **kwargs):
    """``matplotlib.pyplot.subplots`` without pyplot: a new Figure and its axes.

    ``figsize`` and ``layout`` go to :class:`~matplotlib.figure.Figure`, the rest to
    :meth:`~matplotlib.figure.Figure.subplots`.
    """
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def log_ticks(ax, values) -> None:
    """Log-scaled x axis with ticks exactly at the design values (no minor ticks)."""
    from matplotlib.ticker import FixedLocator, NullLocator
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(values))))
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_minor_locator(NullLocator())
