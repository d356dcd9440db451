"""NaN where SB3's ``VecCheckNan`` does not look: the observation an episode ended on (``check_nan=true``), and
an evaluation's returns (always: a NaN ``final`` would pass for a result), each naming the step and its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO

from rlrun.make.nan import NonFiniteValue
from rlrun.make.vec_envs import eval_seed
from rlrun.run.evaluation import EvalResult, refuse_non_finite
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


class NaNAtEnd(gym.Env[np.ndarray, int]):
    """Episodes of 5 steps; the copy seeded ``bad_seed`` ends them on a NaN observation (``nan_obs``) or gives
    NaN rewards (``nan_reward``); every other observation is finite."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, bad_seed: int = 1, nan_obs: bool = True, nan_reward: bool = False) -> None:
        self.bad_seed, self.nan_obs, self.nan_reward, self.seed, self.t = bad_seed, nan_obs, nan_reward, None, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.seed = seed
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        bad, end = self.seed == self.bad_seed, self.t >= 5
        obs = np.full(2, np.nan if bad and end and self.nan_obs else 0.0, np.float32)
        return obs, float("nan") if bad and self.nan_reward else 0.0, end, False, {}


gym.register("rlrun-test/NaNAtEnd-v0", entry_point=NaNAtEnd, max_episode_steps=100)


def test_check_nan_finds_nan_in_a_terminal_observation(tmp_path: Path) -> None:
    cfg = shrink(
        compose_config(
            "env=gym", "env.id=rlrun-test/NaNAtEnd-v0", "algo=ppo", "~tuned", "env.n_envs=2", "check_nan=true"
        ),
        256,
    )
    with pytest.raises(
        NonFiniteValue, match=r"nan in the terminal observation returned by the env at step 10, env copy 1"
    ):
        train(cfg, tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "failed"


def test_an_evaluation_returning_nan_fails_the_run_and_blames_the_env(tmp_path: Path) -> None:
    overrides = ["env=gym", "env.id=rlrun-test/NaNAtEnd-v0", "algo=ppo", "~tuned", "env.n_envs=1", "eval.n_envs=1"]
    bad = ["+env.kwargs.nan_obs=false", "+env.kwargs.nan_reward=true", f"+env.kwargs.bad_seed={eval_seed(0)}"]
    cfg = shrink(compose_config(*overrides, *bad, "seed=0"), 256)  # NaN rewards in the eval env only

    with pytest.raises(NonFiniteValue, match=r"evaluation at step 128 returned nan .* the env produced it"):
        train(cfg, tmp_path)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "failed" and record["final"] is None


def test_an_evaluation_returning_nan_from_a_diverged_model_blames_the_model() -> None:
    model = PPO("MlpPolicy", "CartPole-v1", policy_kwargs={"net_arch": [4]}, device="cpu")
    next(model.policy.parameters()).data.fill_(float("nan"))
    with pytest.raises(NonFiniteValue, match=r"evaluation at step 0 returned nan in 1 of 2 episodes; the model"):
        refuse_non_finite(EvalResult([1.0, float("nan")], [5, 5]), model)
    with pytest.raises(NonFiniteValue, match=r"the model's parameters hold NaN or inf at step 0"):
        refuse_non_finite(EvalResult([1.0, 2.0], [5, 5]), model)  # finite returns from NaN parameters: still refused
    healthy = PPO("MlpPolicy", "CartPole-v1", policy_kwargs={"net_arch": [4]}, device="cpu")
    refuse_non_finite(EvalResult([1.0, 2.0], [5, 5]), healthy)  # finite returns of a finite model: nothing to say
