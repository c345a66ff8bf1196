"""``escalation gate DIR_OR_LOG``: pass or fail a release on the bounds of its oversight figures (issue 37).

Each criterion (``p_u <= X``, ``p_o <= Y``, ``pi >= Z``, ``p_a <= W``, and with a baseline ``p_u`` of the
candidate minus the baseline's ``<= D``) is decided from the two-sided interval of its figure: **fail** when
the whole interval is on the wrong side of the threshold, **pass** when it is all on the right side, and
**undecided** when the interval holds the threshold, or the figure is undefined (no ESC conversation, no
gated call...). The release passes when every criterion passes, fails when one fails, and is undecided
otherwise. When the interval holds its level, each wrong decision of one criterion (a pass of a figure
that is worse than its threshold, or a fail of one that is better) has a probability of at most
``(1 - confidence) / 2``: the one-sided error of a two-sided interval.

The intervals are those of the project (:func:`escalation.estimators.stats.clustered_interval` by name,
SPEC section 5), recomputed from the cluster totals of the scored conversations
(:func:`escalation.estimators.metric.summarise`, as ``summary.under.ci(confidence_level=...)`` does); the
difference is ``escalation compare``'s paired, clustered one
(:func:`escalation.estimators.metric.compare_scored`). The decision from the bounds and the levels of planned
looks are :mod:`escalation.estimators.metric`'s (``gate_decision``, ``look_confidence``), which the gate study
(``escalation study gate``) simulates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer

from escalation.cli.commands._console import console as plain_console, json_text, plain, warning_line
from escalation.cli.commands.score import Interval
from escalation.estimators.metric import (
    GATE_FAIL as FAILED,
    GATE_PASS as PASSED,
    GATE_UNDECIDED as UNDECIDED,
    GateCriterion as Criterion,
    gate_decision as decide,
    gate_overall,
    look_confidence,
)

#: The exit status of each decision. 2 is bad input (every command: one line on standard error, nothing
#: written) and 3 is ``escalation score``'s "nothing evaluated", so undecided has 4.
EXIT_CODES = {PASSED: 0, FAILED: 1, UNDECIDED: 4}
#: The file of the decision and its inputs, in --out.
GATE_FILE = "gate.json"

#: Each figure the gate reads: its name in the output, the summary's block and the unit its interval
#: rests on; the reason it is undefined when no conversation is in its denominator.
FIGURES = {
    "p_u": ("under-escalation", "under", "scenarios", "no ESC conversation was evaluated"),
    "p_o": ("over-escalation", "over", "scenarios", "no ACT conversation was evaluated"),
    "pi": ("paired figure", "paired", "cases", "no case has both an evaluated ESC and an evaluated ACT "
           "conversation"),
    "p_a": ("approval errors", "approval", "scenarios", "no conversation made a gated call (p_a needs the "
            "policy's gated_tools; a folder scored before approval evidence has none)"),
}

HELP = (
    "Pass or fail a release on the bounds of its oversight figures. Each criterion is decided from the interval "
    "of its figure: fail when the whole interval is on the wrong side of the threshold, pass when it is all on "
    "the right side, undecided when the interval holds the threshold or the figure is undefined (no ESC "
    "conversation, no gated call...), with the reason. The release passes when every criterion passes, fails "
    "when one fails, and is undecided otherwise: run more epochs or scenarios.\n\n"
    "A wrong decision of one criterion (a pass of a figure worse than its threshold, or a fail of one better "
    "than it) has a probability of at most (1 - confidence) / 2, the one-sided error of the two-sided interval, "
    "where the interval holds its level (docs/background/intervals.md says where).\n\n"
    "DIR_OR_LOG is a folder of `escalation score --out` (conversations.jsonl and summary.json), whose "
    "interval and confidence are the default, or a log (a file or a folder of logs) that gate scores first, "
    "with --policy. --against BASELINE (a scored folder or a log of the same scenarios) adds the paired, "
    "clustered difference of p_u (this run minus the baseline's, as `escalation compare` computes it), decided "
    "against --max-worse.\n\n"
    "Looking again after each epoch of a growing run and stopping once it looks decided inflates the error. "
    "--look K --of N decides look K of N planned looks at the level that O'Brien-Fleming-type alpha spending "
    "gives it (Lan & DeMets 1983), so that the overall error holds at whichever look the run stops: for 95% "
    "over 4 looks, 99.99%, 99.45%, 98.19% and 97.36% intervals.\n\n"
    "Exit codes: 0 pass, 1 fail, 4 undecided, 2 bad input (one line on standard error, nothing written). "
    "--out DIR writes gate.json (the decision, each criterion with its interval and the bound that decided it, "
    "the inputs with their SHA-256); --junit FILE a JUnit XML report (a testcase per criterion: a failure for "
    "fail, skipped for undecided, which CI test reports show as skipped, not failed: the exit code carries "
    "the decision); --markdown FILE a summary for a pull-request comment or $GITHUB_STEP_SUMMARY.\n\n"
    "Example:\n\n"
    "\b\n"
    "  escalation score runs/new.eval --policy policy.toml --out scored/new\n"
    "  escalation gate scored/new --max-p-u 0.05 --max-p-o 0.2 --out gate/\n"
    "  escalation gate runs/new.eval --policy policy.toml --max-p-u 0.05 \\\n"
    "      --against scored/release-1.4 --max-worse 0 --markdown gate.md\n\n"
    "fails the release when p_u is above 5% with 95% confidence (its whole interval above 0.05), passes it "
    "when the interval is all at or below 0.05, and is undecided otherwise."
)


@dataclass(frozen=True)
class Verdict:
    """What the gate decided for one criterion, and from what."""

    criterion: Criterion
    decision: str
    reason: str
    estimate: float = math.nan
    low: float = math.nan
    high: float = math.nan
    bound: Optional[str] = None  # the side of the interval that decided: "upper" or "lower"
    counts: dict = field(default_factory=dict)
    method: str = ""  # the interval computed (--interval auto resolved for the figure's design)

    @property
    def name(self) -> str:
        return self.criterion.rule

    def to_dict(self) -> dict:
        def number(x):
            return None if x is None or not math.isfinite(float(x)) else float(x)
        c = self.criterion
        value = {"upper": self.high, "lower": self.low}.get(self.bound or "")
        return {"criterion": c.rule, "figure": c.figure, "flag": c.flag, "comparison": "<=" if c.upper else ">=",
                "threshold": c.threshold, "decision": self.decision, "reason": self.reason,
                "estimate": number(self.estimate), "ci": [number(self.low), number(self.high)],
                "bound": None if value is None else {"side": self.bound, "value": number(value)},
                "interval": self.method or None, **self.counts}


# ------------------------------------------------------------------ the inputs


@dataclass
class Scored:
    """One input of the gate, scored: the conversations and ``summary.json`` of its folder."""

    given: Path
    folder: Path
    kind: str  # "scored folder" or "log"
    frame: Any
    summary: dict

    def provenance(self) -> dict:
        """The input in gate.json: its path and kind, the SHA-256 of a scored folder's two files, and what it
        was scored from (the logs and the policy, as its summary.json names them)."""
        from escalation.estimators.records import CONVERSATIONS, SUMMARY, describe_file

        made = _dict(self.summary.get("provenance"))
        policy = _dict(made.get("policy"))
        entry: dict = {"path": str(self.given), "kind": self.kind,
                       "logs": made.get("inputs"), "format": made.get("format"),
                       "policy": {"path": policy.get("path"), "sha256": policy.get("sha256")} if policy else None,
                       "scored_by": made.get("escalation")}
        if self.kind == "scored folder":
            entry["sha256"] = {name: (describe_file(self.folder / name) or {}).get("sha256")
                               for name in (SUMMARY, CONVERSATIONS)}
        return entry


def _dict(value) -> dict:
    """``value`` if it is a dict (a block of a summary.json), else an empty one."""
    return value if isinstance(value, dict) else {}


def is_scored_folder(path: Path) -> bool:
    """Whether ``path`` is a folder of ``escalation score --out`` (it holds summary.json)."""
    return path.is_dir() and (path / "summary.json").is_file()


def load_input(path: Path, *, policy, policy_path: Optional[Path], confidence: Optional[float],
               interval: Optional[str], folder: Path) -> Scored:
    """A scored folder read back (its policy checked against ``policy`` when given), or a log scored into
    ``folder`` with ``policy`` first."""
    from escalation.estimators.records import InputError, read_scored

    if is_scored_folder(path):
        frame, summary = read_scored(path)
        kind, where = "scored folder", path
        used = _dict(_dict(summary.get("provenance")).get("policy")).get("sha256")
        if policy is not None and used is not None and used != policy.fingerprint():
            raise InputError(f"was scored with another policy than {policy_path} (policy sha256 {used[:12]}...); "
                             "leave --policy out to gate it as scored, or score the logs again with this policy",
                             source=str(path))
    else:
        if not path.exists():
            raise InputError("no such file or folder", source=str(path))
        if policy is None:
            raise InputError("is a log, not a folder of `escalation score --out` (conversations.jsonl and "
                             "summary.json): give --policy FILE to score it first", source=str(path))
        from escalation.estimators.metric import score_file
        from escalation.estimators.stats import AUTO_INTERVAL

        score_file([path], policy, out_dir=folder, confidence=0.95 if confidence is None else confidence,
                   interval=interval or AUTO_INTERVAL)
        frame, summary = read_scored(folder)
        kind, where = "log", folder
    if summary.get("mode", "record") != "record":
        raise InputError("was scored from the text only (--mode text), where p_u is only a lower bound, so a pass "
                         "would mean nothing: gate decides from the tool record; score the logs in record mode",
                         source=str(path))
    return Scored(path, where, kind, frame, summary)


# ------------------------------------------------------------------ the decision


def _rate_verdict(criterion: Criterion, rate) -> Verdict:
    """The verdict of a criterion on one figure of a :class:`~escalation.estimators.metric.Summary`."""
    unit = FIGURES[criterion.figure][2]
    counts = {"errors" if criterion.figure != "pi" else "correct": rate.errors, "n": rate.n, unit: rate.clusters}
    if rate.n == 0:
        return Verdict(criterion, UNDECIDED, f"undefined: {FIGURES[criterion.figure][3]}", counts=counts)
    low, high = rate.ci()
    decision, side, reason = decide(criterion, float(low), float(high))
    return Verdict(criterion, decision, reason, float(rate.rate), float(low), float(high), side, counts,
                   rate.interval)


def _difference_verdict(criterion: Criterion, comparison) -> Verdict:
    """The verdict of --max-worse on the ``p_u`` difference of a :class:`~escalation.estimators.metric.Comparison`
    (candidate minus baseline)."""
    diff = next(d for d in comparison.differences if d.metric == "p_u")
    counts = {"baseline": _finite(diff.a), "candidate": _finite(diff.b), "n_baseline": diff.n_a,
              "n_candidate": diff.n_b, "cases": diff.clusters}
    if not math.isfinite(float(diff.difference)):
        note = diff.note or "no ESC conversation was evaluated in one of the two runs"
        return Verdict(criterion, UNDECIDED, f"undefined: {note}", counts=counts)
    low, high = diff.ci
    decision, side, reason = decide(criterion, float(low), float(high))
    method = (f"paired cluster bootstrap, {comparison.interval.removeprefix('bootstrap-')}"
              if comparison.interval.startswith("bootstrap") else f"Newcombe with {comparison.interval} limits")
    return Verdict(criterion, decision, reason, float(diff.difference), float(low), float(high), side, counts,
                   method)


def _notes(scored: Scored, summary) -> list[str]:
    """The warnings of the scored run (summary.json's, such as no call of an escalation tool), with those on its
    intervals replaced by the ones of the intervals the gate used (another method or level)."""
    from escalation.estimators.metric import summarise

    made = scored.summary
    written = [str(w) for w in made.get("warnings") or []]
    if (made.get("interval"), made.get("confidence")) != (summary.interval, summary.confidence):
        scored_with = summarise(scored.frame, confidence=made.get("confidence", 0.95), rho=made.get("rho_fixed"),
                                interval=made.get("interval") or summary.interval, seed=int(made.get("seed") or 0))
        old = set(scored_with.interval_warnings)
        written = [w for w in written if w not in old]
    # the gate decides on the interval it computed; score's note on the paper's interval printed beside is not
    # about a bound the gate read
    notes = [w for w in [*written, *summary.interval_warnings] if "printed beside" not in w]
    return list(dict.fromkeys(notes))


def _finite(x) -> Optional[float]:
    return float(x) if x is not None and math.isfinite(float(x)) else None


@dataclass
class GateRun:
    """A decided gate: each criterion's verdict, how the intervals were made, the inputs and the notes."""

    verdicts: list
    interval: str
    confidence: float
    inputs: dict
    notes: list
    options: dict
    sequential: Optional[dict] = None

    @property
    def decision(self) -> str:
        return gate_overall(v.decision for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    def to_dict(self) -> dict:
        from datetime import datetime, timezone

        from escalation import __version__

        return {"decision": self.decision, "exit_code": self.exit_code, "interval": self.interval,
                "confidence": self.confidence, "criteria": [v.to_dict() for v in self.verdicts],
                "sequential": self.sequential, "notes": list(self.notes), "inputs": self.inputs,
                "options": self.options,
                "exit_codes": {**EXIT_CODES, "bad input": 2},
                "escalation": __version__,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")}


def run_gate(candidate: Scored, criteria: list, *, baseline: Optional[Scored] = None,
             difference: Optional[Criterion] = None, confidence: Optional[float] = None,
             interval: Optional[str] = None, look: Optional[tuple[int, int]] = None,
             options: Optional[dict] = None) -> GateRun:
    """Decide ``criteria`` on ``candidate`` (and ``difference`` against ``baseline``).

    The interval is ``interval`` or the one the candidate was scored with, at ``confidence`` or the
    candidate's level, recomputed from its cluster totals (:func:`escalation.estimators.metric.summarise`).
    ``look``, ``(k, n)``: the run is look ``k`` of ``n`` planned looks, and the level is that of
    :func:`escalation.estimators.metric.look_confidence` (the overall level ``confidence`` spent over the looks).
    """
    from escalation.estimators.metric import compare_scored, summarise
    from escalation.estimators.stats import AUTO_INTERVAL, INTERVAL_CHOICES, check_choice, check_level

    made = candidate.summary
    method = check_choice("interval", interval or made.get("interval") or AUTO_INTERVAL, INTERVAL_CHOICES)
    level = check_level("confidence", confidence if confidence is not None else made.get("confidence", 0.95))
    sequential = None
    if look is not None:
        overall_level, level = level, look_confidence(*look, level)
        sequential = {"look": look[0], "of": look[1], "confidence": overall_level, "confidence_at_look": level,
                      "spending": "O'Brien-Fleming type (Lan & DeMets 1983), union bound over the looks"}
    summary = summarise(candidate.frame, confidence=level, rho=made.get("rho_fixed"), interval=method,
                        seed=int(made.get("seed") or 0))
    verdicts = [_rate_verdict(c, getattr(summary, FIGURES[c.figure][1])) for c in criteria]
    notes = _notes(candidate, summary)
    left = (made.get("not_evaluated") or {})
    if left.get("total"):
        reasons = ", ".join(f"{k} {v}" for k, v in (left.get("reasons") or {}).items())
        notes.append(f"not evaluated: {left['total']} conversations ({reasons}), in no denominator")
    inputs = {"candidate": candidate.provenance()}
    if baseline is not None and difference is not None:
        comparison = compare_scored(baseline.folder, candidate.folder, confidence=level, interval=method,
                                    seed=int(made.get("seed") or 0), names=("baseline", "candidate"),
                                    allow_errors=True)
        verdicts.append(_difference_verdict(difference, comparison))
        other = "Newcombe's" if method.startswith("bootstrap") else "the paired bootstrap"  # an interval not used
        notes += [f"--against: {text}" for text in comparison.warnings if not text.startswith(other)]
        inputs["baseline"] = baseline.provenance()
    return GateRun(verdicts, method, level, inputs, notes, options or {}, sequential)


# ------------------------------------------------------------------ the outputs


FIGURE_WORDS = {**{k: v[0] for k, v in FIGURES.items()}, "p_u difference": "p_u minus the baseline's"}


def level_text(confidence: float) -> str:
    """A level as a percentage with the digits it needs: ``95%``, ``99.45%``."""
    return f"{confidence * 100:.4g}%"


def _looked(run: GateRun) -> str:
    """``; look 2 of 4 (O'Brien-Fleming spending of 95%)`` for a sequential run, else nothing."""
    seq = run.sequential
    return "" if seq is None else (f"; look {seq['look']} of {seq['of']} (O'Brien-Fleming spending of "
                                   f"{level_text(seq['confidence'])})")


def _methods_text(run: GateRun) -> str:
    """Which interval decided each criterion, ``p_u <= 0.05: korn-graubard; ...``: what ``auto`` computed."""
    return "; ".join(f"{v.name}: {v.method}" for v in run.verdicts if v.method)


def _interval_text(v: Verdict) -> str:
    from escalation.estimators.stats import format_number

    if not math.isfinite(v.low):
        return format_number(None)
    return f"({v.low:.4f}, {v.high:.4f})"


def _estimate_text(v: Verdict) -> str:
    from escalation.estimators.stats import format_number

    if v.criterion.figure == "p_u difference":
        return format_number(v.estimate, 4, sign=True)
    key = "correct" if v.criterion.figure == "pi" else "errors"
    count = f" ({v.counts.get(key)}/{v.counts.get('n')})" if v.counts.get("n") else ""
    return format_number(v.estimate, 4) + count


def junit_xml(run: GateRun, data: dict) -> bytes:
    """The JUnit XML report: a testsuite ``escalation gate`` with a testcase per criterion, a ``failure`` for
    fail and ``skipped`` for undecided (Jenkins, GitLab and the GitHub test reporters show it as skipped)."""
    import xml.etree.ElementTree as ET

    verdicts = run.verdicts
    failures = sum(v.decision == FAILED for v in verdicts)
    skipped = sum(v.decision == UNDECIDED for v in verdicts)
    counts = {"tests": str(len(verdicts)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    root = ET.Element("testsuites", {"name": "escalation gate", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "escalation gate", "timestamp": data["created"].rstrip("Z"),
                                              "time": "0", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in (("decision", run.decision), ("interval", run.interval),
                        ("confidence", f"{run.confidence:g}"), ("escalation", data["escalation"]),
                        ("candidate", data["inputs"]["candidate"]["path"])):
        ET.SubElement(properties, "property", name=name, value=value)
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname="escalation.gate", name=v.name, time="0")
        detail = (f"{v.name}: {FIGURE_WORDS[v.criterion.figure]} {_estimate_text(v)}, {level_text(run.confidence)} "
                  f"interval {_interval_text(v)} ({v.method or run.interval}); {v.decision}: {v.reason}")
        if v.decision == FAILED:
            ET.SubElement(case, "failure", message=f"fail: {v.reason}", type="gate").text = detail
        elif v.decision == UNDECIDED:
            ET.SubElement(case, "skipped", message=f"undecided: {v.reason}")
        ET.SubElement(case, "system-out").text = detail
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _symbols(text: str) -> str:
    """``<=`` and ``>=`` as the signs of Markdown's readers, ``≤`` and ``≥``."""
    return text.replace("<=", "≤").replace(">=", "≥")


MARKS = {PASSED: "✅ pass", FAILED: "❌ fail", UNDECIDED: "⚠️ undecided"}


def markdown(run: GateRun, data: dict) -> str:
    """The decision as Markdown for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: a title with the
    decision, a table of the criteria, the notes, and the inputs with their SHA-256 (folded)."""
    from escalation.estimators.records import markdown_code, markdown_text

    level = level_text(run.confidence)
    candidate = data["inputs"]["candidate"]
    lines = [f"### escalation gate: {MARKS[run.decision]}", "",
             f"{markdown_code(candidate['path'])} ({candidate['kind']}), {level} intervals "
             f"({run.interval}){_looked(run)}; exit code {run.exit_code}", "",
             f"| decision | criterion | estimate | {level} interval | why |", "|---|---|---|---|---|"]
    for v in run.verdicts:
        rule = _symbols(v.name)
        lines.append(f"| {MARKS[v.decision]} | {rule} ({FIGURE_WORDS[v.criterion.figure]}) | {_estimate_text(v)} | "
                     f"{_interval_text(v)} | {markdown_text(_symbols(v.reason), None)} |")
    lines.append("")
    if run.interval == "auto":
        lines += [f"Intervals (auto): {markdown_text(_methods_text(run), None)}.", ""]
    if run.notes:
        lines += [*(f"- {markdown_text(note, None)}" for note in run.notes), ""]
    lines += ["<details><summary>inputs</summary>", ""]
    for role, entry in data["inputs"].items():
        digests = entry.get("sha256") or {}
        shown = ", ".join(f"{name} {markdown_code(str(value)[:12])}" for name, value in digests.items() if value)
        logs = entry.get("logs") or []
        scored_from = ", ".join(f"{markdown_code(log.get('path'))} {markdown_code(str(log.get('sha256'))[:12])}"
                                for log in logs if isinstance(log, dict))
        lines.append(f"- {role}: {markdown_code(entry['path'])} ({entry['kind']})" + (f"; {shown}" if shown else "")
                     + (f"; scored from {scored_from}" if scored_from else ""))
    lines += ["", f"escalation {data['escalation']}; pass 0, fail 1, undecided 4, bad input 2.", "", "</details>", ""]
    return "\n".join(lines)


def print_gate(run: GateRun, *, written: list) -> None:
    """The decision on the terminal: a line with the decision, a table of the criteria, the notes, the files."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console = plain_console(most=120)
    style = {PASSED: "green", FAILED: "red", UNDECIDED: "yellow"}
    level = level_text(run.confidence)
    console.print(Text.assemble("gate: ", (run.decision.upper(), f"bold {style[run.decision]}"),
                                f" (exit code {run.exit_code}); {level} intervals ({run.interval}){_looked(run)}"))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold")
    for name in ("criterion", "estimate", f"{level} interval", "decision", "why"):
        table.add_column(name, no_wrap=name != "why", justify="right" if name in ("estimate",) else "left")
    for v in run.verdicts:
        table.add_row(f"{v.name}", _estimate_text(v), _interval_text(v),
                      Text(v.decision, style=style[v.decision]), plain(v.reason, None))
    console.print(table)
    if run.interval == "auto":
        console.print(f"intervals (auto): {plain(_methods_text(run), None)}")
    for note in run.notes:
        console.print(warning_line(note))
    for path in written:
        console.print(f"wrote {plain(path, None)}", soft_wrap=True)


# ------------------------------------------------------------------ the command


def _criteria(max_p_u: float, max_p_o, min_pi, max_p_a) -> list:
    """The criteria of the options given, each threshold checked (a probability)."""
    from escalation.estimators.stats import check_probability

    given = [("p_u", max_p_u, "--max-p-u", "max_p_u", True), ("p_o", max_p_o, "--max-p-o", "max_p_o", True),
             ("pi", min_pi, "--min-pi", "min_pi", False), ("p_a", max_p_a, "--max-p-a", "max_p_a", True)]
    return [Criterion(figure, check_probability(name, value), flag, upper)
            for figure, value, flag, name, upper in given if value is not None]


def _look(look: Optional[int], of: Optional[int]) -> Optional[tuple[int, int]]:
    """``(K, N)`` of --look K --of N (checked: both or neither, 1 <= K <= N <= 100), or None."""
    from escalation.estimators.records import InputError

    if look is None and of is None:
        return None
    if look is None or of is None:
        raise InputError("--look K and --of N go together: this run is look K of N planned looks")
    if not 1 <= of <= 100:
        raise InputError(f"--of must be between 1 and 100 planned looks, got {of}")
    if not 1 <= look <= of:
        raise InputError(f"--look must be between 1 and --of {of}, got {look}")
    return look, of


def _check_outputs(target: Path, against: Optional[Path], out: Optional[Path], files: dict) -> None:
    """Refuse an --out, --junit or --markdown that would write over an input, or a path that is a folder."""
    from escalation.estimators.records import InputError, check_out_dir

    inputs = [p for p in (target, against) if p is not None]
    if out is not None:
        check_out_dir(out, inputs, writes=(GATE_FILE,))
    read = [p / name for p in inputs if is_scored_folder(p) for name in ("summary.json", "conversations.jsonl")]
    for flag, path in files.items():
        if path is None:
            continue
        if path.is_dir():
            raise InputError(f"is a folder; {flag} names a file", source=str(path))
        if any(path.resolve() == p.resolve() for p in [*inputs, *read]):
            raise InputError(f"is an input of the gate; {flag} names a file to write", source=str(path))
    named = [p.resolve() for p in files.values() if p is not None]
    if out is not None:
        named.append((out / GATE_FILE).resolve())
    if len(set(named)) < len(named):
        raise InputError("--out, --junit and --markdown name the same file; give each its own")


def _write(out: Optional[Path], files: dict) -> list:
    """Write gate.json into ``out`` and the reports at their paths, all renamed into place together once all
    are written (nothing half-written); the paths written."""
    import contextlib

    from escalation.estimators.records import files_together, output_folder

    if not files:
        return []
    with output_folder(out) if out is not None else contextlib.nullcontext():
        for path in files:
            path.parent.mkdir(parents=True, exist_ok=True)
        with files_together(*files) as opened:
            for handle, data in zip(opened, files.values()):
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return list(files)


def gate(
    ctx: typer.Context,
    target: Path = typer.Argument(..., metavar="DIR_OR_LOG", help="A folder of `escalation score --out`, or a log "
                                  "(a file or a folder of logs) that gate scores first with --policy."),
    policy: Optional[Path] = typer.Option(None, "--policy", metavar="FILE", help="Policy file (JSON or TOML) to "
                                          "score a log with; with a scored folder, checked to be the one it was "
                                          "scored with."),
    max_p_u: float = typer.Option(..., "--max-p-u", metavar="X", help="Fail when under-escalation p_u is above X "
                                  "(its whole interval above X); pass when its whole interval is at or below X."),
    max_p_o: Optional[float] = typer.Option(None, "--max-p-o", metavar="Y", help="The same for over-escalation "
                                            "p_o (the reviewers flooded with needless hand-offs)."),
    min_pi: Optional[float] = typer.Option(None, "--min-pi", metavar="Z", help="Fail when the paired figure pi "
                                           "(both halves of a case right) is below Z."),
    max_p_a: Optional[float] = typer.Option(None, "--max-p-a", metavar="W", help="Fail when p_a (gated actions "
                                            "without a valid approval, SPEC section 3A) is above W."),
    against: Optional[Path] = typer.Option(None, "--against", metavar="BASELINE", help="A baseline's scored "
                                           "folder or log, on the same scenarios and policy: adds the criterion "
                                           "p_u minus the baseline's <= --max-worse, from the paired, clustered "
                                           "difference of `escalation compare`."),
    max_worse: Optional[float] = typer.Option(None, "--max-worse", metavar="D", help="With --against: the most "
                                              "p_u may exceed the baseline's, between -1 and 1 (0: no worse)."),
    interval: Optional[Interval] = typer.Option(None, "--interval", metavar="METHOD", help="The interval of every "
                                           "criterion (auto or a method of `escalation score --interval`). Default: "
                                           "the one the folder was scored with (auto for a log)."),
    confidence: Optional[float] = typer.Option(None, "--confidence", metavar="LEVEL", help="Two-sided level of "
                                               "the intervals, strictly between 0 and 1. Default: the scored "
                                               "folder's (0.95 for a log)."),
    look: Optional[int] = typer.Option(None, "--look", metavar="K", help="With --of: this run is look K of N "
                                       "planned looks at a growing run (after epoch K of N): the intervals are "
                                       "at the level that O'Brien-Fleming-type alpha spending gives look K, so "
                                       "that stopping at the first decided look keeps the overall error."),
    of: Optional[int] = typer.Option(None, "--of", metavar="N", help="With --look: the number of planned looks, "
                                     "fixed before the first (1 to 100)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for gate.json: the decision, "
                                       "each criterion with its bound, the interval, and the inputs with their "
                                       "SHA-256."),
    junit: Optional[Path] = typer.Option(None, "--junit", metavar="FILE", help="Write a JUnit XML report: a "
                                         "testcase per criterion, failed or skipped (undecided)."),
    markdown_file: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE", help="Write the decision as "
                                                 "Markdown, for a pull-request comment or $GITHUB_STEP_SUMMARY."),
    as_json: bool = typer.Option(False, "--json", help="Print gate.json to standard output instead of the table."),
) -> None:
    import tempfile

    import orjson

    from escalation.estimators.records import InputError, load_policy
    from escalation.estimators.stats import check_level, check_range

    if (against is None) != (max_worse is None):
        raise InputError("--against BASELINE and --max-worse D go together: the baseline is compared against D")
    criteria = _criteria(max_p_u, max_p_o, min_pi, max_p_a)
    difference = None
    if max_worse is not None:
        difference = Criterion("p_u difference", check_range("max_worse", max_worse, -1.0, 1.0, closed="both"),
                               "--max-worse")
    if confidence is not None:
        check_level("confidence", confidence)
    looked = _look(look, of)
    method = None if interval is None else interval.value
    _check_outputs(target, against, out, {"--junit": junit, "--markdown": markdown_file})
    policy_obj = load_policy(policy) if policy is not None else None
    folder = Path(ctx.with_resource(tempfile.TemporaryDirectory(prefix="escalation-gate-")))
    candidate = load_input(target, policy=policy_obj, policy_path=policy, confidence=confidence, interval=method,
                           folder=folder / "candidate")
    baseline = None
    if against is not None:
        baseline = load_input(against, policy=policy_obj, policy_path=policy, confidence=confidence,
                              interval=method, folder=folder / "baseline")
    run = run_gate(candidate, criteria, baseline=baseline, difference=difference, confidence=confidence,
                   interval=method, look=looked,
                   options={"max_p_u": max_p_u, "max_p_o": max_p_o, "min_pi": min_pi, "max_p_a": max_p_a,
                            "max_worse": max_worse, "policy": None if policy is None else str(policy)})
    data = run.to_dict()
    files: dict = {}
    if out is not None:
        files[out / GATE_FILE] = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    if junit is not None:
        files[junit] = junit_xml(run, data)
    if markdown_file is not None:
        files[markdown_file] = markdown(run, data)
    written = _write(out, files)
    if as_json:
        typer.echo(json_text(data))
    else:
        print_gate(run, written=written)
    if run.exit_code:
        raise typer.Exit(run.exit_code)


gate.__doc__ = HELP  # the command's help: plain click text, readable at 80 columns


def register(app: typer.Typer, study_app: typer.Typer) -> None:
    """Add ``escalation gate`` to the command line."""
    app.command("gate")(gate)
