"""A model from a run folder that is not trusted, rebuilt from data only (DESIGN.md, "Folders", Trust).

``rlrun-eval`` of a received folder (and ``rlrun.load_run(..., untrusted="data")``) takes nothing from it that
names code: no ``_target_``, no ``entry_point``, no ``module:`` prefix in ``env.id``, no ``env.packages``. The
folder's env config and wrappers are looked up by name among the config groups installed here (``conf/env``,
``conf/wrappers``): what is instantiated comes from those files, and only plain values (numbers, strings, lists
and mappings of them) come from the folder, checked against the schema (:func:`rebuild`). The algorithm, the
policy and the classes in ``algo.policy_kwargs`` must be classes on an allow-list (:func:`allowed_classes`: the
installed algorithm configs' classes, SB3's policies, feature extractors and optimisers, torch's activations,
plus the full class names in ``RLRUN_ALLOWED_TARGETS``). A folder that needs more is refused before anything
of it runs (:class:`NeedsTrust`).

The normalisation statistics come from ``vecnormalize.npz``, and ``model.zip`` is loaded with every
``:serialized:`` (pickled) entry of its ``data`` replaced through SB3's ``custom_objects``: SB3 replaces only
the keys it is given, so each one is named. The weights are read with ``torch.load``'s ``weights_only``.
"""

from __future__ import annotations

import inspect
import json
import os
import zipfile
from importlib.resources import files
from pathlib import Path
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from rlrun.config import backend
from rlrun.config.errors import UserError
from rlrun.make.models import algo_class, policy_for

ALLOWED_ENV = "RLRUN_ALLOWED_TARGETS"
# What a received zip archive may unpack to: weights of the nets SB3 trains are megabytes (a NatureCNN policy about
# 7 MB), and pack about 1:1; SB3's data JSON about 10:1. A zip bomb packs 1,000:1 and more.
MAX_UNPACKED_BYTES = 4 * 2**30
MAX_RATIO = 100
RATIO_FROM = 2**20  # files smaller than this may pack as tightly as they like
GETTER = "hydra.utils.get_class"
# Hydra's instantiation keys: taken from the installed config, never from the folder
HYDRA_KEYS = ("_target_", "_partial_", "_args_", "_recursive_", "_convert_")
# The classes a received policy may name (besides the installed algorithms' and RLRUN_ALLOWED_TARGETS')
CLASSES = frozenset(
    [f"torch.nn.{name}" for name in ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU", "SELU", "Mish")]
    + [f"torch.nn.{name}" for name in ("Sigmoid", "Softplus", "Identity")]
    + [f"torch.optim.{name}" for name in ("Adam", "AdamW", "RMSprop", "SGD")]
    + ["stable_baselines3.common.sb2_compat.rmsprop_tf_like.RMSpropTFLike", "stable_baselines3.HerReplayBuffer"]
    + [
        f"stable_baselines3.common.torch_layers.{name}"
        for name in ("FlattenExtractor", "NatureCNN", "CombinedExtractor", "MlpExtractor")
    ]
    + [
        f"stable_baselines3.common.policies.{name}"
        for name in ("ActorCriticPolicy", "ActorCriticCnnPolicy", "MultiInputActorCriticPolicy")
    ]
)


class NeedsTrust(Exception):
    """What a received folder would run beyond data: each item names the key and the code."""

    def __init__(self, needs: list[str]) -> None:
        super().__init__(", ".join(needs))
        self.needs = needs


def _group(group: str) -> dict[str, Any]:
    """The installed options of ``conf/<group>`` as plain mappings, by name."""
    folder = files("rlrun.conf").joinpath(group)
    options = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".yaml"):
            node = OmegaConf.create(entry.read_text())
            options[entry.name.removesuffix(".yaml")] = OmegaConf.to_container(node, resolve=False)
    return options


def allowed_classes() -> frozenset[str]:
    """The classes a received folder's algorithm and policy may name: :data:`CLASSES`, the ``_target_`` of each
    installed algorithm config, and the full class names in ``RLRUN_ALLOWED_TARGETS`` (comma-separated)."""
    algos = {str(node["_target_"]) for node in _group("algo").values() if isinstance(node.get("_target_"), str)}
    extra = {name.strip() for name in os.environ.get(ALLOWED_ENV, "").split(",") if name.strip()}
    return CLASSES | algos | extra


def _plain(value: Any, key: str, needs: list[str]) -> Any:
    """``value`` if it is data (no Hydra key, no interpolation), else noted in ``needs``."""
    if isinstance(value, dict):
        for name in value:
            if name in HYDRA_KEYS:
                needs.append(f"{key}.{name}={value[name]}")
        return {k: _plain(v, f"{key}.{k}", needs) for k, v in value.items() if k not in HYDRA_KEYS}
    if isinstance(value, list):
        return [_plain(v, f"{key}[{i}]", needs) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        needs.append(f"{key}={value!r} (an interpolation)")
    return value


def _take(installed: Any, received: Any, key: str, needs: list[str]) -> Any:
    """The installed node with the received plain values over it: Hydra keys must be the installed ones."""
    if not isinstance(received, dict) or not isinstance(installed, dict):
        return _plain(received, key, needs)
    for name in HYDRA_KEYS:
        if name in received and received[name] != installed.get(name):
            needs.append(f"{key}.{name}={received[name]}")
    if str(installed.get("_target_", "")).startswith("hydra.utils.get_") and received.get("path") != installed.get(
        "path"
    ):
        needs.append(f"{key}.path={received.get('path')}")  # the class a getter imports is the installed one
    taken = {k: v for k, v in installed.items() if k in HYDRA_KEYS}
    for name, value in received.items():
        if name not in HYDRA_KEYS:
            taken[name] = _take(installed.get(name), value, f"{key}.{name}", needs)
    return taken


def _env_choice(env: dict[str, Any], record: dict[str, Any] | None) -> str | None:
    """The installed env config the folder's env came from: named by its record, else the one making its id,
    else the family with its extra, else ``gym`` (any id)."""
    options = _group("env")
    record = record or {}
    named = [o.split("=", 1)[1] for o in record.get("overrides") or [] if isinstance(o, str) and o.startswith("env=")]
    for name in [*named, record.get("env")]:
        if isinstance(name, str) and name in options:
            return name
    for name, node in sorted(options.items()):
        if node.get("id") == env.get("id"):
            return name
    for name, node in sorted(options.items()):
        if env.get("extra") and node.get("extra") == env.get("extra") and node.get("id") == "???":
            return name
    return "gym" if "gym" in options else None


def _env(env: Any, record: dict[str, Any] | None, needs: list[str]) -> dict[str, Any]:
    """The folder's env node over the installed config it names; its id without a module, no packages."""
    if not isinstance(env, dict):
        needs.append("env (not a mapping)")
        return {}
    choice = _env_choice(env, record)
    installed = _group("env").get(choice or "", {})
    taken = _take(installed, env, "env", needs)
    env_id = env.get("id")
    if isinstance(env_id, str) and ":" in env_id and env_id != installed.get("id"):
        needs.append(f"env.id={env_id} (imports the module before ':')")
    if env.get("packages"):
        needs.append(f"env.packages={env['packages']} (imported before the env is made)")
    taken.pop("packages", None)
    return taken


def _wrappers(wrappers: Any, needs: list[str]) -> dict[str, Any]:
    """The folder's wrappers, each the installed ``conf/wrappers/<name>.yaml`` with the folder's plain values."""
    if not isinstance(wrappers, dict):
        needs.append("wrappers (not a mapping)")
        return {}
    options: dict[str, Any] = {}
    for node in _group("wrappers").values():
        options.update(node)  # each file holds one key named after itself
    taken = {}
    for name, node in wrappers.items():
        if name not in options:
            needs.append(f"wrappers.{name} (a wrapper of its own: no conf/wrappers/{name}.yaml here)")
            continue
        taken[name] = _take(options[name], node, f"wrappers.{name}", needs)
    return taken


def _classes(node: Any, key: str, allowed: frozenset[str], needs: list[str]) -> Any:
    """``algo.policy_kwargs`` with each class it gets checked against the allow-list; nothing else called."""
    if isinstance(node, dict):
        target = node.get("_target_")
        if target is not None:
            if target != GETTER or set(node) - {"_target_", "path"} or node.get("path") not in allowed:
                needs.append(f"{key}: {target}({node.get('path', '...')})")
            return {"_target_": GETTER, "path": node.get("path")}
        return {k: _classes(v, f"{key}.{k}", allowed, needs) for k, v in node.items()}
    if isinstance(node, list):
        return [_classes(v, f"{key}[{i}]", allowed, needs) for i, v in enumerate(node)]
    return _plain(node, key, needs)


def _algo(algo: Any, needs: list[str]) -> dict[str, Any]:
    """What loading a model needs of ``algo``: its class, its policy and ``policy_kwargs``, all allow-listed."""
    if not isinstance(algo, dict):
        needs.append("algo (not a mapping)")
        return {}
    allowed = allowed_classes()
    target, policy = algo.get("_target_"), algo.get("policy")
    if target not in allowed:
        needs.append(f"algo._target_={target}")
    if policy is not None and (not isinstance(policy, str) or ("." in policy and policy not in allowed)):
        needs.append(f"algo.policy={policy}")
    if algo.get(backend.KEY) == backend.JAX:  # no data-only form: SBX's model.zip holds its networks pickled
        needs.append("algo.backend=jax (SBX's model.zip holds its flax networks pickled)")
    taken = {"_target_": target, "policy": policy}
    if algo.get("policy_kwargs") is not None:
        taken["policy_kwargs"] = _classes(algo["policy_kwargs"], "algo.policy_kwargs", allowed, needs)
    return taken


def rebuild(cfg: DictConfig, record: dict[str, Any] | None) -> DictConfig:
    """The config to evaluate a received folder with: its env config and wrappers as installed here, its plain
    values over them, its algorithm and policy classes allow-listed. Raises :class:`NeedsTrust` listing what
    the folder would run beyond that. ``record``: the folder's ``run.json``, for the env config's name."""
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    needs: list[str] = []
    rest = {k: v for k, v in container.items() if k not in ("env", "wrappers", "algo", "logger", "hydra")}
    taken = _plain(rest, "config", needs)
    taken["env"] = _env(container.get("env"), record, needs)
    taken["wrappers"] = _wrappers(container.get("wrappers") or {}, needs)
    taken["algo"] = _algo(container.get("algo"), needs)
    if needs:
        raise NeedsTrust(sorted(set(needs)))
    return OmegaConf.create(taken)


def check_archive(path: Path) -> None:
    """Refuse (exit 2) a zip archive of a received folder (``model.zip``, a snapshot's, ``vecnormalize.npz``) that
    would unpack to more than :data:`MAX_UNPACKED_BYTES`, or one of whose files unpacks more than
    :data:`MAX_RATIO` times its packed size (a zip bomb): the sizes its directory declares, which bound what
    ``zipfile`` reads, are looked at before a byte is unpacked. So is one that is no zip archive."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (OSError, zipfile.BadZipFile) as error:
        raise UserError(f"{path} is not a zip archive ({error})", _ARCHIVE_FIX) from None
    total = sum(entry.file_size for entry in entries)
    bombs = [e for e in entries if e.file_size > RATIO_FROM and e.file_size > MAX_RATIO * max(e.compress_size, 1)]
    if total > MAX_UNPACKED_BYTES or bombs:
        worst = max(entries, key=lambda entry: entry.file_size)
        raise UserError(
            f"{path} would unpack to {total:,} bytes ({worst.filename}: {worst.file_size:,} from "
            f"{worst.compress_size:,} packed), more than rlrun unpacks from a folder not trusted (at most "
            f"{MAX_UNPACKED_BYTES:,} bytes, each file at most {MAX_RATIO} times its packed size): a zip bomb",
            _ARCHIVE_FIX,
        )


_ARCHIVE_FIX = "use the run's own copy of the file; a folder you received may be trying to fill this machine's memory"


def _serialized_keys(path: Path) -> list[str]:
    """The entries of the zip's ``data`` JSON that SB3 would unpickle."""
    with zipfile.ZipFile(path) as archive:
        data = json.loads(archive.read("data"))
    return [key for key, item in data.items() if isinstance(item, dict) and ":serialized:" in item]


def load_model_data_only(cfg: DictConfig, path: Path, env: VecEnv) -> BaseAlgorithm:
    """The model in ``path`` for ``env``, none of its pickled objects executed: each is replaced by what the
    rebuilt config (:func:`rebuild`) or the algorithm's default says, the spaces by the env's. Enough to
    predict, not to train."""
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
        from hydra.utils import instantiate  # only get_class of allow-listed classes is left in it (rebuild)

        known["policy_kwargs"] = instantiate(cfg.algo.policy_kwargs, _convert_="all")
    check_archive(path)  # before SB3 or this module unpacks a byte of it
    custom = {key: known.get(key, defaults.get(key)) for key in _serialized_keys(path)}
    return algo.load(path, env=env, device=cfg.device, custom_objects=custom)
