"""Stopping a run on a signal (DESIGN.md, "Stopping a run: signals").

The first SIGINT, SIGTERM, SIGUSR2 (SLURM's and submitit's warning before a time limit) or SIGHUP (a
closed terminal or SSH session) asks for a
stop at the next rollout/update boundary, the point where periodic snapshots are taken: the snapshot
is written there and the run resumes bit-identically. A second signal stops at the next env step,
after SB3's own bookkeeping of that step (a mid-rollout snapshot: correct, not bit-identical). A third
raises ``KeyboardInterrupt`` at once, without a new snapshot. The handlers only set flags; the
callbacks act between two env steps, where the envs and the model agree.

Subprocess env workers ignore these signals (:func:`rlrun.make.vec_envs.ignore_stop_signals`): a Ctrl-C or a cluster's
SIGTERM reaches every process of the group, and the main process decides.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import FrameType

from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from rlrun.run import seam
from rlrun.run.signals import handling


class RunInterrupted(Exception):
    """The run stopped on a signal after writing a snapshot; ``exit_status`` follows the shell's 128 + N
    (130 SIGINT, 143 SIGTERM, 140 SIGUSR2, 129 SIGHUP)."""

    def __init__(self, signum: int, run_dir: str) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.run_dir = run_dir
        self.exit_status = 128 + signum


class LearningStopped(Exception):
    """Raised by the callbacks to stop ``learn()`` of an algorithm that ignores their False (ARS:
    :func:`rlrun.run.seam.ignores_callback_stop`); the run catches it where it calls ``learn()``."""


class InterruptCallback(BaseCallback):
    """Turns the stop signals into a stop of ``learn()`` at the boundary, or at once on a second signal.

    ``snapshot`` writes a snapshot at the current step (the run's :class:`~rlrun.run.snapshots.SnapshotCallback`);
    after ``learn()`` returns, :attr:`stop_snapshot` is the snapshot written at the boundary, if any.
    """

    def __init__(self, snapshot: Callable[[], Path]) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.signals: list[int] = []
        self.stop_snapshot: Path | None = None

    @property
    def received(self) -> int | None:
        """The first stop signal received, if any."""
        return self.signals[0] if self.signals else None

    def installed(self) -> AbstractContextManager[None]:
        """Handle the signals inside the block; the handlers in force before (a launcher's, submitit's)
        are put back after it."""
        return handling(self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signals.append(signum)
        if len(self.signals) >= 3:
            raise KeyboardInterrupt

    def _on_rollout_start(self) -> None:
        # The boundary: the previous update is done and nothing is half-collected (SnapshotCallback,
        # called before this one, has already written a snapshot here if one was due).
        if self.signals and self.stop_snapshot is None:
            self.stop_snapshot = self.snapshot()

    def _on_step(self) -> bool:
        if self.stop_snapshot is not None:
            return False
        if len(self.signals) >= 2:
            if seam.ignores_callback_stop(self.model):  # ARS: no step of SB3's to complete
                raise LearningStopped
            self._complete_step()
            return False
        return True

    def _complete_step(self) -> None:
        """Do what SB3 does after a step's callbacks, which it skips when one of them stops training, so
        the snapshot taken after ``learn()`` has the transition stored and the per-step schedules advanced."""
        seam.finish_step(self.model, self.locals)


class StoppableCallbacks(CallbackList):
    """The run's callbacks, with ``interrupts`` last; once a boundary stop has written its snapshot, the one
    env step SB3 takes before it can stop belongs to no one (no evaluation, no record of it)."""

    def __init__(self, callbacks: list[BaseCallback], interrupts: InterruptCallback) -> None:
        super().__init__([*callbacks, interrupts])
        self.interrupts = interrupts

    def _on_step(self) -> bool:
        if self.interrupts.stop_snapshot is not None:
            if seam.ignores_callback_stop(self.model):
                raise LearningStopped
            return False
        return super()._on_step()
