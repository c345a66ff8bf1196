"""Label files (``--labels``) and plan files (``--plan``) of SPEC section 7."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd

from ._errors import InputError
from ._vocabulary import LABELS, normalise_label, scenario_key

__all__ = ["Labels", "load_labels", "load_plan"]


class Labels:
    """Labels by ``conversation_id`` and by ``case_id``; a conversation entry wins over a case entry.

    A label from the file replaces the label the record carries; it is read as a record's label
    is (:func:`~estimators._vocabulary.normalise_label`: ``esc`` is ESC, ``maybe`` stays an
    invalid label).
    """

    def __init__(self, by_conversation: dict[str, str], by_case: dict[str, str]):
        self.by_conversation, self.by_case = by_conversation, by_case

    def apply(self, conv: dict) -> dict:
        """Set ``conv["label"]`` (and the default ``scenario_id``) from the file, in place."""
        label = self.by_conversation.get(conv["conversation_id"])
        if label is None and conv["case_id"] is not None:
            label = self.by_case.get(conv["case_id"])
        if label is not None:
            label = normalise_label(label)
            case_id, conversation_id = conv["case_id"], conv["conversation_id"]
            default_scenario = conv["scenario_id"] == scenario_key(case_id, conv["label"], conversation_id)
            conv["label"] = label
            if default_scenario:
                conv["scenario_id"] = scenario_key(case_id, label, conversation_id)
        return conv


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the {what} file: {getattr(err, 'strerror', None) or err}", source=str(path)) from None


def load_labels(path) -> Labels:
    """Read a labels file.

    CSV: a header with ``label`` and ``conversation_id`` and/or ``case_id``; each row
    labels the id it fills. JSON: a list of such objects, or an object
    ``{"conversation_id": {id: label}, "case_id": {id: label}}``. A label is any non-empty
    string, read as :class:`Labels` reads it (``"esc"``, ``" Act "``, ``"ACT"``).
    """
    path = Path(path)
    source = str(path)
    text = _read_text(path, "labels")
    by_conv: dict[str, str] = {}
    by_case: dict[str, str] = {}

    def add(entry: dict, line: int | None):
        label = entry.get("label")
        if not isinstance(label, str) or not label:
            raise InputError("must be a non-empty string", source=source, line=line, field="label")
        conv_id, case_id = entry.get("conversation_id"), entry.get("case_id")
        if conv_id in (None, "") and case_id in (None, ""):
            raise InputError("each entry needs a conversation_id or a case_id", source=source, line=line,
                             field="conversation_id")
        if conv_id not in (None, ""):
            by_conv[str(conv_id)] = label
        elif case_id not in (None, ""):
            by_case[str(case_id)] = label

    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as err:
            raise InputError(f"not valid JSON: {getattr(err, 'msg', err)}", source=source,
                             line=getattr(err, "lineno", None)) from None
        if isinstance(data, list):
            for i, entry in enumerate(data):
                if not isinstance(entry, dict):
                    raise InputError("each entry must be an object", source=source, field=f"[{i}]")
                add(entry, None)
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
        for line, row in enumerate(reader, start=2):
            add({k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}, line)
    return Labels(by_conv, by_case)


def load_plan(path) -> pd.DataFrame:
    """Read a plan CSV with columns ``case_id, label, replicas`` (replicas 0 .. replicas-1).

    A label is read as a record's label is (:func:`~estimators._vocabulary.normalise_label`);
    one that is not ESC or ACT is an error.
    """
    path = Path(path)
    source = str(path)
    reader = csv.DictReader(io.StringIO(_read_text(path, "plan")))
    if not {"case_id", "label", "replicas"} <= set(reader.fieldnames or ()):
        raise InputError("the header must have case_id, label and replicas", source=source, line=1)
    rows = []
    for line, row in enumerate(reader, start=2):
        case_id, label, reps = (row["case_id"] or "").strip(), (row["label"] or "").strip(), (row["replicas"] or "").strip()
        if not case_id:
            raise InputError("is empty", source=source, line=line, field="case_id")
        label = normalise_label(label)
        if label not in LABELS:
            raise InputError(f"must be ESC or ACT, got {label!r}", source=source, line=line, field="label")
        if not reps.isdigit() or int(reps) < 1:
            raise InputError(f"must be an integer >= 1, got {reps!r}", source=source, line=line, field="replicas")
        rows.append({"case_id": case_id, "label": label, "replicas": int(reps)})
    plan = pd.DataFrame(rows, columns=["case_id", "label", "replicas"]).astype({"case_id": object, "label": object})
    if plan.duplicated(["case_id", "label"]).any():
        dup = plan[plan.duplicated(["case_id", "label"])].iloc[0]
        raise InputError(f"case {dup['case_id']!r} with label {dup['label']} is planned twice", source=source,
                         field="case_id")
    return plan
