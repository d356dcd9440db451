"""The sweep's progress as a whole, printed by the sweep's own process every ``progress_every`` seconds.

Read from the job folders, as everything the sweep reports (:mod:`rlrun.sweep.summary`): a job is done once its
``run.json`` records an end written by this invocation, running while it says ``running``, and left otherwise.
The time left comes from the share of the sweep's steps done so far (each running job's ``timesteps`` out of
its ``total_timesteps``), so it is there before the first job ends. Each job's own lines go to its log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from omegaconf import OmegaConf

from rlrun.record.formats import read_json
from rlrun.record.run_record import END_STATUSES
from rlrun.sweep.plan import Job


def every_s(jobs: list[Job]) -> float:
    """The sweep's ``progress_every`` (the first job's; 60 where its config does not say)."""
    config = next((job.config for job in jobs if job.config is not None), None)
    return float(OmegaConf.select(config, "progress_every", default=60)) if config is not None else 60.0


class SweepProgress:
    """Prints ``sweep progress: 3 done, 2 running, 5 left (40% of the steps); about 4 min 10 s left`` every
    ``every_s`` seconds (0: never) for the launched ``jobs``; ``started_here(job)`` tells whether the job's
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
        print(self.line(), flush=True)

    def line(self) -> str:
        """The progress line now."""
        done = running = 0
        share = 0.0
        for job in self.jobs:
            record: dict[str, Any] = (read_json(job.path / "run.json") if self.started_here(job) else None) or {}
            status = record.get("status")
            if status in END_STATUSES:
                done += 1
                share += 1.0
            elif status == "running":
                running += 1
                total = record.get("total_timesteps") or 0
                share += min(1.0, (record.get("timesteps") or 0) / total) if total else 0.0
        left = len(self.jobs) - done - running
        fraction = share / len(self.jobs)
        words = f"sweep progress: {done} done, {running} running, {left} left ({100 * fraction:.0f}% of the steps)"
        if fraction <= 0:
            return f"{words}; time left not known yet"
        from rlrun.run.progress import duration  # SB3: imported by the time the first job runs

        elapsed = time.monotonic() - self.started
        return f"{words}; about {duration(elapsed * (1 - fraction) / fraction)} left"
