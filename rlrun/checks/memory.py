"""Whether the replay buffer fits in memory, decided before the model allocates it.

SB3 allocates an off-policy algorithm's whole replay buffer when the model is built: observations for
``buffer_size`` transitions, and as many next observations again unless ``optimize_memory_usage`` stores them
once. On an image env a buffer larger than the machine's memory ends in ``MemoryError`` (or in swapping for
hours). :func:`buffer_problems` estimates the footprint of the rows the run will use, ``min(buffer_size,
total_timesteps)``, and refuses a run whose buffer cannot fit in the memory available plus free swap.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
from gymnasium import spaces
from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.checks.rules import EnvFacts, Problem

GIB = 2**30
MEMINFO = Path("/proc/meminfo")
OVERCOMMIT = Path("/proc/sys/vm/overcommit_memory")
_LIMIT_FIELDS = ("MemTotal", "SwapTotal", "CommitLimit", "Committed_AS")
# Per transition besides observations and actions: reward, done and timeout (float32 each, as SB3 stores them).
SCALARS = 3 * 4


def _bytes(space: spaces.Space) -> int:
    """Bytes of one value of ``space`` as SB3's buffers store it (a Dict: its parts; Discrete: one int64)."""
    if isinstance(space, spaces.Dict):
        return sum(_bytes(part) for part in space.spaces.values())
    shape = space.shape or (1,)
    dtype = np.dtype(space.dtype) if space.dtype is not None else np.dtype(np.float32)
    return int(np.prod(shape)) * dtype.itemsize


def available_bytes() -> int | None:
    """Memory available now plus free swap (Linux's ``/proc/meminfo``); None where that cannot be read."""
    try:
        fields = dict(line.split(":", 1) for line in MEMINFO.read_text().splitlines() if ":" in line)
        kib = int(fields["MemAvailable"].split()[0]) + int(fields.get("SwapFree", "0 kB").split()[0])
    except (OSError, KeyError, ValueError):
        return None
    return kib * 1024


def buffer_bytes(cfg: DictConfig, env: EnvFacts, optimized: bool) -> int:
    """The replay buffer's footprint for the rows the run will use: ``min(buffer_size, total_timesteps)``
    transitions of observation (twice unless ``optimized``), action and scalars."""
    rows = min(int(cfg.algo.buffer_size), int(cfg.total_timesteps))
    observations = _bytes(env.observation_space) * (1 if optimized else 2)
    return rows * (observations + _bytes(env.action_space) + SCALARS)


def reservation_limit() -> int | None:
    """The largest array Linux grants at once under its overcommit policy (``/proc/sys/vm/overcommit_memory``): with
    the default heuristic, memory and swap in all; with strict accounting, what is left to commit; None where any
    size is granted (``1``) or where that cannot be read."""
    try:
        mode = int(OVERCOMMIT.read_text().strip())
        fields = dict(line.split(":", 1) for line in MEMINFO.read_text().splitlines() if ":" in line)
        kib = {key: int(value.split()[0]) for key, value in fields.items() if key in _LIMIT_FIELDS}
    except (OSError, ValueError, IndexError):
        return None
    if mode == 1:
        return None
    if mode == 2:
        return (kib.get("CommitLimit", 0) - kib.get("Committed_AS", 0)) * 1024
    return (kib.get("MemTotal", 0) + kib.get("SwapTotal", 0)) * 1024


def reservation_problems(cfg: DictConfig, env: EnvFacts) -> list[Problem]:
    """A replay buffer whose rows fit but whose whole reservation does not: SB3 allocates ``buffer_size`` rows of
    observations at construction (unused rows cost nothing until written), and an array larger than
    :func:`reservation_limit` fails there with ``MemoryError``. The fix is a buffer_size that fits, at most the
    budget (a buffer never holds more than the run's steps)."""
    if cfg.algo.get("buffer_size") is None or (limit := reservation_limit()) is None:
        return []
    row = max(_bytes(part) for part in _parts(env.observation_space))  # the largest single array, per row
    reserved = int(cfg.algo.buffer_size) * row
    if reserved <= limit:
        return []
    fits = min(limit // row, int(cfg.total_timesteps))
    return [
        (
            f"algo.buffer_size={cfg.algo.buffer_size} reserves about {reserved / GIB:,.0f} GiB for the replay buffer's "
            f"observations when the model is built (SB3 allocates every row at once), more than the "
            f"{limit / GIB:.1f} GiB this machine grants",
            f"lower algo.buffer_size (e.g. algo.buffer_size={fits}: "
            f"{'the budget, every step kept' if fits == int(cfg.total_timesteps) else 'what fits'})",
        )
    ]


def _parts(space: spaces.Space) -> list[spaces.Space]:
    return list(space.spaces.values()) if isinstance(space, spaces.Dict) else [space]


def buffer_problems(cfg: DictConfig, env: EnvFacts, algo_cls: type[BaseAlgorithm]) -> list[Problem]:
    """A replay buffer that cannot fit in the memory available plus swap, or whose reservation the machine does not
    grant (:func:`reservation_problems`), with its estimate and the fix."""
    if cfg.algo.get("buffer_size") is None or (available := available_bytes()) is None:
        return []
    can_optimize = "optimize_memory_usage" in inspect.signature(algo_cls).parameters
    optimized = bool(cfg.algo.get("optimize_memory_usage", False))
    needed = buffer_bytes(cfg, env, optimized)
    if needed <= available:  # the rows the run uses fit: does the whole buffer's reservation?
        return reservation_problems(cfg, env)
    rows = min(int(cfg.algo.buffer_size), int(cfg.total_timesteps))
    fits = max(1, int(rows * available / needed * 0.8))  # leave a fifth for the model, the envs and the rest
    shape = "Dict" if isinstance(env.observation_space, spaces.Dict) else str(env.observation_space.shape)
    twice = "" if optimized else ", observations stored twice (next observations apart)"
    fix = f"lower algo.buffer_size (e.g. algo.buffer_size={fits})"
    if can_optimize and not optimized and not isinstance(env.observation_space, spaces.Dict):
        fix += ", or set algo.optimize_memory_usage=true (observations stored once; then replay_buffer_kwargs"
        fix += "={handle_timeout_termination:false})"
    return [
        (
            f"the replay buffer needs about {needed / GIB:.1f} GiB ({rows} transitions of {shape} "
            f"{env.observation_space.dtype} observations{twice}), more than the {available / GIB:.1f} GiB of "
            "memory and swap available here",
            fix,
        )
    ]
