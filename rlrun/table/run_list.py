"""``rlrun-runs``: the runs under a folder (``outputs/`` by default: single runs, sweeps' jobs, studies' seeds), one
line each: its folder, its status, its steps of its budget, its last and final evaluation and how long ago it last
wrote; under it, on a line of its own to copy, the command that continues it.

Each run is read as data (:mod:`rlrun.record.run_state`: bounded, tolerant readers of regular files only), so a
received or damaged folder is listed, never trusted: every name from it is shown as text (control characters
escaped, :func:`rlrun.record.fields.as_text`), and the command it gets is ``rlrun resume=<folder>``, which checks
the folder's signatures before it loads anything.
"""

from __future__ import annotations

import os
import sys
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


def age(seconds: float) -> str:
    """``0:00:12``, ``3:05:00``, ``2 d 4:00:00``: hours, minutes and seconds, and days."""
    whole = int(max(seconds, 0.0))
    days, rest = divmod(whole, 86400)
    clock = f"{rest // 3600}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days} d {clock}" if days else clock


def line(state: RunState) -> str:
    """``<folder>: completed, 4,096/4,096 steps, last eval 0.600, final 0.600, age 0:00:12`` (since run.json was last
    written)."""
    budget = f"{state.budget:,}" if state.budget is not None else "?"
    parts = [state.status or "unreadable (no run.json that can be read)", f"{state.timesteps:,}/{budget} steps"]
    if state.last is not None:
        parts.append(f"last eval {state.last.mean_return:.3f}")
    if state.final is not None:
        parts.append(f"final {state.final:.3f}")
    if state.age_s is not None:
        parts.append(f"age {age(state.age_s)}")
    return f"{as_text(state.folder)}: {', '.join(parts)}"


def then(state: RunState) -> str:
    """What to do with the run next: the command that continues it, or why there is none."""
    command = continue_command(state)
    if command is not None:
        return command
    if state.status == "running":
        return f"(still running: pid {as_text(state.record.get('pid'))} on {as_text(state.record.get('host'))})"
    if state.status in ("interrupted", "failed"):
        return "(no snapshot to continue from: start it again)"
    return "(nothing to continue)"


def lines(states: Sequence[RunState]) -> list[str]:
    """A line per run, and under it, indented, the command that continues it."""
    return [text for state in states for text in (line(state), f"  {then(state)}")]


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


def show(folders: Sequence[Path]) -> None:
    """Print :func:`list_runs`; a reader that stops early (``| head``) ends it quietly, as a shell command ends."""
    try:
        print("\n".join(list_runs(folders)), flush=True)
    except BrokenPipeError:  # Python's advice: point stdout at devnull, so the flush at exit does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
