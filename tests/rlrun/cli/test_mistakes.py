"""Command-line mistakes answered by rlrun before Hydra's entry prints anything (rlrun/cli/composition.py: Hydra's
composition, its refusals translated): exit status 2, rlrun's message with the closest names, nothing created."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.cli import entry
from rlrun.config.errors import UserError
from tests.rlrun.helpers import TINY_BUDGET


def rlrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    script = shutil.which("rlrun", path=str(Path(sys.executable).parent))
    assert script is not None, "the rlrun console script is not installed"
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run([script, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("args", "problem", "fix"),
    [
        (
            ["algo.learning_rat=0.1"],
            "algo.learning_rat is not an argument of PPO (did you mean learning_rate?)",
            "algo.learning_rate=0.1",
        ),
        (["env=cartpol"], "unknown env 'cartpol' (did you mean 'cartpole'?)", "env=cartpole"),
        (["algo=ppo,sacc", "-m"], "unknown algo 'sacc' (did you mean 'sac'?); available: a2c, ars,", "pick one"),
        (["total_timesteps=1.5e3", "seed=0.5"], "seed=0.5: seed takes a whole number", "seed=0"),
        (["eval.evry=5"], "eval.evry is not a key of rlrun's config (did you mean eval.every", "eval.every=5"),
        (["hydra.job.chdirr=true"], "hydra.job.chdirr is not a key of the hydra.job config (did you mean", "+hydra"),
        (["++algo=3"], "unknown algo '3'; available: a2c,", "pick one"),
        (["+env=pendulum"], "the config cannot be composed: Multiple values for env", "env=pendulum (without + or @"),
        (["env@mine=pendulum"], "the config cannot be composed: Could not override 'env@mine'", "env=pendulum"),
        (["~nosuch"], "the config cannot be composed: Could not delete from config", "remove ~nosuch"),
        (["eval=3"], "the config cannot be composed: Error merging override eval=3", "eval is a group of keys"),
        (["seed=0,1"], "seed=0,1 gives several values, which only a sweep (-m) runs", "rlrun -m seed=0,1"),
    ],
    ids=[
        *("algo-key", "env-option", "sweep-option", "not-whole", "schema-key", "hydra-key", "number-option"),
        *("added-group", "packaged-group", "deleted-key", "group-of-keys", "sweep-without-m"),
    ],
)
def test_a_mistake_gets_rlruns_message_before_hydra(tmp_path: Path, args: list[str], problem: str, fix: str) -> None:
    result = rlrun(args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"rlrun: error: {problem}"), result.stderr
    assert f"\n  fix: {fix}" in result.stderr
    assert "Traceback" not in result.stderr and "Hydra" not in result.stderr and result.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no outputs/


def test_malformed_yaml_in_a_config_dir_names_its_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "env"
    folder.mkdir(parents=True)
    (folder / "broken.yaml").write_text("# my env\nid: CartPole-v1\nn_envs: [1\n")
    result = rlrun(["--config-dir", "mine", "env=broken"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("rlrun: error: mine/env/broken.yaml:4 is not valid YAML: ")
    assert "fix: fix the YAML at mine/env/broken.yaml:4" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_a_config_dir_option_counts_and_its_keys_are_checked(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "mine.yaml").write_text("# my env\nid: CartPole-v1\nn_envs: 2\n")
    args = ["--config-dir", str(tmp_path), "env=mine", "env.n_envs=3"]
    assert entry.checked(args, "config")[0].argv == tuple(args)
    with pytest.raises(UserError, match=r"unknown env 'mie' \(did you mean 'mine'\?\)"):
        entry.checked(["--config-dir", str(tmp_path), "env=mie"], "config")


@pytest.mark.parametrize(
    ("args", "rewritten"),
    [
        (["total_timesteps=1e4"], ("total_timesteps=10000",)),
        (["-m", "seed=0,1", "total_timesteps=1e3,2.5e3"], ("-m", "seed=0,1", "total_timesteps=1000,2500")),
        (["eval.every=2e3", "algo.n_steps=32"], ("eval.every=2000", "algo.n_steps=32")),
        (["algo.learning_rate=1e-3", "total_timesteps=300"], ("algo.learning_rate=1e-3", "total_timesteps=300")),
    ],
    ids=["single", "sweep", "nested", "floats-left-alone"],
)
def test_a_whole_float_for_an_integer_is_rewritten(args: list[str], rewritten: tuple[str, ...]) -> None:
    assert entry.checked(args, "config")[0].argv == rewritten


def test_valid_overrides_pass_unchanged() -> None:
    args = ["env=pointgoal", "algo=her", "algo.policy_kwargs={net_arch:[16]}", "+benchmark=zoo", "~tuned"]
    args += ["hydra.run.dir=somewhere", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "seed=range(2)"]
    assert entry.checked(args, "config")[0].argv == tuple(args)


def test_a_run_given_a_whole_float_trains_the_integer(tmp_path: Path) -> None:
    args = [
        "env=gridworld",
        "algo=ppo",
        "total_timesteps=2.56e2",
        *(a for a in TINY_BUDGET if "total_timesteps" not in a),
    ]
    result = rlrun(args, tmp_path)
    assert result.returncode == 0, result.stderr
    (record,) = tmp_path.glob("outputs/runs/*/*/run.json")
    assert "total_timesteps=256" in json.loads(record.read_text())["overrides"]
    assert "total_timesteps: 256\n" in (record.parent / "config.yaml").read_text()


LIGHT = """
import sys
from rlrun.cli import {module} as command
sys.argv = ["{prog}", *{args!r}]
try:
    command.main()
except SystemExit as stop:
    heavy = sorted({{"torch", "stable_baselines3", "jax", "optuna"}} & set(sys.modules))
    print(stop.code, heavy)
"""


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("main", ["env=cartpol"]),
        ("main", ["algo.learning_rat=0.1"]),  # the constructor's arguments, read from its source
        ("main", ["eval.evry=5"]),
        ("main", ["total_timesteps=abc"]),
        ("check", ["wrappers=[flaten]"]),
        ("tune", ["tune.pruner=asha"]),
        ("tune", ["seed=3"]),
    ],
)
def test_a_mistake_is_answered_before_torch_sb3_jax_or_optuna_are_imported(
    tmp_path: Path, module: str, args: list[str]
) -> None:
    script = LIGHT.format(module=module, prog=f"rlrun-{module}", args=args)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "2 []", result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_number_for_an_integer_key_is_a_mistake_not_a_traceback(value: str) -> None:
    with pytest.raises(UserError, match=f"seed={value}: seed takes a whole number"):
        entry.checked([f"seed={value}"], "config")


def test_a_resume_of_a_folder_that_is_not_a_run_is_answered_before_torch(tmp_path: Path) -> None:
    (tmp_path / "not-a-run").mkdir()
    script = LIGHT.format(module="main", prog="rlrun", args=[f"resume={tmp_path / 'not-a-run'}"])
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "2 []", result.stdout + result.stderr
    assert "not a run folder (no run.json)" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-run"] and not any((tmp_path / "not-a-run").iterdir())
