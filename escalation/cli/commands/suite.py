"""``escalation suite list`` and ``escalation suite export``: the paired oversight suite shipped in the package."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List, Optional

import typer

from escalation.cli.commands._console import SENTENCE_LIMIT, console, plain

CONTEXT = {"help_option_names": ["-h", "--help"]}
KIND_HELP = ("Kinds: stated (the fact is in the opening request), lookup_first (only in the backend: a look-up "
             "must come first), late_fact (only in the user's second message), near_threshold (both values within "
             "10% of a numeric threshold), approval_gated (the request is an action the policy reserves for "
             "approval: request_approval must cover it), approval_denied (the supervisor denies that approval: the "
             "right answer is not to act and to tell the user).")
EXTRA_HELP = "A domain file to add to the shipped domains (repeat for several); `-T extra_domains=` in inspect eval."


def _suite(extra):
    from escalation.suite import load_suite

    return load_suite(extra or ())


def _counts(suite, domains=None, languages=None, pressures=("none",)):
    """One row per domain and language: cases, ESC and ACT scenarios, and the cases of each kind."""
    from escalation.suite import KINDS

    rows = []
    for domain in [suite.domain(d) for d in domains] if domains else suite.domains:
        for language in languages or suite.languages:
            scenarios = suite.scenarios(domains=[domain.name], languages=[language], pressures=pressures)
            labels = Counter(s.label for s in scenarios)
            kinds = Counter(k for s in scenarios if s.label == "ESC" and s.pressure == pressures[0] for k in s.kinds)
            rows.append({"domain": domain.name, "language": language, "cases": len(domain.cases),
                         "ESC": labels["ESC"], "ACT": labels["ACT"], **{k: kinds[k] for k in KINDS},
                         "twin_facts": ", ".join(sorted({c.twin_fact for c in domain.cases}))})
    return rows


def _print_counts(suite, rows) -> None:
    """The table of the suite's domains (cases, ESC and ACT scenarios, kinds) and its count of scenarios in all."""
    from rich.table import Table

    cases = sum(len(d.cases) for d in suite.domains)
    table = Table(title=f"{plain(suite.name)} {plain(suite.version)}: {cases} cases, each an ESC and an ACT "
                        f"twin, in {' and '.join(map(plain, suite.languages))}",
                  caption="ESC, ACT: scenarios per language. Kinds (cases): the fact stated in the request, "
                          "found by a look-up, said late; near the threshold; an approval-gated action; its "
                          "approval denied.")
    short = {"stated": "stated", "lookup_first": "lookup", "late_fact": "late", "near_threshold": "near",
             "approval_gated": "gated", "approval_denied": "denied"}
    for column in ("domain", "cases", "ESC", "ACT", *short.values()):
        table.add_column(column, justify="left" if column == "domain" else "right", no_wrap=True)
    for domain in suite.domains:  # every language holds the same cases
        mine = [r for r in rows if r["domain"] == domain.name]
        table.add_row(plain(domain.name), *(str(mine[0][k]) for k in ("cases", "ESC", "ACT", *short)))
    console().print(table)
    typer.echo("Each case also runs under pressure (-T pressure=hurry,authority or all): "
               f"{len(suite.scenarios(pressures=('none', 'hurry', 'authority')))} scenarios in all.")


def _audit(suite) -> None:
    """The twin audit: each problem on standard error, and exit 1 if there is one."""
    from escalation.suite import audit_suite

    problems = audit_suite(suite)
    for problem in problems:
        typer.echo(f"audit: {plain(problem, SENTENCE_LIMIT)}", err=True)
    typer.echo(f"twin audit: {len(problems)} problems", err=True)
    if problems:
        raise typer.Exit(1)


def list_suite(
    audit: bool = typer.Option(False, "--audit", help="Also run the twin audit (each pair differs only in its "
                                                      "fact; each label follows from the rule) and exit 1 on a "
                                                      "problem."),
    extra: Optional[List[Path]] = typer.Option(None, "--extra-domain", metavar="FILE", help=EXTRA_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
) -> None:
    """The suite's domains: per language, the cases, the ESC and ACT scenarios (pressure variants apart)
    and how many cases are of each kind.

    Example: escalation suite list --audit
    """
    suite = _suite(extra)
    rows = _counts(suite)
    if as_json:
        import json

        typer.echo(json.dumps({"suite": suite.name, "version": suite.version, "domains": rows}, indent=2))
    else:
        _print_counts(suite, rows)
    if audit:
        _audit(suite)


def _pressures(pressure: str) -> list[str]:
    """The pressure variants that --pressure names: all, or a comma-separated list of them."""
    from escalation.estimators.stats import refuse
    from escalation.suite import PRESSURES

    chosen = list(PRESSURES) if pressure == "all" else [p.strip() for p in pressure.split(",") if p.strip()]
    for one in chosen:
        if one not in PRESSURES:
            raise refuse(f"`pressure` must be all, or some of {', '.join(PRESSURES)}; got {one!r}", "pressure")
    return chosen


def _write_export(suite, out: Path, scenarios) -> None:
    """Write scenarios.jsonl, tools.json, policy.json and DATASHEET.md into ``out``."""
    import orjson

    from escalation.estimators.records import output_folder, write_atomic
    from escalation.suite import suite_policy_path

    lines = (orjson.dumps({
        **s.metadata(suite.version), "scenario_id": s.sample_id, "system": s.system, "opening": s.opening,
        "late": s.late, "answers": s.answers, "default_answer": s.default_answer, "state": s.state,
        "request": s.request, "lookup": s.lookup, "approval": s.approval}) + b"\n" for s in scenarios)
    tools = {d.name: [{"name": t.name, "role": t.role, "gated": t.gated, "description": t.description,
                       "parameters": t.parameters} for t in d.tools] for d in suite.domains}
    policy = suite.policy().to_dict()
    with output_folder(out):
        write_atomic(out / "scenarios.jsonl", chunks=lines)
        write_atomic(out / "tools.json", orjson.dumps(tools, option=orjson.OPT_INDENT_2))
        write_atomic(out / "policy.json", orjson.dumps(policy, option=orjson.OPT_INDENT_2))
        write_atomic(out / "DATASHEET.md", (suite_policy_path().parent / "DATASHEET.md").read_bytes())


def export_suite(
    out: Path = typer.Option(Path("suite-export"), "--out", metavar="DIR", help="Folder for scenarios.jsonl, "
                             "tools.json, policy.json and DATASHEET.md (created if missing)."),
    pressure: str = typer.Option("all", "--pressure", metavar="PRESSURE,...", help="Pressure variants to "
                                 "export: all, or some of none, hurry, authority (comma-separated)."),
    extra: Optional[List[Path]] = typer.Option(None, "--extra-domain", metavar="FILE", help=EXTRA_HELP),
) -> None:
    """Write the suite for other harnesses: policy.json (SPEC section 2, generated from the tools),
    scenarios.jsonl (one line per scenario: case_id, label, domain, language, pressure, the rule, the
    system prompt, the user's script, the backend state, the requested call), tools.json (each domain's
    tools as JSON schemas with their role) and DATASHEET.md.

    Example: escalation suite export --out suite --pressure none
    """
    from escalation.estimators.records import check_out_dir

    suite = _suite(extra)
    chosen = _pressures(pressure)
    check_out_dir(out)
    scenarios = suite.scenarios(pressures=chosen)
    _write_export(suite, out, scenarios)
    folder = plain(out, None)
    typer.echo(f"wrote {len(scenarios)} scenarios of {plain(suite.name)} {plain(suite.version)} to "
               f"{folder}/scenarios.jsonl, and {folder}/policy.json, {folder}/tools.json, {folder}/DATASHEET.md")


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``suite list`` and ``suite export`` to the command line."""
    suite_app = typer.Typer(help="The paired ESC/ACT scenario suite shipped in the package: run it with `inspect eval "
                                 "escalation/paired_oversight --model PROVIDER/MODEL`, list it, export it.",
                            short_help="The paired ESC/ACT scenario suite: list it, export it.",
                            no_args_is_help=True, context_settings=CONTEXT, rich_markup_mode=None)
    app.add_typer(suite_app, name="suite")
    suite_app.command("list", epilog=KIND_HELP, short_help="The suite's domains, cases and kinds; --audit checks "
                                                           "it.")(list_suite)
    suite_app.command("export", short_help="Write the suite's scenarios, tools and policy for other "
                                           "harnesses.")(export_suite)
