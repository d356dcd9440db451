"""The checks of every run, in the order of the data's flow, each done once, each on what it is given.

A run checks its config before anything is made (:func:`config_checks`: ranges, the backend), then with the class it
trains (:func:`algorithm_checks`: the algorithm's arguments, batched envs, budgets), then its envs as they were made
(:func:`fit_checks`); what the builders raise is turned into the user's words by :func:`observation_checks` (one
env copy's observations) and :func:`refuse_model` (the algorithm's own message). The run calls the builders itself
(:mod:`rlrun.run.training`), in order, with these checks between them, which make nothing, write nothing in the
process's environment and import no JAX.

Where no training follows in the same process, :func:`rlrun.run.dry_run.preflight` goes through the same steps,
calling the builders as a run does, with a throwaway env and model.
"""

from __future__ import annotations

import logging
from typing import NoReturn

from gymnasium import spaces
from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.checks import constructor, memory, rewards, rules
from rlrun.checks.rules import EnvFacts
from rlrun.config.errors import UserError, raise_if
from rlrun.make import jax_models, models, native
from rlrun.make.vec_envs import FirstStep

log = logging.getLogger("rlrun")


def config_checks(cfg: DictConfig) -> None:
    """What the config alone decides before any class is made: ranges (``torch_threads`` among them, which the jax
    backend's threads follow) and whether the backend has the algorithm."""
    raise_if(rules.range_problems(cfg))
    raise_if(jax_models.unavailable(cfg))  # algo.backend: an algorithm SBX lacks, SBX not installed


def algorithm_checks(cfg: DictConfig, model_cls: type[BaseAlgorithm]) -> type[BaseAlgorithm]:
    """What the config decides with the class the run trains (``model_cls``: SB3's, or SBX's with jax): what SBX
    cannot take, the algorithm's argument names and types, whether the envs can be batched, budgets. Returns SB3's
    class, which the rules check against (its budget warnings: :func:`log_budget_warnings`, once the envs are made)."""
    raise_if(jax_models.problems(cfg, model_cls))  # algo.backend=jax: torch classes, SB3 arguments SBX lacks
    algo_cls = models.algo_class(cfg)
    raise_if(constructor.algo_problems(cfg, model_cls))
    raise_if(native.problems(cfg) + rules.budget_problems(cfg, algo_cls))
    return algo_cls


def log_budget_warnings(cfg: DictConfig, env: EnvFacts, algo_cls: type[BaseAlgorithm]) -> None:
    """Log what the budget probably does not do as meant (:func:`rlrun.checks.rules.budget_warnings`), each with
    its fix: with the envs made, since an evaluation episode's length is the env's time limit."""
    for problem, fix in rules.budget_warnings(cfg, algo_cls, env):
        log.warning("warning: %s\n  fix: %s", problem, fix)


def fit_checks(cfg: DictConfig, env: EnvFacts, algo_cls: type[BaseAlgorithm], model_cls: type[BaseAlgorithm]) -> str:
    """Whether the algorithm fits the envs (after the wrappers) and its replay buffer the memory, before the model
    allocates it; returns the policy for their observations (and logs the note when images too small for a CNN get
    MlpPolicy)."""
    raise_if(rules.fit_problems(cfg, env, algo_cls, models.uses_her(cfg), model_cls))
    raise_if(memory.buffer_problems(cfg, env, algo_cls))
    if note := rules.small_image_note(cfg, env.observation_space):
        log.info("%s", note)
    return models.policy_for(cfg, env.observation_space)


def reward_checks(cfg: DictConfig, first: FirstStep | None) -> None:
    """A reward that is not one number (a vector of objectives, an object), from the first step of one env copy
    (:func:`rlrun.make.vec_envs.first_step`; None: it could not step, and training meets that where it would)."""
    if first is not None:
        raise_if(rewards.reward_problems(cfg.env.id, first.reward))


def observation_checks(cfg: DictConfig, observation_space: spaces.Space) -> None:
    """Observations SB3 cannot take (a Text subspace, such as MiniGrid's ``mission``), named with the wrapper that
    removes them: they already fail while the envs are vectorised (SB3's vec env allocates a buffer per key), so
    the run checks the space of one env copy made as training makes it."""
    raise_if(rules.observation_problems(cfg.env.id, observation_space))


def refuse_model(cfg: DictConfig, error: Exception) -> NoReturn:
    """What the algorithm raised while its model was built (``error``), as one user error naming the ``algo.*`` keys
    its message mentions."""
    raise UserError(*constructor.rejection(cfg, error))
