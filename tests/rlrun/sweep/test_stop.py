"""Stopping a sweep stops all of it: a signal to the sweep's own process alone (not its process group) stops
its jobs in joblib's workers, and a sweep killed outright leaves no worker or fork server behind.

Processes are found through /proc: the sweep's descendants are noted while it runs (with their start times,
so a reused pid is not taken for one of them) and looked for again after it ended.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from rlrun.run import snapshots
from tests import forked_commands
from tests.rlrun.helpers import read_run_json as record
from tests.rlrun.sweep_helpers import TWO_JOB_SWEEP, running_jobs, start_sweep, wait_until_gone

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def test_sigterm_to_the_sweep_alone_stops_its_joblib_jobs_with_snapshots(tmp_path: Path) -> None:
    args = [*TWO_JOB_SWEEP, "sweep=stopped"]
    sweep_dir = tmp_path / "outputs" / "sweeps" / "stopped"
    process = start_sweep(args, tmp_path)
    processes = running_jobs(process, sweep_dir, 2)
    assert len(processes) >= 3  # the fork server and two workers at least
    os.kill(process.pid, signal.SIGTERM)  # the sweep's process alone, not its group
    process.wait(timeout=120)
    output = (tmp_path / "sweep.out").read_text()
    assert process.returncode == 128 + signal.SIGTERM, output
    assert wait_until_gone(processes, 30) == set(), output
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert [job["status"] for job in data["jobs"]] == ["interrupted", "interrupted"], output
    for job in data["jobs"]:  # stopped at a boundary, with a snapshot there
        stopped = record(sweep_dir / job["folder"])
        newest = snapshots.list_snapshots(sweep_dir / job["folder"] / "snapshots")[-1]
        assert 0 < stopped["timesteps"] < 8192 and snapshots.manifest(newest)["step"] == stopped["timesteps"]

    again = forked_commands.run(["-m", "rlrun", "-m", *args], cwd=tmp_path, timeout=400)
    assert again.returncode == 0, again.stdout + again.stderr
    for job in data["jobs"]:
        continued = record(sweep_dir / job["folder"])
        assert continued["status"] == "completed" and continued["resumes"]


def test_a_sweep_killed_outright_leaves_no_worker_behind(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "outputs" / "sweeps" / "killed"
    process = start_sweep([*TWO_JOB_SWEEP, "sweep=killed"], tmp_path)
    processes = running_jobs(process, sweep_dir, 1)
    os.kill(process.pid, signal.SIGKILL)  # the sweep's process alone
    process.wait(timeout=30)
    assert wait_until_gone(processes, 30) == set()
    for run_dir in sweep_dir.glob("gridworld-ppo/*/seed-*"):
        if (run_dir / "run.json").exists():  # a job that had started ended at its next boundary, recorded
            assert record(run_dir)["status"] in ("interrupted", "completed")
