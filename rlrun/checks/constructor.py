"""An algorithm's arguments: the names and types its SB3 constructor takes, and what it raises when built.

Two of the rules checked before training (the others are in :mod:`rlrun.checks.rules`), applied the same
way by training (:mod:`rlrun.checks.preflight`) and by ``rlrun-check``: :func:`algo_problems` reads the
constructor's signature (no env needed), and those of the nested arguments SB3 reads only deep inside it (HER's
``replay_buffer_kwargs``, the fields of a schedule), so each is named by its dotted key with what it allows;
:func:`rejection` turns whatever SB3 raises while building the
model (an assertion, a ValueError, a bad ``policy_kwargs``) into a problem naming the keys, so it is reported
before a run folder is written (the throwaway model is built by :mod:`rlrun.run.dry_run`).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import get_class
from omegaconf import DictConfig
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.config.arguments import RUNTIME_ARGS
from rlrun.config.errors import Problem, raised_at
from rlrun.make import models

# Arguments rlrun passes itself; an algo file that sets them is a mistake.
# What SB3's off-policy algorithms pass to their replay buffer class themselves, besides replay_buffer_kwargs.
BUFFER_ARGS = (
    "buffer_size",
    "observation_space",
    "action_space",
    "env",
    "device",
    "n_envs",
    "optimize_memory_usage",
)
# Hydra's own keys of a node with a _target_: not arguments of the class.
HYDRA_KEYS = ("_target_", "_partial_", "_convert_", "_recursive_", "_args_")
# Fields of SB3's schedules with a range SB3 does not check itself (LinearSchedule divides by end_fraction).
SCHEDULE_RANGES: dict[str, tuple[str, Callable[[float], bool]]] = {"end_fraction": ("> 0", lambda v: v > 0)}


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
    """``algo.*`` keys the constructor of ``algo_cls`` (the class the run trains: SBX's with jax) does not take, or
    values of a type it cannot take."""
    params = inspect.signature(algo_cls.__init__).parameters
    args = models.algo_arguments(cfg, algo_cls)  # algo.backend is rlrun's; with jax, SBX's spelling
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
        else:
            problems += _schedule_problems(f"algo.{key}", value)
    return problems + _her_problems(cfg, args)


def _arguments_problems(where: str, cls: type, given: dict[str, Any], passed: tuple[str, ...]) -> list[Problem]:
    """``given`` keyword arguments of ``cls`` (at the dotted key ``where``) it does not take, lacks, or cannot
    take with their type; ``passed`` are those its caller passes itself."""
    try:  # the annotations as types, also where the class's module postpones them (PEP 563)
        signature = inspect.signature(cls, eval_str=True)
    except Exception:
        signature = inspect.signature(cls)
    params = {k: p for k, p in signature.parameters.items() if k not in passed and p.kind is not p.VAR_POSITIONAL}
    open_ended = any(p.kind is p.VAR_KEYWORD for p in params.values())
    params = {k: p for k, p in params.items() if p.kind is not p.VAR_KEYWORD}
    takes = ", ".join(params)
    problems: list[Problem] = []
    for key, value in given.items():
        if key in HYDRA_KEYS or (key not in params and open_ended):
            continue
        if key not in params:
            problems.append((f"{where}.{key} is not an argument of {cls.__name__}", f"{cls.__name__} takes: {takes}"))
        elif not _accepts(params[key].annotation, value):
            problems.append(
                (
                    f"{where}.{key}={value!r} has the wrong type for {cls.__name__} ({params[key].annotation})",
                    f"give {where}.{key} a value of that type; {cls.__name__} takes: {takes}",
                )
            )
    for key, param in params.items():
        if param.default is inspect.Parameter.empty and param.kind is param.POSITIONAL_OR_KEYWORD and key not in given:
            problems.append(
                (f"{where} has no {key}, which {cls.__name__} needs", f"set {where}.{key}; it takes: {takes}")
            )
    return problems


def _schedule_problems(where: str, value: Any) -> list[Problem]:
    """The fields of one of SB3's schedules (``{_target_: stable_baselines3.common.utils.LinearSchedule, ...}``):
    each named, typed and in range, since SB3 only fails on them when it first calls the schedule."""
    target = value.get("_target_") if isinstance(value, dict) else None
    if not isinstance(target, str) or not target.startswith("stable_baselines3.") or not target.endswith("Schedule"):
        return []
    try:
        cls = get_class(target)
    except Exception:  # an unknown class: the model's construction names it
        return []
    problems = _arguments_problems(where, cls, value, ())
    for key, field in value.items():
        if key in HYDRA_KEYS:
            continue
        problems += _schedule_problems(f"{where}.{key}", field)  # FloatSchedule(LinearSchedule(...))
        allowed, within = SCHEDULE_RANGES.get(key, ("any number", lambda v: True))
        if isinstance(field, (int, float)) and not isinstance(field, bool) and not within(field):
            problems.append(
                (f"{where}.{key}={field} is out of range: it must be {allowed}", f"set {where}.{key} {allowed}")
            )
    return problems


def _her_problems(cfg: DictConfig, args: dict[str, Any]) -> list[Problem]:
    """``algo.replay_buffer_kwargs`` of SB3's ``HerReplayBuffer``: its arguments, and the goal selection strategy by
    name (SB3 itself fails with a bare ``KeyError: 'bogus'``)."""
    from stable_baselines3 import HerReplayBuffer
    from stable_baselines3.her.goal_selection_strategy import KEY_TO_GOAL_STRATEGY

    kwargs = args.get("replay_buffer_kwargs")
    try:
        her = models.uses_her(cfg)
    except Exception:  # a replay_buffer_class that cannot be found: the model's construction names it
        return []
    if not her or not isinstance(kwargs, dict):
        return []
    where = "algo.replay_buffer_kwargs"
    problems = _arguments_problems(where, HerReplayBuffer, kwargs, BUFFER_ARGS)
    strategy = kwargs.get("goal_selection_strategy", "future")
    allowed = ", ".join(KEY_TO_GOAL_STRATEGY)
    built = isinstance(strategy, dict) and "_target_" in strategy  # a GoalSelectionStrategy made by instantiate
    if not built and str(strategy).lower() not in KEY_TO_GOAL_STRATEGY:
        problems.append(
            (
                f"{where}.goal_selection_strategy={strategy} is not one of {allowed}",
                f"set {where}.goal_selection_strategy to one of {allowed}, e.g. future",
            )
        )
    sampled = kwargs.get("n_sampled_goal", 4)
    if isinstance(sampled, int) and not isinstance(sampled, bool) and sampled < 0:
        problems.append(
            (f"{where}.n_sampled_goal={sampled} must be >= 0", f"set {where}.n_sampled_goal to 0 or more, e.g. 4")
        )
    return problems


def rejection(cfg: DictConfig, error: Exception) -> Problem:
    """What the algorithm raised while being built, as a problem naming the ``algo.*`` keys it mentions."""
    cause = error.__cause__ if isinstance(error, InstantiationException) and error.__cause__ else error
    problem, fix = _rejected(cfg, models.algo_class(cfg).__name__, f"{type(cause).__name__}: {cause}")
    return problem + raised_at(cause), fix  # where in SB3 (or a policy of the user's) it was raised


def _rejected(cfg: DictConfig, name: str, reason: str) -> Problem:
    """A problem for an argument the algorithm rejected, naming the ``algo.*`` keys its message mentions."""
    named = [f"algo.{key}={cfg.algo[key]}" for key in cfg.algo if re.search(rf"\b{re.escape(str(key))}\b", reason)]
    keys = f" ({', '.join(named)})" if named else ""
    fix = f"change {' or '.join(n.split('=')[0] for n in named)}" if named else "check the algo.* values"
    return f"{name} rejected its arguments{keys}: {reason}", f"{fix}; SB3's {name} documentation lists what each takes"
