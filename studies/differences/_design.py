"""The differences study's design: its methods, constants and grids, and the cells of a run."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

DIFFERENCE_METHODS = ("newcombe_wilson_kish", "newcombe_wilson_kish_t", "bootstrap_percentile", "bootstrap_bca")
MODE_B_METHODS = ("predictive_values_wald", "predictive_values_cluster", "rogan_gladen_wald", "rogan_gladen_cluster")
DIFFERENCE_COLUMNS = ("method", "p_a", "p_b", "difference", "rho", "between", "scenarios", "replicas", "nsim",
                      "coverage", "coverage_mcse", "miss_below", "miss_above", "undefined", "coverage_defined",
                      "mean_width", "mean_psi")
MODE_B_COLUMNS = ("method", "correction", "interval", "p", "rho", "scenarios", "replicas", "sensitivity",
                  "specificity", "validation_share", "nsim", "coverage", "coverage_mcse", "miss_below", "miss_above",
                  "undefined", "coverage_defined", "mean_width", "bias", "bias_mcse")
CONFIDENCE = 0.95
#: A cell fails when its coverage is below this.
FAILS_BELOW = 0.93
#: Paired bootstrap resamples per data set.
N_RESAMPLES = 999
#: Data sets whose bootstrap shares one call (and its multinomial weights).
BOOTSTRAP_BATCH = 50
#: A mode-B method enters the summaries of a cell when it is undefined in at most this share of its data sets.
MAX_UNDEFINED = 0.05
#: Mode-B data sets drawn at once (bounded memory).
MODE_B_CHUNK = 500
DEFAULT_NSIM = {"difference": 2000, "mode_b": 2000}
SMOKE_NSIM = {"difference": 150, "mode_b": 300}
#: The text judge and the validation subsample of mode B.
SENSITIVITY, SPECIFICITY, VALIDATION_SHARE = 0.75, 0.95, 0.3
#: The findings of a smoke run: its grid lacks most of the conditions the findings of the full study compare.
SMOKE_FINDINGS = ("Not drawn from a smoke run: its grid holds a few of the study's conditions and few data sets per "
                  "cell. The tables below show what this run computed.")

FULL_GRID: dict[str, dict[str, tuple[Any, ...]]] = {
    "difference": {"pairs": ((0.05, 0.05), (0.02, 0.1), (0.2, 0.2), (0.1, 0.3)),
                   "rho_between": ((0.0, 0.0), (0.2, 0.0), (0.2, 0.5)),
                   "scenarios": (5, 10, 30, 100), "replicas": (1, 3, 8)},
    "mode_b": {"p": (0.1, 0.3), "rho": (0.0, 0.2, 0.5), "scenarios": (10, 30, 100, 300), "replicas": (1, 3, 10)},
}
SMOKE_GRID: dict[str, dict[str, tuple[Any, ...]]] = {
    "difference": {"pairs": ((0.05, 0.05), (0.1, 0.3)), "rho_between": ((0.0, 0.0), (0.2, 0.5)),
                   "scenarios": (5, 30), "replicas": (1, 3)},
    "mode_b": {"p": (0.3,), "rho": (0.0, 0.5), "scenarios": (10, 100), "replicas": (1, 10)},
}

_NAMES = {
    "newcombe_wilson_kish": "Newcombe, Wilson-Kish limits (compare's)",
    "newcombe_wilson_kish_t": "Newcombe, Wilson-Kish-t limits",
    "bootstrap_percentile": "paired cluster bootstrap, percentile",
    "bootstrap_bca": "paired cluster bootstrap, BCa",
    "predictive_values_wald": "predictive values, Wald (independent)",
    "predictive_values_cluster": "predictive values, cluster-robust t",
    "rogan_gladen_wald": "Rogan-Gladen, Wald (independent)",
    "rogan_gladen_cluster": "Rogan-Gladen, cluster-robust t",
}


def build_design(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The design grid: the difference cells, then the mode-B cells, one row each.

    Columns: ``part`` (``difference`` or ``mode_b``), ``p_a, p_b`` (difference), ``p`` (mode B),
    ``rho``, ``between`` (difference), ``scenarios`` (K), ``replicas`` (m), ``sensitivity``,
    ``specificity``, ``validation_share`` (mode B) and ``nsim``; NaN where a column does not
    apply to the part.
    """
    grid = SMOKE_GRID if smoke else FULL_GRID
    sizes = SMOKE_NSIM if smoke else DEFAULT_NSIM
    nan = math.nan
    rows = []
    part = grid["difference"]
    for p_a, p_b in part["pairs"]:
        for rho, between in part["rho_between"]:
            for scenarios in part["scenarios"]:
                for replicas in part["replicas"]:
                    rows.append({"part": "difference", "p_a": p_a, "p_b": p_b, "p": nan, "rho": rho,
                                 "between": between, "scenarios": scenarios, "replicas": replicas,
                                 "sensitivity": nan, "specificity": nan, "validation_share": nan,
                                 "nsim": int(nsim or sizes["difference"])})
    part = grid["mode_b"]
    for p in part["p"]:
        for rho in part["rho"]:
            for scenarios in part["scenarios"]:
                for replicas in part["replicas"]:
                    rows.append({"part": "mode_b", "p_a": nan, "p_b": nan, "p": p, "rho": rho, "between": nan,
                                 "scenarios": scenarios, "replicas": replicas, "sensitivity": SENSITIVITY,
                                 "specificity": SPECIFICITY, "validation_share": VALIDATION_SHARE,
                                 "nsim": int(nsim or sizes["mode_b"])})
    return pd.DataFrame(rows)


# --- the differences ---------------------------------------------------------------------------
