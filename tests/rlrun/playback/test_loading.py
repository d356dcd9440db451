"""Loading a run (rlrun/playback/loading.py, ``rlrun.load_run``): a plain SB3 model and its eval env, any snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecNormalize

import rlrun
from rlrun.playback.loading import eval_copies
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


@pytest.mark.parametrize("snapshot", ["final", "latest", "best", "512"])
def test_any_snapshot_can_be_evaluated(finished_run: Path, snapshot: str) -> None:
    model, env = rlrun.load_run(finished_run, snapshot=snapshot)
    expected = 1024 if snapshot == "final" else None
    if snapshot == "512":
        expected = 512
    if expected is not None:
        assert model.num_timesteps == expected
    assert env.num_envs == 1


def test_runs_from_before_eval_n_envs_evaluate_on_one_copy(finished_run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    cfg = OmegaConf.load(finished_run / "config.yaml")
    del cfg.eval.n_envs
    OmegaConf.save(cfg, old / "config.yaml")
    assert eval_copies(old) == 1


def test_load_run_gives_a_plain_sb3_model_and_a_ready_env(finished_run: Path) -> None:
    model, env = rlrun.load_run(finished_run)
    assert isinstance(model, PPO)
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(action[0])


def test_load_run_applies_normalisation(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=pendulum", "algo=ppo", "env.normalize.obs=true"), 256)
    train(cfg, tmp_path)
    _, env = rlrun.load_run(tmp_path)
    assert isinstance(env, VecNormalize) and not env.training and env.obs_rms.count > 1
