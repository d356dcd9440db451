"""OmegaConf resolvers used by ``conf/config.yaml`` to name run and sweep folders.

Folder names never contain ``=`` or ``,``: Hydra's override grammar would reject such a path as a
``resume=`` value.
"""

from __future__ import annotations

import datetime
import re
import secrets
import string
from collections.abc import Callable
from typing import Any

from omegaconf import OmegaConf

# Drawn once per process so every resolution of hydra.run.dir names the same folder.
_RUN_SUFFIX = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(4))
_STARTED = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def _safe(text: str) -> str:
    """Replace what a folder name must not hold (``=``, ``,``, ``/``, brackets, spaces)."""
    return re.sub(r"[=,/\[\]{}'\" ]+", "+", text).strip("+")


def sweep_name(name: str | None) -> str:
    """The sweep folder: the ``sweep`` key, else the time the sweep started."""
    return _safe(str(name)) if name else _STARTED


def sweep_subdir(env: str, algo: str, override_dirname: str, seed: int) -> str:
    """``<env>-<algo>/<other overrides>/seed-<k>``; the middle part is omitted when empty."""
    parts = [f"{env}-{algo}"]
    if override_dirname:
        parts.append(_safe(override_dirname))
    parts.append(f"seed-{seed}")
    return "/".join(parts)


def register() -> None:
    """Register the ``rlrun.*`` resolvers (idempotent)."""
    resolvers: dict[str, Callable[..., Any]] = {
        "rlrun.run_suffix": lambda: _RUN_SUFFIX,
        "rlrun.sweep_name": sweep_name,
        "rlrun.sweep_subdir": sweep_subdir,
    }
    for name, resolver in resolvers.items():
        OmegaConf.register_new_resolver(name, resolver, replace=True)
