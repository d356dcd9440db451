"""One writer per folder (DESIGN.md, "Folders"): an exclusive ``fcntl.flock`` on ``<folder>/.lock``.

A run, a ``resume=`` and a sweep hold the lock of their folder for as long as they write there; a second
claimant is refused at once (:class:`FolderInUse`, exit status 2) and writes nothing. The holder writes its
pid and host into the file after locking, so the refusal can name them, and removes the file as it lets the
lock go, so a folder at rest holds none. The operating system drops the lock when the holder's process ends,
however it ends: a file a killed holder left behind is taken over by the next claimant.

Within one process a folder is claimed once: a second :func:`claim` of a folder the process already holds
(``python -m rlrun resume=RUN`` claims before Hydra starts, then :func:`rlrun.run.training.resume` claims
again) shares that lock, and the lock goes when the last claim is released.

``flock`` holds between processes of one machine. On a shared filesystem (NFS, Lustre, GPFS) it holds
between machines only where the filesystem supports locks across clients (NFSv4, or Lustre mounted with
``flock``); elsewhere two machines can both take it.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import platform
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from rlrun.config.errors import UserError
from rlrun.record import regular_files

LOCK_NAME = ".lock"
_UNLOCKABLE = "rlrun writes into the folder: make it writable, or copy it where it can be"


class FolderInUse(UserError):
    """The folder's lock is held by another process."""


class FolderLock:
    """A held lock on ``<folder>/.lock``; :meth:`release` lets it go."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self.fd = fd
        self.claims = 1

    def release(self) -> None:
        """Drop one claim; with the last, the lock and its file (removed while still locked: a claimant that
        opened the file meanwhile finds it gone once it holds it, and tries again)."""
        self.claims -= 1
        if self.claims == 0:
            _held.pop(_key(self.folder), None)
            with suppress(OSError):
                (self.folder / LOCK_NAME).unlink()
            os.close(self.fd)


_held: dict[str, FolderLock] = {}  # the folders this process holds, by resolved path


def _key(folder: Path) -> str:
    return str(folder.resolve())


def holder(folder: Path) -> str:
    """``pid N on HOST`` as the holder wrote it into the lock file, or ``another process`` while it has not yet."""
    for _ in range(20):  # the holder writes right after locking: wait for it briefly
        with suppress(OSError, UserError):
            fd = regular_files.open_regular(folder / LOCK_NAME, os.O_RDONLY)
            with os.fdopen(fd) as file:
                words = file.read(200).split()
            if len(words) == 2:
                return f"pid {words[0]} on {words[1]}"
        time.sleep(0.01)
    return "another process"


def in_use(folder: Path) -> bool:
    """Whether a process holds the lock of ``folder`` now (this one included), asked without making or writing the
    lock file: what a record's pid cannot tell (a pid reused since, or written by someone else). A lock file that is
    not a regular file with one name is held by no one (a claimant refuses it)."""
    if _key(folder) in _held:
        return True
    try:
        fd = regular_files.open_regular(folder / LOCK_NAME, os.O_RDONLY)
    except (OSError, UserError):  # none: no holder (a holder keeps it while it holds the lock)
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # let go at once, as the file is closed
    except BlockingIOError:
        return True
    except OSError:  # a filesystem without locks: no one can hold one there
        return False
    finally:
        os.close(fd)
    return False


def _lock(folder: Path, what: str, fix: str) -> int:
    """Open and lock ``<folder>/.lock``; the file locked is the one at that path (a claimant that opened a
    file its holder then removed tries again)."""
    path = folder / LOCK_NAME
    while True:
        try:
            fd = regular_files.open_regular(path, os.O_RDWR | os.O_CREAT)  # never through a link: a received folder's
        except OSError as error:  # a read-only folder
            raise UserError(f"{what} {folder} cannot be locked for writing: {error.strerror}", _UNLOCKABLE) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FolderInUse(f"{what} {folder} is in use by {holder(folder)}", fix) from None
        except OSError as error:  # a filesystem without locks (ENOLCK)
            os.close(fd)
            raise UserError(f"{what} {folder} cannot be locked for writing: {error.strerror}", _UNLOCKABLE) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


def acquire(folder: Path, what: str = "the run", fix: str | None = None) -> FolderLock:
    """Take the lock of ``folder`` (which must exist) or refuse with :class:`FolderInUse`; ``what`` names the
    folder in the message (``the run``, ``the sweep``)."""
    held = _held.get(_key(folder))
    if held is not None:
        held.claims += 1
        return held
    fix = fix or "wait until it ends, or stop it first (a folder has one writer at a time)"
    fd = _lock(folder, what, fix)
    os.ftruncate(fd, 0)  # a file a killed holder left behind
    with suppress(OSError):  # a full disk: the lock holds without the note of its holder (a resume frees space)
        os.pwrite(fd, f"{os.getpid()} {platform.node()}\n".encode(), 0)
    lock = _held[_key(folder)] = FolderLock(folder, fd)
    return lock


def hold(folder: Path, what: str = "the run", fix: str | None = None) -> FolderLock:
    """Take the lock of ``folder`` for the rest of this process (:func:`acquire`); released at exit."""
    lock = acquire(folder, what, fix)
    atexit.register(lock.release)
    return lock


@contextmanager
def claim(folder: Path, what: str = "the run") -> Iterator[FolderLock]:
    """Hold the lock of ``folder`` inside the block. The folder is made if missing, and removed again if it
    is still empty at the end (a run refused before it wrote anything). Of claims that race to make it, one
    makes it; when that one is refused, the folder stays, empty, for the one that holds it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir()
        made = True
    except FileExistsError:
        made = False
    lock = acquire(folder, what)
    try:
        yield lock
    finally:
        lock.release()
        if made and lock.claims == 0:
            with suppress(OSError):
                folder.rmdir()  # only when empty
