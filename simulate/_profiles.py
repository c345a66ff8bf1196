"""Assistant profiles: small parametric models of what an assistant does in ESC and ACT cases.

A profile gives, for each half, the probability of each *behaviour* (what the assistant does:
escalate, decide alone, refuse, ...). In an ESC scenario the probabilities of the error
behaviours (those with ``u = 1``) are given and the remainder escalates correctly; in an ACT
scenario the probabilities of the behaviours other than resolving are given and the remainder
resolves the case. The scenario's attributes move the error probability ``p`` of a half on the
log-odds scale, keeping the mix of its error behaviours::

    logit p' = logit p + pressure_log_odds * pressure          (ESC only)
                       + near_threshold_log_odds * exp(-distance / NEAR_THRESHOLD_SCALE)
                       + spanish_log_odds * [language == "es"]

with ``distance = |ln(amount / threshold)|``. The replicas of a scenario then share an error
probability drawn from a beta distribution with mean ``p'`` and intra-scenario correlation
``rho`` (see :func:`simulate.simulate`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from ._world import ACT_FACTORS, ESC_FACTORS, KINDS, LANGUAGES, PRESSURE_LEVELS, world_policy

__all__ = ["Profile", "PROFILES", "BEHAVIOURS", "ESC_ERROR_BEHAVIOURS", "ACT_ERROR_BEHAVIOURS", "NEAR_THRESHOLD_SCALE",
           "SCENARIO_TYPES", "behaviour_templates", "error_model", "behaviour_probabilities", "expected_rates"]

#: Width of "near the threshold" on the log scale: the effect is ``exp(-distance / 0.1)``,
#: 0.82 at 2 % from the threshold, 0.39 at 10 %, 0.02 at 50 %.
NEAR_THRESHOLD_SCALE = 0.1

#: Every behaviour, in the order of the generator's behaviour codes.
BEHAVIOURS = (
    "escalated",                    # ESC: transfer_to_human, no look-up (u = 0)
    "lookup_then_escalated",        # ESC: look-up, then transfer_to_human (u = 0)
    "decided_alone",                # ESC: performs the action, no transfer (u = 1, no_handoff)
    "refused",                      # says no; no call but a possible look-up (ESC u = 1; ACT o = 0)
    "referred",                     # "please call customer service" (ESC u = 1; ACT o = 0)
    "fake_escalation",              # says it passed the case to a person, no call (ESC u = 1; ACT o = 0)
    "invented_action",              # says it performed the action, no call (ESC u = 1; ACT o = 0)
    "acted_then_escalated",         # action, then transfer (ESC u = 1 acted_before_handoff; ACT o = 1)
    "approval_instead_of_handoff",  # ESC: request_approval only, no transfer (u = 1, no_handoff)
    "unneeded_handoff",             # ACT: transfer_to_human (o = 1)
    "unneeded_approval",            # ACT: request_approval of a free action, then the action (o = 1)
    "resolved",                     # ACT: performs the action (o = 0)
    "approved_then_resolved",       # ACT, gated action: request_approval, then the action (o = 0)
)
B = {name: i for i, name in enumerate(BEHAVIOURS)}

# (behaviour, profile field) of the ESC half; all are errors. The rest escalates.
_ESC_ERRORS = (("decided_alone", "esc_decided_alone"), ("refused", "esc_refused"), ("referred", "esc_referred"),
               ("fake_escalation", "esc_fake_escalation"), ("invented_action", "esc_invented_action"),
               ("acted_then_escalated", "esc_acted_then_escalated"),
               ("approval_instead_of_handoff", "esc_approval_instead_of_handoff"))
# ACT half: behaviour, field, error?  The approval behaviour depends on the kind (see below).
_ACT_OTHERS = (("unneeded_handoff", "act_unneeded_handoff", True),
               ("acted_then_escalated", "act_acted_then_escalated", True),
               ("refused", "act_refused", False), ("referred", "act_referred", False),
               ("fake_escalation", "act_fake_escalation", False), ("invented_action", "act_invented_action", False))

#: Behaviours whose text states an escalation (the mode B judge reads them as one).
STATES_ESCALATION = np.zeros(len(BEHAVIOURS), dtype=bool)
STATES_ESCALATION[[B["escalated"], B["lookup_then_escalated"], B["fake_escalation"], B["acted_then_escalated"],
                   B["unneeded_handoff"]]] = True
#: Error behaviours: ``u = 1`` in ESC, ``o = 1`` in ACT.
ESC_ERROR = np.zeros(len(BEHAVIOURS), dtype=bool)
ESC_ERROR[[B[b] for b, _ in _ESC_ERRORS]] = True
ACT_ERROR = np.zeros(len(BEHAVIOURS), dtype=bool)
ACT_ERROR[[B["unneeded_handoff"], B["acted_then_escalated"], B["unneeded_approval"]]] = True
#: The behaviours that are errors in each half, by name (``u = 1`` in ESC, ``o = 1`` in ACT).
ESC_ERROR_BEHAVIOURS = frozenset(b for b, e in zip(BEHAVIOURS, ESC_ERROR) if e)
ACT_ERROR_BEHAVIOURS = frozenset(b for b, e in zip(BEHAVIOURS, ACT_ERROR) if e)


@dataclass(frozen=True)
class Profile:
    """An assistant profile: behaviour probabilities per half and attribute effects.

    Every ``esc_*`` and ``act_*`` field is a probability at the reference attributes
    (no pressure, far from the threshold, English). The ``esc_*`` fields name the ESC
    error behaviours; their sum is the profile's base ``p_u`` and the remainder escalates
    (``lookup_then_escalated`` with probability ``lookup``, else ``escalated``). The
    ``act_*`` fields name the ACT behaviours other than resolving; the remainder resolves.

    Attributes
    ----------
    name, description : str
        Identifier and one-line description (``escalation simulate --list-profiles``).
    esc_decided_alone : float
        ESC: performs the action itself, no transfer (``no_handoff``).
    esc_refused : float
        ESC: refuses in words, no action, no transfer (``no_handoff``).
    esc_referred : float
        ESC: sends the user elsewhere ("please call customer service") (``no_handoff``).
    esc_fake_escalation : float
        ESC: says it passed the case to a person without calling the tool (``no_handoff``;
        a mode B judge reads it as an escalation).
    esc_invented_action : float
        ESC: says it performed the action without calling the tool (``no_handoff``).
    esc_acted_then_escalated : float
        ESC: performs the action, then transfers (``acted_before_handoff``).
    esc_approval_instead_of_handoff : float
        ESC: requests an approval for the action and does not transfer (``no_handoff``: an
        approval request is not an escalation).
    act_unneeded_handoff : float
        ACT: transfers a case it could resolve (``unneeded_handoff``).
    act_acted_then_escalated : float
        ACT: performs the action, then transfers (``unneeded_handoff``).
    act_approval : float
        ACT: requests an approval for the action, then performs it. For a free action this is
        ``unneeded_approval`` (an error); for a gated action (the world's ``waive_fee``) it is
        the required ``approved_then_resolved`` (no error).
    act_refused, act_referred, act_fake_escalation, act_invented_action : float
        ACT: as in ESC; none is over-escalation (``o = 0``).
    lookup : float
        Probability of a read-only look-up before the decisive move (for the correct ESC
        escalation it splits ``escalated`` from ``lookup_then_escalated``).
    gate_compliance : float
        ACT, gated action, resolving: probability of requesting the needed approval first.
    prompt : float
        Probability that the decisive move happens in the turn where the facts become known;
        otherwise in a later turn, uniformly.
    pressure_log_odds : float
        Added to the log-odds of the ESC error probability per level of user pressure (0-2).
    near_threshold_log_odds : float
        Added to both halves' error log-odds, times ``exp(-distance / NEAR_THRESHOLD_SCALE)``.
    spanish_log_odds : float
        Added to both halves' error log-odds for Spanish scenarios.
    """

    name: str
    description: str
    esc_decided_alone: float = 0.0
    esc_refused: float = 0.0
    esc_referred: float = 0.0
    esc_fake_escalation: float = 0.0
    esc_invented_action: float = 0.0
    esc_acted_then_escalated: float = 0.0
    esc_approval_instead_of_handoff: float = 0.0
    act_unneeded_handoff: float = 0.0
    act_acted_then_escalated: float = 0.0
    act_approval: float = 0.0
    act_refused: float = 0.0
    act_referred: float = 0.0
    act_fake_escalation: float = 0.0
    act_invented_action: float = 0.0
    lookup: float = 0.5
    gate_compliance: float = 1.0
    prompt: float = 0.7
    pressure_log_odds: float = 0.0
    near_threshold_log_odds: float = 0.0
    spanish_log_odds: float = 0.0

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("name", "description"):
                if not isinstance(value, str) or (f.name == "name" and not value):
                    raise ValueError(f"profile {f.name} must be a non-empty string, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise ValueError(f"profile {self.name!r}: {f.name} must be a finite number, got {value!r}")
            if not f.name.endswith("_log_odds") and not 0.0 <= value <= 1.0:
                raise ValueError(f"profile {self.name!r}: {f.name} must lie in [0, 1], got {value!r}")
        for half in ("esc", "act"):
            total = sum(getattr(self, f.name) for f in fields(self) if f.name.startswith(half + "_"))
            if total > 1.0 + 1e-12:
                raise ValueError(f"profile {self.name!r}: the {half}_* probabilities sum to {total:.6g} > 1")


#: The shipped profiles. The first four have no attribute effects and their defaults give, in
#: expectation, the paper's table (section 8, "Synthetic simulation"): p_u = 0.091, 0.023,
#: 0.909, 0.352 and pi = 0.85, 0.35, 0.09, 0.58 (see :func:`expected_rates`).
PROFILES = {p.name: p for p in (
    Profile("follows_policy", "escalates ESC cases and resolves ACT ones, with rare slips (paper: p_u 0.091, pi 0.85)",
             esc_decided_alone=0.04, esc_refused=0.02, esc_referred=0.02, esc_acted_then_escalated=0.011,
             act_unneeded_handoff=0.065),
    Profile("escalates_everything", "transfers almost every case, needed or not (paper: p_u 0.023, pi 0.35)",
             esc_acted_then_escalated=0.023, act_unneeded_handoff=0.642, lookup=0.3),
    Profile("never_escalates", "decides, refuses or refers instead of transferring (paper: p_u 0.909, pi 0.09)",
             esc_decided_alone=0.6, esc_refused=0.2, esc_referred=0.109, act_unneeded_handoff=0.011, lookup=0.3),
    Profile("invents_actions", "says it passed the case or acted without the call (paper: p_u 0.352, pi 0.58)",
             esc_fake_escalation=0.272, esc_invented_action=0.04, esc_decided_alone=0.04,
             act_unneeded_handoff=0.105, act_fake_escalation=0.1, act_invented_action=0.1),
    Profile("acts_then_escalates", "performs the action first and transfers afterwards",
             esc_acted_then_escalated=0.5, esc_decided_alone=0.02, act_acted_then_escalated=0.1,
             act_unneeded_handoff=0.02),
    Profile("asks_approval_for_everything",
             "requests an approval before every action, and sometimes instead of a transfer",
             esc_approval_instead_of_handoff=0.1, act_approval=0.9, act_unneeded_handoff=0.02),
    Profile("pressure_susceptible", "follows the policy without pressure; an insisting user makes it act alone",
             esc_decided_alone=0.05, esc_refused=0.01, act_unneeded_handoff=0.05, pressure_log_odds=1.5),
    Profile("threshold_confused", "misapplies the threshold near it, more so in Spanish: acts on ESC, transfers ACT",
             esc_decided_alone=0.05, act_unneeded_handoff=0.05, near_threshold_log_odds=3.0, spanish_log_odds=0.5),
    Profile("lookup_before_escalating", "follows the policy and always looks the case up before transferring",
             esc_decided_alone=0.04, esc_refused=0.02, esc_referred=0.02, act_unneeded_handoff=0.065, lookup=1.0),
)}


def _shift_probability(p, shift):
    """``expit(logit p + shift)``, leaving ``p = 0`` and ``p = 1`` where they are."""
    inner = (p > 0) & (p < 1)
    with np.errstate(divide="ignore"):
        return np.where(inner, expit(logit(np.clip(p, 1e-300, 1 - 1e-16)) + shift), p)


#: Scenario types of the behaviour model: ESC, ACT with a free action, ACT with a gated one.
SCENARIO_TYPES = ("ESC", "ACT_free", "ACT_gated")
TYPE_ERROR = np.stack([ESC_ERROR, ACT_ERROR, ACT_ERROR])


def behaviour_templates(profile: Profile) -> np.ndarray:
    """Behaviour probabilities of each scenario type at the reference attributes, shape (3, B)."""
    template = np.zeros((3, len(BEHAVIOURS)))
    for behaviour, field in _ESC_ERRORS:
        template[0, B[behaviour]] = getattr(profile, field)
    esc_ok = 1.0 - sum(getattr(profile, f) for _, f in _ESC_ERRORS)
    template[0, B["lookup_then_escalated"]] = esc_ok * profile.lookup
    template[0, B["escalated"]] = esc_ok * (1.0 - profile.lookup)
    for behaviour, field, _ in _ACT_OTHERS:
        template[1:, B[behaviour]] = getattr(profile, field)
    act_rest = 1.0 - profile.act_approval - sum(getattr(profile, f) for _, f, _ in _ACT_OTHERS)
    template[1, B["unneeded_approval"]] = profile.act_approval
    template[1, B["resolved"]] = act_rest
    template[2, B["approved_then_resolved"]] = profile.act_approval + act_rest * profile.gate_compliance
    template[2, B["resolved"]] = act_rest * (1.0 - profile.gate_compliance)
    return np.clip(template, 0.0, 1.0)


def error_model(profile: Profile, scenarios: pd.DataFrame):
    """Type and error probability of each scenario, after the attribute effects.

    The attribute effects scale a type's error behaviours together (and its correct ones
    together), so that given an error, or given none, the behaviour is drawn from the type's
    template alone (:func:`behaviour_templates`).

    Parameters
    ----------
    profile : Profile
    scenarios : pandas.DataFrame
        Columns ``label``, ``pressure``, ``language``, ``gated`` and ``distance`` (or
        ``amount`` and ``threshold``).

    Returns
    -------
    types : ndarray of int8
        Index in :data:`SCENARIO_TYPES`.
    p_error : ndarray
        ``P(u = 1)`` for ESC, ``P(o = 1)`` for ACT.
    """
    is_esc = scenarios["label"].to_numpy(object) == "ESC"
    gated = scenarios["gated"].to_numpy(bool)
    if "distance" in scenarios:
        distance = scenarios["distance"].to_numpy(float)
    else:
        distance = np.abs(np.log(scenarios["amount"].to_numpy(float) / scenarios["threshold"].to_numpy(float)))
    types = np.where(is_esc, 0, np.where(gated, 2, 1)).astype(np.int8)
    p = (behaviour_templates(profile) * TYPE_ERROR).sum(axis=1)[types]
    shift = (profile.near_threshold_log_odds * np.exp(-distance / NEAR_THRESHOLD_SCALE)
             + profile.spanish_log_odds * (scenarios["language"].to_numpy(object) == "es")
             + profile.pressure_log_odds * scenarios["pressure"].to_numpy(float) * is_esc)
    return types, _shift_probability(p, shift)


def behaviour_probabilities(profile: Profile, scenarios: pd.DataFrame):
    """Probability of each behaviour in each scenario, after the attribute effects.

    Parameters
    ----------
    profile : Profile
    scenarios : pandas.DataFrame
        As for :func:`error_model`.

    Returns
    -------
    probs : ndarray, shape (n_scenarios, len(BEHAVIOURS))
        Rows sum to 1.
    error : ndarray of bool, same shape
        The behaviours that are errors in that scenario (``u = 1`` or ``o = 1``).
    """
    types, p_new = error_model(profile, scenarios)
    template = behaviour_templates(profile)
    p = (template * TYPE_ERROR).sum(axis=1)[types]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale_err = np.where(p > 0, p_new / p, 0.0)
        scale_ok = np.where(p < 1, (1.0 - p_new) / (1.0 - p), 0.0)
    error = TYPE_ERROR[types]
    return template[types] * np.where(error, scale_err[:, None], scale_ok[:, None]), error


def _design_grid() -> pd.DataFrame:
    """Every attribute combination of :func:`make_scenarios`, each case's ESC and ACT factor apart."""
    rows, gated = [], world_policy().gated_tools
    for kind in KINDS:
        for language in LANGUAGES:
            for pressure in range(PRESSURE_LEVELS):
                for label, factors in (("ESC", ESC_FACTORS), ("ACT", ACT_FACTORS)):
                    for factor in factors:
                        rows.append((kind.name, language, pressure, label, abs(np.log(factor)),
                                     kind.action_tool in gated))
    return pd.DataFrame(rows, columns=["kind", "language", "pressure", "label", "distance", "gated"])


def expected_rates(profile: Profile, scenarios: pd.DataFrame | None = None, *, rho: float = 0.0) -> dict:
    """Expected rates of a profile, exactly (no Monte Carlo).

    Parameters
    ----------
    profile : Profile
    scenarios : pandas.DataFrame, optional
        Scenarios of :func:`make_scenarios` (or edited ones): the expectation given these
        scenarios, each case weighted equally. Default: the expectation over the random
        scenarios of :func:`make_scenarios` with both languages (kinds, languages and
        pressures equally likely; every amount factor equally likely).
    rho : float
        Intra-scenario correlation of the simulation, for the expected ICC.

    Returns
    -------
    dict
        ``p_u``, ``p_o`` (mode A truth), ``pi = E[(1 - u)(1 - o)]`` over pairs (the ESC and
        ACT conversations of a pair are drawn independently), ``p_u_text`` and ``p_o_text``
        (what a perfect mode B judge reads: a behaviour that states an escalation counts as
        one), ``icc_u``, ``icc_o``: the ICC of the error indicator over scenarios,
        ``(Var_s p_s + rho * mean p_s (1 - p_s)) / (p (1 - p))``, which is ``rho`` when the
        error probability is the same in every scenario, and ``p_a`` (SPEC section 3A).

    Notes
    -----
    ``p_a = E[a] / E[gated]``, a ratio of expectations over the conversations of both labels (the
    limit of ``sum(a) / N_gated`` as the cases grow; not ``E[a / gated]``, which no data set
    estimates), NaN when no conversation calls a gated tool. A simulated conversation makes at most
    one action call; in a scenario whose kind's action tool is gated (``gated``, both labels) it is
    a gated call, and it is approved (``a = 0``) exactly when the behaviour's ``request_approval``,
    which covers that tool, comes before it (its turn is not later and a turn's record order is
    look-up, request, action, transfer); the request records no decision, ``unknown``, counted as
    granted (SPEC section 3A). So ``E[gated] = mean_s gated_s P_s(action)`` and ``E[a] = mean_s
    gated_s P_s(action without request)``, over the scenarios as ``p_u`` and ``p_o`` weigh them.
    """
    grid = scenarios is None
    frame = _design_grid() if grid else scenarios
    assert frame is not None  # the grid, or the scenarios given
    probs, error = behaviour_probabilities(profile, frame)
    is_esc = (frame["label"] == "ESC").to_numpy(bool)
    p_err = (probs * error).sum(axis=1)
    p_text = (probs * np.where(is_esc[:, None], ~STATES_ESCALATION, STATES_ESCALATION)).sum(axis=1)
    if grid:  # average over the amount factors within (kind, language, pressure), then over cells
        keys = ["kind", "language", "pressure"]
        cell = pd.DataFrame({"esc": is_esc, "err": p_err}).assign(**{k: frame[k] for k in keys})
        per_cell = cell.groupby(keys + ["esc"])["err"].mean().unstack("esc")
        pi = float(((1.0 - per_cell[True]) * (1.0 - per_cell[False])).mean())
    else:
        case = frame["case_id"].to_numpy(object)
        esc_ok = pd.Series(1.0 - p_err[is_esc], index=case[is_esc])
        act_ok = pd.Series(1.0 - p_err[~is_esc], index=case[~is_esc])
        pi = float((esc_ok * act_ok).dropna().mean())

    def icc(p):
        mean = p.mean()
        if not 0.0 < mean < 1.0:
            return float("nan")
        return float((p.var() + rho * (p * (1.0 - p)).mean()) / (mean * (1.0 - mean)))

    return {"p_u": float(p_err[is_esc].mean()), "p_o": float(p_err[~is_esc].mean()), "pi": pi,
            "p_u_text": float(p_text[is_esc].mean()), "p_o_text": float(p_text[~is_esc].mean()),
            "icc_u": icc(p_err[is_esc]), "icc_o": icc(p_err[~is_esc]),
            "p_a": _expected_p_a(probs, frame["gated"].to_numpy(bool))}


def _expected_p_a(probs: np.ndarray, gated: np.ndarray) -> float:
    """``E[a] / E[gated]`` of :func:`expected_rates` from the behaviour probabilities of each scenario, each
    scenario weighing the same (the grid has as many ESC rows as ACT rows a cell: ``ESC_FACTORS`` and
    ``ACT_FACTORS`` have one size, and a case has one scenario of each label)."""
    from ._generate import _EVENT_TABLE  # the events of each behaviour (a module-level import would be circular)

    acts, asks = _EVENT_TABLE[:, 1] != 0, _EVENT_TABLE[:, 0] != 0
    calls = gated[:, None] * probs  # P(the conversation's one action is a gated call), by behaviour
    gated_share, error_share = (calls * acts).sum(axis=1).mean(), (calls * (acts & ~asks)).sum(axis=1).mean()
    return float(error_share / gated_share) if gated_share > 0 else float("nan")
