"""The runs nearest in name to a run folder that is not there (``resume=`` of a mistyped stamp): the fix of the
refusal names them.

The search starts at the nearest folder above the missing one that exists, and compares the missing part of the
path with the run folders below it (folders holding a ``run.json``, as deep as the missing part) by
:func:`difflib.get_close_matches`; it looks at no more than :data:`MAX_LOOKED_AT` folders.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from rlrun.record.provenance import prog
from rlrun.record.run_state import resume_command

MAX_LOOKED_AT = 20_000  # folders looked at below the nearest existing one
SHOWN = 3  # runs named at most
CUTOFF = 0.6  # difflib's similarity below which a name is not offered


def _run_folders(top: Path, depth: int) -> list[str]:
    """The run folders ``depth`` levels below ``top``, as paths relative to it (at most :data:`MAX_LOOKED_AT`
    folders looked at)."""
    looked_at, level = 0, [top]
    for _ in range(depth):
        below = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
            except OSError:
                continue
            below += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
            looked_at += len(entries)
            if looked_at > MAX_LOOKED_AT:
                break
        level = below
    return [str(folder.relative_to(top)) for folder in level if (folder / "run.json").is_file()]


def nearest(missing: Path) -> list[Path]:
    """The run folders nearest in name to ``missing`` (a path that does not exist), nearest first."""
    top, parts = missing, 0
    while not top.is_dir():
        if top.parent == top:
            return []
        top, parts = top.parent, parts + 1
    wanted = str(missing.relative_to(top))
    matches = difflib.get_close_matches(wanted, _run_folders(top, parts), n=SHOWN, cutoff=CUTOFF)
    return [top / match for match in matches]


def resume_fix(missing: Path) -> str:
    """The fix of ``resume=`` of a folder that does not exist: the nearest runs, each as the command that continues
    it, or where runs are listed."""
    runs = nearest(missing)
    if not runs:
        return "give the folder of a run under outputs/runs/ (rlrun-runs lists them)"
    commands = " or ".join(resume_command(run, prog()) for run in runs)
    return f"did you mean {commands}? (rlrun-runs lists the runs)"
