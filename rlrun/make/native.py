"""``env.vectorization=native``: the training envs as one numpy-batched VecEnv (``rlrun.envs.batched``).

The batched env replaces ``DummyVecEnv`` over ``gym.make``; SB3's ``VecMonitor`` takes the place of the
per-copy ``Monitor`` (so ``info["episode"]`` and ``rollout/ep_rew_mean`` are as before), then the configured
wrappers follow as their batched equivalents. Evaluation, rendering and the checks of single envs keep
using ``gym.make``, so native and gym runs are evaluated identically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from rlrun.config.errors import Problem, UserError
from rlrun.envs import batched
from rlrun.envs.batched.wrappers import BATCHED

Wrapper = Callable[[gym.Env], gym.Env]


def problems(cfg: DictConfig) -> list[Problem]:
    """What ``env.vectorization=native`` cannot do with this config: the env, the wrappers, subprocesses."""
    if str(cfg.env.get("vectorization", "gym")).lower() != "native":
        return []
    found: list[Problem] = []
    if cfg.env.id not in batched.ENV_CLASSES:
        found.append(
            (
                f"env.vectorization=native: env.id={cfg.env.id!r} has no native batched version "
                f"(those with one: {', '.join(batched.ENV_CLASSES)})",
                "use env.vectorization=gym for this env",
            )
        )
    if cfg.env.vec_env != "dummy":
        found.append(
            (
                f"env.vec_env={cfg.env.vec_env} applies to env.vectorization=gym only: native envs step in-process",
                "drop env.vec_env, or use env.vectorization=gym",
            )
        )
    found += family_problems(cfg)
    for name, node in cfg.wrappers.items():
        target = node.get("_target_") if isinstance(node, DictConfig) else None
        wrapper_class = _class_or_none(target)
        if wrapper_class is not None and wrapper_class not in BATCHED:
            supported = ", ".join(cls.__name__ for cls in BATCHED)
            found.append(
                (
                    f"wrapper {name!r} ({target}) has no batched version for env.vectorization=native "
                    f"(batched: {supported})",
                    f"use env.vectorization=gym to train with {name!r}, or remove it from wrappers=[...]",
                )
            )
    return found


def family_problems(cfg: DictConfig) -> list[Problem]:
    """``env.wrappers`` and ``env.frame_stack`` (what an env family's config adds) have no batched versions."""
    found: list[Problem] = []
    for key in ("wrappers", "frame_stack"):
        if cfg.env.get(key):
            found.append(
                (
                    f"env.{key} (from the env's config) has no batched version for env.vectorization=native",
                    "use env.vectorization=gym for this env",
                )
            )
    return found


def _class_or_none(target: Any) -> type | None:
    """The class a wrapper's ``_target_`` names; None when it is not a plain importable class."""
    if not isinstance(target, str):
        return None
    try:
        return get_class(target)
    except (ImportError, ValueError):
        return None  # building the wrapper reports it, with its own message


def make_vec(cfg: DictConfig, wrappers: list[tuple[str, Wrapper]]) -> VecEnv:
    """``env.n_envs`` batched copies seeded ``seed + i``, monitored, then the wrappers' batched versions."""
    env_cfg = cfg.env
    if refused := family_problems(cfg):
        raise UserError(*refused[0])
    kwargs = cast(dict[str, Any], OmegaConf.to_container(env_cfg.kwargs, resolve=True))
    try:
        venv: VecEnv = batched.make_vec_env(env_cfg.id, env_cfg.n_envs, cfg.seed, env_cfg.max_episode_steps, **kwargs)
    except batched.NoBatchedVersion as error:
        raise UserError(str(error), "use env.vectorization=gym for this env") from None
    except (TypeError, ValueError) as error:
        raise UserError(
            f"env.id={env_cfg.id!r} rejected its arguments: {error}", "check env.kwargs against the env's constructor"
        ) from None
    venv = VecMonitor(venv)  # Monitor's episode statistics, below the wrappers as for gym envs
    for name, wrapper in wrappers:
        try:
            venv = batched.wrap(venv, wrapper, name)
        except batched.UnsupportedWrapper as error:
            raise UserError(str(error), f"use env.vectorization=gym, or remove {name!r} from wrappers=[...]") from None
        except (ValueError, TypeError, AssertionError) as error:
            raise UserError(
                f"wrapper {name!r} cannot apply to {env_cfg.id}: {error}",
                "remove it from wrappers=[...] or put it after a wrapper that makes it fit",
            ) from None
    return venv
