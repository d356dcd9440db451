"""Batched versions of the rlrun envs: numpy arrays for all copies, exposed as SB3 ``VecEnv``\\ s.

Each steps ``n_envs`` copies of one env with array operations instead of one Python call per copy, so a
thousand copies cost about what a few cost through ``DummyVecEnv`` (see BENCHMARKS.md). They are faithful
drop-ins: the same spaces, rewards, terminations, time limits and, for the same seed, the same starting
states as ``DummyVecEnv`` over ``gym.make`` (RoomToy's move noise is drawn for all copies at once, so only
its distribution is the same). Usable without rlrun:

>>> import numpy as np
>>> from rlrun.envs.batched import make_vec_env
>>> venv = make_vec_env("rlrun/GridWorld-v0", n_envs=1024, seed=0)
>>> obs = venv.reset()
>>> venv.num_envs, obs["agent"].shape
(1024, (1024, 2))
>>> obs, rewards, dones, infos = venv.step(np.zeros(1024, dtype=np.int64))
>>> rewards.shape, dones.shape
((1024,), (1024,))

In rlrun, ``env.vectorization=native`` trains on them.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from .. import ENV_IDS  # noqa: F401  (registers the rlrun/* ids, whose time limits the batched envs use)
from .base import BatchedVecEnv
from .gridworld import BatchedGridWorld
from .point import BatchedPointEnv
from .point_goal import BatchedPointGoal
from .room import BatchedRoomToy
from .wrappers import UnsupportedWrapper, wrap

__all__ = [
    "ENV_CLASSES",
    "BatchedGridWorld",
    "BatchedPointEnv",
    "BatchedPointGoal",
    "BatchedRoomToy",
    "BatchedVecEnv",
    "NoBatchedVersion",
    "UnsupportedWrapper",
    "make_vec_env",
    "wrap",
]

# Gymnasium id -> its batched class.
ENV_CLASSES: dict[str, type[BatchedVecEnv]] = {
    "rlrun/PointEnv-v0": BatchedPointEnv,
    "rlrun/GridWorld-v0": BatchedGridWorld,
    "rlrun/PointGoal-v0": BatchedPointGoal,
    "rlrun/RoomToy-v0": BatchedRoomToy,
}


class NoBatchedVersion(ValueError):
    """An env id that has no batched version."""

    def __init__(self, env_id: str) -> None:
        """Name the id, the ids that have a batched version, and the way out."""
        super().__init__(
            f"{env_id!r} has no native batched version; the ids that have one are {', '.join(ENV_CLASSES)}. "
            "Use env.vectorization=gym (one Gymnasium env per copy) for other envs"
        )
        self.env_id = env_id


def make_vec_env(
    env_id: str, n_envs: int, seed: int | None = None, max_episode_steps: int | None = None, **kwargs: Any
) -> BatchedVecEnv:
    """``n_envs`` batched copies of ``env_id``, copy ``i`` seeded ``seed + i`` at the first ``reset()``.

    ``max_episode_steps`` defaults to the registration's time limit, as ``gym.make`` does; ``kwargs`` are
    the env's constructor arguments. Like SB3's ``make_vec_env`` the action space is seeded with ``seed``.
    """
    if env_id not in ENV_CLASSES:
        raise NoBatchedVersion(env_id)
    if max_episode_steps is None:
        max_episode_steps = gym.spec(env_id).max_episode_steps
    venv = ENV_CLASSES[env_id](n_envs, max_episode_steps, **kwargs)
    if seed is not None:
        venv.seed(seed)
        venv.action_space.seed(seed)
    return venv
