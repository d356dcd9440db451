"""Envs written as other packages write theirs, each reproducing one convention rlrun must honour: importing this
module registers them under plain ids (no ``rlrun/`` namespace), as ``highway_env`` or ``metaworld`` do, so
``env.packages=[tests.rlrun.third_party_envs]`` makes them (in the test process and the ``rlrun`` processes
the tests start).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

MODULE = "tests.rlrun.third_party_envs"


class Endless(gym.Env[np.ndarray, int]):
    """A board game where an illegal move changes nothing: no episode ever ends, and it is registered without a
    time limit. ``step_seconds`` slows each step down; each reset appends a line to ``resets`` (when given), so a
    test knows when evaluation has begun."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, step_seconds: float = 0.0, resets: str | None = None) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.step_seconds = step_seconds
        self.resets = resets

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if self.resets is not None:
            with open(self.resets, "a") as f:
                f.write("reset\n")
        return np.zeros(2, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.step_seconds:
            time.sleep(self.step_seconds)
        return np.zeros(2, np.float32), 0.0, False, False, {}


class Shaped(gym.Env[Any, int]):
    """Eight steps an episode, with the observation space given: ``scalar`` (a ``Box`` of shape ``()``), ``tuple``
    (a ``Tuple``), ``stray`` (a ``Box`` in [-1, 1] whose second value reaches 3) or ``image`` (84x84x3 uint8).
    ``misdeclared`` declares two values and returns three. Reports success at an episode's end as
    ``info["success"]`` (Meta-World's key), always true; with ``both``,
    ``info["is_success"]`` too, always false."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, shape: str = "stray", both: bool = False) -> None:
        self.shape = shape
        self.both = both
        self.observation_space = {
            "scalar": spaces.Box(-1.0, 1.0, (), np.float32),
            "tuple": spaces.Tuple((spaces.Discrete(3), spaces.Box(-1.0, 1.0, (2,), np.float32))),
            "stray": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "image": spaces.Box(0, 255, (84, 84, 3), np.uint8),
            "misdeclared": spaces.Box(-1.0, 1.0, (2,), np.float32),  # but three values are returned
        }[shape]
        self.action_space = spaces.Discrete(2)
        self._t = 0

    def _obs(self) -> Any:
        if self.shape == "scalar":
            return np.array(self._t / 8, np.float32)
        if self.shape == "tuple":
            return (self._t % 3, np.zeros(2, np.float32))
        if self.shape == "image":
            return np.zeros((84, 84, 3), np.uint8)
        if self.shape == "misdeclared":
            return np.zeros(3, np.float32)
        return np.array([0.0, 3.0 * self._t / 8], np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self._t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
        self._t += 1
        done = self._t >= 8
        info: dict[str, Any] = {"success": done}
        if self.both:
            info["is_success"] = False
        return self._obs(), float(action), done, False, info


def resets(path: Path) -> int:
    """How many resets an :class:`Endless` env with ``resets=path`` has made."""
    return len(path.read_text().splitlines()) if path.exists() else 0


gym.register("Endless-v0", entry_point=f"{MODULE}:Endless")  # no max_episode_steps: no time limit
gym.register("Shaped-v0", entry_point=f"{MODULE}:Shaped", max_episode_steps=100)
