"""HER on TQC (conf/algo/her_tqc.yaml), as RL Baselines3 Zoo trains the Fetch tasks: rlrun sees it uses HER, its
checks accept it on goal envs and refuse it elsewhere, and it trains a few steps on rlrun's goal env and FetchReach."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from omegaconf import DictConfig
from sb3_contrib import TQC

from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.run import dry_run
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, read_run_json, shrink

STEPS = 64
# Gymnasium-Robotics' Fetch envs need it and a MuJoCo it works with (DESIGN.md: 3.3-3.11)
ROBOTICS = importlib.util.find_spec("gymnasium_robotics") is not None


def her_tqc(env: str, *overrides: str) -> DictConfig:
    """HER on TQC for ``STEPS`` steps: learning starts after the first episode (50 steps), before the budget ends."""
    cfg = shrink(compose_config(f"env={env}", "algo=her_tqc", *overrides), STEPS)
    cfg.algo.learning_starts = 51
    cfg.eval.n_envs = 1
    return cfg


def test_her_tqc_is_tqc_with_hers_buffer_and_the_her_checks_take_it() -> None:
    cfg = her_tqc("pointgoal")
    assert models.algo_class(cfg) is TQC and models.uses_her(cfg)
    assert dry_run.preflight(cfg) == "MultiInputPolicy"
    with pytest.raises(UserError, match="HER needs a goal env") as refused:
        dry_run.preflight(her_tqc("pointenv"))
    assert "drop HER: algo=tqc" in str(refused.value)  # the same algorithm without HER's buffer
    with pytest.raises(UserError, match="replay_buffer_kwargs.goal_selection_strategy=bogus"):
        dry_run.preflight(her_tqc("pointgoal", "algo.replay_buffer_kwargs.goal_selection_strategy=bogus"))


@pytest.mark.parametrize(
    "env",
    [
        "pointgoal",
        pytest.param("fetchreach", marks=pytest.mark.skipif(not ROBOTICS, reason="needs rlrun[robotics]")),
    ],
)
def test_her_tqc_trains_on_a_goal_env(tmp_path: Path, env: str) -> None:
    final = train(her_tqc(env), tmp_path)
    record = read_run_json(tmp_path)
    assert record["status"] == "completed" and record["timesteps"] >= STEPS
    assert final["success_rate"] is not None  # both report is_success
    model = TQC.load(tmp_path / "model.zip", env=vec_envs.make_vec(her_tqc(env), 1, seed=0), device="cpu")
    assert model.replay_buffer is not None and type(model.replay_buffer).__name__ == "HerReplayBuffer"
