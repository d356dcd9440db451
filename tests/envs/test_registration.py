"""Registration of the envs (``envs/__init__.py``): ids, time limits, module form, re-import, dependencies."""

import importlib
import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.wrappers import TimeLimit

from rlrun import envs

EXPECTED = {
    "rlrun/PointEnv-v0": (envs.PointEnv, 100),
    "rlrun/GridWorld-v0": (envs.GridWorldEnv, 50),
    "rlrun/PointGoal-v0": (envs.PointGoalEnv, 50),
    "rlrun/RoomToy-v0": (envs.RoomToyEnv, 100),
}


def test_env_ids_are_the_four_envs() -> None:
    assert set(envs.ENV_IDS) == set(EXPECTED)


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_registered_with_time_limit(env_id: str) -> None:
    env_class, max_episode_steps = EXPECTED[env_id]
    assert gym.spec(env_id).max_episode_steps == max_episode_steps
    env = gym.make(env_id)
    assert isinstance(env, TimeLimit)
    assert type(env.unwrapped) is env_class
    env.close()


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_time_limit_truncates_and_env_does_not(env_id: str) -> None:
    env = gym.make(env_id)
    max_steps = gym.spec(env_id).max_episode_steps
    env.reset(seed=0)
    env.action_space.seed(0)
    steps = 0
    for _ in range(10 * max_steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        assert steps <= max_steps
        if truncated:
            assert steps == max_steps
        if terminated or truncated:
            env.reset()
            steps = 0
    raw = env.unwrapped
    raw.reset(seed=1)
    for _ in range(3 * max_steps):
        _, _, terminated, truncated, _ = raw.step(raw.action_space.sample())
        assert truncated is False
        if terminated:
            raw.reset()
    env.close()


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_module_form_of_make(env_id: str) -> None:
    env = gym.make(f"rlrun.envs:{env_id}")
    assert env.spec is not None and env.spec.id == env_id
    env.reset(seed=0)
    env.close()


def test_reimport_registers_nothing_twice() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(envs)
        gym.make("rlrun.envs:rlrun/GridWorld-v0").close()


def test_only_gridworld_declares_a_reward_threshold() -> None:
    thresholds = {env_id: gym.spec(env_id).reward_threshold for env_id in envs.ENV_IDS}
    assert thresholds == {
        "rlrun/PointEnv-v0": None,
        "rlrun/GridWorld-v0": 0.9,
        "rlrun/PointGoal-v0": None,
        "rlrun/RoomToy-v0": None,
    }


def test_import_pulls_in_no_training_stack() -> None:
    code = (
        "import sys, gymnasium as gym, envs\n"
        "for env_id in envs.ENV_IDS:\n"
        "    gym.make(env_id, render_mode='rgb_array').reset(seed=0)[0]\n"
        "heavy = {'torch', 'stable_baselines3', 'hydra', 'pygame'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
