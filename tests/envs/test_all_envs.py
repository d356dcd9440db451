"""The contract every registered env meets: API checkers, determinism, pickling and rendering."""

import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.utils.env_checker import data_equivalence
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from rlrun import envs

ENV_IDS = pytest.mark.parametrize("env_id", envs.ENV_IDS)


def rollout(env: gym.Env[Any, Any], actions: list[Any]) -> list[tuple[Any, ...]]:
    """Step through ``actions``, resetting (without a seed) when an episode ends; return every transition."""
    transitions = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        transitions.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            transitions.append(env.reset())
    return transitions


def sample_actions(env: gym.Env[Any, Any], n: int, seed: int = 0) -> list[Any]:
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(n)]


@ENV_IDS
def test_gymnasium_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped)  # renders every declared mode, human included (SDL's dummy driver)
    env.close()


@ENV_IDS
def test_sb3_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env.unwrapped)
    env.close()


@ENV_IDS
def test_same_seed_same_trajectory(env_id: str) -> None:
    first, second = gym.make(env_id), gym.make(env_id)
    actions = sample_actions(first, 200)
    first.reset(seed=42)
    second.reset(seed=42)
    runs = rollout(first, actions), rollout(second, actions)
    assert sum(len(t) == 2 for t in runs[0]) >= 1, "200 steps should cross at least one reset"
    assert data_equivalence(runs[0], runs[1], exact=True)


@ENV_IDS
def test_other_seed_other_trajectory(env_id: str) -> None:
    first, second = gym.make(env_id), gym.make(env_id)
    actions = sample_actions(first, 50)
    first_obs, second_obs = first.reset(seed=1)[0], second.reset(seed=2)[0]
    assert not data_equivalence((first_obs, rollout(first, actions)), (second_obs, rollout(second, actions)))


@ENV_IDS
def test_observations_match_the_space_exactly(env_id: str) -> None:
    env = gym.make(env_id)
    space = env.observation_space
    observations = [env.reset(seed=3)[0]]
    observations += [t[0] for t in rollout(env, sample_actions(env, 300))]
    for obs in observations:
        assert obs in space
        if isinstance(space, gym.spaces.Dict):
            assert list(obs) == list(space.spaces)
            assert all(obs[key].dtype == sub.dtype for key, sub in space.spaces.items())
        else:
            assert obs.dtype == space.dtype


@ENV_IDS
@pytest.mark.parametrize("steps_before", [0, 1, 17])
def test_pickled_copy_continues_like_the_original(env_id: str, steps_before: int) -> None:
    env = gym.make(env_id)
    env.reset(seed=7)
    rollout(env, sample_actions(env, steps_before, seed=1))
    copy = pickle.loads(pickle.dumps(env))
    actions = sample_actions(env, 150, seed=2)
    # Both continue mid-episode and through resets without a seed, so the RNG state must have been copied too.
    assert data_equivalence(rollout(env, actions), rollout(copy, actions), exact=True)


@ENV_IDS
def test_info_reports_success(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    assert info["is_success"] is False
    for transition in rollout(env, sample_actions(env, 100)):
        info = transition[-1]
        assert isinstance(info["is_success"], bool)
        if len(transition) == 5:
            assert info["is_success"] == transition[2]  # success is what terminates an episode


@ENV_IDS
def test_rgb_array_rendering(env_id: str) -> None:
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frames = [env.render()]
    env.step(env.action_space.sample())
    frames.append(env.render())
    for frame in frames:
        assert isinstance(frame, np.ndarray)
        assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
        assert frame.shape[0] >= 64 and frame.shape[1] >= 64
        assert frame.shape[0] % 16 == frame.shape[1] % 16 == 0  # no resizing by video encoders
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 3  # background, agent and goal at least
    env.close()


@ENV_IDS
def test_ansi_rendering(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "A" in text
    env.step(env.action_space.sample())
    assert isinstance(env.render(), str)
    env.close()


@ENV_IDS
def test_human_rendering_opens_and_closes_a_window(env_id: str) -> None:
    env = gym.make(env_id, render_mode="human")
    env.reset(seed=0)  # human mode draws on reset and step
    env.step(env.action_space.sample())
    assert env.render() is None
    assert env.unwrapped._window._screen is not None
    copy = pickle.loads(pickle.dumps(env))  # the window is not pickled; the copy opens its own
    assert copy.unwrapped._window._screen is None
    env.close()
    assert env.unwrapped._window._screen is None
    env.close()  # closing twice is allowed


@ENV_IDS
def test_render_without_mode_warns_and_returns_none(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without a render mode"):
        assert env.render() is None


@ENV_IDS
def test_bad_render_mode_is_rejected(env_id: str) -> None:
    env_class = load_env_creator(gym.spec(env_id).entry_point)
    with pytest.raises(ValueError, match="render_mode.*'rgb'"):
        env_class(render_mode="rgb")
