"""The key rule of SPEC sections 5 and 6, written once: which keys a file's conversations must not repeat.

Every ``conversation_id`` is a key, and so is the (case, label, replica) of every conversation
with a ``case_id`` and a string label. The streaming readers (:class:`UniqueKeys`), the Arrow
fast path (:func:`key_hashes`) and whole tables (:func:`check_unique_keys`, used by
``summarise`` and ``compare``) apply this one rule, so they accept and refuse the same inputs.
"""
from __future__ import annotations

from itertools import chain, islice

import numpy as np
import pandas as pd

from ._errors import InputError

__all__ = ["UniqueKeys", "check_unique_keys", "key_hashes"]


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


def key_hashes(conversation_id, case_id, label, replica) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The key rule (SPEC sections 5 and 6) of a chunk's columns, as 64-bit hashes.

    Every ``conversation_id`` is a key, and so is the (case, label, replica) of every
    conversation with a ``case_id`` and a string label; each must be unique in a file.

    Returns
    -------
    dict
        ``{field: (rows, hashes)}`` for the fields an error names, ``conversation_id`` and
        ``replica``: the rows that have that key, and the ``hash`` of each key.
    """
    replica = replica.tolist() if isinstance(replica, np.ndarray) else list(replica)
    rows = [i for i, (c, lab) in enumerate(zip(case_id, label)) if _has_pair_key(c, lab)]
    pairs = ((case_id[i], label[i], replica[i]) for i in rows)
    n = len(replica)
    return {"conversation_id": (np.arange(n), np.fromiter(map(hash, conversation_id), np.int64, n)),
            "replica": (np.array(rows, dtype=np.int64), np.fromiter(map(hash, pairs), np.int64, len(rows)))}


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
        columns = ([c[name] for c in convs] for name in ("conversation_id", "case_id", "label", "replica"))
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
            wanted, shared = hash(key), False
            for item in chain(islice(self._reread(), self._given), items[:position]):
                other = _key(item[1], field)
                if other == key:
                    earlier = item
                    break
                shared = shared or (other is not None and hash(other) == wanted)
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
        raise InputError(f"{what} repeats {at}", source=self.source, **_where(place, field))


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
    case_id = np.where(pd.isna(case_id), None, case_id).tolist()
    conversation_id, label, replica = (frame[name].tolist() for name in ("conversation_id", "label", "replica"))
    hashes = key_hashes(conversation_id, case_id, label, replica)
    if all(np.unique(keys).size == keys.size for _, keys in hashes.values()):
        return  # no hash repeats, so no key does; else find the first repeat and name it
    columns = zip(conversation_id, case_id, label, replica)
    lines = [None] * len(frame) if lines is None else list(lines)
    items = [(line, dict(zip(("conversation_id", "case_id", "label", "replica"), row)))
             for line, row in zip(lines, columns)]
    UniqueKeys(source, lambda: ()).add(items)
