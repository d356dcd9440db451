"""What a sweep does with a job, from what its folder holds (rlrun/sweep/plan.py), decided before launching."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import time
from pathlib import Path

import pytest

from rlrun.config.errors import UserError
from rlrun.record import signatures
from rlrun.sweep import plan
from rlrun.sweep.plan import Job
from tests.rlrun.helpers import run_folder

HASH = "a" * 64
LONG_AGO = "2020-01-01T00:00:00+0000"


def job_with(tmp_path: Path, record: dict | None) -> Job:
    """A job whose folder holds ``record`` as this user's rlrun wrote it (signed)."""
    job = Job(["seed=0"], "gridworld-ppo/seed-0", tmp_path / "gridworld-ppo" / "seed-0", HASH)
    if record is not None:
        job.path.mkdir(parents=True)
        (job.path / "run.json").write_text(json.dumps({"config_hash": HASH, **record}))
        (job.path / "rlrun.log").write_text("the first attempt\n")
        signatures.sign_run(job.path)
    return job


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


@pytest.mark.parametrize(
    ("record", "action"),
    [
        (None, plan.TRAIN),
        ({"status": "completed"}, plan.SKIP),
        ({"status": "failed"}, plan.RERUN),
        ({"status": "interrupted"}, plan.RERUN),  # no snapshot to continue from
        ({"status": "completed", "config_hash": "b" * 64}, plan.REFUSE),
        ({"status": "running", "host": platform.node(), "pid": 2**22 + 12345}, plan.RERUN),  # pid gone
        ({"status": "running", "host": platform.node(), "pid": None}, plan.RERUN),
        ({"status": "running", "host": "node-7", "pid": 1, "updated": LONG_AGO}, plan.RERUN),
    ],
    ids=["new", "completed", "failed", "interrupted-no-snapshot", "other-config", "dead-pid", "no-pid", "stale-node"],
)
def test_decide(tmp_path: Path, record: dict | None, action: str) -> None:
    job = job_with(tmp_path, record)
    plan.decide(job, stale_after_s=600)
    assert job.action == action
    if action == plan.REFUSE:
        assert "another config" in str(job.reason) and str(job.path) in str(job.reason)


@pytest.mark.parametrize("received", [False, True], ids=["edited", "received"])
def test_a_completed_run_not_signed_is_refused_never_skipped_as_completed(tmp_path: Path, received: bool) -> None:
    job = job_with(tmp_path, {"status": "completed", "final": {"mean_return": 1.0}})
    if received:
        (job.path / signatures.RUN_MANIFEST).unlink()
    else:  # its score edited after the run signed it
        (job.path / "run.json").write_text(json.dumps({"config_hash": HASH, "status": "completed", "final": 99.0}))
    plan.decide(job, stale_after_s=600)
    assert job.action == plan.REFUSE
    assert "says completed, but its run.json is not signed with your trust key" in str(job.reason)
    assert f"rlrun-trust {job.path}" in str(job.reason)


def test_a_stopped_running_record_naming_another_budget_is_refused_never_resumed(tmp_path: Path) -> None:
    job = Job(["seed=0"], "gridworld-ppo/seed-0", tmp_path / "gridworld-ppo" / "seed-0", HASH)
    run_folder(job.path)  # signed, with a complete snapshot
    dead = {"config_hash": HASH, "status": "running", "host": platform.node(), "pid": 2**22 + 12345}
    (job.path / "run.json").write_text(json.dumps({**dead, "total_timesteps": 600}))
    signatures.sign_run(job.path)  # killed while it trained
    plan.decide(job, stale_after_s=600)
    assert job.action == plan.RESUME
    (job.path / "run.json").write_text(json.dumps({**dead, "total_timesteps": 1400}))  # unsigned
    plan.decide(job, stale_after_s=600)
    assert job.action == plan.REFUSE and "total_timesteps changed after it was signed" in str(job.reason)


def test_a_live_run_is_refused_on_this_host_and_on_another(tmp_path: Path) -> None:
    here = job_with(tmp_path / "here", {"status": "running", "host": platform.node(), "pid": os.getpid()})
    there = job_with(tmp_path / "there", {"status": "running", "host": "node-7", "pid": 1, "updated": now()})
    held = os.open(here.path / ".lock", os.O_RDWR | os.O_CREAT)  # on this host, its folder's lock says it runs
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        for job in (here, there):
            plan.decide(job, stale_after_s=600)
            assert job.action == plan.REFUSE and "still running" in str(job.reason)
    finally:
        os.close(held)


def test_a_rerun_keeps_every_attempt(tmp_path: Path) -> None:
    job = job_with(tmp_path, {"status": "failed", "error": "RuntimeError: first"})
    (job.path / ".hydra").mkdir()
    assert plan.keep_attempt(job) == job.path / "attempts" / "1"
    assert sorted(p.name for p in job.path.iterdir()) == ["attempts"]
    (job.path / "run.json").write_text(json.dumps({"status": "failed", "error": "RuntimeError: second"}))
    plan.keep_attempt(job)
    first, second = (json.loads((job.path / "attempts" / k / "run.json").read_text())["error"] for k in "12")
    assert (first, second) == ("RuntimeError: first", "RuntimeError: second")
    assert (job.path / "attempts" / "1" / "rlrun.log").read_text() == "the first attempt\n"
    assert (job.path / "attempts" / "1" / ".hydra").is_dir()


def test_two_jobs_in_one_folder_are_refused(tmp_path: Path) -> None:
    a = Job(["seed=0", "progress_bar=true"], "gridworld-ppo/seed-0", tmp_path, HASH)
    b = Job(["seed=0", "progress_bar=false"], "gridworld-ppo/seed-0", tmp_path, HASH)
    with pytest.raises(UserError, match="two jobs of this sweep map to one folder"):
        plan.refuse_collisions([a, b])
    plan.refuse_collisions([a])


def test_only_a_folder_this_sweep_made_for_a_job_it_never_started_is_removed(tmp_path: Path) -> None:
    made = job_with(tmp_path / "made", None)
    (made.path / ".hydra").mkdir(parents=True)
    (made.path / "rlrun.log").write_text("")
    plan.remove_unstarted(made)
    assert not made.path.exists()
    users = job_with(tmp_path / "users", None)
    (users.path / ".hydra").mkdir(parents=True)
    users.existed = True  # was there before the sweep
    plan.remove_unstarted(users)
    assert users.path.is_dir()
