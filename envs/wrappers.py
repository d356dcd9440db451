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


# Gymnasium 1.4's FlattenObservation, ClipAction and RescaleAction keep their transformation as a lambda or a local
# function, so an env stack holding one cannot be pickled (a run's snapshots could not hold its envs). These
# subclasses do the same in a method and hold no function: the stack pickles and a run can resume exactly.


class FlattenObservation(gym.wrappers.FlattenObservation):  # type: ignore[type-arg]
    """Gymnasium's ``FlattenObservation`` (any observation space to a flat Box), picklable.

    Example:
        >>> import gymnasium as gym, pickle
        >>> import rlrun.envs
        >>> env = FlattenObservation(gym.make("rlrun/GridWorld-v0"))
        >>> env.observation_space.shape
        (4,)
        >>> copy = pickle.loads(pickle.dumps(env))
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        """Flatten ``env``'s observations as Gymnasium's ``spaces.utils.flatten`` does."""
        super().__init__(env)
        del self.func  # Gymnasium's lambda: observation() does its work

    def observation(self, observation: Any) -> Any:
        """Return the observation flattened."""
        return spaces.utils.flatten(self.env.observation_space, observation)


class ClipAction(gym.wrappers.ClipAction):  # type: ignore[type-arg]
    """Clip continuous actions to the env's Box bounds; picklable, and the action space stays the env's.

    Gymnasium's ``ClipAction`` declares ``Box(-inf, inf)``, which SB3 refuses (continuous actions need finite
    bounds). Here the declared space is the env's own bounded Box: an action outside it (exploration noise,
    another policy's output) is clipped into it before the env sees it.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        """Check that ``env`` has a Box action space (Gymnasium's ``TypeError`` otherwise)."""
        super().__init__(env)
        del self.func  # Gymnasium's lambda: action() does its work
        self.action_space = env.action_space

    def action(self, action: Any) -> Any:
        """Return ``action`` clipped to the env's bounds."""
        box = self.env.action_space
        assert isinstance(box, spaces.Box)
        return np.clip(action, box.low, box.high)


class RescaleAction(gym.wrappers.RescaleAction):  # type: ignore[type-arg]
    """Gymnasium's ``RescaleAction`` (the agent acts in ``[min_action, max_action]``, mapped affinely onto the env's
    Box), picklable: the same arithmetic, kept as two arrays instead of a local function.

    Example:
        >>> import gymnasium as gym, pickle
        >>> env = RescaleAction(gym.make("Pendulum-v1"), min_action=-1.0, max_action=1.0)
        >>> env.action_space
        Box(-1.0, 1.0, (1,), float32)
        >>> copy = pickle.loads(pickle.dumps(env))
    """

    def __init__(self, env: gym.Env[Any, Any], min_action: Any, max_action: Any) -> None:
        """Check the bounds as Gymnasium does (``TypeError``, ``ValueError``, ``InvalidBound``)."""
        super().__init__(env, min_action, max_action)
        del self.func  # Gymnasium's local function: action() does its work
        assert isinstance(env.action_space, spaces.Box)
        self.gradient, self.intercept = _affine(env.action_space, min_action, max_action)

    def action(self, action: Any) -> Any:
        """Return the agent's action mapped onto the env's bounds (Gymnasium's ``rescale_box`` backward map)."""
        return (action - self.intercept) / self.gradient


def _affine(box: spaces.Box, new_min: Any, new_max: Any) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The gradient and intercept of Gymnasium 1.4's ``rescale_box`` (its arithmetic and dtypes, step by step)."""
    new_min = new_min if isinstance(new_min, np.ndarray) else np.full(box.shape, new_min)
    new_max = new_max if isinstance(new_max, np.ndarray) else np.full(box.shape, new_max)
    wide = getattr(np, "float128", np.float64)  # float128 is not available everywhere
    min_finite, max_finite = np.isfinite(new_min), np.isfinite(new_max)
    both = min_finite & max_finite
    span = np.array(box.high[both], dtype=wide) - np.array(box.low[both], dtype=wide)
    gradient = np.ones_like(new_min, dtype=box.dtype)
    gradient[both] = (new_max[both] - new_min[both]) / span
    intercept = np.zeros_like(new_min, dtype=box.dtype)
    intercept[max_finite] = new_max[max_finite] - box.high[max_finite]
    intercept[min_finite] = gradient[min_finite] * -box.low[min_finite] + new_min[min_finite]
    return gradient, intercept
