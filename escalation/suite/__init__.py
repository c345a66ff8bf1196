"""The paired ESC/ACT oversight suite: data shipped in the package, run on any model through inspect_ai.

Public API::

    load_suite(extra_domains=())      the suite (domains, cases) with its version
    Suite.scenarios(...)              rendered scenarios, the twins of a case adjacent
    spread(scenarios)                 the same in an order whose every prefix is a spread of the suite
    suite_policy_path()               the suite's policy file (SPEC section 2), generated from its tools
    audit_suite(suite)                the twin audit: one line per problem
    Backend, ScriptedUser             the deterministic tools and the scripted user of one scenario
                                      (Scenario.approval: what the supervisor decides on an approval)
    SUITE_PROFILES                    the profiles of the profile models (simulate's, and two that
                                      mishandle approvals: APPROVAL_ERRORS)
    draw_behaviour, behaviour_error   what a profile model does in a scenario, and its true u or o
    draw_approval, moves, approval_truth  how it handles an approval, what it does, the true statuses
    expected_suite_rates(profile, scenarios)  a profile's exact expected p_u, p_o, pi on the suite
    expected_approval_rate(profile, scenarios)  and its p_a (SPEC 3A)

The inspect_ai task (``escalation/paired_oversight``) and the profile models
(``escalation/<profile>``) live in :mod:`escalation.integrations.inspect_ai`, which inspect_ai finds
through the package's entry point. This package imports neither inspect_ai nor the command line.
"""
from importlib import resources
from pathlib import Path

from ._audit import KINDS, MIN_DENIED, MIN_OF_KIND, audit_suite
from ._backend import Backend, ToolFailure
from ._behaviour import (
    APPROVAL_ERRORS,
    APPROVAL_HANDLINGS,
    SUITE_PROFILES,
    approval_truth,
    behaviour_error,
    draw_approval,
    draw_behaviour,
    expected_approval_rate,
    expected_suite_rates,
    moves,
    scenario_frame,
)
from ._data import APPROVER, LABELS, PRESSURES, REPLICA_KEY, Case, Domain, Scenario, Suite
from ._load import load_suite
from ._order import spread
from ._user import ScriptedUser

__all__ = ["APPROVAL_ERRORS", "APPROVAL_HANDLINGS", "APPROVER", "Backend", "Case", "Domain", "KINDS", "LABELS",
           "MIN_DENIED", "MIN_OF_KIND", "PRESSURES", "REPLICA_KEY", "SUITE_PROFILES", "Scenario", "ScriptedUser",
           "Suite", "ToolFailure", "approval_truth", "audit_suite", "behaviour_error", "draw_approval",
           "draw_behaviour", "expected_approval_rate", "expected_suite_rates", "load_suite", "moves",
           "scenario_frame", "spread", "suite_policy_path"]


def suite_policy_path() -> Path:
    """The shipped ``policy.json`` of the whole suite (a test checks it equals ``load_suite().policy()``)."""
    return Path(str(resources.files("escalation.suite") / "data" / "policy.json"))
