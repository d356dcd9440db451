"""A goal-conditioned point for hindsight experience replay (HER), with a new goal every episode."""

import math
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from . import checks, rendering

GoalObs = dict[str, npt.NDArray[np.float32]]

_SUCCESS = np.float32(0.0)
_FAILURE = np.float32(-1.0)


class PointGoalEnv(gym.Env[dict[str, Any], npt.NDArray[np.float32]]):
    """
    ## Description

    A point on the square `[-arena, arena]^2` must reach a goal that changes every episode. The env follows
    the goal-env contract of Stable-Baselines3's `HerReplayBuffer` and of Gymnasium-Robotics (as in SB3's
    `BitFlippingEnv`): a `Dict` observation with `observation`, `achieved_goal` and `desired_goal`, a sparse
    reward computed by the vectorised `compute_reward`, and `info["is_success"]`. With the defaults it is easy
    on purpose: SAC + HER ([64, 64] networks, batch 128, gamma 0.95) reached 0.9 success after 5,000 steps in
    a prototype with 50 steps per episode.

    ## Action Space

    `Box(-1, 1, (2,), float32)`: a move of `max_step * action` (at most `max_step` per axis). Components
    outside [-1, 1] are clipped; an action of another shape, or with a NaN or infinite component, raises
    `ValueError`.

    ## Observation Space

    `Dict` with three `Box(-arena, arena, (2,), float32)` entries:

    - `observation`: the position `(x, y)` of the point;
    - `achieved_goal`: the same position, the goal it has achieved;
    - `desired_goal`: the goal `(x, y)` of this episode.

    ## Rewards

    0 when the point is within `distance_threshold` of the goal, else -1 (as in the robotics envs). `step`
    computes its reward with `compute_reward`, so
    `reward == env.compute_reward(obs["achieved_goal"], obs["desired_goal"], info)` always holds.
    `compute_reward` also accepts batches (a leading axis) and returns one reward per item, as HER needs.

    ## Starting State

    The point and the goal are uniform in the arena; the goal is redrawn while it lies within
    `distance_threshold` of the point, so that an episode never starts solved.

    ## Episode End

    1. Termination: the point is within `distance_threshold` of the goal (`info["is_success"]` is True), as in
       `BitFlippingEnv`.
    2. Truncation: after `max_episode_steps` steps, set at registration (50 for `rlrun/PointGoal-v0`). The env
       never truncates itself.

    `info` holds `distance` (from the point to the goal) and `is_success`.

    ## Arguments

    | Parameter            | Type      | Default | Description                                             |
    |----------------------|-----------|---------|---------------------------------------------------------|
    | `arena`              | **float** | `1.0`   | half-width of the square (> 0)                          |
    | `max_step`           | **float** | `0.1`   | largest move per axis and step (> 0)                    |
    | `distance_threshold` | **float** | `0.1`   | distance to the goal that counts as reached, (0, arena) |
    | `render_mode`        | **str**   | `None`  | `"human"`, `"rgb_array"`, `"ansi"` or None              |
    """

    metadata = {"render_modes": ["human", "rgb_array", "ansi"], "render_fps": 30}

    def __init__(
        self,
        arena: float = 1.0,
        max_step: float = 0.1,
        distance_threshold: float = 0.1,
        render_mode: str | None = None,
    ) -> None:
        """Check the arguments and build the spaces; see the class docstring for their meaning."""
        self.arena = checks.positive_number("arena", arena)
        self.max_step = checks.positive_number("max_step", max_step)
        self.distance_threshold = checks.positive_number("distance_threshold", distance_threshold)
        if self.distance_threshold >= self.arena:
            raise ValueError(
                f"distance_threshold must be smaller than arena ({self.arena}), got {distance_threshold!r}"
            )
        self.render_mode = rendering.check_render_mode(render_mode, self.metadata["render_modes"])

        point_space = spaces.Box(-self.arena, self.arena, shape=(2,), dtype=np.float32)
        self.observation_space = spaces.Dict(
            {"observation": point_space, "achieved_goal": point_space, "desired_goal": point_space}
        )
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

        self._position = np.zeros(2, dtype=np.float32)
        self._goal = np.zeros(2, dtype=np.float32)
        self._threshold_sq = self.distance_threshold**2
        self._window = rendering.HumanWindow("rlrun/PointGoal", self.metadata["render_fps"])

    def compute_reward(
        self, achieved_goal: npt.ArrayLike, desired_goal: npt.ArrayLike, info: Any
    ) -> np.float32 | npt.NDArray[np.float32]:
        """Return 0 where ``achieved_goal`` is within ``distance_threshold`` of ``desired_goal``, else -1.

        Goals are ``(..., 2)`` arrays; the result has the leading shape: a float32 scalar for one pair of
        goals, an array of shape ``(batch,)`` for a batch. ``info`` is not used.
        """
        if (
            type(achieved_goal) is np.ndarray
            and type(desired_goal) is np.ndarray
            and achieved_goal.shape == desired_goal.shape == (2,)
        ):
            # One pair, as every step asks: Python floats, exactly the float64 arithmetic of the batch path.
            (ax, ay), (gx, gy) = achieved_goal.tolist(), desired_goal.tolist()
            ex, ey = ax - gx, ay - gy
            return _SUCCESS if ex * ex + ey * ey <= self._threshold_sq else _FAILURE
        diff = np.asarray(achieved_goal, dtype=np.float64) - np.asarray(desired_goal, dtype=np.float64)
        squared = diff[..., 0] * diff[..., 0] + diff[..., 1] * diff[..., 1]
        return np.where(squared <= self._threshold_sq, _SUCCESS, _FAILURE)

    def _get_obs(self) -> GoalObs:
        # In the order of the Dict space, which sorts its keys.
        return {
            "achieved_goal": self._position.copy(),
            "desired_goal": self._goal.copy(),
            "observation": self._position.copy(),
        }

    def _get_info(self) -> dict[str, Any]:
        (x, y), (gx, gy) = self._position.tolist(), self._goal.tolist()
        success = self.compute_reward(self._position, self._goal, None) == _SUCCESS
        return {"distance": math.hypot(x - gx, y - gy), "is_success": bool(success)}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[GoalObs, dict[str, Any]]:
        """Draw a new start and a new goal at least ``distance_threshold`` apart; ``options`` are not used."""
        super().reset(seed=seed)
        self._position = self.np_random.uniform(-self.arena, self.arena, size=2).astype(np.float32)
        while True:
            self._goal = self.np_random.uniform(-self.arena, self.arena, size=2).astype(np.float32)
            if self.compute_reward(self._position, self._goal, None) == _FAILURE:
                break
        if self.render_mode == "human":
            self.render()
        return self._get_obs(), self._get_info()

    def step(self, action: npt.NDArray[np.float32]) -> tuple[GoalObs, float, bool, bool, dict[str, Any]]:
        """Move by ``max_step * clip(action, -1, 1)`` inside the arena; reward from ``compute_reward``."""
        ax, ay = checks.planar_action(action)
        x, y = self._position.tolist()
        arena = self.arena
        x += self.max_step * ax
        y += self.max_step * ay
        self._position = np.array(
            (
                -arena if x < -arena else (arena if x > arena else x),
                -arena if y < -arena else (arena if y > arena else y),
            ),
            dtype=np.float32,
        )
        obs, info = self._get_obs(), self._get_info()
        reward = float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], info))
        if self.render_mode == "human":
            self.render()
        return obs, reward, info["is_success"], False, info

    def render(self) -> rendering.Frame | str | None:
        """Return an RGB frame (``rgb_array``) or text (``ansi``), or show a window (``human``)."""
        return rendering.render(self.render_mode, self._draw_rgb, self._draw_text, self._window)

    def _draw_rgb(self) -> rendering.Frame:
        return rendering.plane_frame(
            -self.arena, self.arena, self._position.tolist(), self._goal.tolist(), self.distance_threshold
        )

    def _draw_text(self) -> str:
        return rendering.plane_text(
            -self.arena, self.arena, self._position.tolist(), self._goal.tolist(), self.distance_threshold
        )

    def close(self) -> None:
        """Close the ``human`` window, if one is open."""
        self._window.close()
