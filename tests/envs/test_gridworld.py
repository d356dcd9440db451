"""GridWorldEnv (``envs/gridworld.py``): arguments, the tutorial's moves, reward, termination and info."""

import re
from typing import Any

import numpy as np
import pytest
from rlrun.envs.gridworld import GridWorldEnv


@pytest.mark.parametrize("size", [1, 0, -3, 2.5, "5", True, None])
def test_bad_size_names_the_argument(size: Any) -> None:
    with pytest.raises(ValueError, match=rf"^size must be an integer >= 2, got {re.escape(repr(size))}"):
        GridWorldEnv(size=size)


@pytest.mark.parametrize("size", [2, 5, np.int64(7)])
def test_spaces(size: int) -> None:
    env = GridWorldEnv(size=size)
    for key in ("agent", "target"):
        box = env.observation_space[key]
        assert box.dtype == np.int64 and box.shape == (2,)
        assert box.low.tolist() == [0, 0] and box.high.tolist() == [size - 1, size - 1]
    assert env.action_space.n == 4


def place(env: GridWorldEnv, agent: tuple[int, int], target: tuple[int, int]) -> None:
    env.reset(seed=0)
    env._agent = agent
    env._target = np.array(target, dtype=np.int64)


@pytest.mark.parametrize(
    ("action", "expected"),
    [(0, (3, 2)), (1, (2, 3)), (2, (1, 2)), (3, (2, 1))],
    ids=["right", "up", "left", "down"],
)
def test_moves_follow_the_tutorial(action: int, expected: tuple[int, int]) -> None:
    env = GridWorldEnv()
    place(env, (2, 2), (0, 0))
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs["agent"].tolist() == list(expected) and obs["target"].tolist() == [0, 0]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info == {"distance": sum(expected), "is_success": False}


def test_moves_off_the_grid_stay_put() -> None:
    env = GridWorldEnv(size=3)
    place(env, (0, 2), (2, 0))
    for action in (1, 2):  # up and left from the top-left corner
        obs, *_ = env.step(action)
        assert obs["agent"].tolist() == [0, 2]


def test_reaching_the_target_rewards_one_and_terminates() -> None:
    env = GridWorldEnv()
    place(env, (1, 1), (2, 1))
    obs, reward, terminated, truncated, info = env.step(np.int64(0))
    assert obs["agent"].tolist() == obs["target"].tolist() == [2, 1]
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info == {"distance": 0, "is_success": True}


@pytest.mark.parametrize("action", [4, -1, 1.0, "1", None, np.array([1]), True])
def test_invalid_actions_raise(action: Any) -> None:
    env = GridWorldEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"invalid action .*expected an integer in \[0, 3\]"):
        env.step(action)


def test_zero_dimensional_integer_array_is_an_action() -> None:
    env = GridWorldEnv()
    place(env, (2, 2), (0, 0))
    assert env.step(np.array(0))[0]["agent"].tolist() == [3, 2]


def test_agent_and_target_start_on_distinct_cells_covering_the_grid() -> None:
    env = GridWorldEnv(size=3)
    pairs = set()
    env.reset(seed=0)
    for _ in range(1000):
        obs, info = env.reset()
        agent, target = tuple(obs["agent"].tolist()), tuple(obs["target"].tolist())
        assert agent != target
        assert info["distance"] == abs(agent[0] - target[0]) + abs(agent[1] - target[1]) > 0
        pairs.add((agent, target))
    assert len(pairs) == 9 * 8  # every ordered pair of distinct cells occurs


def test_text_and_frame_put_up_at_the_top() -> None:
    env = GridWorldEnv(size=3, render_mode="ansi")
    place(env, (0, 2), (2, 0))
    assert env.render() == "A . .\n. . .\n. . T\n"
    env = GridWorldEnv(size=3, render_mode="rgb_array")
    place(env, (0, 2), (2, 0))
    frame = env.render()
    cell = frame.shape[0] // 3
    assert frame[cell // 2, cell // 2].tolist() == [40, 80, 220]  # agent (blue) in the top-left cell
    assert frame[cell * 5 // 2, cell * 5 // 2].tolist() == [220, 40, 40]  # target (red) bottom right
