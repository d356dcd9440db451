"""Tiny envs for the checks' tests (tests/rlrun/checks/): observations SB3 cannot take as they are, or only with
an MLP, and a render mode that fails.

Made by module form (``env.id=tests.rlrun.checks.tiny_envs:obs/Note-v0``): importing this module registers them,
in the test process and in the ``rlrun`` processes the tests start.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Note(gym.Env[dict[str, Any], int]):
    """A position and a text note (a ``Text`` subspace, like MiniGrid's mission); the episode ends after 8 steps."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "note": spaces.Text(max_length=8)}
        )
        self.action_space = spaces.Discrete(2)
        self._t = 0

    def _get_obs(self) -> dict[str, Any]:
        return {"position": np.full(2, self._t / 8, np.float32), "note": "go left"}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict]:
        super().reset(seed=seed)
        self._t = 0
        return self._get_obs(), {}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict]:
        self._t += 1
        return self._get_obs(), float(action), self._t >= 8, False, {}


class TinyImage(gym.Env[np.ndarray, int]):
    """A 7x7x3 uint8 image (MiniGrid's size), far smaller than SB3's NatureCNN takes; 16 steps an episode."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0, 255, (7, 7, 3), np.uint8)
        self.action_space = spaces.Discrete(3)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._t = 0
        return self.np_random.integers(0, 256, (7, 7, 3), dtype=np.uint8), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._t += 1
        obs = self.np_random.integers(0, 256, (7, 7, 3), dtype=np.uint8)
        return obs, float(action == 1), self._t >= 16, False, {}


class NoFrames(TinyImage):
    """Lists ``rgb_array`` among its render modes, but fails to render (as MuJoCo does without a GL backend)."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__()
        self.render_mode = render_mode

    def render(self) -> np.ndarray | None:
        raise RuntimeError("no frames here")


def _advance(t: int) -> int:
    """The simulator's step: it fails on the 20th (where the tests expect the report to point)."""
    if t >= 20:
        raise FloatingPointError(f"the simulation diverged at step {t}")
    return t + 1


class StepFails(TinyImage):
    """Steps like :class:`TinyImage` until its simulator fails on the 20th step of an episode (8-step episodes
    never get there: ``max_episode_steps`` is left to the registration, here none)."""

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._t = _advance(self._t)
        return self.np_random.integers(0, 256, (7, 7, 3), dtype=np.uint8), 0.0, False, False, {}


gym.register("obs/Note-v0", entry_point=Note)
gym.register("obs/StepFails-v0", entry_point=StepFails)
gym.register("obs/NoFrames-v0", entry_point=NoFrames)
gym.register("obs/TinyImage-v0", entry_point=TinyImage)
