"""Wrappers that Gymnasium does not ship, written like Gymnasium's own (``<Verb><Thing>``, checked arguments).

Each takes the env as its first argument and plain, YAML-friendly arguments after it, so a config can select
it as a partial (see DESIGN.md, "Wrappers").
"""

import math
from numbers import Real
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces


class RelativePosition(
    gym.ObservationWrapper[npt.NDArray[Any], Any, dict[str, npt.NDArray[Any]]],
    gym.utils.RecordConstructorArgs,
):
    """Replace an ``{"agent", "target"}`` observation by the single vector ``target - agent``.

    From Gymnasium's tutorial "Create a Custom Environment". On ``rlrun/GridWorld-v0`` of size ``n`` the new
    observation space is ``Box(-(n - 1), n - 1, (2,), int64)``; in general its bounds are derived from the
    bounds of the two input boxes.

    Example:
        >>> import gymnasium as gym
        >>> import rlrun.envs
        >>> env = RelativePosition(gym.make("rlrun/GridWorld-v0"))
        >>> env.observation_space
        Box(-4, 4, (2,), int64)
    """

    def __init__(self, env: gym.Env[dict[str, npt.NDArray[Any]], Any]) -> None:
        """Check that ``env`` observes a Dict with Box keys ``agent`` and ``target`` of one shape."""
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        agent = space.spaces.get("agent") if isinstance(space, spaces.Dict) else None
        target = space.spaces.get("target") if isinstance(space, spaces.Dict) else None
        if not (isinstance(agent, spaces.Box) and isinstance(target, spaces.Box) and agent.shape == target.shape):
            raise ValueError(
                "RelativePosition needs a Dict observation space with 'agent' and 'target' keys, two Boxes "
                f"of the same shape (like rlrun/GridWorld-v0), got {space}"
            )
        # int8 in the promotion makes unsigned cells signed, since a difference can be negative.
        dtype = np.result_type(agent.dtype, target.dtype, np.int8)
        low = target.low.astype(dtype) - agent.high.astype(dtype)
        high = target.high.astype(dtype) - agent.low.astype(dtype)
        self.observation_space = spaces.Box(low, high, dtype=dtype)
        self._dtype: np.dtype[Any] = dtype

    def observation(self, observation: dict[str, npt.NDArray[Any]]) -> npt.NDArray[Any]:
        """Return ``observation["target"] - observation["agent"]``."""
        return np.subtract(observation["target"], observation["agent"], dtype=self._dtype)


class ScaleReward(gym.RewardWrapper[Any, Any], gym.utils.RecordConstructorArgs):
    """Multiply every reward by a constant ``scale``.

    Gymnasium's ``TransformReward`` needs a Python function, which a YAML config cannot express; this is the
    common case as one number. Logged returns are unaffected when, as in rlrun, ``Monitor`` sits below it.

    Example:
        >>> import gymnasium as gym
        >>> import rlrun.envs
        >>> env = ScaleReward(gym.make("rlrun/RoomToy-v0"), scale=0.1)
    """

    def __init__(self, env: gym.Env[Any, Any], scale: float) -> None:
        """Check that ``scale`` is a finite, non-zero number."""
        if isinstance(scale, bool | np.bool_) or not isinstance(scale, Real) or not math.isfinite(scale) or scale == 0:
            raise ValueError(f"scale must be a finite, non-zero number, got {scale!r}")
        gym.utils.RecordConstructorArgs.__init__(self, scale=scale)
        gym.RewardWrapper.__init__(self, env)
        self.scale: float = float(scale)

    def reward(self, reward: SupportsFloat) -> float:
        """Return ``scale * reward``."""
        return self.scale * float(reward)
