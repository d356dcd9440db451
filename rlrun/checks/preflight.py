"""The checks of every run, in the order of the data's flow, each done once.

A run checks its config first (:func:`config_checks`: ranges, algorithm arguments, batched envs, budgets; no env
is built), then the envs and model it will train with as they are built (:func:`fit_checks`, :func:`built_model`).
Where no training follows in the same process (the sweep's parent checking what all its jobs share,
``rlrun-tune`` before its first trial), :func:`preflight` applies all of them to a throwaway env and model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import closing
from typing import TypeVar

from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.checks import constructor, memory, rules
from rlrun.checks.rules import EnvFacts, raise_if
from rlrun.config.errors import UserError
from rlrun.make import jax_models, models, native, vec_envs

log = logging.getLogger("rlrun")

Model = TypeVar("Model", bound=BaseAlgorithm)
Envs = TypeVar("Envs")


def config_checks(cfg: DictConfig) -> type[BaseAlgorithm]:
    """What the config alone decides: ranges, the algorithm's argument names and types, whether the envs can be
    batched, budgets. Logs the budget warnings; returns the algorithm's class."""
    raise_if(rules.range_problems(cfg))
    raise_if(jax_models.problems(cfg))  # algo.backend: what SBX cannot take
    algo_cls = models.algo_class(cfg)
    raise_if(constructor.algo_problems(cfg, models.model_class(cfg)))
    raise_if(native.problems(cfg) + rules.budget_problems(cfg, algo_cls))
    for problem, fix in rules.budget_warnings(cfg, algo_cls):
        log.warning("warning: %s\n  fix: %s", problem, fix)
    return algo_cls


def fit_checks(cfg: DictConfig, env: EnvFacts, algo_cls: type[BaseAlgorithm]) -> str:
    """Whether the algorithm fits the envs (after the wrappers) and its replay buffer the memory, before the model
    allocates it; returns the policy for their observations (and logs the note when images too small for a CNN get
    MlpPolicy)."""
    raise_if(rules.fit_problems(cfg, env, algo_cls, models.uses_her(cfg)))
    raise_if(memory.buffer_problems(cfg, env, algo_cls))
    if note := rules.small_image_note(cfg, env.observation_space):
        log.info("%s", note)
    return models.policy_for(cfg, env.observation_space)


def built_envs(cfg: DictConfig, make: Callable[[], Envs]) -> Envs:
    """``make()``'s vectorised envs. Observations SB3 cannot take (a Text subspace, such as MiniGrid's
    ``mission``) already fail while the envs are vectorised (SB3's vec env allocates a buffer per key): then one
    env copy, made as training makes it, names the subspace and the wrapper that removes it (exit 2). So does a
    copy that cannot be made, where subprocess workers failed to make theirs."""
    try:
        return make()
    except UserError:
        raise
    except Exception as error:
        try:  # a UserError here says what subprocess workers met (a bad id: their pipe only broke)
            with closing(vec_envs.make_env(cfg)) as probe:
                problems = rules.observation_problems(cfg.env.id, probe.observation_space)
        except UserError:
            raise
        except Exception:  # the copy fails otherwise: the first error says more
            problems = []
        raise_if(problems)
        raise error


def built_model(cfg: DictConfig, make: Callable[[], Model]) -> Model:
    """``make()``'s model; what the algorithm raises while being built is one user error naming the ``algo.*``
    keys its message mentions."""
    try:
        return make()
    except Exception as error:
        raise_if([constructor.rejection(cfg, error)])
        raise  # pragma: no cover  (raise_if raised)


def preflight(cfg: DictConfig) -> str:
    """Every check of a run, on a throwaway env and model, for a process that does not train next (a sweep's
    parent, ``rlrun-tune``); returns the policy."""
    algo_cls = config_checks(cfg)
    probe = vec_envs.make_env(cfg)
    try:
        policy = fit_checks(cfg, EnvFacts.of(probe), algo_cls)
    finally:
        probe.close()
    raise_if(constructor.construction_problems(cfg))  # a throwaway model on in-process copies
    return policy
