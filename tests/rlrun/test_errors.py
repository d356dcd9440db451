"""Every user mistake ends in a message naming the problem and the fix, no traceback, nothing overwritten.

Exit status 2 for what rlrun detects; Hydra's own status (1) for its composition errors. The other
Hydra composition errors (unknown algo or wrapper, misspelt keys, wrong types) are covered in-process
by tests/rlrun/test_config.py; the misspelt key on the command line by test_main.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.train import train
from tests.rlrun.helpers import compose_config, shrink

HYDRA = 1  # Hydra's status for composition errors, kept as it is
RLRUN = 2

CASES = [
    ("unknown-env", ["env=gridwrld"], HYDRA, "Could not find 'env/gridwrld'"),
    ("seed-abc", ["seed=abc"], HYDRA, "Value 'abc' of type 'str' could not be converted to Integer"),
    ("lr-fast", ["algo.learning_rate=fast"], RLRUN, "algo.learning_rate='fast' has the wrong type for PPO"),
    ("timesteps-zero", ["total_timesteps=0"], RLRUN, "total_timesteps=0 must be a positive integer"),
    ("timesteps-negative", ["total_timesteps=-3"], RLRUN, "total_timesteps=-3 must be a positive integer"),
    ("eval-episodes-zero", ["eval.episodes=0"], RLRUN, "eval.episodes=0 must be a positive integer"),
    ("n-envs-zero", ["env.n_envs=0"], RLRUN, "env.n_envs=0 must be a positive integer"),
    ("unknown-algo-arg", ["+algo.clip_rnge=0.1"], RLRUN, "algo.clip_rnge is not an argument of PPO"),
    ("incompatible", ["env=pendulum", "algo=dqn"], RLRUN, "DQN cannot train on Pendulum-v1"),
    ("her-no-goal", ["env=pointenv", "algo=her"], RLRUN, "HER needs a goal env"),
    (
        "wrapper-cannot-apply",
        ["env=pointenv", "algo=sac", "wrappers=[relative_position]"],
        RLRUN,
        "wrapper 'relative_position' cannot apply to rlrun/PointEnv-v0",
    ),
    ("gym-id-typo", ["env=gym", "env.id=CartPol-v1"], RLRUN, "Did you mean: `CartPole`?"),
    ("gym-blank-without-id", ["env=gym"], RLRUN, "env.id is not set"),
    ("module-fails", ["env=gym", "env.id=nosuchpkg:MyEnv-v0"], RLRUN, "No module named 'nosuchpkg'"),
]


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run(
        [sys.executable, "-m", "rlrun", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(("args", "status", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_mistake_gets_a_message_and_leaves_nothing(tmp_path: Path, args: list[str], status: int, message: str) -> None:
    result = rlrun(args, tmp_path)
    assert result.returncode == status, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    if status == RLRUN:
        assert "fix:" in result.stderr
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("*.yaml"))


def test_full_error_shows_the_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rlrun", "total_timesteps=0"],
        cwd=tmp_path,
        env={**os.environ, "HYDRA_FULL_ERROR": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_new_run_at_an_existing_run_folder_is_refused_untouched(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(shrink(compose_config("env=gridworld", "algo=ppo"), 256), run_dir)
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    result = rlrun([f"hydra.run.dir={run_dir}", "total_timesteps=256"], tmp_path)
    assert result.returncode == RLRUN and "already holds a run" in result.stderr and "resume=" in result.stderr
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
