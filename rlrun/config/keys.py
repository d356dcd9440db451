"""The one list of config keys that do not change what is trained, and what follows from it.

``config_hash`` leaves these keys out, sweep folder names leave them out (but ``seed``, which gets its
own folder level), and ``resume=`` accepts none of them but ``progress_bar``. A key here names the
top-level entry and everything under it (``eval`` covers ``eval.every``, ``eval.n_envs``, ...).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from omegaconf import DictConfig, OmegaConf

# Keys (and whole subtrees) that never change the trained parameters.
NON_TRAINING_KEYS = ("seed", "progress_bar", "resume", "sweep", "eval", "snapshot", "check_nan", "tune")
# Overrides that also say nothing about what is trained: the config groups that pick launchers and sweepers.
HYDRA_PREFIXES = ("hydra.", "hydra/")
# The only override a resumed run accepts besides resume= itself.
RESUME_OVERRIDES = ("resume", "progress_bar")


def override_key(override: str) -> str:
    """The dotted key of a command-line override: ``+algo.gamma=0.9`` -> ``algo.gamma``, ``~tuned`` -> ``tuned``."""
    return override.split("=", 1)[0].lstrip("+~")


def is_training_key(key: str) -> bool:
    """Whether a dotted key (or config group) can change what is trained."""
    if key.startswith(HYDRA_PREFIXES) or key == "hydra":
        return False
    return key.split(".", 1)[0].split("/", 1)[0] not in NON_TRAINING_KEYS


def training_overrides(overrides: list[str]) -> list[str]:
    """The overrides that can change what is trained, in the order given."""
    return [o for o in overrides if is_training_key(override_key(o))]


def config_hash(cfg: DictConfig | dict[str, Any]) -> str:
    """sha256 of the resolved config without the keys that do not change what is trained.

    ``torch_threads`` stays in: it changes the results.
    """
    container = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
    assert isinstance(container, dict)
    trained = {key: value for key, value in container.items() if is_training_key(str(key))}
    return hashlib.sha256(json.dumps(trained, sort_keys=True).encode()).hexdigest()
