"""The one way a figure is made here: a :class:`matplotlib.figure.Figure` of its own, never pyplot.

A figure made this way is drawn by whatever canvas saves it (Agg for PNG, the PDF backend for
PDF), so importing this package chooses no backend and leaves pyplot's state as it was.

Every figure draws its methods in the colour-blind-safe palette of Okabe & Ito (2008) and gives
each method a marker and a line style as well, so a figure reads in grey too; :data:`METHODS`
is the one mapping, so a method looks the same in every figure.
"""
from __future__ import annotations

from itertools import product

from matplotlib.figure import Figure

__all__ = ["subplots", "log_ticks", "PALETTE", "MARKERS", "LINESTYLES", "METHODS", "method_styles",
           "legend_below", "legend_right"]

#: Okabe & Ito (2008), the palette of Wong (2011): black, orange, sky blue, bluish green, blue,
#: vermillion, reddish purple, and yellow (low contrast on white) last.
BLACK, ORANGE, SKY, GREEN, BLUE, VERMILLION, PURPLE, YELLOW = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")
PALETTE = (BLUE, ORANGE, GREEN, PURPLE, VERMILLION, SKY, BLACK, YELLOW)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")

#: ``method -> (colour, marker, line style)`` for every method a study draws. Related methods
#: share a colour family across studies (Wilson-Kish blue, its t variant sky blue, the
#: bootstraps orange and vermillion, the oracle with the true rho black and dashed).
METHODS = {
    # intervals of one rate (coverage study)
    "wilson": (BLACK, "v", ":"),
    "wilson-kish-true-rho": (BLACK, "*", "--"),
    "wilson-kish": (BLUE, "o", "-"),
    "wilson-kish-t": (SKY, "s", "-"),
    "wilson-kish-ucb": (GREEN, "^", "-"),
    "korn-graubard": (PURPLE, "D", "-"),
    "bootstrap-percentile": (ORANGE, "P", "-."),
    "bootstrap-bca": (VERMILLION, "X", "-."),
    # the same intervals in the sample-size study
    "wilson_kish_est_rho": (BLUE, "o", "-"),
    "wilson_kish_true_rho": (BLACK, "*", "--"),
    "wilson_kish_t_est_rho": (SKY, "s", "-"),
    "wilson_kish_t_true_rho": (BLACK, "h", "--"),
    "wilson_kish_true_rho_n_over_k": (GREEN, "^", "--"),
    # tests of the sample-size study
    "paired_z": (BLUE, "o", "-"),
    "paired_t": (SKY, "s", "--"),
    "cluster_z": (GREEN, "^", "-"),
    "cluster_t": (PURPLE, "D", "--"),
    "donner_klar": (VERMILLION, "v", "-"),
    "donner_klar_t": (ORANGE, "P", "--"),
    # intervals of a difference (differences study, compare)
    "newcombe_wilson_kish": (BLUE, "o", "-"),
    "newcombe_wilson_kish_t": (SKY, "s", "-"),
    "bootstrap_percentile": (ORANGE, "P", "-."),
    "bootstrap_bca": (VERMILLION, "X", "-."),
    "newcombe": (BLUE, "o", "-"),
    "bootstrap": (ORANGE, "P", "-."),
    # corrections of mode B (differences and judges studies)
    "predictive_values_wald": (SKY, "v", "-"),
    "predictive_values_cluster": (BLUE, "^", "-"),
    "rogan_gladen_wald": (PURPLE, "<", "-"),
    "rogan_gladen_cluster": (VERMILLION, ">", "-"),
    "predictive_values": (BLUE, "^", "-"),
    "rogan_gladen": (VERMILLION, ">", "-"),
    # calibration maps of a judge
    "raw": (BLACK, "o", "--"),
    "platt": (BLUE, "s", "-"),
    "isotonic": (ORANGE, "^", "-"),
}


def method_styles(methods) -> dict[str, tuple[str, str, str]]:
    """``(colour, marker, line style)`` of each of ``methods``: :data:`METHODS`, and for a method
    it does not know the first (colour, marker) pair no other method of the figure has."""
    methods = list(dict.fromkeys(methods))
    styles = {m: METHODS[m] for m in methods if m in METHODS}
    taken = {(c, mk) for c, mk, _ in styles.values()}
    free = ((c, mk) for mk, c in product(MARKERS, PALETTE[:-1]) if (c, mk) not in taken)
    for method in methods:
        if method not in styles:
            colour, marker = next(free)
            styles[method] = (colour, marker, "-")
    return {m: styles[m] for m in methods}


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

