"""``logger=[tensorboard]`` (the default): SB3's scalars, rlrun's evaluations and the HParams summary as
TensorBoard event files in ``<run_dir>/<folder>`` (``tb/``), as every run wrote before the logger group.

:func:`log_final` ends a run's logging: the final scalars, to every logger, and the HParams summary, which only
TensorBoard reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.logger import HParam, KVWriter, Logger, TensorBoardOutputFormat
from torch.utils.tensorboard import SummaryWriter

from rlrun.track.base import Tracker


class TensorBoard(Tracker):
    """TensorBoard event files in the run folder (no service: nothing to start, send or finish)."""

    name = "tensorboard"

    def __init__(self, folder: str = "tb") -> None:
        self.folder = folder

    def output_format(self, run_dir: Path, resumed_from: int | None) -> KVWriter:
        """SB3's TensorBoard writer; for a resumed run, TensorBoard drops the events after the snapshot's step
        written before the resume.

        SB3's ``TensorBoardOutputFormat`` takes no ``purge_step``: a writer of torch's own, opened and closed
        first, leaves the purge marker in an events file that sorts before the new writer's.
        """
        folder = run_dir / self.folder
        if resumed_from is not None:
            SummaryWriter(log_dir=str(folder), purge_step=resumed_from + 1).close()
        return TensorBoardOutputFormat(str(folder))


def hparams(cfg: DictConfig) -> dict[str, Any]:
    """The config flattened to dotted keys with values TensorBoard's HParams tab can show."""
    flat: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            flat[prefix[:-1]] = node if isinstance(node, (bool, int, float, str)) else str(node)

    walk(OmegaConf.to_container(cfg, resolve=True), "")
    return flat


def log_final(logger: Logger, cfg: DictConfig, final: dict[str, Any], step: int) -> None:
    """Final scalars and the HParams summary, so TensorBoard's HParams tab compares runs; then the logger closes."""
    metrics = {"final/mean_return": final["mean_return"]}
    if final["success_rate"] is not None:
        metrics["final/success_rate"] = final["success_rate"]
    for key, value in metrics.items():
        logger.record(key, value)
    logger.record("hparams", HParam(hparams(cfg), metrics), exclude=("stdout", "log", "json", "csv"))
    logger.dump(step)
    logger.close()
