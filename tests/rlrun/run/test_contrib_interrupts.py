"""Stopping sb3-contrib's algorithms on a signal, as tests/rlrun/run/test_interrupts.py does SB3's: the first SIGTERM
stops at the next rollout boundary with a snapshot there, also for ARS (whose ``learn()`` ignores a callback's
False), and the run resumed in a fresh process ends bit-identical to one never stopped."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, read_run_json
from tests.rlrun.resume_helpers import (
    SIGNALLED_RUN_SETTINGS,
    assert_bit_identical,
    resume_in_fresh_process,
    snapshot_steps,
    stop_by_signal,
)

ARS = ["env=cartpole", "algo=ars", "total_timesteps=1000", "algo.n_delta=2"]
RECURRENT = ["env=cartpole", "algo=recurrent_ppo", "env.n_envs=2", "total_timesteps=256", "algo.n_steps=16"]
RECURRENT += ["algo.batch_size=16"]


@pytest.mark.parametrize("overrides", [ARS, RECURRENT], ids=["ars", "recurrent_ppo"])
def test_sigterm_stops_a_contrib_run_at_the_boundary_and_it_resumes_bit_identically(
    tmp_path: Path, overrides: list[str]
) -> None:
    run_dir = tmp_path / "stopped"
    assert stop_by_signal(run_dir, "SIGTERM", 1, overrides) == 128 + signal.SIGTERM
    stopped = read_run_json(run_dir)
    total = compose_config(*overrides, *SIGNALLED_RUN_SETTINGS).total_timesteps
    assert stopped["status"] == "interrupted" and 80 < stopped["timesteps"] < total  # the boundary after step 80
    assert snapshot_steps(run_dir)[-1] == stopped["timesteps"]
    logged = EventAccumulator(str(run_dir / "tb"))
    logged.Reload()
    steps = [event.step for tag in logged.Tags()["scalars"] for event in logged.Scalars(tag)]
    assert steps and max(steps) <= stopped["timesteps"], "training went on after the stop"
    cfg = compose_config(*overrides, *SIGNALLED_RUN_SETTINGS)
    train(cfg, tmp_path / "whole")
    resume_in_fresh_process(run_dir)
    assert read_run_json(run_dir)["status"] == "completed"
    assert_bit_identical(run_dir, tmp_path / "whole", cfg)
