"""``rlrun-check`` with ``env.vectorization=native``: the batched envs agree with the gym envs they replace.

The training envs as ``rlrun`` would build them (batched env, ``VecMonitor``, the wrappers' batched versions)
are stepped next to ``DummyVecEnv`` over ``gym.make`` with the same seed and random actions: the same spaces,
starting states, observations, rewards, episode ends and terminal observations, and a pickled copy of the
batched env (what a snapshot keeps) continues exactly. For an env whose steps draw for all copies at once
(RoomToy's noise), only the spaces and the first starting states can agree, and only those are compared.
"""

from __future__ import annotations

import math
import pickle
from contextlib import closing
from typing import Any

import numpy as np
from omegaconf import DictConfig
from stable_baselines3.common.vec_env import VecEnv

from rlrun.checks.env_checks import PASS, SKIP, Result, fail, show
from rlrun.envs.batched import BatchedVecEnv
from rlrun.make import native, vec_envs

NAME = "native batched env"


def _differs(a: Any, b: Any) -> str | None:
    """Where two observation batches differ (key and env copy), or None."""
    if isinstance(a, dict):
        return next(filter(None, (_differs(a[key], b[key]) for key in a)), None)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    unequal = np.flatnonzero(~(a == b).reshape(len(a), -1).all(axis=1))
    return None if unequal.size == 0 else f"env copy {unequal[0]}: {show(a[unequal[0]])} vs {show(b[unequal[0]])}"


def _step_difference(batched_step: tuple[Any, ...], gym_step: tuple[Any, ...]) -> str | None:
    (obs_n, rew_n, done_n, infos_n), (obs_g, rew_g, done_g, infos_g) = batched_step, gym_step
    if where := _differs(obs_n, obs_g):
        return f"observations differ ({where})"
    if not np.allclose(rew_n, rew_g, rtol=1e-6, atol=0):  # a reward wrapper may round once more
        return f"rewards differ: {show(rew_n)} vs {show(rew_g)}"
    if not np.array_equal(done_n, done_g):
        return f"episode ends differ: {show(done_n)} vs {show(done_g)}"
    for i in np.flatnonzero(done_g).tolist():
        for key in ("TimeLimit.truncated", "is_success"):
            if infos_n[i].get(key) != infos_g[i].get(key):
                return f"info[{key!r}] of env copy {i} differs: {infos_n[i].get(key)} vs {infos_g[i].get(key)}"
        batch = (lambda o: {k: v[None] for k, v in o.items()}) if isinstance(obs_g, dict) else (lambda o: o[None])
        if where := _differs(batch(infos_n[i]["terminal_observation"]), batch(infos_g[i]["terminal_observation"])):
            return f"terminal observations of env copy {i} differ ({where})"
    return None


def agreement(cfg: DictConfig, steps: int) -> Result:
    """Step the batched training envs next to the gym ones for ``steps`` env steps (all copies together)."""
    if str(cfg.env.get("vectorization", "gym")).lower() != "native":
        return Result(NAME, SKIP, "env.vectorization=gym")
    n = cfg.env.n_envs
    ours = native.make_vec(cfg, vec_envs.make_wrappers(cfg.wrappers))
    with closing(ours), closing(vec_envs.make_vec(cfg, n, cfg.seed)) as theirs:
        return _compare(ours, theirs, steps, cfg.seed)


def _compare(ours: VecEnv, theirs: VecEnv, steps: int, seed: int) -> Result:
    fix = "report it with this config: the batched env must match the single env (envs/batched)"
    if ours.observation_space != theirs.observation_space or ours.action_space != theirs.action_space:
        spaces = f"{ours.observation_space}, {ours.action_space} vs {theirs.observation_space}, {theirs.action_space}"
        return fail(NAME, f"the spaces differ from the gym envs': {spaces}", fix)
    if where := _differs(ours.reset(), theirs.reset()):
        return fail(NAME, f"the starting states differ from the gym envs' ({where})", fix)
    base = ours.unwrapped
    assert isinstance(base, BatchedVecEnv)
    if not base.replays_gym:
        return Result(NAME, PASS, "same spaces and starting states (steps draw for all copies at once: not compared)")
    n, calls = ours.num_envs, max(math.ceil(steps / ours.num_envs), 2)
    theirs.action_space.seed(seed)
    actions = [np.array([theirs.action_space.sample() for _ in range(n)]) for _ in range(calls)]
    for t, batch in enumerate(actions):
        if problem := _step_difference(ours.step(batch.copy()), theirs.step(batch.copy())):
            return fail(NAME, f"step {t + 1} of {calls}: {problem}", fix)
    clone = pickle.loads(pickle.dumps(base))  # what a snapshot keeps
    replay = [base.step(batch.copy()) for batch in actions], [clone.step(batch.copy()) for batch in actions]
    if any(_step_difference(a, b) for a, b in zip(*replay, strict=True)):
        return fail(NAME, "a pickled copy of the batched env does not continue like the original", fix)
    return Result(NAME, PASS, f"{calls * n} steps ({n} copies) as DummyVecEnv over gym.make; pickled copy continues")
