"""sb3-contrib's algorithms resume bit-identically: a run killed mid-way (SIGKILL in a child process) and resumed
ends with the same parameters and evaluations as one that ran through (as tests/rlrun/run/test_resume.py checks
for SB3's)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from rlrun.run.training import train
from tests.rlrun.helpers import status
from tests.rlrun.kill_during_snapshot import config
from tests.rlrun.resume_helpers import assert_bit_identical, kill_child, resume_in_fresh_process

STEPS = 256  # tiny: snapshots every 64 steps, evaluations every 32
CONTRIB = {  # sb3-contrib's defaults (~tuned: not the Zoo's presets), shrunk by tests.rlrun.helpers.shrink
    "tqc": ["env=pendulum", "algo=tqc", "~tuned"],
    "crossq": ["env=pendulum", "algo=crossq", "~tuned"],
    "trpo": ["env=pendulum", "algo=trpo", "env.n_envs=2", "~tuned"],
    "qrdqn": ["env=cartpole", "algo=qrdqn", "~tuned"],
    "ars": ["env=cartpole", "algo=ars", "env.n_envs=2", "~tuned"],
    "recurrent_ppo": ["env=cartpole", "algo=recurrent_ppo", "env.n_envs=2", "~tuned"],
}


@pytest.mark.parametrize("overrides", CONTRIB.values(), ids=CONTRIB.keys())
def test_killed_and_resumed_contrib_run_is_bit_identical(tmp_path: Path, overrides: list[str]) -> None:
    killed = kill_child(tmp_path / "killed", f"step-{int(STEPS * 0.7)}", f"steps={STEPS}", *overrides)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert status(tmp_path / "killed") == "running"
    resume_in_fresh_process(tmp_path / "killed")
    cfg = config(*overrides, steps=STEPS)
    train(cfg, tmp_path / "whole")

    assert status(tmp_path / "killed") == "completed"
    assert_bit_identical(tmp_path / "killed", tmp_path / "whole", cfg)
