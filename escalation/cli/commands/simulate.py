"""``escalation simulate``: conversations of a synthetic assistant profile, with known truth."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._study_options import check_n_jobs, n_jobs_option

#: The most turns a simulation may hold, 2 x cases x replicas x max-turns (a bound on its turns): the
#: conversations are made in memory before they are written, at about 1 KB a turn.
MAX_TURNS = 4_000_000


class SimMode(str, Enum):
    record = "record"
    text = "text"
    A = "A"  # the paper's names, accepted with a notice
    B = "B"


def _list_profiles() -> None:
    from escalation.simulate import PROFILES, expected_rates

    width = max(len(name) for name in PROFILES)
    for name, profile in PROFILES.items():
        e = expected_rates(profile)
        typer.echo(f"{name:<{width}}  E[p_u]={e['p_u']:.3f} E[p_o]={e['p_o']:.3f} E[pi]={e['pi']:.3f}  "
                   f"{profile.description}")


def simulate_command(
    profile: Optional[str] = typer.Option(None, "--profile", metavar="NAME",
                                          help="Assistant profile (see --list-profiles)."),
    cases: int = typer.Option(88, "--cases", min=1, metavar="N", help="Paired cases, each an ESC and an ACT "
                              "scenario (the paper's validation uses 88)."),
    replicas: int = typer.Option(1, "--replicas", min=1, metavar="N", help="Conversations per scenario (2 x "
                                 f"--cases x --replicas x --max-turns is at most {MAX_TURNS:,})."),
    rho: float = typer.Option(0.0, "--rho", min=0.0, max=1.0, metavar="RHO",
                              help="Intra-scenario correlation of the error indicator (u on ESC, o on ACT)."),
    mode: SimMode = typer.Option(SimMode.record, "--mode", metavar="<record|text>",
                                 help="record: export the tool record. text: withhold it (tool_calls null) and "
                                      "keep the text, as score --mode text reads it. The paper's names A and B "
                                      "are accepted, with a notice."),
    seed: int = typer.Option(0, "--seed", min=0, metavar="SEED",
                             help="Root seed; the same seed gives byte-identical output."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for records.jsonl and the "
                                       "world's policy.json (created if missing); required unless "
                                       "--list-profiles."),
    languages: str = typer.Option("en,es", "--languages", metavar="LANG,...",
                                  help="Comma-separated languages of the cases (en, es)."),
    max_turns: int = typer.Option(4, "--max-turns", min=1, metavar="N",
                                  help="Assistant turns per conversation: 1 to N."),
    n_jobs: int = n_jobs_option("The output does not depend on it."),
    list_profiles: bool = typer.Option(False, "--list-profiles", help="Print the profiles, one line each, and exit."),
) -> None:
    """Simulate conversations of an assistant profile, with known truth (a `truth` object on every line).

    Writes DIR/records.jsonl (canonical records, SPEC section 6) and DIR/policy.json (the world's
    policy), ready for `escalation score DIR/records.jsonl --policy DIR/policy.json`.

    \b
    Example:
      escalation simulate --profile invents_actions --cases 88 --replicas 5 \\
          --rho 0.2 --mode text --seed 1 --out results/sim
      escalation score results/sim/records.jsonl --policy results/sim/policy.json
    """
    from escalation.estimators.records import InputError, check_out_dir, output_folder

    if list_profiles:
        _list_profiles()
        return
    from escalation.simulate import LANGUAGES, PROFILES, simulate, world_policy_path, write_jsonl

    if profile is None:
        raise InputError(f"choose a profile: {', '.join(PROFILES)}", field="--profile")
    if profile not in PROFILES:
        raise InputError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}", field="--profile")
    if out is None:
        raise InputError("give the output folder", field="--out")
    langs = tuple(x.strip() for x in languages.split(",") if x.strip())
    if not langs or any(x not in LANGUAGES for x in langs):
        raise InputError(f"must be a comma-separated subset of {', '.join(LANGUAGES)}, got {languages!r}",
                         field="--languages")
    check_n_jobs(n_jobs, source="escalation simulate")
    if 2 * cases * replicas * max_turns > MAX_TURNS:
        raise InputError(f"2 x --cases {cases} x --replicas {replicas} x --max-turns {max_turns} is "
                         f"{2 * cases * replicas * max_turns:,} turns, more than the {MAX_TURNS:,} a simulation holds "
                         "in memory (about 1 KB a turn): lower one of them", source="escalation simulate")
    check_out_dir(out)

    from escalation.estimators.records import MODE_ALIASES, write_atomic

    chosen = MODE_ALIASES.get(mode.value, mode.value)
    if chosen != mode.value:
        typer.echo(f"notice: --mode {mode.value} is now called --mode {chosen}", err=True)
    sim = simulate(profile, cases, replicas, rho, chosen, seed, languages=langs, max_turns=max_turns,
                   n_jobs=n_jobs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with output_folder(out), Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("writing", total=len(sim))
        write_jsonl(sim, out / "records.jsonl", progress=lambda n: bar.advance(task, n))
        write_atomic(out / "policy.json", world_policy_path().read_bytes())
    rates = sim.truth_rates()
    from escalation.figures import counted

    typer.echo(f"{counted(len(sim), 'conversation')} of {profile} (mode {chosen}, {counted(cases, 'case')} x 2 x "
               f"{counted(replicas, 'replica')}, "
               f"rho {rho}, seed {seed}); true p_u {rates['p_u']:.4f}, p_o {rates['p_o']:.4f}, pi {rates['pi']:.4f}")
    typer.echo(f"wrote {out / 'records.jsonl'} and {out / 'policy.json'}")


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    app.command("simulate", short_help="Conversations of a synthetic assistant, with known truth.")(
        simulate_command)
