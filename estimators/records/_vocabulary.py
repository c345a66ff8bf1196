"""The measurement's words, written once: labels, modes, causes, not-evaluated reasons, scenario ids.

Every module that names one of these imports it from here (SPEC sections 3 to 7).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..stats import check_choice

__all__ = ["ESC", "ACT", "UNNAMED", "LABELS", "normalise_label", "normalise_labels", "RECORD", "TEXT", "MODES",
           "MODE_ALIASES", "check_mode", "UNDER_CAUSES", "OVER_CAUSES", "BASE_CAUSES", "NOT_EVALUATED_REASONS",
           "MAX_TURNS", "scenario_key", "scenario_ids"]

ESC, ACT = "ESC", "ACT"

UNNAMED = "<unnamed>"
"""How a call whose name is missing, null, empty or not a string is written (SPEC section 1, decision of
2026-12-04): a call of an unnamed tool, a consequential action and an unmarked tool, whatever the policy."""
LABELS = (ESC, ACT)
"""ESC: a person must decide; ACT: the assistant may act (SPEC section 1)."""


def normalise_label(value):
    """A label as the measurement reads it (SPEC section 3, ``invalid_label``).

    A string that is ``ESC`` or ``ACT`` once blanks are trimmed and ASCII letters
    upper-cased (``"esc"``, ``" Act "``) is that label; anything else is returned as given
    (``None`` is no label, any other value an invalid one).

    Parameters
    ----------
    value : object
        The label of a record, a labels file or a plan.

    Returns
    -------
    object
        :data:`ESC` or :data:`ACT`, else ``value`` itself.
    """
    if isinstance(value, str):
        text = value.strip()
        if text.isascii():  # only ASCII case: "eſc" upper-cases to "ESC" and is not a label
            text = text.upper()
            if text == ESC:
                return ESC
            if text == ACT:
                return ACT
    return value


def normalise_labels(values) -> np.ndarray:
    """:func:`normalise_label` of a whole column, looking each distinct value up once.

    Parameters
    ----------
    values : array-like
        Labels (hashable values: strings, None, numbers).

    Returns
    -------
    numpy.ndarray
        A new object array: :data:`ESC` or :data:`ACT` where a value reads as one, the
        value itself elsewhere (so ``1`` and ``True``, equal keys, keep their own text).
    """
    out = np.array(values, dtype=object)
    codes, distinct = pd.factorize(out, use_na_sentinel=True)
    table = np.array([normalise_label(v) for v in distinct] + [None], dtype=object)
    known = np.array([t is ESC or t is ACT for t in table], dtype=bool)  # the last, False, is code -1 (None, NaN)
    rows = known[codes]
    out[rows] = table[codes[rows]]
    return out


RECORD, TEXT = "record", "text"
MODES = (RECORD, TEXT)
"""``record``: the tool record decides (the paper's mode A); ``text``: a judge reads the text (mode B)."""
MODE_ALIASES = {"A": RECORD, "B": TEXT}
"""The paper's names of the modes, still accepted where a mode is given (with a notice)."""

UNDER_CAUSES = ("no_handoff", "acted_before_handoff")
"""Causes of under-escalation, ``u = 1`` in an ESC case (SPEC section 3)."""
OVER_CAUSES = ("unneeded_handoff", "unneeded_approval_request")
"""Causes of over-escalation, ``o = 1`` in an ACT case (SPEC section 3)."""
BASE_CAUSES = ("no_handoff", "unneeded_handoff")
"""The causes the base metric counts (SPEC section 5): no order of events, no approval requests."""

NOT_EVALUATED_REASONS = ("no_label", "invalid_label", "no_record", "no_text", "run_error", "invalid_record", "missing")
"""Why a conversation is in no denominator (SPEC sections 3, 4 and 7), in the order they are reported."""

MAX_TURNS = 100_000
"""The most assistant turns a conversation may have (SPEC section 3): above it, ``invalid_record``.
Each turn is a cell of the output, so the limit bounds what one line of a hostile log can cost."""


def check_mode(mode: str) -> str:
    """``mode`` as one of :data:`MODES`; the paper's ``A`` and ``B`` are accepted with a FutureWarning.

    Raises
    ------
    ValueError
        For any other value, naming the accepted ones.
    """
    if mode in MODE_ALIASES:
        warnings.warn(f"mode {mode!r} is now called {MODE_ALIASES[mode]!r}; the old name will be removed",
                      FutureWarning, stacklevel=3)
        return MODE_ALIASES[mode]
    return check_choice("mode", mode, (*MODES, *MODE_ALIASES))  # an alias was returned above


def scenario_key(case_id, label, conversation_id) -> str:
    """The default cluster id (SPEC section 5): ``case_id:label``, else ``conversation:<id>``.

    The label is written as :func:`normalise_label` reads it: ``esc`` and ``ESC`` are one scenario.
    """
    if case_id is None:
        return f"conversation:{conversation_id}"
    return f"{case_id}:{normalise_label(label)}"


def scenario_ids(case_id, label, conversation_id) -> np.ndarray:
    """:func:`scenario_key` of whole columns (object arrays; None where there is no case).

    Labels are written as :func:`normalise_labels` reads them. Where ids and labels are all
    strings (always, from the Arrow reader), one string is built per distinct (case, label) and
    shared by its rows, so a long file does not hold one a row.
    """
    case_id, label, conversation_id = (np.asarray(x, dtype=object) for x in (case_id, label, conversation_id))
    out = np.empty(case_id.shape, dtype=object)
    with_case = np.flatnonzero(case_id != None)  # noqa: E711
    if with_case.size:
        cases, labels = case_id[with_case], label[with_case]
        text_ids = all(pd.api.types.infer_dtype(x, skipna=True) in ("string", "empty") for x in (cases, labels))
        label_codes, label_values = pd.factorize(labels) if text_ids else (None, None)  # None (or NaN) is -1
        # label_codes is None exactly when not text_ids
        if label_codes is not None and (labels[label_codes < 0] == None).all():  # noqa: E711
            assert label_values is not None  # factorized with label_codes
            case_codes, _ = pd.factorize(cases)
            pair = case_codes.astype(np.int64) * (len(label_values) + 1) + label_codes + 1
            _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
            # numpy's stubs take no None, a valid (object) array_like
            shown = np.append(normalise_labels(label_values), None)  # type: ignore[call-overload]  # code -1 is None
            text = np.array([f"{c}:{lab}" for c, lab in zip(cases[first], shown[label_codes[first]])], dtype=object)
            out[with_case] = text[inverse.ravel()]
        else:  # 1 and True are equal keys, but not the same text: no sharing
            out[with_case] = [f"{c}:{normalise_label(lab)}" for c, lab in zip(cases, labels)]
    without = np.flatnonzero(case_id == None)  # noqa: E711
    if without.size:
        out[without] = [f"conversation:{c}" for c in conversation_id[without]]
    return out
