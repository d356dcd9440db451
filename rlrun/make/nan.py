"""``check_nan=true``: stop at the first NaN or inf, naming the step, the env copy and the value.

SB3's ``VecCheckNan`` finds the bad value but not which copy produced it or when; this subclass
adds both, so the user can reproduce it with ``env.seed + index``. It also checks what ``VecCheckNan`` does not:
the observation an episode ended on, which a VecEnv hands over in ``infos[i]["terminal_observation"]`` (the
next episode's first observation takes its place) and which off-policy algorithms store and learn from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from stable_baselines3.common.vec_env import VecCheckNan, VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn


class NonFiniteValue(ValueError):
    """A NaN or inf in observations (terminal ones too), rewards or actions during training, or in an
    evaluation's returns."""


class CheckNan(VecCheckNan):
    """``VecCheckNan`` that raises :class:`NonFiniteValue` naming the step and the env copy."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv, raise_exception=True)
        self.steps = 0

    def reset(self) -> VecEnvObs:
        self._where = "at reset"
        return super().reset()

    def step_async(self, actions: np.ndarray) -> None:
        self._where = f"in the actions the policy chose after step {self.steps}"
        super().step_async(actions)

    def step_wait(self) -> VecEnvStepReturn:
        self.steps += self.num_envs
        self._where = f"returned by the env at step {self.steps}"
        observations, rewards, dones, infos = super().step_wait()
        for index, info in enumerate(infos):
            self._check_terminal(index, info.get("terminal_observation"))
        return observations, rewards, dones, infos

    def _check_terminal(self, index: int, observation: Any) -> None:
        """The observation copy ``index`` ended its episode on (none: the episode goes on)."""
        if observation is None:
            return
        parts = observation.items() if isinstance(observation, dict) else [("", observation)]
        for key, value in parts:
            array = np.asarray(value, dtype=float)
            if not np.isfinite(array).all():
                kind = "nan" if np.isnan(array).any() else "inf"
                where = f' (key "{key}")' if key else ""
                raise NonFiniteValue(
                    f"check_nan: found {kind} in the terminal observation{where} {self._where}, env copy {index} "
                    f"(seeded seed + index): {array.reshape(-1).tolist()}"
                )

    def check_array_value(self, name: str, value: np.ndarray) -> list[tuple[str, str]]:
        found = super().check_array_value(name, value)
        if found:
            rows = np.asarray(value, dtype=float).reshape(len(value), -1)
            copies = np.flatnonzero(~np.isfinite(rows).all(axis=1)).tolist()
            kinds = " and ".join(kind for _, kind in found)
            raise NonFiniteValue(
                f"check_nan: found {kinds} in {name} {self._where}, env copy {', '.join(map(str, copies))} "
                f"(seeded seed + index): {rows[copies[0]].tolist()}"
            )
        return found


def parameters_finite(model: Any) -> bool | None:
    """Whether every parameter of the model's policy is finite (one reduction per tensor, no copy: cheap at each
    evaluation); None for a model without torch parameters (SBX's, on JAX)."""
    parameters = getattr(getattr(model, "policy", None), "parameters", None)
    if not callable(parameters):
        return None
    return all(bool(torch.isfinite(p).all()) for p in parameters())


def refuse_non_finite_parameters(model: Any) -> None:
    """A model whose parameters turned NaN or inf fails its run, whatever its returns say: NaN observations with a
    constant reward evaluate to a finite return while the policy learned nothing but NaN."""
    if parameters_finite(model) is False:
        raise NonFiniteValue(
            f"the model's parameters hold NaN or inf at step {model.num_timesteps} (training diverged, or the env's "
            "observations or rewards are not finite): try a lower algo.learning_rate or env.normalize, and "
            "check_nan=true to stop at the first non-finite value the env returns, naming the step and env copy"
        )
