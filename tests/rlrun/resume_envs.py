"""Envs of the conventions that keep an env stack from resuming exactly, for tests/rlrun/run/test_resume_modes.py.

Each reproduces what a package of its kind does; they register on import under the test-only namespace
``resumetest``, so the module form makes them as a user would::

    rlrun env=gym env.id=tests.rlrun.resume_envs:resumetest/Local-v0 algo=ppo

- ``Local-v0``: registered through a local function (as shimmy registers dm_control's envs): the spec a wrapper
  reads and caches names an entry point pickle cannot find.
- ``Walk-v0`` behind :class:`HoldsLambda`, a user's wrapper that holds a lambda (as Gymnasium 1.4's
  ``TransformObservation`` does), selected as ``+wrappers.holds_lambda={_target_: ...HoldsLambda, _partial_: true}``.
- ``Detached-v0``: pickles, but its unpickled copy cannot step (as PyBullet's envs: their state lives in a physics
  server the copy is not connected to).
- ``LateLock-v0``: pickles, until it opens a lock after 100 steps (after the round trip that decided the mode).
"""

from __future__ import annotations

import threading
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry


class Walk(gym.Env[np.ndarray, np.int64]):
    """Walk left (0) or right (1) on [-5, 5] from a seeded start; the episode ends at either edge."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-5.0, 5.0, shape=(1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.position = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.position = float(self.np_random.integers(-2, 3))
        return self._obs(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.position += 1.0 if action == 1 else -1.0
        return self._obs(), float(self.position > 0), abs(self.position) >= 5, False, {}

    def _obs(self) -> np.ndarray:
        return np.array([self.position], dtype=np.float32)


class HoldsLambda(gym.ObservationWrapper[np.ndarray, np.int64, np.ndarray]):
    """A user's wrapper that keeps its transformation as a lambda: it cannot be pickled."""

    def __init__(self, env: gym.Env[np.ndarray, np.int64]) -> None:
        super().__init__(env)
        self.transform = lambda obs: obs / 5.0

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return self.transform(observation)


class Detached(Walk):
    """Pickles, but a copy made by unpickling is not connected to its simulator and cannot step."""

    def __init__(self) -> None:
        super().__init__()
        self.connected = True

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, connected=False)

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.connected:
            raise RuntimeError("Not connected to physics server")
        return super().step(action)


class LateLock(Walk):
    """Takes on a lock, which cannot be pickled, at its 100th step."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0
        self.lock: threading.Lock | None = None

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.steps += 1
        if self.steps == 100:
            self.lock = threading.Lock()
        return super().step(action)


def _register_local() -> None:
    def make_local(**kwargs: Any) -> gym.Env:
        return Walk(**kwargs)

    register(id="resumetest/Local-v0", entry_point=make_local, max_episode_steps=40)


if "resumetest/Local-v0" not in registry:
    _register_local()
    register(id="resumetest/Walk-v0", entry_point=Walk, max_episode_steps=40)
    register(id="resumetest/Detached-v0", entry_point=Detached, max_episode_steps=40)
    register(id="resumetest/LateLock-v0", entry_point=LateLock, max_episode_steps=40)
