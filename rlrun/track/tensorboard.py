"""``logger=[tensorboard]`` (the default): SB3's scalars, rlrun's evaluations and the HParams summary as
TensorBoard event files in ``<run_dir>/<folder>`` (``tb/``), as every run wrote before the logger group."""

from __future__ import annotations

from pathlib import Path

from stable_baselines3.common.logger import KVWriter, TensorBoardOutputFormat
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
