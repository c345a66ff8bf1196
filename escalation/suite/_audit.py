"""The twin audit: every pair differs only in its declared fact, and every label follows from the rule.

:func:`audit_suite` returns one line per problem (an empty list is a clean suite); the test suite
runs it on the shipped suite, ``escalation suite list --audit`` on any suite. Per case it checks:

- **labels**: the rule's clauses give ESC for the ESC twin and ACT for the ACT twin, and in the ESC
  twin a clause on the twin fact holds (the declared fact is what makes it ESC);
- **minimal pair**: in every language and pressure, the rendered twins (system prompt, backend
  state, user messages, calls) differ only where the twin fact's value is written: replacing the
  ESC value's text by the ACT value's text in the ESC twin gives the ACT twin;
- **clear ACT twin**: no other numeric fact lies within 10 % of its threshold, and no text of
  the ACT twin shows the ESC value (a value typed in by hand instead of a placeholder);
- **visible fact**: the fact is in the opening, the backend state or a later user message, and a
  look-up shows it when only the backend holds it;
- **written rule**: each numeric threshold of the rule appears in its text, as a number of its
  own, in every language;
- **working tools**: every required argument of the request and the look-up is given, and on one
  backend (the domain's rules of :mod:`._backend` and its ``today`` applied) the compliant path works:
  the look-up, then the request (after its approval, for a gated action) succeed, so the backend's
  rules never make a twin's compliant path impossible;
- **approval decisions**: the backend answers an approval request as the supervisor decides by the
  case (``denied`` in the ESC twin and, for a case with ``approval_denied``, in the ACT twin; else
  ``granted``, by :data:`~escalation.suite._data.APPROVER`), and ``approval_denied`` is given only for a
  gated request, in words that differ between languages;
- **translated**: the Spanish opening is not the English one.

Per domain: at least :data:`MIN_CASES` cases, :data:`MIN_OF_KIND` cases of each kind and
:data:`MIN_DENIED` of kind ``approval_denied``; and every ``within`` and ``dates`` rule of a tool's backend
(:mod:`._backend`) names the tool's own parameters.
"""
from __future__ import annotations

import json
import math
import re
from typing import cast

from ._backend import Backend, ToolFailure
from ._data import APPROVER, LABELS, NEAR_THRESHOLD, PRESSURES, Suite, _format, render

__all__ = ["audit_suite", "MIN_CASES", "MIN_OF_KIND", "MIN_DENIED", "KINDS"]

MIN_CASES = 20
MIN_OF_KIND = 3
#: Cases of kind ``approval_denied`` per domain (a few: each takes a gated case from the granted ones).
MIN_DENIED = 1
KINDS = ("stated", "lookup_first", "late_fact", "near_threshold", "approval_gated", "approval_denied")


def _leaves(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _view(s) -> dict:
    """Everything an assistant or a harness sees of a scenario, as one tree."""
    return {"system": s.system, "state": s.state, "opening": s.opening, "late": s.late, "answers": s.answers,
            "default": s.default_answer, "request": s.request, "lookup": s.lookup, "denial": s.denial}


def _written_forms(domain, fact, language, values):
    """``(ESC text, ACT text)`` of each way the twin fact is written: a date, its label, the raw value."""
    kind = domain.fact_types[fact]
    forms = (["date", "longdate"] if kind["type"] == "number" else []) + [None]
    pairs = [tuple(_format(v, kind, language, domain.today, f) for v in values) for f in forms]
    pairs.append(tuple(str(v) for v in values))
    return list(dict.fromkeys(p for p in pairs if p[0] != p[1]))


def _word(text: str) -> str:
    return rf"(?<![\w.-]){re.escape(text)}(?![\w-]|\.\d)"


def _shows(text: str, value: str) -> bool:
    """Whether ``value`` appears in ``text`` as a word of its own."""
    return re.search(_word(value), text) is not None


def _swap(text: str, pairs) -> str:
    """``text`` with each ESC form replaced by the ACT form, whole words only."""
    for old, new in pairs:
        text = re.sub(_word(old), new, text)
    return text


def _minimal_pair(domain, case, esc, act) -> list[str]:
    problems = []
    fact = case.twin_fact
    esc_leaves, act_leaves = dict(_leaves(_view(esc))), dict(_leaves(_view(act)))
    if set(esc_leaves) != set(act_leaves):
        return [f"the twins have different fields: {sorted(set(esc_leaves) ^ set(act_leaves))}"]
    pairs = _written_forms(domain, fact, esc.language, (case.twin_values["ESC"], case.twin_values["ACT"]))
    # The ESC value written by hand where a placeholder belongs (numbers of three digits or more:
    # smaller ones occur as ordinary words, and the rule in the system prompt states thresholds).
    distinctive = domain.fact_types[fact]["type"] == "number" and abs(case.twin_values["ESC"]) >= 100
    for path, b in act_leaves.items():
        if distinctive and path != ".system" and isinstance(b, str) and _shows(b, pairs[-1][0]):
            problems.append(f"{esc.language}/{esc.pressure}: the ACT twin shows the ESC value "
                            f"{pairs[-1][0]!r} at {path}")
    for path, a in esc_leaves.items():
        b = act_leaves[path]
        if a == b:
            continue
        if a == case.twin_values["ESC"] and b == case.twin_values["ACT"]:
            continue  # a typed value of the twin fact
        if isinstance(a, str) and isinstance(b, str) and _swap(a, pairs) == b:
            continue
        problems.append(f"{esc.language}/{esc.pressure}: the twins differ at {path} by more than the fact "
                        f"{fact!r}: {a!r} vs {b!r}")
    return problems


def _call_problems(domain, call, what) -> list[str]:
    tool = domain.tool(call["tool"])
    missing = [p for p in tool.parameters.get("required", []) if call["arguments"].get(p) in (None, "")]
    return [f"{what} {call['tool']} lacks the required argument {missing[0]!r}"] if missing else []


def _case_problems(suite: Suite, domain, case) -> list[str]:
    problems = []
    facts = {label: {**case.facts, case.twin_fact: case.twin_values[label]} for label in LABELS}
    for label in LABELS:
        if domain.label_of(facts[label]) != label:
            problems.append(f"the rule gives {domain.label_of(facts[label])} for the {label} twin "
                            f"({case.twin_fact} = {case.twin_values[label]!r})")
    if not any(c.fact == case.twin_fact and c.holds(facts["ESC"]) for c in domain.clauses):
        problems.append(f"no clause on {case.twin_fact!r} holds in the ESC twin: the declared fact does not make "
                        "it ESC")
    if case.twin_values["ESC"] == case.twin_values["ACT"]:
        problems.append("the twins have the same value")
    for other, value in case.facts.items():
        threshold = domain.threshold(other)
        if threshold and isinstance(value, (int, float)) and value > 0 and \
                abs(math.log(value / threshold)) <= NEAR_THRESHOLD:
            problems.append(f"{other} = {value} is within 10 % of its threshold {threshold}: the ACT twin is doubtful "
                            "for a reason other than the twin fact")
    for language in suite.languages:
        for pressure in PRESSURES:
            esc, act = (render(suite, domain, case, label, language, pressure) for label in LABELS)
            problems += _minimal_pair(domain, case, esc, act)
        esc, act = (render(suite, domain, case, label, language, "none") for label in LABELS)
        if not {"stated", "lookup_first", "late_fact"} & set(esc.kinds):
            problems.append(f"{language}: the fact {case.twin_fact!r} is nowhere the assistant can see it")
        for scenario in (esc, act):
            problems += _call_problems(domain, scenario.request, f"{language} {scenario.label}: the request")
            if scenario.lookup:
                problems += _call_problems(domain, scenario.lookup, f"{language} {scenario.label}: the look-up")
            backend = Backend(domain.tools, scenario.state, scenario.approval, today=domain.today)
            try:
                if scenario.lookup:
                    backend.call(scenario.lookup["tool"], scenario.lookup["arguments"])
            except ToolFailure as err:
                problems.append(f"{language} {scenario.label}: the look-up fails on the backend: {err}")
            try:
                answer = json.loads(backend.call("request_approval", {"covers": [scenario.request["tool"]],
                                                                      "reason": "audit"}))
                backend.call(scenario.request["tool"], scenario.request["arguments"])
            except ToolFailure as err:
                problems.append(f"{language} {scenario.label}: the request fails on the backend: {err}")
            else:
                expected = "denied" if scenario.label == "ESC" or case.approval_denied else "granted"
                if (answer.get("decision"), answer.get("approver")) != (expected, APPROVER):
                    problems.append(f"{language} {scenario.label}: the backend answers an approval with "
                                    f"{answer.get('decision')!r} by {answer.get('approver')!r}, not {expected!r} "
                                    f"by {APPROVER!r}")
        if "lookup_first" in esc.kinds:
            if not esc.lookup:
                problems.append(f"{language}: the fact is only in the backend but the case has no look-up")
            else:
                lookups = [(s, cast(dict, s.lookup)) for s in (esc, act)]  # twins of one case: both have its look-up
                seen = [Backend(domain.tools, s.state).call(lookup["tool"], lookup["arguments"])
                        for s, lookup in lookups]
                if seen[0] == seen[1]:
                    problems.append(f"{language}: the look-up reads the same in both twins, so it does not show the "
                                    "fact")
        if esc.opening == act.opening and esc.late == act.late and "lookup_first" not in esc.kinds:
            problems.append(f"{language}: nothing the assistant can see tells the twins apart")
    if case.user["opening"]["en"] == case.user["opening"]["es"]:
        problems.append("the Spanish opening is the English one")
    if case.approval_denied is not None:
        if not domain.tool(case.request["tool"]).gated:
            problems.append(f"approval_denied is given, but the request {case.request['tool']} needs no approval")
        if case.approval_denied["en"] == case.approval_denied["es"]:
            problems.append("the Spanish approval_denied is the English one")
    return problems


def _tool_problems(domain) -> list[str]:
    """The backend rules of each tool name its own parameters (a misspelt name would never apply)."""
    problems = []
    for tool in domain.tools:
        spec, parameters = tool.backend, set(tool.parameters["properties"])
        named = [(f"dates[{i}]", name) for i, name in enumerate(spec.get("dates", []))]
        for i, limit in enumerate(spec.get("within", [])):
            if "field" not in limit or "key" not in {**spec, **limit}:
                problems.append(f"tool {tool.name}: backend within[{i}] needs a field and a key")
            named.append((f"within[{i}].argument", limit.get("argument")))
            if "key" in limit:
                named.append((f"within[{i}].key", limit["key"]))
        for where, name in named:
            if name not in parameters:
                problems.append(f"tool {tool.name}: backend {where} names {name!r}, not a parameter of the tool")
    return problems


def _rule_problems(domain, languages) -> list[str]:
    problems = []
    for clause in domain.clauses:
        if domain.fact_types[clause.fact]["type"] == "number":
            number = _format(clause.value, domain.fact_types[clause.fact], "en", domain.today, None)
            for language in languages:
                if not _shows(domain.rule_text[language], number):
                    problems.append(f"the rule's {language} text does not state the threshold {number} of "
                                    f"{clause.fact!r}")
    return problems


def audit_suite(suite: Suite, *, domains=None, min_cases: int = MIN_CASES, min_of_kind: int = MIN_OF_KIND,
                min_denied: int = MIN_DENIED) -> list[str]:
    """Every problem of the suite (or of the named ``domains``), one line each: ``<domain>/<case>: <what>``."""
    problems = []
    for domain in [suite.domain(d) for d in domains] if domains else suite.domains:
        problems += [f"{domain.name}: {p}" for p in _rule_problems(domain, suite.languages) + _tool_problems(domain)]
        counts = dict.fromkeys(KINDS, 0)
        for case in domain.cases:
            problems += [f"{domain.name}/{case.id}: {p}" for p in _case_problems(suite, domain, case)]
            for kind in render(suite, domain, case, "ESC", suite.languages[0], "none").kinds:
                counts[kind] += 1
        if len(domain.cases) < min_cases:
            problems.append(f"{domain.name}: {len(domain.cases)} cases, fewer than {min_cases}")
        for kind, count in counts.items():
            least = min_denied if kind == "approval_denied" else min_of_kind
            if count < least:
                problems.append(f"{domain.name}: {count} cases of kind {kind}, fewer than {least}")
    return problems
