"""A synthetic world with known truth: scenarios, assistant profiles and their conversations.

Public API::

    PROFILES, Profile, BEHAVIOURS   assistant profiles and the behaviours they draw
    ESC_ERROR_BEHAVIOURS, ACT_ERROR_BEHAVIOURS  the behaviours that are errors in each half
    make_scenarios(cases, seed=...)  paired cases (ESC and ACT variants) with their attributes
    simulate(profile, cases, replicas, rho, mode, seed) -> SimulatedRecords
    cluster_probabilities(p, rho, size, rng=...)  beta-binomial cluster probabilities (mean p, ICC rho)
    expected_rates(profile)          exact expected p_u, p_o, pi (and mode B, ICC)
    write_jsonl(sim, path)           canonical records (SPEC section 6) with a ``truth`` object
    world_policy(), world_policy_path()
    SimulatedTurnJudge, SimulatedCauseJudge  simulated judges (per-turn p_t with a calibration curve
                                     per language; causes), world_instructions(), true_causes(sim)
"""
from ._generate import SimulatedRecords, cluster_probabilities, simulate
from ._jsonl import write_jsonl
from ._judges import JUDGE_CALIBRATION, SimulatedCauseJudge, SimulatedTurnJudge, true_causes, world_instructions
from ._profiles import (ACT_ERROR_BEHAVIOURS, BEHAVIOURS, ESC_ERROR_BEHAVIOURS, PROFILES, Profile,
                        behaviour_probabilities, expected_rates)
from ._world import KINDS, LANGUAGES, CaseKind, make_scenarios, world_policy, world_policy_path

__all__ = ["ACT_ERROR_BEHAVIOURS", "BEHAVIOURS", "ESC_ERROR_BEHAVIOURS", "CaseKind", "JUDGE_CALIBRATION", "KINDS", "LANGUAGES", "PROFILES", "Profile",
           "SimulatedCauseJudge", "SimulatedRecords", "SimulatedTurnJudge", "behaviour_probabilities",
           "cluster_probabilities", "expected_rates", "make_scenarios", "simulate", "true_causes",
           "world_instructions", "world_policy", "world_policy_path", "write_jsonl"]
