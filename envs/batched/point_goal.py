"""PointGoal (``envs/point_goal.py``) for many copies at once, with ``compute_reward`` for HER."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from envs.batched.base import BatchedVecEnv
from envs.batched.point import planar_actions
from envs.point_goal import PointGoalEnv


class BatchedPointGoal(BatchedVecEnv):
    """``num_envs`` copies of :class:`envs.point_goal.PointGoalEnv` as one SB3 ``VecEnv``.

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

    def reset_copy(self, index: int, rng: np.random.Generator, options: dict[str, Any]) -> None:
        """As ``PointGoalEnv.reset``: a uniform start, then a goal redrawn while it is already reached."""
        single, arena = self.single, self.single.arena
        position = rng.uniform(-arena, arena, size=2).astype(np.float32)
        while True:
            goal = rng.uniform(-arena, arena, size=2).astype(np.float32)
            if single.compute_reward(position, goal, None) != 0.0:
                break
        self.positions[index] = position
        self.goals[index] = goal

    def check_actions(self, actions: Any) -> npt.NDArray[np.float64]:
        """Float actions of shape ``(num_envs, 2)``, finite, clipped to [-1, 1]."""
        return planar_actions(actions, self.num_envs)

    def advance(self, actions: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Move by ``max_step * action`` inside the arena (in float64, stored as float32); sparse reward."""
        single = self.single
        moved = self.positions.astype(np.float64)
        moved += single.max_step * actions
        np.clip(moved, -single.arena, single.arena, out=moved)
        self.positions = moved.astype(np.float32)
        rewards = np.asarray(single.compute_reward(self.positions, self.goals, None))
        return rewards, rewards == 0.0

    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> dict[str, npt.NDArray[np.float32]]:
        """``{"achieved_goal", "desired_goal", "observation"}`` arrays, one row per copy."""
        positions = self.positions if indices is None else self.positions[indices]
        goals = self.goals if indices is None else self.goals[indices]
        return {"achieved_goal": positions.copy(), "desired_goal": goals.copy(), "observation": positions.copy()}

    def copy_info(self, index: int) -> dict[str, Any]:
        """``{"distance", "is_success"}`` as ``PointGoalEnv`` reports them."""
        (x, y), (gx, gy) = self.positions[index].tolist(), self.goals[index].tolist()
        success = self.single.compute_reward(self.positions[index], self.goals[index], None) == 0.0
        return {"distance": math.hypot(x - gx, y - gy), "is_success": bool(success)}
