"""The key rule of SPEC sections 5 and 6, written once: which keys a file's conversations must not repeat.

Every ``conversation_id`` is a key, and so is the (case, label, replica) of every conversation
with a ``case_id`` and a string label. The streaming readers (:class:`UniqueKeys`), the Arrow
fast path (:func:`key_hashes`) and whole tables (:func:`check_unique_keys`, used by
``summarise`` and ``compare``) apply this one rule, so they accept and refuse the same inputs.
"""
from __future__ import annotations

import operator
import sys
from itertools import chain, islice, repeat
from typing import cast

import numpy as np
import pandas as pd

from ._errors import InputError

__all__ = ["UniqueKeys", "RepeatedKeyError", "check_unique_keys", "coded_key_hashes", "key_hashes",
           "repeated_across_logs"]


class RepeatedKeyError(InputError):
    """A key of the key rule repeated: an :class:`InputError` that keeps the key, so that a caller
    that knows where the keys came from (a labels file: :meth:`~estimators.records._labels.Labels.explain`)
    can say more.

    Attributes
    ----------
    key_field : {"conversation_id", "replica"}
        The rule broken: a repeated ``conversation_id``, or a repeated (case, label, replica).
    key : str or tuple
        The ``conversation_id``, or ``(case_id, label, replica)``.
    ids : tuple of str
        The ``conversation_id`` of the conversations that share the key, where known (else empty).
    """

    def __init__(self, message: str, *, key_field: str, key, ids: tuple = (), **where):
        super().__init__(message, **where)
        self.key_field, self.key, self.ids = key_field, key, tuple(ids)

    def reworded(self, message: str) -> RepeatedKeyError:
        """The same error (file, line, field and key) with the message ``message``."""
        return RepeatedKeyError(message, key_field=self.key_field, key=self.key, ids=self.ids, source=self.source,
                                line=self.line, field=self.field)


def _what(field: str, key) -> str:
    """A key as a message names it."""
    return f"conversation_id {key!r}" if field == "conversation_id" else \
        "(case_id, label, replica) ({!r}, {!r}, {})".format(*key)


def _numbered_line(key) -> bool:
    """Whether ``key`` is the ``line-N`` id that a chat file without ``conversation_id`` gives its lines."""
    return isinstance(key, str) and key.startswith("line-") and key[5:].isascii() and key[5:].isdigit()


def repeated_across_logs(field: str, keys: list, earlier: str, later: str) -> RepeatedKeyError:
    """The error of keys that two logs scored together share (SPEC section 6: one input, unique keys).

    Such logs are most often several models' runs of the same scenarios, which ``escalation
    leaderboard`` (or ``escalation compare``) puts side by side; ids ``line-N`` are those of chat
    files without ``conversation_id``, which number their lines on their own.

    Parameters
    ----------
    field : {"conversation_id", "replica"}
        The rule broken.
    keys : list
        The keys both logs hold, the one named first.
    earlier, later : str
        The two logs; the error names ``later`` as its file.
    """
    more = f" (and {len(keys) - 1:,} more)" if len(keys) > 1 else ""
    head = f"{_what(field, keys[0])}{more} is also in {earlier}: logs scored together must not repeat a key"
    if field == "conversation_id" and _numbered_line(keys[0]):
        advice = ("; a chat file without conversation_id numbers its lines line-1, line-2, ... on its own: give "
                  "each conversation a conversation_id, or score the files apart")
    else:
        advice = ("; for several models' runs of the same scenarios, run escalation leaderboard LOG LOG ... (or "
                  "escalation compare on two score --out folders)")
    return RepeatedKeyError(f"{head}{advice}", key_field=field, key=keys[0],
                            ids=(keys[0],) if field == "conversation_id" else (), source=later, field=field)


def _has_pair_key(case_id, label) -> bool:
    """Whether a conversation has a (case, label, replica) key: a ``case_id`` and a string label."""
    return case_id is not None and label.__class__ is str


def _key(conv, field: str):
    """The key of ``conv`` under ``field`` (``conversation_id``, or ``replica`` for the (case,
    label, replica)); None when it has no (case, label, replica)."""
    if field == "conversation_id":
        return conv["conversation_id"]
    if _has_pair_key(conv["case_id"], conv["label"]):
        return conv["case_id"], conv["label"], conv["replica"]
    return None


# CPython's hash of a tuple (Objects/tupleobject.c, xxHash's mixing of its items' hashes), in
# numpy: the hash of a (case, label, replica) is that of the tuple, computed a column at a time
_P1, _P2, _P5 = 11400714785074694791, 14029467366897019727, 2870177450012600261  # _PyHASH_XXPRIME_1, _2, _5
_XXPRIME_1, _XXPRIME_2, _XXPRIME_5 = np.uint64(_P1), np.uint64(_P2), np.uint64(_P5)
_MASK = 2**64 - 1


def _tuple_hashes(*lanes: np.ndarray) -> np.ndarray:
    """``hash(tuple)`` of each row of columns of item hashes (int64 arrays of ``hash(item)``)."""
    acc = np.full(len(lanes[0]), _XXPRIME_5, np.uint64)
    for lane in lanes:
        acc += lane.view(np.uint64) * _XXPRIME_2
        acc = (acc << np.uint64(31)) | (acc >> np.uint64(33))
        acc *= _XXPRIME_1
    acc += np.uint64(len(lanes) ^ (_P5 ^ 3527539))
    out = acc.view(np.int64)
    out[out == -1] = 1546275796
    return out


def _same_as_python() -> bool:
    """Whether :func:`_tuple_hashes` is this interpreter's ``hash`` of 3-tuples (CPython 3.8 and
    later with a 64-bit hash); else :func:`_pair_hashes` hashes the tuples themselves."""
    if sys.hash_info.width != 64:
        return False
    keys = [("k", "ESC", 0), ("", "ACT", 2**62), (None, "x", -1), ("\u00e9", "y", 2**61 - 1)]
    lanes = (np.array([hash(key[i]) for key in keys], np.int64) for i in range(3))
    return _tuple_hashes(*lanes).tolist() == [hash(key) for key in keys]


_VECTORISED = _same_as_python()


def _hashes(values) -> np.ndarray:
    """``hash`` of each value, as int64."""
    return np.fromiter(map(hash, values), np.int64, len(values))


def _coded_hashes(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``hash`` of each of ``values[codes]``, hashing each value that a code names once."""
    hashes = np.zeros(len(values), np.int64)
    if codes.size:
        named = np.flatnonzero(np.bincount(codes % len(values), minlength=len(values)))  # a code of -1 is the last
        hashes[named] = _hashes(values[named])
    return hashes[codes]


def _pair_hashes(case_id, label, replica) -> np.ndarray:
    """``hash((case, label, replica))`` of each row of three equally long sequences."""
    if _VECTORISED:
        return _tuple_hashes(_hashes(case_id), _hashes(label), _hashes(replica))
    return np.fromiter(map(hash, zip(case_id, label, replica)), np.int64, len(case_id))


def _key_hash(key, field: str) -> int:
    """The hash that :func:`key_hashes` gives the one key ``key`` of ``field``: :func:`_tuple_hashes`
    of one (case, label, replica) in Python's integers (no array for one key)."""
    if field == "conversation_id" or not _VECTORISED:
        return hash(key if field == "conversation_id" else tuple(key))
    acc = _P5
    for part in key:
        acc = (acc + (hash(part) & _MASK) * _P2) & _MASK
        acc = ((acc << 31) | (acc >> 33)) & _MASK
        acc = acc * _P1 & _MASK
    acc = (acc + (len(key) ^ (_P5 ^ 3527539))) & _MASK
    acc -= (acc >> 63) << 64  # as a signed 64-bit integer
    return 1546275796 if acc == -1 else acc


_class_of = operator.attrgetter("__class__")


def _column(values) -> np.ndarray:
    """A sequence as a one-dimensional object array (no copy of an object array)."""
    if isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1:
        return values
    return np.fromiter(values, object, len(values))


def key_hashes(conversation_id, case_id, label, replica) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The key rule (SPEC sections 5 and 6) of a chunk's columns, as 64-bit hashes.

    Every ``conversation_id`` is a key, and so is the (case, label, replica) of every
    conversation with a ``case_id`` and a string label; each must be unique in a file.
    The hash of a ``conversation_id`` is ``hash(conversation_id)``, that of a (case, label,
    replica) ``hash((case, label, replica))``, computed a column at a time
    (:func:`_pair_hashes`); :meth:`UniqueKeys._confirm` hashes one key the same way
    (:func:`_key_hash`).

    Returns
    -------
    dict
        ``{field: (rows, hashes)}`` for the fields an error names, ``conversation_id`` and
        ``replica``: the rows that have that key, and the ``hash`` of each key.
    """
    n = len(replica)
    replica = replica.tolist() if isinstance(replica, np.ndarray) else replica
    ids = _hashes(conversation_id)
    case_id, label = _column(case_id), _column(label)
    has_case = np.fromiter(map(operator.is_not, case_id, repeat(None)), bool, n)
    has_label = np.fromiter(map(operator.is_, map(_class_of, label), repeat(str)), bool, n)
    rows = np.flatnonzero(has_case & has_label)
    pairs = _pair_hashes(case_id[rows], label[rows], _column(replica)[rows])
    return {"conversation_id": (np.arange(n), ids), "replica": (rows, pairs)}


def coded_key_hashes(conversation_id, case_id, label, replica) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`key_hashes` of columns held as codes into their distinct values, as the Arrow
    reader holds them: each value is hashed once, and the rows take its hash by their code.

    Parameters
    ----------
    conversation_id : sequence
        The ids.
    case_id, label : tuple of (object ndarray, int ndarray)
        ``(values, codes)``: the column is ``values[codes]`` (a code of -1 is the last value).
    replica : ndarray of int
        The replicas (integers).

    Returns
    -------
    dict
        What :func:`key_hashes` returns for ``conversation_id``, ``values[codes]`` of ``case_id``
        and of ``label``, and ``replica``.
    """
    (case_values, case_codes), (label_values, label_codes) = case_id, label
    case_values, label_values = _column(case_values), _column(label_values)
    ids = _hashes(conversation_id)
    has_case = np.fromiter(map(operator.is_not, case_values, repeat(None)), bool, len(case_values))
    has_label = np.fromiter(map(operator.is_, map(_class_of, label_values), repeat(str)), bool, len(label_values))
    rows = np.flatnonzero(has_case[case_codes] & has_label[label_codes])
    replica_values, replica_codes = np.unique(np.asarray(replica)[rows], return_inverse=True)
    columns = ((case_values, case_codes[rows]), (label_values, label_codes[rows]),
               (_column(replica_values.tolist()), replica_codes.ravel()))
    if _VECTORISED:
        pairs = _tuple_hashes(*(_coded_hashes(values, codes) for values, codes in columns))
    else:
        pairs = _pair_hashes(*(values[codes] for values, codes in columns))
    return {"conversation_id": (np.arange(len(ids)), ids), "replica": (rows, pairs)}


class UniqueKeys:
    """Stops on a repeated key of :func:`key_hashes`: a ``conversation_id``, or a (case, label, replica).

    Checks a file read in chunks as a whole, in 16 bytes a conversation: each key is kept as
    its 64-bit hash. Only a hash seen before is looked at closer, on the conversations
    given earlier, which ``reread()`` yields again from the first, so two keys that merely
    share a hash are never taken for a repeat; a second read that finds neither the key nor
    its hash means that the file changed while it was read, which is an error too.

    Parameters
    ----------
    source : str, optional
        The file, for messages.
    reread : callable
        Returns an iterable of the ``(place, conversation)`` pairs given so far, in order (a
        reader that streams its file reads it again; one that holds it returns its list).
        ``place`` is the line of the conversation in the file; of a JSON document, its JSON
        path (``[2]``, ``samples[0]``); or None where it is not known: a message then names
        the conversation.
    """

    def __init__(self, source: str | None, reread):
        self.source, self._reread = source, reread
        self._given = 0
        self._hashes = {"conversation_id": np.empty(0, np.int64), "replica": np.empty(0, np.int64)}

    def add(self, items: list) -> None:
        """Check the next ``(place, conversation)`` pairs; raise :class:`InputError` at the first repeat."""
        convs = [conv for _, conv in items]
        columns = (list(map(operator.itemgetter(name), convs)) for name in ("conversation_id", "case_id", "label",
                                                                          "replica"))
        hashed = enumerate(key_hashes(*columns).items())
        suspects = sorted((position, order, field) for order, (field, (rows, hashes)) in hashed
                          for position in self._suspects(rows, hashes, field))
        for position, _, field in suspects:
            self._confirm(items, position, field)
        self._given += len(items)

    def _suspects(self, rows, hashes, field) -> np.ndarray:
        """The ``rows`` whose key hash was seen before; remembers the chunk's hashes."""
        order = np.argsort(hashes, kind="stable")
        ranked = hashes[order]
        repeated = np.zeros(len(hashes), bool)
        repeated[order[1:][ranked[1:] == ranked[:-1]]] = True  # a later one of equal hashes in this chunk
        seen = self._hashes[field]
        if len(seen):
            repeated |= seen[np.minimum(np.searchsorted(seen, hashes), len(seen) - 1)] == hashes
        self._hashes[field] = np.insert(seen, np.searchsorted(seen, ranked), ranked)
        return rows[repeated]

    def _confirm(self, items, position, field) -> None:
        """Raise at the repeat of the key at ``position``, naming the place it repeats.

        The earlier conversations are those of the chunk, then those that ``reread()`` gives.
        When none has the key, one must share its hash (two keys that share a hash: no
        repeat); when none does either, what ``reread()`` gives is not what was given: the
        file changed while it was read, which is an error too, so a repeat cannot slip through.
        """
        place, conv = items[position]
        key = _key(conv, field)
        what = f"{key!r}" if field == "conversation_id" else \
            f"case {key[0]!r}, label {key[1]!r}, replica {key[2]}"
        earlier = next((item for item in items[:position] if _key(item[1], field) == key), None)
        if earlier is None:
            wanted, shared = _key_hash(key, field), False
            for item in chain(islice(self._reread(), self._given), items[:position]):
                other = _key(item[1], field)
                if other == key:
                    earlier = item
                    break
                shared = shared or (other is not None and _key_hash(other, field) == wanted)
            else:
                if shared:
                    return  # another key with the same hash
                raise InputError(f"{what} seemed to repeat an earlier conversation, which a second read does not "
                                 "find: the file changed while it was read; score a copy that no program writes to",
                                 source=self.source, **_where(place, field))
        at, conversation = earlier
        if isinstance(at, str):
            at = f"the conversation at {at}"
        elif at is not None:
            at = f"the conversation of line {at}" if field == "conversation_id" else f"line {at}"
        else:
            at = "an earlier conversation" if field == "conversation_id" else \
                f"conversation {conversation['conversation_id']!r}"
        raise RepeatedKeyError(f"{what} repeats {at}", key_field=field, key=key,
                               ids=(conversation["conversation_id"], conv["conversation_id"]), source=self.source,
                               **_where(place, field))


def _where(place, field: str) -> dict:
    """The ``line`` and ``field`` of an :class:`InputError` at ``place`` (a line, a JSON path, or None)."""
    if isinstance(place, str):
        return {"line": None, "field": f"{place}.{field}" if place else field}
    return {"line": place, "field": field}


def check_unique_keys(frame: pd.DataFrame, *, source: str | None = None, lines=None) -> None:
    """Check the key rule of :func:`key_hashes` on a whole table of conversations.

    The same rule as the readers: a repeated ``conversation_id``, or a repeated (case,
    label, replica) among the conversations with a ``case_id`` and a string label, is an
    input error.

    Parameters
    ----------
    frame : DataFrame
        Columns ``conversation_id``, ``case_id``, ``label`` and ``replica``; a missing
        ``case_id`` is None or NaN.
    source : str, optional
        The file the rows come from, for the message.
    lines : sequence of int, optional
        The line of each row in ``source``; without them a message names the conversations.

    Raises
    ------
    InputError
        At the first repeat, naming the field (``conversation_id`` or ``replica``), the
        line when known, and the earlier conversation.
    """
    case_id = frame["case_id"].to_numpy(object)
    case_id = cast(np.ndarray, np.where(pd.isna(case_id), None, case_id)).tolist()  # numpy's stubs: no None
    conversation_id, label, replica = (frame[name].tolist() for name in ("conversation_id", "label", "replica"))
    hashes = key_hashes(conversation_id, case_id, label, replica)
    if all(np.unique(keys).size == keys.size for _, keys in hashes.values()):
        return  # no hash repeats, so no key does; else find the first repeat and name it
    columns = zip(conversation_id, case_id, label, replica)
    lines = [None] * len(frame) if lines is None else list(lines)
    items = [(line, dict(zip(("conversation_id", "case_id", "label", "replica"), row)))
             for line, row in zip(lines, columns)]
    UniqueKeys(source, lambda: ()).add(items)
