"""Holm's adjusted p-values and the compact letter display: which of several models differ, in letters.

The leaderboard (:mod:`estimators.metric._leaderboard`) adjusts the pairwise p-values of each figure with
:func:`holm_adjust`, one family per figure (``p_u``, ``p_o``, ``pi`` and ``p_a``), and writes the groups with
:func:`compact_letter_display`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["holm_adjust", "compact_letter_display"]


#: The letters of the display; past them, each is used again behind one more "." (as R's multcomp does).
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def holm_adjust(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979).

    With the ``m`` defined p-values in ascending order ``p_(1) <= ... <= p_(m)``, the adjusted
    value of ``p_(k)`` is ``max_{j <= k} min(1, (m - j + 1) p_(j))``; a hypothesis is rejected
    at familywise level ``alpha`` when its adjusted value is at most ``alpha``. This is R's
    ``p.adjust(p, "holm")``. NaN (an undefined test) stays NaN and is not counted in ``m``.

    Parameters
    ----------
    p_values : array_like of float

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input order.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(np.isfinite(p))
    m = len(defined)
    if m:
        order = defined[np.argsort(p[defined], kind="stable")]
        steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(steps)
    return out


def _letter(index: int) -> str:
    """The name of column ``index``: ``a`` .. ``Z``, then ``.a`` .. ``.Z``, ``..a`` and so on."""
    dots, position = divmod(index, len(_LETTERS))
    return "." * dots + _LETTERS[position]


def compact_letter_display(items: Sequence[str], different: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Letters such that two items share a letter exactly when they are not declared different.

    The insert-absorb algorithm of Piepho (2004, section 2): start with one letter for all
    items; for each different pair ``(i, j)``, every letter that both carry is split in two,
    one without ``i`` and one without ``j`` (insert); then every letter whose items are all in
    another letter is removed (absorb). The letters left are the largest groups of items
    among which no pair is different, whatever the order of the pairs. They are named in the
    order of ``items``: a letter comes before another when it holds an earlier item that the
    other lacks (the order of R's ``multcompView::multcompLetters``, which, like this
    function, does not perform Piepho's optional "sweeping" of redundant letters).

    Parameters
    ----------
    items : sequence of str
        The items (models), in display order: the first one's letters come first.
    different : iterable of (str, str)
        The pairs declared different; pairs not given are not different.

    Returns
    -------
    dict
        The letters of each item, in the order of ``items`` (e.g. ``{"A": "ab", "B": "a"}``).

    Raises
    ------
    ValueError
        When an item repeats, or a pair names an item not in ``items`` or one item twice.
    """
    items = list(items)
    position = {item: i for i, item in enumerate(items)}
    if len(position) != len(items):
        raise ValueError("items must be distinct")
    columns: list[frozenset] = [frozenset(range(len(items)))] if items else []
    for pair in different:
        a, b = pair
        if a not in position or b not in position or a == b:
            raise ValueError(f"a different pair must name two distinct items of {items!r}, got {pair!r}")
        i, j = position[a], position[b]
        split = [c for c in columns if i in c and j in c]
        if not split:
            continue
        kept = [c for c in columns if not (i in c and j in c)]
        columns = _absorb(kept + [c - {i} for c in split] + [c - {j} for c in split])
    columns.sort(key=lambda c: [i not in c for i in range(len(items))])
    return {item: "".join(_letter(k) for k, c in enumerate(columns) if i in c) for i, item in enumerate(items)}


def _absorb(columns: list[frozenset]) -> list[frozenset]:
    """The columns that no other column contains (one of each set of equal columns)."""
    unique = list(dict.fromkeys(columns))
    return [c for c in unique if not any(c < other for other in unique)]
