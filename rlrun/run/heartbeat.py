"""Keep a running run's ``run.json`` current: the steps and seconds so far, rewritten as training goes (a sweep's
and a study's live views read them there)."""

from __future__ import annotations

import time
from collections.abc import Callable

from stable_baselines3.common.callbacks import BaseCallback

from rlrun.record.run_record import RunRecord

# longest time between two rewrites of a running run's run.json: the steps that live views (a sweep's, a study's)
# and rlrun-runs show are at most this old
HEARTBEAT_S = 5.0


class KeepRecordCurrent(BaseCallback):
    """Rewrites ``run.json`` with the steps and seconds so far after each periodic evaluation (the same
    schedule: every ``eval_every`` steps up to the ``budget``), and at least every :data:`HEARTBEAT_S` seconds.

    ``wall`` returns the seconds of training across the run's sessions; put this callback after the
    evaluation callback, so the record is written once the evaluation is done.
    """

    def __init__(self, record: RunRecord, wall: Callable[[], float], eval_every: int, budget: int) -> None:
        super().__init__()
        self.record, self.wall, self.eval_every, self.budget = record, wall, eval_every, budget
        self.next_eval = eval_every
        self.last_save = time.monotonic()

    def _on_training_start(self) -> None:
        self.next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every

    def _on_step(self) -> bool:
        evaluated = self.budget >= self.next_eval <= self.num_timesteps
        if evaluated:
            self.next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every
        if evaluated or time.monotonic() - self.last_save >= HEARTBEAT_S:
            self.save(self.num_timesteps)
        return True

    def save(self, timesteps: int) -> None:
        """Record ``timesteps`` steps done, with the training seconds of now."""
        self.record.progress(timesteps, self.wall())
        self.last_save = time.monotonic()
