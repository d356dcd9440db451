"""A model from a run folder that is not trusted, rebuilt from data only (DESIGN.md, "Folders", Trust).

``rlrun-eval`` of a received folder reads no pickle: the config's ``_target_``s (and ``env.id``'s module) must
be on an allow-list (rlrun's, SB3's, sb3-contrib's, Gymnasium's, torch.nn's, plus the prefixes the user names
in ``RLRUN_ALLOWED_TARGETS``), the normalisation statistics come from ``vecnormalize.npz``, and ``model.zip`` is
loaded with every ``:serialized:`` (pickled) entry of its ``data`` replaced through SB3's ``custom_objects``:
SB3 replaces only the keys it is given, so each one is named. The weights are read with ``torch.load``'s
``weights_only``.
"""

from __future__ import annotations

import inspect
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.make.models import algo_class, policy_for

ALLOWED_ENV = "RLRUN_ALLOWED_TARGETS"
ALLOWED = ("rlrun.", "stable_baselines3.", "sb3_contrib.", "gymnasium.", "torch.nn.")
GETTERS = ("hydra.utils.get_class", "hydra.utils.get_method")  # allowed when the ``path`` they get is


def allowed_prefixes() -> tuple[str, ...]:
    """rlrun's allow-list plus the module prefixes in ``RLRUN_ALLOWED_TARGETS`` (comma-separated)."""
    extra = [p.strip() for p in os.environ.get(ALLOWED_ENV, "").split(",") if p.strip()]
    return ALLOWED + tuple(extra)


def _allowed(name: str) -> bool:
    return any(name == prefix.rstrip(".") or name.startswith(prefix) for prefix in allowed_prefixes())


def refused_targets(cfg: DictConfig) -> list[str]:
    """What the config would import or call that is not on the allow-list: ``_target_``s, the classes that
    ``hydra.utils.get_class`` gets, and the module of an ``env.id`` of the form ``module:Id``."""
    refused: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            target = node.get("_target_")
            if isinstance(target, str):
                named = node.get("path") if target in GETTERS else target
                if not isinstance(named, str) or not _allowed(named):
                    refused.append(f"{target}({named})" if target in GETTERS else target)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(OmegaConf.to_container(cfg, resolve=False))
    policy = cfg.algo.get("policy")
    if isinstance(policy, str) and "." in policy and not _allowed(policy):  # a class path, not SB3's alias
        refused.append(f"algo.policy={policy}")
    env_id = str(cfg.env.id)
    if ":" in env_id and not _allowed(env_id.split(":", 1)[0]):
        refused.append(f"env.id={env_id}")
    return sorted(set(refused))


def _serialized_keys(path: Path) -> list[str]:
    """The entries of the zip's ``data`` JSON that SB3 would unpickle."""
    with zipfile.ZipFile(path) as archive:
        data = json.loads(archive.read("data"))
    return [key for key, item in data.items() if isinstance(item, dict) and ":serialized:" in item]


def load_model_data_only(cfg: DictConfig, path: Path, env: VecEnv) -> BaseAlgorithm:
    """The model in ``path`` for ``env``, none of its pickled objects executed: each is replaced by what the
    run's config (or the algorithm's default) says, the spaces by the env's. Enough to predict, not to train."""
    algo = algo_class(cfg)
    defaults = {
        name: param.default
        for name, param in inspect.signature(algo.__init__).parameters.items()
        if param.default is not inspect.Parameter.empty
    }
    policy = policy_for(cfg, env.observation_space)
    known: dict[str, Any] = {
        "policy_class": algo.policy_aliases[policy] if policy in algo.policy_aliases else get_class(policy),
        "observation_space": env.observation_space,
        "action_space": env.action_space,
        "lr_schedule": lambda _: 0.0,
    }
    if cfg.algo.get("policy_kwargs") is not None:
        from hydra.utils import instantiate  # the config's targets were checked against the allow-list

        known["policy_kwargs"] = instantiate(cfg.algo.policy_kwargs, _convert_="all")
    custom = {key: known.get(key, defaults.get(key)) for key in _serialized_keys(path)}
    return algo.load(path, env=env, device=cfg.device, custom_objects=custom)
