"""PointEnv (``envs/point.py``) for many copies at once: positions as one array, moves as array arithmetic."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..point import PointEnv
from .base import BatchedVecEnv, clip, python_norms


class BatchedPointEnv(BatchedVecEnv):
    """``num_envs`` copies of :class:`rlrun.envs.point.PointEnv` as one SB3 ``VecEnv``.

    Same spaces, reward (minus the distance to the origin, float32 as ``DummyVecEnv`` returns it),
    termination (within ``goal_tolerance``) and starting states as the single env; the time limit
    (``max_episode_steps``) truncates. ``positions`` holds the float64 state, one row per copy.
    """

    single_class = PointEnv
    single: PointEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        """``kwargs`` are PointEnv's constructor arguments."""
        super().__init__(num_envs, max_episode_steps, **kwargs)
        self.positions = np.zeros((self.num_envs, 2), dtype=np.float64)

    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.float64]:
        """Candidate starts, as ``PointEnv.reset`` draws them: uniform in the start square."""
        return rng.uniform(-self.single.start_range, self.single.start_range, size=(count, 2))

    def start(self, indices: npt.NDArray[np.intp]) -> None:
        """As ``PointEnv.reset``: candidates redrawn while inside the goal."""
        tolerance = self.single.goal_tolerance
        while indices.size:
            starts = self.take(indices)
            outside = python_norms(starts, tolerance) > tolerance
            self.positions[indices[outside]] = starts[outside]
            indices = indices[~outside]

    def check_actions(self, actions: Any) -> npt.NDArray[np.float64]:
        """Float actions of shape ``(num_envs, 2)``, finite, clipped to [-1, 1] (as ``planar_action``)."""
        return planar_actions(actions, self.num_envs)

    def advance(self, actions: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Move by ``max_speed * action``, stay in the arena; reward minus the distance to the origin."""
        single = self.single
        positions = self.positions
        positions += single.max_speed * actions
        clip(positions, -single.arena, single.arena)
        distance = python_norms(positions, single.goal_tolerance)
        rewards = (-distance).astype(np.float32)
        return rewards, distance <= single.goal_tolerance

    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> npt.NDArray[np.float32]:
        """Positions as float32, one row per copy."""
        rows = self.positions if indices is None else self.positions[indices]
        return rows.astype(np.float32)

    def copy_infos(self, indices: npt.NDArray[np.intp]) -> list[dict[str, Any]]:
        """``{"distance", "is_success"}`` as ``PointEnv`` reports them."""
        tolerance = self.single.goal_tolerance
        distances = map(math.hypot, *self.positions[indices].T.tolist())
        return [{"distance": d, "is_success": d <= tolerance} for d in distances]


def planar_actions(actions: Any, num_envs: int) -> npt.NDArray[np.float64]:
    """``num_envs`` planar actions as float64, clipped to [-1, 1]; ``ValueError`` names a bad shape or value."""
    array = np.asarray(actions)
    if array.shape != (num_envs, 2) or array.dtype.kind not in "fiu":
        raise ValueError(
            f"actions must be a numeric array of shape ({num_envs}, 2), got {array.dtype} of shape {array.shape}"
        )
    if not math.isfinite(np.add.reduce(array, axis=None)) and not np.isfinite(array).all():  # the sum: one call
        bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
        raise ValueError(f"actions must be finite, got {array[bad[0]].tolist()} for env copy {bad[0]}")
    return clip(array.astype(np.float64), -1.0, 1.0)  # a new array: the caller's actions stay as they are
