"""``rlrun -m``: sweeps that isolate failures, continue with the same command and never depend on the launcher.

Every sweep runs as a user runs it, ``python -m rlrun -m ...`` in a subprocess, with tiny budgets.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests import forked_commands
from tests.rlrun.helpers import assert_same_results
from tests.rlrun.helpers import read_run_json as record
from tests.rlrun.sweep_helpers import GRIDWORLD_2048_STEPS, sweep

# Test envs of the user's own, imported by the workers from PYTHONPATH: Coin learns, Crash raises mid-training.
SWEEP_ENVS = """\
import gymnasium as gym
import numpy as np


class Coin(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.ones(1, np.float32), float(action), self.t >= 5, False, {}


class Crash(Coin):
    steps = 0

    def step(self, action):
        Crash.steps += 1
        if Crash.steps > 100:
            raise RuntimeError("the simulator crashed")
        return super().step(action)


gym.register("sweep/Coin-v0", entry_point=Coin)
gym.register("sweep/Crash-v0", entry_point=Crash)
"""

TINY_GYM = [
    "env=gym",
    "algo=ppo",
    "total_timesteps=256",
    "algo.n_steps=64",
    "algo.batch_size=32",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=128",
    "eval.episodes=2",
    "eval.final_episodes=2",
    "eval.n_envs=1",
    "snapshot.every=128",
]


def files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` (``.hydra`` included) with its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["seed=0", "progress_bar=true,false"], "two jobs of this sweep map to one folder, gridworld-ppo/seed-0"),
        (["algo.gamma=1.5", "seed=0,1"], "every job of this sweep fails its checks:\nalgo.gamma=1.5 is out of range"),
    ],
    ids=["colliding-folders", "mistake-common-to-all-jobs"],
)
def test_a_mistake_found_before_any_job_starts_is_exit_status_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = sweep([*args, "sweep=never"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "fix:" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "outputs").exists()


def test_joblib_sweep_isolates_failures_and_the_same_command_continues(tmp_path: Path) -> None:
    (tmp_path / "sweepenvs.py").write_text(SWEEP_ENVS)
    ids = "env.id=sweepenvs:sweep/Coin-v0,CartPole-v1,sweepenvs:sweep/Crash-v0,NoSuch-v0"
    first = sweep([*TINY_GYM, ids, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"], tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    (sweep_dir,) = (tmp_path / "outputs" / "sweeps").iterdir()  # unnamed: one folder for all workers
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert data["launcher"] == "joblib" and data["sweep"] == sweep_dir.name
    assert {k: data["counts"][k] for k in ("planned", "completed", "failed", "skipped")} == {
        "planned": 4,
        "completed": 2,
        "failed": 2,
        "skipped": 0,
    }
    # env=gym: each job's first folder level is named after its id (module prefix dropped)
    (crash,) = [job for job in data["jobs"] if job["folder"].startswith("sweep-crash-v0-ppo/")]
    (mistake,) = [job for job in data["jobs"] if job["folder"].startswith("nosuch-v0-ppo/")]
    assert crash["status"] == "failed" and "the simulator crashed" in crash["error"]
    assert mistake["status"] == "failed" and "NoSuch" in mistake["error"]
    for job in (crash, mistake):  # each failure keeps its folder, its log and a run.json saying so
        assert record(sweep_dir / job["folder"])["status"] == "failed"
        assert (sweep_dir / job["log"]).is_file()
    assert "[4/4]" in first.stdout and "2 completed, 2 failed" in first.stdout
    done = [sweep_dir / job["folder"] for job in data["jobs"] if job["status"] == "completed"]
    before = {run_dir: files(run_dir) for run_dir in done}

    # the same sweep again (named now, so it finds the same folder): skip, rerun, refuse nothing
    again = sweep(
        [*TINY_GYM, ids, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"sweep={sweep_dir.name}"], tmp_path
    )
    assert again.returncode == 1, again.stdout + again.stderr
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert data["counts"]["skipped"] == 2 and data["counts"]["failed"] == 2 and data["counts"]["refused"] == 0
    assert {run_dir: files(run_dir) for run_dir in done} == before  # untouched, .hydra included
    for job in (crash, mistake):
        first_attempt = sweep_dir / job["folder"] / "attempts" / "1"
        assert record(first_attempt)["status"] == "failed" and (first_attempt / "rlrun.log").is_file()
        assert record(sweep_dir / job["folder"])["status"] == "failed"


def _stop_when_snapshotted(process: subprocess.Popen[str], job_glob: str, sweep_dir: Path) -> Path:
    """SIGTERM the worker running the job once it has written its first snapshot."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        for run_dir in sweep_dir.glob(job_glob):
            if list(run_dir.glob("snapshots/step-*/manifest.json")) and (run_dir / "run.json").exists():
                os.kill(record(run_dir)["pid"], signal.SIGTERM)
                return run_dir
        time.sleep(0.05)
    raise AssertionError("the job never wrote a snapshot")


def test_a_worker_stopped_by_sigterm_continues_bit_identical_and_launchers_agree(tmp_path: Path) -> None:
    reference = sweep([*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=basic"], tmp_path)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    args = [*GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=joblib", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    process = forked_commands.Popen(
        ["-m", "rlrun", "-m", *args],
        cwd=tmp_path,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    stopped = _stop_when_snapshotted(process, "gridworld-ppo/*/seed-1", tmp_path / "outputs" / "sweeps" / "joblib")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 1, output
    assert record(stopped)["status"] == "interrupted"
    data = json.loads((tmp_path / "outputs" / "sweeps" / "joblib" / "sweep.json").read_text())
    assert [job["status"] for job in data["jobs"]] == ["completed", "interrupted"]

    again = sweep(args, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert record(stopped)["status"] == "completed" and record(stopped)["resumes"]
    for seed in (0, 1):
        (basic,) = (tmp_path / "outputs" / "sweeps" / "basic").glob(f"gridworld-ppo/*/seed-{seed}")
        (joblib,) = (tmp_path / "outputs" / "sweeps" / "joblib").glob(f"gridworld-ppo/*/seed-{seed}")
        assert_same_results(basic, joblib)


def test_joblib_jobs_start_their_own_subprocess_env_copies(tmp_path: Path) -> None:
    """Workers come from a fork server; a job's SubprocVecEnv starts its own processes from there."""
    args = [*GRIDWORLD_2048_STEPS, "total_timesteps=512", "env.vec_env=subproc", "env.n_envs=2", "algo.batch_size=32"]
    args += ["seed=0,1", "sweep=subproc"]
    result = sweep([*args, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads((tmp_path / "outputs" / "sweeps" / "subproc" / "sweep.json").read_text())
    assert [job["status"] for job in data["jobs"]] == ["completed", "completed"]


def test_ctrl_c_stops_the_whole_sweep_and_leaves_it_resumable(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) on a sweep run by the basic launcher."""
    process = forked_commands.Popen(
        ["-m", "rlrun", "-m", *GRIDWORLD_2048_STEPS, "seed=0,1", "sweep=stopped"],
        cwd=tmp_path,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    sweep_dir = tmp_path / "outputs" / "sweeps" / "stopped"
    deadline = time.monotonic() + 240
    while not list(sweep_dir.glob("gridworld-ppo/*/seed-0/snapshots/step-*/manifest.json")):
        assert process.poll() is None and time.monotonic() < deadline, "the first job never wrote a snapshot"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=240)
    assert process.returncode == 130, output
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert [job["status"] for job in data["jobs"]] == ["interrupted", "not_started"]
    (first,) = sweep_dir.glob("gridworld-ppo/*/seed-0")
    assert record(first)["status"] == "interrupted"
    assert not list(sweep_dir.glob("gridworld-ppo/*/seed-1"))  # never started: no folder left behind
