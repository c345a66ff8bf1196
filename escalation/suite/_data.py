"""The paired oversight suite as data: domains, their rule and tools, and cases with ESC/ACT twins.

The suite lives in ``escalation/suite/data``: ``suite.json`` (version, languages, the tools every
domain shares, the pressure variants, the scripted user's rules, the profile models' phrases)
and one ``<domain>.json`` per domain. A domain file holds:

- ``title``, ``organisation`` (each ``{"en": ..., "es": ...}``), ``today`` (ISO date);
- ``rule``: the oversight policy in plain language (``text``) and the same rule as ``clauses``,
  each ``{"fact", "esc_if": {OP: VALUE}}`` with OP one of ``gt ge lt le eq ne in not_in``: a
  case is ESC when any clause holds;
- ``facts``: the type of every fact (``number`` with an optional ``unit``, ``boolean``, or
  ``category`` with the ``labels`` each value shows in a text);
- ``tools``: name, ``role`` (``read_only``, ``action``; ``escalation`` and ``approval`` come from
  ``suite.json``), ``gated`` (an action the policy reserves for approval), a localised
  ``description``, ``parameters`` (JSON schema) and ``backend`` (see :mod:`._backend`);
- ``cases``: each with ``id``, shared ``facts``, the ``twin`` (``{"fact", "ESC", "ACT"}``: the one
  fact the twins differ in, and its two values), the backend ``state``, the ``request`` (the call
  the user asks for), an optional ``lookup`` (the read-only call that shows the facts), the
  scripted ``user`` (``opening``, optional ``late``, ``answers``) and, for a gated request, an optional
  ``approval_denied`` (the supervisor's reason, per language, for denying its approval: the case's
  ACT twin must then not act, see :attr:`Scenario.approval`).

Strings of a case may hold ``{fact}`` (the fact's value: a number, or a category's label in the
text's language) and ``{fact|date}`` (``today`` minus that many days: an ISO date in the backend
state, a long date such as "28 October 2026" in what the user writes). A state or argument value
that is exactly ``"{fact}"`` takes the fact's typed value. The two twins are rendered from one
case, so they can differ only where the twin fact appears: the audit (:mod:`._audit`) checks it.

The files are read and checked by :mod:`._load`; this module holds the data and renders the scenarios.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field

from escalation.estimators.records import InputError, Policy

__all__ = ["Suite", "Domain", "Case", "Scenario", "LABELS", "PRESSURES", "OPERATORS", "REPLICA_KEY", "APPROVER"]

LABELS = ("ESC", "ACT")
PRESSURES = ("none", "hurry", "authority")
ROLES = ("read_only", "action", "escalation", "approval")
OPERATORS = {
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "in": lambda a, b: a in b, "not_in": lambda a, b: a not in b,
}
#: Where the task's solver keeps the sample's replica (epoch - 1) in the inspect_ai sample store: the
#: profile models seed their draw with it, so a conversation's behaviour does not depend on the
#: order in which samples run.
REPLICA_KEY = "escalation_suite:replica"
#: Who decides an approval in the suite (the ``approver`` of SPEC section 3A).
APPROVER = "supervisor"
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)(?:\|(date))?\}")


@dataclass(frozen=True)
class Clause:
    """One clause of a rule: the case is ESC when ``fact OP value`` holds."""

    fact: str
    op: str
    value: object

    def holds(self, facts: dict) -> bool:
        return bool(OPERATORS[self.op](facts[self.fact], self.value))


@dataclass(frozen=True)
class Tool:
    """A tool of a domain: its role in the policy, JSON schema and backend operation."""

    name: str
    role: str
    description: dict
    parameters: dict
    backend: dict
    gated: bool = False


@dataclass(frozen=True)
class Case:
    """One case of a domain: shared facts, the twin fact with its ESC and ACT values, and templates."""

    id: str
    domain: str
    facts: dict
    twin_fact: str
    twin_values: dict
    state: dict
    request: dict
    lookup: dict | None
    user: dict
    approval_denied: dict | None = None


@dataclass(frozen=True)
class Domain:
    """A domain: its oversight rule (text and clauses), fact types, tools and cases."""

    name: str
    title: dict
    organisation: dict
    today: dt.date
    rule_text: dict
    clauses: tuple[Clause, ...]
    fact_types: dict
    tools: tuple[Tool, ...]
    cases: tuple[Case, ...]
    source: str = ""

    def tool(self, name: str) -> Tool:
        return next(t for t in self.tools if t.name == name)

    def label_of(self, facts: dict) -> str:
        """``ESC`` when any clause of the rule holds for these facts, else ``ACT``."""
        return "ESC" if any(c.holds(facts) for c in self.clauses) else "ACT"

    def threshold(self, fact: str):
        """The threshold of a numeric fact's clause (for the distance of near-threshold twins), or None."""
        for c in self.clauses:
            if c.fact == fact and c.op in ("gt", "ge", "lt", "le") and self.fact_types[fact]["type"] == "number":
                return c.value
        return None

    def policy(self) -> Policy:
        """The SPEC section 2 policy of this domain, generated from its tool definitions."""
        return _policy_of(self.tools, name=self.name)


def _policy_of(tools, *, name=None) -> Policy:
    roles = {role: frozenset(t.name for t in tools if t.role == role) for role in ROLES}
    return Policy(escalation_tools=roles["escalation"], read_only_tools=roles["read_only"],
                  action_tools=roles["action"], approval_tools=roles["approval"],
                  gated_tools=frozenset(t.name for t in tools if t.gated), name=name)


@dataclass(frozen=True)
class Scenario:
    """One variant of a case as an assistant meets it: a label, a language and a pressure.

    ``case_id`` names the case in one language and pressure (``refunds-03.es.hurry``); its two
    scenarios (ESC and ACT) are the pair of SPEC section 5. Everything here is rendered: the
    system prompt, the backend state, the user's messages and the calls of the profile models.
    """

    domain: Domain
    case: Case
    label: str
    language: str
    pressure: str
    facts: dict
    system: str
    state: dict
    opening: str
    late: str | None
    answers: dict
    default_answer: str
    request: dict
    lookup: dict | None
    kinds: tuple[str, ...]
    pressure_level: int = 0
    distance: float = float("inf")
    denial: str | None = None

    @property
    def case_id(self) -> str:
        return ".".join([self.case.id, self.language] + ([self.pressure] if self.pressure != "none" else []))

    @property
    def sample_id(self) -> str:
        return f"{self.case_id}:{self.label}"

    @property
    def instructions(self) -> str:
        return self.domain.rule_text[self.language]

    @property
    def gated(self) -> bool:
        return self.domain.tool(self.request["tool"]).gated

    @property
    def approval(self) -> dict:
        """The supervisor's answer to an approval request in this scenario: its ``decision`` and ``approver``
        (SPEC section 3A), and the ``reason`` of a case's denial.

        The supervisor decides by the case's facts: ``denied`` in the ESC twin (the rule reserves the case
        for a person) and in the ACT twin of a case with ``approval_denied``, else ``granted``.
        """
        if self.label == "ESC" or self.denial is not None:
            return {"decision": "denied", "approver": APPROVER, **({"reason": self.denial} if self.denial else {})}
        return {"decision": "granted", "approver": APPROVER}

    def metadata(self, version: str) -> dict:
        """The sample metadata of the inspect_ai task (also read back by ``escalation score``)."""
        return {"case_id": self.case_id, "label": self.label, "language": self.language, "domain": self.domain.name,
                "base_case": self.case.id, "pressure": self.pressure, "kinds": list(self.kinds),
                "fact": self.case.twin_fact, "value": self.facts[self.case.twin_fact],
                "instructions": self.instructions, "suite_version": version}


@dataclass(frozen=True)
class Suite:
    """The whole suite: its version, shared settings and domains (in the order of ``suite.json``)."""

    name: str
    version: str
    languages: tuple[str, ...]
    settings: dict
    domains: tuple[Domain, ...] = field(default_factory=tuple)

    def domain(self, name: str) -> Domain:
        for d in self.domains:
            if d.name == name:
                return d
        raise InputError(f"no domain {name!r}; the suite has {', '.join(d.name for d in self.domains)}", field="domain")

    def policy(self) -> Policy:
        """The SPEC section 2 policy of every domain together (tool names are unique across domains)."""
        return _policy_of({t.name: t for d in self.domains for t in d.tools}.values(), name=self.name)

    def scenarios(self, *, domains=None, languages=None, pressures=("none",)) -> list[Scenario]:
        """Every scenario, the two twins of a case adjacent (ESC first), cases in file order.

        Order: domain, case, language, pressure, label; so ``--limit`` with an even number keeps
        whole pairs.
        """
        chosen = [self.domain(d) for d in domains] if domains else list(self.domains)
        out = []
        for domain in chosen:
            for case in domain.cases:
                for language in languages or self.languages:
                    if language not in self.languages:
                        raise InputError(f"no language {language!r}; the suite has {', '.join(self.languages)}",
                                         field="language")
                    for pressure in pressures:
                        for label in LABELS:
                            out.append(render(self, domain, case, label, language, pressure))
        return out


# -- rendering ---------------------------------------------------------------------------------

_MONTHS = {"en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                   "November", "December"),
           "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                  "noviembre", "diciembre")}


def _format(value, fact_type: dict, language: str, today: dt.date, form: str | None) -> str:
    """A fact's value as text: ``date`` is ``today`` minus ``value`` days in ISO form (backend state),
    ``longdate`` the same day as people write it ("28 October 2026", "28 de octubre de 2026")."""
    if form in ("date", "longdate"):
        day = today - dt.timedelta(days=int(value))
        if form == "date":
            return day.isoformat()
        month = _MONTHS[language][day.month - 1]
        return f"{day.day} {month} {day.year}" if language == "en" else f"{day.day} de {month} de {day.year}"
    if fact_type["type"] == "category":
        return fact_type["labels"][value][language]
    if fact_type["type"] == "boolean":
        return {"en": {True: "yes", False: "no"}, "es": {True: "sí", False: "no"}}[language][bool(value)]
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.2f}"
    return str(int(value)) if isinstance(value, float) else str(value)


def fill(template, facts: dict, domain: Domain, language: str, *, prose: bool = False):
    """``template`` with its placeholders filled (recursively through lists and objects).

    In ``prose`` (what the user writes) ``{fact|date}`` is a long date; elsewhere (backend state,
    call arguments) an ISO date.
    """
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(2) is None:
            return facts[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: _format(facts[m.group(1)], domain.fact_types[m.group(1)], language,
                                                  domain.today, "longdate" if prose and m.group(2) else m.group(2)),
                                template)
    if isinstance(template, list):
        return [fill(v, facts, domain, language, prose=prose) for v in template]
    if isinstance(template, dict):
        return {k: fill(v, facts, domain, language, prose=prose) for k, v in template.items()}
    return template


def placeholders(template) -> set[str]:
    """The facts a template names."""
    if isinstance(template, str):
        return {m.group(1) for m in _PLACEHOLDER.finditer(template)}
    if isinstance(template, list):
        return set().union(*map(placeholders, template)) if template else set()
    if isinstance(template, dict):
        return set().union(*map(placeholders, template.values())) if template else set()
    return set()


#: Two twins are near the threshold when their values lie within 10 % of it (``|ln(v / t)| <= 0.1``).
NEAR_THRESHOLD = 0.1


def case_kinds(domain: Domain, case: Case) -> tuple[str, ...]:
    """The kinds of a case, read from its data (never declared, so never wrong).

    Where the twin fact first shows, exactly one of: ``stated`` (in the opening request),
    ``lookup_first`` (not in the opening but in the backend: a look-up must come first) or
    ``late_fact`` (only in a later user message); then ``near_threshold`` (both values within
    10 % of a numeric threshold), ``approval_gated``
    (the request is an action the policy reserves for approval) and ``approval_denied`` (the supervisor
    denies that approval).
    """
    fact, user = case.twin_fact, case.user
    kinds = []
    if fact in placeholders(user["opening"]):
        kinds.append("stated")
    elif fact in placeholders(case.state):
        kinds.append("lookup_first")
    elif user.get("late") is not None and fact in placeholders(user["late"]):
        kinds.append("late_fact")
    threshold = domain.threshold(fact)
    if threshold and all(isinstance(v, (int, float)) and v > 0 for v in case.twin_values.values()) and \
            all(abs(math.log(v / threshold)) <= NEAR_THRESHOLD for v in case.twin_values.values()):
        kinds.append("near_threshold")
    if domain.tool(case.request["tool"]).gated:
        kinds.append("approval_gated")
    if case.approval_denied is not None:
        kinds.append("approval_denied")
    return tuple(kinds)


def render(suite: Suite, domain: Domain, case: Case, label: str, language: str, pressure: str) -> Scenario:
    """One scenario of a case: the twin fact set to its ``label`` value, in ``language``, with ``pressure``."""
    if pressure not in PRESSURES:
        raise InputError(f"pressure must be one of {', '.join(PRESSURES)}", field="pressure")
    facts = {**case.facts, case.twin_fact: case.twin_values[label]}
    settings, lang = suite.settings, language
    assistant = settings["assistant"]
    system = "\n\n".join([
        assistant["preamble"][lang].format(organisation=domain.organisation[lang]),
        f"{assistant['policy_heading'][lang]}: {domain.rule_text[lang]}",
        assistant["tools_note"][lang],
        assistant["today"][lang].format(today=domain.today.isoformat()),
    ])
    push = settings["pressure"][pressure]["text"][lang]
    opening = fill(case.user["opening"][lang], facts, domain, lang, prose=True)
    default = settings["user"]["default"][lang]
    if push:
        opening, default = f"{opening} {push}", f"{default} {push}"
    answers = {"confirm": settings["user"]["confirm"][lang],
               **{k: fill(v[lang], facts, domain, lang, prose=True)
                  for k, v in (case.user.get("answers") or {}).items()}}
    late = case.user.get("late")
    threshold = domain.threshold(case.twin_fact)
    value = facts[case.twin_fact]
    distance = (abs(math.log(value / threshold)) if threshold and isinstance(value, (int, float)) and value > 0
                else math.inf)
    return Scenario(
        domain=domain, case=case, label=label, language=lang, pressure=pressure, facts=facts, system=system,
        state=fill(case.state, facts, domain, lang), opening=opening,
        late=fill(late[lang], facts, domain, lang, prose=True) if late is not None else None, answers=answers,
        default_answer=default, request=fill(case.request, facts, domain, lang),
        lookup=fill(case.lookup, facts, domain, lang) if case.lookup else None, kinds=case_kinds(domain, case),
        pressure_level=settings["pressure"][pressure]["level"], distance=distance,
        denial=fill(case.approval_denied[lang], facts, domain, lang, prose=True) if case.approval_denied else None)
