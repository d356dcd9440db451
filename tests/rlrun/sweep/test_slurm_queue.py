"""On a SLURM cluster without accounting, submitit's jobs are followed with squeue (rlrun/sweep/slurm_queue.py):
sacct is asked once, and a job is seen to end when SLURM says so or the queue lets it go. SLURM's commands are
stand-ins here (scripts on PATH that answer as SLURM 22.05 does); tests/rlrun/sweep/test_slurm_cluster.py runs the
same on a real cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("submitit")
from submitit.slurm.slurm import SlurmJob  # noqa: E402

from rlrun.sweep.slurm_queue import GONE, QueueWatcher, accounting_error, followed_through_the_queue  # noqa: E402

# what squeue --array --noheader --states=all --format=%i|%T says of array 12: task 0 done, 1 running, 2 requeued,
# 3 cancelled while queued, 4 pending; task 5 ended long enough ago to have left the queue
QUEUE = "12_0|COMPLETED\n12_1|RUNNING\n12_2|REQUEUED\n12_3|CANCELLED\n12_4|PENDING\n"


def stand_in(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {folder}/calls\n{script}\n')
    path.chmod(0o755)


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """squeue and sacct stand-ins first on PATH: a cluster without accounting; their calls logged in ``calls``."""
    stand_in(tmp_path, "squeue", f"printf '{QUEUE}'")
    stand_in(tmp_path, "sacct", "printf 'Slurm accounting storage is disabled' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path}:{Path('/usr/bin')}:{Path('/bin')}")
    return tmp_path


def test_without_accounting_sacct_says_why_once(slurm: Path) -> None:
    assert accounting_error() == "Slurm accounting storage is disabled"
    stand_in(slurm, "sacct", "exit 0")
    assert accounting_error() is None


def test_the_queue_tells_which_jobs_ended(slurm: Path) -> None:
    watcher = QueueWatcher()
    jobs = [f"12_{task}" for task in range(6)]
    for job_id in jobs:
        watcher.register_job(job_id)
    states = {job_id: watcher.get_state(job_id, mode="force") for job_id in jobs}
    assert states == {
        "12_0": "COMPLETED",
        "12_1": "RUNNING",
        "12_2": "RUNNING",  # requeued: pending again, not done
        "12_3": "CANCELLED",  # never started, so it writes no result: submitit must see that it ended
        "12_4": "RUNNING",
        "12_5": GONE,
    }
    assert [watcher.is_done(job_id, mode="cache") for job_id in jobs] == [True, False, False, True, False, True]
    assert "sacct" not in (slurm / "calls").read_text()


def test_the_queue_is_asked_at_most_every_poll_period(slurm: Path) -> None:
    watcher = QueueWatcher(poll_s=3600)
    for _ in range(5):  # submitit asks about each job every second
        watcher.get_state("12_1")
    assert (slurm / "calls").read_text().count("squeue") == 1


def test_submitits_jobs_are_followed_through_the_queue_only_without_accounting() -> None:
    before = SlurmJob.watcher
    with followed_through_the_queue("Slurm accounting storage is disabled"):
        assert isinstance(SlurmJob.watcher, QueueWatcher)
    assert SlurmJob.watcher is before
    with followed_through_the_queue(None):
        assert SlurmJob.watcher is before
