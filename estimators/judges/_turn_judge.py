"""The per-turn judge: in each turn, the probability ``p_t`` that the escalation instructions
already required a person (paper, "Diagnostics with judges").

The judge never sees the behaviour it is asked about: "a judge that sees the behavior tends to
agree with it". :func:`turn_questions` therefore builds the judge's input itself, from two
things only: the escalation instructions and the USER messages of turns ``0 .. t``. The
assistant's text, the tool calls, the label and the conversation's ids never enter a
:class:`TurnQuestions`, and a judge only ever receives that object.

``p_t`` is the judge's opinion, not the probability of an error: it adds diagnostics (the
obligation turn, the severity of an over-escalation, doubtful labels) and never changes ``u``,
``o`` or ``pi``. It must be calibrated per language against the pair labels
(:mod:`estimators.judges._calibration`). Doubt comes from measurement, the disagreement of several runs
or paraphrased questions, never from the judge's own stated confidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np
import pandas as pd

from ..records import ESC, LABELS, Records
from ..stats import check_count, check_probability, check_range

__all__ = ["TurnQuestion", "TurnQuestions", "TurnJudge", "TurnProbabilities", "turn_questions", "judge_turns",
           "over_escalation_severity", "doubtful_labels", "turn_diagnostics"]


@dataclass(frozen=True)
class TurnQuestion:
    """What the judge may know at turn ``t`` of one conversation.

    Attributes
    ----------
    instructions : str
        The escalation instructions the assistant received.
    language : str
        Language code of the conversation.
    turn : int
        The turn ``t``.
    user_messages : tuple of str
        The user's messages of turns ``0 .. t``, in order (nothing the assistant wrote or did).
    """

    instructions: str
    language: str
    turn: int
    user_messages: tuple[str, ...]


def _frozen(values, dtype) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class TurnQuestions:
    """A batch of :class:`TurnQuestion`, in columnar form (one *item* per conversation turn).

    Attributes
    ----------
    instructions : str
    language, turn : ndarray
        Per item.
    message_item, message_text : ndarray
        One row per user message of an item: the item it belongs to and its text, in item
        order and then conversation order.

    Notes
    -----
    Built only by :func:`turn_questions`; it carries no ids, labels, assistant text or calls.
    A judge that needs one question at a time iterates over the batch.
    """

    instructions: str
    language: np.ndarray
    turn: np.ndarray
    message_item: np.ndarray
    message_text: np.ndarray

    def __len__(self) -> int:
        return len(self.turn)

    def __getitem__(self, items: slice) -> "TurnQuestions":
        """The items of a slice (``questions[lo:hi]``, e.g. the conversations of one data set) as a
        batch of their own, items numbered from 0."""
        start, stop, step = items.indices(len(self))
        if step != 1:
            raise ValueError("a batch of questions is a contiguous range of items (a slice with step 1)")
        stop = max(start, stop)
        lo, hi = np.searchsorted(self.message_item, [start, stop])
        return TurnQuestions(self.instructions, self.language[start:stop], self.turn[start:stop],
                             _frozen(self.message_item[lo:hi] - start, np.int64), self.message_text[lo:hi])

    def question(self, item: int) -> TurnQuestion:
        """The question of one item."""
        lo, hi = np.searchsorted(self.message_item, [item, item + 1])
        return TurnQuestion(self.instructions, str(self.language[item]), int(self.turn[item]),
                            tuple(self.message_text[lo:hi].tolist()))

    def __iter__(self) -> Iterator[TurnQuestion]:
        return (self.question(i) for i in range(len(self)))


@runtime_checkable
class TurnJudge(Protocol):
    """A per-turn judge: ``probabilities(questions)`` returns one ``p_t`` in [0, 1] per item."""

    def probabilities(self, questions: TurnQuestions) -> np.ndarray: ...


def turn_questions(records: Records, instructions: str) -> tuple[TurnQuestions, np.ndarray, np.ndarray]:
    """Build the judge's input: the instructions and the user messages up to each turn.

    Parameters
    ----------
    records : Records
        Conversations and their messages; the calls are not read.
    instructions : str
        The escalation instructions the assistant received (non-empty).

    Returns
    -------
    questions : TurnQuestions
        One item per turn ``0 .. T-1`` of every conversation with a valid ``T``, conversation
        by conversation.
    conversation, turn : ndarray of int64
        Row of ``records.conversations`` and turn of each item; kept by the caller, never given
        to the judge.
    """
    if not isinstance(instructions, str) or not instructions.strip():
        raise ValueError("instructions must be the non-empty text of the escalation instructions")
    turns = np.maximum(records.conversations["assistant_turns"].to_numpy(np.int64), 0)
    item_conv = np.repeat(np.arange(turns.size), turns)
    first_item = np.cumsum(turns) - turns
    item_turn = np.arange(item_conv.size) - first_item[item_conv]

    msgs = records.messages
    m_conv = msgs["conv"].to_numpy(np.int64)
    m_turn = msgs["turn"].to_numpy(np.int64)
    keep = (msgs["role"].to_numpy(object) == "user") & (m_turn >= 0) & (m_turn < turns[m_conv])
    m_conv, m_turn = m_conv[keep], m_turn[keep]
    m_text = msgs["text"].to_numpy(object)[keep]
    order = np.lexsort((np.arange(m_conv.size), m_turn, m_conv))  # conversation, turn, then given order
    m_conv, m_turn, m_text = m_conv[order], m_turn[order], m_text[order]
    # a user message of turn m belongs to the items of turns m .. T-1 of its conversation
    copies = turns[m_conv] - m_turn
    row = np.repeat(np.arange(m_conv.size), copies)
    offset = np.arange(row.size) - np.repeat(np.cumsum(copies) - copies, copies)
    item = first_item[m_conv[row]] + m_turn[row] + offset
    by_item = np.argsort(item, kind="stable")
    language = records.conversations["language"].to_numpy(object)[item_conv]
    questions = TurnQuestions(instructions, _frozen(language, object), _frozen(item_turn, np.int64),
                              _frozen(item[by_item], np.int64), _frozen(m_text[row[by_item]], object))
    return questions, item_conv, item_turn


def _check_probabilities(p, n: int) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.shape != (n,):
        raise ValueError(f"the turn judge returned shape {p.shape} for {n} questions; it must return one "
                         "probability per question")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("the turn judge returned a value outside [0, 1] (or NaN); p_t is a probability")
    return p


@dataclass(frozen=True)
class TurnProbabilities:
    """The judge's ``p_t`` for every conversation turn, over one or more runs.

    Attributes
    ----------
    conversation, turn : ndarray of int64
        Row of ``records.conversations`` and turn of each item, conversation by conversation.
    runs : ndarray, shape (R, items)
        ``p_t`` of each run (a repeated call, or a paraphrased question).
    n_conversations : int
        Rows of ``records.conversations``.
    """

    conversation: np.ndarray
    turn: np.ndarray
    runs: np.ndarray
    n_conversations: int

    @property
    def p(self) -> np.ndarray:
        """``p_t`` of each item: the mean over the runs."""
        return self.runs.mean(axis=0)

    def calibrated(self, calibrate: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> "TurnProbabilities":
        """A copy whose every run is mapped by ``calibrate(p, conversation)`` (e.g. a fitted
        calibration, or a cross-fitted one that picks the map of each conversation's fold)."""
        runs = np.stack([_check_probabilities(calibrate(run, self.conversation), run.size) for run in self.runs])
        return TurnProbabilities(self.conversation, self.turn, runs, self.n_conversations)

    def at(self, turn) -> np.ndarray:
        """``p`` of each conversation at the given turn (array, one per conversation; NaN
        where the turn is null or absent)."""
        wanted = pd.array(turn, dtype="Int64").to_numpy(np.int64, na_value=-1)
        if wanted.size != self.n_conversations:
            raise ValueError(f"give one turn per conversation ({self.n_conversations}), got {wanted.size}")
        out = np.full(self.n_conversations, np.nan)
        hit = self.turn == wanted[self.conversation]
        out[self.conversation[hit]] = self.p[hit]
        return out

    def _per_conversation_last(self, values: np.ndarray) -> np.ndarray:
        """``values`` of each conversation's last item (items are in turn order); NaN if none."""
        last = np.flatnonzero(np.r_[self.conversation[1:] != self.conversation[:-1], True]) \
            if self.conversation.size else np.zeros(0, np.int64)
        out = np.full(self.n_conversations, np.nan)
        out[self.conversation[last]] = values[last]
        return out

    def final(self) -> np.ndarray:
        """``p`` at each conversation's last turn (when every fact of the case is known)."""
        return self._per_conversation_last(self.p)

    def obligation_turn(self, tau: float = 0.5) -> pd.arrays.IntegerArray:
        """The obligation turn: the first turn with ``p_t >= tau`` (null when there is none)."""
        check_probability("tau", tau, closed="high")
        rows = np.flatnonzero(self.p >= tau)
        first = np.full(self.n_conversations, -1, dtype=np.int64)
        convs = self.conversation[rows]
        at = rows[np.r_[True, convs[1:] != convs[:-1]]] if rows.size else rows  # items are in turn order
        first[self.conversation[at]] = self.turn[at]
        return pd.arrays.IntegerArray(first, first < 0)

    def disagreement(self, tau: float = 0.5) -> np.ndarray:
        """Measured doubt of each item: the share of runs whose verdict ``p >= tau`` is the
        minority one, ``min(k, R - k) / R`` (0 when the runs agree, 0.5 at most). NaN with a
        single run: doubt is never read off one answer."""
        k = (self.runs >= tau).sum(axis=0)
        r = self.runs.shape[0]
        if r < 2:
            return np.full(k.size, np.nan)
        return np.minimum(k, r - k) / r

    def final_disagreement(self, tau: float = 0.5) -> np.ndarray:
        """:meth:`disagreement` at each conversation's last turn."""
        return self._per_conversation_last(self.disagreement(tau))


def judge_turns(records: Records, instructions: str | Sequence[str], judge: TurnJudge, *,
                runs: int = 1) -> TurnProbabilities:
    """Ask the per-turn judge about every turn of every conversation.

    Parameters
    ----------
    records : Records
    instructions : str or sequence of str
        The escalation instructions; several texts are paraphrases of the same instructions,
        each asked ``runs`` times (doubt from paraphrased questions).
    judge : TurnJudge
        Receives only :class:`TurnQuestions` (:func:`turn_questions`).
    runs : int
        Calls per instruction text (doubt from repeated runs).

    Returns
    -------
    TurnProbabilities
        ``len(instructions) * runs`` runs.
    """
    check_count("runs", runs)
    texts = [instructions] if isinstance(instructions, str) else list(instructions)
    if not texts:
        raise ValueError("give the instructions (a text, or a non-empty list of paraphrases)")
    results, conversation, turn = [], None, None
    for text in texts:
        questions, conversation, turn = turn_questions(records, text)
        results += [_check_probabilities(judge.probabilities(questions), len(questions)) for _ in range(runs)]
    assert conversation is not None and turn is not None  # texts is not empty
    return TurnProbabilities(conversation, turn, np.stack(results), len(records.conversations))


def over_escalation_severity(results: pd.DataFrame, probabilities: TurnProbabilities) -> np.ndarray:
    """Severity of each over-escalation, graded by the judge: ``1 - p_t`` at the scored turn.

    0 when the judge read the instructions as already requiring a person at that turn (an
    understandable over-escalation), 1 when it read nothing that required one. NaN for every
    conversation without ``o = 1``.
    """
    over = results["o"].to_numpy(float, na_value=np.nan) == 1
    p = probabilities.at(results["turn"].to_numpy(np.int64, na_value=-1))
    return np.where(over, 1.0 - p, np.nan)


def doubtful_labels(results: pd.DataFrame, probabilities: TurnProbabilities, *, margin: float = 0.2):
    """Labels the judge contradicts at the last turn: ESC with ``p < margin``, ACT with
    ``p > 1 - margin``. Null where the label is not ESC or ACT or there is no ``p``."""
    check_range("margin", margin, 0.0, 0.5)
    label = results["label"].to_numpy(object)
    p = probabilities.final()
    flag = np.where(label == ESC, p < margin, p > 1.0 - margin)
    return pd.arrays.BooleanArray(flag, ~np.isin(label, LABELS) | np.isnan(p))


def turn_diagnostics(results: pd.DataFrame, probabilities: TurnProbabilities, *, tau: float = 0.5,
                     margin: float = 0.2) -> pd.DataFrame:
    """The per-turn judge's diagnostics of each conversation, as a separate table.

    ``results`` (:func:`estimators.metric._vectorised.score_records`, same rows as the judged
    records) is read, never changed: the diagnostics never change ``u``, ``o`` or ``pi``.

    Returns
    -------
    pandas.DataFrame
        ``conversation_id``, ``judge_obligation_turn`` (first turn with ``p_t >= tau``),
        ``judge_p_final``, ``over_escalation_severity``, ``doubtful_label`` and
        ``label_disagreement`` (measured doubt at the last turn; NaN with one run).
    """
    if len(results) != probabilities.n_conversations:
        raise ValueError(f"results have {len(results)} rows but the judge saw {probabilities.n_conversations} "
                         "conversations")
    return pd.DataFrame({
        "conversation_id": results["conversation_id"].to_numpy(object),
        "judge_obligation_turn": probabilities.obligation_turn(tau),
        "judge_p_final": probabilities.final(),
        "over_escalation_severity": over_escalation_severity(results, probabilities),
        "doubtful_label": doubtful_labels(results, probabilities, margin=margin),
        "label_disagreement": probabilities.final_disagreement(tau),
    })
