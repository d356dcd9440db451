"""Formats of a run folder's files (DESIGN.md, "The run-directory contract") and how they are written and read:
atomically, so a reader sees the old file or the new one, never a mix. Importable without torch.

A write that fails (a full disk, a quota, a read-only filesystem) raises :class:`WriteFailed`, which names the
file being written (a failed ``write()`` names none of its own) and leaves no temporary file behind.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rlrun.config.errors import UserError

EVAL_CSV_HEADER = "timesteps,mean_return,std_return,success_rate,wall_s\n"
EVAL_COLUMNS = tuple(EVAL_CSV_HEADER.strip().split(","))
# <job>/attempts/<k>/: a sweep job's earlier, failed attempts (and a study's unfinished validation runs); tables
# never read runs under it
ATTEMPTS = "attempts"
# the temporary names rlrun writes under before a rename: ".run.json.tmp", ".model.tmp.zip"
TMP_FILES = (".*.tmp", ".*.tmp.*")
# what a full or read-only disk raises: a write in the run folder failed, whichever file it was
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


@dataclass(frozen=True)
class EvalRow:
    """One periodic evaluation of ``eval.csv``, the columns tables and studies read."""

    timesteps: int
    mean_return: float
    success_rate: float | None


def _eval_row(row: dict[str, Any]) -> EvalRow:
    success = row["success_rate"]
    return EvalRow(int(row["timesteps"]), float(row["mean_return"]), float(success) if success else None)


def parse_eval_csv(text: str) -> list[EvalRow]:
    """The rows of a whole ``eval.csv`` in file order, blank lines skipped: rlrun's one reader of the file,
    :func:`rlrun.record.fields.eval_csv_rows`, which checks each value.

    Raises ValueError, its message saying what is wrong (and on which line), when the header lacks a column or a
    row does not parse.
    """
    from rlrun.record.fields import eval_csv_rows  # fields builds on this module

    if not text.strip():
        raise ValueError(f"eval.csv lacks the header {','.join(EVAL_COLUMNS)}")
    whole = text if text.endswith("\n") else text + "\n"  # a finished file: its last row counts too
    return [_eval_row(row) for row in eval_csv_rows(whole)]


def now() -> str:
    """The local time in ISO 8601 with its UTC offset, as run.json records times."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class WriteFailed(OSError):
    """An ``OSError`` while writing one of the run's files; ``filename`` is the file, ``strerror`` the cause."""

    def __str__(self) -> str:
        code = f" [{errno.errorcode[self.errno]}]" if self.errno is not None and self.errno in errno.errorcode else ""
        return f"cannot write {self.filename}: {self.strerror}{code}"


def write_failure(error: BaseException, folder: Path) -> WriteFailed | None:
    """``error`` as a :class:`WriteFailed`, if it is one, or an ``OSError`` of a full or read-only disk (raised
    by a library's own write, naming no file: then the ``folder`` written in is named); None otherwise."""
    if isinstance(error, WriteFailed):
        return error
    if isinstance(error, OSError) and error.errno in DISK_ERRNOS:
        return WriteFailed(error.errno, error.strerror or str(error), str(error.filename or folder))
    return None


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Raise an ``OSError`` of the block as :class:`WriteFailed` naming ``path`` (a folder: the file in it the
    error names, if any)."""
    try:
        yield
    except WriteFailed:
        raise
    except OSError as error:
        named = error.filename if error.filename and path.is_dir() else path
        raise WriteFailed(error.errno, error.strerror or str(error), str(named)) from error


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


def open_for_writing(path: Path, append: bool = False) -> IO[str]:
    """``path`` opened for writing text (truncated, or ``append``), through :func:`open_regular`."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    return os.fdopen(open_regular(path, flags), "a" if append else "w", encoding="utf-8", newline="\n")


def write_text(path: Path, text: str, durable: bool = False) -> None:
    """Write ``text`` under a temporary name, then rename it over ``path`` (``durable``: fsync'd first); a
    failed write raises :class:`WriteFailed` and leaves ``path`` as it was, with no temporary file. The
    temporary file is made anew (a link left there is removed, never written through)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with writing(path):
        try:
            tmp.unlink(missing_ok=True)
            with open_for_writing(tmp) as f:
                f.write(text)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise


# rlrun never makes a link in a run folder; W&B keeps one of its own in its folder
OTHERS_LINKS = ("wandb",)


def links_in(run_dir: Path) -> list[Path]:
    """The symbolic links in ``run_dir`` (its own files and folders, none followed), W&B's folder left out."""
    found = []
    for folder, dirs, names in os.walk(run_dir):
        here = Path(folder)
        if here == run_dir:
            dirs[:] = [d for d in dirs if d not in OTHERS_LINKS]
        found += [here / name for name in [*dirs, *names] if (here / name).is_symlink()]
    return sorted(found)


def remove_partial_writes(folder: Path) -> None:
    """Remove the temporary files (:data:`TMP_FILES`) of writes in ``folder`` that never finished: killed, or
    stopped by a full disk."""
    for pattern in TMP_FILES:
        for leftover in folder.glob(pattern):
            if leftover.is_file():
                leftover.unlink(missing_ok=True)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a JSON object atomically and durably."""
    write_text(path, json.dumps(data, indent=2) + "\n", durable=True)


def read_yaml(path: Path) -> Any:
    """The YAML document at ``path`` read safely and within bounds, or None where it is missing, cannot be parsed
    or is over a bound (:mod:`rlrun.record.reading`)."""
    from rlrun.record import reading  # it builds on this module

    try:
        return reading.load_yaml(path)
    except (OSError, ValueError):
        return None


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None where it is missing, truncated, not an object or over a bound of
    :mod:`rlrun.record.reading`."""
    from rlrun.record import reading  # it builds on this module

    try:
        data = reading.load_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
