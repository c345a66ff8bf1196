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
import lazy_loader

__all__ = ["ACT_ERROR_BEHAVIOURS", "BEHAVIOURS", "ESC_ERROR_BEHAVIOURS", "CaseKind", "JUDGE_CALIBRATION", "KINDS",
           "LANGUAGES", "PROFILES", "Profile", "SimulatedCauseJudge", "SimulatedRecords", "SimulatedTurnJudge",
           "behaviour_probabilities", "cluster_probabilities", "expected_rates", "make_scenarios", "simulate",
           "true_causes", "world_instructions", "world_policy", "world_policy_path", "write_jsonl"]

#: The public names by the module that defines each: lazy_loader imports a module the first time one
#: of its names is asked for (PEP 562), so ``escalation --help`` imports no numerical library.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_generate": ["SimulatedRecords", "cluster_probabilities", "simulate"],
    "_jsonl": ["write_jsonl"],
    "_judges": ["JUDGE_CALIBRATION", "SimulatedCauseJudge", "SimulatedTurnJudge", "true_causes", "world_instructions"],
    "_profiles": [
        "ACT_ERROR_BEHAVIOURS", "BEHAVIOURS", "ESC_ERROR_BEHAVIOURS", "PROFILES", "Profile",
        "behaviour_probabilities", "expected_rates",
    ],
    "_world": ["KINDS", "LANGUAGES", "CaseKind", "make_scenarios", "world_policy", "world_policy_path"],
})
