"""The model of a run with ``algo.backend=jax``: SBX (Stable Baselines Jax, ``sbx-rl``) in place of SB3's class.

SBX has SB3's API and SB3's constructor arguments for SAC, TD3, TQC, CrossQ, DQN and PPO, so an algo config and its
presets train on either backend: :data:`SBX_CLASSES` maps the config's ``_target_`` to SBX's class. What the torch
spelling says that SBX cannot read is turned into SBX's (:func:`arguments`), or refused with the key named: a torch
activation becomes the flax function of the same name (:data:`ACTIVATIONS`); an SB3 argument SBX lacks is left out
where it holds SB3's default, refused otherwise. :func:`unavailable` says, from the config alone, what leaves
nothing to make; :func:`problems` and :func:`fit_problems` read SBX's class, which the caller made first and passes
in, so the checks that apply them import nothing.

JAX is imported only here, only when a run asks for it: :func:`sbx_class`, as the model is made, sets XLA's threads
from ``torch_threads`` first (XLA reads ``XLA_FLAGS`` once, when it starts).
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from gymnasium import spaces
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm

from rlrun.config import backend
from rlrun.config.errors import Problem, UserError

if TYPE_CHECKING:
    import optax

log = logging.getLogger("rlrun")

# The algorithms SBX has, by the SB3 class an algo config names (SBX's DDPG has no config here).
SBX_CLASSES = {
    "stable_baselines3.SAC": "sbx.SAC",
    "stable_baselines3.TD3": "sbx.TD3",
    "sb3_contrib.TQC": "sbx.TQC",
    "sb3_contrib.CrossQ": "sbx.CrossQ",
    "stable_baselines3.DQN": "sbx.DQN",
    "stable_baselines3.PPO": "sbx.PPO",
}
JAX_ALGOS = "sac, td3, tqc, crossq, dqn, ppo (and her, her_tqc)"
DQN = "stable_baselines3.DQN"
# torch activation classes and the flax function that computes the same (same defaults: LeakyReLU's slope 0.01,
# ELU's alpha 1); torch's GELU is exact where flax's is approximate by default, so it is not among them
ACTIVATIONS = {
    "torch.nn.ReLU": "flax.linen.relu",
    "torch.nn.Tanh": "flax.linen.tanh",
    "torch.nn.ELU": "flax.linen.elu",
    "torch.nn.LeakyReLU": "flax.linen.leaky_relu",
    "torch.nn.SiLU": "flax.linen.silu",
    "torch.nn.Sigmoid": "flax.linen.sigmoid",
    "torch.nn.Softplus": "flax.linen.softplus",
}
ACTIVATION_KEY = "policy_kwargs.activation_fn"
INSTALL_FIX = "pip install 'rlrun[jax]' (sbx-rl with CPU jax, flax and optax), or drop algo.backend=jax"
# XLA's CPU flags for one thread: no multi-threaded Eigen, one thread per operation
ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def xla_flags(threads: int, given: str) -> str:
    """``XLA_FLAGS`` for ``threads`` threads: rlrun's flags after the user's own ``given`` ones, once."""
    ours = ONE_THREAD if threads == 1 else f"intra_op_parallelism_threads={threads}"
    return given if given.endswith(ours) else f"{given} {ours}".strip()


def configure_threads(threads: int) -> None:
    """Set XLA's threads from ``torch_threads`` before JAX starts. XLA reads its flags only from the environment;
    a JAX already running in this process (a test's) keeps the threads it started with."""
    os.environ["XLA_FLAGS"] = xla_flags(threads, os.environ.get("XLA_FLAGS", ""))


def sbx_class(cfg: DictConfig) -> type[BaseAlgorithm]:
    """SBX's class for the config's ``_target_`` (JAX starts here, with the run's threads, and with ``device=cpu``
    on the CPU alone unless ``JAX_PLATFORMS`` says otherwise; its compilations kept in :func:`cache_folder`)."""
    configure_threads(int(OmegaConf.select(cfg, "torch_threads", default=1)))
    if str(OmegaConf.select(cfg, "device", default="cpu")) == "cpu":  # no probing for accelerators (a TPU message)
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sbx_cls = cast(type[BaseAlgorithm], get_class(SBX_CLASSES[str(cfg.algo._target_)]))
    keep_compilations(cache_folder(os.environ))
    return sbx_cls


def cache_folder(environ: Mapping[str, str]) -> Path | None:
    """Where XLA's compilations are kept between processes: ``RLRUN_JAX_CACHE`` (a folder, or ``0`` for none),
    else ``$XDG_CACHE_HOME/rlrun/jax`` (``~/.cache/rlrun/jax``)."""
    given = environ.get("RLRUN_JAX_CACHE", "")
    if given == "0":
        return None
    if given:
        return Path(given).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rlrun" / "jax"


def keep_compilations(folder: Path | None) -> None:
    """JAX's persistent compilation cache in ``folder`` (None: off). Every function SBX compiles is kept, however
    quick its compilation (JAX keeps those over a second only by default; SBX's take a fraction each, about 6 CPU-s
    in all), so a sweep's jobs and a resume compile nothing their machine has compiled before. The cache holds
    XLA's executables for the same program, so results are the same with it, without it and from it."""
    import jax

    if folder is None:
        return
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def unavailable(cfg: DictConfig) -> list[Problem]:
    """What keeps the config's algorithm off its backend before any class is made: an unknown backend, an algorithm
    SBX lacks, SBX not installed."""
    chosen = backend.backend(cfg)
    if chosen not in backend.BACKENDS:
        return [(f"algo.backend={chosen} is not one of {', '.join(backend.BACKENDS)}", "set algo.backend=torch or jax")]
    if chosen != backend.JAX:
        return []
    target = str(cfg.algo.get("_target_"))
    if target not in SBX_CLASSES:
        name = target.rsplit(".", 1)[-1]
        return [
            (
                f"algo.backend=jax: SBX (Stable Baselines Jax) has no {name} ({target})",
                f"train {name} with algo.backend=torch (the default), or pick an algorithm SBX has: {JAX_ALGOS}",
            )
        ]
    if importlib.util.find_spec("sbx") is None:
        return [("algo.backend=jax needs SBX (the jax extra), which is not installed", INSTALL_FIX)]
    return []


def problems(cfg: DictConfig, sbx_cls: type[BaseAlgorithm]) -> list[Problem]:
    """What SBX's class (``sbx_cls``, from :func:`sbx_class`) cannot take of a jax config: a torch class, or an SB3
    argument it lacks set to another value than SB3's default. None for a torch config."""
    if not backend.is_jax(cfg):
        return []
    args = _container(cfg)
    found = _torch_problems(args.get("policy_kwargs"), "algo.policy_kwargs")
    return found + _argument_problems(cfg, sbx_cls, args) + _schedule_problems(cfg, args)


def _schedule_problems(cfg: DictConfig, args: dict[str, Any]) -> list[Problem]:
    """A learning-rate schedule for DQN: SBX's DQN builds its optimizer with the schedule's first value and never
    updates it (SB3's DQN follows the schedule), so the run would train at a constant rate."""
    if str(cfg.algo._target_) != DQN or isinstance(args.get("learning_rate"), (int, float)):
        return []
    return [
        (
            "algo.learning_rate is a schedule: SBX's DQN (algo.backend=jax) keeps its first value for the whole run",
            "give algo.learning_rate a number, or use algo.backend=torch (SB3's DQN follows the schedule)",
        )
    ]


def _container(cfg: DictConfig) -> dict[str, Any]:
    container = OmegaConf.to_container(cfg.algo, resolve=True)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items() if key != backend.KEY}


def _path(node: Any) -> str | None:
    """The class or function path of a ``{_target_: hydra.utils.get_class, path: ...}`` node."""
    return str(node["path"]) if isinstance(node, dict) and "path" in node else None


def _torch_problems(node: Any, where: str) -> list[Problem]:
    """Torch classes under ``where`` that SBX cannot take (the activations of :data:`ACTIVATIONS` it can)."""
    if isinstance(node, dict):
        path = _path(node)
        activation = where.endswith(".activation_fn")
        if path is not None and path.startswith("torch.") and not (activation and path in ACTIVATIONS):
            taken = ", ".join(ACTIVATIONS) if activation else "activation_fn's only"
            return [
                (
                    f"{where}={path} is a torch class: SBX (algo.backend=jax) builds flax networks",
                    f"set {where} to a flax function ({{_target_: hydra.utils.get_method, path: flax.linen.relu}}) "
                    f"or use algo.backend=torch; torch classes translated for jax: {taken}",
                )
            ]
        return [p for key, value in node.items() for p in _torch_problems(value, f"{where}.{key}")]
    return []


def _argument_problems(cfg: DictConfig, sbx_cls: type[BaseAlgorithm], args: dict[str, Any]) -> list[Problem]:
    """SB3 arguments SBX's class lacks, set to another value than SB3's default (which SBX's behaviour matches)."""
    ours = inspect.signature(sbx_cls.__init__).parameters
    sb3_class: type[BaseAlgorithm] = get_class(str(cfg.algo._target_))
    sb3 = inspect.signature(sb3_class.__init__).parameters
    found: list[Problem] = []
    for key, value in args.items():
        honoured = key == "max_grad_norm" and str(cfg.algo._target_) == DQN  # as :func:`arguments` passes it
        if key in ours or key not in sb3 or value == sb3[key].default or honoured:
            continue
        name = str(cfg.algo._target_).rsplit(".", 1)[-1]
        found.append(
            (
                f"algo.{key}={value}: SBX's {name} (algo.backend=jax) has no {key}",
                f"leave algo.{key} at SB3's default ({sb3[key].default}), or use algo.backend=torch",
            )
        )
    return found


def fit_problems(
    cfg: DictConfig, sbx_cls: type[BaseAlgorithm], observation_space: spaces.Space, env_id: str, policy: str, her: bool
) -> list[Problem]:
    """The policy SBX's class (``sbx_cls``) lacks for the env's observations (PPO and DQN take no Dict, SAC no
    image); none for a torch config."""
    if not backend.is_jax(cfg):
        return []
    aliases = getattr(sbx_cls, "policy_aliases", {})
    if policy in aliases or "." in policy:
        return []
    name = sbx_cls.__name__
    flatten = ", or flatten the observations: wrappers=[flatten]" if isinstance(observation_space, spaces.Dict) else ""
    with_her = " (HER needs Dict observations)" if her else ""
    return [
        (
            f"SBX's {name} (algo.backend=jax) has no {policy} for the observations of {env_id} "
            f"({observation_space}){with_her}; its policies: {', '.join(aliases)}",
            f"use algo.backend=torch (SB3's {name} takes them){'' if her else flatten}",
        )
    ]


def arguments(cfg: DictConfig, sbx_cls: type[BaseAlgorithm]) -> dict[str, Any]:
    """The algo config as SBX's constructor (``sbx_cls``) takes it: SBX's ``_target_``, the torch activation as its
    flax function, SB3 arguments SBX lacks (at SB3's default: :func:`problems` refused any other value) left out."""
    args = _container(cfg)
    args["_target_"] = SBX_CLASSES[str(cfg.algo._target_)]
    ours = inspect.signature(sbx_cls.__init__).parameters
    args = {key: value for key, value in args.items() if key.startswith("_") or key in ours}
    kwargs = args.get("policy_kwargs")
    if isinstance(kwargs, dict) and (path := _path(kwargs.get("activation_fn"))) in ACTIVATIONS:
        function = {"_target_": "hydra.utils.get_method", "path": ACTIVATIONS[str(path)]}
        args["policy_kwargs"] = {**kwargs, "activation_fn": function}
    if str(cfg.algo._target_) == DQN and (norm := _container(cfg).get("max_grad_norm")) is not None:
        kwargs = args.get("policy_kwargs") or {}
        given = kwargs.get("optimizer_class", {"_target_": "hydra.utils.get_method", "path": "optax.adam"})
        clipped = {"_target_": f"{__name__}.clipped", "_partial_": True, "max_grad_norm": norm, "optimizer": given}
        args["policy_kwargs"] = {**kwargs, "optimizer_class": clipped}
    return args


def clipped(
    learning_rate: float, *, max_grad_norm: float, optimizer: Callable[..., Any], **kwargs: Any
) -> optax.GradientTransformation:
    """``optimizer`` after gradients clipped to ``max_grad_norm`` by their global norm, as SB3's DQN clips them
    (``torch.nn.utils.clip_grad_norm_`` over all its parameters): SBX's DQN has no ``max_grad_norm`` but takes
    ``policy_kwargs.optimizer_class``, which :func:`arguments` sets to this, with the config's norm."""
    import optax

    return optax.chain(optax.clip_by_global_norm(max_grad_norm), optimizer(learning_rate=learning_rate, **kwargs))


def translation_notes(cfg: DictConfig) -> list[str]:
    """What of the config SBX takes in other words than SB3 (the start banner says each): a torch activation trains
    as its flax function, DQN's ``max_grad_norm`` as an optax clipping before its optimizer."""
    notes = []
    kwargs = cfg.algo.get("policy_kwargs")
    node = kwargs.get("activation_fn") if kwargs is not None else None
    path = _path(OmegaConf.to_container(node) if isinstance(node, DictConfig) else node)
    if path in ACTIVATIONS:
        notes.append(
            f"algo.{ACTIVATION_KEY}={path} trains as {ACTIVATIONS[str(path)]} (algo.backend=jax: flax networks)"
        )
    if str(cfg.algo._target_) == DQN and (norm := cfg.algo.get("max_grad_norm")) is not None:
        notes.append(
            f"algo.max_grad_norm={norm} clips DQN's gradients by their global norm as SB3 does, through "
            "optax.clip_by_global_norm before the optimizer (algo.backend=jax: SBX's DQN has no max_grad_norm)"
        )
    return notes


def refuse(found: list[Problem]) -> None:
    """Raise the first of ``found`` (:func:`unavailable`'s or :func:`problems`') as a user error (exit 2), if any:
    what cannot be made is never half made."""
    if found:
        raise UserError(*found[0])


def key_state(model: BaseAlgorithm) -> np.ndarray | None:
    """SBX's random key (``model.key``, which ``load`` draws anew from the seed) as an array; None for SB3's models."""
    key = getattr(model, "key", None)
    return None if key is None else np.asarray(key)


def put_key(model: BaseAlgorithm, saved: np.ndarray | None) -> None:
    """Put back SBX's random key as :func:`key_state` saved it (nothing for a torch model's None)."""
    if saved is None:
        return
    import jax.numpy as jnp

    model.key = jnp.asarray(saved)  # type: ignore[attr-defined]  # SBX's public attribute


def parameter_arrays(model: BaseAlgorithm) -> dict[str, np.ndarray]:
    """Every array of an SBX model's flax train states (the policy's actor, critics, value function and SAC's
    entropy coefficient: parameters, batch statistics, optimiser states, step counts) by its path, e.g.
    ``actor_state.params['params']['Dense_0']['kernel']``. SBX's ``get_parameters()`` is empty: this is what a test
    compares and what ``model.npz`` holds."""
    from flax.training.train_state import TrainState
    from jax.tree_util import keystr, tree_flatten_with_path

    holders = {"": vars(model.policy), "model.": vars(model)}
    arrays: dict[str, np.ndarray] = {}
    for prefix, attributes in holders.items():
        for name, value in sorted(attributes.items()):
            if isinstance(value, TrainState):
                leaves, _ = tree_flatten_with_path(value)
                arrays |= {f"{prefix}{name}{keystr(path)}": np.asarray(leaf) for path, leaf in leaves}
    return arrays
