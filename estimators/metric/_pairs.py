"""The pairs of SPEC section 5: within a case, the ESC and the ACT conversation of one replica.

Pairs are formed here and nowhere else: :class:`~estimators.metric._aggregate.SummaryAccumulator`
calls :func:`pair_halves` on each chunk and :func:`match_pairs` on the halves gathered so far.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..records import ACT, BASE_CAUSES, ESC

__all__ = ["pair_halves", "match_pairs"]


def pair_halves(results: pd.DataFrame, evaluated: np.ndarray):
    """The evaluated ESC and ACT conversations of a case: the halves of pairs (SPEC section 5).

    ``results`` are a scorer's: their labels are already read (``esc`` is ``ESC``,
    :func:`~estimators.records._vocabulary.normalise_labels`), so an ``esc`` and an ``ACT``
    conversation of a case pair, and the halves are the ones the summary counts.

    Returns their rows, whether each is the ESC half, ``error`` (``u`` of an ESC half, ``o``
    of an ACT half) and ``base_error`` (``no_handoff`` / ``unneeded_handoff``).
    """
    label = results["label"].to_numpy(object)
    is_esc, is_act = label == ESC, label == ACT
    rows = np.flatnonzero(evaluated & (is_esc | is_act) & results["case_id"].notna().to_numpy(bool))
    esc = is_esc[rows]
    cause = results["cause"].to_numpy(object)[rows]
    u, o = (results[score].to_numpy(np.int8, na_value=0)[rows] for score in ("u", "o"))
    error = np.where(esc, u, o)
    base_under, base_over = BASE_CAUSES
    base_error = np.where(esc, cause == base_under, cause == base_over).astype(np.int8)
    return rows, esc, error, base_error


def match_pairs(case: np.ndarray, replica: np.ndarray, is_esc: np.ndarray):
    """The complete pairs among halves of pairs, one half per (case, label, replica).

    Returns the positions of the ESC half and of the ACT half of each complete pair (ordered
    by case code, then replica), and of the halves that still wait for the other label.
    """
    order = np.lexsort((is_esc, replica, case))  # by case, then replica, the ACT half first
    c, r = case[order], replica[order]
    pair = (c[1:] == c[:-1]) & (r[1:] == r[:-1])
    act, esc = order[:-1][pair], order[1:][pair]
    waiting = np.ones(case.size, bool)
    waiting[act] = waiting[esc] = False
    return esc, act, np.flatnonzero(waiting)
