"""PointEnv (``envs/point.py``): arguments, motion, clipping, reward and termination."""

import math
import re
from typing import Any

import numpy as np
import pytest
from rlrun.envs.point import PointEnv


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("goal_tolerance", 0.0),
        ("goal_tolerance", -0.1),
        ("goal_tolerance", float("nan")),
        ("goal_tolerance", "0.1"),
        ("start_range", 0.05),
        ("start_range", 3.0),
        ("arena", 0),
        ("arena", float("inf")),
        ("max_speed", 0.0),
        ("max_speed", True),
    ],
)
def test_bad_arguments_name_the_argument(name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must .*got {re.escape(repr(value))}"):
        PointEnv(**{name: value})


def test_spaces() -> None:
    env = PointEnv(arena=3.0)
    assert env.action_space.low.tolist() == [-1, -1] and env.action_space.high.tolist() == [1, 1]
    assert env.action_space.dtype == np.float32
    assert env.observation_space.low.tolist() == [-3, -3] and env.observation_space.high.tolist() == [3, 3]
    assert env.observation_space.dtype == np.float32


def test_start_is_in_the_start_square_and_outside_the_goal() -> None:
    env = PointEnv(goal_tolerance=0.5, start_range=0.6)
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        assert np.all(np.abs(obs) <= 0.6)
        assert math.hypot(*obs.tolist()) > 0.5 and not info["is_success"]


def test_action_moves_by_max_speed_times_action_and_is_clipped() -> None:
    env = PointEnv(max_speed=0.2)
    start, _ = env.reset(seed=0)
    obs, *_ = env.step(np.array([0.5, -1.0], dtype=np.float32))
    np.testing.assert_allclose(obs, start + [0.1, -0.2], atol=1e-6)
    obs2, *_ = env.step(np.array([7.0, -3.0], dtype=np.float32))  # clipped to [1, -1]
    np.testing.assert_allclose(obs2, obs + [0.2, -0.2], atol=1e-6)
    obs3, *_ = env.step([0.0, 0.5])  # any array-like of shape (2,)
    np.testing.assert_allclose(obs3, obs2 + [0.0, 0.1], atol=1e-6)


@pytest.mark.parametrize(
    "action",
    [np.zeros(3, dtype=np.float32), np.zeros((1, 2)), 0.5, [np.nan, 0.0], [0.0, np.inf], "up"],
    ids=["shape3", "shape1x2", "scalar", "nan", "inf", "string"],
)
def test_bad_actions_raise(action: Any) -> None:
    env = PointEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must"):
        env.step(action)


def test_positions_stay_in_the_arena() -> None:
    env = PointEnv(arena=1.0, max_speed=0.5)
    env.reset(seed=0)
    for _ in range(10):
        obs, *_ = env.step(np.array([1.0, -1.0], dtype=np.float32))
    assert obs.tolist() == [1.0, -1.0]
    assert obs in env.observation_space


def test_reward_is_minus_distance_and_goal_terminates() -> None:
    env = PointEnv()
    obs, _ = env.reset(seed=3)
    for _ in range(100):
        action = np.clip(-np.asarray(obs) / env.max_speed, -1, 1).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward == pytest.approx(-math.hypot(*obs.tolist()), abs=1e-6)
        assert reward == -info["distance"]
        assert not truncated
        if terminated:
            break
    assert terminated and info["is_success"] and info["distance"] <= env.goal_tolerance


def test_corner_to_goal_takes_ten_steps() -> None:
    env = PointEnv()
    env.reset(seed=0)
    env._x, env._y = 1.0, 1.0  # the far corner of the default start square
    steps = 0
    terminated = False
    while not terminated and steps < 100:
        *_, terminated, _, _ = env.step(np.array([-1.0, -1.0], dtype=np.float32))
        steps += 1
    assert terminated and steps == 10
