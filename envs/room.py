"""MushroomRL's room toy: noisy compass moves in a square room towards a round goal in its middle."""

import math
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from . import checks, rendering

ACTION_NAMES = ("north", "south", "west", "east")
# (dx, dy) of each action, in units of step_size.
_MOVES = ((0.0, 1.0), (0.0, -1.0), (-1.0, 0.0), (1.0, 0.0))


class RoomToyEnv(gym.Env[npt.NDArray[np.float32], np.int64]):
    """
    ## Description

    A point in the square room `[0, size]^2` must reach a round goal (by default a disc of radius 0.6 in the
    middle of a 5 x 5 room) with noisy moves along the compass directions. This is MushroomRL's "room toy"
    environment from its tutorial "How to make a simple environment", as a Gymnasium env.

    ## Action Space

    `Discrete(4)`:

    - 0: north (`y + step_size`)
    - 1: south (`y - step_size`)
    - 2: west (`x - step_size`)
    - 3: east (`x + step_size`)

    Each move has Gaussian noise with standard deviation `noise_std` added on both axes; the result is clipped
    to the room. Anything but an integer in [0, 3] raises `ValueError`.

    ## Observation Space

    `Box(0, size, (2,), float32)`: the position `(x, y)`.

    ## Rewards

    Minus the distance to the goal centre after the move, every step (the last one included).

    ## Starting State

    Uniform in the room, redrawn while inside the goal. `reset(options={"state": [x, y]})` starts from a given
    position instead; it must be two finite numbers inside the room and outside the goal, else `ValueError`.

    ## Episode End

    1. Termination: the point is closer than `goal_radius` to the goal centre (`info["is_success"]` is True).
    2. Truncation: after `max_episode_steps` steps, set at registration (100 for `rlrun/RoomToy-v0`,
       MushroomRL's horizon). The env never truncates itself.

    `info` holds `distance` (to the goal centre) and `is_success`.

    ## Arguments

    | Parameter     | Type              | Default      | Description                                        |
    |---------------|-------------------|--------------|----------------------------------------------------|
    | `size`        | **float**         | `5.0`        | side of the room (> 0)                             |
    | `goal`        | **(float, float)**| `(2.5, 2.5)` | centre of the goal, inside the room                |
    | `goal_radius` | **float**         | `0.6`        | radius of the goal; part of the room stays outside |
    | `step_size`   | **float**         | `0.1`        | length of a move before noise (> 0)                |
    | `noise_std`   | **float**         | `0.05`       | standard deviation of the move noise (>= 0)        |
    | `render_mode` | **str**           | `None`       | `"human"`, `"rgb_array"`, `"ansi"` or None         |
    """

    metadata = {"render_modes": ["human", "rgb_array", "ansi"], "render_fps": 10}

    def __init__(
        self,
        size: float = 5.0,
        goal: tuple[float, float] = (2.5, 2.5),
        goal_radius: float = 0.6,
        step_size: float = 0.1,
        noise_std: float = 0.05,
        render_mode: str | None = None,
    ) -> None:
        """Check the arguments and build the spaces; see the class docstring for their meaning."""
        self.size = checks.positive_number("size", size)
        self.goal = checks.planar_point("goal", goal)
        if not all(0.0 <= g <= self.size for g in self.goal):
            raise ValueError(f"goal must lie inside the room [0, {self.size}]^2, got {goal!r}")
        self.goal_radius = checks.positive_number("goal_radius", goal_radius)
        farthest = math.hypot(max(self.goal[0], self.size - self.goal[0]), max(self.goal[1], self.size - self.goal[1]))
        if self.goal_radius >= farthest:
            raise ValueError(
                f"goal_radius must leave part of the room outside the goal (< {farthest:.3f}), got {goal_radius!r}"
            )
        self.step_size = checks.positive_number("step_size", step_size)
        self.noise_std = checks.non_negative_number("noise_std", noise_std)
        self.render_mode = rendering.check_render_mode(render_mode, self.metadata["render_modes"])

        self.action_space = spaces.Discrete(len(ACTION_NAMES))
        self.observation_space = spaces.Box(0.0, self.size, shape=(2,), dtype=np.float32)

        self._moves = tuple((dx * self.step_size, dy * self.step_size) for dx, dy in _MOVES)
        self._x, self._y = 0.0, 0.0
        self._window = rendering.HumanWindow("rlrun/RoomToy", self.metadata["render_fps"])

    def _distance(self) -> float:
        return math.hypot(self._x - self.goal[0], self._y - self.goal[1])

    def _get_obs(self) -> npt.NDArray[np.float32]:
        return np.array((self._x, self._y), dtype=np.float32)

    def _get_info(self) -> dict[str, Any]:
        distance = self._distance()
        return {"distance": distance, "is_success": distance < self.goal_radius}

    def _forced_state(self, state: Any) -> tuple[float, float]:
        """Check a start position given as ``options["state"]``."""
        try:
            x, y = checks.planar_point('options["state"]', state)
        except ValueError:
            raise ValueError(f'options["state"] must be two finite numbers [x, y], got {state!r}') from None
        if not (0.0 <= x <= self.size and 0.0 <= y <= self.size):
            raise ValueError(f'options["state"] must lie inside the room [0, {self.size}]^2, got {state!r}')
        if math.hypot(x - self.goal[0], y - self.goal[1]) < self.goal_radius:
            raise ValueError(
                f'options["state"] must lie outside the goal (a disc of radius {self.goal_radius} around '
                f"{self.goal}), got {state!r}"
            )
        return x, y

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Start at a random position outside the goal, or at ``options["state"]`` when given."""
        super().reset(seed=seed)
        options = options or {}
        unknown = sorted(set(options) - {"state"})
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; RoomToyEnv accepts 'state'")
        if options.get("state") is not None:
            self._x, self._y = self._forced_state(options["state"])
        else:
            while True:
                self._x, self._y = self.np_random.uniform(0.0, self.size, size=2).tolist()
                if self._distance() >= self.goal_radius:
                    break
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), self._get_info()

    def step(self, action: int | np.integer) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Move one noisy step (clipped to the room); reward minus the distance to the goal."""
        dx, dy = self._moves[checks.discrete_action(action, ACTION_NAMES)]
        nx, ny = self.np_random.normal(0.0, self.noise_std, size=2).tolist()
        x, y, size = self._x + dx + nx, self._y + dy + ny, self.size
        self._x = 0.0 if x < 0.0 else (size if x > size else x)
        self._y = 0.0 if y < 0.0 else (size if y > size else y)
        info = self._get_info()
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), -info["distance"], info["is_success"], False, info

    def render(self) -> rendering.Frame | str | None:
        """Return an RGB frame (``rgb_array``) or text (``ansi``), or show a window (``human``)."""
        return rendering.render(self.render_mode, self._draw_rgb, self._draw_text, self._window)

    def _draw_rgb(self) -> rendering.Frame:
        return rendering.plane_frame(0.0, self.size, (self._x, self._y), self.goal, self.goal_radius)

    def _draw_text(self) -> str:
        return rendering.plane_text(0.0, self.size, (self._x, self._y), self.goal, self.goal_radius)

    def close(self) -> None:
        """Close the ``human`` window, if one is open."""
        self._window.close()
