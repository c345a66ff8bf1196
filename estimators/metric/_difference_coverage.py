"""What ``escalation study differences`` measured of the two difference intervals of ``escalation compare``.

:data:`DIFFERENCE_COVERAGE_STUDY` holds the study's coverage for each interval and number of
scenarios; :func:`coverage_word` turns it into one word beside each interval (``holds``,
``too narrow``, ``often undefined``, ``not studied``), and :func:`difference_warnings`
and :func:`interval_advice` are written from the same words, so the table, the warnings and the
advice never disagree. Plain Python, importing no numerical library: ``escalation compare
--help`` quotes :data:`FEW_CASES_NEWCOMBE` and :data:`FEW_CASES_BOOTSTRAP`.
:mod:`estimators.metric._compare` uses it and exports its names.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

from ..stats import DEFAULT_INTERVAL, counted

__all__ = ["DIFFERENCE_COVERAGE_SOURCE", "DIFFERENCE_COVERAGE_STUDY", "HOLDS_AT", "TOLERANCE_MCSE", "MEAN_LEVEL",
           "STUDIED_LEVEL",
           "CoverageWord", "coverage_word", "difference_warnings", "interval_advice", "FEW_CASES_NEWCOMBE",
           "NEWCOMBE_LIMITS", "auto_difference_interval",
           "FEW_CASES_BOOTSTRAP"]


# ------------------------------------------------------------------ what the coverage study measured

#: Where :data:`DIFFERENCE_COVERAGE_STUDY` comes from.
DIFFERENCE_COVERAGE_SOURCE = (
    "escalation study differences, default run (studies/differences: seed 20261201, 2,000 data sets a cell, the 64 "
    "borderline cells rerun at 6,218 to 8,364 data sets to an MCSE of at most 0.003, 999 bootstrap resamples, 95% "
    "intervals, Newcombe's with five limits; escalation 0.1.0, 2026-12-04, --n-jobs 2, 302 s)")
#: What ``escalation study differences`` measured (:data:`DIFFERENCE_COVERAGE_SOURCE`), per method and
#: number of scenarios ``K``: ``(K, cells, mean coverage, lowest coverage, its Monte Carlo standard
#: error, share of undefined intervals in that cell, the cell (row of design.csv), its conditions,
#: the cells that fail the holds rule, the mean width)``. A K has 36 cells: 4 rate pairs x 3 (rho,
#: between) x 1, 3 or 8 replicas. Read off the run's differences.csv (a rerun cell's rows are its
#: rerun's), whose ``coverage`` counts an undefined interval as a miss; the lowest coverage, the
#: failing cells and the width of each method and K are its by_scenarios.csv ``min_coverage``,
#: ``cells_failing`` and ``mean_width``.
DIFFERENCE_COVERAGE_STUDY = {
    "newcombe_wilson_kish": (
        (5, 36, 0.9603, 0.862479, 0.00425246, 0, 98,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 6, 0.6701),
        (10, 36, 0.9592, 0.902678, 0.00355635, 0, 101,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 8, 0.4452),
        (30, 36, 0.9563, 0.908168, 0.00319342, 0, 32,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 2, 0.2346),
        (100, 36, 0.9531, 0.933787, 0.00290233, 0, 35,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.1224)),
    "newcombe_wilson_kish_t": (
        (5, 36, 0.9887, 0.944961, 0.00281594, 0, 98,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 0, 0.9147),
        (10, 36, 0.9781, 0.93723, 0.00291026, 0, 101,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 0, 0.5208),
        (30, 36, 0.9638, 0.920029, 0.00299946, 0, 32,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 1, 0.2460),
        (100, 36, 0.9557, 0.937057, 0.00283471, 0, 35,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.1240)),
    "newcombe_korn_graubard": (
        (5, 36, 0.9844, 0.953194, 0.00260809, 0, 98,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 0, 0.8044),
        (10, 36, 0.9780, 0.939994, 0.00298841, 0, 29,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.5089),
        (30, 36, 0.9697, 0.937638, 0.00267396, 0, 32,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.2562),
        (100, 36, 0.9635, 0.950409, 0.00253402, 0, 35,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.1289)),
    "newcombe_beta_binomial_profile": (
        (5, 36, 0.9642, 0.905016, 0.00362022, 0, 98,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas", 7, 0.6310),
        (10, 36, 0.9596, 0.916, 0.00620258, 0, 87,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0, 1 replica", 3, 0.4156),
        (30, 36, 0.9463, 0.914, 0.00626913, 0, 6,
         "rate A 0.05, rate B 0.05, rho 0, between 0, 1 replica", 2, 0.2252),
        (100, 36, 0.9505, 0.93939, 0.00282964, 0, 21,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0, 1 replica", 0, 0.1204)),
    "newcombe_beta_binomial_bayes": (
        (5, 36, 0.9837, 0.94901, 0.00243252, 0, 97,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 3 replicas", 0, 0.6932),
        (10, 36, 0.9804, 0.945012, 0.00285729, 0, 111,
         "rate A 0.1, rate B 0.3, rho 0, between 0, 1 replica", 0, 0.4593),
        (30, 36, 0.9657, 0.937657, 0.00294216, 0, 54,
         "rate A 0.02, rate B 0.1, rho 0.2, between 0, 1 replica", 0, 0.2397),
        (100, 36, 0.9588, 0.949, 0.0049193, 0, 93,
         "rate A 0.2, rate B 0.2, rho 0.2, between 0, 1 replica", 0, 0.1234)),
    "bootstrap_percentile": (
        (5, 36, 0.8233, 0.382, 0.0108645, 0, 60,
         "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica", 25, 0.3791),
        (10, 36, 0.8955, 0.607, 0.0109213, 0, 63,
         "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica", 23, 0.3195),
        (30, 36, 0.9385, 0.909, 0.00643114, 0, 55,
         "rate A 0.02, rate B 0.1, rho 0.2, between 0, 3 replicas", 6, 0.2061),
        (100, 36, 0.9495, 0.93733, 0.00282897, 0, 35,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 0, 0.1167)),
    "bootstrap_bca": (
        (5, 36, 0.7310, 0.369, 0.0107898, 0.6295, 24,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 1 replica", 36, 0.5374),
        (10, 36, 0.8346, 0.5765, 0.0110487, 0.3065, 63,
         "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica", 36, 0.3725),
        (30, 36, 0.9201, 0.851036, 0.00410261, 0.0658524, 30,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 1 replica", 15, 0.2125),
        (100, 36, 0.9449, 0.921526, 0.00313884, 0, 35,
         "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas", 1, 0.1170)),
}
#: The holds rule of the studies (issue 36, point 2; ``studies._performance``): a cell fails when its coverage
#: is below :data:`HOLDS_AT` by more than :data:`TOLERANCE_MCSE` Monte Carlo standard errors (the study reruns
#: the borderline cells until that error is at most 0.003), and an interval holds at a number of scenarios
#: when no cell fails there and its mean coverage is at least :data:`MEAN_LEVEL`.
HOLDS_AT = 0.93
TOLERANCE_MCSE = 2.0
MEAN_LEVEL = 0.945
#: The level of the study's intervals.
STUDIED_LEVEL = 0.95


@dataclass(frozen=True)
class CoverageWord:
    """What the coverage study measured for one interval at (about) one number of cases.

    Attributes
    ----------
    method : str or None
        The study's name of the interval (a key of :data:`DIFFERENCE_COVERAGE_STUDY`); None when
        the study did not measure it (Newcombe's with ``wilson-kish-ucb`` or ``korn-graubard`` limits).
    cases : int
        The cases the interval rests on.
    studied_at : int or None
        The study's number of scenarios that stands for ``cases``: the largest it ran that is not
        above ``cases`` (coverage grew with the scenarios, so this is the cautious one); None
        below the fewest it ran.
    word : str
        ``holds`` (at ``studied_at`` no cell of the study's conditions lies below :data:`HOLDS_AT`
        by more than :data:`TOLERANCE_MCSE` Monte Carlo standard errors, and the mean coverage is at
        least :data:`MEAN_LEVEL`: the holds rule), ``too narrow`` (not so), ``often undefined``
        (not so, mostly because the interval could not be computed: BCa), ``not studied``, or
        ``-`` (no cases).
    lowest, lowest_mcse, mean : float or None
        The study's lowest coverage at ``studied_at``, its Monte Carlo standard error, and the
        mean coverage over the conditions there.
    failing : int or None
        The study's cells at ``studied_at`` that fail the rule.
    conditions : str or None
        Where the lowest coverage fell.
    """

    method: str | None
    cases: int
    studied_at: int | None
    word: str
    lowest: float | None = None
    lowest_mcse: float | None = None
    mean: float | None = None
    conditions: str | None = None
    failing: int | None = None

    @property
    def text(self) -> str:
        """The word with the study's lowest coverage, e.g. ``too narrow (0.61)``."""
        return self.word if self.lowest is None else f"{self.word} ({self.lowest:.2f})"

    @property
    def trusted(self) -> bool:
        """Whether the study found the interval holding here."""
        return self.word == "holds"

    def to_dict(self) -> dict:
        return {"method": self.method, "cases": self.cases, "studied_at": self.studied_at, "word": self.word,
                "lowest": self.lowest, "lowest_mcse": self.lowest_mcse, "mean": self.mean,
                "conditions": self.conditions, "failing": self.failing}


def _study_method(interval: str, which: str) -> str | None:
    """The study's name of the Newcombe (``which="newcombe"``) or bootstrap interval that ``interval`` reports."""
    if which == "bootstrap":
        kind = interval.removeprefix("bootstrap-") if interval.startswith("bootstrap") else "percentile"
        name = f"bootstrap_{kind}"
    else:
        limits = DEFAULT_INTERVAL if interval.startswith("bootstrap") else interval
        name = "newcombe_" + limits.replace("-", "_")
    return name if name in DIFFERENCE_COVERAGE_STUDY else None


def coverage_word(method: str | None, cases: int) -> CoverageWord:
    """The coverage study's word on interval ``method`` resting on ``cases`` cases.

    Parameters
    ----------
    method : str or None
        A key of :data:`DIFFERENCE_COVERAGE_STUDY` (``newcombe_wilson_kish``,
        ``newcombe_wilson_kish_t``, ``bootstrap_percentile``, ``bootstrap_bca``); None or any
        other name gives ``not studied``.
    cases : int
        The cases (clusters) the difference rests on.

    Returns
    -------
    CoverageWord
    """
    cases = int(cases)
    if cases <= 0:
        return CoverageWord(method, cases, None, "-")
    rows = DIFFERENCE_COVERAGE_STUDY.get(method) if method else None
    if rows is None:
        return CoverageWord(None, cases, None, "not studied")
    below = [row for row in rows if row[0] <= cases]
    if not below:
        return CoverageWord(method, cases, None, "not studied")
    k, _, mean, lowest, mcse, undefined, _, conditions, failing, _ = below[-1]
    if failing == 0 and mean >= MEAN_LEVEL:
        word = "holds"
    else:
        word = "often undefined" if undefined > 0.5 * (1.0 - lowest) else "too narrow"
    return CoverageWord(method, cases, k, word, lowest, mcse, mean, conditions, failing)


def _fine_from(method: str) -> int | None:
    """The fewest scenarios from which the study found ``method`` holding at every number it ran."""
    start = None
    for row in reversed(DIFFERENCE_COVERAGE_STUDY[method]):
        if not coverage_word(method, row[0]).trusted:
            break
        start = row[0]
    return start


def _failing(word: CoverageWord, detail: str = "") -> str:
    """``too narrow below 100 cases{detail}`` when the study's word is the same wherever the interval fails,
    else ``often undefined here{detail}; the study found it failing below 100 cases``."""
    method = cast(str, word.method)  # a word of a failing interval: one the study measured
    fails_from = _fine_from(method)
    words = {coverage_word(method, row[0]).word for row in DIFFERENCE_COVERAGE_STUDY[method]
             if fails_from is None or row[0] < fails_from}
    where = f"below {fails_from} cases" if fails_from else "at every number of cases"
    if words == {word.word}:
        return f"{word.word} {where}{detail}"
    return f"{word.word} here{detail}; the study found it failing {where}"


#: Cases below which the study found Newcombe's interval with Wilson-Kish limits, and the percentile
#: paired bootstrap, failing: read off :data:`DIFFERENCE_COVERAGE_STUDY` (30 and 100).
FEW_CASES_NEWCOMBE = _fine_from("newcombe_wilson_kish")
FEW_CASES_BOOTSTRAP = _fine_from("bootstrap_percentile")
_FEWEST_STUDIED = min(row[0] for rows in DIFFERENCE_COVERAGE_STUDY.values() for row in rows)


#: The limits of Newcombe's interval the study measured, each by its ``--interval`` name (what ``--interval auto``
#: chooses among, :func:`auto_difference_interval`).
NEWCOMBE_LIMITS = tuple(name.removeprefix("newcombe_").replace("_", "-") for name in DIFFERENCE_COVERAGE_STUDY
                        if name.startswith("newcombe_"))


def _newcombe_words(cases: int) -> dict[str, tuple[CoverageWord, float]]:
    """``{limits: (word, mean width)}`` of Newcombe's interval with each of :data:`NEWCOMBE_LIMITS` at ``cases``
    (the width at the study's number of scenarios that stands for ``cases``; NaN where not studied)."""
    out = {}
    for limits in NEWCOMBE_LIMITS:
        name = cast(str, _study_method(limits, "newcombe"))
        word = coverage_word(name, cases)
        width = next((row[9] for row in DIFFERENCE_COVERAGE_STUDY[name] if row[0] == word.studied_at), math.nan)
        out[limits] = (word, width)
    return out


def _holding_limits(cases: int, replicas: bool | None = None) -> tuple[str, CoverageWord] | None:
    """``(limits, word)`` of the narrowest Newcombe interval the study found holding at ``cases`` (None: none);
    with ``replicas`` (True or False), among the limits that ``escalation study coverage`` also found holding
    for a rate of ``cases`` scenarios of that design (:func:`estimators.group_coverage`)."""
    from ..stats import group_coverage  # the coverage study's table: read only when a rate's design is given

    words = _newcombe_words(cases)
    rates = None if replicas is None else group_coverage(cases, replicas)
    holding = sorted((width, limits) for limits, (word, width) in words.items()
                     if word.trusted and (rates is None or rates[limits].holds))
    return (holding[0][1], words[holding[0][1]][0]) if holding else None


def auto_difference_interval(cases: int, replicas: bool | None = None) -> tuple[str, str]:
    """``(method, reason)`` of ``compare --interval auto`` at ``cases`` cases: of :data:`NEWCOMBE_LIMITS`, the
    limits whose Newcombe interval ``escalation study differences`` found holding there (:func:`coverage_word`)
    and, with ``replicas`` (whether a scenario has more than one conversation), that ``escalation study
    coverage`` found holding for each rate of that design, with the narrowest mean width; where none does, the
    narrowest that held in the differences study alone; where none did, the one whose lowest coverage came
    closest (at the fewest scenarios the study ran, below them)."""
    at = max(int(cases), _FEWEST_STUDIED)
    for among in (replicas, None) if replicas is not None else (None,):
        best = _holding_limits(at, among)
        if best is not None:
            method, word = best
            design = "replicas" if among else "one conversation a case"
            rates = "" if among is None else f", and for each rate of its design ({design}) in study coverage"
            return method, (f"auto: Newcombe's interval with {method} limits, the narrowest that held 95% in "
                            f"escalation study differences at {word.studied_at} scenarios, the most not above these "
                            f"{counted(cases, 'case')} (lowest coverage {word.lowest:.3f}){rates}")
    words = _newcombe_words(at)
    method = max(words, key=lambda limits: cast(float, words[limits][0].lowest))
    word = words[method][0]
    return method, (f"auto: Newcombe's interval with {method} limits: no difference interval was measured holding "
                    f"95% at {counted(cases, 'case')} (escalation study differences); this one came closest "
                    f"(lowest coverage {word.lowest:.3f} at {word.studied_at} scenarios)")


def _limits(interval: str) -> str:
    return DEFAULT_INTERVAL if interval.startswith("bootstrap") else interval


def _kind(interval: str) -> str:
    return interval.removeprefix("bootstrap-") if interval.startswith("bootstrap") else "percentile"


def difference_warnings(interval: str, cases: int) -> list[str]:
    """Where the difference intervals are known not to hold their level (``escalation study differences``).

    Written from :func:`coverage_word`, the word printed beside each interval: one warning for
    each of the two intervals (Newcombe's, the bootstrap) that the study found failing (``too
    narrow``, ``often undefined``) or did not measure at ``cases``.

    Parameters
    ----------
    interval : str
        The chosen method (:data:`estimators.INTERVAL_METHODS`).
    cases : int
        The fewest cases a reported difference rests on.
    """
    notes = []
    cases = int(cases)
    best = _holding_limits(cases)
    safe = "" if best is None else (f"with --interval {best[0]}, the narrowest that held here, it held: lowest "
                                    f"{best[1].lowest:.2f} at {best[1].studied_at} scenarios")
    newcombe = coverage_word(_study_method(interval, "newcombe"), cases)
    name = f"Newcombe's interval with {_limits(interval)} limits"
    if newcombe.word == "not studied" and newcombe.method is None:
        notes.append(f"{name} was not measured by the coverage study (escalation study differences)"
                     + (f"; {safe}" if safe else ""))
    elif newcombe.word == "not studied":
        notes.append(f"{name} rests on {counted(cases, 'case')}, fewer than the {_FEWEST_STUDIED} the coverage "
                     "study ran: no difference interval is known to hold its level here; run more scenarios")
    elif newcombe.word in ("too narrow", "often undefined"):
        notes.append(f"{name} rests on {counted(cases, 'case')}: at {newcombe.studied_at} scenarios the study "
                     f"measured its coverage down to {newcombe.lowest:.2f} ({newcombe.conditions}), "
                     f"{_failing(newcombe)}" + (f"; {safe}" if safe else ""))
    boot = coverage_word(_study_method(interval, "bootstrap"), cases)
    name = f"the paired bootstrap ({_kind(interval)})"
    if boot.word == "not studied":
        notes.append(f"{name} rests on {counted(cases, 'case')}, fewer than the {_FEWEST_STUDIED} the coverage "
                     "study ran; do not trust its level")
    elif boot.word in ("too narrow", "often undefined"):
        why = " (an undefined interval counts as a miss)" if boot.word == "often undefined" else ""
        notes.append(f"{name} rests on {counted(cases, 'case')}: at {boot.studied_at} scenarios the study measured its "
                     f"coverage of a {STUDIED_LEVEL:.0%} interval down to {boot.lowest:.2f}{why}, {_failing(boot)}; "
                     "do not trust its level")
    return notes


def interval_advice(interval: str, cases: int) -> str:
    """Which of the two reported intervals to trust at ``cases`` cases, from :func:`coverage_word`.

    E.g. ``trust Newcombe's with wilson-kish-t limits here (--interval wilson-kish-t: lowest 0.94 at
    10 scenarios); with wilson-kish limits it is too narrow (0.90); the bootstrap (percentile) is
    too narrow below 100 cases (0.61 at 10)``.
    """
    cases = int(cases)
    if cases <= 0:
        return "no difference is defined, so there is no interval to trust"
    newcombe = coverage_word(_study_method(interval, "newcombe"), cases)
    boot = coverage_word(_study_method(interval, "bootstrap"), cases)
    limits = _limits(interval)
    if cases < _FEWEST_STUDIED:
        return (f"the coverage study ran no fewer than {_FEWEST_STUDIED} cases, so neither interval is known to "
                f"hold at {cases}; run more scenarios")
    parts = []
    if newcombe.trusted:
        parts.append(f"trust Newcombe's with {limits} limits here (the study's lowest coverage "
                     f"{newcombe.lowest:.2f} at {newcombe.studied_at} scenarios)")
    else:
        best = _holding_limits(cases)
        if best is not None:
            parts.append(f"trust Newcombe's with {best[0]} limits here (--interval {best[0]}, the narrowest that "
                         f"held: lowest {best[1].lowest:.2f} at {best[1].studied_at} scenarios)")
        else:
            closest, _ = auto_difference_interval(cases)
            word = _newcombe_words(cases)[closest][0]
            parts.append(f"no difference interval held {HOLDS_AT:.2f} at {word.studied_at} scenarios in the study; "
                         f"Newcombe's with {closest} limits came closest ({word.lowest:.2f})")
        parts.append(f"with {limits} limits it is " + ("not studied" if newcombe.method is None else newcombe.text))
    kind = f"the bootstrap ({_kind(interval)})"
    if boot.trusted:
        parts.append(f"{kind} holds too ({boot.lowest:.2f})")
    else:
        parts.append(f"{kind} is {_failing(boot, f' ({boot.lowest:.2f} at {boot.studied_at})')}")
    return "; ".join(parts)
