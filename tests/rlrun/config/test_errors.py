"""Every user mistake ends in a message naming the problem and the fix, no traceback, nothing left behind.

Exit status 2 for every mistake, those Hydra would report included (rlrun finds them first: an unknown option,
a misspelt key, a wrong type; tests/rlrun/cli/test_mistakes.py). A run that fails while training exits 1 with its
run.json saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

RLRUN = 2

CASES = [
    ("unknown-env", ["env=gridwrld"], RLRUN, "unknown env 'gridwrld' (did you mean 'gridworld'?)"),
    ("seed-abc", ["seed=abc"], RLRUN, "seed='abc': seed takes a whole number"),
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
    (
        "env-rejects-kwarg",
        ["+env.kwargs.size=-3"],
        RLRUN,
        "rejected env.kwargs={'size': -3}: ValueError: size must be an integer >= 2",
    ),
    (
        "wrapper-rejects-kwarg",
        ["wrappers=[scale_reward]", "wrappers.scale_reward.scale=0"],
        RLRUN,
        "wrapper 'scale_reward' cannot apply to rlrun/GridWorld-v0: scale must be a finite, non-zero number",
    ),
    (
        "values-out-of-range",  # every problem at once
        ["torch_threads=0", "algo.batch_size=0", "algo.gamma=1.5", "algo.learning_rate=0"],
        RLRUN,
        "4 problems in the config:\n  - torch_threads=0 must be a positive integer\n",
    ),
    ("algo-rejects-value", ["algo.batch_size=1"], RLRUN, "PPO rejected its arguments (algo.batch_size=1)"),
    (
        "never-learns",
        ["env=pendulum", "algo=sac", "total_timesteps=50", "algo.learning_starts=100"],  # the user's: not scaled
        RLRUN,
        "algo.learning_starts=100 >= total_timesteps=50: SAC would only act randomly and never update",
    ),
    (
        "misspelt-wrapper",
        ["wrappers=[relative_position,flaten]"],
        RLRUN,
        "unknown wrapper 'flaten' (did you mean 'flatten'?); available wrappers: atari, clip_action, flatten,",
    ),
]
if not torch.cuda.is_available():
    CASES.append(("cuda-without-gpu", ["device=cuda"], RLRUN, "device=cuda but torch finds no CUDA GPU here"))


ROOT = Path(__file__).resolve().parents[3]
BROKEN = "env.id=tests.rlrun.broken_envs:broken/{}-v0"  # module form: gym.make imports the module
TINY = ["algo=ppo", "~tuned", "algo.n_steps=32", "algo.batch_size=32", "algo.policy_kwargs={net_arch:[16]}"]
TINY += ["total_timesteps=128", "eval.every=64", "eval.episodes=1", "eval.final_episodes=1", "snapshot.every=64"]


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = str(ROOT)  # tests.rlrun.broken_envs
    return forked_commands.run(["-m", "rlrun", *args], cwd=cwd, env=env, timeout=300)


@pytest.mark.parametrize(("args", "status", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_mistake_gets_a_message_and_leaves_nothing(tmp_path: Path, args: list[str], status: int, message: str) -> None:
    result = rlrun(args, tmp_path)
    assert result.returncode == status, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "fix:" in result.stderr
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("*.yaml"))


def test_full_error_shows_the_traceback(tmp_path: Path) -> None:
    result = forked_commands.run(
        ["-m", "rlrun", "total_timesteps=0"], cwd=tmp_path, env={**os.environ, "HYDRA_FULL_ERROR": "1"}
    )
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_new_run_at_an_existing_run_folder_is_refused_untouched(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(shrink(compose_config("env=gridworld", "algo=ppo"), 256), run_dir)
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    result = rlrun([f"hydra.run.dir={run_dir}", "total_timesteps=256"], tmp_path)
    assert result.returncode == RLRUN and "already holds a run" in result.stderr and "resume=" in result.stderr
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_unwritable_output_folder_is_refused_before_hydra(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("the user's")
    run_dir = blocker / "run"
    result = rlrun([f"hydra.run.dir={run_dir}"], tmp_path)
    assert result.returncode == RLRUN, result.stderr
    assert f"hydra.run.dir={run_dir} cannot be written: {blocker} is a file, not a folder" in result.stderr
    assert "fix:" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"] and blocker.read_text() == "the user's"


@pytest.mark.parametrize(
    ("name", "extra", "error"),
    [
        ("CrashAfter", [], "RuntimeError: the simulator lost its state"),
        ("NaNReward", ["check_nan=true"], "NonFiniteValue"),
    ],
    ids=["env-raises", "nan-with-check-nan"],
)
def test_a_failed_run_exits_1_and_its_record_says_so(tmp_path: Path, name: str, extra: list[str], error: str) -> None:
    run_dir = tmp_path / "run"
    result = rlrun(["env=gym", BROKEN.format(name), *TINY, *extra, f"hydra.run.dir={run_dir}"], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and record["error"].startswith(error), record["error"]
    assert record["final"] is None
