"""Configs and pickles of runs written by older versions of rlrun, brought up to date when they are loaded.

The one place that knows how older run folders differ from what rlrun writes now:

- the Gymnasium envs were the top-level package ``envs`` until they became ``rlrun.envs``: ``config.yaml``
  names ``envs.`` targets (``envs.wrappers.RelativePosition``) and pickles name ``envs.gridworld``,
  ``envs.rendering``, ... by module;
- rlrun's runner modules that moved (``rlrun.build`` is ``rlrun.make``, ...): pickles name the old paths
  (:data:`MOVED_MODULES`);
- keys added after a run was written: what such a run did without them (:data:`OLD_RUN_DEFAULTS`).

:func:`upgrade` returns an upgraded copy of a loaded config (the file on disk is never rewritten), and
:func:`upgrade_container` of one read as plain YAML; :func:`load_config` reads a run folder's ``config.yaml``
through it; :func:`load_pickle` reads a pickle of a run folder with the old module names mapped to the new
ones. :func:`legacy_spelling` is the inverse spelling, which ``config_hash`` hashes so that a run keeps its
identity across the rename.
"""

from __future__ import annotations

import functools
import pickle
from pathlib import Path
from typing import IO, Any

from omegaconf import DictConfig, OmegaConf

OLD_PACKAGE, NEW_PACKAGE = "envs", "rlrun.envs"
# What the old top-level package held (commit aaa907b): its modules, and the names its __init__ exported.
# Only these are mapped, so a user's own package that happens to be called ``envs`` is left alone.
OLD_MODULES = frozenset(
    {"checks", "gridworld", "point", "point_goal", "rendering", "room", "wrappers", "batched"}
    | {f"batched.{name}" for name in ("base", "gridworld", "point", "point_goal", "room", "wrappers")}
)
OLD_EXPORTS = frozenset(
    {"ENV_IDS", "GridWorldEnv", "PointEnv", "PointGoalEnv", "RelativePosition", "RoomToyEnv", "ScaleReward"}
)
OLD_ENV_IDS = "rlrun/"  # ``envs:rlrun/GridWorld-v0``: a Gymnasium id that imports the old package first
# Modules of rlrun's runner that moved (the ``build`` package became ``make``, ``process`` became ``startup``, and
# modules took names of their own); a pickle names classes and functions by module path, so snapshots and
# normalisation statistics written before a move name the old one. ``rlrun.build.envs`` was split: what a pickle
# can name of it (its functions, e.g. the subprocess workers' factory) is in ``vec_envs`` now.
MOVED_MODULES = {
    "rlrun.build.envs": "rlrun.make.vec_envs",
    "rlrun.build.env_making": "rlrun.make.gym_make",
    "rlrun.build.families": "rlrun.make.families",
    "rlrun.build.batched": "rlrun.make.native",
    "rlrun.build.nan": "rlrun.make.nan",
    "rlrun.build.received": "rlrun.playback.received",
    "rlrun.build.trackers": "rlrun.track.loggers",
    "rlrun.process.signals": "rlrun.run.signals",
    "rlrun.run.internals": "rlrun.run.seam",
    "rlrun.run.resume": "rlrun.run.resume_state",
    "rlrun.run.train": "rlrun.run.training",
    "rlrun.run.received": "rlrun.playback.received",
    "rlrun.record.files": "rlrun.record.formats",
    "rlrun.record.trust": "rlrun.record.signatures",
}
MOVED_PACKAGES = {"rlrun.process": "rlrun.startup", "rlrun.build": "rlrun.make"}
# Keys added after some runs were written, with what those runs did without them. Only keys that do not change
# what is trained belong here: config_hash must see an upgraded config as the run recorded it.
OLD_RUN_DEFAULTS: dict[str, Any] = {
    "eval.n_envs": 1,  # before it, evaluation ran on one env copy
    "eval.deterministic": True,  # before it, every evaluation used the deterministic policy
    "fused_adam": False,  # before it, torch's default Adam
}


def _is_old_name(rest: str) -> bool:
    """Whether ``envs.<rest>`` names something of the old package (a module of it, or a name it exported)."""
    first = rest.split(".", 1)[0].split(":", 1)[0]
    return first in OLD_EXPORTS or any(rest == m or rest.startswith((f"{m}.", f"{m}:")) for m in OLD_MODULES)


def upgrade_name(text: str) -> str:
    """A module path (or ``module:name``, or a Gymnasium ``module:id``) of the old package in today's spelling:
    ``envs.wrappers.RelativePosition`` -> ``rlrun.envs.wrappers.RelativePosition``; anything else unchanged."""
    if text.startswith(f"{OLD_PACKAGE}.") and _is_old_name(text[len(OLD_PACKAGE) + 1 :]):
        return f"{NEW_PACKAGE}.{text[len(OLD_PACKAGE) + 1 :]}"
    if text.startswith(f"{OLD_PACKAGE}:{OLD_ENV_IDS}") or text == OLD_PACKAGE:
        return NEW_PACKAGE + text[len(OLD_PACKAGE) :]
    return text


def moved_module(module: str) -> str:
    """Today's path of a module of rlrun's runner that moved (:data:`MOVED_MODULES`); anything else unchanged."""
    if module in MOVED_MODULES:
        return MOVED_MODULES[module]
    for old, new in MOVED_PACKAGES.items():
        if module == old or module.startswith(f"{old}."):
            return new + module[len(old) :]
    return module


def legacy_name(text: str) -> str:
    """The inverse of :func:`upgrade_name`: ``rlrun.envs.wrappers.RelativePosition`` -> ``envs.wrappers...``."""
    if text.startswith(f"{NEW_PACKAGE}.") and _is_old_name(text[len(NEW_PACKAGE) + 1 :]):
        return f"{OLD_PACKAGE}.{text[len(NEW_PACKAGE) + 1 :]}"
    if text.startswith(f"{NEW_PACKAGE}:{OLD_ENV_IDS}") or text == NEW_PACKAGE:
        return OLD_PACKAGE + text[len(NEW_PACKAGE) :]
    return text


def _respelled(node: Any, spell: Any) -> Any:
    """A plain container with every string value passed through ``spell`` (keys are never module paths)."""
    if isinstance(node, dict):
        return {key: _respelled(value, spell) for key, value in node.items()}
    if isinstance(node, list):
        return [_respelled(value, spell) for value in node]
    return spell(node) if isinstance(node, str) else node


def legacy_spelling(container: dict[Any, Any]) -> dict[Any, Any]:
    """A resolved config (a plain dict) with rlrun's env modules spelled as before the rename (``envs.``)."""
    respelled = _respelled(container, legacy_name)
    assert isinstance(respelled, dict)
    return respelled


def upgrade_container(config: dict[Any, Any]) -> dict[Any, Any]:
    """An upgraded copy of a config read as a plain mapping (``rlrun-table`` reads ``config.yaml`` as YAML):
    module paths of the old ``envs`` package in today's spelling, and keys added since the run was written
    filled in with what the run did without them."""
    upgraded = _respelled(config, upgrade_name)
    assert isinstance(upgraded, dict)
    for key, value in OLD_RUN_DEFAULTS.items():
        *parents, leaf = key.split(".")
        node: Any = upgraded
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf not in node:
            node[leaf] = value
    return upgraded


def upgrade(cfg: DictConfig) -> DictConfig:
    """An upgraded copy of the config of a run written by an older rlrun (``cfg`` itself is not changed), as
    :func:`upgrade_container` makes it. A config of the current rlrun comes back equal."""
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    return OmegaConf.create(upgrade_container(container))


def load_config(run_dir: Path) -> DictConfig:
    """A run folder's ``config.yaml`` (the authority on what it trained), upgraded in memory."""
    cfg = OmegaConf.load(run_dir / "config.yaml")
    assert isinstance(cfg, DictConfig)
    return upgrade(cfg)


class _OldEnvSpec:
    """Stands in for Gymnasium's ``EnvSpec`` while one is unpickled: its ``entry_point`` string names the env's
    module (``envs.gridworld:GridWorldEnv``); it is respelled, and the object becomes a plain ``EnvSpec``."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        from gymnasium.envs.registration import EnvSpec

        if isinstance(state.get("entry_point"), str):
            state = {**state, "entry_point": upgrade_name(state["entry_point"])}
        self.__dict__.update(state)
        self.__class__ = EnvSpec  # type: ignore[assignment]  # same layout: a dataclass without slots


@functools.cache
def _old_env_spec() -> type:
    from gymnasium.envs.registration import EnvSpec

    return type("EnvSpec", (_OldEnvSpec, EnvSpec), {"__module__": EnvSpec.__module__})


class LegacyUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` with moved modules mapped to today's (``envs.gridworld`` -> ``rlrun.envs.gridworld``,
    ``rlrun.build.nan`` -> ``rlrun.make.nan``), for the pickles in run folders written before a move."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("gymnasium.envs.registration", "EnvSpec"):
            return _old_env_spec()
        if module == "rlrun.process.signals" and name == "ignore_stop_signals":
            module = "rlrun.make.vec_envs"  # the subprocess workers' factory moved beside the envs it makes
        return super().find_class(moved_module(upgrade_name(module)), name)


def load_pickle(file: Path | IO[bytes]) -> Any:
    """Unpickle a file of a run folder (a path or an open binary file) with :class:`LegacyUnpickler`."""
    if isinstance(file, Path):
        with open(file, "rb") as f:
            return LegacyUnpickler(f).load()
    return LegacyUnpickler(file).load()
