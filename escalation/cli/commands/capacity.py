"""``escalation capacity RESULTS_DIR``: the reviewers' queue that a score folder's hand-offs make, and the
protection it gives (docs/capacity.md)."""
from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from escalation.cli.commands._console import SENTENCE_LIMIT, console as plain_console, json_text, plain, warning_line
from escalation.estimators.stats import format_number

HELP = (
    "How many reviewers the measured hand-offs need: the queue they make and the protection it gives.\n\n"
    "RESULTS_DIR is a folder written by `escalation score --out`. From it come p_u, e_ESC (the share of ESC "
    "conversations that reach a person: every escalation, also one after an action) and e_ACT (the share of ACT "
    "conversations that reach a person: unneeded hand-offs and approval requests, which is p_o), and r_ESC and "
    "r_ACT, the approval reviews a conversation beyond its hand-off (explicit approval requests, and gated calls "
    "decided inline): they join the hand-offs in the reviewers' queue. You state the rest, which is assumed, not "
    "measured: --traffic (conversations an hour), --esc-share (the share of them whose case the policy reserves "
    "for a person), --reviewers, --review-minutes and --approval-minutes.\n\n"
    "Printed, each with its interval: hand-offs an hour a = traffic (s e_ESC + (1 - s) e_ACT) and approval "
    "reviews an hour traffic (s r_ESC + (1 - s) r_ACT); the mean review (weighted by arrivals) and the cv of "
    "the mixture of review times; utilisation rho = (hand-offs tau + approvals tau_P) / (60 R); the probability "
    "of waiting (Erlang C) and the mean wait of the M/M/R queue (Allen-Cunneen with --arrival-cv, "
    "--service-cv and --approval-cv); review quality g(rho), the probability that a "
    "hand-off gets a real decision; the reviews under load, g(0) - g(rho); and the realised protection "
    "(1 - p_u) g(rho), the share of the cases reserved for a person that reach one before any action and get "
    "a real decision. Utilisation >= 1 is an unstable queue: its wait is 'unstable' (null in JSON), never a "
    "number. The intervals come from a cluster bootstrap of the scenarios (--draws, --seed).\n\n"
    "--solve reviewers finds the fewest reviewers for --target-wait or --target-protection; --solve budget "
    "the highest e_ACT that keeps utilisation at or under --target-utilisation with --reviewers: the "
    "escalation budget.\n\n"
    "Example: escalation capacity results/ --traffic 200 --esc-share 0.1 --reviewers 3 --review-minutes 4\n\n"
    "Example: escalation capacity results/ --traffic 200 --esc-share 0.1 --review-minutes 4 --solve reviewers "
    "--target-wait 2"
)

#: The model's parameters that this command's parameters are passed to under another name (for the flag
#: table of :func:`escalation.cli._main.flag_table`).
PARAMETER_NAMES = {"maximum": "quality_max", "half": "quality_half", "slope": "quality_slope", "wait": "target_wait",
                   "protection": "target_protection", "utilisation": "target_utilisation"}
#: Each output as the text prints it.
_LABELS = {"handoffs_per_hour": "hand-offs an hour", "approvals_per_hour": "approval reviews an hour",
           "mean_review_minutes": "mean review, minutes", "review_cv": "cv of the review times",
           "utilisation": "utilisation rho",
           "p_wait": "probability of waiting", "mean_wait_minutes": "mean wait, minutes",
           "review_quality": "review quality g(rho)", "reviews_under_load": "reviews under load",
           "protection": "realised protection"}
_WAITING = ("p_wait", "mean_wait_minutes")
#: The outputs that are shares (in [0, 1] by nature): written with 4 decimals, as the measured rates are.
_SHARES = ("p_wait", "review_quality", "reviews_under_load", "protection")
#: Significant digits of the largest number of a row of the other outputs; all its numbers take as many decimals.
_DIGITS = 4


class Solve(str, Enum):
    """What ``--solve`` finds."""

    reviewers = "reviewers"
    budget = "budget"


def _quality(table: Optional[Path], maximum: Optional[float], half: Optional[float], slope: Optional[float]):
    from escalation.estimators.metric import LogisticQuality, read_quality_table
    from escalation.estimators.records import InputError

    given = {k: v for k, v in (("maximum", maximum), ("half", half), ("slope", slope)) if v is not None}
    if table is not None:
        if given:
            raise InputError("give --quality-table or the --quality-max, --quality-half and --quality-slope of the "
                             "logistic curve, not both", field="--quality-table")
        return read_quality_table(table)
    return LogisticQuality(**given)


def _targets(solve: Optional[Solve], reviewers, wait, protection, utilisation) -> None:
    """The combinations of --solve, --reviewers and the targets that mean something."""
    from escalation.estimators.records import InputError

    if solve is not Solve.reviewers and (wait is not None or protection is not None):
        raise InputError("a target wait or protection needs --solve reviewers",
                         field="--target-wait" if wait is not None else "--target-protection")
    if solve is not Solve.budget and utilisation is not None:
        raise InputError("a target utilisation needs --solve budget", field="--target-utilisation")
    if solve is Solve.reviewers:
        if reviewers is not None:
            raise InputError("--solve reviewers finds the number of reviewers: leave --reviewers out",
                             field="--reviewers")
        if (wait is None) == (protection is None):
            raise InputError("--solve reviewers needs one target: --target-wait MINUTES or --target-protection P",
                             field="--solve")
    elif reviewers is None:
        raise InputError("give the number of reviewers (or --solve reviewers to find it)", field="--reviewers")


def _reviewers(count: int) -> str:
    return f"{count} reviewer{'' if count == 1 else 's'}"


def _number(value, digits: int = 4, undefined: str | None = None) -> str:
    """An int with thousands separators, a float to ``digits`` significant digits; where it is undefined,
    ``undefined`` when a word says why ("unstable", "none"), else ``n/a``."""
    if value is None and undefined is not None:
        return undefined
    return format_number(value, spec="," if isinstance(value, int) else f".{digits}g")


def _decimals(values, share: bool) -> int:
    """Decimals of a row: 4 for a share; else enough for :data:`_DIGITS` significant digits of the row's
    largest number (none for thousands, at most 4, as for a share), so that a row never mixes ``1.08`` and
    ``0.6883`` nor writes ``6.718e-06``."""
    if share:
        return 4
    finite = [abs(v) for v in values if isinstance(v, int | float) and math.isfinite(v) and v != 0]
    if not finite:
        return _DIGITS
    return min(4, max(0, _DIGITS - 1 - math.floor(math.log10(max(finite)))))


def _fixed(value, decimals: int, undefined: str | None = None) -> str:
    """``value`` with ``decimals`` decimals and thousands separators; undefined as :func:`_number` writes it."""
    if value is None and undefined is not None:
        return undefined
    return format_number(value, spec=f",.{decimals}f")


def _estimate(entry: dict, undefined: str | None = None, *, share: bool = False) -> str:
    """``value (low, high)``: the three numbers in one format (:func:`_decimals`)."""
    low, high = entry["ci"]
    decimals = _decimals((entry["value"], low, high), share)
    return (f"{_fixed(entry['value'], decimals, undefined)} "
            f"({_fixed(low, decimals, undefined)}, {_fixed(high, decimals, undefined)})")


def _quality_text(quality: dict) -> str:
    if quality["curve"] == "logistic":
        return (f"g(rho) = {quality['max']:g} / (1 + exp({quality['slope']:g} (rho - {quality['half']:g}))), "
                "a logistic curve")
    points = ", ".join(f"({u:g}, {g:g})" for u, g in quality["points"])
    return f"g(rho) interpolated in the table {plain(quality['source'], None)}: {points}"


def _solution_lines(solution: dict, confidence: float) -> list[str]:
    level = f"{confidence:.0%}"
    if solution["solve"] == "reviewers":
        (name, target), = solution["target"].items()
        goal = (f"a mean wait of at most {target:g} minutes" if name == "mean_wait_minutes"
                else f"a realised protection of at least {target:g}")
        end = "upper end of the wait" if name == "mean_wait_minutes" else "lower end of the protection"
        return [f"fewest reviewers for {goal}: {_number(solution['reviewers'], undefined='none')} by the point "
                f"estimate; {_number(solution['reviewers_interval'], undefined='none')} so that the {level} "
                f"interval's {end} meets it too"]
    budget, staff = solution["e_act_max"], _reviewers(solution["reviewers"])
    low, high = (_fixed(end, 4, undefined="none") for end in budget["ci"])  # e_ACT: a share
    within = {None: "no budget", True: "within the budget", False: "over the budget"}[solution["within"]]
    head = f"escalation budget with {staff} at utilisation at most {solution['target']['utilisation']:g}: "
    head += ("none" if budget["value"] is None else f"e_ACT at most {_fixed(budget['value'], 4)}")
    legend = "; none: no budget" if None in (budget["value"], *budget["ci"]) else ""
    return [f"{head} ({level} interval {low} to {high}{legend})",
            f"  the ESC hand-offs alone take utilisation {_fixed(solution['esc_utilisation'], 4)}; the measured e_ACT "
            f"(= p_o) is {solution['e_act']:.4f}: {within}"]


def print_capacity(data: dict) -> None:
    """The readable report of :meth:`CapacityModel.report` (with ``solution`` when solving), for a person."""
    from escalation.figures import counted

    console = plain_console()
    level = f"{data['interval']['confidence']:.0%}"
    solution = data.get("solution")
    if solution is not None:
        for line in _solution_lines(solution, data["interval"]["confidence"]):
            console.print(line)
        console.print()
    inputs, assumed = data["inputs"], data["assumptions"]
    console.print(f"{plain(data['folder'], None)}: {counted(data['conversations'], 'conversation')}, {data['mode']} "
                  "mode")
    console.print(f"measured ({level} intervals: percentile cluster bootstrap, {data['interval']['draws']:,} draws, "
                  f"seed {data['interval']['seed']})")
    for key, name, what, count in (("p_u", "p_u  ", "under-escalation", "errors"),
                                   ("e_esc", "e_ESC", "ESC reaching a person", "reached"),
                                   ("e_act", "e_ACT", "ACT reaching a person", "reached"),
                                   ("r_esc", "r_ESC", "ESC approval reviews", "reviews"),
                                   ("r_act", "r_ACT", "ACT approval reviews", "reviews")):
        entry = inputs[key]
        console.print(f"  {name}  {what:<22} {entry['value']:.4f} ({entry['ci'][0]:.4f}, {entry['ci'][1]:.4f})  "
                      f"{entry[count]}/{entry['n']} in {counted(entry['scenarios'], 'scenario')}")
    console.print("assumed (not measured: state your own)")
    console.print(f"  traffic {assumed['traffic_per_hour']:g} conversations an hour, ESC share "
                  f"{assumed['esc_share']:g}")
    staff = "no number of reviewers meets the target" if data["reviewers"] is None else _reviewers(data["reviewers"])
    console.print(f"  {staff}, {assumed['review_minutes']:g} minutes a hand-off's review, "
                  f"{assumed['approval_minutes']:g} an approval review")
    markovian = assumed["arrival_cv"] == 1 and math.isclose(data["review_cv"]["value"], 1.0)  # of the mixture
    console.print(f"  cv of the times between hand-offs {assumed['arrival_cv']:g}, of the review times "
                  f"{assumed['service_cv']:g}, of the approval reviews {assumed['approval_cv']:g}"
                  + (" (M/M/R)" if markovian else " (Allen-Cunneen)"))
    console.print(f"  {_quality_text(assumed['quality'])}")
    if data["reviewers"] is not None:
        console.print(f"results with {staff} ({level} intervals)")
        for key, label in _LABELS.items():
            shown = _estimate(data[key], "unstable" if key in _WAITING else None, share=key in _SHARES)
            console.print(f"  {label:<24} {shown}")
        console.print("  (reviews under load = g(0) - g(rho): real decisions lost to the load)")
        if not data["stable"]:
            console.print(f"unstable: at the point estimate reviews arrive faster than {staff} clear them "
                          "(utilisation >= 1), so the queue grows without end and has no mean wait")
        console.print(f"draws with an unstable queue: {data['unstable_draws']:.1%} (an interval end among them is "
                      "'unstable')")
    if not inputs["r_esc"]["recorded"]:
        from escalation.estimators.metric import NO_APPROVALS

        console.print(f"note: {NO_APPROVALS}")
    for warning in data["warnings"]:
        console.print(warning_line(warning))
    for note in solution["notes"] if solution is not None else ():
        console.print(f"note: {plain(note, SENTENCE_LIMIT)}")


def capacity(
    results: Path = typer.Argument(..., metavar="RESULTS_DIR", help="A folder written by `escalation score "
                                   "--out`: summary.json and conversations.jsonl."),
    traffic: float = typer.Option(..., "--traffic", metavar="RATE", help="Assumed conversations an hour "
                                  "(lambda), >= 0."),
    esc_share: float = typer.Option(..., "--esc-share", metavar="SHARE", help="Assumed share of the traffic "
                                    "whose case the policy reserves for a person (s), in [0, 1]."),
    reviewers: Optional[int] = typer.Option(None, "--reviewers", metavar="R", help="Reviewers on duty, at least "
                                            "1 (leave it out with --solve reviewers)."),
    review_minutes: float = typer.Option(..., "--review-minutes", metavar="MINUTES", help="Assumed mean "
                                         "minutes a hand-off's review takes (tau), > 0."),
    approval_minutes: Optional[float] = typer.Option(None, "--approval-minutes", metavar="MINUTES", help="Assumed "
                                                     "mean minutes an approval review takes (tau_P), > 0. "
                                                     "Default: --review-minutes."),
    arrival_cv: float = typer.Option(1.0, "--arrival-cv", metavar="CV", help="Coefficient of variation of the "
                                     "times between hand-offs (1: Poisson arrivals), >= 0."),
    service_cv: float = typer.Option(1.0, "--service-cv", metavar="CV", help="Coefficient of variation of the "
                                     "hand-offs' review times (1: exponential), >= 0."),
    approval_cv: float = typer.Option(1.0, "--approval-cv", metavar="CV", help="Coefficient of variation of the "
                                      "approval reviews' times (1: exponential), >= 0."),
    quality_half: Optional[float] = typer.Option(None, "--quality-half", metavar="RHO", help="Utilisation at "
                                                 "which review quality is half its maximum (default 0.9)."),
    quality_slope: Optional[float] = typer.Option(None, "--quality-slope", metavar="K", help="How sharply "
                                                  "quality falls around --quality-half, > 0 (default 20)."),
    quality_max: Optional[float] = typer.Option(None, "--quality-max", metavar="G", help="Review quality of an "
                                                "unloaded reviewer, in (0, 1] (default 0.95)."),
    quality_table: Optional[Path] = typer.Option(None, "--quality-table", metavar="FILE", help="CSV with the "
                                                 "columns utilisation,quality, in place of the logistic curve: "
                                                 "interpolated linearly, held at its ends."),
    solve: Optional[Solve] = typer.Option(None, "--solve", help="reviewers: the fewest reviewers for a target; "
                                          "budget: the highest e_ACT for a target utilisation."),
    target_wait: Optional[float] = typer.Option(None, "--target-wait", metavar="MINUTES", help="With --solve "
                                                "reviewers: the longest mean wait, > 0."),
    target_protection: Optional[float] = typer.Option(None, "--target-protection", metavar="P", help="With "
                                                      "--solve reviewers: the least realised protection."),
    target_utilisation: Optional[float] = typer.Option(None, "--target-utilisation", metavar="U", help="With "
                                                       "--solve budget: the highest utilisation, in (0, 1) "
                                                       "(default 0.8)."),
    draws: int = typer.Option(2000, "--draws", metavar="N", help="Bootstrap draws of the rates, 100 to 100,000."),
    seed: int = typer.Option(0, "--seed", metavar="SEED", help="Seed (>= 0) of the bootstrap draws (recorded)."),
    confidence: Optional[float] = typer.Option(None, "--confidence", metavar="LEVEL", help="Level of every "
                                               "interval, in (0, 1). Default: the summary's."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of the text."),
) -> None:
    """The reviewers' queue of a score folder's hand-offs (the help text is :data:`HELP`)."""
    from escalation.estimators.metric import CapacityModel, HandoffTotals
    from escalation.estimators.records import InputError, read_scored

    _targets(solve, reviewers, target_wait, target_protection, target_utilisation)
    quality = _quality(quality_table, quality_max, quality_half, quality_slope)
    frame, summary = read_scored(results)
    totals = HandoffTotals.from_scored(frame, summary, source=str(results))
    level = summary.get("confidence") if confidence is None else confidence
    if confidence is None and not (isinstance(level, float) and 0.0 < level < 1.0):
        raise InputError(f"must be a level strictly between 0 and 1, got {level!r}; give --confidence",
                         source=str(Path(results) / "summary.json"), field="confidence")
    assert level is not None  # the option's value, or the summary's level checked just above
    model = CapacityModel(totals, traffic=traffic, esc_share=esc_share, review_minutes=review_minutes,
                          approval_minutes=approval_minutes, arrival_cv=arrival_cv, service_cv=service_cv,
                          approval_cv=approval_cv, quality=quality, confidence=level, draws=draws, seed=seed)
    solution = None
    if solve is Solve.reviewers:
        solution = model.reviewers_for(wait=target_wait, protection=target_protection)
        reviewers = solution["reviewers"]
    elif solve is Solve.budget:
        assert reviewers is not None  # ``_targets`` asks for --reviewers unless --solve reviewers
        solution = model.budget(reviewers, 0.8 if target_utilisation is None else target_utilisation)
    report = model.report(reviewers)
    data = {"folder": str(results), "conversations": summary.get("conversations"), "mode": summary.get("mode"),
            **report, "warnings": [*report["warnings"], *(summary.get("warnings") or [])]}
    if solution is not None:
        data["solution"] = solution
    if as_json:
        typer.echo(json_text(data))
    else:
        print_capacity(data)


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation capacity`` to the command line."""
    app.command("capacity", help=HELP, short_help="The reviewers' queue of the hand-offs, and its protection.")(
        capacity)
