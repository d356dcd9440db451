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
from rlrun.envs.wrappers import ClipAction, FlattenObservation, RelativePosition, RescaleAction, ScaleReward


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


# rlrun's picklable FlattenObservation, ClipAction and RescaleAction against Gymnasium's own
PICKLABLE = [
    ("rlrun/GridWorld-v0", FlattenObservation, gym.wrappers.FlattenObservation, {}),
    ("Pendulum-v1", RescaleAction, gym.wrappers.RescaleAction, {"min_action": -1.0, "max_action": 1.0}),
    ("Pendulum-v1", ClipAction, gym.wrappers.ClipAction, {}),
]


@pytest.mark.parametrize(("env_id", "ours", "theirs", "kwargs"), PICKLABLE, ids=["flatten", "rescale", "clip"])
def test_rlruns_wrappers_pickle_mid_episode_and_go_on_as_gymnasiums(
    env_id: str, ours: type[gym.Wrapper], theirs: type[gym.Wrapper], kwargs: dict[str, Any]
) -> None:
    env, reference = ours(gym.make(env_id), **kwargs), theirs(gym.make(env_id), **kwargs)
    _ = env.spec, reference.spec  # read and cached, as training does before any snapshot
    with pytest.raises((AttributeError, pickle.PicklingError)):
        pickle.dumps(reference)  # Gymnasium 1.4's holds a lambda or a local function
    env.action_space.seed(0)
    wide = 3 if isinstance(env.action_space, spaces.Box) else 1  # actions outside the bounds, for ClipAction
    actions = [env.action_space.sample() * wide for _ in range(30)]
    assert np.array_equal(env.reset(seed=0)[0], reference.reset(seed=0)[0])
    for action in actions[:10]:
        ours_step, theirs_step = env.step(action), reference.step(action)
        assert np.array_equal(ours_step[0], theirs_step[0]) and ours_step[1] == theirs_step[1]
    copy = pickle.loads(pickle.dumps(env))
    for action in actions[10:]:
        assert np.array_equal(copy.step(action)[0], env.step(action)[0])


def test_clip_action_keeps_the_envs_bounded_action_space() -> None:
    env = ClipAction(gym.make("Pendulum-v1"))
    assert env.action_space == gym.make("Pendulum-v1").action_space  # Gymnasium's says Box(-inf, inf)
    assert np.array_equal(env.action(np.array([5.0], dtype=np.float32)), np.array([2.0], dtype=np.float32))


def test_rescale_action_maps_exactly_as_gymnasiums() -> None:
    box = spaces.Box(np.array([-2.0, 0.0, -np.inf]), np.array([3.0, 1.0, np.inf]), dtype=np.float64)
    base = gym.make("Pendulum-v1")
    base.unwrapped.action_space = box  # only the spaces matter here
    kwargs = {"min_action": np.array([-1.0, 0.0, -np.inf]), "max_action": np.array([1.0, 10.0, np.inf])}
    ours, theirs = RescaleAction(base, **kwargs), gym.wrappers.RescaleAction(base, **kwargs)
    assert ours.action_space == theirs.action_space
    for action in np.random.default_rng(0).uniform(-1, 1, size=(100, 3)):
        assert np.array_equal(ours.action(action), theirs.action(action))
