"""Wrappers (``envs/wrappers.py``): RelativePosition and ScaleReward."""

import pickle
import re
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import rlrun.envs  # noqa: F401  (registers the ids)
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from rlrun.envs.wrappers import RelativePosition, ScaleReward


def grid_obs(agent: list[int], target: list[int]) -> dict[str, np.ndarray]:
    return {"agent": np.array(agent, dtype=np.int64), "target": np.array(target, dtype=np.int64)}


@pytest.mark.parametrize(
    ("agent", "target", "expected"),
    [
        ([0, 0], [4, 4], [4, 4]),
        ([4, 4], [0, 0], [-4, -4]),
        ([1, 3], [2, 1], [1, -2]),
        ([2, 2], [2, 2], [0, 0]),
    ],
)
def test_relative_position_known_observations(agent: list[int], target: list[int], expected: list[int]) -> None:
    env = RelativePosition(gym.make("rlrun/GridWorld-v0"))
    result = env.observation(grid_obs(agent, target))
    assert result.dtype == np.int64 and result.tolist() == expected
    assert result in env.observation_space


@pytest.mark.parametrize("size", [2, 5, 9])
def test_relative_position_space_from_the_input_bounds(size: int) -> None:
    env = RelativePosition(gym.make("rlrun/GridWorld-v0", size=size))
    space = env.observation_space
    assert isinstance(space, spaces.Box) and space.dtype == np.int64 and space.shape == (2,)
    assert space.low.tolist() == [-(size - 1)] * 2 and space.high.tolist() == [size - 1] * 2


def test_relative_position_on_a_live_env() -> None:
    env = RelativePosition(gym.make("rlrun/GridWorld-v0"))
    obs, _ = env.reset(seed=0)
    raw = env.unwrapped._get_obs()
    assert obs.tolist() == (raw["target"] - raw["agent"]).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert env.spec is not None and env.spec.additional_wrappers[-1].name == "RelativePosition"
    pickle.loads(pickle.dumps(env)).step(0)


def test_relative_position_unsigned_cells_become_signed() -> None:
    env = gym.make("rlrun/GridWorld-v0")
    cell = spaces.Box(0, 9, (2,), np.uint8)
    env.observation_space = spaces.Dict({"agent": cell, "target": cell})
    wrapped = RelativePosition(env)
    assert wrapped.observation_space.dtype == np.int16
    result = wrapped.observation({"agent": np.array([9, 0], np.uint8), "target": np.array([0, 9], np.uint8)})
    assert result.tolist() == [-9, 9]


@pytest.mark.parametrize(
    "env_id_or_space",
    [
        "CartPole-v1",
        "rlrun/PointGoal-v0",
        spaces.Dict({"agent": spaces.Box(0, 1, (2,)), "goal": spaces.Box(0, 1, (2,))}),
        spaces.Dict({"agent": spaces.Discrete(3), "target": spaces.Discrete(3)}),
        spaces.Dict({"agent": spaces.Box(0, 1, (2,)), "target": spaces.Box(0, 1, (3,))}),
    ],
    ids=["cartpole-box", "pointgoal-dict", "no-target", "discrete-keys", "shape-mismatch"],
)
def test_relative_position_rejects_other_observation_spaces(env_id_or_space: Any) -> None:
    if isinstance(env_id_or_space, str):
        env = gym.make(env_id_or_space)
    else:
        env = gym.make("rlrun/GridWorld-v0")
        env.observation_space = env_id_or_space
    expected = (
        "RelativePosition needs a Dict observation space with 'agent' and 'target' keys, two Boxes "
        f"of the same shape (like rlrun/GridWorld-v0), got {env.observation_space}"
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        RelativePosition(env)


@pytest.mark.parametrize("scale", [0.1, -2.0, 3, np.float32(0.5)])
def test_scale_reward_scales_exactly(scale: float) -> None:
    raw, wrapped = gym.make("rlrun/RoomToy-v0"), ScaleReward(gym.make("rlrun/RoomToy-v0"), scale=scale)
    raw.reset(seed=0)
    wrapped.reset(seed=0)
    for action in [0, 1, 2, 3] * 10:
        raw_obs, raw_reward, *raw_rest = raw.step(action)
        obs, reward, *rest = wrapped.step(action)
        assert reward == float(scale) * raw_reward
        assert obs.tolist() == raw_obs.tolist() and rest == raw_rest
    assert wrapped.spec is not None and wrapped.spec.additional_wrappers[-1].kwargs == {"scale": scale}


@pytest.mark.parametrize("scale", [0, 0.0, float("nan"), float("inf"), -float("inf"), "1", None, True])
def test_scale_reward_rejects_bad_scales(scale: Any) -> None:
    with pytest.raises(ValueError, match=rf"^scale must be a finite, non-zero number, got {re.escape(repr(scale))}"):
        ScaleReward(gym.make("rlrun/GridWorld-v0"), scale=scale)
