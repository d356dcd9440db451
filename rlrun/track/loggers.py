"""The loggers a run writes to, from the ``logger`` config group (``conf/logger/<name>.yaml``, one key each).

Each node is a ``_target_`` with ``_partial_: true`` (its settings are the class's keyword arguments);
instantiating it here keeps :func:`hydra.utils.instantiate` in :mod:`rlrun.make` and this module. The classes
are named by the config, never imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from rlrun.config.errors import UserError

# The loggers that write into the run folder alone; every other one logs to a tracking service (MLflow, W&B)
FOLDER_LOGGERS = ("tensorboard", "csv")


def logs_to_service(names: Iterable[str]) -> bool:
    """Whether any of the loggers ``names`` (keys of the ``logger`` group) logs to a tracking service rather than
    into the run folder alone: then a sweep or a study is a tracked run of its own, and a failure of that logger
    is warned about and never costs the run."""
    return any(str(name) not in FOLDER_LOGGERS for name in names)


def make_trackers(logger: DictConfig | Mapping[str, Any]) -> list[Any]:
    """One tracker per node of ``cfg.logger``, in the order the list chose them (the classes are
    :class:`rlrun.track.base.Tracker` subclasses)."""
    nodes = OmegaConf.create(dict(logger)) if not isinstance(logger, DictConfig) else logger
    trackers = []
    for key, node in nodes.items():
        name = str(key)
        if not isinstance(node, DictConfig) or "_target_" not in node:
            raise UserError(
                f"logger.{name} names no class (_target_)",
                f"choose loggers from conf/logger/ (logger=[tensorboard,{name}]) rather than setting +logger.{name}",
            )
        trackers.append(instantiate(node, _convert_="all")())
    return trackers
