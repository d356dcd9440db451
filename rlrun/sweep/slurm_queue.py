"""``hydra/launcher=slurm`` on a cluster without accounting: submitit follows the jobs with ``squeue``.

submitit learns how a SLURM job ended from ``sacct``, which answers only where SLURM keeps accounting
(slurmdbd). Many small clusters keep none: there sacct fails at each of submitit's polls, and each failure printed
sacct's own complaint and submitit's warning (twice, plus Hydra's copy) on the sweep's console; and a job that ends
without writing its result (cancelled while queued, killed outright) was never seen to end, so the sweep waited
for it for ever. rlrun's launcher (``hydra_plugins/rlrun_slurm_launcher``: hydra-submitit-launcher's, with this one
change) asks sacct once (:func:`accounting_error`), when the sweep launches its jobs; where accounting does not
answer, it says so in one line and submitit's jobs are followed through the queue instead (:class:`QueueWatcher`):
a job is pending or running while ``squeue`` lists it so, and ended once SLURM says so or the queue has let it go
(``MinJobAge`` after its end).

submitit gives no hook to choose how its jobs are followed: every ``SlurmJob`` asks the watcher its class holds
(``SlurmJob.watcher``, a public attribute). :func:`followed_through_the_queue` puts a :class:`QueueWatcher` there
while the launcher waits for the sweep's jobs, and the one it found back afterwards.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob

QUEUE_POLL_S = 10.0  # how often squeue is asked (submitit checks its jobs every second)
COMMAND_TIMEOUT_S = 60.0
# the states in which SLURM is done with a job (squeue lists them until MinJobAge has passed); any other state a
# listed job is in counts as running (requeued, completing, suspended, ...)
ENDED_STATES = {
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "TIMEOUT",
}
GONE = "ENDED"  # a job the queue no longer lists: it ended (submitit then reads its result, or says it has none)


def accounting_error() -> str | None:
    """None when SLURM's accounting answers (``sacct`` works); else what sacct said."""
    command = ["sacct", "--noheader", "--allocations", "--jobs", "1", "--format", "JobID"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode == 0:
        return None
    said = (done.stderr or done.stdout).strip().splitlines()
    return said[-1].strip() if said else f"exit status {done.returncode}"


def read_queue(output: str) -> dict[str, str]:
    """``squeue --array --noheader --format=%i|%T`` lines -> job id (``<array>_<task>`` or ``<job>``) -> state."""
    states: dict[str, str] = {}
    for line in output.splitlines():
        job_id, _, state = line.strip().partition("|")
        if job_id and state:
            states[job_id] = state.strip().upper()
    return states


class QueueWatcher(SlurmInfoWatcher):
    """submitit's job watcher, reading ``squeue`` instead of ``sacct``: for a cluster without accounting."""

    def __init__(self, poll_s: float = QUEUE_POLL_S) -> None:
        super().__init__(delay_s=int(poll_s))
        self.poll_s = poll_s
        self.jobs: set[str] = set()
        self.states: dict[str, str] = {}
        self.asked = float("-inf")

    def register_job(self, job_id: str) -> None:
        super().register_job(job_id)
        self.jobs.add(job_id)

    def update(self) -> None:
        """Ask the queue about every job submitted so far; a job it does not list has ended."""
        arrays = sorted({job_id.split("_")[0] for job_id in self.jobs})
        if not arrays:
            return
        command = ["squeue", "--array", "--noheader", "--states=all", "--format=%i|%T", "--jobs", ",".join(arrays)]
        try:
            listed = read_queue(subprocess.check_output(command, text=True, timeout=COMMAND_TIMEOUT_S))
        except (OSError, subprocess.SubprocessError):  # the controller busy or restarting: ask again later
            return
        finally:
            self.asked = time.monotonic()
        for job_id in self.jobs:
            state = listed.get(job_id)
            self.states[job_id] = GONE if state is None else state if state in ENDED_STATES else "RUNNING"

    def get_info(self, job_id: str, mode: str = "standard") -> dict[str, str]:
        """``{"State": ...}`` for the job, asking the queue again when ``mode`` forces it or after ``poll_s``."""
        if job_id not in self.jobs:
            self.register_job(job_id)
        if mode == "force" or (mode == "standard" and time.monotonic() - self.asked >= self.poll_s):
            self.update()
        state = self.states.get(job_id)
        return {} if state is None else {"State": state}


@contextmanager
def followed_through_the_queue(accounting: str | None) -> Iterator[None]:
    """While inside: submitit's SLURM jobs are followed with ``squeue`` when ``accounting`` (what
    :func:`accounting_error` found) says sacct does not answer, with ``sacct`` as submitit does otherwise."""
    if accounting is None:
        yield
        return
    before = SlurmJob.watcher
    SlurmJob.watcher = QueueWatcher()
    try:
        yield
    finally:
        SlurmJob.watcher = before
