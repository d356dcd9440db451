"""SIGINT and SIGTERM end a run gracefully: training stops at the next env step and a snapshot is written.

The signal only sets a flag; the callback stops SB3 between two env steps, where the envs are in a
consistent state. A second Ctrl-C stops at once (``KeyboardInterrupt``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(Exception):
    """The run stopped on a signal after writing a snapshot; ``exit_status`` follows the shell's 128 + N."""

    def __init__(self, signum: int, run_dir: str) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.run_dir = run_dir
        self.exit_status = 128 + signum


class InterruptCallback(BaseCallback):
    """Stops training at the next env step after SIGINT or SIGTERM."""

    def __init__(self) -> None:
        super().__init__()
        self.received: int | None = None

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Handle the signals inside the block (main thread only, as Python requires)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {signum: signal.signal(signum, self._handle) for signum in SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            raise KeyboardInterrupt
        self.received = signum

    def _on_step(self) -> bool:
        if self.received is None:
            return True
        self._complete_step()
        return False

    def _complete_step(self) -> None:
        """SB3 returns before its own bookkeeping of the step that saw the stop; do it, so the
        snapshot's last observations match the envs' state."""
        model, loc = self.model, self.locals
        if isinstance(model, OffPolicyAlgorithm):
            assert model.replay_buffer is not None
            model._update_info_buffer(loc["infos"], loc["dones"])
            model._store_transition(
                model.replay_buffer,
                loc["buffer_actions"],
                loc["new_obs"],
                loc["rewards"],
                loc["dones"],
                loc["infos"],
            )
        else:
            model._last_obs = loc["new_obs"]
            model._last_episode_starts = loc["dones"]
