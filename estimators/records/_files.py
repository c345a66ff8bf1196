"""How every output file is written: whole under a temporary name, then renamed, a run's files
together; the ``--out`` folder checked before anything is read (SPEC section 7)."""
from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import re
import socket
import tempfile
import threading
import time
from pathlib import Path

from ._errors import InputError

__all__ = ["write_atomic", "temporary_file", "OutputFile", "files_together", "remove_stale_temporaries",
           "STALE_AFTER", "write_files", "output_folder", "check_out_dir", "CONVERSATIONS", "SUMMARY", "LOCK",
           "folder_lock"]

#: The two files of an ``escalation score`` folder (SPEC section 7).
CONVERSATIONS, SUMMARY = "conversations.jsonl", "summary.json"


def _file_mode() -> int:
    """The mode a new file gets from ``open()`` under the current umask (0644 under 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


#: This machine in the names of temporary files (only letters, digits and ``-``).
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:64] or "host"
#: ``.NAME.PID@HOST.XXXXXXXX.tmp`` (:func:`temporary_file`), or ``.NAME.XXXXXXXX.tmp`` of earlier versions.
_TEMPORARY = re.compile(r"\.(?P<name>.+?)\.(?:(?P<pid>\d+)@(?P<host>[A-Za-z0-9-]+)\.)?[a-z0-9_]{8}\.tmp")
#: Seconds after its last write that a temporary file whose writer cannot be asked (another machine, an
#: older version) counts as left by a killed run.
STALE_AFTER = 3600


def temporary_file(path) -> tuple[int, Path]:
    """A new hidden temporary file beside ``path``, to be renamed onto it: ``(fd, temporary path)``.

    The name, ``.NAME.PID@HOST.XXXXXXXX.tmp``, is new (created with ``O_EXCL | O_NOFOLLOW``:
    never a file or link planted there) and tells :func:`remove_stale_temporaries` which
    process writes it. :func:`tempfile.mkstemp` makes the file ``-rw-------``; it gets the
    mode that ``open()`` would give it under the umask, so a renamed output is as readable
    as any other file.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}@{_HOST}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, _file_mode())
    return fd, Path(tmp)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: only whether the process exists
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's
        pass
    return True


def remove_stale_temporaries(folder) -> None:
    """Remove the temporary files (:func:`temporary_file`) that killed runs left in ``folder``.

    A file is stale when the process that wrote it, on this machine, is gone. A live writer
    keeps its file, so a run beside another in the same folder never takes its files (unless
    the two share a host name but not their process ids, as containers may: the other run then
    stops with an error naming its file). A file whose writer cannot be asked (written
    on another machine sharing the folder, or by an earlier version, without the process in the
    name) is stale once unwritten for :data:`STALE_AFTER` seconds.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:  # no folder yet
        return
    now = time.time()
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        try:
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            if match["host"] == _HOST:
                stale = not _running(int(match["pid"]))
            else:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
            if stale:
                os.unlink(entry.path)
        except OSError:  # gone meanwhile, or another user's: not this run's to remove
            continue


class OutputFile:
    """A file written under a hidden temporary name beside ``path`` (:func:`temporary_file`), then
    renamed onto ``path`` (:meth:`commit`) or removed (:meth:`discard`).

    It counts and hashes the bytes as they are written (:meth:`close`), and every
    :class:`OSError` it raises names ``path`` (a full disk: ``No space left on device``).
    """

    def __init__(self, path):
        self.path = Path(path)
        self.bytes, self._sha256, self._tmp = 0, hashlib.sha256(), None
        with self._naming_path():
            fd, self._tmp = temporary_file(self.path)
            self._handle = os.fdopen(fd, "wb")

    @contextlib.contextmanager
    def _naming_path(self):
        try:
            yield
        except OSError as err:
            if err.errno is None:
                raise
            raise OSError(err.errno, err.strerror, str(self.path)) from None

    def write(self, data: bytes) -> None:
        with self._naming_path():
            self._handle.write(data)
        self._sha256.update(data)
        self.bytes += len(data)

    def writelines(self, lines, *, block: int = 1 << 20, queued: int = 4) -> None:
        """Write byte ``lines`` (or blocks of lines, :func:`conversation_blocks`), about ``block`` bytes
        at a time (a longer block as it is).

        A thread writes and hashes the blocks (both release the GIL) while the caller makes the
        next ones; at most ``queued`` blocks wait for it. An error of the writing stops the
        taking of ``lines`` at the next block, and is raised here.
        """
        blocks: queue.Queue[bytes | None] = queue.Queue(maxsize=queued)
        failed: list[BaseException] = []
        writer = threading.Thread(target=self._write_queued, args=(blocks, failed), name="escalation-writer",
                                  daemon=True)
        writer.start()
        try:
            part, size = [], 0
            for line in lines:
                part.append(line)
                size += len(line)
                if size >= block:
                    if failed:
                        break
                    blocks.put(b"".join(part))
                    part, size = [], 0
            else:
                blocks.put(b"".join(part))
        finally:
            blocks.put(None)
            writer.join()
        if failed:
            raise failed[0]

    def _write_queued(self, blocks, failed) -> None:
        """:meth:`write` each block of ``blocks`` until None; the first error goes to ``failed``
        and the blocks after it are taken and dropped."""
        while (data := blocks.get()) is not None:
            if not failed:
                try:
                    self.write(data)
                except BaseException as err:  # raised again by writelines, in the caller's thread
                    failed.append(err)

    def close(self) -> dict:
        """Finish writing; ``{"bytes": ..., "sha256": ...}`` of what was written."""
        if not self._handle.closed:
            with self._naming_path():
                self._handle.close()
        return {"bytes": self.bytes, "sha256": self._sha256.hexdigest()}

    def commit(self) -> None:
        """Rename the finished file onto :attr:`path`."""
        self.close()
        with self._naming_path():
            os.replace(self._tmp, self.path)
        self._tmp = None

    def discard(self) -> None:
        """Remove the temporary file (after an error: it never raises)."""
        with contextlib.suppress(OSError):
            self._handle.close()  # a full disk fails the flush, and closes the file all the same
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.unlink()
            self._tmp = None


@contextlib.contextmanager
def files_together(*paths):
    """One :class:`OutputFile` per path; renamed into place together, in the order given, when the
    block ends without error. On an error or an interruption, every temporary file is removed
    and no file is renamed.

    Files that belong together are written completely before the first rename, so only a kill
    between two renames can leave some new files beside old ones; the file renamed last names
    the size and SHA-256 of the others, which lets a reader find out (:func:`write_scored`).

    Yields
    ------
    list of OutputFile
    """
    files = []
    try:
        for path in paths:
            files.append(OutputFile(path))
        yield files
        for file in files:
            file.close()
        for file in files:
            file.commit()
    except BaseException:
        for file in files:
            file.discard()
        raise


def write_atomic(path, data: bytes | str | None = None, *, chunks=None) -> dict:
    """Write ``data`` (or an iterable of byte ``chunks``) to a temporary file, then rename it.

    A killed run never leaves a half-written file under the final name; the file's mode
    respects the umask (:func:`temporary_file`). Returns ``{"bytes": ..., "sha256": ...}``
    of the file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with files_together(path) as (file,):
        if data is not None:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
        file.writelines(chunks or ())
    return file.close()


def write_files(folder, files: dict) -> None:
    """Write the ``files`` (name: bytes or str) of one run into ``folder`` (:func:`output_folder`),
    renamed into place together, in their order, once all are written (:func:`files_together`)."""
    folder = Path(folder)
    with output_folder(folder), files_together(*(folder / name for name in files)) as written:
        for file, data in zip(written, files.values()):
            file.write(data.encode("utf-8") if isinstance(data, str) else data)


#: The lock file of a folder a run writes into (:func:`folder_lock`); removed when the run ends.
LOCK = ".escalation.lock"
#: The folders this process holds the lock of, with how many :func:`folder_lock` hold each (nested uses).
_HELD: dict[str, tuple[int, int]] = {}
_HELD_GUARD = threading.Lock()


def _holder(fd: int) -> str:
    """What the lock file says of the run that holds it (``pid 12 on host, since 09:14:02 UTC``)."""
    try:
        said = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
        pid, host, since = said[0], said[1], said[2]
    except (OSError, IndexError):
        return "another run"
    return f"the run of process {pid} on {host}, since {since}"


def _refuse_locked(path: Path, fd: int) -> None:
    raise InputError(f"another escalation run is writing into this folder ({_holder(fd)}); wait for it to end, "
                     "or give another --out folder", source=str(path))


@contextlib.contextmanager
def folder_lock(path):
    """Hold the lock of the folder ``path`` while a run writes into it: one writer per ``--out``.

    The lock is :data:`LOCK` in the folder, locked with ``flock``: the system releases it when its
    process ends, however it ends, so the lock of a killed run is simply taken over. A second run
    that finds the folder locked stops at once with an :class:`InputError` naming the holder. The
    same process may hold a folder's lock several times (the calls nest). The file is removed when
    its last holder lets go, so a finished run leaves no file of it behind.

    Raises
    ------
    InputError
        When another process holds the lock.
    """
    import fcntl

    path = Path(path)
    key = os.path.realpath(path)
    with _HELD_GUARD:
        if key in _HELD:
            fd, count = _HELD[key]
            _HELD[key] = (fd, count + 1)
            nested = True
        else:
            nested = False
    if not nested:
        lock = path / LOCK
        while True:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, _file_mode())
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    _refuse_locked(path, fd)
                finally:
                    os.close(fd)
            try:  # the file may have been removed by its last holder between the open and the lock
                same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:  # who holds it, for a second run's message; best effort: a full disk still locks (an empty file)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {_HOST} {time.strftime('%H:%M:%S', time.gmtime())}Z\n".encode(), 0)
        except OSError:
            pass
        with _HELD_GUARD:
            _HELD[key] = (fd, 1)
    try:
        yield path
    finally:
        with _HELD_GUARD:
            fd, count = _HELD[key]
            if count > 1:
                _HELD[key] = (fd, count - 1)
                fd = -1
            else:
                del _HELD[key]
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(path / LOCK)  # before the unlock: a waiting run then locks a new file
            os.close(fd)  # releases the lock


def _probe_lock(path: Path) -> None:
    """Stop at once when another process holds the lock of the existing folder ``path``."""
    import fcntl

    if os.path.realpath(path) in _HELD:
        return
    try:
        fd = os.open(path / LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # no lock file: no run writes here
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            _refuse_locked(path, fd)
    finally:
        os.close(fd)  # a shared lock taken only to probe is let go at once


@contextlib.contextmanager
def output_folder(path):
    """Create the folder ``path`` (and its missing parents) for a run; on failure, remove what it created.

    A run that stops with an error (or is interrupted) leaves no empty folder behind: each
    folder this made is removed again if it is still empty. A folder that existed before,
    or holds files (a study's finished cells, kept for ``--resume``), stays. The run holds the
    folder's lock (:func:`folder_lock`: a second run into the same folder stops at once), and
    the temporary files that killed runs left in ``path`` are removed first
    (:func:`remove_stale_temporaries`).

    Yields
    ------
    pathlib.Path
    """
    path = Path(path)
    made = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        made.append(folder)
    path.mkdir(parents=True, exist_ok=True)
    try:
        with folder_lock(path):
            remove_stale_temporaries(path)
            yield path
    except BaseException:
        for folder in made:  # innermost first
            try:
                folder.rmdir()
            except OSError:  # not empty, or gone: keep what holds something
                break
        raise


def check_out_dir(path, inputs=(), *, writes=()) -> None:
    """Refuse an unusable ``--out`` folder before anything is read or written.

    ``path`` must be a folder, or name one that can be made, that this user can write to
    (as root, only a read-only file system refuses), that is not one of ``inputs`` (the
    files and folders the command reads; ``-`` is standard input) and that would not hold
    an input under a name in ``writes`` (the files the command writes there).

    Raises
    ------
    InputError
        Naming ``path``: a file, a symbolic link to nothing, a folder not writable, an input, a
        folder another run is writing into (:func:`folder_lock`).
    """
    path = Path(path)
    for given in (Path(p) for p in inputs if p is not None and str(p) != "-"):
        if _same_file(path, given):
            raise InputError(f"is the input {given}; --out names a folder for the outputs", source=str(path))
        for name in writes:
            if _same_file(path / name, given):
                raise InputError(f"holds the input {given}, which this run would replace with its {name}; give "
                                 "another --out folder", source=str(path))
    folder = next(p for p in (path, *path.parents) if os.path.lexists(p))  # "." exists
    if folder.is_symlink() and not folder.exists():
        what = "is" if folder == path else f"cannot be made: {folder} is"
        raise InputError(f"{what} a symbolic link to {os.readlink(folder)}, which does not exist; --out names "
                         "the folder to write", source=str(path))
    if not folder.is_dir():
        what = "exists and is not a folder" if folder == path else f"cannot be made: {folder} is not a folder"
        raise InputError(f"{what}; --out names the folder to write", source=str(path))
    if folder == path:
        _probe_lock(path)  # another run writes here: stop before anything is read
    if not os.access(folder, os.W_OK | os.X_OK):
        why = "is on a read-only file system" if os.statvfs(folder).f_flag & os.ST_RDONLY else \
            "is not writable by this user"
        what = why if folder == path else f"cannot be made: {folder} {why}"
        raise InputError(f"{what}; --out names a folder this run can write to", source=str(path))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False
