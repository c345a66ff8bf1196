"""What reaches a person, scenario by scenario, in a score folder (:class:`HandoffTotals`): the hand-offs and the
approval reviews, and their cluster bootstrap draws, which the capacity model (:mod:`estimators.metric._capacity`)
reads.

The model needs, draw by draw, ``e_ESC`` and ``p_u`` of one joint resample of the ESC scenarios (pushed
together through the queue), so the draws are the cluster bootstrap's resampled sums of several totals at
once (:func:`estimators.stats.resampled_cluster_sums`), not the distribution of one ratio.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from ..records import ACT, ESC, InputError
from ..stats import resampled_cluster_sums

__all__ = ["HandoffTotals", "approval_reviews"]

def approval_reviews(frame: pd.DataFrame) -> np.ndarray | None:
    """The approval reviews of each conversation of a scored frame, beyond its hand-off; None without evidence.

    A review is a decision a person takes on one approval (SPEC section 3A), counted from a line of
    ``conversations.jsonl``: each explicit request (``approval_requests``), whether or not its decision was
    recorded, and each gated call that carries an inline decision (``inline_decisions``: the harness asked about
    that call); less one for an ACT conversation whose cause is ``unneeded_approval_request``, whose request
    already reaches a person as its hand-off (``e_ACT = p_o``) and is not counted twice.

    Returns None when the frame has no ``approval_requests`` or ``inline_decisions`` column, or they are null in
    every row (a folder written before approval evidence, or mode text): then no approval review is seen.
    """
    if any(name not in frame or frame[name].isna().all() for name in ("approval_requests", "inline_decisions")):
        return None
    requests, inline = (pd.to_numeric(frame[name]).fillna(0).to_numpy(np.int64)
                        for name in ("approval_requests", "inline_decisions"))
    return requests + inline - (frame["cause"] == "unneeded_approval_request").to_numpy(np.int64)


@dataclass(frozen=True)
class HandoffTotals:
    """Per-scenario totals of a score folder: what reaches a person, scenario by scenario.

    Only evaluated conversations count (SPEC section 3: a conversation that is not evaluated is
    in no denominator). For each ESC scenario: ``esc_n`` conversations, ``esc_reached`` of them
    with ``escalated`` true, i.e. every cause but ``no_handoff`` (u = 0, and u = 1 with cause
    ``acted_before_handoff``: the person is reached after the action), and ``esc_under`` with
    u = 1. For each ACT scenario: ``act_n`` conversations and ``act_reached`` with o = 1 (causes
    ``unneeded_handoff`` and ``unneeded_approval_request``: an approval request reaches a person
    too, though its ``escalated`` is false). A conversation reaches a person once however many
    escalation calls it makes. An approval request in an ESC conversation without an escalation
    call is not a hand-off (SPEC section 3 scores no approval request in an ESC conversation): it is an
    approval review. ``esc_reviews`` and ``act_reviews`` are each scenario's approval reviews beyond its
    hand-offs (:func:`approval_reviews`), None when the folder holds no approval evidence (none is counted).
    """

    esc_n: np.ndarray
    esc_reached: np.ndarray
    esc_under: np.ndarray
    act_n: np.ndarray
    act_reached: np.ndarray
    esc_reviews: np.ndarray | None = None
    act_reviews: np.ndarray | None = None

    @property
    def approvals_recorded(self) -> bool:
        """Whether the folder holds approval evidence (else no approval review is counted)."""
        return self.esc_reviews is not None

    @classmethod
    def from_scored(cls, frame, summary: dict | None = None, *, source: str | None = None) -> HandoffTotals:
        """The totals of ``read_scored(folder)``'s frame; checked against its summary's counts.

        Raises
        ------
        InputError
            When a half has no evaluated conversation (its rates are undefined), or when the
            summary's ``under``/``over`` errors and n are not the frame's.
        """
        rows = frame[frame["evaluated"]]
        reviews = approval_reviews(rows)
        rows = rows.assign(reviews=0 if reviews is None else reviews)
        esc, act = rows[rows["label"] == ESC], rows[rows["label"] == ACT]
        for name, half in ((ESC, esc), (ACT, act)):
            if half.empty:
                raise InputError(f"has no evaluated {name} conversation: e_{name} (and p_u for ESC) are undefined, "
                                 "and the capacity model needs both halves", source=source)
        esc = esc.assign(reached=(esc["cause"] != "no_handoff").astype(int), under=esc["u"].astype(int))
        act = act.assign(reached=act["o"].astype(int))
        by_esc = esc.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"), under=("under", "sum"), reviews=("reviews", "sum"))
        by_act = act.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"), reviews=("reviews", "sum"))
        totals = cls(*(by_esc[c].to_numpy(dtype=np.int64) for c in ("n", "reached", "under")),
                     *(by_act[c].to_numpy(dtype=np.int64) for c in ("n", "reached")),
                     *((None, None) if reviews is None else
                       (by_esc["reviews"].to_numpy(np.int64), by_act["reviews"].to_numpy(np.int64))))
        if summary is not None:
            seen = {"under": (int(totals.esc_under.sum()), int(totals.esc_n.sum())),
                    "over": (int(totals.act_reached.sum()), int(totals.act_n.sum()))}
            for half, (errors, n) in seen.items():
                given = cast(dict, summary.get(half)) if isinstance(summary.get(half), dict) else {}
                if (given.get("errors"), given.get("n")) != (errors, n):
                    raise InputError(f"summary.json {half} has {given.get('errors')}/{given.get('n')}, its "
                                     f"conversations.jsonl {errors}/{n}: score again", source=source)
        return totals

    def _columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The per-scenario totals of each half as columns: ESC ``n, reached, under, reviews``, ACT ``n, reached,
        reviews`` (reviews 0 without approval evidence)."""
        esc_reviews = np.zeros_like(self.esc_n) if self.esc_reviews is None else self.esc_reviews
        act_reviews = np.zeros_like(self.act_n) if self.act_reviews is None else self.act_reviews
        return (np.column_stack([self.esc_n, self.esc_reached, self.esc_under, esc_reviews]),
                np.column_stack([self.act_n, self.act_reached, act_reviews]))

    def rates(self) -> tuple[float, float, float, float, float]:
        """``(e_ESC, e_ACT, p_u, r_ESC, r_ACT)``: each ratio of the summed totals; ``r`` are the approval reviews
        a conversation of each label (:func:`approval_reviews`)."""
        esc, act = (half.sum(axis=0) for half in self._columns())
        return esc[1] / esc[0], act[1] / act[0], esc[2] / esc[0], esc[3] / esc[0], act[2] / act[0]

    def draws(self, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """``draws`` cluster-bootstrap draws of ``(e_ESC, e_ACT, p_u, r_ESC, r_ACT)``, each of shape ``(draws,)``.

        ESC and ACT scenarios are resampled separately, each with replacement
        (multiplicities ``Multinomial(K, 1/K)``; Davison & Hinkley 1997, section 3.8); ``e_ESC``,
        ``p_u`` and ``r_ESC`` share their ESC resample (``e_ACT`` and ``r_ACT`` their ACT one), so their
        dependence is kept.
        """
        esc_columns, act_columns = self._columns()
        esc = resampled_cluster_sums(esc_columns, draws, rng=rng)
        act = resampled_cluster_sums(act_columns, draws, rng=rng)
        return (esc[:, 1] / esc[:, 0], act[:, 1] / act[:, 0], esc[:, 2] / esc[:, 0], esc[:, 3] / esc[:, 0],
                act[:, 2] / act[:, 0])

    def inputs(self) -> dict:
        """The measured inputs with their counts, for the output (``r_esc`` and ``r_act``: the approval reviews,
        ``recorded`` false when the folder holds no approval evidence)."""
        e_esc, e_act, p_u, r_esc, r_act = self.rates()
        (esc_n, esc_reached, esc_under, esc_reviews), (act_n, act_reached, act_reviews) = (
            half.sum(axis=0).tolist() for half in self._columns())
        esc_k, act_k = len(self.esc_n), len(self.act_n)
        return {"p_u": {"value": float(p_u), "errors": esc_under, "n": esc_n, "scenarios": esc_k},
                "e_esc": {"value": float(e_esc), "reached": esc_reached, "n": esc_n, "scenarios": esc_k},
                "e_act": {"value": float(e_act), "reached": act_reached, "n": act_n, "scenarios": act_k},
                "r_esc": {"value": float(r_esc), "reviews": esc_reviews, "n": esc_n, "scenarios": esc_k,
                          "recorded": self.approvals_recorded},
                "r_act": {"value": float(r_act), "reviews": act_reviews, "n": act_n, "scenarios": act_k,
                          "recorded": self.approvals_recorded}}
