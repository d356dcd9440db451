"""A run folder is read and written through regular files only, never through a symbolic link: a folder received
from someone else cannot make rlrun read or write outside it.

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


class NotRegularFile(UserError):
    """A path in a run folder that rlrun would write through is a symbolic link or not a regular file."""


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a file in a run folder, never through a symbolic link (``O_NOFOLLOW``) and only if it is a
    regular file: a received folder cannot make rlrun write outside it. Raises :class:`NotRegularFile`."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        fd = -1
    if fd >= 0 and stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    if fd >= 0:
        os.close(fd)
    raise NotRegularFile(
        f"{path} is a symbolic link or not a regular file: rlrun writes only regular files in a run folder",
        f"remove it (rm {path}) if the folder is yours; a folder you received may be trying to make rlrun "
        "write outside it",
    )


def links_in(run_dir: Path) -> list[Path]:
    """The symbolic links in ``run_dir`` (its own files and folders, none followed), W&B's folder left out."""
    found = []
    for folder, dirs, names in os.walk(run_dir):
        here = Path(folder)
        if here == run_dir:
            dirs[:] = [d for d in dirs if d not in OTHERS_LINKS]
        found += [here / name for name in [*dirs, *names] if (here / name).is_symlink()]
    return sorted(found)
