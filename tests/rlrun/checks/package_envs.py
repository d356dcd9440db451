"""Envs written as other packages write theirs, each with one trait that rlrun must read right (issue 53): importing
this module registers them under the namespace ``pkgtest``, so ``env.packages=[tests.rlrun.checks.package_envs]``
makes them, in the test process and in the ``rlrun`` processes the tests start.

- ``Drawn-v0``: the length, the observations and the rewards of its episodes come from its generator, so an
  evaluation replays the same episodes only from the same generator state; with ``stop_at_reset=k`` and
  ``marker=path`` an evaluation copy (seeded with ``eval_seed``) sends its own process SIGINT at its ``k``-th reset,
  once (the marker file says it was sent), which stops a run in the middle of a periodic evaluation.
- ``VectorReward-v0``: a reward of two objectives (a vector), as mo-gymnasium's envs return.
- ``ObjectReward-v0``: a reward that is not a number at all (the env's own bug).
- ``ScalarInDict-v0``: a Dict observation holding a scalar ``Box`` (a ``height``, as dm_control's walker has).
- ``GoalShaped-v0``: a Dict observation with ``observation``, ``achieved_goal`` and ``desired_goal``, but no
  ``compute_reward``: not a goal env.
- ``OwnComputeReward-v0``: a ``compute_reward`` method of Meta-World's kind (action and observation) on a Box
  observation: not a goal env either.
- ``ClassCounter-v0``: state kept in its class, outside the instance a snapshot holds.
- ``EndsItself-v0``: registered without a time limit, its episodes end by themselves after 6 steps (dm_control's
  and Blackjack's kind).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

MODULE = "tests.rlrun.checks.package_envs"


class Drawn(gym.Env[np.ndarray, int]):
    """Episodes of 2 to 9 steps, the length drawn at reset; a reward of 1 when the action matches the sign of the
    observation's first value, drawn anew each step. See the module's docstring for ``stop_at_reset``."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, stop_at_reset: int = 0, marker: str | None = None, eval_seed: int | None = None) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.stop_at_reset, self.marker, self.eval_seed = stop_at_reset, marker, eval_seed
        self.evaluation_copy = False
        self.resets = 0
        self.length = self.t = 0
        self.obs = np.zeros(2, np.float32)

    def _draw(self) -> np.ndarray:
        self.obs = self.np_random.uniform(-1.0, 1.0, 2).astype(np.float32)
        return self.obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.evaluation_copy = seed == self.eval_seed
        self.resets += 1
        if (
            self.evaluation_copy
            and self.resets == self.stop_at_reset
            and self.marker
            and not Path(self.marker).exists()
        ):
            Path(self.marker).write_text("sent\n")
            os.kill(os.getpid(), signal.SIGINT)
        self.length, self.t = int(self.np_random.integers(2, 10)), 0
        return self._draw(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        reward = float(int(action) == int(self.obs[0] > 0))
        self.t += 1
        return self._draw(), reward, self.t >= self.length, False, {}


class _Steps(gym.Env[Any, int]):
    """Episodes of 6 steps, a zero vector observed; subclasses change one thing."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space: spaces.Space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def _obs(self) -> Any:
        return np.zeros(2, np.float32)

    def _reward(self, action: int) -> Any:
        return float(action)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[Any, Any, bool, bool, dict]:
        self.t += 1
        return self._obs(), self._reward(action), self.t >= 6, False, {}


class VectorReward(_Steps):
    """mo-gymnasium's convention: the reward is a vector of objectives, declared by ``reward_space``."""

    def __init__(self) -> None:
        super().__init__()
        self.reward_space = spaces.Box(0.0, 1.0, (2,), np.float32)

    def _reward(self, action: int) -> Any:
        return np.array([float(action), 1.0 - float(action)], np.float32)


class Score:
    """A reward of the env's own class, which converts to a float but is no number."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __float__(self) -> float:
        return self.value


class ObjectReward(_Steps):
    """A bug of the env's own: its reward is an object, not a number (``kind``: ``score``, an object that converts
    to a float; ``dict``, one that does not)."""

    def __init__(self, kind: str = "score") -> None:
        super().__init__()
        self.kind = kind

    def _reward(self, action: int) -> Any:
        return Score(float(action)) if self.kind == "score" else {"score": float(action)}


class ScalarInDict(_Steps):
    """A Dict observation with a scalar ``height`` (shape ``()``) beside a vector."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "height": spaces.Box(-1.0, 1.0, (), np.float32)}
        )

    def _obs(self) -> Any:
        return {"position": np.zeros(2, np.float32), "height": np.array(self.t / 6, np.float32)}


class GoalShaped(_Steps):
    """The keys of a goal env's observation, but no ``compute_reward``: not a goal env."""

    def __init__(self) -> None:
        super().__init__()
        box = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = spaces.Dict({"observation": box, "achieved_goal": box, "desired_goal": box})

    def _obs(self) -> Any:
        return {key: np.zeros(2, np.float32) for key in ("observation", "achieved_goal", "desired_goal")}


class OwnComputeReward(_Steps):
    """A method named ``compute_reward`` of another contract than goal envs' (Meta-World's takes the action and the
    observation) on a Box observation: not a goal env."""

    def compute_reward(self, action: Any, obs: Any) -> float:
        return float(action)

    def _reward(self, action: int) -> Any:
        return self.compute_reward(action, self._obs())


class ClassCounter(_Steps):
    """Keeps a count of resets in its class, outside any instance, and shows it in its observations: two copies
    reset with one seed differ, and a snapshot (which holds the instance) cannot hold it. Episodes of 100 steps."""

    resets = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        ClassCounter.resets += 1
        self.offset = np.float32(ClassCounter.resets % 10 / 10)
        return super().reset(seed=seed, options=options)

    def _obs(self) -> Any:
        return np.full(2, getattr(self, "offset", 0.0), np.float32)

    def step(self, action: int) -> tuple[Any, Any, bool, bool, dict]:
        obs, reward, _, truncated, info = super().step(action)
        return obs, reward, self.t >= 100, truncated, info


class EndsItself(_Steps):
    """Registered without a time limit; its episodes end by themselves."""


ENVS = {
    "Drawn-v0": (Drawn, 50),
    "VectorReward-v0": (VectorReward, 50),
    "ObjectReward-v0": (ObjectReward, 50),
    "ScalarInDict-v0": (ScalarInDict, 50),
    "GoalShaped-v0": (GoalShaped, 50),
    "OwnComputeReward-v0": (OwnComputeReward, 50),
    "ClassCounter-v0": (ClassCounter, 200),
    "EndsItself-v0": (EndsItself, None),  # no max_episode_steps: no time limit
}
for _name, (_cls, _limit) in ENVS.items():
    if f"pkgtest/{_name}" not in gym.registry:
        gym.register(f"pkgtest/{_name}", entry_point=f"{MODULE}:{_cls.__name__}", max_episode_steps=_limit)
