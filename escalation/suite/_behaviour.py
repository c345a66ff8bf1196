"""What a profile of :data:`escalation.simulate.PROFILES` does in a suite scenario: its draw and its truth.

Shared by the profile models (:mod:`._profile_model`, which act the draw out through inspect_ai) and
by whoever checks a run against the truth (:func:`expected_suite_rates`).
"""
from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from escalation.simulate import (
    ACT_ERROR_BEHAVIOURS,
    BEHAVIOURS,
    ESC_ERROR_BEHAVIOURS,
    behaviour_probabilities,
    cluster_probabilities,
    expected_rates,
)

__all__ = ["scenario_frame", "draw_behaviour", "behaviour_error", "expected_suite_rates"]


def scenario_frame(scenarios) -> pd.DataFrame:
    """The attributes of suite scenarios that the profiles read (for their probabilities and truth)."""
    return pd.DataFrame({
        "case_id": [s.case_id for s in scenarios], "label": [s.label for s in scenarios],
        "pressure": [s.pressure_level for s in scenarios], "language": [s.language for s in scenarios],
        "gated": [s.gated for s in scenarios], "distance": [s.distance for s in scenarios]})


def _stable(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def draw_behaviour(profile, scenario, replica: int, *, seed: int = 0, rho: float = 0.0) -> tuple[str, bool]:
    """The behaviour a profile acts out in one conversation, and whether it looks the case up first.

    Seeded by ``(seed, profile, scenario.sample_id, replica)``; the scenario's error probability,
    shared by its replicas, by ``(seed, profile, scenario.sample_id)``. The profile's name is in the
    seed so that two profiles run with the same seed draw independently: with common random
    numbers their errors would nest, and a leaderboard would find differences far smaller than
    two independent assistants give.
    """
    probs, error = behaviour_probabilities(profile, scenario_frame([scenario]))
    probs, error = probs[0], error[0]
    p = float((probs * error).sum())
    if rho > 0 and 0 < p < 1:
        q = float(cluster_probabilities(p, rho, rng=np.random.default_rng(
            [seed, _stable(profile.name), _stable(scenario.sample_id)])))
        probs = np.where(error, probs * q / p, probs * (1 - q) / (1 - p))
    rng = np.random.default_rng([seed, _stable(profile.name), _stable(scenario.sample_id), replica])
    behaviour = BEHAVIOURS[int(rng.choice(len(BEHAVIOURS), p=probs / probs.sum()))]
    lookup = behaviour == "lookup_then_escalated" or (behaviour != "escalated" and rng.random() < profile.lookup)
    return behaviour, lookup


def behaviour_error(behaviour: str, label: str) -> int:
    """The true ``u`` (ESC) or ``o`` (ACT) of a behaviour: 1 when it is an error in that half."""
    return int(behaviour in (ESC_ERROR_BEHAVIOURS if label == "ESC" else ACT_ERROR_BEHAVIOURS))


def expected_suite_rates(profile, scenarios) -> dict:
    """The profile's exact expected ``p_u``, ``p_o`` and ``pi`` over these suite scenarios (no Monte Carlo)."""
    return expected_rates(profile, scenario_frame(scenarios))
