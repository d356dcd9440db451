"""The rule for ``hydra/launcher=slurm``'s warning signal: the job must train before SLURM can signal it.

rlrun's SLURM launcher asks for SIGUSR2 ``signal_delay_s`` seconds before the job's time limit (``#SBATCH
--signal=USR2@<signal_delay_s>``). SLURM looks at its jobs' time limits only every half minute or so, and sends
the signal at the first look that finds the end within ``signal_delay_s`` plus that period: so the signal may come
up to :data:`RESOLUTION_S` seconds earlier than asked (sbatch's manual says so). A ``signal_delay_s`` that leaves
less than :data:`MIN_TRAINING_S` of the ``timeout_min`` before that earliest moment is refused before anything is
submitted: with ``timeout_min=1 signal_delay_s=30`` the job was signalled as it started and went through its
requeues without training a step.
"""

from __future__ import annotations

import math

from omegaconf import DictConfig

from rlrun.config.errors import UserError
from rlrun.sweep.cancel import SLURM_LAUNCHER

RESOLUTION_S = 60  # SLURM may send --signal's signal this much earlier than asked
MIN_TRAINING_S = 60  # seconds a job must be sure to train before its warning signal


def earliest_signal_s(timeout_min: float, signal_delay_s: float) -> float:
    """Seconds into the job after which SLURM may send the warning signal."""
    return timeout_min * 60 - signal_delay_s - RESOLUTION_S


def refuse_unhonoured_signal(launcher: DictConfig) -> None:
    """Raise a :class:`UserError` when a SLURM launcher's ``signal_delay_s`` leaves the job less than
    :data:`MIN_TRAINING_S` of training before the signal may come; other launchers pass."""
    if not str(launcher.get("_target_", "")).endswith(SLURM_LAUNCHER):
        return
    timeout_min, delay_s = launcher.get("timeout_min"), launcher.get("signal_delay_s")
    if timeout_min is None or delay_s is None:
        return
    training_s = earliest_signal_s(float(timeout_min), float(delay_s))
    if training_s >= MIN_TRAINING_S:
        return
    longest_delay = int(timeout_min * 60 - RESOLUTION_S - MIN_TRAINING_S)
    shortest_limit = math.ceil((delay_s + RESOLUTION_S + MIN_TRAINING_S) / 60)
    fixes = [f"hydra.launcher.timeout_min={shortest_limit} (or more)"]
    if longest_delay > 0:
        fixes.insert(0, f"hydra.launcher.signal_delay_s={longest_delay} (or less)")
    raise UserError(
        f"hydra.launcher.signal_delay_s={delay_s} with hydra.launcher.timeout_min={timeout_min}: SLURM sends "
        f"the warning signal up to {RESOLUTION_S} s earlier than asked (its --signal has a {RESOLUTION_S}-second "
        f"resolution), so a job could be signalled after {max(0, int(training_s))} s of training, and requeued "
        f"again and again without training a step; rlrun needs at least {MIN_TRAINING_S} s "
        f"(timeout_min * 60 - signal_delay_s - {RESOLUTION_S} >= {MIN_TRAINING_S})",
        " or ".join(fixes),
    )
