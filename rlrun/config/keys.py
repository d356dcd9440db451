"""The one list of config keys that do not change what is trained, and what follows from it; the two
halves of a command-line override in Hydra's grammar: reading its key, writing its value; and :data:`ABSENT`,
the value of a key a config does not hold.

``config_hash`` leaves these keys out, sweep folder names leave them out (but ``seed``, which gets its
own folder level), and ``resume=`` accepts none of them but ``progress_bar``. A key here names the
top-level entry and everything under it (``eval`` covers ``eval.every``, ``eval.n_envs``, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

from rlrun.config import backend
from rlrun.config.upgrade import legacy_spelling

# Keys (and whole subtrees) that never change the trained parameters.
NON_TRAINING_KEYS = (
    "seed",
    "progress_bar",
    "progress_every",
    "resume",
    "sweep",
    "sweep_yes",
    "eval",
    "snapshot",
    "check_nan",
    "tune",
    "logger",
    "benchmark",
)
# Env keys added after runs were first made, at the values that change nothing: left out of config_hash so that
# a run (and a sweep job) made before them keeps its hash.
NEW_ENV_DEFAULTS: dict[str, Any] = {"extra": None, "wrappers": {}, "frame_stack": None, "threshold": None}
# Top-level training keys added after runs were first made, at the values those runs trained with: left out of
# config_hash at these values, for the same reason.
NEW_RUN_DEFAULTS: dict[str, Any] = {"fused_adam": False}
# Keys inside a group that never change the trained parameters: the level tables count as solved.
NON_TRAINING_SUBKEYS = ("env.threshold", "env.packages", "env.success_key", "env.name")
# Overrides that also say nothing about what is trained: the config groups that pick launchers and sweepers.
HYDRA_PREFIXES = ("hydra.", "hydra/")
# The only overrides a resumed run accepts besides resume= itself; total_timesteps= only above the run's budget
# (a continuation, rlrun.run.continuation).
RESUME_OVERRIDES = ("resume", "progress_bar", "progress_every", "total_timesteps")
# The value of a dotted key that a config does not hold (``OmegaConf.select(cfg, key, default=ABSENT)``), which
# None cannot stand for: a key may hold None
ABSENT = object()


def override_key(override: str) -> str:
    """The dotted key of a command-line override: ``+algo.gamma=0.9`` -> ``algo.gamma``, ``~tuned`` -> ``tuned``."""
    return override.split("=", 1)[0].lstrip("+~")


def override_value(value: Any) -> str:
    """A value in Hydra's override grammar: ``null``, ``true``, ``1e-05``, ``'auto_0.1'``, ``[64,64]``, ``{a:1}``.

    A string is always quoted, so any characters a path or a name holds stay part of the value.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{key}:{override_value(item)}" for key, item in value.items()) + "}"
    return "[" + ",".join(override_value(item) for item in value) + "]"


def is_training_key(key: str) -> bool:
    """Whether a dotted key (or config group) can change what is trained."""
    if key.startswith(HYDRA_PREFIXES) or key == "hydra" or key in NON_TRAINING_SUBKEYS:
        return False
    return key.split(".", 1)[0].split("/", 1)[0] not in NON_TRAINING_KEYS


def training_overrides(overrides: list[str]) -> list[str]:
    """The overrides that can change what is trained, in the order given."""
    return [o for o in overrides if is_training_key(override_key(o))]


def config_hash(cfg: DictConfig | dict[str, Any]) -> str:
    """sha256 of the resolved config without the keys that do not change what is trained.

    ``torch_threads`` stays in: it changes the results. rlrun's envs are hashed in the spelling they had
    before they became ``rlrun.envs`` (``envs.wrappers.RelativePosition``, see
    :func:`rlrun.config.upgrade.legacy_spelling`): the rename changed no run, so a run keeps its hash across
    it. The config of a run written before the rename, upgraded when it is loaded, hashes as its ``run.json``
    records; and a job composed today with ``rlrun.envs`` targets hashes as the same job did in a sweep made
    before the rename, so re-running that sweep skips the jobs it completed.
    """
    container = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
    assert isinstance(container, dict)
    trained = {
        key: value
        for key, value in container.items()
        if is_training_key(str(key)) and (key not in NEW_RUN_DEFAULTS or value != NEW_RUN_DEFAULTS[key])
    }
    if isinstance(trained.get("env"), dict):
        env = trained["env"]
        trained["env"] = {
            k: v
            for k, v in env.items()
            if f"env.{k}" not in NON_TRAINING_SUBKEYS and (k not in NEW_ENV_DEFAULTS or v != NEW_ENV_DEFAULTS[k])
        }
    if isinstance(trained.get("algo"), dict) and trained["algo"].get(backend.KEY) == backend.TORCH:
        trained["algo"] = {k: v for k, v in trained["algo"].items() if k != backend.KEY}  # the default, as before it
    canonical = legacy_spelling(trained)
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()
