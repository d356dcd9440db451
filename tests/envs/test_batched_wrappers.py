"""Batched wrappers (envs/batched/wrappers.py) transform all copies as the Gymnasium wrappers transform one."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import FlattenObservation, FrameStackObservation
from rlrun.envs.batched import UnsupportedWrapper, make_vec_env, wrap
from rlrun.envs.wrappers import RelativePosition, ScaleReward
from stable_baselines3.common.vec_env import DummyVecEnv

from tests.envs.helpers import assert_same_obs, assert_same_step


@pytest.mark.parametrize(
    ("env_id", "wrapper"),
    [
        ("rlrun/GridWorld-v0", RelativePosition),
        ("rlrun/GridWorld-v0", FlattenObservation),
        ("rlrun/PointGoal-v0", FlattenObservation),
        ("rlrun/PointEnv-v0", functools.partial(ScaleReward, scale=0.5)),
    ],
    ids=["relative_position", "flatten-dict", "flatten-goal", "scale_reward"],
)
def test_wrappers_match_the_gym_wrappers(env_id: str, wrapper: Any) -> None:
    n = 4
    dummy = DummyVecEnv([lambda: wrapper(gym.make(env_id)) for _ in range(n)])
    dummy.seed(1)
    native = wrap(make_vec_env(env_id, n, seed=1), wrapper)
    assert native.observation_space == dummy.observation_space
    obs_g = dummy.reset()
    assert_same_obs(obs_g, native.reset())
    rng = np.random.default_rng(0)
    for _ in range(120):
        actions = rng.integers(4, size=n) if env_id == "rlrun/GridWorld-v0" else rng.uniform(-1, 1, (n, 2))
        assert_same_step(dummy.step(actions), native.step(actions))


def test_wrappers_without_a_batched_version_are_named() -> None:
    native = make_vec_env("rlrun/PointEnv-v0", 2)
    with pytest.raises(UnsupportedWrapper, match="'frame_stack'.*env.vectorization=gym"):
        wrap(native, functools.partial(FrameStackObservation, stack_size=4), name="frame_stack")
    with pytest.raises(ValueError, match="RelativePosition needs a Dict"):
        wrap(native, RelativePosition)
