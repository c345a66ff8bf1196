"""The model an inspect_ai log names (a ``.json`` log or a ``.eval`` archive), for the leaderboard's names."""
from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import orjson

from ..records import ArchiveLimits, member_bytes

__all__ = ["log_model"]


def _model_of(document) -> str | None:
    """``eval.model`` of an inspect_ai log document, else None."""
    evaluation = document.get("eval") if isinstance(document, dict) else None
    model = evaluation.get("model") if isinstance(evaluation, dict) else None
    return model.strip() if isinstance(model, str) and model.strip() else None


def log_model(path, limits: ArchiveLimits | None = None) -> str | None:
    """The model an inspect_ai log names, else None.

    A ``.json`` log: its top-level ``eval.model``. A ``.eval`` archive (a zip file): the
    ``eval.model`` of its ``header.json`` member, else of ``_journal/start.json`` (a log still
    being written has no header yet). Any other file, or one that cannot be read as such, names
    no model (its reader reports what is wrong with it).

    Raises
    ------
    InputError
        When the member cannot be read: zstd-compressed and nothing here reads zstd, damaged, or
        larger than ``limits`` (an :class:`~estimators.records.readers.ArchiveLimits`, by default its
        defaults) allows a member (as the reader of the samples would stop).
    """
    path = Path(path)
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                for member in ("header.json", "_journal/start.json"):
                    try:
                        info = archive.getinfo(member)
                        raw = member_bytes(archive, info, str(path), (limits or ArchiveLimits()).member)
                        model = _model_of(orjson.loads(raw))
                    except (KeyError, orjson.JSONDecodeError):
                        continue
                    if model is not None:
                        return model
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError, EOFError):
            return None
        return None
    if path.suffix.lower() != ".json":
        return None
    try:
        return _model_of(orjson.loads(path.read_bytes()))
    except (OSError, orjson.JSONDecodeError):
        return None
