"""One writer per folder: a run, a ``resume=`` and a sweep hold their folder's lock; a second claimant is refused.

The contenders of each concurrency test start at the same instant: each process imports rlrun first, says it
is ready, and waits for a start file the test creates once all are ready.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rlrun.record import lock
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.kill_during_snapshot import STEPS, config
from tests.rlrun.resume_helpers import Crash, crash_at

TRIES = 5  # of the end-to-end races below (each trains); the lock itself races RACES times, at a fraction of the cost
RACES = 40

# A contender: rlrun imported, ready, then the command line at the start signal (argv: ready, go, rlrun's args)
CONTENDER = """\
import sys, time
from pathlib import Path
from rlrun.cli import main as cli

Path(sys.argv[1]).touch()
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.0005)
sys.argv = ["rlrun", *sys.argv[3:]]
cli.main()
"""

# A racer: the lock module imported, ready, then a claim of the folder at the start signal, held a moment so that
# the other racer's claim falls inside it (argv: ready, go, folder)
RACER = """\
import sys, time
from pathlib import Path
from rlrun.record import lock

Path(sys.argv[1]).touch()
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.0002)
try:
    with lock.claim(Path(sys.argv[3])):
        print("won", flush=True)
        time.sleep(0.3)
except lock.FolderInUse as refused:
    print(f"lost: {refused}", flush=True)
"""

HOLDER = """\
import sys, time
from pathlib import Path
from rlrun.record import lock

lock.hold(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


def contend(
    tmp_path: Path, cwd: Path, *commands: list[str], program: str = CONTENDER
) -> list[tuple[int, subprocess.CompletedProcess[str]]]:
    """Run each rlrun command line (``program``'s arguments after its ready and go flags) in a process of its own,
    all started at one instant; their pids and results."""
    go = tmp_path / f"go-{time.monotonic_ns()}"
    ready = [tmp_path / f"ready-{time.monotonic_ns()}-{i}" for i in range(len(commands))]
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    processes = [
        forked_commands.Popen(
            ["-c", program, str(flag), str(go), *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for flag, args in zip(ready, commands, strict=True)
    ]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready):
        assert time.monotonic() < deadline and all(p.poll() is None for p in processes), "a contender never started"
        time.sleep(0.01)
    go.touch()
    results = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        results.append((process.pid, subprocess.CompletedProcess(process.args, process.returncode, out, err)))
    return results


def test_of_two_claims_started_at_one_instant_one_holds_and_the_other_is_refused_naming_it(tmp_path: Path) -> None:
    for attempt in range(RACES):
        folder = tmp_path / f"folder-{attempt}"  # made by the claims themselves: the race covers its creation too
        results = contend(tmp_path, tmp_path, [str(folder)], [str(folder)], program=RACER)
        outs = sorted(result.stdout for _, result in results)
        assert all(result.returncode == 0 for _, result in results), [r.stderr for _, r in results]
        assert outs[0].startswith("lost: ") and outs[1] == "won\n", (attempt, outs)
        (winner,) = [pid for pid, result in results if result.stdout == "won\n"]
        assert f"is in use by pid {winner} on {platform.node()}" in outs[0]
        # made by one of the claims: removed by the winner that made it; left empty where the loser made it
        assert not folder.exists() or not any(folder.iterdir()), (attempt, list(folder.iterdir()))


def test_a_second_process_is_refused_naming_the_holder_until_the_holder_dies(tmp_path: Path) -> None:
    holder = forked_commands.Popen(["-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(lock.FolderInUse, match=f"is in use by pid {holder.pid} on {platform.node()}") as refused:
            lock.acquire(tmp_path)
        assert refused.value.status == 2 and refused.value.fix
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with lock.claim(tmp_path):  # the OS dropped the killed holder's lock; its file is taken over
        assert (tmp_path / lock.LOCK_NAME).read_text() == f"{os.getpid()} {platform.node()}\n"
    assert not (tmp_path / lock.LOCK_NAME).exists()  # a folder at rest holds no lock file


def test_claims_within_one_process_share_the_lock(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    with lock.claim(folder) as outer:
        with lock.claim(folder) as inner:
            assert inner is outer and outer.claims == 2
        assert (folder / lock.LOCK_NAME).exists()  # still held by the outer claim
    assert not folder.exists()  # made by the claim and left empty: removed


def _crashed_run(run_dir: Path) -> None:
    """A run that stopped (a crash) after its snapshots at 256 and 512 steps."""

    with pytest.MonkeyPatch.context() as patch:
        crash_at(patch, int(STEPS * 0.6))
        with pytest.raises(Crash):
            train(config("env=gridworld", "algo=ppo"), run_dir)


def test_two_resumes_at_once_one_trains_the_other_is_refused(tmp_path: Path) -> None:
    _crashed_run(tmp_path / "crashed")
    for attempt in range(TRIES):
        run_dir = shutil.copytree(tmp_path / "crashed", tmp_path / f"run-{attempt}")  # the same crash each time
        command = [f"resume={run_dir}", "progress_bar=false"]
        results = contend(tmp_path, tmp_path, command, command)
        codes = sorted(result.returncode for _, result in results)
        assert codes == [0, 2], [(r.returncode, r.stderr) for _, r in results]
        ((winner, _),) = [(pid, r) for pid, r in results if r.returncode == 0]
        (lost,) = [r for _, r in results if r.returncode == 2]
        assert f"is in use by pid {winner} on {platform.node()}" in lost.stderr, lost.stderr
        assert "Traceback" not in lost.stderr
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == "completed" and record["timesteps"] == STEPS and record["pid"] == winner
        assert len(record["resumes"]) == 1  # the loser never reopened the record
        with open(run_dir / "eval.csv") as f:
            steps = [int(row["timesteps"]) for row in csv.DictReader(f)]
        assert len(steps) >= 7 and all(a < b for a, b in zip(steps, steps[1:], strict=False)), steps
        assert not (run_dir / lock.LOCK_NAME).exists()


# Two jobs on CartPole, a few seconds in all (the basic launcher runs them in the sweep's own process)
TWIN = [
    "-m",
    "env=gym",
    "algo=ppo",
    "env.id=CartPole-v1",
    "total_timesteps=128",
    "algo.n_steps=64",
    "algo.batch_size=32",
    "algo.policy_kwargs={net_arch:[8]}",
    "eval.every=64",
    "eval.episodes=1",
    "eval.final_episodes=1",
    "eval.n_envs=1",
    "snapshot.every=64",
    "seed=0,1",
    "sweep=twin",
]


def test_two_identical_sweeps_at_once_one_runs_every_job_the_other_is_refused(tmp_path: Path) -> None:
    for attempt in range(TRIES):
        cwd = tmp_path / f"try-{attempt}"
        cwd.mkdir()
        results = contend(tmp_path, cwd, TWIN, TWIN)
        codes = sorted(result.returncode for _, result in results)
        assert codes == [0, 2], [(r.returncode, r.stdout, r.stderr) for _, r in results]
        ((winner, won),) = [(pid, r) for pid, r in results if r.returncode == 0]
        (lost,) = [r for _, r in results if r.returncode == 2]
        assert f"is in use by pid {winner} on {platform.node()}" in lost.stderr, lost.stderr
        assert "Traceback" not in lost.stderr and "sweep=NAME" in lost.stderr
        assert "[2/2]" in won.stdout and "sweep record" not in lost.stdout  # refused before it planned a job
        sweep_dir = cwd / "outputs" / "sweeps" / "twin"
        data = json.loads((sweep_dir / "sweep.json").read_text())
        assert [job["status"] for job in data["jobs"]] == ["completed", "completed"]
        for job in data["jobs"]:  # each job run once, by the winner
            record = json.loads((sweep_dir / job["folder"] / "run.json").read_text())
            assert record["status"] == "completed" and record["pid"] == winner and "resumes" not in record
            assert not (sweep_dir / job["folder"] / "attempts").exists()
        assert not (sweep_dir / lock.LOCK_NAME).exists()
