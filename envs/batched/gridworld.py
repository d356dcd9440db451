"""GridWorld (``envs/gridworld.py``) for many copies at once: agent and target cells as integer arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..gridworld import _MOVES, ACTION_NAMES, GridWorldEnv
from .base import BatchedVecEnv, clip

_MOVE_ARRAY = np.array(_MOVES, dtype=np.int64)


class BatchedGridWorld(BatchedVecEnv):
    """``num_envs`` copies of :class:`rlrun.envs.gridworld.GridWorldEnv` as one SB3 ``VecEnv``.

    Same Dict observation (``agent``, ``target``), actions, reward (1 on reaching the target), termination
    and starting states as the single env; the time limit (``max_episode_steps``) truncates. ``agents`` and
    ``targets`` hold the cells ``(x, y)``, one row per copy.
    """

    single_class = GridWorldEnv
    single: GridWorldEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        """``kwargs`` are GridWorldEnv's constructor arguments."""
        super().__init__(num_envs, max_episode_steps, **kwargs)
        self.agents = np.zeros((self.num_envs, 2), dtype=np.int64)
        self.targets = np.zeros((self.num_envs, 2), dtype=np.int64)

    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.int64]:
        """Pairs of cell numbers as ``GridWorldEnv.reset`` draws them: the agent's, then the target's among
        the other cells."""
        cells = self.single.size * self.single.size
        return rng.integers(0, np.array([cells, cells - 1]), size=(count, 2))

    def start(self, indices: npt.NDArray[np.intp]) -> None:
        """As ``GridWorldEnv.reset``: two distinct cells, the target's number skipping the agent's."""
        pairs = self.take(indices)
        agent, target = pairs[:, 0], pairs[:, 1]
        target = target + (target >= agent)
        size = self.single.size
        self.agents[indices] = np.stack(divmod(agent, size), axis=1)
        self.targets[indices] = np.stack(divmod(target, size), axis=1)

    def check_actions(self, actions: Any) -> npt.NDArray[np.int64]:
        """Integer actions in [0, 3], one per copy; ``ValueError`` names the first bad one."""
        return discrete_actions(actions, self.num_envs, ACTION_NAMES)

    def advance(self, actions: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Move one cell (not off the grid); reward 1 and terminate on reaching the target."""
        agents = self.agents
        agents += _MOVE_ARRAY[actions]
        clip(agents, 0, self.single.size - 1)
        reached = (agents == self.targets).all(axis=1)
        return reached.astype(np.float32), reached

    def observe(self, indices: npt.NDArray[np.intp] | None = None) -> dict[str, npt.NDArray[np.int64]]:
        """``{"agent", "target"}`` arrays, one row per copy."""
        if indices is None:
            return {"agent": self.agents.copy(), "target": self.targets.copy()}
        return {"agent": self.agents[indices], "target": self.targets[indices]}

    def copy_infos(self, indices: npt.NDArray[np.intp]) -> list[dict[str, Any]]:
        """``{"distance", "is_success"}`` as ``GridWorldEnv`` reports them (Manhattan distance, an int)."""
        distances = np.abs(self.agents[indices] - self.targets[indices]).sum(axis=1).tolist()
        return [{"distance": d, "is_success": d == 0} for d in distances]


def discrete_actions(actions: Any, num_envs: int, names: tuple[str, ...]) -> npt.NDArray[np.int64]:
    """``num_envs`` integer actions in ``[0, len(names))``; ``ValueError`` names the first bad one."""
    array = np.asarray(actions)
    if array.size == num_envs and array.ndim in (1, 2):
        array = array.reshape(num_envs)  # SB3 passes (n,); some callers (n, 1)
    if array.shape != (num_envs,) or array.dtype.kind not in "iu":
        raise ValueError(
            f"actions must be an integer array of shape ({num_envs},), got {array.dtype} of shape {array.shape}"
        )
    bad = np.flatnonzero((array < 0) | (array >= len(names)))
    if bad.size:
        labels = ", ".join(f"{i}: {name}" for i, name in enumerate(names))
        raise ValueError(
            f"invalid action {array[bad[0]]} for env copy {bad[0]}: expected an integer in [0, {len(names) - 1}] "
            f"({labels})"
        )
    return array.astype(np.int64, copy=False)
