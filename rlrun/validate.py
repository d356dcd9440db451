"""Checks before any heavy work: value ranges, algorithm arguments, and whether env and algorithm fit.

The schema (:mod:`rlrun.schema`) has already checked types while Hydra composed the config; what is
left is what OmegaConf cannot see. Every problem found is reported at once, each with its fix, as
one :class:`~rlrun.errors.UserError`. All of it runs in well under 0.2 s.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
from gymnasium import spaces
from omegaconf import DictConfig, OmegaConf
from stable_baselines3 import A2C, DDPG, DQN, PPO, SAC, TD3
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

from rlrun.errors import UserError

Problem = tuple[str, str]  # (what is wrong, how to fix it)

_ANY_ACTION = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
ACTION_SPACES: dict[type[BaseAlgorithm], tuple[type[spaces.Space], ...]] = {
    PPO: _ANY_ACTION,
    A2C: _ANY_ACTION,
    SAC: (spaces.Box,),
    TD3: (spaces.Box,),
    DDPG: (spaces.Box,),
    DQN: (spaces.Discrete,),
}
GOAL_KEYS = {"observation", "achieved_goal", "desired_goal"}
# Arguments rlrun passes itself; an algo file that sets them is a mistake.
RUNTIME_ARGS = ("env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model")
# Choices of keys whose type is a plain string in the schema.
CHOICES = {
    "device": ("cpu", "cuda", "auto"),
    "progress_bar": ("auto", "true", "false"),
    "env.vec_env": ("dummy", "subproc"),
    "snapshot.replay_buffer": ("latest", "all", "none"),
}
POSITIVE = (
    "total_timesteps",
    "torch_threads",
    "eval.every",
    "eval.episodes",
    "eval.final_episodes",
    "snapshot.every",
    "snapshot.keep",
    "env.n_envs",
)


def raise_if(problems: list[Problem]) -> None:
    """Raise one UserError listing every problem with its fix."""
    if not problems:
        return
    if len(problems) == 1:
        raise UserError(*problems[0])
    lines = "\n".join(f"  - {problem}\n    fix: {fix}" for problem, fix in problems)
    raise UserError(f"{len(problems)} problems in the config:\n{lines}")


def range_problems(cfg: DictConfig) -> list[Problem]:
    """Values of the right type but outside what the key allows."""
    problems: list[Problem] = []
    if OmegaConf.is_missing(cfg.env, "id"):
        problems.append(("env.id is not set", "give the Gymnasium id: env=gym env.id=Acrobot-v1 (or mypkg:MyEnv-v0)"))
    for key in POSITIVE:
        value = OmegaConf.select(cfg, key)
        if value < 1:
            problems.append((f"{key}={value} must be a positive integer", f"set {key} to 1 or more"))
    if cfg.seed < 0:
        problems.append((f"seed={cfg.seed} must be >= 0", "use a non-negative seed, e.g. seed=0"))
    max_steps = cfg.env.max_episode_steps
    if max_steps is not None and max_steps < 1:
        problems.append((f"env.max_episode_steps={max_steps} must be positive", "set it to 1 or more, or null"))
    for key, allowed in CHOICES.items():
        value = str(OmegaConf.select(cfg, key)).lower()
        if value not in allowed and not (key == "device" and value.startswith("cuda:")):
            problems.append((f"{key}={value} is not one of {', '.join(allowed)}", f"set {key} to one of those"))
    return problems


def _accepts(annotation: Any, value: Any) -> bool:
    """Whether a plain YAML value can be passed for a parameter annotated ``annotation``.

    Only what can be decided for sure is refused; anything unusual is accepted and left to SB3.
    """
    if annotation is inspect.Parameter.empty or isinstance(annotation, (str, typing.ForwardRef)):
        return True
    if isinstance(value, dict) and "_target_" in value:
        return True  # an object built by instantiate (a schedule, a class, noise)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(arg, value) for arg in typing.get_args(annotation))
    target = origin or annotation
    if target is type(None):
        return value is None
    if target is bool:
        return isinstance(value, bool)
    if target is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if target is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if target is str:
        return isinstance(value, str)
    if target in (dict, typing.Dict):  # noqa: UP006
        return isinstance(value, dict)
    if target in (tuple, list):
        return isinstance(value, list)
    if target is Callable:
        return callable(value)
    return True


def algo_problems(cfg: DictConfig, algo_cls: type[BaseAlgorithm]) -> list[Problem]:
    """``algo.*`` keys the SB3 constructor does not take, or values of a type it cannot take."""
    params = inspect.signature(algo_cls.__init__).parameters
    args = cast(dict[str, Any], OmegaConf.to_container(cfg.algo, resolve=True))
    name = algo_cls.__name__
    problems: list[Problem] = []
    for key, value in args.items():
        if key.startswith("_") and key.endswith("_"):
            continue  # _target_, _convert_, ...
        if key in RUNTIME_ARGS:
            problems.append((f"algo.{key} is set by rlrun, not by the algo config", f"remove algo.{key}"))
        elif key not in params:
            close = [p for p in params if p not in RUNTIME_ARGS and (key in p or p in key)]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            problems.append(
                (
                    f"algo.{key} is not an argument of {name}{hint}",
                    f"remove +algo.{key}; {name} takes: "
                    + ", ".join(p for p in params if p not in ("self", *RUNTIME_ARGS)),
                )
            )
        elif key != "policy" and not _accepts(params[key].annotation, value):
            problems.append(
                (
                    f"algo.{key}={value!r} has the wrong type for {name} ({params[key].annotation})",
                    f"give algo.{key} a value of that type",
                )
            )
    return problems


def is_goal_env(env: gym.Env) -> bool:
    """Gymnasium-robotics' goal-env contract, which HER needs."""
    space = env.observation_space
    return (
        isinstance(space, spaces.Dict)
        and set(space.spaces) >= GOAL_KEYS
        and callable(getattr(env.unwrapped, "compute_reward", None))
    )


def fit_problems(cfg: DictConfig, env: gym.Env, algo_cls: type[BaseAlgorithm], uses_her: bool) -> list[Problem]:
    """Whether the algorithm fits the env's spaces after the wrappers, and rollout arithmetic."""
    env_id = cfg.env.id
    name = algo_cls.__name__
    action_space = env.action_space
    allowed = next((v for cls, v in ACTION_SPACES.items() if issubclass(algo_cls, cls)), None)
    problems: list[Problem] = []
    if allowed is not None and not isinstance(action_space, allowed):
        fits = [cls.__name__.lower() for cls, kinds in ACTION_SPACES.items() if isinstance(action_space, kinds)]
        needs = " or ".join(kind.__name__ for kind in allowed)
        problems.append(
            (
                f"{name} cannot train on {env_id}: it needs {needs} actions, the env has {action_space}",
                f"use one of algo={', algo='.join(fits)}",
            )
        )
    if uses_her and not is_goal_env(env):
        problems.append(
            (
                f"HER needs a goal env (a Dict observation with {', '.join(sorted(GOAL_KEYS))} and a "
                f"compute_reward method); {env_id} has {env.observation_space}",
                "use a goal env such as env=pointgoal, or drop HER: algo=sac",
            )
        )
    limit = env.spec.max_episode_steps if env.spec is not None else None
    learning_starts = cfg.algo.get("learning_starts")
    if uses_her and limit is not None and learning_starts is not None and learning_starts <= limit:
        problems.append(
            (
                f"algo.learning_starts={learning_starts} is within the first episode of {env_id} "
                f"({limit} steps): HER cannot sample goals before an episode has ended",
                f"set algo.learning_starts={limit + 1} or more",
            )
        )
    policy = cfg.algo.get("policy")
    if isinstance(env.observation_space, spaces.Dict) and policy not in (None, "MultiInputPolicy"):
        problems.append(
            (
                f"algo.policy={policy} cannot read the Dict observations of {env_id}",
                "leave algo.policy=null (MultiInputPolicy is chosen), or add wrappers=[flatten]",
            )
        )
    if issubclass(algo_cls, OnPolicyAlgorithm) and "n_steps" in cfg.algo:
        rollout = cfg.algo.n_steps * cfg.env.n_envs
        batch = cfg.algo.get("batch_size")
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


def algo_fits(env: gym.Env, algo_cls: type[BaseAlgorithm], uses_her: bool) -> bool:
    """Whether ``algo_cls`` can act in ``env``'s action space and, with HER, whether ``env`` is a goal env.

    The space part of :func:`fit_problems` as a yes/no answer, for listings such as ``rlrun-envs``.
    """
    allowed = next((v for cls, v in ACTION_SPACES.items() if issubclass(algo_cls, cls)), None)
    return (allowed is None or isinstance(env.action_space, allowed)) and (not uses_her or is_goal_env(env))


def budget_problems(cfg: DictConfig, algo_cls: type[BaseAlgorithm]) -> list[Problem]:
    """Budgets that make a run pointless: an off-policy agent that never gets past ``learning_starts``."""
    from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

    problems: list[Problem] = []
    learning_starts = cfg.algo.get("learning_starts")
    total = cfg.total_timesteps
    if issubclass(algo_cls, OffPolicyAlgorithm) and learning_starts is not None and learning_starts >= total:
        problems.append(
            (
                f"algo.learning_starts={learning_starts} >= total_timesteps={total}: "
                f"{algo_cls.__name__} would only act randomly and never update",
                f"lower algo.learning_starts below {total}, or raise total_timesteps",
            )
        )
    return problems


def budget_warnings(cfg: DictConfig, algo_cls: type[BaseAlgorithm]) -> list[Problem]:
    """Legal settings that probably do not do what was meant (truncated minibatches, no evaluation)."""
    problems: list[Problem] = []
    batch = cfg.algo.get("batch_size")
    if issubclass(algo_cls, OnPolicyAlgorithm) and "n_steps" in cfg.algo and batch:
        rollout = cfg.algo.n_steps * cfg.env.n_envs
        if rollout >= batch and rollout % batch:
            problems.append(
                (
                    f"the rollout n_steps * env.n_envs = {rollout} is not a multiple of "
                    f"algo.batch_size={batch}: each epoch ends with a truncated minibatch "
                    f"of {rollout % batch}",
                    f"use a batch_size that divides {rollout}",
                )
            )
    if cfg.eval.every > cfg.total_timesteps:
        problems.append(
            (
                f"eval.every={cfg.eval.every} > total_timesteps={cfg.total_timesteps}: "
                "no periodic evaluation happens, eval.csv stays empty",
                f"set eval.every to at most {cfg.total_timesteps}",
            )
        )
    return problems
