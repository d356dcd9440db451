"""The configured Gymnasium wrappers that have a batched equivalent, as SB3 ``VecEnvWrapper``\\ s.

Observation and reward transforms carry over to a batched env: :func:`wrap` turns ``RelativePosition``,
``FlattenObservation`` and ``ScaleReward`` (a class or a partial of one, as a config selects it) into a
wrapper that transforms all copies at once, and raises :class:`UnsupportedWrapper` for any other. The
Gymnasium wrapper itself is built on an env that only has the spaces, so it checks its arguments and
derives the new spaces exactly as it would on a single env; the terminal observations in the infos of
finished copies are transformed by it, one copy at a time, as the single env's wrapper would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

from ..wrappers import FlattenObservation, RelativePosition, ScaleReward

Batch = Callable[[Any], Any]


class UnsupportedWrapper(ValueError):
    """A configured wrapper with no batched equivalent."""


class _SpacesOnly(gym.Env[Any, Any]):
    """An env with spaces and nothing else: what a Gymnasium wrapper needs to be built and checked."""

    def __init__(self, observation_space: spaces.Space[Any], action_space: spaces.Space[Any]) -> None:
        self.observation_space = observation_space
        self.action_space = action_space


class VecTransformObservation(VecEnvWrapper):
    """Apply a Gymnasium observation wrapper's transform to every copy (``batch``) and terminal observation."""

    def __init__(self, venv: VecEnv, single: gym.ObservationWrapper[Any, Any, Any], batch: Batch) -> None:
        """``single``: the Gymnasium wrapper (for spaces and terminal observations); ``batch``: all copies."""
        super().__init__(venv, observation_space=single.observation_space)
        self.single = single
        self.batch = batch

    def reset(self) -> VecEnvObs:
        """Reset and transform."""
        return self.batch(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        """Step and transform, the terminal observations of finished copies included."""
        obs, rewards, dones, infos = self.venv.step_wait()
        for index in np.flatnonzero(dones).tolist():
            info = infos[index]
            if "terminal_observation" in info:
                info["terminal_observation"] = self.single.observation(info["terminal_observation"])
        return self.batch(obs), rewards, dones, infos


class VecScaleReward(VecEnvWrapper):
    """``ScaleReward`` for all copies: every reward times ``scale`` (rounded to float32 once more)."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        """``scale``: checked by ``ScaleReward`` already."""
        super().__init__(venv)
        self.scale = scale

    def reset(self) -> VecEnvObs:
        """Reset."""
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        """Step and scale the rewards."""
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, (self.scale * rewards.astype(np.float64)).astype(np.float32), dones, infos


def _flatten_batch(space: spaces.Space[Any]) -> Batch:
    """Batched ``FlattenObservation`` for a Box or a Dict of Boxes (what the rlrun envs observe)."""
    flat = spaces.flatten_space(space)
    if isinstance(space, spaces.Box):
        return lambda obs: np.asarray(obs).reshape(len(obs), -1).astype(flat.dtype, copy=False)
    if isinstance(space, spaces.Dict) and all(isinstance(sub, spaces.Box) for sub in space.spaces.values()):

        def flatten(obs: dict[str, npt.NDArray[Any]]) -> npt.NDArray[Any]:
            parts = [np.asarray(obs[key]).reshape(len(obs[key]), -1) for key in space.spaces]
            return np.concatenate(parts, axis=1).astype(flat.dtype, copy=False)

        return flatten
    raise UnsupportedWrapper(f"FlattenObservation on batched envs supports Box and Dict-of-Box spaces, got {space}")


def _observation_transform(venv: VecEnv, single: Any) -> VecEnv:
    if isinstance(single, RelativePosition):
        return VecTransformObservation(venv, single, single.observation)  # np.subtract broadcasts over copies
    return VecTransformObservation(venv, single, _flatten_batch(venv.observation_space))


# Gymnasium wrapper class -> how to build its batched equivalent from the venv and the checked wrapper.
BATCHED: dict[type[gym.Wrapper[Any, Any, Any, Any]], Callable[[VecEnv, Any], VecEnv]] = {
    RelativePosition: _observation_transform,
    FlattenObservation: _observation_transform,  # rlrun's (conf/wrappers/flatten.yaml), picklable
    gym.wrappers.FlattenObservation: _observation_transform,  # Gymnasium's, in the configs of older runs
    ScaleReward: lambda venv, single: VecScaleReward(venv, single.scale),
}


def wrap(venv: VecEnv, wrapper: Callable[..., gym.Env[Any, Any]], name: str | None = None) -> VecEnv:
    """Wrap a batched ``venv`` in the batched equivalent of ``wrapper`` (a wrapper class or a partial of one).

    Raises :class:`UnsupportedWrapper` (naming the wrapper) when it has none, and the Gymnasium wrapper's own
    ``ValueError`` when it cannot apply to these spaces.
    """
    wrapper_class = getattr(wrapper, "func", wrapper)
    label = name or getattr(wrapper_class, "__name__", repr(wrapper_class))
    build = BATCHED.get(wrapper_class)  # type: ignore[arg-type]
    if build is None:
        supported = ", ".join(cls.__name__ for cls in BATCHED)
        raise UnsupportedWrapper(
            f"wrapper {label!r} has no batched version (batched envs take {supported}); "
            "use env.vectorization=gym to train with it"
        )
    single = wrapper(_SpacesOnly(venv.observation_space, venv.action_space))
    return build(venv, single)
