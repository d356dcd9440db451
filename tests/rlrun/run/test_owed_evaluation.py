"""An ``exact`` run stopped in the middle of a periodic evaluation resumes to the ``eval.csv`` of the run never
stopped, row for row (but ``wall_s``): the owed evaluation is done again at its own step, with the policy and the
normalisation statistics of that step, on the episodes the eval env's generator gave the run never stopped."""

from __future__ import annotations

import csv
import signal
from pathlib import Path

from rlrun.make.vec_envs import eval_seed
from rlrun.run import snapshots
from rlrun.run.training import resume, train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, read_run_json

PACKAGE = "tests.rlrun.checks.package_envs"
# PPO in rollouts of 32 steps; evaluations every 40 steps, so the one at 80 falls inside the rollout that ends at 96,
# where the stop's snapshot is taken (after an update); the eval copy sends SIGINT at its 8th reset: two episodes
# into the evaluation at 80
OVERRIDES = [
    "env=gym",
    "env.id=pkgtest/Drawn-v0",
    f"env.packages=[{PACKAGE}]",
    "env.normalize.obs=true",
    "algo=ppo",
    "algo.n_steps=32",
    "algo.batch_size=32",
    "algo.policy_kwargs={net_arch:[8]}",
    "total_timesteps=192",
    "eval.every=40",
    "eval.episodes=4",
    "eval.final_episodes=2",
    "eval.n_envs=1",
    "snapshot.every=100000",
    "progress_bar=false",
    "+env.kwargs.stop_at_reset=8",
    f"+env.kwargs.eval_seed={eval_seed(0)}",
]


def rows(run_dir: Path) -> list[list[str]]:
    """``eval.csv`` without its ``wall_s`` column."""
    with open(run_dir / "eval.csv") as f:
        return [[value for column, value in row.items() if column != "wall_s"] for row in csv.DictReader(f)]


def test_a_stop_in_the_middle_of_an_evaluation_resumes_to_the_eval_csv_of_a_run_never_stopped(tmp_path: Path) -> None:
    stopped_dir, marker = tmp_path / "stopped", tmp_path / "signal-sent"
    args = ["-m", "rlrun", *OVERRIDES, f"+env.kwargs.marker={marker}", f"hydra.run.dir={stopped_dir}"]
    stopped = forked_commands.run(args, cwd=tmp_path)  # a process of its own, which the eval copy signals
    assert stopped.returncode == 128 + signal.SIGINT, stopped.stderr
    assert marker.exists()  # the signal came from the eval copy, in the evaluation at step 80
    record = read_run_json(stopped_dir)
    assert record["status"] == "interrupted" and record["resume_mode"] == "exact" and record["timesteps"] == 96
    assert [row[0] for row in rows(stopped_dir)] == ["40"]  # the evaluation at 80 was cut short, unreported
    [owed] = snapshots.load_state(snapshots.list_snapshots(stopped_dir / "snapshots")[-1])["evaluator"]["owed"]
    assert owed["step"] == 80 and owed["policy"] and owed["normalization"] is not None

    resume(stopped_dir, progress_bar="false")
    never = tmp_path / "never"  # the same run with the signal already sent: it never stops
    train(compose_config(*OVERRIDES, f"+env.kwargs.marker={marker}"), never)

    assert [row[0] for row in rows(never)] == ["40", "80", "120", "160"]
    assert rows(stopped_dir) == rows(never)
    assert read_run_json(stopped_dir)["final"]["returns"] == read_run_json(never)["final"]["returns"]
