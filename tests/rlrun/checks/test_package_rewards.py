"""Rewards that are not one number (issue 53): a vector of objectives, as mo-gymnasium's envs return, and an object
that is no number, the env's own bug. Refused before anything is created, by ``rlrun`` and ``rlrun-check`` alike,
in one message naming the reward's shape or type (rlrun/checks/rewards.py); a failure where SB3 or Gymnasium take
in what an env returns names the env, not the algorithm or a library (rlrun/make/gym_make.py)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
from stable_baselines3.common.monitor import Monitor

from rlrun.config.errors import UserError
from rlrun.make import gym_make
from rlrun.run.check_suite import run_checks
from tests import forked_commands
from tests.rlrun.checks import package_envs
from tests.rlrun.helpers import QUICK_BUDGET, compose_check

PACKAGES = f"env.packages=[{package_envs.MODULE}]"
PPO = ["algo=ppo", "algo.n_steps=32", "algo.batch_size=32"]


def test_a_vector_reward_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    args = ["-m", "rlrun", "env=gym", "env.id=pkgtest/VectorReward-v0", PACKAGES, *PPO, *QUICK_BUDGET]
    result = forked_commands.run(args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "pkgtest/VectorReward-v0 returns a reward of shape (2,)" in result.stderr
    assert "LinearReward" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # no run folder, no outputs/


@pytest.mark.parametrize(
    ("env_id", "named", "fix"),
    [
        ("VectorReward-v0", "returns a reward of shape (2,)", "one weight per objective"),
        ("ObjectReward-v0", "returns a reward of type Score", "a bug of the env's own code"),
    ],
    ids=["vector", "object"],
)
def test_rlrun_check_says_a_reward_that_is_not_one_number_once(env_id: str, named: str, fix: str) -> None:
    cfg = compose_check("env=gym", f"env.id=pkgtest/{env_id}", PACKAGES, "algo=ppo", "steps=50")
    with pytest.raises(UserError) as refused:  # rlrun-check's exit 2, one message: not a FAIL per check
        run_checks(cfg, with_algo=True)
    assert named in refused.value.problem and fix in refused.value.fix
    assert "a library the env needs" not in refused.value.fix


def test_a_reward_monitor_cannot_take_is_the_envs_data_not_the_algorithms() -> None:
    env = Monitor(gym.make("pkgtest/ObjectReward-v0", kind="dict"))
    env.reset(seed=0)
    with pytest.raises(TypeError) as raised:
        env.step(0)
    _, fix = gym_make.failure_fix(raised.value, "pkgtest/ObjectReward-v0")
    assert "returned an observation, reward or flag" in fix and "a reward must be one number" in fix
    assert "algo.*" not in fix
