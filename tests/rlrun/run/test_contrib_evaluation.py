"""Recurrent PPO's evaluation on several eval copies at once: each copy's LSTM state and episode starts are
carried through the batched evaluation (SB3's ``evaluate_policy``), so it gives the episodes each copy gives alone."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from omegaconf import DictConfig
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.vec_env import VecEnv

from rlrun.make import models, vec_envs
from rlrun.make.vec_envs import eval_seed
from rlrun.run.evaluation import evaluate

EPISODES, COPIES = 5, 3


def recurrent(tiny_config: Callable[..., DictConfig]) -> tuple[DictConfig, RecurrentPPO]:
    cfg = tiny_config("env=pendulum", "algo=recurrent_ppo", "~tuned", "env.max_episode_steps=20")
    model = models.make_model(cfg, vec_envs.make_train_env(cfg))
    assert isinstance(model, RecurrentPPO) and models.policy_for(cfg, model.observation_space) == "MlpLstmPolicy"
    model.learn(32)  # parameters and LSTM away from their initial values
    return cfg, model


def alone(model: RecurrentPPO, env: VecEnv, episodes: int, carry: bool) -> list[float]:
    """``episodes`` returns of one copy, stepped by hand: the LSTM state carried from step to step (or not)."""
    returns: list[float] = []
    obs, state, starts = env.reset(), None, np.ones(1, dtype=bool)
    while len(returns) < episodes:
        action, new_state = model.predict(obs, state=state, episode_start=starts, deterministic=True)  # type: ignore[arg-type]
        state = new_state if carry else None
        obs, _, dones, infos = env.step(action)
        starts = dones
        if dones[0] and "episode" in infos[0]:
            returns.append(float(infos[0]["episode"]["r"]))
    return returns


def test_batched_evaluation_of_recurrent_ppo_gives_each_copys_own_episodes(
    tiny_config: Callable[..., DictConfig],
) -> None:
    cfg, model = recurrent(tiny_config)
    batched = evaluate(model, vec_envs.make_eval_env(cfg, n_envs=COPIES), EPISODES)
    again = evaluate(model, vec_envs.make_eval_env(cfg, n_envs=COPIES), EPISODES)
    assert batched.returns == again.returns and batched.lengths == again.lengths  # deterministic

    def copies(carry: bool) -> list[float]:
        return [
            ret
            for i in range(COPIES)
            for ret in alone(
                model, vec_envs.make_eval_env(cfg, seed=eval_seed(cfg.seed) + i), (EPISODES + i) // COPIES, carry
            )
        ]

    assert sorted(batched.returns) == sorted(copies(carry=True))
    assert sorted(batched.returns) != sorted(copies(carry=False))  # the LSTM state matters to these returns
