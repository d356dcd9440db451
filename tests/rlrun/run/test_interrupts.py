"""Stopping on a signal (DESIGN.md, "Stopping a run: signals"), each as a real signal to a real process.

The first SIGINT, SIGTERM or SIGUSR2 stops at the next rollout/update boundary with a snapshot there, and
the resumed run (in a fresh process) ends bit-identical to one never stopped; a second signal stops at
once without skipping the algorithm's per-step bookkeeping; subprocess env workers ignore the signals.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from stable_baselines3 import DQN

from rlrun.make import vec_envs
from rlrun.run import signals, snapshots
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, read_run_json
from tests.rlrun.resume_helpers import (
    SIGNALLED_RUN_SETTINGS,
    assert_bit_identical,
    resume_in_fresh_process,
    snapshot_steps,
    stop_by_signal,
)

PPO = ["env=gridworld", "algo=ppo", "env.n_envs=2", "total_timesteps=256", "algo.n_steps=16", "algo.batch_size=16"]
OFF_POLICY = ["algo.buffer_size=1000", "algo.learning_starts=50", "algo.batch_size=16"]
SAC = ["env=pointenv", "algo=sac", "total_timesteps=160", *OFF_POLICY]
DQN_ = ["env=gridworld", "algo=dqn", "total_timesteps=256", "algo.exploration_fraction=0.5", *OFF_POLICY]


@pytest.mark.parametrize(
    ("name", "overrides", "target", "boundary"),
    [
        ("SIGINT", PPO, "self", 96),  # the rollout of 2 x 16 steps under way at step 80 ends at 96
        ("SIGTERM", [*PPO, "env.vec_env=subproc"], "group", 96),  # the workers get it too, and ignore it
        ("SIGUSR2", SAC, "self", 80),  # off-policy: the step's update is the boundary
    ],
    ids=["sigint-ppo", "sigterm-ppo-subproc", "sigusr2-sac"],
)
def test_first_signal_stops_at_the_boundary_and_resumes_bit_identically(
    tmp_path: Path, name: str, overrides: list[str], target: str, boundary: int
) -> None:
    run_dir = tmp_path / "stopped"
    status = stop_by_signal(run_dir, name, 1, overrides, target)

    assert status == 128 + signal.Signals[name]  # 130, 143, 140 (not 99: rlrun's handler was in force)
    stopped = read_run_json(run_dir)
    assert stopped["status"] == "interrupted" and stopped["timesteps"] == boundary
    assert stopped["wall_s"] > 0 and stopped["fps"] == pytest.approx(boundary / stopped["wall_s"], rel=1e-2)
    assert snapshot_steps(run_dir)[-1] == boundary
    cfg = compose_config(*overrides, *SIGNALLED_RUN_SETTINGS)
    train(cfg, tmp_path / "whole")
    resume_in_fresh_process(run_dir)
    assert read_run_json(run_dir)["status"] == "completed"
    assert_bit_identical(run_dir, tmp_path / "whole", cfg)


def test_second_signal_stops_at_once_and_the_run_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "stopped"
    assert stop_by_signal(run_dir, "SIGINT", 2, PPO) == 130
    assert read_run_json(run_dir)["timesteps"] == 80 and snapshot_steps(run_dir)[-1] == 80  # mid-rollout
    resume_in_fresh_process(run_dir)
    final = read_run_json(run_dir)
    assert final["status"] == "completed" and final["resumes"][0]["from_step"] == 80
    assert final["timesteps"] == 272  # whole rollouts of 32 steps from step 80: past the 256 asked for


def test_third_signal_ends_the_run_at_once_without_a_traceback(tmp_path: Path) -> None:
    run_dir = tmp_path / "stopped"
    assert stop_by_signal(run_dir, "SIGINT", 3, PPO) == 130  # it also asserts that no traceback was printed
    assert read_run_json(run_dir)["status"] == "interrupted"


def test_second_signal_keeps_dqn_per_step_bookkeeping(tmp_path: Path) -> None:
    run_dir = tmp_path / "stopped"
    assert stop_by_signal(run_dir, "SIGTERM", 2, DQN_) == 143
    (snapshot,) = [s for s in snapshots.list_snapshots(run_dir / "snapshots") if snapshots.step_of(s) == 80]
    model = DQN.load(snapshot / "model.zip", device="cpu")
    model.load_replay_buffer(snapshot / snapshots.BUFFER)
    assert model.num_timesteps == 80
    assert model.replay_buffer is not None and model.replay_buffer.size() == 80  # the last step's transition
    assert model._n_calls == 80  # DQN's own per-step counter (target-network updates)
    assert model.exploration_rate == model.exploration_schedule(1 - 80 / 256)  # the schedule at step 80


def test_sighup_a_closed_terminal_stops_at_the_boundary_with_a_snapshot(tmp_path: Path) -> None:
    run_dir = tmp_path / "stopped"
    assert stop_by_signal(run_dir, "SIGHUP", 1, PPO) == 129  # not 99: rlrun's handler was in force
    stopped = read_run_json(run_dir)
    assert stopped["status"] == "interrupted" and stopped["timesteps"] == 96
    assert snapshot_steps(run_dir)[-1] == 96
    resume_in_fresh_process(run_dir)
    assert read_run_json(run_dir)["status"] == "completed"


def test_env_workers_ignore_exactly_the_stop_signals() -> None:
    assert set(vec_envs.WORKER_IGNORES) == set(signals.SIGNALS)
    assert signal.SIGHUP in signals.SIGNALS
