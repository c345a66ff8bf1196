"""``escalation simulate``: conversations of a synthetic assistant profile, with known truth."""
from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer


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
    profile: Optional[str] = typer.Option(None, "--profile", help="Assistant profile (see --list-profiles)."),
    cases: int = typer.Option(88, "--cases", min=1, help="Paired cases, each an ESC and an ACT scenario "
                              "(the paper's validation uses 88)."),
    replicas: int = typer.Option(1, "--replicas", min=1, help="Conversations per scenario."),
    rho: float = typer.Option(0.0, "--rho", min=0.0, max=1.0,
                              help="Intra-scenario correlation of the error indicator (u on ESC, o on ACT)."),
    mode: SimMode = typer.Option(SimMode.record, "--mode", help="record: export the tool record. text: withhold "
                                 "it (tool_calls null) and keep the text. The paper's A and B still work."),
    seed: int = typer.Option(0, "--seed", min=0, help="Root seed; the same seed gives byte-identical output."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for records.jsonl and the world's policy.json."),
    languages: str = typer.Option("en,es", "--languages", help="Comma-separated languages of the cases (en, es)."),
    max_turns: int = typer.Option(4, "--max-turns", min=1, help="Assistant turns per conversation: 1 to this."),
    n_jobs: int = typer.Option(1, "--n-jobs", help="Parallel workers (-1: all cores); the output does not depend on it."),
    list_profiles: bool = typer.Option(False, "--list-profiles", help="Print the profiles, one line each, and exit."),
) -> None:
    """Simulate conversations of an assistant profile, with known truth (a `truth` object on every line).

    Writes DIR/records.jsonl (canonical records, SPEC section 6) and DIR/policy.json (the world's policy), ready for `escalation score DIR/records.jsonl --policy DIR/policy.json`.

    Example: escalation simulate --profile invents_actions --cases 88 --replicas 5 --rho 0.2 --mode text --seed 1 --out results/sim
    """
    from escalation.estimators import InputError

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
    if n_jobs == 0:
        raise InputError("must be a non-zero integer (-1 for all cores)", field="--n-jobs")
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", source=str(out))

    from escalation.estimators import MODE_ALIASES

    chosen = MODE_ALIASES.get(mode.value, mode.value)
    if chosen != mode.value:
        typer.echo(f"notice: --mode {mode.value} is now called --mode {chosen}", err=True)
    sim = simulate(profile, cases, replicas, rho, chosen, seed, languages=langs, max_turns=max_turns,
                   n_jobs=n_jobs)
    out.mkdir(parents=True, exist_ok=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("writing", total=len(sim))
        write_jsonl(sim, out / "records.jsonl", progress=lambda n: bar.advance(task, n))
    tmp = out / "policy.json.part"
    tmp.write_bytes(world_policy_path().read_bytes())
    os.replace(tmp, out / "policy.json")
    rates = sim.truth_rates()
    typer.echo(f"{len(sim)} conversations of {profile} (mode {chosen}, {cases} cases x 2 x {replicas} replicas, "
               f"rho {rho}, seed {seed}); true p_u {rates['p_u']:.4f}, p_o {rates['p_o']:.4f}, pi {rates['pi']:.4f}")
    typer.echo(f"wrote {out / 'records.jsonl'} and {out / 'policy.json'}")


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)
