"""What every run has, with ``algo.backend=jax``: a sweep over both backends, its record and table (the backends
in separate groups), TensorBoard, a sweep re-run that skips what is done, ``rlrun-eval`` of the run, and a received
jax folder refused for data-only evaluation with the ``rlrun-trust`` fix."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlrun.record import signatures
from tests import forked_commands
from tests.rlrun.helpers import read_run_json

SWEEP = [
    "-m",
    "rlrun",
    "-m",
    "env=pendulum",
    "algo=sac",
    "algo.backend=torch,jax",
    "~tuned",
    "total_timesteps=300",
    "algo.learning_starts=100",
    "algo.batch_size=16",
    "algo.policy_kwargs={net_arch:[16]}",
    "eval.every=150",
    "eval.episodes=1",
    "eval.n_envs=1",
    "eval.final_episodes=1",
    "sweep=both",
    "progress_bar=false",
]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return forked_commands.run([*args], cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sweep folder of one tiny SAC job per backend."""
    cwd = tmp_path_factory.mktemp("sweep")
    result = _run(*SWEEP, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd / "outputs" / "sweeps" / "both"


def _job(sweep: Path, backend: str) -> Path:
    (folder,) = [p.parent for p in sweep.rglob("run.json") if read_run_json(p.parent)["backend"] == backend]
    return folder


def test_a_sweep_over_both_backends_records_and_tables_them_apart(sweep: Path) -> None:
    record = json.loads((sweep / "sweep.json").read_text())
    assert record["counts"]["completed"] == 2
    torch_run, jax_run = read_run_json(_job(sweep, "torch")), read_run_json(_job(sweep, "jax"))
    assert torch_run["config_hash"] != jax_run["config_hash"]
    assert jax_run["versions"]["sbx"] and jax_run["versions"]["jax"] and "sbx" not in torch_run["versions"]
    with open(sweep / "table.csv") as f:
        groups = sorted(row["group"] for row in csv.DictReader(f))
    assert groups == ["pendulum-sac algo.backend=jax", "pendulum-sac algo.backend=torch"]
    events = EventAccumulator(str(_job(sweep, "jax") / "tb")).Reload()
    assert "eval/mean_reward" in events.Tags()["scalars"]


def test_the_same_sweep_again_skips_both_jobs(sweep: Path) -> None:
    result = _run(*SWEEP, cwd=sweep.parents[2])
    assert result.returncode == 0, result.stderr
    assert json.loads((sweep / "sweep.json").read_text())["counts"]["skipped"] == 2


def test_a_jax_run_evaluates_and_a_received_one_is_refused_with_the_trust_fix(sweep: Path, tmp_path: Path) -> None:
    run_dir = _job(sweep, "jax")
    result = _run("-m", "rlrun.cli.eval", str(run_dir), "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    received = tmp_path / "received"
    shutil.copytree(run_dir, received)
    (received / signatures.RUN_MANIFEST).unlink()
    result = _run("-m", "rlrun.cli.eval", str(received), "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "algo.backend=jax (SBX's model.zip holds its flax networks pickled)" in result.stderr
    assert f"rlrun-trust {received}" in result.stderr
