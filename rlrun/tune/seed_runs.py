"""The runs of a study: one ``python -m rlrun`` process per seed, watched through the files it writes.

Each run follows the run-directory contract in its own folder, so a trial's seeds are ordinary runs
(``rlrun-eval`` and ``rlrun-table`` read them). While they train, :class:`SeedRun` reads the rows
``eval.csv`` has so far; when they end, ``run.json``. Stopping a run is SIGTERM: rlrun snapshots and ends
``interrupted``; SIGKILL follows if it does not end in time. A run also ends if rlrun-tune dies (on Linux, for a
fresh process).

A seed is forked from a process that has already imported what a run needs (:mod:`rlrun.tune.forked_seeds`), a
start-up measure; with ``RLRUN_FAST_START=0`` (:mod:`rlrun.startup.bootstrap`), or where a test asks, it is a
fresh ``python -m rlrun`` process. Either way its run folder is the same.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rlrun.record.fields import EvalRow, eval_csv_rows, record_problem
from rlrun.record.formats import read_json
from rlrun.startup import bootstrap
from rlrun.tune import forked_seeds

STOP_GRACE_S = 30.0  # time a stopped run gets to write its snapshot before SIGKILL
POLL_S = 0.5  # how often running runs are looked at
OUTPUT_LOG = "output.log"  # a run's stdout and stderr, beside its run.json


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: SIGTERM this run when the rlrun-tune process that started it dies (even by SIGKILL)."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class SeedRun:
    """One seed of a trial (or of the validation): a ``python -m rlrun`` child process in ``folder``, forked from
    the preloaded process, or a fresh one with ``preloaded=False`` (by default: when the start-up measure
    ``preload`` is off, or the platform cannot fork one)."""

    def __init__(self, folder: Path, seed: int, args: Sequence[str], preloaded: bool | None = None) -> None:
        self.folder, self.seed = folder, seed
        self.args = [*args, f"seed={seed}", f"hydra.run.dir={folder}"]
        self.command = [sys.executable, "-m", "rlrun", *self.args]
        if preloaded is None:
            preloaded = bootstrap.enabled("preload") and forked_seeds.available()
        self.preloaded = preloaded
        self.process: subprocess.Popen[bytes] | forked_seeds.ForkedSeed | None = None
        self.rows: list[EvalRow] = []
        self.damaged: str | None = None  # what is wrong with its eval.csv, naming the file and the line

    def start(self) -> None:
        """Start training; stdout and stderr go to ``output.log`` in the run folder."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.preloaded:
            self.process = forked_seeds.start(self.args, self.folder / OUTPUT_LOG)
            return
        with open(self.folder / OUTPUT_LOG, "wb") as log:
            hook: Callable[[], None] | None = _die_with_parent if sys.platform == "linux" else None
            self.process = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=hook,
            )

    def poll(self) -> int | None:
        """The exit status, or None while it runs; reads the evaluations written so far."""
        assert self.process is not None
        status = self.process.poll()
        self._read_rows()
        return status

    def _read_rows(self) -> None:
        path = self.folder / "eval.csv"
        if not path.is_file() or self.damaged is not None:
            return
        try:  # a row still being written (no newline yet) is read at the next poll
            rows = eval_csv_rows(path.read_text())
        except (OSError, ValueError) as error:  # a damaged row: the rows read so far are kept
            self.damaged = f"{path}: {error}"
            return
        self.rows = [
            EvalRow(int(row["timesteps"]), float(row["mean_return"]), float(s) if (s := row["success_rate"]) else None)
            for row in rows
        ]

    def stop(self) -> None:
        """Stop the run (see :func:`stop_runs`)."""
        stop_runs([self])

    def record(self) -> dict[str, Any] | None:
        """The run's ``run.json``, or None if it has none."""
        return read_json(self.folder / "run.json")

    def checked_record(self) -> tuple[dict[str, Any] | None, str | None]:
        """The run's ``run.json`` with each field checked for its type (:func:`rlrun.record.fields.record_problem`):
        the record, or None and what is wrong, naming the file and the field."""
        path = self.folder / "run.json"
        record = read_json(path)
        if record is None:
            return None, f"{path} is missing, cannot be read or is not a JSON object"
        problem = record_problem(record)
        return (record, None) if problem is None else (None, f"{path}: {problem}")

    def error(self) -> str:
        """Why the run failed: ``run.json``'s error, else the last line it printed."""
        record = self.record()
        if record and record.get("error"):
            return str(record["error"])
        log = self.folder / OUTPUT_LOG
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log.is_file() else []
        status = self.process.returncode if self.process else None
        return lines[-1].strip() if lines else f"exit status {status}"


def stop_runs(runs: Sequence[SeedRun]) -> None:
    """SIGTERM every run still going (rlrun snapshots and ends ``interrupted``), then SIGKILL those not
    ended after :data:`STOP_GRACE_S`."""
    going = [run.process for run in runs if run.process is not None and run.process.poll() is None]
    for process in going:
        process.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for process in going:
        try:
            process.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_all(runs: Sequence[SeedRun], at_once: int, on_end: Callable[[SeedRun, int], None]) -> None:
    """Run ``runs`` to the end, at most ``at_once`` at a time; ``on_end(run, status)`` as each ends.

    On an exception (Ctrl-C, SIGTERM) every started run is stopped before it propagates.
    """
    waiting, running = list(runs), list[SeedRun]()
    try:
        while waiting or running:
            while waiting and len(running) < at_once:
                running.append(waiting.pop(0))
                running[-1].start()
            for run in list(running):
                if (status := run.poll()) is not None:
                    running.remove(run)
                    on_end(run, status)
            time.sleep(POLL_S if running else 0)
    finally:
        stop_runs(running)


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
