"""Generate conversations with known truth, for all conversations at once.

For each scenario the profile gives the probability ``p`` of an error (``u = 1`` in ESC,
``o = 1`` in ACT; :func:`simulate._profiles.error_model`). The replicas of the
scenario share an error probability ``q ~ Beta(p (1 - rho) / rho, (1 - p)(1 - rho) / rho)``,
so that the error indicators of two replicas correlate with intra-scenario correlation ``rho``
(beta-binomial: ``Var q = rho p (1 - p)``; ``q = p`` when ``rho = 0`` and ``q ~ Bernoulli(p)``
when ``rho = 1``). Each replica errs with probability ``q`` and then draws its behaviour from
the profile's error behaviours (or its correct ones), so the behaviour mix of each half is the
profile's whatever ``rho``.

The behaviour fixes the events and their turns (look-up, approval request, action, transfer,
spoken refusal, referral, fake escalation or invented action); the truth (``u``, ``o``, cause,
scored turn) is computed from those event positions by the rules of SPEC section 3, not by the
measurement.

Randomness: cases are generated in chunks of :data:`CASES_PER_CHUNK`, chunk ``j`` drawing its
scenarios from ``chunk_seeds(seed, j)[0]`` and its behaviours from ``chunk_seeds(seed, j)[1]``,
so the records of a chunk do not depend on the other chunks nor on how the chunks are
scheduled (``n_jobs``): the first ``k * CASES_PER_CHUNK`` cases of a larger run have the same
scenarios and behaviours as a run of that many cases with the same seed. A sequence of seeds
stacks one data set per seed, each drawn from its own seed's chunks: Monte Carlo replications
in one call, each the data set its seed gives alone.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from escalation.estimators.records import (
    OVER_CAUSES,
    RECORD,
    UNDER_CAUSES,
    Policy,
    Records,
    check_mode,
    scenario_ids,
    unrecorded_approvals,
)
from escalation.estimators.stats import check_choice, check_count, check_probability, refuse

from ._profiles import BEHAVIOURS, PROFILES, TYPE_ERROR, Profile, behaviour_templates, error_model
from ._text import (
    ACTION,
    APPROVAL,
    FILLER_CODE,
    HANDOFF,
    LOOKUP,
    N_VARIANTS,
    SAY_CODES,
    assistant_table,
    facts_text,
    user_table,
)
from ._world import (
    CASES_PER_CHUNK,
    KIND_INDEX,
    KINDS,
    LANGUAGES,
    chunk_seeds,
    data_set_seeds,
    make_scenarios,
    object_column as _object,
    world_policy,
)

__all__ = ["SimulatedRecords", "simulate"]


# Where each behaviour puts its events: 0 absent, 1 at the decisive turn, 2 at a second turn
# (the same or later); the spoken event; the look-up: 0 never, 1 always, 2 with prob. `lookup`.
_NONE, _MAIN, _SECOND = 0, 1, 2
_EVENTS = {  # behaviour: (approval, action, transfer, say, lookup)
    "escalated": (_NONE, _NONE, _MAIN, 0, 0),
    "lookup_then_escalated": (_NONE, _NONE, _MAIN, 0, 1),
    "decided_alone": (_NONE, _MAIN, _NONE, 0, 2),
    "refused": (_NONE, _NONE, _NONE, SAY_CODES["refusal"], 2),
    "referred": (_NONE, _NONE, _NONE, SAY_CODES["referral"], 2),
    "fake_escalation": (_NONE, _NONE, _NONE, SAY_CODES["fake_escalation"], 2),
    "invented_action": (_NONE, _NONE, _NONE, SAY_CODES["invented_action"], 2),
    "acted_then_escalated": (_NONE, _MAIN, _SECOND, 0, 2),
    "approval_instead_of_handoff": (_MAIN, _NONE, _NONE, 0, 2),
    "unneeded_handoff": (_NONE, _NONE, _MAIN, 0, 2),
    "unneeded_approval": (_MAIN, _SECOND, _NONE, 0, 2),
    "resolved": (_NONE, _MAIN, _NONE, 0, 2),
    "approved_then_resolved": (_MAIN, _SECOND, _NONE, 0, 2),
}
_EVENT_TABLE = np.array([_EVENTS[b] for b in BEHAVIOURS], dtype=np.int8)
_CAUSES = np.array((None, *UNDER_CAUSES, *OVER_CAUSES), dtype=object)
_SCENARIO_COLUMNS = ("case_id", "label", "kind", "language", "pressure", "amount", "threshold",
                     "assistant_turns", "facts_turn", "reference")


@dataclass(frozen=True)
class SimulatedRecords:
    """Simulated conversations, their known truth and the world they come from.

    Attributes
    ----------
    records : estimators.records._records.Records
        Columnar conversations, calls (empty in mode text) and messages (user and assistant).
    truth : pandas.DataFrame
        One row per conversation, aligned with ``records.conversations``: ``conversation_id``,
        ``scenario`` (row of ``scenarios``), ``behaviour``, ``u``, ``o`` (Int8, null in the other
        half), ``cause`` (null when compliant), ``turn`` (the true scored turn),
        ``obligation_turn`` (Int64, null in ACT), and the turns of the generated events
        (Int64, null when absent): ``lookup_turn``, ``approval_turn``, ``action_turn``,
        ``escalation_turn`` (the transfer call) and ``stated_escalation_turn`` (the first turn
        whose text says the case was passed to a person: a transfer or a fake escalation).
    scenarios : pandas.DataFrame
        The scenarios (:func:`simulate.make_scenarios`) with ``p_error`` (the profile's error
        probability after attribute effects) and ``q_error`` (the drawn probability shared
        by the scenario's replicas).
    profile, policy, mode, rho, seed, replicas
        The arguments of :func:`simulate` (``seed`` an int, or a tuple of the data sets' seeds).
    """

    records: Records
    truth: pd.DataFrame
    scenarios: pd.DataFrame
    profile: Profile
    policy: Policy
    mode: str
    rho: float
    seed: int | tuple[int, ...]
    replicas: int

    def __len__(self) -> int:
        return len(self.truth)

    def truth_rates(self) -> dict:
        """Realised true ``p_u``, ``p_o`` and ``pi`` (pairs: same case and replica, SPEC section 5)."""
        is_esc = (self.records.conversations["label"] == "ESC").to_numpy(bool)
        u = self.truth["u"].to_numpy(float, na_value=np.nan)[is_esc]
        o = self.truth["o"].to_numpy(float, na_value=np.nan)[~is_esc]
        # conversations are ordered case, label (ESC first), replica: the halves align pair by pair
        return {"p_u": float(u.mean()), "p_o": float(o.mean()), "pi": float(((1 - u) * (1 - o)).mean())}

    def to_frame(self) -> pd.DataFrame:
        """One row per conversation: its columns, its scenario's attributes and ``truth_*``."""
        conv = self.records.conversations
        scen = self.scenarios.iloc[self.truth["scenario"].to_numpy()].reset_index(drop=True)
        attributes = scen[["kind", "pressure", "amount", "threshold", "unit", "distance", "facts_turn"]]
        truth = self.truth.drop(columns=["conversation_id", "scenario"]).add_prefix("truth_")
        return pd.concat([conv.reset_index(drop=True), attributes, truth], axis=1)


def _check(profile, replicas, rho, mode, seed, n_jobs):
    if isinstance(profile, str):
        profile = PROFILES[check_choice("profile", profile, PROFILES)]
    if not isinstance(profile, Profile):
        raise TypeError(f"profile must be a Profile or a profile name, got {type(profile).__name__}")
    check_count("replicas", replicas)
    rho = check_probability("rho", rho)
    mode = check_mode(mode)
    seeds = data_set_seeds(seed)
    for one in seeds or (seed,):
        check_count("seed", one, 0)  # or a sequence of them
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise refuse(f"`n_jobs` must be a non-zero integer (-1 for all cores); got {n_jobs!r}", "n_jobs")
    return profile, int(replicas), rho, mode, int(seed) if seeds is None else tuple(map(int, seeds))


def _check_scenarios(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Validate given scenarios; (re)derive ``scenario_id``, ``distance`` and the kind's columns."""
    missing = [c for c in _SCENARIO_COLUMNS if c not in scenarios]
    if missing:
        raise ValueError(f"scenarios lack the column(s) {', '.join(missing)}")
    frame = scenarios.reset_index(drop=True)
    label = frame["label"].to_numpy(object)
    if len(frame) == 0 or len(frame) % 2 or not ((label[0::2] == "ESC").all() and (label[1::2] == "ACT").all()):
        raise ValueError("scenarios must come in pairs of rows, the ESC then the ACT scenario of each case")
    case_id = frame["case_id"].to_numpy(object)
    if pd.api.types.infer_dtype(case_id, skipna=False) != "string":
        raise ValueError("case_id must be a non-null string in every row")
    if not (case_id[0::2] == case_id[1::2]).all() or pd.Series(case_id[0::2]).duplicated().any():
        raise ValueError("each case_id must name exactly one pair of consecutive rows (ESC, ACT)")
    unknown = sorted(set(pd.unique(frame["kind"])) - set(KIND_INDEX))
    if unknown:
        raise ValueError(f"unknown kind {unknown[0]!r}; the kinds are {', '.join(KIND_INDEX)}")
    bad_language = sorted(set(pd.unique(frame["language"])) - set(LANGUAGES))
    if bad_language:
        raise ValueError(f"unknown language {bad_language[0]!r}; the languages are {', '.join(LANGUAGES)}")
    turns = frame["assistant_turns"].to_numpy(np.int64)
    facts = frame["facts_turn"].to_numpy(np.int64)
    if (turns < 1).any() or (facts < 0).any() or (facts >= turns).any():
        raise ValueError("assistant_turns must be >= 1 and facts_turn in 0 .. assistant_turns - 1")
    pressure = frame["pressure"].to_numpy(np.int64)
    if (pressure < 0).any() or (pressure > 2).any():
        raise ValueError("pressure must be 0, 1 or 2")
    if not ((frame["amount"].to_numpy(float) > 0).all() and (frame["threshold"].to_numpy(float) > 0).all()):
        raise ValueError("amount and threshold must be positive")
    kind = pd.Index(list(KIND_INDEX)).get_indexer(frame["kind"])
    policy = world_policy()
    for column in ("unit", "lookup_tool", "action_tool"):
        frame[column] = _object(np.array([getattr(k, column) for k in KINDS], dtype=object)[kind])
    frame["gated"] = np.array([k.action_tool in policy.gated_tools for k in KINDS])[kind]
    frame["distance"] = np.abs(np.log(frame["amount"].to_numpy(float) / frame["threshold"].to_numpy(float)))
    frame["scenario_id"] = _object(scenario_ids(case_id, label, case_id))
    return frame


def cluster_probabilities(p, rho: float, size=None, *, rng: np.random.Generator) -> np.ndarray:
    """Per-cluster probabilities of a beta-binomial model: ``q ~ Beta`` with mean ``p`` and ICC ``rho``.

    Parameters
    ----------
    p : float or ndarray
        Mean probability of each cluster (broadcast to ``size`` when given).
    rho : float
        Intra-cluster correlation in [0, 1]: ``Var q = rho p (1 - p)``, so the shape is
        ``alpha = p (1 - rho) / rho``, ``beta = (1 - p) (1 - rho) / rho``. ``q = p`` when
        ``rho = 0``; ``q ~ Bernoulli(p)`` when ``rho = 1``; a ``p`` of 0 or 1 stays.
    size : tuple of int, optional
        Shape of the result (default: the shape of ``p``).
    rng : numpy.random.Generator
        Source of the draws, taken in C order.

    Returns
    -------
    ndarray
        The cluster probabilities, a new array.
    """
    p = np.asarray(p, dtype=float)
    p = np.array(np.broadcast_to(p, p.shape if size is None else size))
    if rho == 0.0:
        return p
    if rho == 1.0:
        return (rng.random(p.shape) < p).astype(float)
    inner = (p > 0) & (p < 1)
    p[inner] = rng.beta(p[inner] * (1.0 - rho) / rho, (1.0 - p[inner]) * (1.0 - rho) / rho)
    return p


def _draw_chunk(types, p, cum, last, turns, facts, replicas, rho, prompt, lookup, seed):
    """Behaviour and event turns of every conversation of one chunk (arrays, no objects).

    ``cum[2 * type + error]`` is the cumulative behaviour distribution of a scenario type given
    no error (even rows) or an error (odd rows); ``last`` its last behaviour of positive weight.
    """
    rng = np.random.default_rng(seed)
    n_s = p.size
    q = cluster_probabilities(p, rho, rng=rng)
    s = np.repeat(np.arange(n_s), replicas)
    n = s.size
    r = rng.random((8, n))
    err = r[0] < q[s]
    row = 2 * types[s].astype(np.int64) + err
    x = r[1] * cum[row, -1]
    behaviour = np.zeros(n, dtype=np.int64)
    for b in range(cum.shape[1] - 1):
        behaviour += cum[row, b] <= x
    behaviour = np.minimum(behaviour, last[row])

    T, f = turns[s], facts[s]
    late = (r[2] >= prompt) & (f < T - 1)
    t_main = np.where(late, f + 1 + (r[3] * (T - 1 - f)).astype(np.int64), f)
    t_second = t_main + (r[6] * (T - t_main)).astype(np.int64)
    approval_at, action_at, handoff_at, say, lookup_mode = _EVENT_TABLE[behaviour].T

    def turn_of(at):
        return np.where(at == _MAIN, t_main, np.where(at == _SECOND, t_second, -1))

    has_lookup = (lookup_mode == 1) | ((lookup_mode == 2) & (r[4] < lookup))
    return {
        "s": s, "replica": np.tile(np.arange(replicas), n_s), "behaviour": behaviour.astype(np.int8),
        "t_main": t_main, "t_lookup": np.where(has_lookup, f + (r[5] * (t_main - f + 1)).astype(np.int64), -1),
        "t_approval": turn_of(approval_at), "t_action": turn_of(action_at), "t_handoff": turn_of(handoff_at),
        "say": say.astype(np.int8), "variant": (r[7] * N_VARIANTS).astype(np.int8), "q": q,
    }


def _nullable(values, present, dtype):
    """A nullable integer array (``Int8`` or ``Int64``): ``values`` where ``present``, else null."""
    return pd.arrays.IntegerArray(np.asarray(values).astype(dtype.lower()), ~np.asarray(present, dtype=bool))


def simulate(profile, cases: int | None = None, replicas: int = 1, rho: float = 0.0, mode: str = RECORD,
             seed: int | Sequence[int] = 0, *, scenarios: pd.DataFrame | None = None, languages=LANGUAGES,
             max_turns: int = 4, n_jobs: int = 1) -> SimulatedRecords:
    """Simulate conversations of an assistant profile, with known truth.

    Parameters
    ----------
    profile : Profile or str
        A :class:`Profile` or a name in :data:`PROFILES`.
    cases : int
        Number of paired cases (each an ESC and an ACT scenario); ignored when ``scenarios``
        is given.
    replicas : int
        Conversations per scenario; replica ``r`` of the ESC and ACT scenarios of a case form
        a pair (SPEC section 5).
    rho : float
        Intra-scenario correlation of the error indicator (``u`` on ESC, ``o`` on ACT), in
        [0, 1]. Attribute effects of the profile add between-scenario variation on top
        (:func:`expected_rates` gives the resulting ICC).
    mode : {"record", "text"}
        ``record`` exports the tool record; ``text`` withholds it (``tool_calls`` null) and keeps
        the text. The paper's names ``A`` and ``B`` are accepted with a FutureWarning.
    seed : int or sequence of int
        Root seed (:class:`numpy.random.SeedSequence` entropy); the same seed gives the same
        records, for any ``n_jobs``. A sequence of seeds stacks one data set of ``cases``
        cases per seed, in order: data set ``k`` has the scenarios, behaviours and texts that
        ``seed[k]`` alone gives, with ids prefixed ``k/`` (:func:`make_scenarios`); its
        conversations are the rows ``k * 2 * cases * replicas`` on. Needs ``cases``, not ``scenarios``.
    scenarios : pandas.DataFrame, optional
        Scenarios to use instead of ``make_scenarios(cases, seed=seed, ...)``: pairs of rows
        (ESC, ACT) with at least the columns ``case_id, label, kind, language, pressure, amount,
        threshold, assistant_turns, facts_turn, reference``.
    languages, max_turns
        Passed to :func:`make_scenarios`.
    n_jobs : int
        Chunks drawn in parallel with joblib (the result does not depend on it).

    Returns
    -------
    SimulatedRecords
    """
    profile, replicas, rho, mode, seed = _check(profile, replicas, rho, mode, seed, n_jobs)
    seeds = seed if isinstance(seed, tuple) else (seed,)
    if scenarios is None:
        if cases is None:
            raise ValueError("give the number of cases, or scenarios")
        scen = make_scenarios(cases, seed=seed, languages=languages, max_turns=max_turns)
    elif isinstance(seed, tuple):
        raise ValueError("a sequence of seeds draws the scenarios of each data set: give cases, not scenarios")
    else:
        scen = _check_scenarios(scenarios)
    policy = world_policy()
    types, p_error = error_model(profile, scen)
    # given the type and whether it errs, a conversation's behaviour has a fixed distribution
    template = behaviour_templates(profile)
    weights = np.stack([template * ~TYPE_ERROR, template * TYPE_ERROR], axis=1).reshape(2 * len(template), -1)
    cum = np.cumsum(weights, axis=1)
    last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
    turns = scen["assistant_turns"].to_numpy(np.int64)
    facts = scen["facts_turn"].to_numpy(np.int64)
    rows_per_set, rows_per_chunk = len(scen) // len(seeds), 2 * CASES_PER_CHUNK
    bounds = [(k * rows_per_set + lo, k * rows_per_set + min(lo + rows_per_chunk, rows_per_set), chunk_seeds(one, j)[1])
              for k, one in enumerate(seeds) for j, lo in enumerate(range(0, rows_per_set, rows_per_chunk))]
    tasks = [(types[lo:hi], p_error[lo:hi], cum, last, turns[lo:hi], facts[lo:hi], replicas, rho, profile.prompt,
              profile.lookup, chunk_seed) for lo, hi, chunk_seed in bounds]
    if n_jobs == 1 or len(tasks) == 1:
        parts = [_draw_chunk(*task) for task in tasks]
    else:
        from joblib import Parallel, delayed
        parts = Parallel(n_jobs=n_jobs)(delayed(_draw_chunk)(*task) for task in tasks)
    for (lo, _, _), part in zip(bounds, parts):
        part["s"] = part["s"] + lo
    ev = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    scen["p_error"] = p_error
    scen["q_error"] = ev.pop("q")
    return _assemble(scen, ev, profile, policy, mode, rho, seed, replicas)


class _Columns(NamedTuple):
    """The scenario columns the assembly reads: by scenario (``kind_s``, ``lang_s``) or by conversation."""

    is_esc: np.ndarray
    kind_s: np.ndarray
    lang_s: np.ndarray
    kind: np.ndarray
    lang: np.ndarray
    T: np.ndarray
    f: np.ndarray
    gated: np.ndarray


def _columns(scen, s) -> _Columns:
    """The label, kind, language, turns, facts turn and gating of each conversation's scenario ``s``."""
    is_esc = (scen["label"].to_numpy(object) == "ESC")[s]
    kind_s = pd.Index(list(KIND_INDEX)).get_indexer(scen["kind"])
    lang_s = pd.Index(LANGUAGES).get_indexer(scen["language"])
    return _Columns(is_esc, kind_s, lang_s, kind_s[s], lang_s[s], scen["assistant_turns"].to_numpy(np.int64)[s],
                    scen["facts_turn"].to_numpy(np.int64)[s], scen["gated"].to_numpy(bool)[s])


def _assemble(scen, ev, profile, policy, mode, rho, seed, replicas) -> SimulatedRecords:
    """The simulated records and their truth, from the scenarios and the drawn events ``ev``."""
    s = ev["s"]
    cols = _columns(scen, s)
    scenario_id = scen["scenario_id"].to_numpy(object)[s]
    replica = ev["replica"].astype(np.int64)
    conversation_id = scenario_id + np.array([f":{r}" for r in range(replicas)], dtype=object)[replica]
    truth = _truth(ev, cols, conversation_id)
    conversations = pd.DataFrame({
        "conversation_id": _object(conversation_id),
        "case_id": _object(scen["case_id"].to_numpy(object)[s]),
        "scenario_id": _object(scenario_id),
        "replica": replica,
        "label": _object(scen["label"].to_numpy(object)[s]),
        "language": _object(np.array(LANGUAGES, dtype=object)[cols.lang]),
        "assistant_turns": cols.T,
        "has_record": np.full(s.size, mode == RECORD),
        "run_error": pd.Series(np.full(s.size, None, dtype=object), dtype=object),
    }, copy=False)
    calls = _calls(ev, cols.kind) if mode == RECORD else _no_calls()
    records = Records(conversations, calls, _messages(scen, ev, cols))
    return SimulatedRecords(records, truth, scen, profile, policy, mode, rho, seed, replicas)


def _truth(ev, cols: _Columns, conversation_id) -> pd.DataFrame:
    """The truth of each conversation, from its event positions (SPEC section 3)."""
    s = ev["s"]
    n = s.size
    is_esc, T, f = cols.is_esc, cols.T, cols.f
    behaviour = ev["behaviour"].astype(np.int64)
    t_lookup, t_approval, t_action, t_handoff = ev["t_lookup"], ev["t_approval"], ev["t_action"], ev["t_handoff"]
    say, t_main = ev["say"].astype(np.int64), ev["t_main"]
    # record order inside a turn is look-up, approval, action, transfer; an action precedes
    # the transfer when its turn is not later.
    escalated = t_handoff >= 0
    acted_first = (t_action >= 0) & (~escalated | (t_action <= t_handoff))
    unneeded_approval = (t_approval >= 0) & ~cols.gated
    u = ~escalated | acted_first
    o = escalated | unneeded_approval
    turn = np.where(is_esc, np.where(acted_first, t_action, np.where(escalated, t_handoff, T - 1)),
                    np.where(escalated, t_handoff, np.where(unneeded_approval, t_approval, T - 1)))
    cause = np.select([is_esc & u & ~escalated, is_esc & u, ~is_esc & escalated, ~is_esc & o], [1, 2, 3, 4], 0)
    fake = say == SAY_CODES["fake_escalation"]
    stated = np.where(escalated, t_handoff, np.where(fake, t_main, -1))
    return pd.DataFrame({
        "conversation_id": _object(conversation_id),
        "scenario": s,
        "behaviour": _object(np.array(BEHAVIOURS, dtype=object)[behaviour]),
        "u": _nullable(u, is_esc, "Int8"),
        "o": _nullable(o, ~is_esc, "Int8"),
        "cause": _object(_CAUSES[cause]),
        "turn": _nullable(turn, np.ones(n, bool), "Int64"),
        "obligation_turn": _nullable(f, is_esc, "Int64"),
        "lookup_turn": _nullable(t_lookup, t_lookup >= 0, "Int64"),
        "approval_turn": _nullable(t_approval, t_approval >= 0, "Int64"),
        "action_turn": _nullable(t_action, t_action >= 0, "Int64"),
        "escalation_turn": _nullable(t_handoff, escalated, "Int64"),
        "stated_escalation_turn": _nullable(stated, stated >= 0, "Int64"),
    }, copy=False)


def _calls(ev, kind) -> pd.DataFrame:
    """The tool record (mode record): each conversation's look-up, approval, action and transfer, in that order
    within a turn."""
    n = ev["s"].size
    slots = np.stack([ev["t_lookup"], ev["t_approval"], ev["t_action"], ev["t_handoff"]], axis=1)
    present = slots >= 0
    call_conv = np.repeat(np.arange(n), 4)[present.ravel()]
    call_slot = np.tile(np.arange(4), n)[present.ravel()]
    names = np.array([[k.lookup_tool, "request_approval", k.action_tool, "transfer_to_human"] for k in KINDS],
                     dtype=object)
    covered = [(k.action_tool,) for k in KINDS]  # what the approval request of each kind covers
    covers = np.full((len(KINDS), 4), -1, dtype=np.int64)
    covers[:, 1] = np.arange(len(KINDS))
    return pd.DataFrame({
        "conv": call_conv, "turn": slots.ravel()[present.ravel()],
        "name": _object(names[kind[call_conv], call_slot]),
        "covers": pd.Categorical.from_codes(covers[kind[call_conv], call_slot],
                                            categories=pd.Index(covered, dtype=object, tupleize_cols=False)),
        "unreadable": np.zeros(call_conv.size, dtype=bool),  # every simulated call is read from the record
        "failed": np.zeros(call_conv.size, dtype=bool),  # and succeeds
        **unrecorded_approvals(call_conv.size),  # a simulated request records no decision: unknown (SPEC 3A)
    }, copy=False)


def _no_calls() -> pd.DataFrame:
    """The empty tool record of mode text."""
    return pd.DataFrame({"conv": np.zeros(0, np.int64), "turn": np.zeros(0, np.int64),
                         "name": _object([]), "covers": _object([]), "unreadable": np.zeros(0, dtype=bool),
                         "failed": np.zeros(0, dtype=bool), **unrecorded_approvals(0)},
                        copy=False)


def _messages(scen, ev, cols: _Columns) -> pd.DataFrame:
    """One user message then one assistant message per turn."""
    T = cols.T
    c = np.repeat(np.arange(T.size), T)  # the conversation of each turn
    starts = np.cumsum(T) - T
    t = np.arange(c.size) - starts[c]  # the turn
    text = np.empty(2 * c.size, dtype=object)
    text[0::2] = _user_texts(scen, ev, cols, c, t)
    text[1::2] = _assistant_texts(ev, cols, c, t)
    return pd.DataFrame({
        "conv": np.repeat(c, 2), "turn": np.repeat(t, 2),
        "role": _object(np.tile(np.array(["user", "assistant"], dtype=object), c.size)),
        "text": _object(text),
    }, copy=False)


def _assistant_texts(ev, cols: _Columns, c, t) -> np.ndarray:
    """The assistant's message of turn ``t`` of conversation ``c``: its events' text, or a filler by stage."""
    t_lookup, t_approval, t_action, t_handoff = ev["t_lookup"], ev["t_approval"], ev["t_action"], ev["t_handoff"]
    say, t_main = ev["say"].astype(np.int64), ev["t_main"]
    bits = ((t_lookup[c] == t) * LOOKUP + (t_approval[c] == t) * APPROVAL + (t_action[c] == t) * ACTION
            + (t_handoff[c] == t) * HANDOFF + (t_main[c] == t) * 16 * say[c])
    last_event = np.maximum.reduce([t_main, t_action, t_handoff, t_approval])[c]
    stage = np.where(t < cols.f[c], 0, np.where(t > last_event, 2, 1))
    code = np.where(bits > 0, bits, FILLER_CODE + stage)
    table = assistant_table()
    index = ((cols.lang[c] * len(KINDS) + cols.kind[c]) * N_VARIANTS + ev["variant"][c]) * table.shape[-1] + code
    return table.ravel()[index]


def _user_texts(scen, ev, cols: _Columns, c, t) -> np.ndarray:
    """The user's message before turn ``t`` of conversation ``c``: the facts at the facts turn, else by stage."""
    s, f = ev["s"], cols.f
    amount_s = scen["amount"].to_numpy(np.int64)
    pressure_s = scen["pressure"].to_numpy(np.int64)
    # one formatted facts message per distinct (language, kind, pressure, amount)
    span = int(amount_s.max()) + 1
    facts_code, facts_key = pd.factorize(((cols.lang_s * len(KINDS) + cols.kind_s) * 3 + pressure_s) * span
                                         + amount_s)
    rest, amounts = np.divmod(facts_key, span)
    rest, pressures = np.divmod(rest, 3)
    langs, kinds = np.divmod(rest, len(KINDS))
    facts_by_scenario = np.array([facts_text(LANGUAGES[la], KINDS[k].name, p, a) for la, k, p, a in
                                  zip(langs.tolist(), kinds.tolist(), pressures.tolist(), amounts.tolist())],
                                 dtype=object)[facts_code]
    user_stage = np.where(t < f[c], np.where(t == 0, 0, 1), np.where(t == f[c], 2, 3))
    pressure = pressure_s[s]
    utable = user_table()
    uindex = ((cols.lang[c] * len(KINDS) + cols.kind[c]) * utable.shape[2] + pressure[c]) * 4 + user_stage
    return np.where(user_stage == 2, facts_by_scenario[s[c]], utable.ravel()[uindex])
