"""Fused Adam (``fused_adam``, default ``auto``): torch's one-kernel Adam step for the optimisers SB3 builds from
``policy_kwargs``.

SB3 builds each policy optimiser as ``optimizer_class(params, lr=..., **optimizer_kwargs)`` from the policy's
``optimizer_kwargs``: the run key adds ``fused: True`` there, on top of what the algo config and the preset set. It
applies where that optimiser is torch's Adam (or a subclass, AdamW) and the installed torch has fused Adam on the
run's device (CPU support arrived in torch 2.4). Elsewhere the run trains with plain optimisers: a policy that
builds none (ARS), an algorithm that builds another (A2C with its default ``use_rms_prop``), the jax backend, an
older torch, or an algorithm that replaces the policy's ``optimizer_kwargs`` with its own (sb3-contrib's QRDQN,
unless ``policy_kwargs.optimizer_class`` is set), found on the built model. ``auto`` does so silently; ``true``
says why in one line. ``false`` never fuses. A ``fused`` the config already sets in
``algo.policy_kwargs.optimizer_kwargs`` wins.

SAC's entropy-coefficient optimiser (one scalar) is built by the algorithm itself and stays plain.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.utils import get_device

from rlrun.config import backend

# The torch release whose Adam first took fused=True for CPU tensors (before it: CUDA only).
FUSED_CPU_SINCE = "2.4"

Probe = Callable[[torch.device], bool]


def fused_supported(device: torch.device, optimizer_class: type[torch.optim.Adam] = torch.optim.Adam) -> bool:
    """Whether ``optimizer_class`` takes ``fused=True`` for a tensor on ``device`` in the installed torch: the
    construction itself is the test (torch < 2.4 refuses CPU tensors with a RuntimeError)."""
    param = torch.zeros(1, device=device, requires_grad=True)
    try:
        optimizer_class([param], fused=True)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


def _optimizer_class(cfg: DictConfig) -> Any:
    """The class SB3 will build the policy's optimisers with: ``policy_kwargs.optimizer_class``, else RMSprop
    where the algorithm takes ``use_rms_prop`` and the config sets it (SB3's A2C), else SB3's default, Adam."""
    configured = OmegaConf.select(cfg, "algo.policy_kwargs.optimizer_class")
    if configured is not None:
        return instantiate(configured) if isinstance(configured, DictConfig) else configured
    if cfg.algo.get("use_rms_prop"):
        return torch.optim.RMSprop
    return torch.optim.Adam


def _takes_optimizer_kwargs(algo_cls: type[BaseAlgorithm], policy: str | type) -> bool:
    """Whether the policy class builds an optimiser from ``optimizer_kwargs`` (ARS's policies build none)."""
    policy_cls = algo_cls.policy_aliases.get(policy) if isinstance(policy, str) else policy
    return policy_cls is not None and "optimizer_kwargs" in inspect.signature(policy_cls).parameters


def skipped_because(cfg: DictConfig, algo_cls: type[BaseAlgorithm], policy: str | type, probe: Probe) -> str | None:
    """Why fused Adam cannot apply to this run's model (None: it can)."""
    optimizer_class = _optimizer_class(cfg)
    if (chosen := backend.backend(cfg)) != backend.TORCH:
        return f"the {chosen} backend's optimisers are not torch's"
    if not _takes_optimizer_kwargs(algo_cls, policy):
        return f"{algo_cls.__name__}'s policy builds no optimiser"
    if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, torch.optim.Adam)):
        return f"{algo_cls.__name__}'s optimiser here is {getattr(optimizer_class, '__name__', optimizer_class)}"
    if not probe(get_device(cfg.device)):
        return (
            f"torch {torch.__version__} has no fused Adam on {cfg.device} (on CPU: torch >= {FUSED_CPU_SINCE});"
            " torch's default Adam"
        )
    return None


def setting(cfg: DictConfig) -> str:
    """``fused_adam`` as ``auto``, ``true`` or ``false`` (the command line gives a bool; a run written before the
    key has none, read as ``false`` by :mod:`rlrun.config.upgrade`)."""
    return str(cfg.get("fused_adam", False)).lower()


def fused_kwargs(
    cfg: DictConfig, algo_cls: type[BaseAlgorithm], policy: str | type, probe: Probe | None = None
) -> tuple[dict[str, Any], str | None]:
    """Call-site arguments for the algorithm, merged into ``algo.policy_kwargs`` by ``instantiate``:
    ``optimizer_kwargs.fused = True`` where ``fused_adam`` is ``auto`` or ``true`` and it applies, else none; and
    the one-line note when ``true`` is skipped (None otherwise).

    ``probe`` says whether the installed torch has fused Adam on a device (default :func:`fused_supported`; a
    test passes another to stand for an older torch).
    """
    asked = setting(cfg)
    if asked == "false":
        return {}, None
    if OmegaConf.select(cfg, "algo.policy_kwargs.optimizer_kwargs.fused") is not None:
        return {}, None  # the config's own choice, SB3's path
    if (reason := skipped_because(cfg, algo_cls, policy, probe or fused_supported)) is not None:
        return {}, f"note: fused_adam=true skipped: {reason}" if asked == "true" else None
    return {"policy_kwargs": {"optimizer_kwargs": {"fused": True}}}, None


def policy_optimizers(policy: torch.nn.Module) -> list[torch.optim.Optimizer]:
    """The optimisers of an SB3 policy (``BaseModel.optimizer``): the policy's own, or its actor's and critic's."""
    held = (getattr(module, "optimizer", None) for module in policy.modules())
    return [optimizer for optimizer in held if isinstance(optimizer, torch.optim.Optimizer)]


def unfused_note(cfg: DictConfig, model: BaseAlgorithm) -> str | None:
    """For a model built with fused Adam asked for: with ``fused_adam: true``, the note when a policy optimiser is
    not fused all the same (its algorithm replaced the ``optimizer_kwargs``), else None."""
    if setting(cfg) != "true" or all(o.defaults.get("fused") for o in policy_optimizers(model.policy)):
        return None
    name = type(model).__name__
    return f"note: fused_adam=true skipped: {name} replaces the policy's optimizer_kwargs with its own"
