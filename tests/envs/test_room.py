"""RoomToyEnv (``envs/room.py``): arguments, forced start states, noisy moves, reward and termination."""

import math
import re
from typing import Any

import numpy as np
import pytest
from rlrun.envs.room import RoomToyEnv


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("size", 0.0),
        ("size", "5"),
        ("goal", (6.0, 2.5)),
        ("goal", (2.5,)),
        ("goal", (float("nan"), 1.0)),
        ("goal", "middle"),
        ("goal_radius", 0.0),
        ("goal_radius", 4.0),
        ("step_size", -0.1),
        ("noise_std", -0.01),
        ("noise_std", float("inf")),
    ],
)
def test_bad_arguments_name_the_argument(name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must .*got {re.escape(repr(value))}"):
        RoomToyEnv(**{name: value})


def test_spaces() -> None:
    env = RoomToyEnv(size=4.0)
    assert env.observation_space.low.tolist() == [0, 0] and env.observation_space.high.tolist() == [4, 4]
    assert env.observation_space.dtype == np.float32
    assert env.action_space.n == 4


@pytest.mark.parametrize("state", [[1.0, 1.0], (0.0, 5.0), np.array([4.25, 0.3]), [2.5, 1.9]])
def test_forced_state_is_used_exactly(state: Any) -> None:
    env = RoomToyEnv()
    obs, info = env.reset(seed=0, options={"state": state})
    assert obs.tolist() == np.asarray(state, dtype=np.float32).tolist()
    assert info["distance"] == pytest.approx(math.hypot(state[0] - 2.5, state[1] - 2.5))
    assert not info["is_success"]


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ([-0.1, 1.0], "inside the room"),
        ([1.0, 5.01], "inside the room"),
        ([2.5, 2.5], "outside the goal"),
        ([2.9, 2.9], "outside the goal"),
        ([1.0, 1.0, 1.0], "two finite numbers"),
        ([[1.0, 1.0]], "two finite numbers"),
        (1.0, "two finite numbers"),
        ([np.nan, 1.0], "two finite numbers"),
        (["a", "b"], "two finite numbers"),
    ],
    ids=[
        "left-of-room",
        "above-room",
        "goal-centre",
        "inside-goal",
        "three",
        "nested",
        "scalar",
        "nan",
        "str",
    ],
)
def test_invalid_forced_state_is_rejected(state: Any, reason: str) -> None:
    env = RoomToyEnv()
    with pytest.raises(ValueError, match=rf'options\["state"\] must .*{reason}'):
        env.reset(seed=0, options={"state": state})


def test_unknown_reset_option_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['stat'\]"):
        RoomToyEnv().reset(options={"stat": [1.0, 1.0]})


def test_random_start_is_never_inside_the_goal() -> None:
    env = RoomToyEnv(goal_radius=2.0)
    env.reset(seed=0)
    for _ in range(500):
        obs, info = env.reset()
        assert info["distance"] >= 2.0 and not info["is_success"]
        assert obs in env.observation_space


@pytest.mark.parametrize(
    ("action", "delta"),
    [(0, (0.0, 0.1)), (1, (0.0, -0.1)), (2, (-0.1, 0.0)), (3, (0.1, 0.0))],
    ids=["north", "south", "west", "east"],
)
def test_noise_free_moves(action: int, delta: tuple[float, float]) -> None:
    env = RoomToyEnv(noise_std=0.0)
    env.reset(seed=0, options={"state": [1.0, 1.0]})
    obs, reward, terminated, truncated, info = env.step(action)
    np.testing.assert_allclose(obs, [1.0 + delta[0], 1.0 + delta[1]], atol=1e-6)
    assert reward == -info["distance"] == pytest.approx(-math.hypot(obs[0] - 2.5, obs[1] - 2.5), abs=1e-6)
    assert (terminated, truncated) == (False, False)


def test_noise_has_the_configured_spread() -> None:
    env = RoomToyEnv(noise_std=0.05)
    env.reset(seed=0)
    moves = []
    for _ in range(2000):
        start, _ = env.reset(options={"state": [1.0, 1.0]})
        obs, *_ = env.step(3)
        moves.append(obs - start)
    moves = np.array(moves)
    np.testing.assert_allclose(moves.mean(axis=0), [0.1, 0.0], atol=0.005)
    np.testing.assert_allclose(moves.std(axis=0), [0.05, 0.05], rtol=0.1)


def test_walls_clip_the_state() -> None:
    env = RoomToyEnv()
    env.reset(seed=0, options={"state": [0.0, 5.0]})
    for action in (0, 2) * 10:
        obs, *_ = env.step(action)
        assert obs in env.observation_space
    assert obs[0] < 0.2 and obs[1] > 4.8


def test_entering_the_goal_terminates_with_success() -> None:
    env = RoomToyEnv(noise_std=0.0)
    env.reset(seed=0, options={"state": [2.5, 1.85]})
    obs, reward, terminated, _, info = env.step(0)
    assert terminated and info["is_success"] and info["distance"] < 0.6
    assert reward == pytest.approx(-0.55)


@pytest.mark.parametrize("action", [4, -1, 0.0, "N", None])
def test_invalid_actions_raise(action: Any) -> None:
    env = RoomToyEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"invalid action .*\[0, 3\] \(0: north, 1: south, 2: west, 3: east\)"):
        env.step(action)
