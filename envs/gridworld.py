"""The grid world of Gymnasium's tutorial "Create a Custom Environment": walk to the target cell."""

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from . import checks, rendering

ACTION_NAMES = ("right", "up", "left", "down")
# The tutorial's mapping from action to (dx, dy); y grows upwards, as drawn by render().
_MOVES = ((1, 0), (0, 1), (-1, 0), (0, -1))

GridObs = dict[str, npt.NDArray[np.int64]]


class GridWorldEnv(gym.Env[dict[str, Any], np.int64]):
    """
    ## Description

    An agent on a `size x size` grid must walk to a target cell. This is the environment of Gymnasium's
    tutorial "Create a Custom Environment", with the tutorial's spaces and action mapping.

    ## Action Space

    `Discrete(4)`:

    - 0: right (`x + 1`)
    - 1: up (`y + 1`)
    - 2: left (`x - 1`)
    - 3: down (`y - 1`)

    A move off the grid leaves the agent where it is. Anything but an integer in [0, 3] raises `ValueError`.

    ## Observation Space

    `Dict({"agent": Box(0, size - 1, (2,), int64), "target": Box(0, size - 1, (2,), int64)})`: the cells
    `(x, y)` of the agent and of the target. The wrapper `rlrun.envs.wrappers.RelativePosition` turns this into the
    single vector `target - agent`.

    ## Rewards

    1 on the step that reaches the target, 0 otherwise; the return is 1 exactly when the episode succeeds.

    ## Starting State

    The agent and the target are on two distinct cells drawn uniformly at random.

    ## Episode End

    1. Termination: the agent reaches the target (`info["is_success"]` is True).
    2. Truncation: after `max_episode_steps` steps, set at registration (50 for `rlrun/GridWorld-v0`, enough
       to cross a 5 x 5 grid many times). The env never truncates itself.

    `info` holds `distance` (Manhattan distance from agent to target) and `is_success`.

    ## Arguments

    | Parameter     | Type    | Default | Description                                       |
    |---------------|---------|---------|---------------------------------------------------|
    | `size`        | **int** | `5`     | cells per side (an integer >= 2)                  |
    | `render_mode` | **str** | `None`  | `"human"`, `"rgb_array"`, `"ansi"` or None        |
    """

    metadata = {"render_modes": ["human", "rgb_array", "ansi"], "render_fps": 4}

    def __init__(self, size: int = 5, render_mode: str | None = None) -> None:
        """Check the arguments and build the spaces; see the class docstring for their meaning."""
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 2:
            raise ValueError(f"size must be an integer >= 2, got {size!r}")
        self.size = int(size)
        self.render_mode = rendering.check_render_mode(render_mode, self.metadata["render_modes"])

        cell_space = spaces.Box(0, self.size - 1, shape=(2,), dtype=np.int64)
        self.observation_space = spaces.Dict({"agent": cell_space, "target": cell_space})
        self.action_space = spaces.Discrete(len(ACTION_NAMES))

        self._agent = (0, 0)
        self._target = np.zeros(2, dtype=np.int64)
        # About 512 px in all, in multiples of 16 px, so that video encoders need not resize the frames.
        self._cell_px = 16 * max(round(32 / self.size), 1)
        self._window = rendering.HumanWindow("rlrun/GridWorld", self.metadata["render_fps"])

    def _get_obs(self) -> GridObs:
        return {"agent": np.array(self._agent, dtype=np.int64), "target": self._target.copy()}

    def _get_info(self) -> dict[str, Any]:
        tx, ty = self._target.tolist()
        distance = abs(self._agent[0] - tx) + abs(self._agent[1] - ty)
        return {"distance": distance, "is_success": distance == 0}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[GridObs, dict[str, Any]]:
        """Put the agent and the target on two distinct random cells; ``options`` are not used."""
        super().reset(seed=seed)
        cells = self.size * self.size
        agent = int(self.np_random.integers(cells))
        # Drawing among the other cells - 1 cells, skipping the agent's: distinct cells without a retry loop.
        target = int(self.np_random.integers(cells - 1))
        target += target >= agent
        self._agent = divmod(agent, self.size)
        self._target = np.array(divmod(target, self.size), dtype=np.int64)
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), self._get_info()

    def step(self, action: int | np.integer) -> tuple[GridObs, float, bool, bool, dict[str, Any]]:
        """Move one cell (not off the grid); reward 1 and terminate on reaching the target."""
        dx, dy = _MOVES[checks.discrete_action(action, ACTION_NAMES)]
        x, y = self._agent[0] + dx, self._agent[1] + dy
        last = self.size - 1
        self._agent = (0 if x < 0 else (last if x > last else x), 0 if y < 0 else (last if y > last else y))
        info = self._get_info()
        terminated = info["is_success"]
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), 1.0 if terminated else 0.0, terminated, False, info

    def render(self) -> rendering.Frame | str | None:
        """Return an RGB frame (``rgb_array``) or text (``ansi``), or show a window (``human``)."""
        return rendering.render(self.render_mode, self._draw_rgb, self._draw_text, self._window)

    def _draw_rgb(self) -> rendering.Frame:
        cell, last = self._cell_px, self.size - 1
        frame = rendering.new_frame(cell * self.size, cell * self.size)
        tx, ty = self._target.tolist()
        ax, ay = self._agent
        rendering.fill_rect(
            frame, (last - ty) * cell, tx * cell, (last - ty + 1) * cell, (tx + 1) * cell, rendering.RED
        )
        rendering.fill_disc(frame, (last - ay + 0.5) * cell, (ax + 0.5) * cell, cell / 3, rendering.BLUE)
        rendering.draw_grid(frame, self.size, cell)
        return frame

    def _draw_text(self) -> str:
        tx, ty = self._target.tolist()
        rows = []
        for y in range(self.size - 1, -1, -1):
            row = ["A" if (x, y) == self._agent else "T" if (x, y) == (tx, ty) else "." for x in range(self.size)]
            rows.append(" ".join(row))
        return "\n".join(rows) + "\n"

    def close(self) -> None:
        """Close the ``human`` window, if one is open."""
        self._window.close()
