"""``rlrun-check``'s checks of what a random episode shows about an env from another package: whether its
episodes end at all, and whether its observations stay inside the bounds its space declares.

Both step one env copy, built as training builds it, with random actions.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from omegaconf import DictConfig

from rlrun.checks.env_checks import FAIL, PASS, Result
from rlrun.make import episode_cap, vec_envs

WARN = "WARN"  # reported, never a failure: the run trains, but something is likely wrong
EPISODE_ENDS = "episodes end"
BOUNDS = "observation bounds"


def _random_steps(env: gym.Env, steps: int, seed: int) -> Any:
    """Yield ``(observation, ended)`` for a reset and then ``steps`` random steps (a reset after each end)."""
    env.action_space.seed(seed)
    yield env.reset(seed=seed)[0], False
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        ended = bool(terminated or truncated)
        yield obs, ended
        if ended:
            yield env.reset()[0], False


def episode_ends(cfg: DictConfig, steps: int) -> Result:
    """An env with no time limit must end an episode within ``steps`` random steps: an episode that never ends
    would hold up evaluation (capped at :data:`~rlrun.make.episode_cap.EVAL_MAX_EPISODE_STEPS` steps there)."""
    with closing(vec_envs.make_env(cfg)) as env:
        limit = episode_cap.time_limit(env)
        if limit is not None:
            return Result(EPISODE_ENDS, PASS, f"time limit of {limit}")
        ended = sum(end for _, end in _random_steps(env, steps, cfg.seed))
    if ended:
        return Result(EPISODE_ENDS, PASS, f"no time limit; {ended} random episodes ended in {steps} steps")
    cap = episode_cap.EVAL_MAX_EPISODE_STEPS
    return Result(
        EPISODE_ENDS,
        FAIL,
        f"{cfg.env.id} declares no time limit and no episode of {steps} random steps ended: an episode may never "
        f"end, and evaluation would cut each one at {cap} steps",
        [f"fix: env.max_episode_steps=N (the longest an episode may last, e.g. env.max_episode_steps={cap})"],
    )


def _outside(space: spaces.Space, obs: Any, key: str = "") -> dict[str, float]:
    """How far each ``Box`` part of ``obs`` lies outside its bounds, by key path (absent when inside)."""
    if isinstance(space, spaces.Dict):
        found: dict[str, float] = {}
        for name, subspace in space.spaces.items():
            found.update(_outside(subspace, obs[name], f"{key}[{name!r}]"))
        return found
    if not isinstance(space, spaces.Box):
        return {}
    value = np.asarray(obs, dtype=np.float64)
    excess = np.maximum(space.low - value, value - space.high)
    worst = float(np.max(excess, initial=0.0))
    return {key or "observation": worst} if worst > 0 else {}


def observation_bounds(cfg: DictConfig, steps: int) -> Result:
    """Observations of ``steps`` random steps inside the bounds the observation space declares; a WARN with the
    count and the key that strays furthest otherwise (normalisation and clipping trust the bounds)."""
    with closing(vec_envs.make_env(cfg)) as env:
        space = env.observation_space
        strays: dict[str, float] = {}
        count = 0
        for obs, _ in _random_steps(env, steps, cfg.seed):
            found = _outside(space, obs)
            count += bool(found)
            for key, excess in found.items():
                strays[key] = max(strays.get(key, 0.0), excess)
    if not count:
        return Result(BOUNDS, PASS, f"{steps} random steps inside the declared bounds")
    worst = max(strays, key=lambda key: strays[key])
    return Result(
        BOUNDS,
        WARN,
        f"{count} observations of {steps} random steps lie outside the declared bounds; the worst: {worst}, "
        f"{strays[worst]:.4g} beyond its bound",
        ["fix: declare the bounds the env reaches in its observation_space (or clip the observations)"],
    )
