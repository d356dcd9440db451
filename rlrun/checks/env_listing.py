"""What ``rlrun-envs`` lists: the registered envs made once each (spaces, limits, goal env, the algorithms that
fit, :func:`list_envs`) and the env configs with the extras they need (:func:`list_configs`). ``rlrun-envs``
(:mod:`rlrun.cli.envs`) parses its command line and prints these.
"""

from __future__ import annotations

import fnmatch
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm

import rlrun.envs  # noqa: F401  (registers the rlrun/* ids)
from rlrun.checks import rules
from rlrun.make import families, gym_make, models


@dataclass
class EnvInfo:
    """One row of the listing (also the object written by ``--json``)."""

    id: str
    entry_point: str
    config: str  # what to write after ``env=``
    observation_space: str | None  # None when the env cannot be made here
    action_space: str | None
    max_episode_steps: int | None
    reward_threshold: float | None
    goal_env: bool | None
    algorithms: list[str] | None  # rlrun's algo options that fit the env
    unavailable: str | None  # why the spaces are unknown


@dataclass
class ConfigInfo:
    """One env config (``conf/env/<config>.yaml``): what ``env=<config>`` makes and what it needs."""

    config: str
    id: str | None  # None: a family or blank config that takes any id (env.id=...)
    extra: str | None  # the pip extra of rlrun it needs: pip install "rlrun[<extra>]"
    installed: bool  # whether that extra's packages can be imported here


def _conf_files(group: str) -> dict[str, Any]:
    """The ``conf/<group>/*.yaml`` files shipped with rlrun, by option name."""
    folder = files("rlrun.conf").joinpath(group)
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".yaml"))
    return {name.removesuffix(".yaml"): folder.joinpath(name) for name in names}


def env_configs() -> dict[str, str]:
    """Env id -> the ``conf/env`` option that makes it (the first by name where several do)."""
    configs: dict[str, str] = {}
    for name, path in _conf_files("env").items():
        node = OmegaConf.create(path.read_text())
        if not OmegaConf.is_missing(node, "id"):
            configs.setdefault(str(node.id).split(":")[-1], name)  # module:id makes id
    return configs


def list_configs() -> list[ConfigInfo]:
    """Every ``conf/env`` option with its id, extra and whether the extra is installed (nothing is imported)."""
    infos = []
    for name, path in _conf_files("env").items():
        node = OmegaConf.create(path.read_text())
        env_id = None if OmegaConf.is_missing(node, "id") else str(node.id)
        extra = node.get("extra")
        infos.append(ConfigInfo(name, env_id, extra, families.installed(extra)))
    return infos


def algo_options() -> dict[str, tuple[type[BaseAlgorithm], bool]]:
    """Each ``conf/algo`` option's SB3 class and whether it uses HER, composed exactly as training does."""
    options: dict[str, tuple[type[BaseAlgorithm], bool]] = {}
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        for name in _conf_files("algo"):
            cfg = compose("config", overrides=[f"algo={name}", "~tuned"])
            options[name] = (models.algo_class(cfg), models.uses_her(cfg))
    return options


def unavailable_reason(error: Exception) -> str:
    """A short reason why an env cannot be made, with the install command where the error names one."""
    text = str(error)
    commands = re.findall(r"pip install (\"[^\"]+\"|\S+)", text)
    if commands:
        extras = [c for c in commands if "[" in c] or commands
        return f"needs `pip install {extras[0].rstrip('`.,')}`"
    if isinstance(error, ModuleNotFoundError) and error.name:
        return f"needs `pip install {error.name.split('.')[0]}`"
    first = re.split(r"(?<=[.!])\s", text.strip(), maxsplit=1)[0] or type(error).__name__
    return f"cannot be made: {first}"


def _entry_point(spec: EnvSpec) -> str:
    entry = spec.entry_point
    if isinstance(entry, str):
        return entry
    return f"{getattr(entry, '__module__', '?')}:{getattr(entry, '__qualname__', repr(entry))}"


def _space(space: gym.Space) -> str:
    """``str(space)`` on one line, without numpy's column padding (``[-4.8   -inf]`` -> ``[-4.8 -inf]``)."""
    return re.sub(r"\[\s+", "[", re.sub(r"\s+", " ", str(space)))


def describe(spec: EnvSpec, configs: dict[str, str], algos: dict[str, tuple[type[BaseAlgorithm], bool]]) -> EnvInfo:
    """Make the env once (no env checker, warnings off) and describe it; never raises for a broken env."""
    family = families.family_of(_entry_point(spec))
    info = EnvInfo(
        id=spec.id, entry_point=_entry_point(spec),
        config=configs.get(spec.id, f"{family or 'gym'} env.id={spec.id}"),
        observation_space=None, action_space=None, max_episode_steps=spec.max_episode_steps,
        reward_threshold=spec.reward_threshold, goal_env=None, algorithms=None, unavailable=None,
    )  # fmt: skip
    registers = families.FAMILIES[family].registers if family else None
    if registers is not None and _entry_point(spec).startswith(registers):  # hundreds of ids, some slow to make
        info.unavailable = (
            f"not made by rlrun-envs (an id of the {family} family; rlrun-check env={info.config} makes it)"
        )
        return info
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = gym.make(spec.id, disable_env_checker=True)
    except Exception as error:  # any env may fail to build here (missing deps, bad entry point)
        info.unavailable = unavailable_reason(error)
        return info
    try:
        info.observation_space, info.action_space = _space(env.observation_space), _space(env.action_space)
        info.goal_env = rules.is_goal_env(env)
        info.algorithms = [name for name, (cls, her) in algos.items() if rules.algo_fits(env, cls, her)]
    finally:
        env.close()
    return info


def matches(env_id: str, pattern: str | None) -> bool:
    """Whether ``env_id`` matches ``rlrun-envs --all PATTERN``: a glob (``*``, ``?``) or else a part of the id,
    either way ignoring case; every id matches no pattern."""
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatch(env_id.lower(), pattern.lower())
    return pattern.lower() in env_id.lower()


def list_envs(all_envs: bool = False, pattern: str | None = None, packages: Sequence[str] = ()) -> list[EnvInfo]:
    """The rlrun envs (namespace ``rlrun``), then, with ``all_envs``, every other registered env whose id matches
    ``pattern`` (:func:`matches`); ``packages`` (``env.packages``) are imported first, to register their ids."""
    gym_make.import_packages(packages)
    if all_envs:  # the installed families' and known third-party packages register their ids when imported
        gym_make.register_installed_families()
    specs = sorted(gym.registry.values(), key=lambda spec: spec.namespace != "rlrun")
    specs = [spec for spec in specs if (all_envs and matches(spec.id, pattern)) or spec.namespace == "rlrun"]
    configs, algos = env_configs(), algo_options()
    return [describe(spec, configs, algos) for spec in specs]


def list_presets() -> list[tuple[str, str]]:
    """Each preset of ``conf/tuned/``: the pair it applies to (``env=<env> algo=<algo>``) and where it comes from
    (its first comment: tuned here, or RL Zoo's)."""
    algos = sorted(_conf_files("algo"), key=len, reverse=True)  # her_tqc before tqc
    presets = []
    for name, path in _conf_files("tuned").items():
        algo = next((a for a in algos if name.endswith(f"_{a}")), "?")
        text = path.read_text()
        source = "RL Zoo's (rl_zoo3)" if "rl_zoo3" in text else "tuned here"
        if "not re-verified" in text:
            source += ", not re-verified here"
        presets.append((f"env={name.removesuffix('_' + algo)} algo={algo}", source))
    return presets
