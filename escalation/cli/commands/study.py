"""``escalation study NAME``: every Monte Carlo study, registered from one table (:data:`STUDIES`).

A row of the table names the study's run function in :mod:`escalation.studies` (imported when the
command runs, so ``--help`` imports no numerical library), its help, what ``--out`` receives, what
``--smoke`` runs, what ``--nsim`` defaults to and its least value, its root seed (from
:mod:`escalation.studies._constants`, the one copy) and the summary line it prints. The options every
study shares come from :mod:`._study_options`; one function, :func:`_command`, builds each command.
"""
from __future__ import annotations

import functools
import inspect
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from escalation.cli.commands._console import console
from escalation.cli.commands._study_options import (
    RESUME_HELP,
    Backend,
    Generator,
    backend_option,
    check_count,
    force_option,
    from_run_option,
    generator_option,
    grid_option,
    method_option,
    n_jobs_option,
    nsim_option,
    out_option,
    own_methods,
    scheduler_option,
    seed_option,
    study_arguments,
)
from escalation.estimators.records import InputError
from escalation.estimators.stats import BOOTSTRAP_METHODS, INTERVAL_CHOICES
from escalation.studies import (
    CAPACITY_SEED,
    COVERAGE_SEED,
    DIFFERENCES_SEED,
    GATE_SEED,
    JUDGES_SEED,
    SAMPLE_SIZE_SEED,
    TOKENS_PER_SAMPLE,
    WARNINGS_SEED,
)

__all__ = ["Study", "STUDIES", "run_study", "register", "GateInterval"]

#: The intervals of ``escalation study gate --interval``: ``auto`` and every method but the bootstraps, which
#: would resample each of the eight intervals of every simulated run.
GATE_INTERVALS = tuple(m for m in INTERVAL_CHOICES if m not in BOOTSTRAP_METHODS)
GateInterval = Enum("GateInterval", {name.replace("-", "_"): name for name in GATE_INTERVALS},  # type: ignore[misc]
                    type=str)


@dataclass(frozen=True)
class Study:
    """One ``escalation study NAME`` command."""

    name: str
    #: The run function's name in :mod:`escalation.studies`.
    run: str
    short_help: str
    #: The command's help; its last paragraph an example line.
    help: str
    #: What ``--out DIR`` receives.
    outputs: str
    #: What ``--smoke`` runs.
    smoke: str
    #: ``--nsim``: what it defaults to (help), and its least value.
    nsim: str
    least_nsim: int
    seed: int
    #: ``unit`` of ``--seed``: every one gets its own child seed.
    seed_unit: str
    #: The line printed at the end: ``summary(tables, out, seconds, smoke)``, ``tables`` what the run function
    #: returns; a ``smoke`` run's line states no finding.
    summary: Callable[[Any, Path, float, bool], str]
    #: Old names of the command (hidden, with a notice) and the old name of ``--nsim`` (hidden, with a notice).
    old_names: tuple[str, ...] = ()
    old_nsim: Optional[str] = None
    #: Options of this study alone: ``{parameter: (annotation, typer.Option)}``, passed to its run function
    #: (an Enum's value).
    extra: dict = field(default_factory=dict)
    #: A researcher's own: ``method`` (the contract of ``--method``), ``grid`` (the keys of ``--grid``), and
    #: ``generator`` (``--generator`` and ``--from-run``, any value), for the studies that take them.
    own: dict = field(default_factory=dict)
    #: The help of ``--rerun/--no-rerun`` (rerun the borderline cells), for the studies that have it.
    rerun: str = ""


def _findings(out: Path, smoke: bool) -> str:
    if smoke:
        return (f"a smoke run (--smoke: tiny sizes, to check that the command runs), so no finding: its numbers, in "
                f"{out / 'report.md'} and {out / 'report.html'}, are not fit for conclusions; run without --smoke for "
                "the study")
    return f"findings in {out / 'report.md'} and {out / 'report.html'}"


def _gate_summary(tables, out: Path, seconds: float, smoke: bool) -> str:
    """The line of ``escalation study gate``: at the threshold on the default suite, each rule's wrong fail, and
    the sequential rule's saving (none for a smoke run)."""
    line = f"gate study in {seconds:.1f} s -> {out / 'summary.md'}"
    rules = tables["rules"]
    part = rules[(rules["scenarios"] == rules["scenarios"].max()) & (rules["rho"] == 0.2)]
    at = part[part["truth"] == part["threshold"]]
    if not smoke and len(at):
        fails = ", ".join(f"{r} {100 * v:.1f}%" for r, v in zip(at["rule"], at["p_fail"]))
        seq = part[part["rule"] == "sequential"].sort_values("truth")
        ends = seq.iloc[[0, -1]]
        saved = " and ".join(f"{100 * s:.0f}% at p_u {t:g}" for s, t in zip(ends["saved_share"], ends["truth"]))
        line += (f" (K {int(at['scenarios'].iloc[0])}, rho 0.2: P(fail) at p_u 0.05 {fails}; the sequential rule "
                 f"saves {saved} of the fixed rule's samples)")
    return f"{line}; {_findings(out, smoke)}"


#: ``escalation study gate``'s own options.
_GATE_OPTIONS = {
    "interval": (GateInterval, typer.Option(
        GateInterval("auto"), "--interval", metavar="METHOD",
        help=f"The interval of every look: {', '.join(GATE_INTERVALS)}. auto (the default, as escalation gate): "
             "at each look the narrowest interval that held 95% in escalation study coverage for the suite's "
             "scenarios, with one conversation a scenario at the first look and replicas after; wilson-kish: "
             "the paper's.")),
    "tokens_per_sample": (float, typer.Option(
        TOKENS_PER_SAMPLE, "--tokens-per-sample", metavar="N",
        help="Input tokens of one sample, for the tokens columns (the default suite's, measured with the "
             "benchmark's profile model; changes no cell).")),
}


STUDIES = (
    Study(
        name="coverage", run="run_coverage_study", short_help="Coverage of every --interval, and which to choose.",
        help="""Coverage of every interval of --interval and two oracles on scenarios of equal and unequal size,
        with exact coverage wherever it can be computed, and which interval to choose for how many scenarios
        and replicas (ADEMP write-up in DIR/report.md; DIR/report.html shows it with its figures and tables).

        Example: escalation study coverage --out results/coverage --smoke --n-jobs 2
        """,
        outputs="design.csv, coverage.csv, the summary tables, run.json, figures, report.md and report.html",
        smoke="A small grid (40 cells) and 200 data sets per cell (about 20 seconds); no borderline cell rerun.",
        nsim="default 2000; 200 with --smoke; at least 1; the bootstraps use at most 500 with unequal sizes",
        least_nsim=1, seed=COVERAGE_SEED, seed_unit="cell",
        summary=lambda table, out, seconds, smoke: (
            f"coverage study: {len(table) // table['method'].nunique()} cells x {table['method'].nunique()} "
            f"methods -> {out / 'coverage.csv'}; {_findings(out, smoke)}"),
        own={"method": "f(totals, sizes, confidence) -> (low, high), totals and sizes integer arrays (data sets, "
                       "scenarios), low and high float arrays (data sets,), NaN an undefined bound; f.sufficient = "
                       "'total' or 'total-and-squares' declares the statistics it reads, for exact coverage",
             "grid": "lists p, rho, scenarios, replicas, size_cv, and optionally estimand (p_u, pi) and nsim (one "
                     "number); p is the true p_u and 1 - the true pi",
             "generator": True},
        rerun="Rerun each Monte Carlo cell where an interval's coverage lies within 2 MCSE of the 0.93 floor of "
              "the recommendation until that MCSE is at most 0.003 (about 7,500 data sets): on by default, off with "
              "--smoke."),
    Study(
        name="sample-size", run="run_sample_size_study", short_help="Every plan of escalation plan, simulated.",
        help="""Plans of scenarios and replicas, simulated: half-width and coverage of each interval plan (equal
        and unequal scenario sizes), size and power of every test the planner plans for (z and t), K over
        (p, rho), against replicas with the floor and against the spread of the sizes (findings in
        DIR/report.md).

        Example: escalation study sample-size --out results/sample-size --smoke
        """,
        outputs="design.csv, run.json, the tables (CSV and Markdown), figures, report.md and report.html",
        smoke="Thirteen plans and tests, 200 data sets each (800 per size cell; seconds).",
        nsim="default 4000; 200 with --smoke; at least 2; four times that per size cell",
        least_nsim=2, seed=SAMPLE_SIZE_SEED, seed_unit="plan",
        summary=lambda tables, out, seconds, smoke: (
            f"sample-size study: {tables['validation']['cell'].nunique()} plans and tests simulated in "
            f"{seconds:.1f} s -> {out}; {_findings(out, smoke)}"),
        own={"grid": "lists p, rho, scenarios, replicas, size_cv, and optionally estimand (p_u, pi) and nsim: the "
                     "interval plans of p (pi = 1 - p) x rho x replicas x size_cv at h = 0.05, their K planned, and "
                     "the size of the tests at each K of scenarios (p_u)"}),
    Study(
        name="judges", run="run_judges_study", short_help="The judges per language, and mode B against the truth.",
        help="""The per-turn judge calibrated per language (Platt, isotonic; ECE, bias, pairs needed), doubt
        measured by runs and paraphrases, the cause judge, under-escalation without a record against
        the truth with its correction, and the read-only notice (findings in DIR/report.md, with the figures
        and tables in DIR/report.html).

        Example: escalation study judges --out results/judges --smoke --nsim 4
        """,
        outputs="design.csv, run.json, results.csv, the tables (calibration.csv, mode_b.csv, ... as CSV and "
                "Markdown), figures, report.md and report.html",
        smoke="Two pair sizes, two fake-escalation rates and 20 data sets per cell (seconds).",
        nsim="default 200; 20 with --smoke; at least 2; a doubt or cause cell is one sample",
        least_nsim=2, seed=JUDGES_SEED, seed_unit="cell", old_names=("calibration",), old_nsim="--reps",
        summary=lambda tables, out, seconds, smoke: (
            f"judges study: {tables['results']['cell'].nunique()} cells in {seconds:.1f} s -> "
            f"{out / 'calibration.csv'}, {out / 'mode_b.csv'}; {_findings(out, smoke)}")),
    Study(
        name="differences", run="run_differences_study",
        short_help="Coverage of compare's difference intervals and of mode B.",
        help="""Coverage of compare's intervals of a difference (Newcombe with the design effect, the paired
        cluster bootstrap) with paired, clustered data, and of the mode-B corrected rate with replicas (its
        Wald interval against the cluster-robust one); ADEMP write-up in DIR/report.md, with its figures and
        tables in DIR/report.html.

        Example: escalation study differences --out results/differences --smoke
        """,
        outputs="design.csv, run.json, differences.csv, mode_b.csv, the summary tables (CSV and Markdown), figures, "
                "report.md and report.html",
        smoke="A small grid and 150 (differences) or 300 (mode B) data sets per cell (seconds).",
        nsim="default 2000, in both parts; at least 2", least_nsim=2, seed=DIFFERENCES_SEED, seed_unit="cell",
        summary=lambda tables, out, seconds, smoke: (
            f"differences study: {tables['differences']['cell'].nunique()} difference cells and "
            f"{tables['mode_b']['cell'].nunique()} mode-B cells in {seconds:.1f} s -> {out / 'summary.md'}; "
            f"{_findings(out, smoke)}"),
        own={"method": "f(totals_a, sizes_a, totals_b, sizes_b, confidence) -> (low, high) of p_b - p_a, each array "
                       "(data sets, scenarios), the bounds (data sets,)",
             "grid": "lists p, rho, scenarios, replicas, and optionally p_b (else p_b = p), between, estimand "
                     "(difference, mode_b) and nsim"},
        rerun="Rerun each difference cell where an interval's coverage lies within 2 MCSE of the 0.93 floor (the "
              "rule escalation compare's words read) until that MCSE is at most 0.003 (about 7,500 data sets): on by "
              "default, off with --smoke."),
    Study(
        name="capacity", run="run_capacity_study",
        short_help="The inverted U of oversight, and the queue formulas against SimPy.",
        help="""Simulated assistants that trade under- against over-escalation through one threshold t (t = 0
        escalates nothing, t = 1 everything), each measured with the clustered Wilson-Kish intervals, put
        through the capacity model (escalation capacity) for R = 1, 2, 3, 5, 8 reviewers at an assumed 60
        conversations an hour, ESC share 0.1 and 4 minutes a review: realised protection (1 - p_u) g(rho)
        against the escalation rate, the best threshold t* per R, how often the measured rates find it, and
        how far pi and the protection agree. Then Erlang C and Allen-Cunneen against a SimPy simulation of
        the same queue (Poisson, bursty and deterministic-review queues, few reviewers, high load), with
        where they fail (findings in DIR/report.md, figures and tables in DIR/report.html).

        Example: escalation study capacity --out results/capacity --smoke
        """,
        outputs="design.csv, run.json, the tables (protection, best, agreement, rates, validation as CSV and "
                "Markdown), figures, report.md and report.html",
        smoke="11 thresholds, 40 data sets and four small queue configurations (seconds).",
        nsim="measured data sets of each assistant's threshold sweep, in cells of at most 50; default 400, 40 with "
             "--smoke; at least 2",
        least_nsim=2, seed=CAPACITY_SEED, seed_unit="cell",
        summary=lambda tables, out, seconds, smoke: (
            "capacity study in {:.1f} s{} -> {}; {}".format(
                seconds, "" if smoke else " ({})".format(", ".join(
                    f"R={r}: t*={t:g}" for r, t in zip(tables["best"]["reviewers"], tables["best"]["t_star"]))),
                out, _findings(out, smoke)))),
    Study(
        name="gate", run="run_gate_study",
        short_help="Wrong passes, wrong fails and samples to a decision of escalation gate.",
        help="""Simulates the default suite's p_u (288 ESC scenarios, one conversation a scenario an epoch, up to 4
        epochs; and 48 scenarios) at and around the threshold 0.05 (true p_u 0.02 to 0.08, rho 0, 0.2, 0.5) and
        gates each run on p_u <= 0.05 by three rules: fixed (decide once after 4 epochs at 95%), naive (look after
        each epoch at 95%, stop at the first decided look) and sequential (escalation gate --look K --of 4:
        O'Brien-Fleming-type levels). Reports each rule's probability of a wrong pass and of a wrong fail, with
        MCSE, and the expected epochs, samples and input tokens to a decision; checked against exact values
        (findings in DIR/report.md, figure and tables in DIR/report.html).

        Example: escalation study gate --out results/gate --smoke
        """,
        outputs="design.csv, run.json, cells.csv, the tables (rules, summary, levels, validation as CSV and Markdown), "
                "the figure gate_rules, report.md and report.html",
        smoke="Three truths, rho 0.2, K 288 and 48, 200 data sets a cell (seconds).",
        nsim="default 4000; 200 with --smoke; at least 2", least_nsim=2, seed=GATE_SEED, seed_unit="cell",
        summary=_gate_summary,
        extra=_GATE_OPTIONS),
    Study(
        name="warnings", run="run_warnings_study",
        short_help="Where the intervals' at-risk warning fires, and coverage warned and silent.",
        help="""Draws the coverage study's default design (1800 cells of the beta-binomial model), computes every
        interval of the cluster sums and the at-risk trigger of escalation score's warnings (the rarer outcome
        in fewer scenarios than a threshold per method and design group), and reports per method and group the
        share warned, the coverage among the warned and the silent data sets (mean and lowest cell, MCSE), the
        share of the misses warned, and the thresholds the run supports (findings in DIR/report.md).

        Example: escalation study warnings --out results/warnings --smoke
        """,
        outputs="design.csv, run.json, spreads.csv, cells.csv, the tables groups, advice and calibration (CSV "
                "and Markdown), report.md and report.html",
        smoke="The coverage study's small grid (40 cells), 200 data sets a cell (seconds).",
        nsim="default 2000; 200 with --smoke; at least 1", least_nsim=1, seed=WARNINGS_SEED, seed_unit="cell",
        summary=lambda tables, out, seconds, smoke: (
            f"warnings study: {tables['cells']['cell'].nunique()} cells in {seconds:.1f} s -> "
            f"{out / 'groups.md'}; {_findings(out, smoke)}")),
)


def run_study(name: str, out, **options):
    """The study ``name`` of :data:`STUDIES`, its run function imported from :mod:`escalation.studies` when it
    runs (tests replace this function)."""
    import escalation.studies

    study = next(s for s in STUDIES if s.name == name)
    return getattr(escalation.studies, study.run)(out, **options)


def _parameters(study: Study) -> list[inspect.Parameter]:
    """The command's options, in the order of its ``--help``."""
    def option(name, annotation, default):
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
    params = [option("out", Path, out_option(study.outputs)),
              option("smoke", bool, typer.Option(False, "--smoke", help=study.smoke)),
              option("nsim", Optional[int], nsim_option(study.nsim))]
    if study.old_nsim:
        params.append(option("reps", Optional[int], typer.Option(None, study.old_nsim, metavar="N", hidden=True,
                                                                  help="Old name of --nsim.")))
    params += [option("n_jobs", int, n_jobs_option()),
               option("seed", int, seed_option(study.seed, study.seed_unit)),
               option("force", bool, force_option()),
               option("backend", Backend, backend_option()),
               option("scheduler", Optional[str], scheduler_option())]
    params += [option(name, annotation, default) for name, (annotation, default) in study.extra.items()]
    if "method" in study.own:
        params.append(option("method", Optional[list[str]], method_option(study.own["method"])))
    if "grid" in study.own:
        params.append(option("grid", Optional[Path], grid_option(study.own["grid"])))
    if "generator" in study.own:
        params += [option("generator", Generator, generator_option()),
                   option("from_run", Optional[Path], from_run_option())]
    if study.rerun:
        params.append(option("rerun", Optional[bool], typer.Option(None, "--rerun/--no-rerun", help=study.rerun)))
    return params


def _command(study: Study) -> Callable[..., None]:
    """The command function of ``study``, with the signature typer reads its options from."""
    where = f"escalation study {study.name}"

    def command(*, out: Path, smoke: bool, nsim: Optional[int], n_jobs: int, seed: int, force: bool,
                backend: Backend, scheduler: Optional[str], reps: Optional[int] = None,
                method: Optional[list[str]] = None, grid: Optional[Path] = None,
                generator: Generator = Generator.beta_binomial, from_run: Optional[Path] = None,
                rerun: Optional[bool] = None, **extra: Any) -> None:
        if reps is not None:
            if nsim is not None:
                raise InputError(f"give --nsim only ({study.old_nsim} is its old name)", source=where)
            typer.echo(f"notice: {study.old_nsim} is now called --nsim", err=True)
            nsim = reps
        check_count(nsim, study.least_nsim, source=where)
        options = study_arguments(out, backend, scheduler, n_jobs=n_jobs, seed=seed, force=force, source=where)
        methods = own_methods(method)
        # a researcher's options reach the run function only when given (a test's stand-in takes none)
        options |= {name: value for name, value in (("methods", methods), ("grid", grid), ("from_run", from_run),
                                                    ("rerun", rerun)) if value is not None}
        if generator is not Generator.beta_binomial:
            options["generator"] = generator.value
        options |= {name: value.value if isinstance(value, Enum) else value for name, value in extra.items()}
        clock = time.perf_counter()
        tables = run_study(study.name, out, smoke=smoke, nsim=nsim, n_jobs=n_jobs, seed=seed, progress=True,
                           **options)
        console().print(study.summary(tables, out, time.perf_counter() - clock, smoke), soft_wrap=True)  # paths whole

    parameters = _parameters(study)
    # a function takes any attribute, and inspect.signature() reads this one; mypy knows no __signature__
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = command.__qualname__ = study.name.replace("-", "_")
    command.__doc__ = inspect.cleandoc(study.help)
    return command


def _old_name(study: Study, old: str, command: Callable[..., None]) -> Callable[..., None]:
    """``old``, the command's old name: the same options, with a notice."""
    @functools.wraps(command)  # the same options: typer reads them through __wrapped__
    def renamed(**options) -> None:
        typer.echo(f"note: `escalation study {old}` is now `escalation study {study.name}`", err=True)
        command(**options)

    renamed.__doc__ = f"Old name of `escalation study {study.name}`."
    return renamed


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add every study of :data:`STUDIES` (and its old names, hidden) to the ``escalation study`` sub-app."""
    for study in STUDIES:
        command = _command(study)
        study_app.command(study.name, epilog=RESUME_HELP, short_help=study.short_help)(command)
        for old in study.old_names:
            study_app.command(old, hidden=True, epilog=RESUME_HELP)(_old_name(study, old, command))
