"""Deliberately broken envs for tests/rlrun/cli/test_check.py, each with one bug that `rlrun-check` must find.

They register on import under the test-only namespace ``broken``; the module form makes them as a user would::

    rlrun-check env=gym env.id=tests.rlrun.broken_envs:broken/NaNReward-v0
"""

from __future__ import annotations

import threading
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry


class Walk(gym.Env[np.ndarray, np.int64]):
    """A correct env to break: walk left (0) or right (1) on [-10, 10]; the episode ends at either edge."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None) -> None:
        self.observation_space = spaces.Box(-10.0, 10.0, shape=(1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.render_mode = render_mode
        self.position, self.steps = 0.0, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.position, self.steps = float(self._start()), 0
        return self._obs(), {}

    def _start(self) -> float:
        return int(self.np_random.integers(-3, 4))

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.position += 1.0 if action == 1 else -1.0
        self.steps += 1
        return self._obs(), self._reward(), abs(self.position) >= 10, False, {}

    def _obs(self) -> np.ndarray:
        return np.array([self.position], dtype=np.float32)

    def _reward(self) -> float:
        return -abs(self.position) / 10

    def render(self) -> str | None:
        return f"position {self.position:+.0f}\n" if self.render_mode == "ansi" else None


class Unseeded(Walk):
    """Bug: the start is drawn from an unseeded generator, so ``reset(seed=...)`` does not fix the episode (drawn
    from a continuum: two starts never agree, as 2 of Walk's 7 would one time in 7)."""

    def _start(self) -> float:
        return float(np.random.default_rng().uniform(-3.0, 3.0))


class NaNReward(Walk):
    """Bug: every 25th step returns a NaN reward."""

    def _reward(self) -> float:
        return float("nan") if self.steps % 25 == 0 else super()._reward()


class Unpicklable(Walk):
    """Bug: holds a lock, which cannot be pickled."""

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        self.lock = threading.Lock()


class CrashAfter(Walk):
    """Bug: ``step`` raises after 40 steps in all (a training run on it fails)."""

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        self.total_steps = 0  # across episodes

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.total_steps += 1
        if self.total_steps > 40:
            raise RuntimeError("the simulator lost its state")
        return super().step(action)


class Goal(gym.Env[dict[str, np.ndarray], np.ndarray]):
    """A correct goal env to break: move a point in [-1, 1]^2; reward 0 within 0.1 of the goal, else -1."""

    metadata = {"render_modes": [], "render_fps": 4}

    def __init__(self) -> None:
        box = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.observation_space = spaces.Dict({"achieved_goal": box, "desired_goal": box, "observation": box})
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.point, self.goal, self.steps = np.zeros(2, np.float32), np.zeros(2, np.float32), 0

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> np.ndarray:
        distance = np.linalg.norm(np.asarray(achieved_goal) - np.asarray(desired_goal), axis=-1)
        return np.where(distance <= 0.1, 0.0, -1.0).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.point = self.np_random.uniform(-1, 1, size=2).astype(np.float32)
        self.goal = self.np_random.uniform(-1, 1, size=2).astype(np.float32)
        self.steps = 0
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[dict, float, bool, bool, dict]:
        self.point = np.clip(self.point + 0.1 * np.clip(action, -1, 1), -1, 1).astype(np.float32)
        self.steps += 1
        obs = self._obs()
        return obs, self._reward(obs), False, False, {}

    def _reward(self, obs: dict[str, np.ndarray]) -> float:
        return float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], None))

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "achieved_goal": self.point.copy(),
            "desired_goal": self.goal.copy(),
            "observation": self.point.copy(),
        }


class GoalTimePenalty(Goal):
    """Bug: ``step`` adds a time penalty after 10 steps that ``compute_reward`` knows nothing about.

    SB3's checker compares the two on the first step only, so it passes; HER would learn from wrong rewards.
    """

    def _reward(self, obs: dict[str, np.ndarray]) -> float:
        return super()._reward(obs) - (0.01 if self.steps > 10 else 0.0)


BROKEN = {
    "broken/Unseeded-v0": Unseeded,
    "broken/NaNReward-v0": NaNReward,
    "broken/Unpicklable-v0": Unpicklable,
    "broken/CrashAfter-v0": CrashAfter,
    "broken/GoalTimePenalty-v0": GoalTimePenalty,
}

for _env_id, _cls in BROKEN.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_cls, max_episode_steps=50)
