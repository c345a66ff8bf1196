"""``escalation policy init`` and ``escalation policy check``: a policy drafted from a log, and checked against one."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from escalation.cli.commands._archive_limits import (
    ARCHIVE_DEFAULT,
    DOCUMENT_DEFAULT,
    MEMBER_DEFAULT,
    MaxArchiveBytes,
    MaxDocumentBytes,
    MaxMemberBytes,
    archive_limits,
)
from escalation.cli.commands._console import SENTENCE_LIMIT, console as plain_console, plain
from escalation.cli.commands.score import FORMATS
from escalation.estimators.records import InputError

if TYPE_CHECKING:
    from rich.console import JustifyMethod
    from rich.table import Table
    from rich.text import Text

_SHORT = {"escalation_tools": "escalation", "read_only_tools": "read-only", "action_tools": "action",
          "approval_tools": "approval", "gated_tools": "gated"}
_TURN_WIDTH = 10
LOG_HELP = "Log file (or tau2-bench results folder) in any format that escalation score reads."
FORMAT_HELP = f"Input format: {', '.join(FORMATS)}."


def _console(err: bool):
    return plain_console(err=err)  # not a terminal: wide, so that no tool name is split


def _check_format(format: str) -> None:
    from escalation.estimators.stats import check_choice

    check_choice("format", format, FORMATS)


def _tool_table(rows, console, list_header: str = "list") -> Table:
    """``rows``: ``(ToolUse, Placement)``; the why is the placement's short reason. As wide as its cells when
    ``console`` has room (a file or a pipe is wide: :func:`~escalation.cli.commands._console.columns`), else
    the console's width, where a long name folds and the reasons wrap."""
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table

    from escalation.estimators.records import turn_ranges

    def table(fit: bool) -> Table:
        made = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold", pad_edge=False,
                     padding=(0, 1, 0, 0), expand=fit)
        made.add_column("tool", overflow="fold", ratio=3 if fit else None)  # a long name folds
        counts: tuple[tuple[str, JustifyMethod], ...] = (("calls", "right"), ("convs", "right"), ("turns", "left"),
                                                        (list_header, "left"))
        for column, justify in counts:
            made.add_column(column, justify=justify, no_wrap=True)
        made.add_column("why", ratio=2 if fit else None)
        for tool, placed in rows:
            made.add_row(plain(tool.name), str(tool.calls), str(tool.conversations),
                         turn_ranges(tool.turns, _TURN_WIDTH), _SHORT[placed.list], plain(placed.short))
        return made

    rows = list(rows)
    natural = table(False)
    wanted = Measurement.get(console, console.options.update_width(1 << 20), natural).maximum  # unclipped
    return natural if wanted <= console.width else table(True)


def _heading(usage) -> Text:
    from rich.text import Text

    from escalation.figures import counted

    return Text.assemble((plain(usage.source, None), "bold"), f" ({usage.format}): "
                         f"{counted(usage.conversations, 'conversation')}, {counted(usage.calls, 'tool call')} of "
                         f"{counted(len(usage.called()), 'tool')}")


def init(
    log: Path = typer.Argument(..., metavar="LOG", help=LOG_HELP),
    format: str = typer.Option("auto", "--format", metavar="NAME", help=FORMAT_HELP),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Write the draft to FILE: TOML when it "
                                       "ends in .toml, else JSON (as --policy reads it), and print the table. "
                                       "Without --out the draft (TOML) goes to standard output and the table to "
                                       "standard error, so `> FILE.toml` keeps the draft alone."),
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists."),
    as_json: bool = typer.Option(False, "--json", help="Print the tools, their placements and the draft as JSON "
                                 "instead of the table and the TOML."),
    max_member_bytes: MaxMemberBytes = MEMBER_DEFAULT,
    max_archive_bytes: MaxArchiveBytes = ARCHIVE_DEFAULT,
    max_document_bytes: MaxDocumentBytes = DOCUMENT_DEFAULT,
) -> None:
    """Draft a policy from the tools a log calls, for a person to confirm.

    Lists every tool the log calls with its calls, conversations (convs) and turns, and places it:
    a name with a hand-off word (transfer, human, handoff, escalat, supervisor, agent) in
    escalation_tools; a name that begins with a look-up verb (get, list, search, find, check, read)
    or holds 'lookup', and a well-known tool that changes nothing (think, calculate, calculator), in
    read_only_tools; the others in action_tools. Where a tau2-bench log
    annotates a tool (read, think: read-only; write: action), the annotation places it unless the
    name suggests a hand-off; tau-bench logs carry no annotation, only the gold actions, whose tools
    are listed too. Where a trace lists MCP tools with their annotations (an OpenAI Responses
    mcp_list_tools item, pydantic-ai's model_request_parameters), readOnlyHint true places a tool in
    read_only_tools and readOnlyHint false or destructiveHint true in action_tools, over a look-up
    verb but not over a hand-off word; the tools the listing names are drafted even if never called,
    and those called destructive are suggested for gated_tools in a comment. An annotation is a hint
    of the MCP server, not a guarantee. Each tool line of the draft says why it is there: a person
    must confirm it. approval_tools and gated_tools are left empty. When no name suggests a
    hand-off, escalation_tools stays empty and escalation score refuses the draft until a person
    names one.

    Example: escalation policy init examples/data/tau-bench/gpt-4o-airline.json --out airline.toml

    Then: escalation policy check LOG --policy airline.toml, and escalation score LOG --policy airline.toml
    """
    from escalation.estimators.records import draft_policy, tool_usage, write_atomic

    _check_format(format)
    if out is not None and out.is_dir():
        raise InputError("is a folder; --out names the policy file to write", source=str(out))
    if out is not None and out.exists() and not force:
        raise InputError("exists; give --force to replace it", source=str(out))
    limits = archive_limits(max_member_bytes, max_archive_bytes, max_document_bytes)
    usage = tool_usage(log, format=format, limits=limits)
    draft = draft_policy(usage)
    text = draft.text(out)
    if out is not None:
        write_atomic(out, text)
    if as_json:
        data = {**usage.to_dict(),
                "placements": [{"tool": p.name, "list": p.list, "by": p.by, "why": p.why} for p in draft.placements],
                "policy": draft.to_dict(), "written": None if out is None else str(out),
                "warnings": draft.warnings()}
        typer.echo(json.dumps(data, indent=2))  # ASCII: a name's control characters and surrogates escaped
    else:
        console = _console(err=out is None)
        console.print(_heading(usage))
        by_name = {p.name: p for p in draft.placements}
        console.print(_tool_table(((t, by_name[t.name]) for t in usage.tools), console))
        counts = {by: sum(p.by == by for p in draft.placements) for by in ("name", "annotation", "default")}
        console.print(f"placed by name: {counts['name']}, by an annotation (tau2-bench, MCP): "
                      f"{counts['annotation']}, "
                      f"as actions for want of a sign: {counts['default']}; a person must confirm every one")
        if out is not None:
            lists = draft.lists()
            console.print(f"wrote {plain(out, None)} ({'TOML' if out.suffix.lower() == '.toml' else 'JSON'}): "
                          f"{len(lists['escalation_tools'])} escalation, {len(lists['read_only_tools'])} read-only, "
                          f"{len(lists['action_tools'])} action tools")
        else:
            typer.echo(text, nl=False)
    for warning in draft.warnings():
        typer.echo(f"warning: {plain(warning, SENTENCE_LIMIT)}", err=True)


def _names(pairs) -> str:
    return ", ".join(f"{plain(name)} ({', '.join(lists)})" for name, lists in pairs)


def check(
    log: Path = typer.Argument(..., metavar="LOG", help=LOG_HELP),
    policy: Path = typer.Option(..., "--policy", metavar="FILE", help="Policy file (JSON or TOML) to check."),
    format: str = typer.Option("auto", "--format", metavar="NAME", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    max_member_bytes: MaxMemberBytes = MEMBER_DEFAULT,
    max_archive_bytes: MaxArchiveBytes = ARCHIVE_DEFAULT,
    max_document_bytes: MaxDocumentBytes = DOCUMENT_DEFAULT,
) -> None:
    """Check a policy against the tools a log calls.

    Reports the unmarked tools (called, in none of the five lists: each call counts as an action),
    with their calls and where the draft rule of `policy init` would put them; the tools the policy
    names that the log never calls (a misspelt name shows up here and as unmarked); the escalation
    tools never called; and doubts: tools whose name, tau2-bench annotation or MCP annotation suggests another list
    (a look-up verb among the actions, a hand-off word outside escalation_tools, think or calculate
    among the actions: a warning too, since their calls then count as consequential actions). Exit
    code 0 whatever it finds; 2 for a log or policy that cannot be read.

    Example: escalation policy check examples/data/tau-bench/gpt-4o-airline.json
    --policy examples/tau-bench-airline.policy.json
    """
    from escalation.estimators.records import check_policy, load_policy, tool_usage

    _check_format(format)
    policy_obj = load_policy(policy)
    limits = archive_limits(max_member_bytes, max_archive_bytes, max_document_bytes)
    usage = tool_usage(log, format=format, limits=limits)
    result = check_policy(usage, policy_obj)
    if as_json:
        typer.echo(json.dumps({**result.to_dict(), "policy": str(policy)}, indent=2))
    else:
        _print_check(result, str(policy))
    for warning in result.warnings():
        typer.echo(f"warning: {plain(warning, SENTENCE_LIMIT)}", err=True)


def _print_check(result, policy: str) -> None:
    from rich.text import Text

    usage = result.usage
    console = _console(err=False)
    console.print(Text.assemble(_heading(usage), f"; policy {plain(policy, None)}"))
    if result.unmarked:
        console.print(Text.assemble(("unmarked tools", "yellow"), " (called, in no list: each call counts as an "
                                    f"action): {len(result.unmarked)}"))
        console.print(_tool_table(result.unmarked, console, list_header="suggested"))
    else:
        console.print("unmarked tools: none (the policy lists every tool the log calls)")
    console.print(f"tools in the policy that the log never calls: {_names(result.never_called) or 'none'}")
    never = ", ".join(map(plain, result.escalation_never_called))
    console.print(f"escalation tools never called: {never or 'none'}")
    if result.doubts:
        console.print(Text.assemble(("doubts", "yellow"), " (the name or an annotation suggests another list): "
                                    f"{len(result.doubts)}"))
        for name, listed, placed in result.doubts:
            console.print(f"  {plain(name)} is in {listed}; {plain(placed.why, SENTENCE_LIMIT)}: {placed.list}?")
    else:
        console.print("doubts: none")


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    policy_app = typer.Typer(help="Draft a policy from the tools a log calls (init), and check a policy against a "
                                  "log (check).", no_args_is_help=True,
                             context_settings=app.info.context_settings, rich_markup_mode=None)
    policy_app.command("init")(init)
    policy_app.command("check")(check)
    app.add_typer(policy_app, name="policy")
