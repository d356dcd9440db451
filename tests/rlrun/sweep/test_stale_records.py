"""A sweep decides whether a ``running`` job goes on as ``resume=`` does, by its folder's lock (rlrun/sweep/plan.py,
rlrun/record/lock.py): a stale or received record's pid (``pid: 1``, ``pid: "abc"``) neither refuses the job nor
ends the sweep in a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import platform
from pathlib import Path

import pytest

from rlrun.record import liveness, lock, signatures
from rlrun.sweep import plan
from rlrun.sweep.plan import Job
from tests.rlrun.helpers import run_folder

HASH = "a" * 64


def stopped_job(tmp_path: Path, pid: object) -> Job:
    """A job whose run was killed while it trained (signed, with a complete snapshot), its record naming ``pid``."""
    job = Job(["seed=0"], "gridworld-ppo/seed-0", tmp_path / "gridworld-ppo" / "seed-0", HASH)
    run_folder(job.path)
    record = {"config_hash": HASH, "status": "running", "host": platform.node(), "pid": pid}
    (job.path / "run.json").write_text(json.dumps(record))
    signatures.sign_run(job.path)
    return job


@pytest.mark.parametrize(
    "pid", [1, os.getpid(), "abc", True, -5], ids=["init", "a-live-process", "text", "bool", "negative"]
)
def test_a_stopped_job_whose_record_names_a_live_or_bad_pid_is_resumed(tmp_path: Path, pid: object) -> None:
    job = stopped_job(tmp_path, pid)
    plan.decide(job, stale_after_s=600)  # pid 1 ("kill 1") and "abc" (a traceback) before
    assert (job.action, job.reason) == (plan.RESUME, None)


def test_a_job_whose_lock_another_process_holds_is_refused_naming_the_holder(tmp_path: Path) -> None:
    job = stopped_job(tmp_path, "abc")
    held = os.open(job.path / lock.LOCK_NAME, os.O_RDWR | os.O_CREAT)  # another open file: another holder
    fcntl.flock(held, fcntl.LOCK_EX)
    os.write(held, f"4242 {platform.node()}\n".encode())
    try:
        plan.decide(job, stale_after_s=600)
    finally:
        os.close(held)
    assert job.action == plan.REFUSE
    assert f"still running (pid 4242 on {platform.node()})" in str(job.reason)
    assert not lock.in_use(job.path)  # let go: the holder's file is not removed by asking


def test_a_record_whose_pid_is_no_number_is_no_live_process(tmp_path: Path) -> None:
    for pid in ("abc", [1], 1.5, True, 0, -1):
        assert liveness.process_alive({"host": platform.node(), "pid": pid}) is False
        assert not liveness.still_running({"host": platform.node(), "pid": pid}, tmp_path / "run.json", 600.0)


def test_a_stopped_job_whose_snapshot_links_to_dev_zero_is_refused_alone(tmp_path: Path) -> None:
    job = stopped_job(tmp_path, 1)
    state = next((job.path / "snapshots").glob("step-*")) / "state.pkl"
    state.unlink()
    state.symlink_to("/dev/zero")  # hashing it would never end; refusing it ended the whole sweep's plan
    plan.decide(job, stale_after_s=600)
    assert job.action == plan.REFUSE and "state.pkl (a symbolic link)" in str(job.reason)
