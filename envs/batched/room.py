"""RoomToy (``envs/room.py``) for many copies at once: noisy compass moves as array arithmetic."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..room import _MOVES, ACTION_NAMES, RoomToyEnv
from .base import BatchedVecEnv, clip, python_norms
from .gridworld import discrete_actions


class BatchedRoomToy(BatchedVecEnv):
    """``num_envs`` copies of :class:`rlrun.envs.room.RoomToyEnv` as one SB3 ``VecEnv``.

    Same spaces, moves, reward (minus the distance to the goal centre), termination (inside the goal) and
    first starting states as the single env; the time limit (``max_episode_steps``) truncates. The move
    noise of all copies is drawn at once from ``batch_rng``, so with ``noise_std > 0`` the noise (and so the
    later episodes) differ from the single env's draw for draw while having the same distribution; with
    ``noise_std=0`` the dynamics are the single env's exactly. ``set_options({"state": [x, y]})`` before
    ``reset()`` starts from a given position, as ``reset(options=...)`` does for the single env.
    ``positions`` holds the float64 state, one row per copy.
    """

    single_class = RoomToyEnv
    replays_gym = False  # the move noise is drawn for all copies at once
    single: RoomToyEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        """``kwargs`` are RoomToyEnv's constructor arguments."""
        super().__init__(num_envs, max_episode_steps, **kwargs)
        self.positions = np.zeros((self.num_envs, 2), dtype=np.float64)
        self._moves = np.array(_MOVES, dtype=np.float64) * self.single.step_size
        self._goal = np.array(self.single.goal, dtype=np.float64)

    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.float64]:
        """Candidate starts, as ``RoomToyEnv.reset`` draws them: uniform in the room."""
        return rng.uniform(0.0, self.single.size, size=(count, 2))

    def start(self, indices: npt.NDArray[np.intp]) -> None:
        """As ``RoomToyEnv.reset``: candidates redrawn while inside the goal."""
        radius = self.single.goal_radius
        while indices.size:
            starts = self.take(indices)
            outside = python_norms(starts - self._goal, radius) >= radius
            self.positions[indices[outside]] = starts[outside]
            indices = indices[~outside]

    def start_from_options(self, index: int, options: dict[str, Any]) -> bool:
        """``{"state": [x, y]}`` starts copy ``index`` there, checked as ``RoomToyEnv.reset`` checks it."""
        unknown = sorted(set(options) - {"state"})
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; RoomToyEnv accepts 'state'")
        if options.get("state") is None:
            return False
        self.positions[index] = self.single._forced_state(options["state"])
        return True

    def check_actions(self, actions: Any) -> npt.NDArray[np.int64]:
        """Integer actions in [0, 3], one per copy; ``ValueError`` names the first bad one."""
        return discrete_actions(actions, self.num_envs, ACTION_NAMES)

    def advance(self, actions: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Move one noisy step, clipped to the room; reward minus the distance to the goal centre."""
        single = self.single
        positions = self.positions
        positions += self._moves[actions]
        if single.noise_std > 0.0:
            positions += self.batch_rng.normal(0.0, single.noise_std, size=positions.shape)
        clip(positions, 0.0, single.size)
        distance = python_norms(positions - self._goal, single.goal_radius)
        rewards = (-distance).astype(np.float32)
        return rewards, distance < single.goal_radius

    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> npt.NDArray[np.float32]:
        """Positions as float32, one row per copy."""
        rows = self.positions if indices is None else self.positions[indices]
        return rows.astype(np.float32)

    def copy_infos(self, indices: npt.NDArray[np.intp]) -> list[dict[str, Any]]:
        """``{"distance", "is_success"}`` as ``RoomToyEnv`` reports them."""
        radius = self.single.goal_radius
        offsets = (self.positions[indices] - self._goal).T.tolist()
        return [{"distance": d, "is_success": d < radius} for d in map(math.hypot, *offsets)]
