"""Vectorised evaluation: episodes shared among copies, deterministic, success counted per episode."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from omegaconf import DictConfig
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import DummyVecEnv

from rlrun.config.keys import config_hash
from rlrun.make import models, vec_envs
from rlrun.make.vec_envs import eval_seed
from rlrun.run.evaluation import evaluate
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config


def _model(cfg: DictConfig, n_envs: int) -> tuple[PPO, object]:
    """An untrained (seeded) model and a fresh eval env of ``n_envs`` copies."""
    model = models.make_model(cfg, vec_envs.make_train_env(cfg))  # SB3 seeds the env it is built on: not the eval env
    assert isinstance(model, PPO)
    return model, vec_envs.make_eval_env(cfg, n_envs=n_envs)


@pytest.mark.parametrize(("episodes", "n_envs"), [(7, 3), (10, 10), (2, 4), (5, 1)])
def test_episodes_are_shared_out_among_copies(
    tiny_config: Callable[..., DictConfig], episodes: int, n_envs: int
) -> None:
    model, env = _model(tiny_config("env=cartpole", "algo=ppo"), n_envs)
    ends = np.zeros(n_envs, dtype=int)

    def count(locals_: dict, _globals: dict) -> None:
        if locals_["done"]:
            ends[locals_["i"]] += 1

    result = evaluate(model, env, episodes, on_step=count)
    assert len(result.returns) == len(result.lengths) == episodes
    assert list(ends) == [(episodes + i) // n_envs for i in range(n_envs)]


def test_two_evaluations_on_fresh_envs_are_identical(tiny_config: Callable[..., DictConfig]) -> None:
    cfg = tiny_config("env=cartpole", "algo=ppo")
    first = evaluate(*_model(cfg, 4), 9)
    second = evaluate(*_model(cfg, 4), 9)
    assert first.returns == second.returns and first.lengths == second.lengths
    assert len(set(first.returns)) > 1  # the copies start from different states (eval seed + i)


def test_success_is_counted_once_per_episode(tiny_config: Callable[..., DictConfig]) -> None:
    cfg = tiny_config("env=gridworld", "algo=ppo", "env.max_episode_steps=6")
    result = evaluate(*_model(cfg, 4), 11)
    assert len(result.successes) == len(result.returns) == 11
    # GridWorld pays 1 on reaching the target and ends there: success exactly when the return is positive
    assert result.successes == [r > 0 for r in result.returns]
    assert result.success_rate == pytest.approx(np.mean([r > 0 for r in result.returns]))


def test_no_success_rate_without_is_success(tiny_config: Callable[..., DictConfig]) -> None:
    result = evaluate(*_model(tiny_config("env=cartpole", "algo=ppo"), 3), 4)
    assert result.success_rate is None and result.summary()["success_rate"] is None


def test_one_copy_matches_sb3_evaluate_policy(tiny_config: Callable[..., DictConfig]) -> None:
    cfg = tiny_config("env=cartpole", "algo=ppo")
    model, env = _model(cfg, 1)
    ours = evaluate(model, env, 5)
    returns, lengths = evaluate_policy(
        model, vec_envs.make_eval_env(cfg, n_envs=1), n_eval_episodes=5, return_episode_rewards=True
    )
    assert ours.returns == returns and ours.lengths == lengths


def test_training_evaluates_on_eval_n_envs_copies(tiny_config: Callable[..., DictConfig], tmp_path: Path) -> None:
    cfg = tiny_config("env=cartpole", "algo=ppo", "eval.n_envs=3")
    cfg.eval.every = 100_000  # the final evaluation only: it starts from the eval env's first reset
    cfg.eval.final_episodes = 6
    final = train(cfg, tmp_path)
    model = PPO.load(tmp_path / "model.zip")
    fresh = evaluate(model, vec_envs.make_eval_env(cfg, n_envs=3), 6)
    assert final["returns"] == fresh.returns
    assert json.loads((tmp_path / "run.json").read_text())["final"]["episodes"] == 6


def _rows(path: Path) -> list[list[str]]:
    """eval.csv without the wall_s column (the only one that may differ between runs)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    wall = rows[0].index("wall_s")
    return [row[:wall] + row[wall + 1 :] for row in rows]


def test_eval_csv_of_two_identical_runs_match(tiny_config: Callable[..., DictConfig], tmp_path: Path) -> None:
    for name in ("a", "b"):
        cfg = tiny_config("env=cartpole", "algo=ppo", "eval.n_envs=4", steps=256)
        cfg.eval.every = 64
        cfg.eval.episodes = 5
        train(cfg, tmp_path / name)
    first, second = _rows(tmp_path / "a" / "eval.csv"), _rows(tmp_path / "b" / "eval.csv")
    assert len(first) == 5 and first == second  # header + 4 evaluations
    final_a = json.loads((tmp_path / "a" / "run.json").read_text())["final"]
    final_b = json.loads((tmp_path / "b" / "run.json").read_text())["final"]
    assert final_a == final_b


def test_no_periodic_evaluation_is_due_past_the_budget(tmp_path: Path) -> None:
    """A budget below one PPO rollout (gridworld_ppo: 128 steps on each of 8 copies): the rollout's steps past the
    budget are not each evaluated; the evaluations are those of the budget's steps."""
    cfg = compose_config("env=gridworld", "algo=ppo", "total_timesteps=64", "eval.every=8", "progress_bar=false")
    train(cfg, tmp_path)
    rows = _rows(tmp_path / "eval.csv")[1:]
    assert [int(row[0]) for row in rows] == list(range(8, 65, 8))  # one per vectorised step of 8 copies, to 64
    assert json.loads((tmp_path / "run.json").read_text())["timesteps"] == 1024  # the whole rollout was trained


def test_eval_n_envs_is_a_run_key_whose_copy_i_is_seeded_eval_seed_plus_i() -> None:
    """``eval.n_envs``: in-process copies, 5 by default, copy i seeded with the eval seed + i; it changes no
    training, so it stays out of the config hash."""
    cfg = compose_config("env=cartpole", "algo=ppo", "seed=3")
    assert cfg.eval.n_envs == 5
    assert config_hash(cfg) == config_hash(compose_config("env=cartpole", "algo=ppo", "seed=3", "eval.n_envs=2"))
    env = vec_envs.make_eval_env(cfg, n_envs=cfg.eval.n_envs)
    assert isinstance(env, DummyVecEnv) and env.num_envs == 5
    starts = env.reset()
    for i in range(5):
        single, _ = gym.make("CartPole-v1").reset(seed=eval_seed(3) + i)
        assert np.array_equal(starts[i], single), f"copy {i}"


def test_sampled_evaluation_repeats_and_leaves_the_random_streams_alone(
    tiny_config: Callable[..., DictConfig],
) -> None:
    """``eval.deterministic=false`` (RL Zoo's MiniGrid and Atari evaluation): the same seed repeats the same
    episodes, they differ from the deterministic policy's, and torch's and numpy's generators are untouched."""
    import torch

    cfg = tiny_config("env=cartpole", "algo=ppo")
    model, env = _model(cfg, 4)  # building seeds the generators: their states are taken after it
    torch.manual_seed(5)
    np.random.seed(5)
    before = torch.random.get_rng_state(), np.random.get_state()[1].copy()
    sampled = evaluate(model, env, 12, sample_seed=7)
    assert torch.equal(torch.random.get_rng_state(), before[0])
    assert np.array_equal(np.random.get_state()[1], before[1])
    assert evaluate(*_model(cfg, 4), 12, sample_seed=7).returns == sampled.returns
    assert evaluate(*_model(cfg, 4), 12, sample_seed=8).returns != sampled.returns
    assert evaluate(*_model(cfg, 4), 12).returns != sampled.returns


def test_sampled_evaluation_changes_no_training(tiny_config: Callable[..., DictConfig], tmp_path: Path) -> None:
    """Two runs alike but for ``eval.deterministic`` train the same weights; only their evaluations differ."""
    for name, deterministic in (("det", True), ("sampled", False)):
        cfg = tiny_config("env=cartpole", "algo=ppo", "eval.n_envs=4", f"eval.deterministic={deterministic}")
        cfg.eval.every = 64
        cfg.eval.episodes = 4
        train(cfg, tmp_path / name)
    weights = [PPO.load(tmp_path / name / "model.zip").policy.state_dict() for name in ("det", "sampled")]
    assert all(np.array_equal(weights[0][k].numpy(), weights[1][k].numpy()) for k in weights[0])
    assert _rows(tmp_path / "det" / "eval.csv") != _rows(tmp_path / "sampled" / "eval.csv")
