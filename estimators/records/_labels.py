"""Label files (``--labels``) and plan files (``--plan``) of SPEC section 7."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd

from ._errors import InputError, shown
from ._keys import RepeatedKeyError
from ._planned import MAX_PLANNED_CONVERSATIONS
from ._records import refuse_compressed
from ._vocabulary import LABELS, normalise_label, scenario_key

__all__ = ["Labels", "load_labels", "load_plan"]


#: How many of a labels file's keys, and of a log's ids, a note shows.
_SHOWN = 3


class Labels:
    """Labels by ``conversation_id`` and by ``case_id``; a conversation entry wins over a case entry.

    A label from the file replaces the label the record carries; it is read as a record's label
    is (:func:`~estimators.records._vocabulary.normalise_label`: ``esc`` is ESC, ``maybe`` stays an
    invalid label). It remembers whether it labelled any conversation it was applied to, and
    the first ids of those, for :meth:`unmatched`.
    """

    def __init__(self, by_conversation: dict[str, str], by_case: dict[str, str], *, source: str | None = None,
                 places: dict | None = None):
        self.by_conversation, self.by_case = by_conversation, by_case
        self.source = source  # the file, for messages
        self._places = places or {}  # (field, id) to where the file labels it: "line 3", "[2]", "case_id"
        self.labelled = 0
        self._ids: dict[str, list] = {"conversation_id": [], "case_id": []}

    def apply(self, conv: dict) -> dict:
        """Set ``conv["label"]`` (and the default ``scenario_id``) from the file, in place."""
        label = self.by_conversation.get(conv["conversation_id"])
        if label is None and conv["case_id"] is not None:
            label = self.by_case.get(conv["case_id"])
        if label is None:
            if not self.labelled:
                for field, ids in self._ids.items():
                    if len(ids) < _SHOWN and conv[field] is not None and conv[field] not in ids:
                        ids.append(conv[field])
            return conv
        self.labelled += 1
        label = normalise_label(label)
        case_id, conversation_id = conv["case_id"], conv["conversation_id"]
        default_scenario = conv["scenario_id"] == scenario_key(case_id, conv["label"], conversation_id)
        conv["label"] = label
        if default_scenario:
            conv["scenario_id"] = scenario_key(case_id, label, conversation_id)
        return conv

    def explain(self, err: InputError) -> InputError:
        """``err`` reworded when this file's labels made it: a (case, label, replica) repeated
        (:class:`~estimators.records._keys.RepeatedKeyError`) where the file labels the case by
        ``case_id`` with that label. Such a label is given to every conversation of the case, so
        its ESC and ACT twins, or its replicas without a replica number, share one key: the message
        then names the labels file and says what to do. Any other error is returned as it is."""
        if not isinstance(err, RepeatedKeyError) or err.key_field != "replica" or not isinstance(err.key, tuple):
            return err
        key, ids = err.key, err.ids
        case_id, label, replica = key
        given = self.by_case.get(case_id)
        if given is None or normalise_label(given) != label or (ids and all(i in self.by_conversation for i in ids)):
            return err  # not a label of this file's case entries
        where = self._places.get(("case_id", case_id))
        place = f"{self.source or 'the labels file'}{f' ({where})' if where else ''}"
        return err.reworded(
            f"{err.detail}, because the --labels file {place} gives case_id {shown(case_id)} the label {label} for all "
            f"its conversations, ESC and ACT twins alike: label them by conversation_id in {self.source or 'it'} "
            "instead (or, for replicas, give each its replica number)")

    def merge(self, other: "Labels") -> None:
        """Take in what a copy of these labels applied elsewhere (a Dask worker) found, as if this one had been
        applied to its conversations after those it was applied to: the number labelled, and while none is, the
        first ids of the conversations left unlabelled (:meth:`unmatched`)."""
        if not self.labelled:
            for field, ids in self._ids.items():
                ids += [i for i in other._ids[field] if i not in ids][:_SHOWN - len(ids)]
        self.labelled += other.labelled

    def unmatched(self) -> dict | None:
        """When the file labelled none of the conversations it was applied to: a few of its keys
        and of their ids, by field (``conversation_id``, ``case_id``); else None.

        Returns
        -------
        dict or None
            ``{"keys": {field: [key, ...]}, "ids": {field: [id, ...]}}``, the fields with none left out.
        """
        if self.labelled:
            return None
        keys = {"conversation_id": list(self.by_conversation)[:_SHOWN], "case_id": list(self.by_case)[:_SHOWN]}
        return {"keys": {f: k for f, k in keys.items() if k}, "ids": {f: i for f, i in self._ids.items() if i}}


def _read_text(path: Path, what: str) -> str:
    try:
        raw = path.read_bytes()
        refuse_compressed(raw, str(path))
        return raw.decode("utf-8-sig")  # a UTF-8 byte order mark is not part of the text
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the {what} file: {getattr(err, 'strerror', None) or err}",
                         source=str(path)) from None


def _object(pairs: list) -> dict:
    """A JSON object of the labels file; a key given twice with different values is an error."""
    out: dict = {}
    for key, value in pairs:
        if key in out and normalise_label(out[key]) != normalise_label(value):
            raise InputError(f"{key!r} is given twice in one object, with {shown(out[key])} and {shown(value)}")
        out[key] = value
    return out


def load_labels(path) -> Labels:
    """Read a labels file.

    CSV: a header with ``label`` and ``conversation_id`` and/or ``case_id``; each row
    labels the id it fills. JSON: a list of such objects, or an object
    ``{"conversation_id": {id: label}, "case_id": {id: label}}``. A label is any non-empty
    string, read as :class:`Labels` reads it (``"esc"``, ``" Act "``, ``"ACT"``). An id may be
    labelled twice with the same label (as it reads), never with two.
    """
    path = Path(path)
    source = str(path)
    text = _read_text(path, "labels")
    by_conv: dict[str, str] = {}
    by_case: dict[str, str] = {}
    places: dict[tuple, str] = {}  # (field, id) to where the file labels it, for the message of a conflict

    def add(entry: dict, line: int | None, place: str = ""):
        label = entry.get("label")
        if not isinstance(label, str) or not label:
            raise InputError("must be a non-empty string", source=source, line=line, field=f"{place}label")
        conv_id, case_id = entry.get("conversation_id"), entry.get("case_id")
        for name, value in (("conversation_id", conv_id), ("case_id", case_id)):
            if isinstance(value, list | dict):
                raise InputError(f"must be a string, got {shown(value)}", source=source, line=line,
                                 field=f"{place}{name}")
        if conv_id in (None, "") and case_id in (None, ""):
            raise InputError("each entry needs a conversation_id or a case_id", source=source, line=line,
                             field=f"{place}conversation_id")
        field, key, target = ("conversation_id", str(conv_id), by_conv) if conv_id not in (None, "") else \
            ("case_id", str(case_id), by_case)
        if key in target and normalise_label(target[key]) != normalise_label(label):
            raise InputError(f"{field} {key!r} is labelled {shown(label)} here and {shown(target[key])} at "
                             f"{places[field, key]}; an id has one label", source=source, line=line,
                             field=f"{place}label")
        target[key] = label
        places[field, key] = f"line {line}" if line is not None else place.rstrip(".")

    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_object)
        except InputError as err:
            raise InputError(err.detail, source=source) from None
        except ValueError as err:
            raise InputError(f"not valid JSON: {getattr(err, 'msg', err)}", source=source,
                             line=getattr(err, "lineno", None)) from None
        except RecursionError:
            raise InputError("not valid JSON: nested too deeply (a labels file is a list of objects, or an object "
                             "of ids)", source=source) from None
        if isinstance(data, list):
            for i, entry in enumerate(data):
                if not isinstance(entry, dict):
                    raise InputError("each entry must be an object", source=source, field=f"[{i}]")
                add(entry, None, f"[{i}].")
        elif isinstance(data, dict) and set(data) <= {"conversation_id", "case_id"}:
            for key, target in (("conversation_id", by_conv), ("case_id", by_case)):
                mapping = data.get(key, {})
                if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
                    raise InputError("must map ids to label strings", source=source, field=key)
                target.update({str(k): v for k, v in mapping.items()})
        else:
            raise InputError("expected a list of {conversation_id|case_id, label} objects or "
                             "{\"conversation_id\": {...}, \"case_id\": {...}}", source=source)
    else:
        reader = csv.DictReader(io.StringIO(text))
        fields = set(reader.fieldnames or ())
        if "label" not in fields or not fields & {"conversation_id", "case_id"}:
            raise InputError("the header must have label and conversation_id or case_id", source=source, line=1)
        for row in reader:  # reader.line_num: the line the row ends on (blank lines are skipped)
            add({k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}, reader.line_num)
    return Labels(by_conv, by_case, source=source, places=places)


def load_plan(path) -> pd.DataFrame:
    """Read a plan CSV with columns ``case_id, label, replicas`` (replicas 0 .. replicas-1).

    The replicas of all rows sum to at most :data:`~estimators.records._planned.MAX_PLANNED_CONVERSATIONS`.

    A label is read as a record's label is (:func:`~estimators.records._vocabulary.normalise_label`);
    one that is not ESC or ACT is an error.
    """
    path = Path(path)
    source = str(path)
    reader = csv.DictReader(io.StringIO(_read_text(path, "plan")))
    if not {"case_id", "label", "replicas"} <= set(reader.fieldnames or ()):
        raise InputError("the header must have case_id, label and replicas", source=source, line=1)
    rows, planned = [], 0
    for line, row in enumerate(reader, start=2):
        case_id, label, reps = ((row["case_id"] or "").strip(), (row["label"] or "").strip(),
                                (row["replicas"] or "").strip())
        if not case_id:
            raise InputError("is empty", source=source, line=line, field="case_id")
        label = normalise_label(label)
        if label not in LABELS:
            raise InputError(f"must be ESC or ACT, got {label!r}", source=source, line=line, field="label")
        if not (reps.isascii() and reps.isdigit()) or int(reps) < 1:
            raise InputError(f"must be an integer >= 1 written in the digits 0-9, got {reps!r}", source=source,
                             line=line, field="replicas")
        planned += int(reps)
        if planned > MAX_PLANNED_CONVERSATIONS:
            raise InputError(f"brings the plan to {planned:,} conversations, more than the "
                             f"{MAX_PLANNED_CONVERSATIONS:,} a plan may hold", source=source, line=line,
                             field="replicas")
        rows.append({"case_id": case_id, "label": label, "replicas": int(reps)})
    plan = pd.DataFrame(rows, columns=["case_id", "label", "replicas"]).astype({"case_id": object, "label": object})
    if plan.duplicated(["case_id", "label"]).any():
        dup = plan[plan.duplicated(["case_id", "label"])].iloc[0]
        raise InputError(f"case {dup['case_id']!r} with label {dup['label']} is planned twice", source=source,
                         field="case_id")
    return plan
