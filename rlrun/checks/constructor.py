"""An algorithm's arguments: the names and types its SB3 constructor takes, and what it raises when built.

Two of the rules checked before training (the others are in :mod:`rlrun.checks.rules`), applied the same
way by training (:mod:`rlrun.checks.preflight`) and by ``rlrun-check``: :func:`algo_problems` reads the
constructor's signature (no env needed), and :func:`rejection` turns whatever SB3 raises while building the
model (an assertion, a ValueError, a bad ``policy_kwargs``) into a problem naming the keys, so it is reported
before a run folder is written. :func:`construction_problems` builds a throwaway model for ``rlrun-check``.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
import warnings
from collections.abc import Callable
from typing import Any, cast

from hydra.errors import InstantiationException
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.build import envs as build
from rlrun.config.errors import Problem

# Arguments rlrun passes itself; an algo file that sets them is a mistake.
RUNTIME_ARGS = ("env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model")


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


def construction_problems(cfg: DictConfig) -> list[Problem]:
    """Whatever the algorithm raises while being built on throwaway env copies, as one problem.

    The copies are built as training builds them, but in-process (no worker processes start), and are
    closed again; only the first heavy step of a run costs this much (a few tens of ms).
    """
    venv = build.make_vec(cfg, cfg.env.n_envs, cfg.seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # budget_warnings says what SB3 would warn about here
            build.make_model(cfg, venv)
    except Exception as error:
        return [rejection(cfg, error)]
    finally:
        venv.close()
    return []


def rejection(cfg: DictConfig, error: Exception) -> Problem:
    """What the algorithm raised while being built, as a problem naming the ``algo.*`` keys it mentions."""
    cause = error.__cause__ if isinstance(error, InstantiationException) and error.__cause__ else error
    return _rejected(cfg, build.algo_class(cfg).__name__, f"{type(cause).__name__}: {cause}")


def _rejected(cfg: DictConfig, name: str, reason: str) -> Problem:
    """A problem for an argument the algorithm rejected, naming the ``algo.*`` keys its message mentions."""
    named = [f"algo.{key}={cfg.algo[key]}" for key in cfg.algo if re.search(rf"\b{re.escape(str(key))}\b", reason)]
    keys = f" ({', '.join(named)})" if named else ""
    fix = f"change {' or '.join(n.split('=')[0] for n in named)}" if named else "check the algo.* values"
    return f"{name} rejected its arguments{keys}: {reason}", f"{fix}; SB3's {name} documentation lists what each takes"
