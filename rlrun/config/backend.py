"""Which library trains a run: ``algo.backend``, ``torch`` (Stable-Baselines3, the default) or ``jax`` (SBX, Stable
Baselines Jax, installed with the ``jax`` extra).

The key sits in the algo config beside SB3's arguments but is not one of them: rlrun reads it here and never passes
it to a constructor. A config without it (an older run's, a user's own algo file) trains on torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig

TORCH, JAX = "torch", "jax"
BACKENDS = (TORCH, JAX)
KEY = "backend"  # the key inside ``algo``


def backend(cfg: DictConfig | Mapping[str, Any]) -> str:
    """The run's backend: ``algo.backend``, ``torch`` where the config has none."""
    algo = cfg.get("algo") or {}
    return str(algo.get(KEY) or TORCH)


def is_jax(cfg: DictConfig | Mapping[str, Any]) -> bool:
    """Whether the run trains with SBX (``algo.backend=jax``)."""
    return backend(cfg) == JAX
