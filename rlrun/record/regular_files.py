"""A run folder is read and written through regular files with one name only: never through a symbolic link, a
hard link, a FIFO or a device, so a folder received from someone else can neither make rlrun read or write outside
it (a link to a file of the user's) nor make it wait for ever (a FIFO, ``/dev/zero``).

Each file is looked at without following it (``lstat``) before it is opened, so a FIFO or a device is never
opened; it is then opened without following a link and without waiting (``O_NOFOLLOW | O_NONBLOCK``), and what
was opened is looked at again (``fstat``) before a byte is read or written: a file swapped in between is refused
too. A file is truncated only once it passed.

The bottom of :mod:`rlrun.record`'s files: :mod:`rlrun.record.reading` and :mod:`rlrun.record.formats` open
through :func:`open_regular`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rlrun.config.errors import UserError

# rlrun never makes a link in a run folder; W&B keeps one of its own in its folder
OTHERS_LINKS = ("wandb",)
_FIX = (
    "replace it by a copy of its own (cp {path} {path}.copy && mv {path}.copy {path}), or remove it, if the folder "
    "is yours; a folder you received may be trying to make rlrun read or write outside it, or wait for ever"
)


class NotRegularFile(UserError):
    """A path in a run folder that rlrun would read or write is a link (symbolic or hard) or not a regular file;
    ``what`` it is, in words (:func:`kind`)."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(
            f"{path} is {what}: rlrun reads and writes only regular files with one name in a run folder",
            _FIX.format(path=path),
        )
        self.what = what


def kind(info: os.stat_result) -> str | None:
    """What makes a file with this ``lstat``/``fstat`` unfit to be read or written in a run folder, in words
    (``a symbolic link``, ``a FIFO``, ``a hard link (2 names)``); None for a regular file with one name. A file
    with no name left (removed while open: a lock let go) harms no one and passes."""
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return f"a hard link ({info.st_nlink} names for one file)" if info.st_nlink > 1 else None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def check_regular(path: Path) -> None:
    """Refuse (:class:`NotRegularFile`) a ``path`` that exists and is not a regular file with one name, looked at
    without following it; a missing path passes."""
    try:
        what = kind(os.lstat(path))
    except FileNotFoundError:
        return
    if what is not None:
        raise NotRegularFile(path, what)


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a file in a run folder, only if it is a regular file with one name (made anew with
    ``O_CREAT``); never through a link, never waiting on a FIFO, truncated (``O_TRUNC``) only once it passed.
    Raises :class:`NotRegularFile`."""
    check_regular(path)  # a FIFO or a device is never opened
    try:
        fd = os.open(path, (flags & ~os.O_TRUNC) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as error:  # a link, or a FIFO without a reader, put there since
        if error.errno in (errno.ELOOP, errno.ENXIO):
            raise NotRegularFile(path, "a symbolic link or a FIFO") from None
        raise
    try:
        what = kind(os.fstat(fd))
        if what is not None:
            raise NotRegularFile(path, what)
        os.set_blocking(fd, True)
        if flags & os.O_TRUNC:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def links_in(run_dir: Path) -> list[tuple[Path, str]]:
    """What in ``run_dir`` rlrun would refuse to read or write, each with what it is (:func:`kind`), looked at
    without following anything: symbolic links, hard links (a file with more than one name), FIFOs, devices and
    sockets; W&B's folder left out."""
    found = []
    for folder, dirs, names in os.walk(run_dir):
        here = Path(folder)
        if here == run_dir:
            dirs[:] = [d for d in dirs if d not in OTHERS_LINKS]
        for name in [*dirs, *names]:
            try:
                info = os.lstat(here / name)
            except FileNotFoundError:  # renamed or removed meanwhile
                continue
            if not stat.S_ISDIR(info.st_mode) and (what := kind(info)) is not None:
                found.append((here / name, what))
    return sorted(found)


def check_folder(run_dir: Path, what: str) -> None:
    """Refuse (exit 2) a run folder holding what rlrun never reads or writes (:func:`links_in`), naming the first
    few: the read-only check before anything of it is read, locked or signed. ``what``: the command, for the
    message (``resume=RUN``)."""
    found = links_in(run_dir)
    if found:
        shown = ", ".join(f"{path.relative_to(run_dir)} ({kind_of})" for path, kind_of in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise UserError(
            f"{what}: the folder holds symbolic links, hard links or special files (FIFOs, devices), which rlrun "
            f"never reads or writes: {shown}{more}",
            "replace each by a copy of its own (or remove it) if the folder is yours; a folder you received may be "
            "trying to make rlrun read or write outside it, or wait for ever",
        )
