"""Loading the suite: ``suite.json`` and the domain files of ``escalation/suite/data`` (and any given by path),
checked field by field into the data of :mod:`._data` (:func:`load_suite`).
"""
from __future__ import annotations

import datetime as dt
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import cast

from escalation.estimators.records import InputError

from ._data import OPERATORS, ROLES, Case, Clause, Domain, Suite, Tool

__all__ = ["load_suite"]


def _text(value, where: str, languages) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(languages) \
            or not all(isinstance(v, str) for v in value.values()):
        raise InputError(f"must be an object with a string for each of {', '.join(languages)}", field=where)
    return dict(value)


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
    if not isinstance(parameters, dict) or parameters.get("type") != "object" \
            or not isinstance(parameters.get("properties"), dict):
        raise InputError("parameters must be a JSON schema of type object with properties",
                         field=f"{where}.parameters")
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
        own = [_tool(t, f"tools[{i}]", languages) for i, t in enumerate(raw.get("tools") or [])]
        if any(t.role in ("escalation", "approval") for t in own):
            raise InputError("escalation and approval tools are shared: they come from suite.json", field="tools")
        tools = tuple(own) + tuple(shared_tools)
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise InputError(f"tool names repeat: {sorted({n for n in names if names.count(n) > 1})}", field="tools")
        # the file's "domain", taken as it is (nothing checks it is a string)
        domain = Domain(name=cast(str, name), title=_text(raw.get("title"), "title", languages),
                        organisation=_text(raw.get("organisation"), "organisation", languages),
                        today=dt.date.fromisoformat(raw.get("today", "")),
                        rule_text=_text(rule.get("text"), "rule.text", languages),
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
    denied = raw.get("approval_denied")
    if denied is not None:
        _text(denied, f"{where}.approval_denied", languages)
    return Case(case_id, domain.name, dict(facts), twin["fact"], {"ESC": twin["ESC"], "ACT": twin["ACT"]},
                raw["state"], raw["request"], raw.get("lookup"), user, denied)


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
