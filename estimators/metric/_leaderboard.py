"""Several assistants on the same scenarios: one table, ranked, with the groups that cannot be told apart.

For each model, ``p_u``, ``p_o``, ``pi`` and ``p_a`` with their intervals are :func:`estimators.summarise`
of its scored conversations, the numbers ``escalation score`` prints (SPEC sections 3A and 5). Between
every two models, the differences of the four figures are those of ``escalation compare``
(:func:`estimators.metric._paired_differences.paired_differences`: Newcombe's paired square-and-add interval with
Wilson-Kish limits, and the paired cluster bootstrap over cases). The difference of ``p_a`` rests on the
conversations where both models made a gated call, so its two values can differ from the models' ``p_a`` in
the table (which rest on every conversation with a gated call). A model scored before escalation recorded
approval evidence (no ``a`` column) has no ``p_a``, and :attr:`Leaderboard.notes` says so.

**Which conversations.** Models are paired on the conversations they share, by (``case_id``,
``label``, ``replica``), or by ``conversation_id`` for a conversation without a case. When the
logs hold different scenario sets, every figure of the table is computed on the conversations
that *all* the logs share, so that the ranks, the differences and the groups rest on the same
data; :attr:`Leaderboard.notes` says how many each model left out. Logs that share no
conversation are refused.

**Ranks.** By ``pi``, higher first (the paired figure: both halves of a case right); ties by
``p_u``, lower first; then in the order given. A model whose ``pi`` is undefined comes last. ``p_a`` does not
rank: it describes only the conversations in which a model acted on a gated tool.

**Groups.** For each figure, the pairwise differences are tested at the familywise level
``alpha = 1 - confidence`` with Holm's step-down adjustment over the pairs of models (Holm
1979). Each figure is its own family, ``p_a`` too: as the letters of one figure are read alone, so are its
tests, and adding ``p_a`` changes neither the verdicts nor the letters of ``p_u``, ``p_o`` and ``pi``.
Each pair's p-value inverts the chosen difference interval: it is the smallest
``alpha'`` at which the ``1 - alpha'`` interval leaves out 0 (so a pair is different without
adjustment exactly when the printed interval leaves out 0). The verdicts become a compact
letter display by the insert-absorb algorithm of Piepho (2004): two models that share a letter
are *not* significantly different for that figure; models with no letter in common are. The
letters go in order of the figure's estimates, ``a`` for the best group.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
Journal of Statistics* 6(2), 65-70.

Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
comparisons. *Journal of Computational and Graphical Statistics* 13(2), 456-466.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..records import SENTENCE_LIMIT, InputError, markdown_text
from ..stats import AUTO_INTERVAL, counted, format_number
from ._aggregate import summarise
from ._difference_coverage import difference_warnings
from ._multiple_comparisons import compact_letter_display, holm_adjust
from ._paired_differences import (
    FIGURES,
    LOWER_IS_BETTER,
    P_FLOOR,
    MetricDifference,
    check_difference_options,
    chosen_paired_differences,
    match_scenarios,
    pairing_keys,
    set_aside_run_errors,
)
from ._summary import Summary

__all__ = ["Leaderboard", "Standing", "PairVerdict", "leaderboard", "FIGURES"]

_FIELDS = {"p_u": "under", "p_o": "over", "pi": "paired", "p_a": "approval"}  # the Summary field of each figure
_COLUMNS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "u", "o", "cause",
            "reason", "unmarked_tools")
_DIFFERENCE_COLUMNS = ("a", "b", "metric", "a_value", "b_value", "difference", "low", "high", "newcombe_low",
                       "newcombe_high", "bootstrap_low", "bootstrap_high", "p_value", "p_holm", "verdict", "n_a",
                       "n_b", "clusters", "psi", "bootstrap_undefined", "note")


# ------------------------------------------------------------------ the results

def _null(x):
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _figure(summary: Summary, figure: str):
    """The estimate, interval, size and clusters of one figure of a summary."""
    rate = getattr(summary, _FIELDS[figure])
    low, high = rate.ci()
    return rate.rate, (low, high), rate.n, rate.clusters


@dataclass(frozen=True)
class Standing:
    """One model's row of the leaderboard.

    Attributes
    ----------
    rank : int
        1 for the best ``pi``.
    model : str
    summary : Summary
        :func:`estimators.summarise` of the conversations the leaderboard compares.
    groups : dict
        The letters of each figure of :data:`FIGURES` (``""`` where the figure is undefined).
    conversations : int
        All the conversations of the model's results.
    compared : int
        Those shared with every other model, on which every figure is computed.
    """

    rank: int
    model: str
    summary: Summary
    groups: dict
    conversations: int
    compared: int

    def to_dict(self) -> dict:
        out = {"rank": self.rank, "model": self.model}
        for figure in FIGURES:
            value, (low, high), n, clusters = _figure(self.summary, figure)
            size, unit = ("pairs", "cases") if figure == "pi" else ("n", "scenarios")
            out[figure] = {"value": _null(value), "ci": [_null(low), _null(high)], size: n, unit: clusters,
                           "groups": self.groups[figure],
                           "interval": getattr(self.summary, _FIELDS[figure]).interval}
        out.update(conversations=self.conversations, compared=self.compared, summary=self.summary.to_dict())
        return out


@dataclass(frozen=True)
class PairVerdict:
    """One figure of two models: the difference ``b - a`` (``a`` ranked above ``b``) and its Holm verdict.

    Attributes
    ----------
    a, b : str
        The two models; ``difference`` is ``escalation compare A B``'s (B minus A).
    difference : MetricDifference
    p_value : float
        The smallest ``alpha`` whose ``1 - alpha`` interval (the chosen one) leaves out 0; NaN
        where the difference is undefined. Floored at :data:`P_FLOOR`, and for a bootstrap
        interval at ``1 / n_boot``: its resamples resolve no smaller p-value.
    p_holm : float
        Holm-adjusted over the pairs of models, for this figure.
    alpha : float
        The familywise level, ``1 - confidence``.
    """

    a: str
    b: str
    difference: MetricDifference
    p_value: float
    p_holm: float
    alpha: float

    @property
    def metric(self) -> str:
        return self.difference.metric

    @property
    def verdict(self) -> str:
        """``different``, ``not different`` (at familywise ``alpha``, Holm) or ``undefined``."""
        if not math.isfinite(self.p_holm):
            return "undefined"
        return "different" if self.p_holm <= self.alpha else "not different"

    def to_dict(self) -> dict:
        d = self.difference.to_dict()
        return {"a": self.a, "b": self.b, "metric": d.pop("metric"), "a_value": d.pop("a"), "b_value": d.pop("b"),
                **d, "p_value": _null(self.p_value), "p_holm": _null(self.p_holm), "verdict": self.verdict}


@dataclass(frozen=True)
class Leaderboard:
    """Result of :func:`leaderboard`: the models in rank order and every pairwise difference.

    Attributes
    ----------
    confidence, interval, n_boot, seed
        As given to :func:`leaderboard`.
    standings : tuple of Standing
        In rank order.
    differences : tuple of PairVerdict
        For each two models (in rank order: ``a`` above ``b``), ``p_u``, ``p_o``, ``pi`` and ``p_a``.
    scenarios : int
        The scenarios every figure rests on (shared by all the models).
    cases : int or None
        The fewest cases a pair's bootstrap of ``p_u``, ``p_o`` and ``pi`` resampled (None with one model).
    notes : tuple of str
        What was left out, and why.
    difference_interval, difference_reason : str
        The difference interval computed (``auto`` resolved for the pairs' cases) and why.
    """

    confidence: float
    interval: str
    n_boot: int
    seed: int
    standings: tuple[Standing, ...]
    differences: tuple[PairVerdict, ...]
    scenarios: int
    cases: int | None
    notes: tuple[str, ...]
    difference_interval: str = ""
    difference_reason: str = "chosen (--interval)"

    @property
    def _difference(self) -> str:
        """The difference interval's method (``auto`` resolved; the Newcombe limits or the bootstrap)."""
        return self.difference_interval or self.interval

    @property
    def alpha(self) -> float:
        """The familywise level of the groups, ``1 - confidence``."""
        return 1.0 - self.confidence

    @property
    def groups_rule(self) -> str:
        """What the letters mean, in one sentence."""
        pairs = len(self.standings) * (len(self.standings) - 1) // 2
        if not pairs:
            return "one model, so no pair to tell apart"
        return (f"models that share a letter are not significantly different for that figure at familywise "
                f"{self.alpha:.0%}: each pair's difference interval ({self._chosen()}) inverted to a p-value, "
                f"Holm-adjusted over the {pairs} pair{'' if pairs == 1 else 's'} of models (Holm 1979); letters "
                "by the insert-absorb algorithm (Piepho 2004), 'a' for the best estimate")

    def _chosen(self) -> str:
        if self._difference.startswith("bootstrap"):
            return f"paired cluster bootstrap, {self._difference.removeprefix('bootstrap-')}"
        return f"Newcombe with {self._difference} limits"

    @property
    def warnings(self) -> list[str]:
        """Where an interval is not to be trusted: the difference intervals with few cases
        (:func:`estimators.metric._compare.difference_warnings` at :attr:`cases`, then, prefixed ``p_a:``, at the
        fewest cases of a ``p_a`` difference where that is fewer), then each model's summary warnings,
        the models that share a warning named once."""
        notes = difference_warnings(self._difference, self.cases) if self.cases is not None else []
        approval = [v.difference.clusters for v in self.differences
                    if v.metric == "p_a" and math.isfinite(float(v.difference.difference))]
        if approval and self.cases is not None and min(approval) < self.cases:
            notes += [f"p_a: {text}" for text in difference_warnings(self._difference, min(approval))]
        by_text: dict[str, list[str]] = {}
        for standing in self.standings:
            for text in standing.summary.warnings:
                by_text.setdefault(text, []).append(standing.model)
        for text, models in by_text.items():
            who = "every model" if len(models) == len(self.standings) > 1 else ", ".join(models)
            notes.append(f"{who}: {text}")
        return notes

    def to_frame(self) -> pd.DataFrame:
        """``leaderboard.csv``: one row per model, in rank order, intervals in ``*_low`` / ``*_high``; ``n_gated``:
        the conversations with a gated call, on which ``p_a`` rests."""
        rows = []
        for s in self.standings:
            row = {"rank": s.rank, "model": s.model}
            for figure in FIGURES:
                value, (low, high), _, _ = _figure(s.summary, figure)
                row.update({figure: _null(value), f"{figure}_low": _null(low), f"{figure}_high": _null(high)})
            row.update({"n_esc": s.summary.under.n, "n_act": s.summary.over.n, "pairs": s.summary.paired.pairs,
                        "n_gated": s.summary.approval.n,
                        "scenarios": s.summary.under.clusters + s.summary.over.clusters,
                        "cases": s.summary.paired.cases, "conversations": s.conversations, "compared": s.compared})
            row.update({f"groups_{figure}": s.groups[figure] for figure in FIGURES})
            rows.append(row)
        return pd.DataFrame(rows)

    def differences_frame(self) -> pd.DataFrame:
        """``differences.csv``: one row per pair of models and figure, intervals in ``*_low`` / ``*_high``."""
        rows = []
        for verdict in self.differences:
            d = verdict.to_dict()
            for name in ("ci", "newcombe_ci", "bootstrap_ci"):
                stem = name.removesuffix("ci").rstrip("_")
                d[f"{stem}_low" if stem else "low"], d[f"{stem}_high" if stem else "high"] = d.pop(name)
            rows.append(d)
        return pd.DataFrame(rows, columns=_DIFFERENCE_COLUMNS)

    def to_markdown(self) -> str:
        """``leaderboard.md``: the table, what the groups mean, the notes and the warnings."""
        level = f"{self.confidence:.0%}"
        head = ["rank", "model", *(f"{f} ({level} CI)" for f in FIGURES), "n ESC", "n ACT", "pairs", "n gated",
                "scenarios", *(f"groups {f}" for f in FIGURES)]
        lines = ["# Leaderboard", "", _row(head), _row(["---:", "---", *["---"] * len(FIGURES), *["---:"] * 5,
                                                        *[":---:"] * len(FIGURES)])]
        for s, row in zip(self.standings, self.to_frame().itertuples(index=False)):
            cells = [str(s.rank), _escape(s.model)]
            cells += [_estimate(getattr(row, f), getattr(row, f"{f}_low"), getattr(row, f"{f}_high")) for f in FIGURES]
            cells += [str(row.n_esc), str(row.n_act), str(row.pairs), str(row.n_gated), str(row.scenarios)]
            cells += [s.groups[f] or "-" for f in FIGURES]
            lines.append(_row(cells))
        lines += ["", f"Ranked by pi (higher is better), ties by p_u (lower is better); p_o and p_a: lower is better. "
                  "p_a: the share of the conversations with a gated call (n gated) in which its approval was missing "
                  "or broken (SPEC section 3A). "
                  f"Groups: {self.groups_rule}. Intervals: {self.interval} (SPEC sections 3A and 5), as "
                  "`escalation score` prints them."]
        texts = [*self.notes, *self.warnings]  # what was left out is a warning: the figures rest on less
        if texts:
            lines += ["", *(f"- warning: {markdown_text(text, SENTENCE_LIMIT)}" for text in texts)]
        return "\n".join(lines) + "\n"

    def differences_markdown(self) -> str:
        """``differences.md``: every pair of models and figure, B minus A, with both intervals."""
        level = f"{self.confidence:.0%}"
        head = ["A", "B", "figure", "A", "B", "B - A", f"Newcombe {level}", f"bootstrap {level}", "p", "Holm p",
                "verdict"]
        lines = ["# Differences between the models", "", _row(head),
                 _row(["---", "---", "---", "---:", "---:", "---:", "---", "---", "---:", "---:", "---"])]
        for v in self.differences:
            d = v.difference
            lines.append(_row([_escape(v.a), _escape(v.b), d.metric, format_number(d.a), format_number(d.b),
                               format_number(d.difference, sign=True), _interval(*d.newcombe_ci),
                               _interval(*d.bootstrap_ci), _p(v.p_value), _p(v.p_holm), v.verdict]))
        lines += ["", f"A is ranked above B. Chosen interval (--interval {self.interval}): {self._chosen()}; "
                  f"verdicts at familywise {self.alpha:.0%}, Holm-adjusted over the pairs of models, one family "
                  "per figure. p_u, p_o, p_a: lower is better; pi: higher is better. p_a: each two models on the "
                  "conversations in which both made a gated call (n_a = n_b, their number, in differences.csv), so its "
                  "A and B can differ from the leaderboard's p_a."]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        return {"confidence": self.confidence, "interval": self.interval,
                "difference_interval": self._difference, "difference_reason": self.difference_reason,
                "n_boot": self.n_boot, "seed": self.seed,
                "scenarios": self.scenarios, "cases": self.cases, "groups_rule": self.groups_rule,
                "notes": list(self.notes), "warnings": self.warnings,
                "models": [s.to_dict() for s in self.standings],
                "differences": [v.to_dict() for v in self.differences]}


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _escape(text: str) -> str:
    """A model's name in a table cell: read as itself (the one rule of text from the input, :func:`markdown_text`)."""
    return markdown_text(text)


def _interval(low, high) -> str:
    if _null(low) is None or _null(high) is None:
        return format_number(None)
    return f"({format_number(low)}, {format_number(high)})"


def _estimate(value, low, high) -> str:
    return format_number(value) if _null(value) is None else f"{format_number(value)} {_interval(low, high)}"


def _p(value) -> str:
    if value is None or not math.isfinite(value):
        return format_number(None)
    return f"< {P_FLOOR:.0e}" if value <= P_FLOOR else f"{value:.3g}"


# ------------------------------------------------------------------ the computation

def _shared(frames: dict[str, pd.DataFrame], sources: dict[str, str]):
    """Each frame restricted to the conversations that every frame has, and the notes on what was left out."""
    keys = {name: pairing_keys(frame) for name, frame in frames.items()}
    names = list(frames)
    common = set(keys[names[0]])
    for name in names[1:]:
        common &= set(keys[name])
    if not common:
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                if not set(keys[first]) & set(keys[second]):
                    raise InputError("share no conversation (by case_id, label and replica): a leaderboard compares "
                                     "models on the same scenarios", source=f"{sources[first]} vs {sources[second]}")
        raise InputError(f"no conversation (by case_id, label and replica) is in all {len(names)} logs: a leaderboard "
                         "compares models on the same scenarios", source=", ".join(sources[n] for n in names))
    shared, notes = {}, []
    for name, frame in frames.items():
        keep = keys[name].isin(common).to_numpy(bool)
        shared[name] = frame.loc[keep].reset_index(drop=True)
        if not keep.all():
            left = int((~keep).sum())
            notes.append(f"{name}: {left} of {counted(len(frame), 'conversation')} {'is' if left == 1 else 'are'} not "
                         f"in every log and {'is' if left == 1 else 'are'} left out ({sources[name]})")
    if notes:
        notes.insert(0, f"the logs hold different scenarios: every figure is computed on the "
                        f"{counted(len(common), 'conversation')} they all share, so `escalation score` on a log alone "
                        "gives other numbers")
    return shared, notes


def _approval_notes(frames: dict[str, pd.DataFrame], sources: dict[str, str]) -> list[str]:
    """The models scored before escalation recorded approval evidence (no ``a`` column): no ``p_a``."""
    old = [name for name, frame in frames.items() if "a" not in frame.columns]
    if not old:
        return []
    return [f"{', '.join(f'{name} ({sources[name]})' for name in old)}: scored before escalation recorded approval "
            "evidence (no `a` in the conversations, SPEC section 3A), so p_a is undefined, and so is its difference "
            "with every other model; score again to have it"]


def _rank_key(item):
    index, summary = item
    pi, p_u = summary.paired.pi, summary.under.rate
    return (-pi if math.isfinite(pi) else math.inf, p_u if math.isfinite(p_u) else math.inf, index)


def _pair_verdicts(shared, order, *, confidence, n_boot, interval, seed):
    """``(verdicts, units, chosen)``: the :class:`PairVerdict` of each figure of every two models (Holm-adjusted
    within each figure), the cases each pair's bootstrap resampled, and the pairs of each difference interval
    computed with why (``{(method, reason): [(a, b), ...]}``, ``auto`` resolved by pair)."""
    # each difference's p-value inverts its chosen interval (estimators.metric._paired_differences.inverted_p_value,
    # the one compare prints), floored at P_FLOOR, and for a bootstrap interval at 1 / n_boot
    verdicts, units, chosen = [], [], {}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            paired, method, reason = chosen_paired_differences(shared[a], shared[b], confidence=confidence,
                                                               n_boot=n_boot, interval=interval, rho=None,
                                                               rng=np.random.default_rng(seed))
            chosen.setdefault((method, reason), []).append((a, b))
            units.append(paired.units)
            for diff in paired.differences:
                verdicts.append((a, b, diff, diff.p_value))
    adjusted = np.full(len(verdicts), np.nan)
    for figure in FIGURES:
        rows = [r for r, v in enumerate(verdicts) if v[2].metric == figure]
        adjusted[rows] = holm_adjust([verdicts[r][3] for r in rows])
    differences = tuple(PairVerdict(a, b, diff, p, float(adjusted[r]), 1.0 - confidence)
                        for r, (a, b, diff, p) in enumerate(verdicts))
    return differences, units, chosen


def _letter_groups(summaries, order, differences) -> dict[str, dict[str, str]]:
    """The letters of each model for each figure (:func:`compact_letter_display`, best first), by model."""
    groups: dict[str, dict[str, str]] = {name: {} for name in order}
    for figure in FIGURES:
        defined = [n for n in order if math.isfinite(getattr(summaries[n], _FIELDS[figure]).rate)]
        sign = 1.0 if figure in LOWER_IS_BETTER else -1.0
        best_first = sorted(defined, key=lambda n: (sign * getattr(summaries[n], _FIELDS[figure]).rate,
                                                    order.index(n)))
        apart = [(v.a, v.b) for v in differences if v.metric == figure and v.verdict == "different"]
        letters = compact_letter_display(best_first, apart)
        for name in order:
            groups[name][figure] = letters.get(name, "")
    return groups


def leaderboard(scored: Mapping[str, pd.DataFrame], *, confidence: float = 0.95, interval: str = AUTO_INTERVAL,
                n_boot: int = 2000, seed: int = 0, sources: Mapping[str, str] | None = None,
                allow_errors: bool = False) -> Leaderboard:
    """Rank models scored on the same scenarios, with their pairwise differences and groups.

    Parameters
    ----------
    scored : mapping of str to DataFrame
        Each model's scored conversations (:func:`estimators.read_scored` of an ``escalation
        score --out`` folder, or :func:`estimators.score_records` output), by model name.
    confidence : float
        Level of every interval; the groups are at familywise ``1 - confidence``.
    interval : str
        ``auto`` (the default) or one of :data:`estimators.INTERVAL_METHODS`: each model's intervals (as
        ``score --interval``) and the chosen difference interval (as ``compare --interval``).
    n_boot : int
        Paired cluster bootstrap resamples of each pair.
    seed : int
        Seed of the bootstrap intervals: each model's (as ``score --seed``) and each pair's
        (as ``compare --seed``), so a pair's differences equal ``escalation compare``'s.
    sources : mapping of str to str, optional
        Where each model's results came from (a file), named in messages; default the names.
    allow_errors : bool
        Rank models whose runs failed in places (``run_error``): those conversations are then
        left out of every model (:func:`~estimators.metric._paired_differences.set_aside_run_errors`)
        and named in :attr:`Leaderboard.notes`. Without it such a run is refused.

    Returns
    -------
    Leaderboard

    Raises
    ------
    InputError
        No model, a missing column, a bad option, logs that share no conversation, a
        shared conversation whose scenario or label differs between logs, or (without
        ``allow_errors``) a run with ``run_error`` conversations.
    """
    check_difference_options(confidence, n_boot, interval)
    if not scored:
        raise InputError("no model to rank", field="scored")
    sources = {name: str((sources or {}).get(name, name)) for name in scored}
    for name, frame in scored.items():
        missing = [c for c in _COLUMNS if c not in frame.columns]
        if missing:
            raise InputError(f"the scored conversations have no column {', '.join(map(repr, missing))}",
                             source=sources[name])
    frames, set_aside = set_aside_run_errors(dict(scored), sources, allow=allow_errors)
    shared, notes = _shared(frames, sources)
    notes = set_aside + notes + _approval_notes(frames, sources)
    names = list(shared)
    for name in names[1:]:
        match_scenarios(shared[names[0]], shared[name], (sources[names[0]], sources[name]))
    summaries = {name: summarise(shared[name], confidence=confidence, interval=interval, seed=seed) for name in names}
    order = [names[i] for i, _ in sorted(enumerate(summaries[n] for n in names), key=_rank_key)]
    differences, units, chosen = _pair_verdicts(shared, order, confidence=confidence, n_boot=n_boot,
                                                interval=interval, seed=seed)
    groups = _letter_groups(summaries, order, differences)
    standings = tuple(Standing(rank=r + 1, model=name, summary=summaries[name], groups=groups[name],
                               conversations=len(frames[name]), compared=len(shared[name]))
                      for r, name in enumerate(order))
    methods = list(dict.fromkeys(method for method, _ in chosen))
    reasons = "; ".join(reason if len(chosen) == 1 else f"{', '.join(f'{a} vs {b}' for a, b in pairs)}: {reason}"
                        for (_, reason), pairs in chosen.items())
    return Leaderboard(confidence=confidence, interval=interval, n_boot=n_boot, seed=seed, standings=standings,
                       differences=differences, scenarios=int(shared[names[0]]["scenario_id"].nunique()),
                       cases=min(units) if units else None, notes=tuple(notes),
                       difference_interval=", ".join(methods), difference_reason=reasons or "chosen (--interval)")
