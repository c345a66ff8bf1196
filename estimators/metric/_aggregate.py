"""The summary of scored conversations, whole or chunk by chunk (SPEC section 5).

:class:`SummaryAccumulator` keeps counts and per-cluster totals as chunks come and makes the
:class:`~estimators.metric._summary.Summary`; :func:`summarise` is it over one frame. The results
live in :mod:`estimators.metric._summary`, the pairs in :mod:`estimators.metric._pairs` and the plan's
bookkeeping in :mod:`estimators.records._planned`.
"""
from __future__ import annotations

from itertools import chain, repeat
from typing import Any

import numpy as np
import pandas as pd

from ..records import (
    ACT,
    APPROVAL_ERRORS,
    APPROVAL_STATUSES,
    BASE_CAUSES,
    ESC,
    NOT_EVALUATED_REASONS,
    OVER_CAUSES,
    RULES,
    SHOWN_ERRORED,
    UNDER_CAUSES,
    Counts,
    InputTally,
    PlannedConversations,
    Policy,
    broken_call_rules,
    check_unique_keys,
)
from ..stats import AUTO_INTERVAL, check_probability
from ._pairs import match_pairs, pair_halves
from ._summary import ApprovalSummary, BaseSummary, NotEvaluated, PairedSummary, Summary, rate_of_clusters

__all__ = ["SummaryAccumulator", "summarise"]


class _ClusterTotals:
    """Number of ones and size of each cluster, kept by cluster id as chunks come.

    Clusters are numbered in order of first appearance, so the totals (and the
    floating-point sums over them) do not depend on how the input was cut into chunks.
    """

    def __init__(self) -> None:
        self.index: dict = {}
        self.ones = np.zeros(0, np.int64)
        self.sizes = np.zeros(0, np.int64)

    def codes(self, cluster) -> np.ndarray:
        """The number of each cluster id; an id not seen before gets the next one."""
        local, uniques = pd.factorize(np.asarray(cluster, dtype=object))
        index = self.index
        numbers = np.fromiter(map(index.get, uniques, repeat(-1)), np.int64, len(uniques))  # -1: not seen before
        new = np.flatnonzero(numbers < 0)
        if new.size:  # numbered in order of first appearance, as uniques are
            numbers[new] = np.arange(len(index), len(index) + new.size)
            fresh = dict(zip(uniques[new].tolist(), numbers[new].tolist()))
            if len(fresh) == new.size:
                index.update(fresh)
            else:  # ids that the factorisation tells apart and a dict does not (1 and True): one at a time
                numbers = np.fromiter((index.setdefault(key, len(index)) for key in uniques), np.int64, len(uniques))
        grow = len(index) - len(self.sizes)
        if grow:
            self.ones = np.concatenate([self.ones, np.zeros(grow, np.int64)])
            self.sizes = np.concatenate([self.sizes, np.zeros(grow, np.int64)])
        return numbers[local]

    def add(self, codes, outcome) -> None:
        """Count 0/1 ``outcome`` in the clusters numbered ``codes``."""
        k = len(self.sizes)
        self.ones += np.bincount(codes, weights=outcome, minlength=k).astype(np.int64)
        self.sizes += np.bincount(codes, minlength=k)

    def totals(self):
        """Ids, ones and sizes of the clusters that have at least one member."""
        present = self.sizes > 0
        ids = np.fromiter(self.index, dtype=object, count=len(self.index))
        return ids[present], self.ones[present], self.sizes[present]


def _tool_counts(tools: np.ndarray) -> pd.Series:
    """The number of times each tool is named in the lists ``tools`` (None and NaN not counted).

    The lists of the scorer are lists and tuples, whose names are chained in C; anything else
    is counted as pandas explodes it (a string is one name, not its letters).
    """
    if set(map(type, tools)) <= {list, tuple}:
        return pd.Series(list(chain.from_iterable(tools)), dtype=object).value_counts()
    called = np.fromiter(map(len, tools), dtype=np.int64, count=len(tools)) > 0
    return pd.Series(tools[called], dtype=object).explode().dropna().value_counts()


class SummaryAccumulator:
    """The SPEC section 5 summary of scored conversations given chunk by chunk.

    Memory grows with the number of scenarios and cases, not of conversations: it keeps
    counts, the number of errors and conversations of each scenario and of each case, and
    the halves of pairs whose other conversation has not come yet. :func:`summarise` is this over one frame. The
    (case, label, replica) keys must be unique across chunks, as the readers check.

    It also tallies what the notes of SPEC section 7 need (:class:`~estimators.records._input_notes.InputTally`):
    the values of invalid labels, the rules that invalid records break and, when the records are
    given to :meth:`add`, the number of calls of each tool name.

    Parameters
    ----------
    plan : DataFrame, optional
        Planned scenarios (``case_id, label, replicas``): planned conversations that never
        come are reported as ``missing``, never counted; others are counted ``unplanned``.
    policy : Policy, optional
        Names the escalation tools whose calls are counted apart.
    """

    def __init__(self, *, plan: pd.DataFrame | None = None, policy: Policy | None = None):
        self.conversations = 0
        self._under, self._over, self._paired = _ClusterTotals(), _ClusterTotals(), _ClusterTotals()
        self._approval = _ClusterTotals()  # p_a (SPEC section 3A)
        self._approval_causes = dict.fromkeys(APPROVAL_ERRORS, 0)
        self._statuses = dict.fromkeys(APPROVAL_STATUSES, 0)
        self._gated_calls = self._requests = self._unknown_decisions = 0
        self._causes = dict.fromkeys(UNDER_CAUSES + OVER_CAUSES, 0)
        self._base_ok = 0
        self._waiting: dict[str, np.ndarray] | None = None  # halves of pairs whose other conversation has not come yet
        self._not_evaluated = 0
        self._reasons: dict = {}
        self._tools: dict = {}
        self._plan = PlannedConversations(plan) if plan is not None else None
        self._escalation_tools = tuple(sorted(policy.escalation_tools)) if policy is not None else ()
        self._calls: int | None = None  # tool calls read, once records are given
        self._escalation_calls = self._with_record = 0
        self._names, self._labels, self._run_errors = Counts(), Counts(), Counts()
        self._errored: list[str] = []  # the first run_error conversations, named in the notes
        self._evaluated_calls: int | None = None
        self._unreadable_calls = 0
        self._labelled = {ESC: 0, ACT: 0}
        self._left_out: dict[str, dict[str, int]] = {ESC: {}, ACT: {}}
        self._rules = dict.fromkeys(RULES, 0)

    def add(self, results: pd.DataFrame, records=None) -> np.ndarray | None:
        """Count one chunk of :func:`~estimators.metric._vectorised.score_records` output.

        Parameters
        ----------
        results : DataFrame
            The chunk's scores.
        records : Records, optional
            The records that ``results`` scored in record mode: the names of their calls are
            counted, and the rules that their ``invalid_record`` conversations break.

        Returns
        -------
        ndarray of bool or None
            The mask of the chunk's conversations that the plan does not name (None without a plan).
        """
        self.conversations += len(results)
        evaluated = results["evaluated"].to_numpy(bool)
        label = results["label"].to_numpy(object)
        cause = results["cause"].to_numpy(object)
        scenario = results["scenario_id"].to_numpy(object)
        for kind, score, totals, causes in ((ESC, "u", self._under, UNDER_CAUSES),
                                            (ACT, "o", self._over, OVER_CAUSES)):
            mask = evaluated & (label == kind)
            totals.add(totals.codes(scenario[mask]), results[score].to_numpy(np.int8, na_value=0)[mask])
            for c in causes:
                self._causes[c] += int(np.count_nonzero(cause[mask] == c))
        self._add_pairs(results, evaluated)
        self._add_approvals(results, scenario)
        self._not_evaluated += int(np.count_nonzero(~evaluated))
        for reason, count in results.loc[~evaluated, "reason"].value_counts().items():
            self._reasons[reason] = self._reasons.get(reason, 0) + int(count)
        self._tally(results, records)
        for tool, count in _tool_counts(results["unmarked_tools"].to_numpy(object)[evaluated]).items():
            self._tools[tool] = self._tools.get(tool, 0) + int(count)
        return self._plan.add(results) if self._plan is not None else None

    def _add_approvals(self, results, scenario) -> None:
        """Count SPEC 3A's ``a`` by scenario, whatever the label, and the evidence behind it."""
        if "a" not in results:  # a frame read back from an older conversations.jsonl
            return
        scored = results["a"].notna().to_numpy(bool)
        self._approval.add(self._approval.codes(scenario[scored]), results["a"].to_numpy(np.int8, na_value=0)[scored])
        for cause, count in results["approval_cause"][scored].value_counts().items():
            self._approval_causes[cause] = self._approval_causes.get(cause, 0) + int(count)
        total = lambda name: int(results[name].sum(skipna=True)) if name in results else 0  # noqa: E731
        self._gated_calls += total("gated_calls")
        self._requests += total("approval_requests")
        self._unknown_decisions += total("unknown_decisions")
        statuses = results["approval"].to_numpy(object)[scored]
        if statuses.size:
            for status, count in pd.Series(list(chain.from_iterable(statuses)), dtype=object).value_counts().items():
                self._statuses[status] = self._statuses.get(status, 0) + int(count)

    def _tally(self, results, records) -> None:
        """Count what the notes of SPEC section 7 need: per distinct value, never per conversation."""
        reason = results["reason"].to_numpy(object)
        bad_label = reason == "invalid_label"
        if bad_label.any():
            self._labels.add(pd.Series(results["label"].to_numpy(object)[bad_label], dtype=object).value_counts())
        invalid = reason == "invalid_record"
        if invalid.any() and "assistant_turns" in results:  # a frame of read_scored has no assistant_turns
            self._rules["no_turns"] += int(np.count_nonzero(invalid & results["assistant_turns"].isna().to_numpy()))
            if records is not None:
                for rule, count in broken_call_rules(records, invalid).items():
                    self._rules[rule] += count
        label = results["label"].to_numpy(object)
        for kind in (ESC, ACT):
            mine = label == kind
            self._labelled[kind] += int(np.count_nonzero(mine))
            for why, count in pd.Series(reason[mine], dtype=object).value_counts(sort=False).items():
                self._left_out[kind][why] = self._left_out[kind].get(why, 0) + int(count)
        if records is None:
            return
        errored = reason == "run_error"
        if errored.any():
            self._run_errors.add(records.conversations["run_error"][errored].value_counts())
            room = SHOWN_ERRORED - len(self._errored)
            if room > 0:
                self._errored += [str(c) for c in results["conversation_id"].to_numpy(object)[errored][:room]]
        call_conv = records.calls["conv"].to_numpy(np.int64)
        read = ~records.calls["unreadable"].to_numpy(bool) if "unreadable" in records.calls else \
            np.ones(call_conv.size, dtype=bool)
        self._evaluated_calls = (self._evaluated_calls or 0) + int(np.count_nonzero(
            results["evaluated"].to_numpy(bool)[call_conv] & read))  # calls read from the log, not guessed
        self._unreadable_calls += int(read.size - np.count_nonzero(read))
        names = records.calls["name"].value_counts(sort=False)
        self._calls = (self._calls or 0) + int(names.sum())
        self._escalation_calls += int(names[names.index.isin(self._escalation_tools)].sum())
        self._with_record += int(np.count_nonzero(records.conversations["has_record"].to_numpy(bool)))
        self._names.add(names)

    def _add_pairs(self, results, evaluated) -> None:
        rows, is_esc, error, base_error = pair_halves(results, evaluated)
        halves = {"case": self._paired.codes(results["case_id"].to_numpy(object)[rows]),
                  "replica": results["replica"].to_numpy(np.int64)[rows], "is_esc": is_esc, "error": error,
                  "base_error": base_error}
        if self._waiting is not None:
            halves = {k: np.concatenate([self._waiting[k], v]) for k, v in halves.items()}
        esc, act, waiting = match_pairs(halves["case"], halves["replica"], halves["is_esc"])
        self._waiting = {k: v[waiting] for k, v in halves.items()}
        ok = (1 - halves["error"][esc]) * (1 - halves["error"][act])
        self._paired.add(halves["case"][esc], ok)
        self._base_ok += int(np.count_nonzero((halves["base_error"][esc] == 0) & (halves["base_error"][act] == 0)))

    def summary(self, *, confidence: float = 0.95, rho: float | None = None, mode: str = "record",
                interval: str = AUTO_INTERVAL, seed: int = 0) -> Summary:
        """The summary of everything added so far (SPEC sections 5 and 7)."""
        if rho is not None:
            check_probability("rho", rho)
        under_causes = {c: self._causes[c] for c in UNDER_CAUSES}
        over_causes = {c: self._causes[c] for c in OVER_CAUSES}
        design: dict[str, Any] = {"confidence": confidence, "rho": rho, "interval": interval, "seed": seed}
        under = rate_of_clusters(*self._under.totals(), causes=under_causes, **design)
        over = rate_of_clusters(*self._over.totals(), causes=over_causes, **design)
        paired = PairedSummary.of_rate(rate_of_clusters(*self._paired.totals(), **design))
        approval = ApprovalSummary.of_rate(
            rate_of_clusters(*self._approval.totals(), causes=dict(self._approval_causes), **design),
            gated_calls=self._gated_calls, statuses=dict(self._statuses), requests=self._requests,
            unknown_decisions=self._unknown_decisions)
        nan = float("nan")
        base = BaseSummary(under_causes[BASE_CAUSES[0]] / under.n if under.n else nan,
                           over_causes[BASE_CAUSES[1]] / over.n if over.n else nan,
                           self._base_ok / paired.pairs if paired.pairs else nan)
        reasons = {r: self._reasons[r] for r in NOT_EVALUATED_REASONS if r in self._reasons}
        missing = self._plan.missing() if self._plan is not None else ()
        if missing:
            reasons["missing"] = len(missing)
        return Summary(
            conversations=self.conversations, confidence=confidence, mode=mode, under=under, over=over,
            paired=paired, base=base, approval=approval,
            not_evaluated=NotEvaluated(self._not_evaluated + len(missing), reasons, missing,
                                       self._plan.unplanned if self._plan is not None else 0),
            unmarked_tools={str(k): v for k, v in sorted(self._tools.items())}, rho_fixed=rho,
            tally=InputTally(calls=self._calls, escalation_calls=self._escalation_calls,
                             escalation_tools=self._escalation_tools, tools=self._names.most_frequent(),
                             other_tools=self._names.others, with_record=self._with_record,
                             labels=self._labels.most_frequent(), other_labels=self._labels.others,
                             broken_rules=dict(self._rules), run_errors=self._run_errors.most_frequent(),
                             other_run_errors=self._run_errors.others, errored=tuple(self._errored),
                             evaluated_calls=self._evaluated_calls, unreadable_calls=self._unreadable_calls,
                             labelled=dict(self._labelled),
                             left_out={k: {r: v[r] for r in NOT_EVALUATED_REASONS if r in v}
                                       for k, v in self._left_out.items()}))


def summarise(results: pd.DataFrame, *, confidence: float = 0.95, rho: float | None = None,
              mode: str = "record", plan: pd.DataFrame | None = None, interval: str = AUTO_INTERVAL,
              seed: int = 0) -> Summary:
    """Aggregate scored conversations (:func:`score_records` output) as SPEC section 5 says.

    Parameters
    ----------
    results : DataFrame
        One row per conversation (columns of :data:`estimators.metric._vectorised.RESULT_COLUMNS`).
    confidence : float
        Two-sided level of every interval.
    rho : float, optional
        Fix the intra-scenario correlation instead of estimating it (``--rho``).
    mode : str
        Recorded in the summary; results of the two modes are never pooled.
    plan : DataFrame, optional
        Planned scenarios (``case_id, label, replicas``): planned conversations absent
        from ``results`` are reported as ``missing``, never counted.
    interval : str
        The interval of every figure: ``auto`` (the default: for each figure the narrowest that held 95%
        in the coverage study for its scenarios and replicas, :func:`estimators.choose_interval`) or one
        of :data:`estimators.INTERVAL_METHODS` (the paper's is ``wilson-kish``).
    seed : int
        Seed of the bootstrap intervals' resamples.

    Raises
    ------
    InputError
        When a ``conversation_id``, or a (case, label, replica), repeats
        (:func:`~estimators.records._records.check_unique_keys`, the readers' rule).
    """
    check_unique_keys(results)
    accumulator = SummaryAccumulator(plan=plan)
    accumulator.add(results)
    return accumulator.summary(confidence=confidence, rho=rho, mode=mode, interval=interval, seed=seed)
