"""Names of run and sweep folders, and the OmegaConf resolvers ``conf/config.yaml`` uses for them.

A sweep's folder is ``outputs/sweeps/<sweep>``, the name exactly as given (:func:`folder_name` refuses names that
would not map one-to-one onto a folder). A sweep job lives in ``<sweep dir>/<env>-<algo>/<other overrides>/seed-<k>``.
The middle part is
computed here from the job's overrides, leaving out the keys that do not change what is trained
(:mod:`rlrun.config.keys`), so re-running a sweep with another ``progress_bar`` or ``eval.every`` finds the
same folders. Folder names never contain ``=`` or ``,``: Hydra's override grammar would reject such a
path as a ``resume=`` value.

``<env>`` in these folders (and ``run.json``'s ``env``, table groups, plot panels, study names) is
:func:`env_name`: the env config's name, or, for a config that takes any id (``gym`` and the family configs,
whose file leaves ``id`` as ``???``), the env id made a folder name (DESIGN.md, "Folders").
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
import secrets
import string
import unicodedata
from collections.abc import Callable, Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rlrun.config import budget, usage
from rlrun.config.errors import UserError
from rlrun.config.keys import NEW_RUN_DEFAULTS, override_key, training_overrides

# Drawn once per process so every resolution of hydra.run.dir names the same folder.
_RUN_SUFFIX = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(4))
_STARTED = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
# Config groups named in the first folder level (``<env>-<algo>``) rather than among the other overrides.
_NAMED_GROUPS = ("env", "algo")
# A folder name longer than this ends in a hash of the full name instead (file systems allow 255 bytes).
_MAX_NAME = 120
# What a file system allows in one folder name, in bytes of its UTF-8 spelling.
_MAX_FOLDER_BYTES = 255
# The rule for names of sweeps and studies (DESIGN.md, "Folders"), as the refusal states it.
NAME_RULE = (
    "a name is one folder name, used as given (Unicode letters are kept): not empty, not . or .., not starting "
    "with a dot, without / \\ = , or control characters, in Unicode's composed form (NFC), at most 255 bytes"
)


def safe_name(text: str) -> str:
    """``text`` as one folder name: ``=`` becomes ``-``; anything else but letters, digits and ``._+-@%``
    becomes ``+``."""
    name = re.sub(r"[^A-Za-z0-9._+@%-]+", "+", text.replace("=", "-"))
    name = re.sub(r"\+*([-_])\+*", r"\1", name).strip("+")
    if len(name) > _MAX_NAME:
        name = f"{name[: _MAX_NAME - 9]}+{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return name


@functools.cache
def takes_any_id(env_config: str) -> bool:
    """Whether the env config ``env_config`` (``conf/env/<env_config>.yaml`` shipped with rlrun) takes any env
    id: its file leaves ``id`` as ``???`` (``gym``, ``mujoco``, ``robotics``, ``minigrid``, ``atari``, ``box2d``).

    Decided from the file itself, so a new family config needs no list here. A config from the user's own
    config folder is named by its config name (its file is not read).
    """
    path = files("rlrun.conf").joinpath("env", f"{env_config}.yaml")
    if "/" in env_config or not path.is_file():
        return False
    try:
        return OmegaConf.is_missing(OmegaConf.create(path.read_text()), "id")
    except (OmegaConfBaseException, ValueError):
        return False


def id_name(env_id: str) -> str:
    """An env id as a folder name: the module prefix dropped, lower case, ``/`` and ``:`` to ``-``
    (``ALE/Pong-v5`` -> ``ale-pong-v5``, ``gymnasium_robotics:FetchReach-v4`` -> ``fetchreach-v4``)."""
    name = env_id.rpartition(":")[2] or env_id
    return safe_name(name.lower().replace("/", "-").replace(":", "-"))


def env_name(env_config: object, env_id: object, name: object = None) -> str:
    """``<env>`` of folder names, ``run.json``'s ``env``, table groups and plot panels: ``env.name`` when it is
    set (``name``; refused with :class:`UserError` when it cannot name a folder), else the env config's name, or
    for a config that takes any id (:func:`takes_any_id`) the id as a folder name (:func:`id_name`).

    ``env_id`` may be None or empty (an id not given yet): the config's name is kept.
    """
    if name is not None and str(name) != "":
        return folder_name("env.name", name)
    config = str(env_config)
    if env_id is None or str(env_id) in ("", "???") or not takes_any_id(config):
        return config
    return id_name(str(env_id))


def _name_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as a folder name as it is, or None when it can."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "it is not valid UTF-8 text"
    if name == "":
        return "it is empty"
    if name in (".", ".."):
        return f"{name} names the folder that would hold it, or that folder's parent, not a folder of its own"
    if name.startswith("."):
        return "it starts with a dot, which hides the folder"
    found = sorted({c for c in name if c in "/\\" or c in "=," or unicodedata.category(c) == "Cc"})
    if any(c in "/\\" for c in found):
        return "it holds a path separator, so it would name a folder inside another"
    if found:
        shown = " ".join(repr(c) for c in found)
        return f"it holds {shown}: folder names never contain = , or control characters (NUL, newline, ...)"
    if unicodedata.normalize("NFC", name) != name:
        return "it is not in Unicode's composed form (NFC): some file systems would give it another's folder"
    if size > _MAX_FOLDER_BYTES:
        return f"it is {size} bytes long in UTF-8, and a folder name holds at most {_MAX_FOLDER_BYTES}"
    return None


def _suggestion(name: str, fallback: str) -> str:
    """A name close to ``name`` that :func:`folder_name` accepts (``fallback`` when nothing of it is left)."""
    fixed = unicodedata.normalize("NFC", name)
    fixed = "".join("-" if c in "/\\=," or unicodedata.category(c) == "Cc" else c for c in fixed).lstrip(".")
    while len(fixed.encode("utf-8", "replace")) > _MAX_FOLDER_BYTES:
        fixed = fixed[:-1]
    fixed = fixed.encode("utf-8", "replace").decode("utf-8")
    return fixed if fixed and _name_problem(fixed) is None else fallback


def folder_name(key: str, value: object) -> str:
    """``value``, the ``sweep`` or ``tune.study`` name, as the folder name it is used as: exactly as given.

    Raises :class:`UserError` (exit 2) for a value that is not a name, or would not map one-to-one onto a
    folder of its own (DESIGN.md, "Folders"); nothing is ever rewritten.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        kind = "list" if isinstance(value, (list, ListConfig)) else type(value).__name__
        kind = "mapping" if isinstance(value, (dict, DictConfig)) else kind
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        raise UserError(
            f"{key}={shown} is a {kind}, not a name",
            f"give one name; quote it for Hydra if you mean that text: {key}=\"'{shown}'\"",
        )
    name = str(value)
    problem = _name_problem(name)
    if problem is not None:
        example = _suggestion(name, f"my-{key.rsplit('.', 1)[-1]}")
        quoted = example if re.fullmatch(r"[\w.+-]+", example, re.ASCII) else f"\"'{example}'\""
        raise UserError(f"{key}={name!r} cannot name a folder: {problem}", f"{NAME_RULE}; e.g. {key}={quoted}")
    return name


def _override_part(override: str) -> str:
    """One override as a folder-name fragment: ``+algo.gamma=0.9`` -> ``algo.gamma-0.9``, ``~tuned`` -> ``no-tuned``."""
    if override.startswith("~"):
        return f"no-{override_key(override)}"
    return override.lstrip("+")


def _as_before_the_key(override: str) -> bool:
    """Whether ``override`` sets a key added later to the value runs made before it trained with
    (``fused_adam=false``): left out of folder names as it is of ``config_hash``, so a sweep made before the key
    re-run with it finds its jobs."""
    key, _, value = override.partition("=")
    return key in NEW_RUN_DEFAULTS and value.strip().lower() == str(NEW_RUN_DEFAULTS[key]).lower()


def override_dirname(overrides: Iterable[str], named: Iterable[str] = _NAMED_GROUPS) -> str:
    """The ``<other overrides>`` level: the overrides that change training, but those of the keys ``named`` in
    the first level (``env=`` and ``algo=``, and ``env.id=`` where the env is named after its id)."""
    left_out = set(named)
    kept = [
        o for o in training_overrides(list(overrides)) if override_key(o) not in left_out and not _as_before_the_key(o)
    ]
    return safe_name("_".join(_override_part(o) for o in kept))


def sweep_subdir(
    env: str, algo: str, overrides: Iterable[str], seed: int, env_id: str | None = None, env_label: str | None = None
) -> str:
    """``<env>-<algo>/<other overrides>/seed-<k>``; the middle level is omitted when empty.

    ``env`` is the env config's name; with ``env_id``, a config that takes any id is named after the id
    (:func:`env_name`), and ``env.id=`` then names the first level instead of the middle one; ``env_label``
    (``env.name``) names the first level when set.
    """
    name = env_name(env, env_id, env_label)
    named = (*_NAMED_GROUPS, "env.id") if name != env else _NAMED_GROUPS
    parts = [safe_name(f"{name}-{algo}")]
    middle = override_dirname(overrides, named)
    if middle:
        parts.append(middle)
    parts.append(f"seed-{seed}")
    return "/".join(parts)


def sweep_name(name: object) -> str:
    """The sweep folder's name: the ``sweep`` key exactly as given (refused with :class:`UserError` when it
    cannot name a folder of its own), else the time the sweep started."""
    return _STARTED if name is None else folder_name("sweep", name)


def sweep_dir(name: object) -> str:
    """``outputs/sweeps/<name>`` as an absolute path (workers of some launchers start in other folders)."""
    return str(Path("outputs", "sweeps", sweep_name(name)).absolute())


def benchmark_part(parts: Any, part: object) -> str:
    """The pairs of one part of a benchmark in parts (``conf/benchmark/zoo.yaml``): ``parts[part]``, the part
    given as a number or a name; :class:`UserError` (exit 2) naming the parts there are otherwise."""
    try:
        return str(parts[str(part)])
    except KeyError:
        there = ", ".join(str(key) for key in parts)
        raise UserError(f"benchmark.part={part} is not a part of this benchmark", f"use one of: {there}") from None


def register() -> None:
    """Register the ``rlrun.*`` resolvers (idempotent).

    ``rlrun.sweep_dir`` is cached: Hydra copies the cache into every job's config, so all worker
    processes of one sweep agree on its folder even without ``sweep=``.
    """
    resolvers: dict[str, tuple[Callable[..., Any], bool]] = {
        "rlrun.run_suffix": (lambda: _RUN_SUFFIX, False),
        "rlrun.sweep_dir": (sweep_dir, True),
        "rlrun.env_name": (lambda env, env_id="", name="": env_name(env, env_id, name or None), False),
        "rlrun.part": (benchmark_part, False),
        "rlrun.commands": (usage.commands, False),  # the --help templates in conf/
        "rlrun.config_groups": (usage.config_groups, False),
        "rlrun.eval_every": (budget.eval_every, False),  # the evaluation defaults, relative to the budget
        "rlrun.final_episodes": (budget.final_episodes, False),
        "rlrun.sweep_subdir": (
            lambda env, algo, overrides, seed, env_id="", name="": sweep_subdir(
                env, algo, [str(o) for o in overrides], seed, env_id or None, name or None
            ),
            False,
        ),
    }
    for name, (resolver, use_cache) in resolvers.items():
        OmegaConf.register_new_resolver(name, resolver, replace=True, use_cache=use_cache)
