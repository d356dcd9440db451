"""``rlrun-runs``: the runs under a folder (``outputs/`` by default: single runs, sweeps' jobs, studies' seeds), one
line each: its status, its steps of its budget, its last and final evaluation, how long ago it last wrote, and the
command that continues it.

Each run is read as data (:mod:`rlrun.record.run_state`: bounded, tolerant readers of regular files only), so a
received or damaged folder is listed, never trusted: every name from it is shown as text (control characters
escaped, :func:`rlrun.record.fields.as_text`), and the command it gets is ``rlrun resume=<folder>``, which checks
the folder's signatures before it loads anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from rlrun.config.errors import UserError
from rlrun.record.fields import as_text
from rlrun.record.formats import ATTEMPTS
from rlrun.record.run_state import RunState, continue_command, read_state

DESCRIPTION = (
    "The runs under the folders (single runs, sweeps' jobs, studies' seeds): status, steps of the budget, last and "
    "final evaluation, age, and the command that continues each."
)
HEADER = ("run", "status", "steps", "last", "final", "age", "continue with")
SKIPPED = (ATTEMPTS, ".hydra", ".git")  # a sweep job's failed attempts; Hydra's and git's records


def run_folders(folder: Path) -> Iterator[Path]:
    """The run folders (holding a ``run.json``) under ``folder``, at any depth, in path order; links not followed,
    a run folder's own subfolders and a sweep job's ``attempts/`` not searched."""
    for root, dirs, files in os.walk(folder):
        if "run.json" in files:
            dirs.clear()
            yield Path(root)
        else:
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith(".tmp-"))


def age(seconds: float | None) -> str:
    """``12 s``, ``5 min``, ``3 h``, ``2 d``."""
    if seconds is None:
        return "–"
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def row(state: RunState) -> tuple[str, ...]:
    """One run's cells (:data:`HEADER`)."""
    budget = f"{state.budget:,}" if state.budget is not None else "?"
    last = None if state.last is None else state.last.mean_return
    status = state.status or "unreadable"
    return (
        as_text(state.folder),
        status,
        f"{state.timesteps:,}/{budget}",
        _score(last),
        _score(state.final),
        age(state.age_s),
        continue_command(state) or "–",
    )


def lines(states: Sequence[RunState]) -> list[str]:
    """The list: a header, then a line per run, columns aligned."""
    rows = [HEADER, *(row(state) for state in states)]
    widths = [max(len(cells[i]) for cells in rows) for i in range(len(HEADER) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(cells, widths, strict=False)), cells[-1]]) for cells in rows]


def list_runs(folders: Sequence[Path]) -> list[str]:
    """The lines ``rlrun-runs FOLDER...`` prints; a folder that is not there is refused (:class:`UserError`)."""
    states = []
    for folder in folders:
        if not folder.is_dir():
            raise UserError(
                f"{as_text(folder)}: no such folder",
                "give a folder of runs, sweeps or studies (default outputs/, from the folder you ran rlrun in)",
            )
        states += [read_state(run_dir) for run_dir in run_folders(folder)]
    if not states:
        return [f"no runs under {', '.join(as_text(folder) for folder in folders)}"]
    return lines(states)
