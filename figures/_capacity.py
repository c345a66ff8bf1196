"""Figures of the capacity study: the inverted U of the realised protection, and the queue formulas
against the event simulation. Each draws the table it is given (``studies._capacity``)."""
from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ._palette import BLACK, LINESTYLES, MARKERS, PALETTE
from ._style import legend_right, subplots

__all__ = ["plot_protection_curves", "plot_capacity_validation"]


def _style(i: int):
    return PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], LINESTYLES[i % len(LINESTYLES)]


def plot_protection_curves(table):
    """Realised protection against the escalation rate, one line per number of reviewers R.

    ``table``: columns ``reviewers, escalation_rate, protection_true, protection_measured, band_low,
    band_high`` (one row per R and threshold). The true curve is the line with markers, the mean of
    the measured protection a thin line of the same colour, the band its 5th to 95th percentile
    over the data sets; the best point of each true curve is ringed.
    """
    fig, ax = subplots(figsize=(7.5, 4.2), layout="constrained")
    handles = []
    for i, (r, part) in enumerate(table.groupby("reviewers", sort=True)):
        colour, marker, line = _style(i)
        part = part.sort_values("escalation_rate")
        x = part["escalation_rate"]
        ax.fill_between(x, part["band_low"], part["band_high"], color=colour, alpha=0.15, linewidth=0)
        ax.plot(x, part["protection_measured"], color=colour, linestyle=":", linewidth=1)
        ax.plot(x, part["protection_true"], color=colour, linestyle=line, marker=marker, markersize=3.5,
                markevery=max(len(part) // 10, 1), linewidth=1.5)
        best = part.loc[part["protection_true"].idxmax()]
        ax.plot([best["escalation_rate"]], [best["protection_true"]], marker="o", markersize=9, markerfacecolor="none",
                color=colour)
        handles.append(Line2D([], [], color=colour, marker=marker, linestyle=line, label=f"R = {r}"))
    handles += [Line2D([], [], color=BLACK, linestyle="-", label="true rates"),
                Line2D([], [], color=BLACK, linestyle=":", label="measured (mean)"),
                Patch(color=BLACK, alpha=0.15, label="measured: 5th-95th\npercentile of data sets"),
                Line2D([], [], color=BLACK, marker="o", markerfacecolor="none", linestyle="none", label="best point")]
    ax.set_xlabel("escalation rate (share of the traffic handed to a person)")
    ax.set_ylabel("realised protection (1 - p_u) g(rho)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend_right(fig, handles, title="reviewers")
    return fig


def plot_capacity_validation(table):
    """Simulated minus closed-form waiting, relative to the closed form, with 2 MCSE bars.

    ``table``: columns ``queue, reviewers, utilisation`` and, for ``p_wait`` and ``mean_wait``,
    ``*_closed, *_diff, *_mcse``. Rows: the probability of waiting (Erlang C) and the mean wait
    (Allen-Cunneen); panels: the kind of queue; one series per R, offset a little on the x axis.
    """
    kinds = list(dict.fromkeys(table["queue"]))
    fig, axes = subplots(2, len(kinds), figsize=(3.2 * len(kinds) + 1.5, 5.2), layout="constrained", squeeze=False,
                         sharey="row")
    reviewers = sorted(set(table["reviewers"]))
    for col, kind in enumerate(kinds):
        part = table[table["queue"] == kind]
        for row, (name, label) in enumerate((("p_wait", "P(wait): (sim - Erlang C) / Erlang C"),
                                             ("mean_wait", "mean wait: (sim - closed) / closed"))):
            ax = axes[row][col]
            for i, r in enumerate(reviewers):
                colour, marker, _ = _style(i)
                sub = part[part["reviewers"] == r].sort_values("utilisation")
                if sub.empty:
                    continue
                closed = sub[f"{name}_closed"]
                ax.errorbar(sub["utilisation"] + 0.01 * (i - len(reviewers) / 2), 100 * sub[f"{name}_diff"] / closed,
                            yerr=200 * sub[f"{name}_mcse"] / closed, color=colour, marker=marker, linestyle="none",
                            capsize=2, markersize=4)
            ax.axhline(0.0, color=BLACK, linewidth=0.8)
            ax.axhspan(-10, 10, color=BLACK, alpha=0.06, linewidth=0)
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(kind, fontsize=9)
            else:
                ax.set_xlabel("utilisation rho")
            if col == 0:
                ax.set_ylabel(f"{label} (%)", fontsize=8)
    handles = [Line2D([], [], color=_style(i)[0], marker=_style(i)[1], linestyle="none", label=f"R = {r}")
               for i, r in enumerate(reviewers)]
    handles.append(Patch(color=BLACK, alpha=0.06, label="within 10%"))
    handles.append(Line2D([], [], color=BLACK, marker="|", linestyle="-", label="bars: 2 MCSE"))
    legend_right(fig, handles, title="reviewers")
    return fig
