"""``algo.backend=jax`` runs stop, snapshot and resume bit-identically: SIGINT for each of the six algorithms rlrun
runs on SBX, SIGKILL for SAC. SBX's ``get_parameters()`` is empty, so the runs are compared by their flax train
states."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
from omegaconf import DictConfig

from rlrun.make import jax_models, models, vec_envs
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, read_run_json
from tests.rlrun.kill_during_snapshot import config

REPO = Path(__file__).resolve().parents[3]
COMMON = ["algo.backend=jax", "~tuned", "algo.policy_kwargs={net_arch:[16]}", "eval.episodes=2", "eval.n_envs=1"]
COMMON += ["eval.final_episodes=2", "progress_bar=false"]
OFF_POLICY = ["algo.buffer_size=1000", "algo.learning_starts=100", "algo.batch_size=16", "total_timesteps=600"]
OFF_POLICY += ["eval.every=200", "snapshot.every=200"]
ON_POLICY = ["algo.n_steps=64", "algo.batch_size=16", "algo.n_epochs=2", "total_timesteps=512", "eval.every=128"]
ON_POLICY += ["snapshot.every=128"]
# (overrides, the step after whose evaluation the child sends itself SIGINT)
RUNS = {
    "sac": (["env=pendulum", "algo=sac", *OFF_POLICY], 400),
    "td3": (["env=pendulum", "algo=td3", *OFF_POLICY], 400),
    "tqc": (["env=pendulum", "algo=tqc", *OFF_POLICY], 400),
    "crossq": (["env=pendulum", "algo=crossq", *OFF_POLICY], 400),
    "dqn": (["env=cartpole", "algo=dqn", *OFF_POLICY, "algo.target_update_interval=64"], 400),
    "ppo": (["env=cartpole", "algo=ppo", *ON_POLICY], 256),
}


def _child(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return forked_commands.run([*args], cwd=REPO, env=env, timeout=300)


def _eval_rows(run_dir: Path) -> list[list[str]]:
    with open(run_dir / "eval.csv") as f:
        return [row[:4] for row in csv.reader(f)]  # all columns but wall_s


def _arrays(cfg: DictConfig, run_dir: Path) -> dict[str, np.ndarray]:
    venv = vec_envs.make_vec(cfg, 1, 0)
    try:
        return jax_models.parameter_arrays(models.load_model(cfg, run_dir / "model.zip", venv))
    finally:
        venv.close()


def _assert_same_run(cfg: DictConfig, a: Path, b: Path) -> None:
    assert _eval_rows(a) == _eval_rows(b)
    arrays_a, arrays_b = _arrays(cfg, a), _arrays(cfg, b)
    assert arrays_a and arrays_a.keys() == arrays_b.keys()
    different = [key for key in arrays_a if not np.array_equal(arrays_a[key], arrays_b[key])]
    assert different == [], f"{a} and {b} trained different {different[:3]}"


@pytest.mark.parametrize("algo", list(RUNS))
def test_sigint_then_resume_is_bit_identical(tmp_path: Path, algo: str) -> None:
    overrides, step = RUNS[algo]
    stopped = tmp_path / "stopped"
    result = _child(
        "-m",
        "tests.rlrun.signal_run",
        "SIGINT",
        "1",
        str(step),
        "self",
        *overrides,
        *COMMON,
        f"hydra.run.dir={stopped}",
    )
    assert result.returncode == 128 + signal.SIGINT, result.stderr
    record = read_run_json(stopped)
    assert record["status"] == "interrupted" and record["backend"] == "jax"
    assert step <= record["timesteps"] < compose_config(*overrides, *COMMON).total_timesteps
    result = _child("-m", "rlrun", f"resume={stopped}", "progress_bar=false")
    assert result.returncode == 0, result.stderr
    assert read_run_json(stopped)["status"] == "completed"

    cfg = compose_config(*overrides, *COMMON)
    train(cfg, tmp_path / "whole")
    _assert_same_run(cfg, stopped, tmp_path / "whole")


def test_sac_killed_then_resumed_is_bit_identical(tmp_path: Path) -> None:
    overrides, steps = ["env=pendulum", "algo=sac", "algo.backend=jax"], 512
    killed = _child(
        "-m", "tests.rlrun.kill_during_snapshot", str(tmp_path / "killed"), "step-300", f"steps={steps}", *overrides
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert read_run_json(tmp_path / "killed")["status"] == "running"  # as a killed process leaves it
    result = _child("-m", "rlrun", f"resume={tmp_path / 'killed'}", "progress_bar=false")
    assert result.returncode == 0, result.stderr

    cfg = config(*overrides, steps=steps)
    train(cfg, tmp_path / "whole")
    _assert_same_run(cfg, tmp_path / "killed", tmp_path / "whole")
