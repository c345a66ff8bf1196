"""Figure of the gate study: each rule's wrong decisions and expected epochs against the true ``p_u``. It draws
the table it is given (``studies.gate``: ``rules.csv``)."""
from __future__ import annotations

from matplotlib.lines import Line2D

from ._palette import BLACK, BLUE, GREEN, VERMILLION
from ._style import legend_right, subplots

__all__ = ["plot_gate_rules", "RULE_STYLES"]

#: ``rule -> (colour, marker, label)``.
RULE_STYLES = {"fixed": (BLACK, "s", "fixed: 4 epochs, 95%"),
               "naive": (VERMILLION, "v", "naive: a look each epoch at 95%"),
               "sequential": (BLUE, "o", "sequential: O'Brien-Fleming levels")}


def plot_gate_rules(table, *, threshold: float, nominal: float):
    """Wrong decisions (top row of each K) and expected epochs (bottom row) against the true ``p_u``, one column
    per rho, one colour per rule.

    ``table``: columns ``scenarios, rho, truth, rule, p_fail, p_fail_mcse, p_pass, p_pass_mcse,
    expected_epochs, expected_epochs_mcse``. The wrong-decision panel draws P(fail) where the truth is at or
    below ``threshold`` (solid) and P(pass) where it is at or above (dashed: a pass at the threshold is not
    wrong, but the interval bounds it by ``nominal`` too), with bars of 2 MCSE and the ``nominal`` line.
    """
    ks = sorted(table["scenarios"].unique(), reverse=True)
    rhos = sorted(table["rho"].unique())
    fig, axes = subplots(2 * len(ks), len(rhos), figsize=(3.3 * len(rhos) + 2.4, 2.6 * 2 * len(ks)),
                         layout="constrained", squeeze=False, sharex=True)
    top = max(float(max((table["p_fail"] + 2 * table["p_fail_mcse"])[table["truth"] <= threshold].max(),
                        (table["p_pass"] + 2 * table["p_pass_mcse"])[table["truth"] >= threshold].max())) * 1.1,
              3 * nominal)
    for i, k in enumerate(ks):
        for j, rho in enumerate(rhos):
            wrong, cost = axes[2 * i][j], axes[2 * i + 1][j]
            part = table[(table["scenarios"] == k) & (table["rho"] == rho)]
            for rule, (colour, marker, _) in RULE_STYLES.items():
                sub = part[part["rule"] == rule].sort_values("truth")
                if sub.empty:
                    continue
                below, above = sub[sub["truth"] <= threshold], sub[sub["truth"] >= threshold]
                wrong.errorbar(below["truth"], below["p_fail"], yerr=2 * below["p_fail_mcse"], color=colour,
                               marker=marker, markersize=4, capsize=2, linestyle="-", linewidth=1.2)
                wrong.errorbar(above["truth"], above["p_pass"], yerr=2 * above["p_pass_mcse"], color=colour,
                               marker=marker, markersize=4, capsize=2, linestyle="--", linewidth=1.2,
                               markerfacecolor="none")
                cost.errorbar(sub["truth"], sub["expected_epochs"], yerr=2 * sub["expected_epochs_mcse"],
                              color=colour, marker=marker, markersize=4, capsize=2, linewidth=1.2)
            wrong.axhline(nominal, color=GREEN, linewidth=1, linestyle=":")
            for ax in (wrong, cost):
                ax.axvline(threshold, color=BLACK, linewidth=0.8, alpha=0.5)
                ax.grid(alpha=0.3)
            wrong.set_ylim(0, top)
            cost.set_ylim(0, 4.3)
            wrong.set_title(f"K = {k} scenarios, rho = {rho:g}", fontsize=9)
            if j == 0:
                wrong.set_ylabel("P(wrong side)")
                cost.set_ylabel("expected epochs")
            if i == len(ks) - 1:
                cost.set_xlabel("true p_u")
    handles = [Line2D([], [], color=c, marker=m, label=label) for c, m, label in RULE_STYLES.values()]
    handles += [Line2D([], [], color=BLACK, linestyle="-", label="P(fail), truth <= threshold"),
                Line2D([], [], color=BLACK, linestyle="--", marker="o", markerfacecolor="none",
                       label="P(pass), truth >= threshold"),
                Line2D([], [], color=GREEN, linestyle=":", label=f"nominal {nominal:.1%}"),
                Line2D([], [], color=BLACK, alpha=0.5, label=f"threshold {threshold:g}")]
    legend_right(fig, handles, title="rule (bars: 2 MCSE)")
    return fig
