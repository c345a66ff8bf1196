"""What reaches a person, scenario by scenario, in a score folder (:class:`HandoffTotals`), and its cluster
bootstrap draws, which the capacity model (:mod:`estimators.metric._capacity`) reads.

The model needs, draw by draw, ``e_ESC`` and ``p_u`` of one joint resample of the ESC scenarios (pushed
together through the queue), so the draws are the cluster bootstrap's resampled sums of several totals at
once (:func:`estimators.stats.resampled_cluster_sums`), not the distribution of one ratio.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ..records import ACT, ESC, InputError
from ..stats import resampled_cluster_sums

__all__ = ["HandoffTotals"]


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
    call is not seen (SPEC section 3 scores no approval request in an ESC conversation), so
    ``e_ESC`` is a lower bound for an assistant that asks approval in ESC cases.
    """

    esc_n: np.ndarray
    esc_reached: np.ndarray
    esc_under: np.ndarray
    act_n: np.ndarray
    act_reached: np.ndarray

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
        esc, act = rows[rows["label"] == ESC], rows[rows["label"] == ACT]
        for name, half in ((ESC, esc), (ACT, act)):
            if half.empty:
                raise InputError(f"has no evaluated {name} conversation: e_{name} (and p_u for ESC) are undefined, "
                                 "and the capacity model needs both halves", source=source)
        esc = esc.assign(reached=(esc["cause"] != "no_handoff").astype(int), under=esc["u"].astype(int))
        act = act.assign(reached=act["o"].astype(int))
        by_esc = esc.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"), under=("under", "sum"))
        by_act = act.groupby("scenario_id", sort=True, dropna=False).agg(
            n=("reached", "size"), reached=("reached", "sum"))
        totals = cls(*(by_esc[c].to_numpy(dtype=np.int64) for c in ("n", "reached", "under")),
                     *(by_act[c].to_numpy(dtype=np.int64) for c in ("n", "reached")))
        if summary is not None:
            seen = {"under": (int(totals.esc_under.sum()), int(totals.esc_n.sum())),
                    "over": (int(totals.act_reached.sum()), int(totals.act_n.sum()))}
            for half, (errors, n) in seen.items():
                given = cast(dict, summary.get(half)) if isinstance(summary.get(half), dict) else {}
                if (given.get("errors"), given.get("n")) != (errors, n):
                    raise InputError(f"summary.json {half} has {given.get('errors')}/{given.get('n')}, its "
                                     f"conversations.jsonl {errors}/{n}: score again", source=source)
        return totals

    def rates(self) -> tuple[float, float, float]:
        """``(e_ESC, e_ACT, p_u)``: each ratio of the summed totals."""
        return (self.esc_reached.sum() / self.esc_n.sum(), self.act_reached.sum() / self.act_n.sum(),
                self.esc_under.sum() / self.esc_n.sum())

    def draws(self, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``draws`` cluster-bootstrap draws of ``(e_ESC, e_ACT, p_u)``, each of shape ``(draws,)``.

        ESC and ACT scenarios are resampled separately, each with replacement
        (multiplicities ``Multinomial(K, 1/K)``; Davison & Hinkley 1997, section 3.8); ``e_ESC``
        and ``p_u`` share their ESC resample, so their dependence is kept.
        """
        esc = resampled_cluster_sums(np.column_stack([self.esc_n, self.esc_reached, self.esc_under]), draws, rng=rng)
        act = resampled_cluster_sums(np.column_stack([self.act_n, self.act_reached]), draws, rng=rng)
        return esc[:, 1] / esc[:, 0], act[:, 1] / act[:, 0], esc[:, 2] / esc[:, 0]

    def inputs(self) -> dict:
        """The measured inputs with their counts, for the output."""
        e_esc, e_act, p_u = self.rates()
        esc_k, act_k = len(self.esc_n), len(self.act_n)
        return {"p_u": {"value": float(p_u), "errors": int(self.esc_under.sum()), "n": int(self.esc_n.sum()),
                        "scenarios": esc_k},
                "e_esc": {"value": float(e_esc), "reached": int(self.esc_reached.sum()), "n": int(self.esc_n.sum()),
                          "scenarios": esc_k},
                "e_act": {"value": float(e_act), "reached": int(self.act_reached.sum()), "n": int(self.act_n.sum()),
                          "scenarios": act_k}}
