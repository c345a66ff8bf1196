"""What ``escalation score`` reads: files, folders of logs and standard input, as a list of log files.

A user has logs as one file, several files, a folder of them, or a pipe. :func:`log_inputs`
turns the command line's paths into the files to read, in order:

- a file is itself;
- ``-`` is standard input, spooled to a temporary file (every reader works on a file) and
  named ``<stdin>`` in messages and in the provenance;
- a folder is a tau2-bench results folder (a ``results.json`` or a ``simulations/`` folder:
  read as one log), else every log file in it (:data:`LOG_SUFFIXES`), in name order; hidden
  files, sub-folders and other files (a LICENSE, a README) are left out and listed in
  :attr:`LogInputs.skipped`.

The format is one for all of them: given, or detected file by file, when an
:class:`InputError` names two files of different formats.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import InputError

__all__ = ["LogInput", "LogInputs", "log_inputs", "describe_file", "LOG_SUFFIXES", "STDIN"]

#: The names a log file of a folder may end with; other files of a folder are left out.
LOG_SUFFIXES = (".json", ".jsonl", ".ndjson", ".eval")
#: How standard input is named in messages and in the provenance.
STDIN = "<stdin>"


@dataclass(frozen=True)
class LogInput:
    """One log to read: ``path`` is what the readers open, ``name`` what messages call it."""

    path: Path
    name: str

    def describe(self, stop=None) -> dict | None:
        """Path, size in bytes and SHA-256 of the log (of a folder: of its files, by relative name).

        ``stop``: a :class:`threading.Event`; once it is set, the hashing stops within a
        megabyte and None is returned (a caller hashing in the background has no more use for it).
        """
        if self.path.is_dir():
            files = sorted(p for p in self.path.rglob("*") if p.is_file())
            digest = hashlib.sha256()
            for file in files:
                if (file_digest := _sha256(file, stop)) is None:
                    return None
                digest.update(str(file.relative_to(self.path)).encode("utf-8") + b"\0" +
                              file_digest.encode("ascii") + b"\n")
            return {"path": self.name, "files": len(files), "bytes": sum(f.stat().st_size for f in files),
                    "sha256": digest.hexdigest()}
        if (file_digest := _sha256(self.path, stop)) is None:
            return None
        return {"path": self.name, "bytes": self.path.stat().st_size, "sha256": file_digest}


@dataclass
class LogInputs:
    """The logs of a command line, and what its folders held that is not a log."""

    logs: list[LogInput]
    skipped: list[str] = field(default_factory=list)
    _spooled: Path | None = None

    @property
    def stdin(self) -> bool:
        """Whether standard input is one of the logs (read from a temporary copy on this machine)."""
        return self._spooled is not None

    def close(self) -> None:
        """Remove the temporary copy of standard input, if any."""
        if self._spooled is not None:
            self._spooled.unlink(missing_ok=True)
            self._spooled = None

    def __enter__(self) -> "LogInputs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def rename(self, err: InputError) -> InputError:
        """``err`` with the temporary file of standard input named ``<stdin>``."""
        if self._spooled is None or err.source is None or str(self._spooled) not in err.source:
            return err
        return InputError(err.detail, source=err.source.replace(str(self._spooled), STDIN), line=err.line,
                          field=err.field)


def describe_file(path) -> dict | None:
    """Path, size and SHA-256 of a file the provenance names (None for None): :meth:`LogInput.describe`."""
    return None if path is None else LogInput(Path(path), str(path)).describe()


def _sha256(path: Path, stop=None) -> str | None:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            if stop is not None and stop.is_set():
                return None
            digest.update(block)
    return digest.hexdigest()


def _is_tau2_folder(path: Path) -> bool:
    return (path / "results.json").is_file() or (path / "simulations").is_dir()


def _spool_stdin() -> Path:
    """Standard input copied to a temporary file; removed again if the copy fails or is interrupted."""
    fd, name = tempfile.mkstemp(prefix="escalation-stdin-", suffix=".log")
    try:
        with os.fdopen(fd, "wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle, 1 << 20)
    except BaseException as err:
        Path(name).unlink(missing_ok=True)
        if isinstance(err, OSError) and err.errno is not None and err.filename is None:  # a full disk
            raise OSError(err.errno, err.strerror, name) from None
        raise
    return Path(name)


def log_inputs(paths) -> LogInputs:
    """The log files of the command line's ``paths`` (see the module docstring).

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Files, folders, or ``-`` (standard input, at most once).

    Returns
    -------
    LogInputs
        Use it as a context manager: it removes the temporary copy of standard input.

    Raises
    ------
    InputError
        For a path that does not exist, ``-`` given twice, a folder with no log file, or a log
        given twice.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    inputs = LogInputs([])
    seen: dict[Path, str] = {}
    try:
        for given in paths:
            given = str(given)
            if given == "-":
                if inputs._spooled is not None:
                    raise InputError("standard input (-) can be read only once", source=STDIN)
                inputs._spooled = _spool_stdin()
                found = [LogInput(inputs._spooled, STDIN)]
            else:
                found = _logs_of(Path(given), inputs.skipped)
            for log in found:
                key = log.path.resolve()
                if key in seen:
                    raise InputError(f"is given twice (also as {seen[key]})", source=log.name)
                seen[key] = log.name
                inputs.logs.append(log)
    except BaseException:
        inputs.close()
        raise
    if not inputs.logs:
        inputs.close()
        raise InputError("no log file given", source=None)
    return inputs


def _logs_of(path: Path, skipped: list[str]) -> list[LogInput]:
    if not path.exists():
        raise InputError("no such file or folder", source=str(path))
    if not path.is_dir() or _is_tau2_folder(path):
        return [LogInput(path, str(path))]
    logs = []
    for entry in sorted(path.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix.lower() in LOG_SUFFIXES:
            logs.append(LogInput(entry, str(entry)))
        elif entry.is_dir() and _is_tau2_folder(entry):
            logs.append(LogInput(entry, str(entry)))
        else:
            skipped.append(str(entry))
    if not logs:
        raise InputError(f"holds no log file (a file ending in {', '.join(LOG_SUFFIXES)}, or a tau2-bench "
                         "results folder)", source=str(path))
    return logs
