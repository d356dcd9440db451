"""PointGoalEnv (``envs/point_goal.py``): the goal-env contract HER relies on, arguments and dynamics."""

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import rlrun.envs  # noqa: F401  (registers the ids)
from rlrun.envs.point_goal import PointGoalEnv


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("arena", 0.0),
        ("arena", -1),
        ("max_step", 0),
        ("max_step", float("nan")),
        ("distance_threshold", 0.0),
        ("distance_threshold", 1.0),
        ("distance_threshold", "0.1"),
    ],
)
def test_bad_arguments_name_the_argument(name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must .*got {re.escape(repr(value))}"):
        PointGoalEnv(**{name: value})


def test_observation_has_exactly_the_goal_env_keys() -> None:
    env = PointGoalEnv()
    assert set(env.observation_space.spaces) == {"observation", "achieved_goal", "desired_goal"}
    for box in env.observation_space.spaces.values():
        assert isinstance(box, gym.spaces.Box) and box.dtype == np.float32 and box.shape == (2,)
    obs, _ = env.reset(seed=0)
    assert obs["observation"].tolist() == obs["achieved_goal"].tolist()
    assert not np.shares_memory(obs["observation"], obs["achieved_goal"])


def test_compute_reward_single_pair() -> None:
    env = PointGoalEnv(distance_threshold=0.1)
    goal = np.array([0.5, 0.5], dtype=np.float32)
    near = np.array([0.55, 0.45], dtype=np.float32)
    far = np.array([0.7, 0.5], dtype=np.float32)
    assert env.compute_reward(near, goal, {}) == 0.0
    assert env.compute_reward(far, goal, {}) == -1.0
    assert np.shape(env.compute_reward(far, goal, {})) == ()
    assert np.shape(env.compute_reward([0.7, 0.5], [0.5, 0.5], None)) == ()  # lists take the batch path


@pytest.mark.parametrize("batch", [1, 2, 257])
def test_compute_reward_batch_matches_single_calls(batch: int) -> None:
    env = PointGoalEnv()
    rng = np.random.default_rng(batch)
    achieved = rng.uniform(-1, 1, size=(batch, 2)).astype(np.float32)
    # Half the desired goals close to the achieved ones, so both rewards occur, some right at the threshold.
    desired = (achieved + rng.normal(0, 0.08, size=(batch, 2))).astype(np.float32)
    desired[::3] = achieved[::3] + np.float32(0.1) * np.array([1, 0], dtype=np.float32)
    infos = np.array([{"is_success": False}] * batch)
    rewards = env.compute_reward(achieved, desired, infos)
    assert isinstance(rewards, np.ndarray) and rewards.shape == (batch,) and rewards.dtype == np.float32
    singles = [env.compute_reward(a, d, info) for a, d, info in zip(achieved, desired, infos, strict=True)]
    assert rewards.tolist() == [float(r) for r in singles]
    assert set(rewards.tolist()) <= {0.0, -1.0}


def test_compute_reward_keeps_extra_leading_axes() -> None:
    env = PointGoalEnv()
    goals = np.zeros((4, 3, 2), dtype=np.float32)
    assert env.compute_reward(goals, goals + 1, None).shape == (4, 3)


def test_step_reward_equals_compute_reward_on_many_transitions() -> None:
    env = gym.make("rlrun/PointGoal-v0")
    env.reset(seed=0)
    env.action_space.seed(0)
    successes = 0
    for i in range(3000):
        action = env.action_space.sample()
        if i % 2:  # head for the goal half of the time, so that successes happen too
            obs = env.unwrapped._get_obs()
            action = np.clip((obs["desired_goal"] - obs["achieved_goal"]) / 0.1, -1, 1).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward == env.unwrapped.compute_reward(obs["achieved_goal"], obs["desired_goal"], info)
        assert reward in (0.0, -1.0)
        assert terminated == info["is_success"] == (reward == 0.0)
        successes += terminated
        if terminated or truncated:
            obs, info = env.reset()
            assert env.unwrapped.compute_reward(obs["achieved_goal"], obs["desired_goal"], info) == -1.0
    assert successes > 10


def test_new_goal_every_reset() -> None:
    env = PointGoalEnv()
    env.reset(seed=0)
    goals = {tuple(env.reset()[0]["desired_goal"].tolist()) for _ in range(50)}
    assert len(goals) == 50


def test_action_moves_by_max_step_and_is_clipped() -> None:
    env = PointGoalEnv(arena=2.0, max_step=0.2, distance_threshold=0.01)
    obs, _ = env.reset(seed=1)
    env._position = np.zeros(2, dtype=np.float32)
    obs, *_ = env.step(np.array([0.5, -5.0], dtype=np.float32))
    np.testing.assert_allclose(obs["observation"], [0.1, -0.2], atol=1e-6)
    for _ in range(20):
        obs, *_ = env.step(np.array([1.0, 1.0], dtype=np.float32))
    assert obs["observation"].tolist() == [2.0, 2.0]  # clipped to the arena


@pytest.mark.parametrize("action", [np.zeros(3), [np.nan, 0.0], "left"], ids=["shape3", "nan", "string"])
def test_bad_actions_raise(action: Any) -> None:
    env = PointGoalEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must"):
        env.step(action)


def test_works_with_sb3_her_replay_buffer() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv
    from stable_baselines3.her import HerReplayBuffer

    vec_env = DummyVecEnv([lambda: gym.make("rlrun/PointGoal-v0")])
    buffer = HerReplayBuffer(200, vec_env.observation_space, vec_env.action_space, env=vec_env, n_sampled_goal=4)
    obs = vec_env.reset()
    vec_env.action_space.seed(0)
    for _ in range(120):
        action = np.array([vec_env.action_space.sample()])
        next_obs, reward, done, infos = vec_env.step(action)
        buffer.add(obs, next_obs, action, reward, done, infos)
        obs = next_obs
    samples = buffer.sample(64)
    assert samples.rewards.shape == (64, 1)
    assert set(np.unique(samples.rewards.numpy()).tolist()) <= {0.0, -1.0}
