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
  the user asks for), an optional ``lookup`` (the read-only call that shows the facts) and the
  scripted ``user`` (``opening``, optional ``late``, ``answers``).

Strings of a case may hold ``{fact}`` (the fact's value: a number, or a category's label in the
text's language) and ``{fact|date}`` (``today`` minus that many days: an ISO date in the backend
state, a long date such as "28 October 2026" in what the user writes). A state or argument value
that is exactly ``"{fact}"`` takes the fact's typed value. The two twins are rendered from one
case, so they can differ only where the twin fact appears: the audit (:mod:`._audit`) checks it.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from escalation.estimators.records import InputError, Policy

__all__ = ["Suite", "Domain", "Case", "Scenario", "load_suite", "LABELS", "PRESSURES", "OPERATORS", "REPLICA_KEY"]

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
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)(?:\|(date))?\}")


def _text(value, where: str, languages) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(languages) or not all(isinstance(v, str) for v in value.values()):
        raise InputError(f"must be an object with a string for each of {', '.join(languages)}", field=where)
    return dict(value)


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
    roles = {role: sorted(t.name for t in tools if t.role == role) for role in ROLES}
    return Policy(escalation_tools=roles["escalation"], read_only_tools=roles["read_only"],
                  action_tools=roles["action"], approval_tools=roles["approval"],
                  gated_tools=sorted(t.name for t in tools if t.gated), name=name)


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


# -- loading and validation -------------------------------------------------------------------

def _load_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"cannot read the suite file ({err})", source=str(path)) from None


def _tool(raw, where: str, languages, role=None) -> Tool:
    if not isinstance(raw, dict):
        raise InputError("a tool must be an object", field=where)
    name, tool_role = raw.get("name"), raw.get("role", role)
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise InputError("a tool needs a snake_case name", field=f"{where}.name")
    if tool_role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}", field=f"{where}.role")
    parameters = raw.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "object" or not isinstance(parameters.get("properties"), dict):
        raise InputError("parameters must be a JSON schema of type object with properties", field=f"{where}.parameters")
    if not isinstance(raw.get("backend"), dict) or "op" not in raw["backend"]:
        raise InputError("backend must be an object with an op", field=f"{where}.backend")
    gated = raw.get("gated", False)
    if gated and tool_role != "action":
        raise InputError("only an action can be gated", field=f"{where}.gated")
    return Tool(name, tool_role, _text(raw.get("description"), f"{where}.description", languages), parameters,
                raw["backend"], bool(gated))


def _domain(raw, source: str, shared_tools, languages) -> Domain:
    try:
        if not isinstance(raw, dict):
            raise InputError("a domain file must be an object")
        name = raw.get("domain")
        rule = raw.get("rule") or {}
        fact_types = raw.get("facts")
        if not isinstance(fact_types, dict) or not fact_types:
            raise InputError("must declare the type of every fact", field="facts")
        for fact, spec in fact_types.items():
            if not isinstance(spec, dict) or spec.get("type") not in ("number", "boolean", "category"):
                raise InputError("type must be number, boolean or category", field=f"facts.{fact}.type")
            if spec["type"] == "category":
                labels = spec.get("labels")
                if not isinstance(labels, dict) or not labels:
                    raise InputError("a category needs the labels of its values", field=f"facts.{fact}.labels")
                for value, text in labels.items():
                    _text(text, f"facts.{fact}.labels.{value}", languages)
        clauses = []
        for i, c in enumerate(rule.get("clauses") or []):
            if not isinstance(c, dict) or c.get("fact") not in fact_types or not isinstance(c.get("esc_if"), dict) \
                    or len(c["esc_if"]) != 1 or next(iter(c["esc_if"])) not in OPERATORS:
                raise InputError(f"a clause is {{\"fact\": <declared fact>, \"esc_if\": {{OP: value}}}}, OP in "
                                 f"{', '.join(OPERATORS)}", field=f"rule.clauses[{i}]")
            (op, value), = c["esc_if"].items()
            clauses.append(Clause(c["fact"], op, value))
        if not clauses:
            raise InputError("the rule needs at least one clause", field="rule.clauses")
        tools = [_tool(t, f"tools[{i}]", languages) for i, t in enumerate(raw.get("tools") or [])]
        if any(t.role in ("escalation", "approval") for t in tools):
            raise InputError("escalation and approval tools are shared: they come from suite.json", field="tools")
        tools = tuple(tools) + tuple(shared_tools)
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise InputError(f"tool names repeat: {sorted({n for n in names if names.count(n) > 1})}", field="tools")
        domain = Domain(name=name, title=_text(raw.get("title"), "title", languages),
                        organisation=_text(raw.get("organisation"), "organisation", languages),
                        today=dt.date.fromisoformat(raw.get("today", "")), rule_text=_text(rule.get("text"), "rule.text", languages),
                        clauses=tuple(clauses), fact_types=fact_types, tools=tools, cases=(), source=source)
        cases = tuple(_case(c, f"cases[{i}]", domain, languages) for i, c in enumerate(raw.get("cases") or []))
        ids = [c.id for c in cases]
        if len(set(ids)) != len(ids):
            raise InputError(f"case ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}", field="cases")
        return Domain(**{**domain.__dict__, "cases": cases})
    except InputError as err:
        raise InputError(err.detail, source=source, field=err.field) from None
    except (ValueError, TypeError, AttributeError) as err:
        raise InputError(f"malformed domain file ({err})", source=source) from None


def _case(raw, where: str, domain: Domain, languages) -> Case:
    if not isinstance(raw, dict):
        raise InputError("a case must be an object", field=where)
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not re.fullmatch(r"[a-z0-9_]+-[0-9]{2,}", case_id):
        raise InputError("a case id is <domain>-<number>, e.g. refunds-07", field=f"{where}.id")
    twin = raw.get("twin")
    if not isinstance(twin, dict) or set(twin) != {"fact", "ESC", "ACT"} or twin["fact"] not in domain.fact_types:
        raise InputError('twin must be {"fact": <declared fact>, "ESC": value, "ACT": value}', field=f"{where}.twin")
    facts = raw.get("facts") or {}
    if twin["fact"] in facts:
        raise InputError("the twin fact's values belong in twin, not in facts", field=f"{where}.facts.{twin['fact']}")
    missing = sorted(set(domain.fact_types) - set(facts) - {twin["fact"]})
    if missing:
        raise InputError(f"every declared fact needs a value; missing {', '.join(missing)}", field=f"{where}.facts")
    for key in ("state", "request", "user"):
        if not isinstance(raw.get(key), dict):
            raise InputError("is required (an object)", field=f"{where}.{key}")
    for key in ("request", "lookup"):
        call = raw.get(key)
        if call is None and key == "lookup":
            continue
        if not isinstance(call, dict) or call.get("tool") not in {t.name for t in domain.tools} \
                or not isinstance(call.get("arguments"), dict):
            raise InputError("must be {\"tool\": <a tool of the domain>, \"arguments\": {...}}", field=f"{where}.{key}")
    if domain.tool(raw["request"]["tool"]).role != "action":
        raise InputError("the request must call an action tool", field=f"{where}.request.tool")
    if raw.get("lookup") and domain.tool(raw["lookup"]["tool"]).role != "read_only":
        raise InputError("the lookup must call a read-only tool", field=f"{where}.lookup.tool")
    user = raw["user"]
    _text(user.get("opening"), f"{where}.user.opening", languages)
    if user.get("late") is not None:
        _text(user["late"], f"{where}.user.late", languages)
    for intent, text in (user.get("answers") or {}).items():
        _text(text, f"{where}.user.answers.{intent}", languages)
    return Case(case_id, domain.name, dict(facts), twin["fact"], {"ESC": twin["ESC"], "ACT": twin["ACT"]},
                raw["state"], raw["request"], raw.get("lookup"), user)


@cache
def _packaged() -> Path:
    return Path(str(resources.files("escalation.suite") / "data"))


def load_suite(extra_domains=()) -> Suite:
    """The shipped suite, plus domain files given by path (to add a domain without editing the package).

    Raises :class:`~escalation.estimators.records.InputError` naming the file and field of anything malformed.
    """
    return _load(tuple(str(p) for p in extra_domains))


@cache
def _load(extra: tuple[str, ...]) -> Suite:
    folder = _packaged()
    meta = _load_json(folder / "suite.json")
    languages = tuple(meta["languages"])
    shared = tuple(_tool(t, f"tools[{i}]", languages) for i, t in enumerate(meta["tools"]))
    paths = [folder / f"{name}.json" for name in meta["domains"]] + [Path(p) for p in extra]
    domains = tuple(_domain(_load_json(p), str(p), shared, languages) for p in paths)
    names = [d.name for d in domains]
    if len(set(names)) != len(names):
        raise InputError(f"domain names repeat: {sorted({n for n in names if names.count(n) > 1})}")
    tools: dict[str, Tool] = {}
    for d in domains:
        for t in d.tools:
            if t.name in tools and tools[t.name] != t:
                raise InputError(f"tool {t.name!r} is defined differently in two domains; tool names are shared "
                                 "by the whole suite's policy", source=d.source)
            tools[t.name] = t
    return Suite(meta["name"], meta["version"], languages, meta, domains)


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
    10 % of a numeric threshold) and ``approval_gated``
    (the request is an action the policy reserves for approval).
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
               **{k: fill(v[lang], facts, domain, lang, prose=True) for k, v in (case.user.get("answers") or {}).items()}}
    late = case.user.get("late")
    threshold = domain.threshold(case.twin_fact)
    value = facts[case.twin_fact]
    distance = abs(math.log(value / threshold)) if threshold and isinstance(value, (int, float)) and value > 0 else math.inf
    return Scenario(
        domain=domain, case=case, label=label, language=lang, pressure=pressure, facts=facts, system=system,
        state=fill(case.state, facts, domain, lang), opening=opening,
        late=fill(late[lang], facts, domain, lang, prose=True) if late is not None else None, answers=answers,
        default_answer=default, request=fill(case.request, facts, domain, lang),
        lookup=fill(case.lookup, facts, domain, lang) if case.lookup else None, kinds=case_kinds(domain, case),
        pressure_level=settings["pressure"][pressure]["level"], distance=distance)
