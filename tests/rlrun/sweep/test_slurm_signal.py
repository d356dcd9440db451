"""``hydra/launcher=slurm``'s warning signal must leave the job time to train (rlrun/sweep/slurm_signal.py): SLURM
may send it up to 60 s earlier than asked, so a ``signal_delay_s`` too close to ``timeout_min`` is refused before
anything is submitted, with the fix (the whole command on a real cluster: tests/rlrun/sweep/test_slurm_cluster.py)."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from rlrun.config.errors import UserError
from rlrun.sweep.slurm_signal import refuse_unhonoured_signal

SLURM = "hydra_plugins.rlrun_slurm_launcher.slurm_launcher.RlrunSlurmLauncher"


def launcher(timeout_min: int, signal_delay_s: int, target: str = SLURM) -> OmegaConf:
    return OmegaConf.create({"_target_": target, "timeout_min": timeout_min, "signal_delay_s": signal_delay_s})


@pytest.mark.parametrize(
    ("timeout_min", "signal_delay_s"), [(240, 120), (3, 60), (2, 0)], ids=["defaults", "3 min 60 s", "2 min 0 s"]
)
def test_a_signal_that_leaves_a_minute_of_training_is_accepted(timeout_min: int, signal_delay_s: int) -> None:
    refuse_unhonoured_signal(launcher(timeout_min, signal_delay_s))


@pytest.mark.parametrize(
    ("timeout_min", "signal_delay_s", "fix"),
    [
        (1, 30, "hydra.launcher.timeout_min=3 (or more)"),  # the case: signalled as it started
        (3, 90, "hydra.launcher.signal_delay_s=60 (or less) or hydra.launcher.timeout_min=4 (or more)"),
        (4, 300, "hydra.launcher.signal_delay_s=120 (or less) or hydra.launcher.timeout_min=7 (or more)"),
    ],
    ids=["1 min 30 s", "3 min 90 s", "4 min 300 s"],
)
def test_a_signal_slurm_may_send_before_a_minute_of_training_is_refused_with_the_fix(
    timeout_min: int, signal_delay_s: int, fix: str
) -> None:
    with pytest.raises(UserError) as refused:
        refuse_unhonoured_signal(launcher(timeout_min, signal_delay_s))
    assert f"signal_delay_s={signal_delay_s} with hydra.launcher.timeout_min={timeout_min}" in refused.value.problem
    assert "60-second resolution" in refused.value.problem
    assert refused.value.fix == fix


def test_other_launchers_are_not_held_to_slurms_resolution() -> None:
    local = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"  # submitit signals on time
    refuse_unhonoured_signal(launcher(1, 30, local))
