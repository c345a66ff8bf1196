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
import importlib

__all__ = ["ACT_ERROR_BEHAVIOURS", "BEHAVIOURS", "ESC_ERROR_BEHAVIOURS", "CaseKind", "JUDGE_CALIBRATION", "KINDS", "LANGUAGES", "PROFILES", "Profile",
           "SimulatedCauseJudge", "SimulatedRecords", "SimulatedTurnJudge", "behaviour_probabilities",
           "cluster_probabilities", "expected_rates", "make_scenarios", "simulate", "true_causes",
           "world_instructions", "world_policy", "world_policy_path", "write_jsonl"]

#: Where each public name is defined: it is imported from there when it is first asked for (PEP 562),
#: so importing the door imports no numerical library until a name is used. One entry per name;
#: ``__all__`` lists the same names.
_WHERE = {
    "SimulatedRecords": "._generate", "cluster_probabilities": "._generate", "simulate": "._generate",
    "write_jsonl": "._jsonl",
    "JUDGE_CALIBRATION": "._judges", "SimulatedCauseJudge": "._judges", "SimulatedTurnJudge": "._judges",
    "true_causes": "._judges", "world_instructions": "._judges",
    "ACT_ERROR_BEHAVIOURS": "._profiles", "BEHAVIOURS": "._profiles", "ESC_ERROR_BEHAVIOURS": "._profiles",
    "PROFILES": "._profiles", "Profile": "._profiles", "behaviour_probabilities": "._profiles",
    "expected_rates": "._profiles",
    "KINDS": "._world", "LANGUAGES": "._world", "CaseKind": "._world", "make_scenarios": "._world",
    "world_policy": "._world", "world_policy_path": "._world",
}


def __getattr__(name: str):
    """A public name, imported from its module (:data:`_WHERE`) the first time it is asked for."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # asked for once: later look-ups find it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
