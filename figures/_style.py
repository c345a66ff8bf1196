"""The one way a figure is made here: a :class:`matplotlib.figure.Figure` of its own, never pyplot.

A figure made this way is drawn by whatever canvas saves it (Agg for PNG, the PDF backend for
PDF), so importing this package chooses no backend and leaves pyplot's state as it was.

Every figure draws its methods in the colour-blind-safe palette of Okabe & Ito (2008) and gives
each method a marker and a line style as well, so a figure reads in grey too;
:data:`figures._palette.METHODS` is the one mapping, so a method looks the same in every figure.
"""
from __future__ import annotations

from matplotlib.figure import Figure

__all__ = ["subplots", "log_ticks", "legend_below", "legend_right"]


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


def legend_below(fig, handles, *, ncol: int, fontsize: float = 8, title: str | None = None):
    """The legend of labelled ``handles`` centred below every axes of a constrained-layout figure."""
    return fig.legend(handles=handles, loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False,
                      title=title, title_fontsize=fontsize)


def legend_right(fig, handles, *, fontsize: float = 8, title: str | None = None):
    """The legend of labelled ``handles`` right of every axes of a constrained-layout figure."""
    return fig.legend(handles=handles, loc="outside right center", fontsize=fontsize, frameon=False, title=title,
                      title_fontsize=fontsize)

