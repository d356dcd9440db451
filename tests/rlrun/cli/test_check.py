"""``rlrun-check`` (rlrun/cli/check.py), in-process and as a user runs it; the env checks themselves are in
tests/rlrun/checks/test_env.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rlrun.checks import env_checks, printing
from rlrun.cli import check
from rlrun.config.errors import UserError
from rlrun.make import vec_envs
from rlrun.run import check_suite
from tests import forked_commands
from tests.rlrun.helpers import BROKEN, PAIRS, compose_check, compose_config

ROOT = Path(__file__).resolve().parents[3]


def run(args: list[str], cwd: Path, prog: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(ROOT)}  # ROOT: tests.rlrun.broken_envs
    if prog:  # an installed console script: a fresh process
        return subprocess.run([*prog, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return forked_commands.run(["-m", "rlrun.cli.check", *args], cwd=cwd, env=env, timeout=300)


@pytest.mark.parametrize(("env", "algo"), [("gridworld", "ppo"), ("pointgoal", "her"), ("cartpole", "dqn")])
def test_check_config_is_the_training_config(env: str, algo: str) -> None:
    """Same defaults list and run keys as conf/config.yaml, plus steps, sim and render."""
    checked = OmegaConf.to_container(compose_check(f"env={env}", f"algo={algo}"))
    trained = OmegaConf.to_container(compose_config(f"env={env}", f"algo={algo}"))
    assert {key: checked.pop(key) for key in ("steps", "sim", "render")} == {
        "steps": 1000,
        "sim": 0,
        "render": None,
    }
    # conf/check.yaml takes the run keys from the schema's defaults, so those must equal config.yaml's values.
    assert checked == trained, "keep rlrun/config/schema.py's defaults equal to the values in conf/config.yaml"


@pytest.mark.parametrize(("env", "algo"), PAIRS, ids=[f"{env}-{algo}" for env, algo in PAIRS])
def test_every_compatible_pair_passes_the_algorithm_checks(env: str, algo: str) -> None:
    cfg = compose_check(f"env={env}", f"algo={algo}")
    results = check_suite.algo_checks(cfg, vec_envs.make_env(cfg))
    assert [r.status for r in results] == [env_checks.PASS] * 3, printing.report(results)


@pytest.mark.parametrize(
    ("overrides", "failed", "reason"),
    [
        (["env=gridworld", "algo=sac"], "SAC fits rlrun/GridWorld-v0", "SAC cannot train on rlrun/GridWorld"),
        (["env=pendulum", "algo=her"], "SAC fits Pendulum-v1", "HER needs a goal env"),
        (["env=cartpole", "algo=dqn", "+algo.learning_rat=0.1"], "DQN arguments", "algo.learning_rat is not"),
        (
            ["env=pendulum", "algo=sac", "total_timesteps=50"],
            "hyperparameters",
            "algo.learning_starts=100 >=",
        ),
    ],
    ids=["sac-discrete", "her-no-goal", "misspelt-argument", "never-learns"],
)
def test_algorithm_problems_fail_their_check(overrides: list[str], failed: str, reason: str) -> None:
    cfg = compose_check(*overrides)
    results = {r.name: r for r in check_suite.algo_checks(cfg, vec_envs.make_env(cfg))}
    assert [name for name, r in results.items() if r.status == env_checks.FAIL] == [failed]
    text = "\n".join([results[failed].detail, *results[failed].notes])
    assert reason in text and "fix: " in text


def test_hyperparameter_warnings_do_not_fail() -> None:
    cfg = compose_check("env=cartpole", "algo=ppo", "algo.batch_size=100", "eval.every=200000")
    hyper = check_suite.algo_checks(cfg, vec_envs.make_env(cfg))[-1]
    assert (hyper.status, hyper.detail) == (env_checks.PASS, "2 warning(s)")
    assert "not a multiple of algo.batch_size=100" in hyper.notes[0] and "no periodic evaluation" in hyper.notes[2]


def test_sim_prints_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    printing.simulate(compose_check("env=pointenv", "sim=5"))
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if line.startswith("step ")]
    assert [line.split()[1] for line in steps] == ["1", "2", "3", "4", "5"]
    assert all(re.search(r"action=\[.*\]  reward=\S+  terminated=False  truncated=False", line) for line in steps)
    assert lines[0] == "reset(seed=0)" and lines[1].startswith("  observation [")


def test_sim_with_render_ansi_prints_the_frames(capsys: pytest.CaptureFixture[str]) -> None:
    printing.simulate(compose_check("env=roomtoy", "sim=3", "render=ansi"))
    out = capsys.readouterr().out
    assert out.count("step ") == 3 and "observation" not in out
    assert out.count("\n") > 3 * 4  # a multi-line text frame after each step


def test_algo_given_reads_the_overrides() -> None:
    assert check.algo_given(["env=gridworld", "algo=dqn"]) and check.algo_given(["algo.batch_size=8"])
    assert not check.algo_given(["env=gridworld", "wrappers=[flatten]", "algorithm_note=x"])


# As a user runs it: exit statuses, messages, and no files anywhere.


def test_console_script_passes_from_another_directory_and_writes_nothing(tmp_path: Path) -> None:
    script = shutil.which("rlrun-check", path=str(Path(sys.executable).parent))
    assert script is not None, "the rlrun-check console script is not installed"
    result = run(["env=gridworld", "algo=ppo", "steps=200"], tmp_path, prog=[script])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("rlrun-check: env=gridworld (rlrun/GridWorld-v0), algo=ppo, seed=0\n")
    assert "PASS  PPO fits rlrun/GridWorld-v0" in result.stdout
    assert result.stdout.rstrip().endswith("10 passed, 0 failed, 1 skipped")
    assert list(tmp_path.iterdir()) == []


def test_incompatible_pair_exits_1_with_the_reason(tmp_path: Path) -> None:
    # Exit 1, not 2: the pair is what the check command is asked to check, so an incompatible pair is a
    # failed check (DESIGN.md: 1 = failed checks), reported with every other check. Training refuses the
    # same pair with 2 because there it is a mistake that stops the run before it starts.
    result = run(["env=gridworld", "algo=sac", "steps=100"], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  SAC fits rlrun/GridWorld-v0: SAC cannot train on rlrun/GridWorld-v0" in result.stdout
    assert "fix: use one of algo=ppo, algo=a2c, algo=dqn" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr and list(tmp_path.iterdir()) == []


def test_broken_env_by_module_exits_1(tmp_path: Path) -> None:
    result = run(["env=gym", BROKEN.format("NaNReward"), "steps=100"], tmp_path)
    assert result.returncode == 1
    assert re.search(r"^FAIL  random rollout: step \d+: rewards contain NaN", result.stdout, re.MULTILINE)
    assert result.stdout.rstrip().endswith("6 passed, 1 failed, 2 skipped")


def test_sim_render_ansi_from_the_command_line(tmp_path: Path) -> None:
    result = run(["env=gridworld", "sim=5", "render=ansi"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("step ") for line in result.stdout.splitlines()) == 5
    assert "A" in result.stdout and "T" in result.stdout  # GridWorld's agent and target in the frames
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["env=gym", "env.id=NoSuchEnv-v0"], "cannot make env.id='NoSuchEnv-v0'"),
        (["env=gym"], "env.id is not set"),
        (["env=gridworld", "env.n_envs=0"], "env.n_envs=0 must be a positive integer"),
        (["env=gridworld", "steps=0"], "steps=0 must be positive"),
        (["env=gridworld", "wrappers=[rescale_action]"], "wrapper 'rescale_action' cannot apply"),
        (["env=cartpole", "sim=3", "render=ansi"], "CartPole-v1 cannot show render=ansi"),
        (["env=gridworld", "sim=-1"], "sim=-1 must be >= 0"),
    ],
    ids=["unknown-id", "no-id", "bad-value", "bad-steps", "bad-wrapper", "render-mode", "negative-sim"],
)
def test_user_mistakes_stop_before_any_check(overrides: list[str], message: str) -> None:
    cfg = compose_check(*overrides)
    with pytest.raises(UserError, match=re.escape(message)) as raised:
        printing.simulate(cfg) if cfg.sim else check_suite.run_checks(cfg, with_algo=False)
    assert raised.value.fix


def test_user_mistakes_exit_2(tmp_path: Path) -> None:
    result = run(["env=gym", "env.id=NoSuchEnv-v0"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "rlrun-check: error: cannot make env.id='NoSuchEnv-v0'" in result.stderr and "fix:" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_misspelt_key_gets_the_closest_name(tmp_path: Path) -> None:
    result = run(["env=gridworld", "stepz=10"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "rlrun-check: error: stepz is not a key of rlrun's config (did you mean steps" in result.stderr
    assert "fix: steps=10" in result.stderr and list(tmp_path.iterdir()) == []


def test_a_misspelt_wrapper_gets_the_list(tmp_path: Path) -> None:
    result = run(["env=gridworld", "wrappers=[flaten]"], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "rlrun-check: error: unknown wrapper 'flaten' (did you mean 'flatten'?); available wrappers: " in result.stderr
    )
    assert "fix: wrappers=[flatten]" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == "" and list(tmp_path.iterdir()) == []
