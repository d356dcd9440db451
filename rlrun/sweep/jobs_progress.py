"""The sweep's progress as a whole, shown by the sweep's own process: in a terminal, a live view redrawn in place
(a line per running job: its folder, its steps of its budget, its last evaluation and its time left; the counts of
completed, failed and waiting jobs and the sweep's time left); without one, a line every ``progress_every`` seconds
with the time before it (:mod:`rlrun.run.following`).

Read from the job folders, as everything the sweep reports (:mod:`rlrun.sweep.summary`), with the bounded,
tolerant readers of :mod:`rlrun.record.run_state`: a job is done once its ``run.json`` records an end written by
this invocation, running while it says ``running``, and waiting otherwise. The time left comes from the share of
the sweep's steps done so far (each running job's ``timesteps`` out of its ``total_timesteps``), so it is there
before the first job ends. Each job's own lines go to its log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from omegaconf import OmegaConf

from rlrun.record.run_record import END_STATUSES
from rlrun.record.run_state import RunState, read_state
from rlrun.run.following import duration, job_line, print_clocked
from rlrun.sweep.plan import Job


def every_s(jobs: list[Job]) -> float:
    """The sweep's ``progress_every`` (the first job's; 60 where its config does not say)."""
    config = next((job.config for job in jobs if job.config is not None), None)
    return float(OmegaConf.select(config, "progress_every", default=60)) if config is not None else 60.0


@dataclass(frozen=True)
class Snapshot:
    """The launched jobs now: those running with their state, how many ended each way, the share of the steps
    done."""

    running: list[tuple[Job, RunState]]
    ended: dict[str, int]  # completed, failed, interrupted
    waiting: int
    fraction: float

    @property
    def done(self) -> int:
        return sum(self.ended.values())


class SweepProgress:
    """The progress of the launched ``jobs``: :meth:`view` (the live lines), :meth:`line` (the plain line, printed
    every ``every_s`` seconds by :meth:`tick`, 0: never); ``started_here(job)`` tells whether the job's
    ``run.json`` was written by this invocation (the watcher's stamps)."""

    def __init__(self, jobs: list[Job], every_s: float, started_here: Callable[[Job], bool]) -> None:
        self.jobs = jobs
        self.every_s = every_s
        self.started_here = started_here
        self.started = self.last = time.monotonic()

    def tick(self) -> None:
        """Print the line if ``every_s`` seconds have passed since the last one."""
        if self.every_s <= 0 or not self.jobs or time.monotonic() - self.last < self.every_s:
            return
        self.last = time.monotonic()
        print_clocked(self.line())

    def now(self) -> Snapshot:
        """Where the launched jobs stand."""
        running, ended, share = [], dict.fromkeys(END_STATUSES, 0), 0.0
        for job in self.jobs:
            if not self.started_here(job):
                continue
            state = read_state(job.path)
            if state.status in END_STATUSES and state.record.get("status") in END_STATUSES:
                ended[str(state.status)] += 1
                share += 1.0
            elif state.status is not None:  # running, or its process gone: the watcher reports it at the end
                running.append((job, state))
                share += min(1.0, state.timesteps / state.budget) if state.budget else 0.0
        waiting = len(self.jobs) - sum(ended.values()) - len(running)
        return Snapshot(running, ended, waiting, share / len(self.jobs) if self.jobs else 1.0)

    def _left(self, now: Snapshot) -> str:
        """``about 4 min 10 s left``, from the share of the steps done so far."""
        if now.fraction <= 0:
            return "time left not known yet"
        if now.fraction >= 1 and now.running:
            return "every step taken: final evaluations"
        return f"about {duration((time.monotonic() - self.started) * (1 - now.fraction) / now.fraction)} left"

    def line(self) -> str:
        """``sweep progress: 3 done, 2 running, 5 left (40% of the steps); about 4 min 10 s left``."""
        now = self.now()
        words = f"{now.done} done, {len(now.running)} running, {now.waiting} left"
        line = f"sweep progress: {words} ({100 * now.fraction:.0f}% of the steps); {self._left(now)}"
        evaluating = [job.folder for job, state in now.running if state.budget and state.timesteps >= state.budget]
        return line + (f"; final evaluation: {', '.join(evaluating)}" if evaluating else "")

    def view(self) -> list[str]:
        """The live lines: the counts and the time left, then a line per running job."""
        now = self.now()
        ended = ", ".join(
            f"{count} {status}" for status, count in now.ended.items() if count or status != "interrupted"
        )
        head = f"sweep: {ended}, {len(now.running)} running, {now.waiting} waiting; {self._left(now)}"
        return [head, *(job_line(f"  {job.folder}", state) for job, state in now.running)]
