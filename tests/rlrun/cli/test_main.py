"""The command line: ``python -m rlrun`` and the ``rlrun`` console script, as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import forked_commands
from tests.rlrun.helpers import TINY_BUDGET


def run(args: list[str], cwd: Path, prog: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    if prog:  # an installed console script: a fresh process
        return subprocess.run([*prog, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return forked_commands.run(
        ["-m", "rlrun", *args],
        cwd=cwd,
        env=env,
        timeout=300,
    )


def run_dirs(cwd: Path) -> list[Path]:
    return sorted(p.parent for p in (cwd / "outputs" / "runs").glob("*/*/run.json"))


def test_python_m_rlrun_trains_and_reports(tmp_path: Path) -> None:
    result = run(["env=gridworld", "algo=ppo", *TINY_BUDGET], tmp_path)
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(tmp_path)
    assert run_dir.parent.name == "gridworld-ppo"
    assert "=" not in run_dir.name and "," not in run_dir.name
    assert f"run folder: {run_dir.relative_to(tmp_path)}" in result.stdout
    assert "mean return" in result.stdout
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "completed" and record["preset"] == "gridworld_ppo"
    assert record["command"].startswith("python -m rlrun env=gridworld algo=ppo")
    assert "seed=0" not in record["overrides"] and "env=gridworld" in record["overrides"]
    assert (run_dir / ".hydra" / "config.yaml").is_file() and (run_dir / "config.yaml").is_file()


def test_console_script_from_another_directory(tmp_path: Path) -> None:
    script = shutil.which("rlrun", path=str(Path(sys.executable).parent))
    assert script is not None, "the rlrun console script is not installed"
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    result = run(["env=cartpole", "algo=ppo", "seed=1", *TINY_BUDGET], elsewhere, prog=[script])
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(elsewhere)
    assert json.loads((run_dir / "run.json").read_text())["command"].startswith("rlrun env=cartpole")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["env=gridworld", "algo=sac"], "SAC cannot train on rlrun/GridWorld-v0"),
        (["env=pointenv", "algo=dqn"], "DQN cannot train on rlrun/PointEnv-v0"),
        (["env=gridworld", "algo=td3"], "TD3 cannot train on rlrun/GridWorld-v0"),
        (["env=pendulum", "algo=her"], "HER needs a goal env"),
    ],
    ids=["sac-discrete", "dqn-continuous", "td3-discrete", "her-no-goal"],
)
def test_incompatible_pair_is_one_clear_message(tmp_path: Path, overrides: list[str], message: str) -> None:
    result = run(overrides, tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "fix:" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not (tmp_path / "outputs" / "runs").exists() or not any((tmp_path / "outputs" / "runs").rglob("*.json"))


def test_hydra_tools_work(tmp_path: Path) -> None:
    result = run(["env=pointgoal", "algo=her", "--cfg", "job"], tmp_path)
    assert result.returncode == 0 and "HerReplayBuffer" in result.stdout
    assert run(["--info", "defaults"], tmp_path).returncode == 0


def test_misspelt_key_gets_the_closest_name(tmp_path: Path) -> None:
    result = run(["totl_timesteps=5"], tmp_path)
    assert result.returncode == 2
    assert "totl_timesteps is not a key of rlrun's config (did you mean total_timesteps?)" in result.stderr
    assert "fix: total_timesteps=5" in result.stderr and "Traceback" not in result.stderr


HER_TD3 = """\
# HER with TD3 as the base algorithm: a config file of the user's, found through Hydra's search path
defaults:
  - td3
  - _self_

replay_buffer_class:
  _target_: hydra.utils.get_class
  path: stable_baselines3.HerReplayBuffer
replay_buffer_kwargs:
  n_sampled_goal: 4
  goal_selection_strategy: future
learning_starts: 100
"""

MY_ENV = """\
import gymnasium as gym
import numpy as np


class Coin(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.ones(1, np.float32), float(action), True, False, {}


gym.register("mypkg/Coin-v0", entry_point=Coin, max_episode_steps=5)
"""


@pytest.mark.parametrize("how", ["--config-dir", "hydra.searchpath"])
def test_users_own_config_files(tmp_path: Path, how: str) -> None:
    (tmp_path / "myconf" / "algo").mkdir(parents=True)
    (tmp_path / "myconf" / "algo" / "her_td3.yaml").write_text(HER_TD3)
    where = (
        ["--config-dir", "myconf"] if how == "--config-dir" else [f"hydra.searchpath=[file://{tmp_path / 'myconf'}]"]
    )
    tiny = [
        "total_timesteps=200",
        "eval.every=100",
        "eval.episodes=1",
        "eval.final_episodes=1",
        "algo.batch_size=16",
        "algo.policy_kwargs={net_arch:[16]}",
    ]
    result = run([*where, "env=pointgoal", "algo=her_td3", *tiny], tmp_path)
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(tmp_path)
    assert run_dir.parent.name == "pointgoal-her_td3"
    assert "stable_baselines3.TD3" in (run_dir / "config.yaml").read_text()


def test_users_own_env_from_their_own_module(tmp_path: Path) -> None:
    (tmp_path / "mypkg.py").write_text(MY_ENV)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = forked_commands.run(
        [
            "-m",
            "rlrun",
            "env=gym",
            "env.id=mypkg:mypkg/Coin-v0",
            "algo=dqn",
            "total_timesteps=300",
            "eval.every=150",
            "eval.episodes=2",
            "eval.final_episodes=2",
            "algo.learning_starts=50",
        ],
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(tmp_path)
    assert run_dir.parent.name == "mypkg-coin-v0-dqn"  # env=gym: named after the id, module prefix dropped
    record = json.loads((run_dir / "run.json").read_text())
    assert (record["env"], record["env_id"]) == ("mypkg-coin-v0", "mypkg:mypkg/Coin-v0")


@pytest.mark.parametrize(
    "overrides",
    [
        ["env=gym", "env.id=NoSuch-v0"],
        ["env=gridworld", "algo=sac"],
        ["env=gridworld", "algo=ppo", "algo.n_steps=1"],
    ],
    ids=["unknown-env-id", "incompatible-pair", "bad-rollout"],
)
def test_a_users_folder_survives_every_error_path(tmp_path: Path, overrides: list[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.log").write_text("my notes\n")
    (folder / "older.log").write_text("older\n")
    result = run([f"hydra.run.dir={folder}", *overrides], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.log", "older.log"]  # Hydra's own files removed
    assert (folder / "notes.log").read_text() == "my notes\n"


def test_a_new_folder_is_removed_when_the_run_never_started(tmp_path: Path) -> None:
    result = run(["hydra.run.dir=fresh", "env=gym", "env.id=NoSuch-v0"], tmp_path)
    assert result.returncode == 2
    assert not (tmp_path / "fresh").exists()
    kept = tmp_path / "outputs" / "runs" / "nosuch-v0-ppo"  # a folder of the user's, empty, stays
    kept.mkdir(parents=True)
    for _ in range(2):  # the second time, outputs/runs/gridworld-sac is made by Hydra and removed again
        result = run(["env=gym", "env.id=NoSuch-v0"], tmp_path)
        assert result.returncode == 2
        result = run(["env=gridworld", "algo=sac"], tmp_path)
        assert result.returncode == 2
        assert [p.name for p in (tmp_path / "outputs" / "runs").iterdir()] == ["nosuch-v0-ppo"]
        assert not any(kept.iterdir())


def test_resumed_run_reports_its_own_identity(tmp_path: Path) -> None:
    from rlrun.record import signatures

    tiny_sac = ["total_timesteps=300", "eval.every=150", "eval.episodes=1", "eval.final_episodes=2"]
    tiny_sac += ["snapshot.every=150", "algo.learning_starts=100", "algo.batch_size=16", "algo.buffer_size=1000"]
    result = run(["env=pointenv", "algo=sac", "seed=3", *tiny_sac, "algo.policy_kwargs={net_arch:[16]}"], tmp_path)
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(tmp_path)
    record = json.loads((run_dir / "run.json").read_text())
    record.update(status="interrupted", final=None)  # as a run stopped after its snapshot at step 150 is
    (run_dir / "run.json").write_text(json.dumps(record))
    signatures.sign_record(run_dir)  # as rlrun signs a status it writes
    (run_dir / "model.zip").unlink()
    resumed = run([f"resume={run_dir.relative_to(tmp_path)}"], tmp_path)  # the defaults are gridworld + ppo
    assert resumed.returncode == 0, resumed.stderr
    assert "pointenv + sac, seed 3: mean return" in resumed.stdout
    assert "gridworld" not in resumed.stdout + resumed.stderr and "ppo" not in resumed.stdout + resumed.stderr


@pytest.mark.parametrize("extra", ["~tuned", "algo.gamma=0.5", "+algo.foo=1", "eval.every=5"])
def test_resume_refuses_overrides_that_change_the_run(tmp_path: Path, extra: str) -> None:
    run_dir = tmp_path / "some-run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"status": "interrupted"}))
    result = run([f"resume={run_dir}", extra], tmp_path)
    assert result.returncode == 2
    assert f"refusing overrides that change it: {extra}" in result.stderr
    assert sorted(p.name for p in run_dir.iterdir()) == ["run.json"]
