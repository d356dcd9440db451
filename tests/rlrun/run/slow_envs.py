"""A slow env for tests that follow a run while it evaluates (tests/rlrun/run/test_following.py): each step sleeps,
so that an evaluation lasts several ``progress_every``.

It registers on import under the test-only namespace ``slow``; the module form makes it as a user would::

    rlrun env=gym env.id=tests.rlrun.run.slow_envs:slow/Sleepy-v0
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

STEP_S = 0.01  # each step's sleep
LENGTH = 10  # steps of an episode (the registration's max_episode_steps)


class Sleepy(gym.Env[np.ndarray, np.int64]):
    """Stand still (0) or move (1), each step taking :data:`STEP_S` seconds; reward 1 for a move. Episodes end at
    the registration's time limit (:data:`LENGTH` steps)."""

    metadata = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        time.sleep(STEP_S)
        self.steps += 1
        return np.array([min(self.steps / LENGTH, 1.0)], dtype=np.float32), float(action), False, False, {}


if "slow/Sleepy-v0" not in registry:
    register("slow/Sleepy-v0", entry_point=Sleepy, max_episode_steps=LENGTH)
