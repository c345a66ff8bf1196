"""Figures of the coverage study: they draw the long table ``coverage.csv``, computing nothing.

Every figure draws the nominal level as a line and, around it, the band of +-1.96 Monte Carlo
standard errors that an interval of exactly nominal coverage would show; the coverage of each
method carries its own +-1.96 MCSE band, and the exact coverage (where computable) is drawn as
open markers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter, NullLocator

from ._style import subplots

__all__ = ["coverage_by_p", "coverage_by_scenarios", "width_against_coverage"]

_STYLE = {
    "wilson": ("Wilson (ignores clustering)", "tab:red"),
    "wilson_kish_true_rho": ("Wilson-Kish, true rho", "tab:green"),
    "wilson_kish_est_rho": ("Wilson-Kish, estimated rho", "tab:blue"),
    "bootstrap_percentile": ("Cluster bootstrap, percentile", "tab:orange"),
    "bootstrap_bca": ("Cluster bootstrap, BCa", "tab:purple"),
}
_Z = 1.959964


def _x_of(part: pd.DataFrame) -> tuple[np.ndarray, str]:
    """x-axis of one estimand: the true p_u, or 1 - pi (both measure distance from the boundary)."""
    if part["estimand"].iloc[0] == "pi":
        return 1.0 - part["p"].to_numpy(), "1 - true pi"
    return part["p"].to_numpy(), "true p_u"


def _nominal(ax, nominal: float, nsim: int) -> None:
    band = _Z * np.sqrt(nominal * (1 - nominal) / nsim)
    ax.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
    ax.axhline(nominal, color="black", lw=0.8, zorder=1)


def _lines(ax, part: pd.DataFrame, x_column: str) -> None:
    for method, (label, colour) in _STYLE.items():
        rows = part[part["method"] == method].sort_values(x_column)
        if rows.empty:
            continue
        x, cov, se = rows[x_column].to_numpy(), rows["coverage"].to_numpy(), rows["coverage_mcse"].to_numpy()
        ax.plot(x, cov, "-o", ms=3, lw=1.2, color=colour, label=label)
        ax.fill_between(x, cov - _Z * se, cov + _Z * se, color=colour, alpha=0.15, lw=0)
        exact = rows["exact_coverage"].to_numpy(dtype=float)
        if np.isfinite(exact).any():
            ax.plot(x, exact, "o", ms=6, mfc="none", color=colour, lw=0)


def _log_ticks(ax, values) -> None:
    """Log-scaled x axis with ticks exactly at the design values."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(values))))
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_minor_locator(NullLocator())


def _grid(rows, cols):
    return subplots(len(rows), len(cols), figsize=(3.0 * len(cols) + 1, 2.4 * len(rows) + 1),
                        sharex=True, sharey=True, squeeze=False)


def coverage_by_p(table: pd.DataFrame, *, replicas: int, nominal: float = 0.95):
    """Coverage against the true value, one panel per number of scenarios (rows) and rho (columns).

    Parameters
    ----------
    table : pandas.DataFrame
        Rows of ``coverage.csv`` for one estimand.
    replicas : int
        The number of replicas ``m`` drawn.
    nominal : float
        Nominal level.
    """
    part = table[table["replicas"] == replicas].copy()
    part["x"], xlabel = _x_of(part)
    scenarios, rhos = sorted(part["scenarios"].unique()), sorted(part["rho"].unique())
    fig, axes = _grid(scenarios, rhos)
    for i, k in enumerate(scenarios):
        for j, rho in enumerate(rhos):
            ax = axes[i, j]
            _nominal(ax, nominal, int(part["nsim"].min()))
            _lines(ax, part[(part["scenarios"] == k) & (part["rho"] == rho)], "x")
            _log_ticks(ax, part["x"])
            ax.set_title(f"K = {k}, rho = {rho:g}", fontsize=9)
            if i == len(scenarios) - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel("coverage")
    estimand = part["estimand"].iloc[0]
    fig.suptitle(f"Coverage of {estimand} intervals against the true value (m = {replicas}); "
                 "open markers: exact coverage", fontsize=10)
    _legend(fig, axes)
    return fig


def coverage_by_scenarios(table: pd.DataFrame, *, distance: float = 0.05, nominal: float = 0.95):
    """Coverage against the number of scenarios K, one panel per rho (rows) and m (columns).

    Drawn at the true value whose distance from the nearer boundary is closest to ``distance``.
    """
    near = np.minimum(table["p"], 1 - table["p"])
    chosen = near.iloc[(near - distance).abs().argmin()]
    part = table[np.isclose(near, chosen)]
    rhos, replicas = sorted(part["rho"].unique()), sorted(part["replicas"].unique())
    fig, axes = _grid(rhos, replicas)
    for i, rho in enumerate(rhos):
        for j, m in enumerate(replicas):
            ax = axes[i, j]
            _nominal(ax, nominal, int(part["nsim"].min()))
            _lines(ax, part[(part["rho"] == rho) & (part["replicas"] == m)], "scenarios")
            _log_ticks(ax, part["scenarios"])
            ax.set_title(f"rho = {rho:g}, m = {m}", fontsize=9)
            if i == len(rhos) - 1:
                ax.set_xlabel("scenarios K")
            if j == 0:
                ax.set_ylabel("coverage")
    estimand, truth = part["estimand"].iloc[0], part["p"].iloc[0]
    fig.suptitle(f"Coverage of {estimand} intervals against the number of scenarios (true value {truth:g})",
                 fontsize=10)
    _legend(fig, axes)
    return fig


def width_against_coverage(table: pd.DataFrame, *, nominal: float = 0.95):
    """Mean width against coverage of every cell, one panel per estimand, one colour per method."""
    estimands = list(dict.fromkeys(table["estimand"]))
    fig, axes = subplots(1, len(estimands), figsize=(5.5 * len(estimands), 4.5), sharey=True, squeeze=False)
    for j, estimand in enumerate(estimands):
        ax = axes[0, j]
        part = table[table["estimand"] == estimand]
        _nominal(ax, nominal, int(part["nsim"].min()))
        for method, (label, colour) in _STYLE.items():
            rows = part[part["method"] == method]
            ax.errorbar(rows["mean_width"], rows["coverage"], yerr=_Z * rows["coverage_mcse"], fmt="o", ms=3,
                        color=colour, alpha=0.7, elinewidth=0.6, label=label)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("mean width (log scale)")
        ax.set_title(estimand, fontsize=9)
        if j == 0:
            ax.set_ylabel("coverage")
    fig.suptitle("Width against coverage, every design cell (bars: +-1.96 MCSE)", fontsize=10)
    _legend(fig, axes)
    return fig


def _legend(fig, axes) -> None:
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
