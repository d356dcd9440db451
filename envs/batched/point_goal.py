"""PointGoal (``envs/point_goal.py``) for many copies at once, with ``compute_reward`` for HER."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..point_goal import PointGoalEnv
from .base import BatchedVecEnv, clip
from .point import planar_actions


class BatchedPointGoal(BatchedVecEnv):
    """``num_envs`` copies of :class:`rlrun.envs.point_goal.PointGoalEnv` as one SB3 ``VecEnv``.

    Same Dict observation (``achieved_goal``, ``desired_goal``, ``observation``), reward (0 within
    ``distance_threshold`` of the goal, else -1, from the single env's ``compute_reward``), termination and
    starting states as the single env; the time limit (``max_episode_steps``) truncates.
    ``env_method("compute_reward", achieved, desired, infos)`` answers for HER's replay buffer.
    ``positions`` and ``goals`` hold the float32 state, one row per copy.
    """

    single_class = PointGoalEnv
    single: PointGoalEnv
    shared_methods = ("compute_reward",)

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        """``kwargs`` are PointGoalEnv's constructor arguments."""
        super().__init__(num_envs, max_episode_steps, **kwargs)
        self.positions = np.zeros((self.num_envs, 2), dtype=np.float32)
        self.goals = np.zeros((self.num_envs, 2), dtype=np.float32)

    def compute_reward(
        self, achieved_goal: npt.ArrayLike, desired_goal: npt.ArrayLike, info: Any
    ) -> np.float32 | npt.NDArray[np.float32]:
        """The single env's vectorised ``compute_reward``: 0 within ``distance_threshold``, else -1."""
        return self.single.compute_reward(achieved_goal, desired_goal, info)

    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.float32]:
        """Points as ``PointGoalEnv.reset`` draws them (the start, then goals): uniform in the arena."""
        return rng.uniform(-self.single.arena, self.single.arena, size=(count, 2)).astype(np.float32)

    def start(self, indices: npt.NDArray[np.intp]) -> None:
        """As ``PointGoalEnv.reset``: a start, then goals redrawn while the goal is already reached."""
        positions = self.take(indices)
        self.positions[indices] = positions
        while indices.size:
            goals = self.take(indices)
            apart = np.asarray(self.single.compute_reward(positions, goals, None)) != 0.0
            self.goals[indices[apart]] = goals[apart]
            indices, positions = indices[~apart], positions[~apart]

    def check_actions(self, actions: Any) -> npt.NDArray[np.float64]:
        """Float actions of shape ``(num_envs, 2)``, finite, clipped to [-1, 1]."""
        return planar_actions(actions, self.num_envs)

    def advance(self, actions: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Move by ``max_step * action`` inside the arena (in float64, stored as float32); sparse reward."""
        single = self.single
        moved = self.positions.astype(np.float64)
        moved += single.max_step * actions
        clip(moved, -single.arena, single.arena)
        self.positions = moved.astype(np.float32)
        rewards = np.asarray(single.compute_reward(self.positions, self.goals, None))
        return rewards, rewards == 0.0

    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> dict[str, npt.NDArray[np.float32]]:
        """``{"achieved_goal", "desired_goal", "observation"}`` arrays, one row per copy."""
        positions = self.positions if indices is None else self.positions[indices]
        goals = self.goals if indices is None else self.goals[indices]
        return {"achieved_goal": positions.copy(), "desired_goal": goals.copy(), "observation": positions.copy()}

    def copy_infos(self, indices: npt.NDArray[np.intp]) -> list[dict[str, Any]]:
        """``{"distance", "is_success"}`` as ``PointGoalEnv`` reports them."""
        positions, goals = self.positions[indices], self.goals[indices]
        success = (np.asarray(self.single.compute_reward(positions, goals, None)) == 0.0).tolist()
        offsets = (positions.astype(np.float64) - goals.astype(np.float64)).T.tolist()
        return [{"distance": d, "is_success": s} for d, s in zip(map(math.hypot, *offsets), success, strict=True)]
