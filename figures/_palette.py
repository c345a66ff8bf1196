"""The colours, markers and line styles of every figure, without matplotlib: the figures drawn
with matplotlib (:mod:`figures._style`) and those a report page draws itself as SVG
(:mod:`figures._charts`) take them from here, so a method looks the same everywhere.
"""
from __future__ import annotations

from itertools import product

__all__ = ["PALETTE", "MARKERS", "LINESTYLES", "METHODS", "method_styles", "BLACK", "BLUE", "ORANGE"]

#: Okabe & Ito (2008), the palette of Wong (2011): black, orange, sky blue, bluish green, blue,
#: vermillion, reddish purple, and yellow (low contrast on white) last.
BLACK, ORANGE, SKY, GREEN, BLUE, VERMILLION, PURPLE, YELLOW = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")
PALETTE = (BLUE, ORANGE, GREEN, PURPLE, VERMILLION, SKY, BLACK, YELLOW)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")

#: ``method -> (colour, marker, line style)`` for every method a study draws. Related methods
#: share a colour family across studies (Wilson-Kish blue, its t variant sky blue, the
#: cluster-variance intervals reddish purple, the beta-binomial model's green and dotted or
#: dashed, the bootstraps orange and vermillion, the oracle with the true rho black and dashed).
METHODS = {
    # intervals of one rate (coverage study)
    "wilson": (BLACK, "v", ":"),
    "wilson-kish-true-rho": (BLACK, "*", "--"),
    "wilson-kish": (BLUE, "o", "-"),
    "wilson-kish-t": (SKY, "s", "-"),
    "wilson-kish-ucb": (GREEN, "^", "-"),
    "wilson-cluster-t": (PURPLE, "h", "--"),
    "korn-graubard": (PURPLE, "D", "-"),
    "beta-binomial-profile": (GREEN, ">", ":"),
    "beta-binomial-bayes": (GREEN, "<", "--"),
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
