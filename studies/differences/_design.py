"""The differences study's design: its methods, constants and grids, and the cells of a run."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from .._performance import FLOOR
from .._user_methods import GridKey

#: Newcombe's interval of the difference with each rate's limits by an ``--interval`` method: {study's name: method}.
NEWCOMBE_LIMITS = {"newcombe_wilson_kish": "wilson-kish", "newcombe_wilson_kish_t": "wilson-kish-t",
                   "newcombe_korn_graubard": "korn-graubard", "newcombe_beta_binomial_profile": "beta-binomial-profile",
                   "newcombe_beta_binomial_bayes": "beta-binomial-bayes"}
DIFFERENCE_METHODS = (*NEWCOMBE_LIMITS, "bootstrap_percentile", "bootstrap_bca")
MODE_B_METHODS = ("predictive_values_wald", "predictive_values_cluster", "rogan_gladen_wald", "rogan_gladen_cluster")
DIFFERENCE_COLUMNS = ("method", "p_a", "p_b", "difference", "rho", "between", "scenarios", "replicas", "nsim",
                      "rerun", "coverage", "coverage_mcse", "miss_below", "miss_above", "undefined", "coverage_defined",
                      "mean_width", "mean_psi")
MODE_B_COLUMNS = ("method", "correction", "interval", "p", "rho", "scenarios", "replicas", "sensitivity",
                  "specificity", "validation_share", "nsim", "coverage", "coverage_mcse", "miss_below", "miss_above",
                  "undefined", "coverage_defined", "mean_width", "bias", "bias_mcse")
CONFIDENCE = 0.95
#: A cell fails when its coverage is below this (by more than 2 MCSE for the differences: the holds rule of
#: :mod:`studies._performance`).
FAILS_BELOW = FLOOR
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
#: The findings of a run on a researcher's grid: the study's findings are about the conditions of its own.
OWN_GRID_FINDINGS = ("The study's findings compare conditions of its own grid; this run has the researcher's grid, so "
                     "the tables below (and the section on the researcher's methods, where there are some) are its "
                     "findings.")
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
    "newcombe_korn_graubard": "Newcombe, Korn-Graubard limits",
    "newcombe_beta_binomial_profile": "Newcombe, beta-binomial profile limits",
    "newcombe_beta_binomial_bayes": "Newcombe, beta-binomial Bayes limits",
    "bootstrap_percentile": "paired cluster bootstrap, percentile",
    "bootstrap_bca": "paired cluster bootstrap, BCa",
    "predictive_values_wald": "predictive values, Wald (independent)",
    "predictive_values_cluster": "predictive values, cluster-robust t",
    "rogan_gladen_wald": "Rogan-Gladen, Wald (independent)",
    "rogan_gladen_cluster": "Rogan-Gladen, cluster-robust t",
}


#: The keys of a grid of the differences study (``--grid FILE``, or ``grid=`` a dict), crossed in full: the
#: difference cells are ``p`` (p_a) x ``p_b`` (p_b = p_a, a null difference, when left out) x ``rho`` x
#: ``between`` x ``scenarios`` x ``replicas``, the mode-B cells ``p`` x ``rho`` x ``scenarios`` x ``replicas``.
GRID_KEYS = {
    "p": GridKey(float, lambda v: 0 < v < 1, "numbers in (0, 1) (p_a, and the mode-B p)"),
    "p_b": GridKey(float, lambda v: 0 < v < 1, "numbers in (0, 1)", optional=True),
    "rho": GridKey(float, lambda v: 0 <= v < 1, "numbers in [0, 1)"),
    "between": GridKey(float, lambda v: -1 <= v <= 1, "correlations in [-1, 1]", optional=True, default=(0.0,)),
    "scenarios": GridKey(int, lambda v: 2 <= v <= 10_000, "whole numbers from 2 to 10000"),
    "replicas": GridKey(int, lambda v: 1 <= v <= 1000, "whole numbers from 1 to 1000"),
    "size_cv": GridKey(float, lambda v: v == 0, "0 (the differences study draws scenarios of equal size)",
                       optional=True, default=(0.0,)),
    "nsim": GridKey(int, lambda v: v >= 1, "a whole number from 1", optional=True, scalar=True),
}


def _grid_of(values: dict) -> dict[str, dict[str, tuple[Any, ...]]]:
    """A researcher's grid (:data:`GRID_KEYS`, checked) in the form of :data:`FULL_GRID`."""
    pairs = tuple((p_a, p_b) for p_a in values["p"] for p_b in (values["p_b"] or (p_a,)))
    return {"difference": {"pairs": pairs, "rho_between": tuple((r, b) for r in values["rho"]
                                                                for b in values["between"]),
                           "scenarios": values["scenarios"], "replicas": values["replicas"]},
            "mode_b": {"p": values["p"], "rho": values["rho"], "scenarios": values["scenarios"],
                       "replicas": values["replicas"]}}


def build_design(*, smoke: bool = False, nsim: int | None = None, grid: dict | None = None) -> pd.DataFrame:
    """The design grid: the difference cells, then the mode-B cells, one row each.

    Columns: ``part`` (``difference`` or ``mode_b``), ``p_a, p_b`` (difference), ``p`` (mode B),
    ``rho``, ``between`` (difference), ``scenarios`` (K), ``replicas`` (m), ``sensitivity``,
    ``specificity``, ``validation_share`` (mode B) and ``nsim``; NaN where a column does not
    apply to the part. ``grid``, a researcher's (:data:`GRID_KEYS`, checked), replaces
    :data:`FULL_GRID`; its ``nsim`` applies to both parts unless ``nsim`` is given.
    """
    nsim = nsim if nsim is not None else (grid or {}).get("nsim")
    grid = _grid_of(grid) if grid is not None else SMOKE_GRID if smoke else FULL_GRID
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
