"""Stopping a sweep stops all of it: a signal to the sweep's own process alone (not its process group) stops
its jobs in joblib's workers, and a sweep killed outright leaves no worker or fork server behind.

Processes are found through /proc: the sweep's descendants are noted while it runs (with their start times,
so a reused pid is not taken for one of them) and looked for again after it ended.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlrun.run import snapshots
from tests.rlrun.helpers import read_run_json as record
from tests.rlrun.sweep.test_sweep import GRIDWORLD

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

Process = tuple[int, int]  # pid and start time


def _stat(pid: int) -> tuple[int, str, int] | None:
    """The parent pid, state and start time of ``pid``; None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root: int) -> set[Process]:
    """Every living process below ``root``."""
    parents: dict[int, list[Process]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and stat[1] != "Z":
            parents.setdefault(stat[0], []).append((int(entry.name), stat[2]))
    found: set[Process] = set()
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child[0])
    return found


def alive(processes: set[Process]) -> set[Process]:
    """Those of ``processes`` still running (a zombie counts as ended)."""
    left = set()
    for pid, started in processes:
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[1] != "Z":
            left.add((pid, started))
    return left


def start_sweep(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """The sweep, its output into ``cwd/sweep.out`` (a pipe would stay open as long as any worker lives)."""
    with open(cwd / "sweep.out", "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "rlrun", "-m", *args],
            cwd=cwd,
            env={**os.environ, "HYDRA_FULL_ERROR": "0"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own: only what the test sends reaches it
        )


def running_jobs(process: subprocess.Popen[bytes], sweep_dir: Path, count: int) -> set[Process]:
    """Wait until ``count`` jobs have written a snapshot; the sweep's processes noted meanwhile."""
    seen: set[Process] = set()
    deadline = time.monotonic() + 240
    while len({p.parents[2] for p in sweep_dir.glob("gridworld-ppo/*/seed-*/snapshots/step-*/manifest.json")}) < count:
        assert process.poll() is None and time.monotonic() < deadline, "the jobs never wrote a snapshot"
        seen |= descendants(process.pid)
        time.sleep(0.05)
    return seen | descendants(process.pid)


def wait_until_gone(processes: set[Process], timeout_s: float) -> set[Process]:
    deadline = time.monotonic() + timeout_s
    while alive(processes) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive(processes)


ARGS = [*GRIDWORLD, "total_timesteps=8192", "seed=0,1", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]


def test_sigterm_to_the_sweep_alone_stops_its_joblib_jobs_with_snapshots(tmp_path: Path) -> None:
    args = [*ARGS, "sweep=stopped"]
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

    again = subprocess.run(
        [sys.executable, "-m", "rlrun", "-m", *args], cwd=tmp_path, capture_output=True, text=True, timeout=400
    )
    assert again.returncode == 0, again.stdout + again.stderr
    for job in data["jobs"]:
        continued = record(sweep_dir / job["folder"])
        assert continued["status"] == "completed" and continued["resumes"]


def test_a_sweep_killed_outright_leaves_no_worker_behind(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "outputs" / "sweeps" / "killed"
    process = start_sweep([*ARGS, "sweep=killed"], tmp_path)
    processes = running_jobs(process, sweep_dir, 1)
    os.kill(process.pid, signal.SIGKILL)  # the sweep's process alone
    process.wait(timeout=30)
    assert wait_until_gone(processes, 30) == set()
    for run_dir in sweep_dir.glob("gridworld-ppo/*/seed-*"):
        if (run_dir / "run.json").exists():  # a job that had started ended at its next boundary, recorded
            assert record(run_dir)["status"] in ("interrupted", "completed")
