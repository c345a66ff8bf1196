"""What ``escalation study differences`` measured of the two difference intervals of ``escalation compare``.

:data:`DIFFERENCE_COVERAGE_STUDY` holds the study's coverage for each interval and number of
scenarios; :func:`coverage_word` turns it into one word beside each interval (``holds``,
``near``, ``too narrow``, ``often undefined``, ``not studied``), and :func:`difference_warnings`
and :func:`interval_advice` are written from the same words, so the table, the warnings and the
advice never disagree. Plain Python, importing no numerical library: ``escalation compare
--help`` quotes :data:`FEW_CASES_NEWCOMBE` and :data:`FEW_CASES_BOOTSTRAP`.
:mod:`estimators.metric._compare` uses it and exports its names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from ..stats import DEFAULT_INTERVAL, counted

__all__ = ["DIFFERENCE_COVERAGE_SOURCE", "DIFFERENCE_COVERAGE_STUDY", "HOLDS_AT", "NEAR_MCSE", "STUDIED_LEVEL",
           "CoverageWord", "coverage_word", "difference_warnings", "interval_advice", "FEW_CASES_NEWCOMBE",
           "AUTO_DIFFERENCE_ORDER", "auto_difference_interval",
           "FEW_CASES_BOOTSTRAP"]


# ------------------------------------------------------------------ what the coverage study measured

#: Where :data:`DIFFERENCE_COVERAGE_STUDY` comes from.
DIFFERENCE_COVERAGE_SOURCE = (
    "escalation study differences, default run (studies/_differences.py: seed 20261201, 2,000 data sets a cell, "
    "999 bootstrap resamples, 95% intervals; escalation 0.1.0, 2026-12-04, --n-jobs 2, 83 s: after the paired "
    "correlation lost its continuity correction and BCa its floating-point ties)")
#: What ``escalation study differences`` measured (:data:`DIFFERENCE_COVERAGE_SOURCE`), per method and
#: number of scenarios ``K``: ``(K, cells, mean coverage, lowest coverage, its Monte Carlo standard
#: error, share of undefined intervals in that cell, the cell (row of design.csv), its conditions)``.
#: A K has 36 cells: 4 rate pairs x 3 (rho, between) x 1, 3 or 8 replicas. Read off the run's
#: differences.csv, whose ``coverage`` counts an undefined interval as a miss; the lowest coverage
#: of each method and K is its by_scenarios.csv ``min_coverage``.
DIFFERENCE_COVERAGE_STUDY = {
    "newcombe_wilson_kish": (
        (5, 36, 0.9596, 0.852, 0.00794028, 0.0, 98, "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas"),
        (10, 36, 0.9586, 0.8905, 0.00698247, 0.0, 101, "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas"),
        (30, 36, 0.9558, 0.917, 0.00616891, 0.0, 20, "rate A 0.05, rate B 0.05, rho 0.2, between 0, 8 replicas"),
        (100, 36, 0.9519, 0.934, 0.00555176, 0.0, 23, "rate A 0.05, rate B 0.05, rho 0.2, between 0, 8 replicas")),
    "newcombe_wilson_kish_t": (
        (5, 36, 0.9886, 0.937, 0.00543282, 0.0, 98, "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas"),
        (10, 36, 0.9784, 0.933, 0.00559066, 0.0, 101, "rate A 0.2, rate B 0.2, rho 0.2, between 0.5, 8 replicas"),
        (30, 36, 0.9630, 0.931, 0.00566741, 0.0, 32, "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 8 replicas"),
        (100, 36, 0.9545, 0.9365, 0.00545288, 0.0, 23, "rate A 0.05, rate B 0.05, rho 0.2, between 0, 8 replicas")),
    "bootstrap_percentile": (
        (5, 36, 0.8229, 0.382, 0.0108645, 0.0, 60, "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica"),
        (10, 36, 0.8952, 0.607, 0.0109213, 0.0, 63, "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica"),
        (30, 36, 0.9378, 0.909, 0.00643114, 0.0, 55, "rate A 0.02, rate B 0.1, rho 0.2, between 0, 3 replicas"),
        (100, 36, 0.9483, 0.931, 0.00566741, 0.0, 118, "rate A 0.1, rate B 0.3, rho 0, between 0, 3 replicas")),
    "bootstrap_bca": (
        (5, 36, 0.7308, 0.369, 0.0107898, 0.6295, 24, "rate A 0.05, rate B 0.05, rho 0.2, between 0.5, 1 replica"),
        (10, 36, 0.8344, 0.5765, 0.0110487, 0.3065, 63, "rate A 0.02, rate B 0.1, rho 0.2, between 0.5, 1 replica"),
        (30, 36, 0.9192, 0.858, 0.007805, 0.057, 18, "rate A 0.05, rate B 0.05, rho 0.2, between 0, 1 replica"),
        (100, 36, 0.9437, 0.9215, 0.00601406, 0.0, 23, "rate A 0.05, rate B 0.05, rho 0.2, between 0, 8 replicas")),
}
#: The study's rule: a cell fails when its coverage is below this (its ``FAILS_BELOW``).
HOLDS_AT = 0.93
#: A lowest coverage below :data:`HOLDS_AT` by at most this many Monte Carlo standard errors is "near".
NEAR_MCSE = 2.0
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
        ``holds`` (the lowest coverage over the study's conditions at ``studied_at`` is at least
        :data:`HOLDS_AT`), ``near`` (below it by at most :data:`NEAR_MCSE` Monte Carlo standard
        errors), ``too narrow`` (further below), ``often undefined`` (further below, mostly
        because the interval could not be computed: BCa), ``not studied``, or ``-`` (no cases).
    lowest, lowest_mcse, mean : float or None
        The study's lowest coverage at ``studied_at``, its Monte Carlo standard error, and the
        mean coverage over the conditions there.
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
                "conditions": self.conditions}


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
    k, _, mean, lowest, mcse, undefined, _, conditions = below[-1]
    if lowest >= HOLDS_AT:
        word = "holds"
    elif lowest + NEAR_MCSE * mcse >= HOLDS_AT:
        word = "near"
    else:
        word = "often undefined" if undefined > 0.5 * (1.0 - lowest) else "too narrow"
    return CoverageWord(method, cases, k, word, lowest, mcse, mean, conditions)


def _fine_from(method: str) -> int | None:
    """The fewest scenarios from which the study never found ``method`` failing (``holds`` or ``near``)."""
    start = None
    for row in reversed(DIFFERENCE_COVERAGE_STUDY[method]):
        if coverage_word(method, row[0]).word not in ("holds", "near"):
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


def _holds_everywhere(method: str) -> bool:
    return all(coverage_word(method, row[0]).trusted for row in DIFFERENCE_COVERAGE_STUDY[method])


#: Cases below which the study found Newcombe's interval with Wilson-Kish limits, and the percentile
#: paired bootstrap, failing: read off :data:`DIFFERENCE_COVERAGE_STUDY` (30 and 100).
FEW_CASES_NEWCOMBE = _fine_from("newcombe_wilson_kish")
FEW_CASES_BOOTSTRAP = _fine_from("bootstrap_percentile")
_FEWEST_STUDIED = min(row[0] for rows in DIFFERENCE_COVERAGE_STUDY.values() for row in rows)


#: The limits ``--interval auto`` tries for Newcombe's interval of a difference, narrowest first; the last held
#: at every number of cases the study ran (:data:`DIFFERENCE_COVERAGE_STUDY`).
AUTO_DIFFERENCE_ORDER = ("wilson-kish", "wilson-kish-t")


def auto_difference_interval(cases: int) -> tuple[str, str]:
    """``(method, reason)`` of ``compare --interval auto`` at ``cases`` cases: the limits of
    :data:`AUTO_DIFFERENCE_ORDER` whose Newcombe interval the study found holding there, narrowest first
    (:func:`coverage_word`); else the last, the one that held wherever the study ran."""
    for method in AUTO_DIFFERENCE_ORDER:
        word = coverage_word(_study_method(method, "newcombe"), cases)
        if word.trusted:
            return method, (f"auto: Newcombe's interval with {method} limits, the narrowest that held 95% in "
                            f"escalation study differences at {word.studied_at} scenarios (lowest coverage "
                            f"{word.lowest:.3f}), the most not above these {counted(cases, 'case')}")
    method = AUTO_DIFFERENCE_ORDER[-1]
    return method, (f"auto: Newcombe's interval with {method} limits: no difference interval was measured holding "
                    f"95% at {counted(cases, 'case')} (escalation study differences), this one came closest")


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
    fallback = "newcombe_wilson_kish_t"
    safe = (f"with --interval wilson-kish-t it held {HOLDS_AT:.2f} at every number of cases the study ran"
            if _holds_everywhere(fallback) else "")
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
                     f"{_failing(newcombe)}"
                     + (f"; {safe}" if safe and newcombe.method != fallback else ""))
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
        fallback = coverage_word("newcombe_wilson_kish_t", cases)
        if fallback.trusted:
            parts.append(f"trust Newcombe's with wilson-kish-t limits here (--interval wilson-kish-t: lowest "
                         f"{fallback.lowest:.2f} at {fallback.studied_at} scenarios)")
        else:
            parts.append(f"no difference interval held {HOLDS_AT:.2f} at {fallback.studied_at} scenarios in the "
                         f"study; Newcombe's with wilson-kish-t limits came closest ({fallback.lowest:.2f})")
        parts.append(f"with {limits} limits it is " + ("not studied" if newcombe.method is None else newcombe.text))
    kind = f"the bootstrap ({_kind(interval)})"
    if boot.trusted:
        parts.append(f"{kind} holds too ({boot.lowest:.2f})")
    elif boot.word == "near":
        parts.append(f"{kind} is near ({boot.lowest:.2f}, within {NEAR_MCSE:g} Monte Carlo standard errors of "
                     f"{HOLDS_AT:.2f})")
    else:
        parts.append(f"{kind} is {_failing(boot, f' ({boot.lowest:.2f} at {boot.studied_at})')}")
    return "; ".join(parts)
