"""The rules checked before any heavy work, by training (:mod:`rlrun.checks.preflight`) and ``rlrun-check`` alike.

Value ranges, algorithm arguments, whether env and algorithm fit, budgets, and whether the algorithm
accepts its arguments when built. The schema (:mod:`rlrun.config.schema`) has already checked types while
Hydra composed the config; what is left is what OmegaConf cannot see. Each rule returns problems,
each with its fix; :func:`raise_if` reports them all at once as one :class:`~rlrun.config.errors.UserError`.
All of it runs in well under 0.2 s.
"""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from omegaconf import DictConfig, OmegaConf
from sb3_contrib import ARS, QRDQN, TQC, TRPO, CrossQ, RecurrentPPO
from stable_baselines3 import A2C, DDPG, DQN, PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.config.errors import Problem
from rlrun.make import gym_make, jax_models
from rlrun.make.episode_cap import EVAL_MAX_EPISODE_STEPS
from rlrun.make.models import NATURE_CNN_MIN, default_policy, image_too_small, policy_alias

_ANY_ACTION = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
ACTION_SPACES: dict[type[BaseAlgorithm], tuple[type[spaces.Space], ...]] = {
    PPO: _ANY_ACTION,
    A2C: _ANY_ACTION,
    SAC: (spaces.Box,),
    TD3: (spaces.Box,),
    DDPG: (spaces.Box,),
    DQN: (spaces.Discrete,),
    # sb3-contrib's, as each passes them to BaseAlgorithm (supported_action_spaces)
    TRPO: _ANY_ACTION,
    RecurrentPPO: _ANY_ACTION,
    TQC: (spaces.Box,),
    CrossQ: (spaces.Box,),
    QRDQN: (spaces.Discrete,),
    ARS: (spaces.Box, spaces.Discrete),
}
# The conf/algo files whose name is not their class name in lower case (the fix of a misfit names them).
OPTION_NAMES: dict[type[BaseAlgorithm], str] = {RecurrentPPO: "recurrent_ppo"}
GOAL_KEYS = {"observation", "achieved_goal", "desired_goal"}
SEED_MAX = 2**32 - 1  # numpy's legacy seeding (np.random.seed, which SB3's set_random_seed calls) takes no more
# Choices of keys whose type is a plain string in the schema.
CHOICES = {
    "device": ("cpu", "cuda", "auto"),
    "progress_bar": ("auto", "true", "false"),
    "fused_adam": ("auto", "true", "false"),
    "env.vec_env": ("dummy", "subproc"),
    "snapshot.replay_buffer": ("latest", "all", "none"),
    "env.vectorization": ("gym", "native"),
}
POSITIVE = (
    "total_timesteps",
    "torch_threads",
    "eval.every",
    "eval.episodes",
    "eval.final_episodes",
    "eval.n_envs",
    "snapshot.every",
    "snapshot.keep",
    "env.n_envs",
)
# The most env steps a run may be given: no SB3 run gets near it (11 days at a million steps a second), so a larger
# budget is a slip (1e30, an exponent too many) that would only print an end time of 10**25 hours
MAX_TIMESTEPS = 10**12
# What one env copy in a process of its own (env.vec_env=subproc) takes at least: an interpreter with numpy and
# Gymnasium (about 160 MiB unique to each CartPole worker measured here; a quarter of that is the floor)
WORKER_BYTES = 40 * 2**20
# Documented ranges of SB3 constructor arguments: key -> (the range in words, test, a typical value).
# Checked where the algo config has the key and a plain number as its value (not a schedule or "auto").
ALGO_RANGES: dict[str, tuple[str, Callable[[float], bool], str]] = {
    "learning_rate": ("> 0", lambda v: v > 0, "3e-4"),
    "gamma": ("in (0, 1]", lambda v: 0 < v <= 1, "0.99"),
    "gae_lambda": ("in [0, 1]", lambda v: 0 <= v <= 1, "0.95"),
    "tau": ("in (0, 1]", lambda v: 0 < v <= 1, "0.005"),
    "buffer_size": (">= 1", lambda v: v >= 1, "1000000"),
    "batch_size": (">= 1", lambda v: v >= 1, "64"),
    "n_steps": (">= 1", lambda v: v >= 1, "2048"),
    "n_epochs": (">= 1", lambda v: v >= 1, "10"),
    "learning_starts": (">= 0", lambda v: v >= 0, "100"),
    "train_freq": (">= 1", lambda v: v >= 1, "1"),
    "gradient_steps": ("-1 or >= 1", lambda v: v == -1 or v >= 1, "1"),
    "target_update_interval": (">= 1", lambda v: v >= 1, "10000"),
    "policy_delay": (">= 1", lambda v: v >= 1, "2"),
    "clip_range": ("> 0", lambda v: v > 0, "0.2"),
    "ent_coef": (">= 0", lambda v: v >= 0, "0.0"),
    "vf_coef": (">= 0", lambda v: v >= 0, "0.5"),
    "max_grad_norm": ("> 0", lambda v: v > 0, "0.5"),
    "target_policy_noise": (">= 0", lambda v: v >= 0, "0.2"),
    "target_noise_clip": (">= 0", lambda v: v >= 0, "0.5"),
    "exploration_fraction": ("in [0, 1]", lambda v: 0 <= v <= 1, "0.1"),
    "exploration_initial_eps": ("in [0, 1]", lambda v: 0 <= v <= 1, "1.0"),
    "exploration_final_eps": ("in [0, 1]", lambda v: 0 <= v <= 1, "0.05"),
}


def range_problems(cfg: DictConfig) -> list[Problem]:
    """Values of the right type but outside what the key allows, the device included."""
    problems: list[Problem] = []
    if OmegaConf.is_missing(cfg.env, "id"):
        problems.append(("env.id is not set", "give the Gymnasium id: env=gym env.id=Acrobot-v1 (or mypkg:MyEnv-v0)"))
    for key in POSITIVE:
        value = OmegaConf.select(cfg, key, default=1)  # 1: a key newer than the run (resume)
        if value < 1:
            problems.append((f"{key}={value} must be a positive integer", f"set {key} to 1 or more"))
    problems += size_problems(cfg) + seed_and_thread_problems(cfg)
    if OmegaConf.select(cfg, "progress_every", default=0) < 0:
        problems.append((f"progress_every={cfg.progress_every} must be >= 0", "give seconds, e.g. 60, or 0 for none"))
    max_steps = cfg.env.max_episode_steps
    if max_steps is not None and max_steps < 1:
        problems.append((f"env.max_episode_steps={max_steps} must be positive", "set it to 1 or more, or null"))
    frames = cfg.env.get("frame_stack")
    if frames is not None and frames < 1:
        problems.append((f"env.frame_stack={frames} must be positive", "set it to 1 or more (4 for Atari), or null"))
    for key, allowed in CHOICES.items():
        value = str(OmegaConf.select(cfg, key, default=allowed[0])).lower()  # the default: a newer key
        if value not in allowed and not (key == "device" and value.startswith("cuda:")):
            problems.append((f"{key}={value} is not one of {', '.join(allowed)}", f"set {key} to one of those"))
    return problems + algo_range_problems(cfg) + device_problems(str(cfg.device))


def size_problems(cfg: DictConfig) -> list[Problem]:
    """A budget no run can take (:data:`MAX_TIMESTEPS`), and more env copies than the budget has steps (one step of
    them all is already more) or than this machine can start as processes (``env.vec_env=subproc``:
    :func:`process_cap`)."""
    total, copies = OmegaConf.select(cfg, "total_timesteps", default=1), OmegaConf.select(cfg, "env.n_envs", default=1)
    if total > MAX_TIMESTEPS:
        return [(f"total_timesteps={total} is beyond any run (at most {MAX_TIMESTEPS:.0e} env steps)", _STEPS_FIX)]
    problems: list[Problem] = []
    if copies > total >= 1:
        problems.append(
            (
                f"env.n_envs={copies} copies step together: one step of them all is more than total_timesteps={total}",
                f"lower env.n_envs to at most {total} (a few per core is usual), or raise total_timesteps",
            )
        )
    cap = process_cap()
    if str(OmegaConf.select(cfg, "env.vec_env", default="dummy")) == "subproc" and copies > cap:
        problems.append(
            (
                f"env.n_envs={copies} with env.vec_env=subproc starts a process per copy: more than this machine can "
                f"hold (at most {cap}: {WORKER_BYTES // 2**20} MiB each at least, and the processes you may start)",
                f"lower env.n_envs (about one per core: {os.cpu_count() or 1} here), or use env.vec_env=dummy",
            )
        )
    return problems


_STEPS_FIX = "give the env steps you mean, e.g. total_timesteps=1000000"


def process_cap() -> int:
    """The most env copies this machine can run as processes: its memory at :data:`WORKER_BYTES` each, and the
    processes this user may start (``RLIMIT_NPROC``)."""
    cap = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // WORKER_BYTES
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    return int(cap if soft == resource.RLIM_INFINITY else min(cap, soft))


def thread_cap() -> int:
    """The most ``torch_threads`` a run may ask for: the cores this process may run on (more only slows torch)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def seed_problems(seed: int, name: str = "seed=") -> list[Problem]:
    """A seed outside numpy's seeding range (``name``: how the user gave it, ``seed=`` or ``--seed ``)."""
    if 0 <= seed <= SEED_MAX:
        return []
    return [(f"{name}{seed} is outside numpy's seeding range, 0 to 2**32 - 1 ({SEED_MAX})", f"use e.g. {name}0")]


def seed_and_thread_problems(cfg: DictConfig) -> list[Problem]:
    """``seed`` within numpy's seeding range (SB3 seeds numpy's global generator with it) and ``torch_threads``
    within :func:`thread_cap`, found here rather than as numpy's error or "can't start new thread" mid-run."""
    problems = seed_problems(cfg.seed)
    threads, cap = OmegaConf.select(cfg, "torch_threads", default=1), thread_cap()
    if threads > cap:
        problems.append(
            (
                f"torch_threads={threads} is more than this machine's {cap} cores (the cap: more threads than "
                "cores only slow torch down)",
                f"set torch_threads to at most {cap}; 1 is fastest for small nets",
            )
        )
    return problems


def non_finite_problems(cfg: DictConfig) -> list[Problem]:
    """``algo.*`` numbers that are NaN or infinite, at any depth (``policy_kwargs`` too): no argument of an
    algorithm takes one (``algo.learning_rate=inf`` would fail the run later, blaming the env)."""
    try:
        algo = OmegaConf.to_container(cfg.algo, resolve=True)
    except Exception:  # noqa: BLE001 - an interpolation that does not resolve: the algorithm's checks name it
        return []
    found: list[str] = []

    def walk(value: Any, key: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            found.append(f"{key}={value}")
        elif isinstance(value, (dict, list)):
            for name, item in value.items() if isinstance(value, dict) else enumerate(value):
                walk(item, f"{key}.{name}")

    walk(algo, "algo")
    return [(f"{item} is not a finite number", f"give {item.split('=')[0]} a finite value") for item in found]


def algo_range_problems(cfg: DictConfig) -> list[Problem]:
    """``algo.*`` numbers that are not finite (:func:`non_finite_problems`) or outside the range SB3 documents for
    them (:data:`ALGO_RANGES`)."""
    problems = non_finite_problems(cfg)
    if problems:
        return problems
    for key, (allowed, within, example) in ALGO_RANGES.items():
        value = cfg.algo.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not within(value):
            problems.append(
                (f"algo.{key}={value} is out of range: it must be {allowed}", f"set e.g. algo.{key}={example}")
            )
    return problems


def device_problems(device: str) -> list[Problem]:
    """``device=cuda`` (or ``cuda:N``) where torch sees no such GPU; ``auto`` falls back to the CPU by itself."""
    if not device.lower().startswith("cuda"):
        return []
    if not torch.cuda.is_available():
        return [(f"device={device} but torch finds no CUDA GPU here", "use device=cpu (or device=auto)")]
    index = device.partition(":")[2]
    if index.isdigit() and int(index) >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        choices = "device=cuda:0 (or device=cuda)" if count == 1 else f"device=cuda:0 .. cuda:{count - 1}"
        return [(f"device={device} but torch finds {count} GPU(s) here", f"use {choices}")]
    return []


def is_goal_env(env: gym.Env) -> bool:
    """Gymnasium-robotics' goal-env contract, which HER needs."""
    space = env.observation_space
    return (
        isinstance(space, spaces.Dict)
        and set(space.spaces) >= GOAL_KEYS
        and callable(getattr(env.unwrapped, "compute_reward", None))
    )


@dataclass(frozen=True)
class EnvFacts:
    """What the fit rules need to know of an env, read from one gym env (``rlrun-check``, listings) or from
    the training VecEnv itself, so that a run checks the envs it trains on instead of building another."""

    id: str
    observation_space: spaces.Space
    action_space: spaces.Space
    max_episode_steps: int | None
    goal_env: bool

    @classmethod
    def of(cls, env: gym.Env | VecEnv | EnvFacts) -> EnvFacts:
        """The facts of a gym env or of a VecEnv (its first copy's registration)."""
        if isinstance(env, EnvFacts):
            return env
        if isinstance(env, VecEnv):
            spec = env.get_attr("spec", [0])[0]
            goal = isinstance(env.observation_space, spaces.Dict) and set(env.observation_space.spaces) >= GOAL_KEYS
            goal = goal and env.has_attr("compute_reward")
            name = spec.id if spec is not None else type(env.unwrapped).__name__
        else:
            spec, goal, name = env.spec, is_goal_env(env), type(env.unwrapped).__name__
        return cls(
            id=spec.id if spec is not None else name,
            observation_space=env.observation_space,
            action_space=env.action_space,
            max_episode_steps=spec.max_episode_steps if spec is not None else None,
            goal_env=goal,
        )


def space_problems(env: Any, algo_cls: type[BaseAlgorithm], uses_her: bool) -> list[Problem]:
    """Whether ``algo_cls`` can act in ``env``'s action space and, with HER, whether ``env`` is a goal env
    (``env``: a gym env, a VecEnv or their :class:`EnvFacts`)."""
    env = EnvFacts.of(env)
    env_id, name = env.id, algo_cls.__name__
    allowed = next((v for cls, v in ACTION_SPACES.items() if issubclass(algo_cls, cls)), None)
    problems: list[Problem] = []
    if allowed is not None and not isinstance(env.action_space, allowed):
        fits = [
            OPTION_NAMES.get(cls, cls.__name__.lower())
            for cls, kinds in ACTION_SPACES.items()
            if isinstance(env.action_space, kinds)
        ]
        needs = " or ".join(kind.__name__ for kind in allowed)
        problems.append(
            (
                f"{name} cannot train on {env_id}: it needs {needs} actions, the env has {env.action_space}",
                f"use one of algo={', algo='.join(fits)}",
            )
        )
    if uses_her and not env.goal_env:
        problems.append(
            (
                f"HER needs a goal env (a Dict observation with {', '.join(sorted(GOAL_KEYS))} and a "
                f"compute_reward method); {env_id} has {env.observation_space}",
                f"use a goal env such as env=pointgoal, or drop HER: algo={OPTION_NAMES.get(algo_cls, name.lower())}",
            )
        )
    return problems


def algo_fits(env: Any, algo_cls: type[BaseAlgorithm], uses_her: bool) -> bool:
    """:func:`space_problems` as a yes/no answer, for listings such as ``rlrun-envs``."""
    return not space_problems(env, algo_cls, uses_her)


def action_bound_problems(cfg: DictConfig, space: spaces.Space) -> list[Problem]:
    """Continuous actions need finite bounds (SB3 checks it only with an ``assert``, gone under ``python -O``, and
    its message would blame the algorithm): the env's, or those its wrappers declare."""
    if not isinstance(space, spaces.Box) or bool(np.isfinite(space.low).all() and np.isfinite(space.high).all()):
        return []
    named = [f"env.wrappers.{name}" for name in cfg.env.get("wrappers") or {}] + [str(name) for name in cfg.wrappers]
    after = f" after wrappers [{', '.join(named)}]" if named else ""
    return [
        (
            f"the actions of env.id={cfg.env.id}{after} are unbounded ({space}): continuous actions need finite bounds",
            "declare finite bounds in the env's action_space, or remove the wrapper that widens them "
            "(Gymnasium's ClipAction declares Box(-inf, inf); rlrun's clip_action keeps the env's bounds)",
        )
    ]


def fit_problems(
    cfg: DictConfig, env: Any, algo_cls: type[BaseAlgorithm], uses_her: bool, model_cls: type[BaseAlgorithm]
) -> list[Problem]:
    """Whether the algorithm fits the env's spaces after the wrappers (actions, goals, policy, HER's start);
    ``env``: a gym env, the training VecEnv or their :class:`EnvFacts`; ``model_cls``: the class the run trains
    (``algo_cls``, or SBX's with jax, whose policies are checked too)."""
    env = EnvFacts.of(env)
    env_id = cfg.env.id
    problems = space_problems(env, algo_cls, uses_her) + action_bound_problems(cfg, env.action_space)
    limit = env.max_episode_steps
    learning_starts = cfg.algo.get("learning_starts")
    n_envs = cfg.env.n_envs
    # SB3 first trains at the first multiple of n_envs above learning_starts; the copies' first episodes end at
    # limit * n_envs total steps, so training must not start before then (FetchReach: 98 is the least for 2 copies)
    least = None if limit is None else (limit - 1) * n_envs
    if uses_her and least is not None and learning_starts is not None and learning_starts < least:
        copies = f" on each of {n_envs} env copies" if n_envs > 1 else ""
        problems.append(
            (
                f"algo.learning_starts={learning_starts} is within the first episode of {env_id} "
                f"({limit} steps{copies}): HER cannot sample goals before an episode has ended",
                f"set algo.learning_starts={least} or more",
            )
        )
    policy = cfg.algo.get("policy")
    dict_policy = policy_alias(algo_cls, "MultiInputPolicy")  # RecurrentPPO's MultiInputLstmPolicy
    if isinstance(env.observation_space, spaces.Dict) and policy not in (None, dict_policy):
        problems.append(
            (
                f"algo.policy={policy} cannot read the Dict observations of {env_id}",
                f"leave algo.policy=null ({dict_policy} is chosen), or add wrappers=[flatten]",
            )
        )
    aliases = getattr(algo_cls, "policy_aliases", {})
    chosen = policy or policy_alias(algo_cls, default_policy(env.observation_space))
    if policy is None and aliases and chosen not in aliases:  # CrossQ has only MlpPolicy
        problems.append(
            (
                f"{algo_cls.__name__} has no {chosen} for the observations of {env_id} ({env.observation_space}); "
                f"its policies: {', '.join(aliases)}",
                "flatten the observations (e.g. wrappers=[flatten]), or use another algo",
            )
        )
    problems += jax_models.fit_problems(cfg, model_cls, env.observation_space, env_id, chosen, uses_her)
    return problems + observation_problems(env_id, env.observation_space) + small_image_problems(cfg, env)


# The observation spaces SB3's policies read (and a Dict of them); a Text, Sequence, Graph or Tuple they cannot.
SB3_OBSERVATIONS = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
MINIGRID_FIX = (
    "add wrappers=[minigrid_image] (MiniGrid's ImgObsWrapper: the image alone) or wrappers=[minigrid_flat] "
    "(FlatObsWrapper: image and mission in one vector)"
)


def _unreadable(space: spaces.Space, where: str = "observation") -> list[tuple[str, str]]:
    """(key path, what it is) of each part of ``space`` SB3 cannot take: a Text, Sequence, Graph, Tuple or other
    space, or a Dict inside a Dict."""
    if isinstance(space, spaces.Box) and space.shape == ():
        return [(where, "a Box of shape () (one number: SB3's policies take vectors)")]
    if isinstance(space, SB3_OBSERVATIONS):
        return []
    if not isinstance(space, spaces.Dict):
        text = " of text" if isinstance(space, spaces.Text) or "Mission" in type(space).__name__ else ""
        return [(where, f"a {type(space).__name__} space{text}")]
    found = []
    for key, subspace in space.spaces.items():
        path = f"{where}[{key!r}]"
        found += (
            [(path, "a Dict inside the Dict")] if isinstance(subspace, spaces.Dict) else _unreadable(subspace, path)
        )
    return found


def _whole_space_fix(space: spaces.Space) -> str:
    """The fix for an observation space SB3 cannot take as a whole: Gymnasium's ``FlattenObservation`` where it
    can flatten the space (a scalar Box, a Tuple of flattenable spaces), else a wrapper of the user's."""
    try:
        flat = spaces.flatten_space(space)
    except (NotImplementedError, ValueError, TypeError):
        flat = None
    if not isinstance(flat, spaces.Box):  # Sequence, Graph: no vector of a fixed size
        return "add an observation wrapper of your own that turns it into a Box (a wrappers/ config)"
    return "add wrappers=[flatten] (Gymnasium's FlattenObservation: one vector)"


def observation_problems(env_id: str, space: spaces.Space) -> list[Problem]:
    """Observations SB3 cannot take (it fails deep in its vec env or policy), named by key path, with the wrapper
    that removes them: MiniGrid's observation wrappers for MiniGrid, else a wrapper that drops or flattens the key."""
    found = _unreadable(space)
    if not found:
        return []
    parts = "; ".join(f"{path} is {what}" for path, what in found)
    problem = f"SB3 cannot take the observations of {env_id}: {parts}"
    if gym_make.registering_module(env_id) == "minigrid":
        return [(problem, MINIGRID_FIX)]
    if not isinstance(space, spaces.Dict):
        return [(problem, _whole_space_fix(space))]
    keys = [path.split("'")[1] for path, _ in found]
    dropped = [key for key in dict.fromkeys(keys) if not _flattens(space.spaces[key])]  # text, graphs: no numbers
    if not dropped:  # a scalar, a Dict inside the Dict: flattening keeps every value (dm_control's walker height)
        return [(problem, "add wrappers=[flatten] (FlattenObservation: one vector holding every value)")]
    kept = [key for key in space.spaces if key not in dropped]
    then = "then wrappers=[<name>, flatten]" if len(dropped) < len(set(keys)) else "then wrappers=[<name>]"
    return [
        (
            problem,
            f"drop {', '.join(dropped)} with Gymnasium's FilterObservation: a conf/wrappers/<name>.yaml with "
            f"_target_: gymnasium.wrappers.FilterObservation, _partial_: true, filter_keys: [{', '.join(kept)}], "
            f"{then}",
        )
    ]


def _flattens(space: spaces.Space) -> bool:
    """Whether FlattenObservation turns ``space`` into numbers that mean what the values meant: boxes and discrete
    spaces, and Dicts of them (not text, sequences or graphs)."""
    if isinstance(space, spaces.Dict):
        return all(_flattens(subspace) for subspace in space.spaces.values())
    return isinstance(space, SB3_OBSERVATIONS)


def small_image_problems(cfg: DictConfig, env: EnvFacts) -> list[Problem]:
    """``algo.policy=CnnPolicy`` set on images smaller than its NatureCNN takes (SB3 fails on the kernel size)."""
    policy = cfg.algo.get("policy")
    if not policy or "Cnn" not in policy or not image_too_small(env.observation_space):
        return []
    return [
        (
            f"algo.policy={policy} cannot read the {_shape(env.observation_space)} images of {cfg.env.id}: "
            f"SB3's NatureCNN needs at least {NATURE_CNN_MIN}x{NATURE_CNN_MIN}",
            "use algo.policy=MlpPolicy (or null: chosen for small images), or a features extractor of your own "
            "(algo.policy_kwargs.features_extractor_class)",
        )
    ]


def small_image_note(cfg: DictConfig, space: spaces.Space) -> str | None:
    """The one-line note for an automatic MlpPolicy on images too small for NatureCNN; None otherwise."""
    if cfg.algo.get("policy") or not image_too_small(space):
        return None
    return (
        f"note: the {_shape(space)} image observations of {cfg.env.id} are smaller than the "
        f"{NATURE_CNN_MIN}x{NATURE_CNN_MIN} SB3's NatureCNN takes: MlpPolicy chosen"
    )


def _shape(space: spaces.Space) -> str:
    return "x".join(str(side) for side in space.shape or ())


def rollout_size(cfg: DictConfig, algo_cls: type[BaseAlgorithm]) -> int | None:
    """Steps per rollout of an on-policy algorithm (``n_steps * env.n_envs``); None for off-policy ones."""
    if issubclass(algo_cls, OnPolicyAlgorithm) and "n_steps" in cfg.algo:
        return int(cfg.algo.n_steps * cfg.env.n_envs)
    return None


def budget_problems(cfg: DictConfig, algo_cls: type[BaseAlgorithm]) -> list[Problem]:
    """Budgets and batch sizes with which a run cannot learn: training refuses them (exit 2)."""
    name, total = algo_cls.__name__, cfg.total_timesteps
    problems: list[Problem] = []
    learning_starts = cfg.algo.get("learning_starts")
    if issubclass(algo_cls, OffPolicyAlgorithm) and learning_starts is not None and learning_starts >= total:
        problems.append(
            (
                f"algo.learning_starts={learning_starts} >= total_timesteps={total}: "
                f"{name} would only act randomly and never update",
                f"algo.learning_starts={total // 2}, or total_timesteps={2 * learning_starts}",
            )
        )
    rollout, batch = rollout_size(cfg, algo_cls), cfg.algo.get("batch_size")
    if rollout is None:
        return problems
    if rollout < 2:
        problems.append((f"{name} rollout n_steps * env.n_envs = {rollout} is too small", "raise algo.n_steps"))
    elif batch is not None and batch > rollout:
        problems.append(
            (
                f"algo.batch_size={batch} is larger than the rollout n_steps * env.n_envs = {rollout}",
                f"lower algo.batch_size to a divisor of {rollout}, or raise algo.n_steps / env.n_envs",
            )
        )
    return problems


def budget_warnings(cfg: DictConfig, algo_cls: type[BaseAlgorithm], env: EnvFacts | None = None) -> list[Problem]:
    """Legal settings that probably do not do what was meant: training logs them, ``rlrun-check`` notes them.

    Truncated minibatches, a budget of one rollout or less (one update, after the last step), no periodic
    evaluation, and (with the ``env`` trained on, whose time limit bounds an evaluation episode) periodic evaluation
    that may step the eval env more often than training steps the training envs. Each fix is an override.
    """
    problems: list[Problem] = []
    rollout, batch = rollout_size(cfg, algo_cls), cfg.algo.get("batch_size")
    if rollout is not None and batch and rollout >= batch and rollout % batch:
        problems.append(
            (
                f"the rollout n_steps * env.n_envs = {rollout} is not a multiple of "
                f"algo.batch_size={batch}: each epoch ends with a truncated minibatch "
                f"of {rollout % batch}",
                f"algo.batch_size={_divisor_below(rollout, batch)}",
            )
        )
    total = cfg.total_timesteps
    if rollout is not None and rollout >= total:
        problems.append(_one_rollout(cfg, algo_cls, rollout))
    if cfg.eval.every > cfg.total_timesteps:
        problems.append(
            (
                f"eval.every={cfg.eval.every} > total_timesteps={cfg.total_timesteps}: "
                "no periodic evaluation happens, eval.csv stays empty",
                f"eval.every={cfg.total_timesteps}",
            )
        )
    elif env is not None and (costly := _costly_evaluation(cfg, env)) is not None:
        problems.append(costly)
    return problems


# A budget of one rollout or less is fixed with a rollout this many times smaller (as many updates).
UPDATES_IN_FIX = 8


def _one_rollout(cfg: DictConfig, algo_cls: type[BaseAlgorithm], rollout: int) -> Problem:
    """A budget of at most one rollout: the algorithm updates once, after collecting all of it."""
    total, n_envs, name = cfg.total_timesteps, cfg.env.n_envs, algo_cls.__name__
    size = f"the rollout algo.n_steps * env.n_envs = {cfg.algo.n_steps} x {n_envs} = {rollout:,}"
    if rollout > total:
        budget = (
            f"{size} is larger than total_timesteps={total}: {name} collects it whole, so the run takes {rollout:,}"
        )
    else:
        budget = f"total_timesteps={total} is one rollout ({size}): the run takes {rollout:,}"
    problem = (
        f"{budget} steps and updates once, after its last step: every periodic evaluation sees the untrained policy"
    )
    n_steps = max(1 << (max(total // (n_envs * UPDATES_IN_FIX), 1).bit_length() - 1), 1)  # a power of two
    fix = f"total_timesteps={UPDATES_IN_FIX * rollout} ({UPDATES_IN_FIX} updates)"
    if n_steps * n_envs >= 2 and n_steps < cfg.algo.n_steps:
        smaller = f"algo.n_steps={n_steps}"
        batch = cfg.algo.get("batch_size")
        if batch and batch > n_steps * n_envs:
            smaller += f" algo.batch_size={n_steps * n_envs}"
        updates = total // (n_steps * n_envs)
        fix = f"{smaller} ({updates} updates in this budget), or {fix}"
    return problem, fix


def _divisor_below(rollout: int, batch: int) -> int:
    """The largest divisor of ``rollout`` not above ``batch``: a minibatch size that divides the rollout."""
    return next(size for size in range(batch, 0, -1) if rollout % size == 0)


def _costly_evaluation(cfg: DictConfig, env: EnvFacts) -> Problem | None:
    """Periodic evaluation that may step the eval env more often than the budget trains, each evaluation episode
    lasting up to ``env``'s time limit (or the cap evaluation puts on envs without one); None when it fits."""
    total, every, episodes = cfg.total_timesteps, cfg.eval.every, cfg.eval.episodes
    cap = cfg.env.max_episode_steps or env.max_episode_steps or EVAL_MAX_EPISODE_STEPS
    evaluations = total // every
    cost = evaluations * episodes * cap
    if cost <= total:
        return None
    problem = (
        f"periodic evaluation may step the eval env {cost:,} times ({evaluations} evaluations x eval.episodes="
        f"{episodes} x up to {cap:,} steps an episode), more than the {total:,} steps it trains"
    )
    affordable = total // (episodes * cap)  # evaluations of eval.episodes episodes that fit in the budget
    if affordable >= 1:
        fix = f"eval.every={-(-total // affordable)}"
    elif cap <= total:
        fix = f"eval.every={total} eval.episodes={total // cap}"
    else:
        fix = f"eval.every={total} eval.episodes=1 (one episode, the least), or total_timesteps={episodes * cap * 10}"
    return problem, fix
