"""Formats of a run folder's files (DESIGN.md, "The run-directory contract") and how they are written and read:
written atomically, so a reader sees the old file or the new one, never a mix, and read leniently (None for a file
that is missing or damaged) through the bounded readers of :mod:`rlrun.record.reading`. Importable without torch.

A write that fails (a full disk, a quota, a read-only filesystem) raises :class:`WriteFailed`, which names the
file being written (a failed ``write()`` names none of its own) and leaves no temporary file behind.
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from rlrun.record import reading
from rlrun.record.regular_files import open_regular

# eval.csv's header as rlrun writes it: one row per periodic evaluation (``capped``: how many of its episodes were
# cut at the evaluation cap, rlrun.make.episode_cap)
EVAL_CSV_HEADER = "timesteps,mean_return,std_return,success_rate,wall_s,capped\n"
EVAL_COLUMNS = tuple(EVAL_CSV_HEADER.strip().split(","))
# the columns added since the first eval.csv: a file written before lacks them, and is read with them empty
EVAL_ADDED = ("capped",)
# <job>/attempts/<k>/: a sweep job's earlier, failed attempts (and a study's unfinished validation runs); tables
# never read runs under it
ATTEMPTS = "attempts"
# the temporary names rlrun writes under before a rename: ".run.json.tmp", ".model.tmp.zip"
TMP_FILES = (".*.tmp", ".*.tmp.*")
# what a full or read-only disk raises: a write in the run folder failed, whichever file it was
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


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


def open_for_writing(path: Path, append: bool = False) -> IO[str]:
    """``path`` opened for writing text (truncated, or ``append``), never through a link
    (:func:`rlrun.record.regular_files.open_regular`)."""
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
    try:
        return reading.load_yaml(path)
    except (OSError, ValueError):
        return None


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None where it is missing, truncated, not an object or over a bound of
    :mod:`rlrun.record.reading`."""
    try:
        data = reading.load_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
