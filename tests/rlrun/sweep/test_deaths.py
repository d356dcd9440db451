"""A joblib worker killed outright (SIGKILL, as the out-of-memory killer does) costs only its own job
(rlrun.sweep.deaths); a launcher that cannot start makes the sweep fail."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rlrun.sweep.deaths import DeathWatch
from tests import forked_commands
from tests.rlrun.helpers import read_run_json as record
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS, sweep


@pytest.mark.parametrize("when", ["snapshot", "start"])
def test_a_sigkilled_joblib_worker_fails_its_job_alone_and_the_other_completes(tmp_path: Path, when: str) -> None:
    """Killed once the job has a snapshot, or the moment its run.json appears (before the sweep's next look at
    its jobs' records: the worker is watched from its own start)."""
    args = [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=killed", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    process = forked_commands.Popen(
        ["-m", "rlrun", "-m", *args],
        cwd=tmp_path,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    sweep_dir = tmp_path / "outputs" / "sweeps" / "killed"
    deadline = time.monotonic() + 240
    killed: Path | None = None
    while killed is None:
        assert process.poll() is None and time.monotonic() < deadline, "the job never wrote a snapshot"
        for run_dir in sweep_dir.glob("gridworld-ppo/*/seed-1"):
            # both jobs under way: seed-1 has a snapshot, seed-0 its run.json (on a loaded machine it starts later)
            siblings = [s for s in sweep_dir.glob("gridworld-ppo/*/seed-0") if (s / "run.json").exists()]
            ready = when == "start" or list(run_dir.glob("snapshots/step-*/manifest.json"))
            if ready and (run_dir / "run.json").exists() and siblings:
                assert record(siblings[0])["status"] == "running"  # the pool would end it with the killed one
                os.kill(record(run_dir)["pid"], signal.SIGKILL)
                killed = run_dir
        time.sleep(0.01)
    output, _ = process.communicate(timeout=300)

    assert process.returncode == 1, output
    assert record(killed)["status"] == "failed", output
    assert "killed outright" in record(killed)["error"]
    assert "SIGKILL" in record(killed)["error"]  # the launcher's word for the cause
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert {job["folder"].rsplit("/", 1)[1]: job["status"] for job in data["jobs"]} == {
        "seed-0": "completed",
        "seed-1": "failed",
    }


def test_a_launcher_that_cannot_start_fails_the_sweep(tmp_path: Path) -> None:
    result = sweep(
        [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=none", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0"], tmp_path
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the launcher stopped" in result.stderr


def _watch_fd(pid: int) -> int | None:
    """The descriptor of this process that is a pidfd of ``pid`` (the watch's), if there is one yet."""
    for entry in Path("/proc/self/fd").iterdir():
        try:
            if (
                os.readlink(entry) == "anon_inode:[pidfd]"
                and f"Pid:\t{pid}\n" in Path(f"/proc/self/fdinfo/{entry.name}").read_text()
            ):
                return int(entry.name)
        except OSError:
            continue
    return None


def _until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the watch uses Linux's pidfds")
def test_a_pidfd_closed_by_other_code_is_no_death_and_the_watch_goes_on() -> None:
    """Other code of the sweep's process that closes a descriptor twice can close one of the watch's (seen once
    in a presets benchmark sweep: the watch's thread died on EBADF). The process is not taken for dead, and its
    death is still seen through a new pidfd."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        with DeathWatch([]) as watch:
            _until(lambda: _watch_fd(child.pid) is not None, "the watch never opened a pidfd of its child")
            os.close(_watch_fd(child.pid) or -1)  # a foreign close of the watch's descriptor
            _until(lambda: _watch_fd(child.pid) is not None, "the watch never watched the child again")
            assert child.pid not in watch.deaths and watch._thread.is_alive()
            child.kill()
            _until(lambda: child.pid in watch.deaths, "the child's death was not seen")
            assert watch._thread.is_alive()
    finally:
        child.kill()
        child.wait()
