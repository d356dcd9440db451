"""A run whose model's parameters turn NaN fails as such, not ``completed`` (issue 48): NaN observations with a
constant reward evaluate to a finite return, so the returns alone never told."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from rlrun.make import nan
from rlrun.make.nan import NonFiniteValue
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


class NaNObservations(gym.Env[np.ndarray, np.ndarray]):
    """Every observation NaN, every reward 1: returns stay finite whatever the policy does."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.full(2, np.nan, np.float32), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.full(2, np.nan, np.float32), 1.0, False, False, {}


gym.register("rlrun-test/NaNObservations-v0", entry_point=NaNObservations, max_episode_steps=16)


def test_a_run_whose_parameters_turn_nan_fails_naming_them(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=gym", "env.id=rlrun-test/NaNObservations-v0", "algo=ppo", "~tuned"), 64)
    cfg.algo.n_steps, cfg.algo.batch_size = 32, 32
    with pytest.raises(NonFiniteValue, match="the model's parameters hold NaN or inf at step"):
        train(cfg, tmp_path)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "failed" and "parameters hold NaN" in record["error"]
    assert not (tmp_path / "model.zip").exists()  # never saved as a result


def test_parameters_are_looked_at_only_where_there_are_torch_ones() -> None:
    policy = torch.nn.Linear(2, 1)

    class Model:
        num_timesteps = 7

    model = Model()
    assert nan.parameters_finite(model) is None  # SBX's: no torch parameters
    model.policy = policy  # type: ignore[attr-defined]
    assert nan.parameters_finite(model) is True
    with torch.no_grad():
        policy.bias.fill_(float("inf"))
    assert nan.parameters_finite(model) is False
    with pytest.raises(NonFiniteValue, match="at step 7"):
        nan.refuse_non_finite_parameters(model)
