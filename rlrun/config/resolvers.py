"""Names of run and sweep folders, and the OmegaConf resolvers ``conf/config.yaml`` uses for them.

A sweep job lives in ``<sweep dir>/<env>-<algo>/<other overrides>/seed-<k>``. The middle part is
computed here from the job's overrides, leaving out the keys that do not change what is trained
(:mod:`rlrun.config.keys`), so re-running a sweep with another ``progress_bar`` or ``eval.every`` finds the
same folders. Folder names never contain ``=`` or ``,``: Hydra's override grammar would reject such a
path as a ``resume=`` value.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import secrets
import string
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from rlrun.config.keys import override_key, training_overrides

# Drawn once per process so every resolution of hydra.run.dir names the same folder.
_RUN_SUFFIX = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(4))
_STARTED = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
# Config groups named in the first folder level (``<env>-<algo>``) rather than among the other overrides.
_NAMED_GROUPS = ("env", "algo")
# A folder name longer than this ends in a hash of the full name instead (file systems allow 255 bytes).
_MAX_NAME = 120


def safe_name(text: str) -> str:
    """``text`` as one folder name: ``=`` becomes ``-``; anything else but letters, digits and ``._+-@%``
    becomes ``+``."""
    name = re.sub(r"[^A-Za-z0-9._+@%-]+", "+", text.replace("=", "-"))
    name = re.sub(r"\+*([-_])\+*", r"\1", name).strip("+")
    if len(name) > _MAX_NAME:
        name = f"{name[: _MAX_NAME - 9]}+{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return name


def _override_part(override: str) -> str:
    """One override as a folder-name fragment: ``+algo.gamma=0.9`` -> ``algo.gamma-0.9``, ``~tuned`` -> ``no-tuned``."""
    if override.startswith("~"):
        return f"no-{override_key(override)}"
    return override.lstrip("+")


def override_dirname(overrides: Iterable[str]) -> str:
    """The ``<other overrides>`` level: the overrides that change training, but ``env=`` and ``algo=``."""
    kept = [o for o in training_overrides(list(overrides)) if override_key(o) not in _NAMED_GROUPS]
    return safe_name("_".join(_override_part(o) for o in kept))


def sweep_subdir(env: str, algo: str, overrides: Iterable[str], seed: int) -> str:
    """``<env>-<algo>/<other overrides>/seed-<k>``; the middle level is omitted when empty."""
    parts = [safe_name(f"{env}-{algo}")]
    middle = override_dirname(overrides)
    if middle:
        parts.append(middle)
    parts.append(f"seed-{seed}")
    return "/".join(parts)


def sweep_name(name: str | None) -> str:
    """The sweep folder's name: the ``sweep`` key, else the time the sweep started."""
    return safe_name(str(name)) if name else _STARTED


def sweep_dir(name: str | None) -> str:
    """``outputs/sweeps/<name>`` as an absolute path (workers of some launchers start in other folders)."""
    return str(Path("outputs", "sweeps", sweep_name(name)).absolute())


def register() -> None:
    """Register the ``rlrun.*`` resolvers (idempotent).

    ``rlrun.sweep_dir`` is cached: Hydra copies the cache into every job's config, so all worker
    processes of one sweep agree on its folder even without ``sweep=``.
    """
    resolvers: dict[str, tuple[Callable[..., Any], bool]] = {
        "rlrun.run_suffix": (lambda: _RUN_SUFFIX, False),
        "rlrun.sweep_dir": (sweep_dir, True),
        "rlrun.sweep_subdir": (
            lambda env, algo, overrides, seed: sweep_subdir(env, algo, [str(o) for o in overrides], seed),
            False,
        ),
    }
    for name, (resolver, use_cache) in resolvers.items():
        OmegaConf.register_new_resolver(name, resolver, replace=True, use_cache=use_cache)
