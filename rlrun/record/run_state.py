"""Where a run stands now, read from its folder as data: for the live views of sweeps and studies and for the list
of runs (``rlrun-runs``).

Read while the run writes, from a folder that may come from anyone, so every read is bounded and tolerant: ``run.json``
through :func:`rlrun.record.formats.read_json` (regular files only, within bounds; rewritten atomically, so never
half-written), and only the last complete row of ``eval.csv`` (its tail, whatever its size). A file missing, damaged
or of the wrong type gives a state with less in it, never an exception. A ``running`` record whose process is gone
from this host (or, on another host, not rewritten for :data:`STALE_AFTER_S`) stands for an interrupted run.
"""

from __future__ import annotations

import os
import platform
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlrun.config.errors import UserError
from rlrun.record import liveness
from rlrun.record.fields import EvalRow, as_text, is_number, parse_eval_csv
from rlrun.record.formats import read_json
from rlrun.record.regular_files import open_regular

STALE_AFTER_S = 600.0  # a running record from another host not rewritten for this long: its run is gone
TAIL_BYTES = 4096  # what is read of eval.csv: its last rows


@dataclass(frozen=True)
class RunState:
    """A run as its folder shows it now; ``status`` None where ``run.json`` is missing or unreadable."""

    folder: Path
    record: dict[str, Any]
    status: str | None  # run.json's status, ``interrupted`` for a running record whose process is gone
    last: EvalRow | None  # the newest periodic evaluation
    age_s: float | None  # seconds since run.json was last written

    @property
    def timesteps(self) -> int:
        value = self.record.get("timesteps")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def budget(self) -> int | None:
        value = self.record.get("total_timesteps")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    @property
    def final(self) -> float | None:
        """The final evaluation's mean return, once completed."""
        final = self.record.get("final")
        return _number(final.get("mean_return")) if isinstance(final, dict) else None

    @property
    def error(self) -> str | None:
        """The last line of the recorded error."""
        lines = [line for line in str(self.record.get("error") or "").splitlines() if line.strip()]
        return lines[-1].strip() if lines else None

    def seconds_left(self) -> float | None:
        """The training time left at the pace so far (``wall_s`` over ``timesteps``); None before it is known."""
        wall = _number(self.record.get("wall_s"))
        if self.budget is None or not self.timesteps or wall is None or wall <= 0:
            return None
        return max(self.budget - self.timesteps, 0) * wall / self.timesteps


def _number(value: Any) -> float | None:
    """A number of a record as a float; None for anything else (:func:`rlrun.record.fields.is_number`)."""
    return float(value) if is_number(value) else None


def read_state(folder: Path) -> RunState:
    """The state of the run in ``folder`` now (see the module's docstring)."""
    path = folder / "run.json"
    record = read_json(path) or {}
    status = record.get("status") if isinstance(record.get("status"), str) else None
    try:
        age = liveness.age_s(record, path) if record else None
    except OSError:  # removed meanwhile
        age = None
    if status == "running" and _gone(record, path):
        status = "interrupted"
    return RunState(folder, record, status, last_evaluation(folder / "eval.csv"), age)


def resume_command(folder: Path, prog: str = "rlrun", total_timesteps: int | None = None) -> str:
    """``rlrun resume=<folder>`` (with ``total_timesteps=N``: trained on to that budget), the folder quoted for a
    shell and shown as text (:func:`rlrun.record.fields.as_text`)."""
    more = "" if total_timesteps is None else f" total_timesteps={total_timesteps}"
    return f"{prog} resume={as_text(shlex.quote(str(folder)))}{more}"


def continue_command(state: RunState, prog: str = "rlrun") -> str | None:
    """The command that continues the run: ``resume=`` of an interrupted or failed run with a snapshot; of a
    completed one, ``resume=`` to twice its budget; None for a run still going or with no snapshot to resume."""
    if state.status == "completed":
        return resume_command(state.folder, prog, 2 * state.budget) if state.budget else None
    if state.status in ("interrupted", "failed") and any((state.folder / "snapshots").glob("step-*")):
        return resume_command(state.folder, prog)
    return None


def _gone(record: dict[str, Any], path: Path) -> bool:
    """Whether the process of a ``running`` record is gone (a pid that is no process's number: gone)."""
    pid = record.get("pid")
    if record.get("host") == platform.node() and not (isinstance(pid, int) and pid > 0):
        return True
    try:
        return not liveness.still_running(record, path, STALE_AFTER_S)
    except OSError:  # removed meanwhile
        return True


def last_evaluation(path: Path) -> EvalRow | None:
    """The last complete row of the ``eval.csv`` at ``path``, read with the file's own header (its first line and
    its last :data:`TAIL_BYTES` read, a regular file only), or None where it has none or it cannot be read."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except (OSError, UserError):  # missing, or a link or FIFO in a received folder
        return None
    with os.fdopen(fd, "rb") as file:
        header = file.read(TAIL_BYTES).decode("utf-8", errors="replace").split("\n", 1)[0]
        file.seek(max(os.fstat(file.fileno()).st_size - TAIL_BYTES, 0))
        tail = file.read(TAIL_BYTES).decode("utf-8", errors="replace")
    rows = [line for line in tail[: tail.rfind("\n") + 1].splitlines() if line.strip() and line != header]
    if not rows:
        return None
    try:
        return parse_eval_csv(f"{header}\n{rows[-1]}\n")[-1]
    except ValueError:  # a damaged row, or the tail began inside one
        return None
