"""A budget chosen on the command line brings the keys a preset ties to its budget along (rlrun.config.budget)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rlrun.config.budget import fit_to_budget
from rlrun.config.keys import config_hash
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, read_run_json

TINY_NETS = "algo.policy_kwargs={net_arch:[16]}"  # not tied to the budget: keeps the tests quick


def test_a_short_budget_scales_the_presets_budget_bound_keys_and_says_so() -> None:
    overrides = ["env=pendulum", "algo=td3", "total_timesteps=1500"]
    composed = compose_config(*overrides)
    fitted, lines = fit_to_budget(composed, overrides)
    assert (fitted.algo.learning_starts, fitted.algo.buffer_size) == (750, 1500)
    assert (composed.algo.learning_starts, composed.algo.buffer_size) == (10000, 200000)  # the composed one as it was
    assert lines[0].startswith("total_timesteps=1500 scaled algo.learning_starts: 10000 -> 750 (")
    assert lines[1].startswith("total_timesteps=1500 scaled algo.buffer_size: 200000 -> 1500 (")
    assert config_hash(fitted) != config_hash(composed)


def test_keys_set_on_the_command_line_are_kept() -> None:
    overrides = ["env=pendulum", "algo=td3", "total_timesteps=1500", "algo.buffer_size=5000", "eval.every=3000"]
    fitted, lines = fit_to_budget(compose_config(*overrides), overrides)
    assert (fitted.algo.learning_starts, fitted.algo.buffer_size, fitted.eval.every) == (750, 5000, 3000)
    assert [line.split(":")[0] for line in lines] == ["total_timesteps=1500 scaled algo.learning_starts"]


@pytest.mark.parametrize(
    "overrides",
    [
        ["env=pendulum", "algo=td3"],
        ["env=halfcheetah", "algo=sac"],
        ["env=pendulum", "algo=td3", "total_timesteps=20000"],
    ],
    ids=["own-budget", "own-budget-1M", "own-budget-typed"],
)
def test_a_preset_at_its_own_budget_keeps_its_learning_starts(overrides: list[str]) -> None:
    composed = compose_config(*overrides)
    fitted, _ = fit_to_budget(composed, overrides)
    assert fitted.algo.learning_starts == composed.algo.learning_starts
    if "total_timesteps=20000" not in overrides:  # nothing on the command line: the very same config
        assert fitted is composed


def test_a_budget_that_still_cannot_work_is_refused(tmp_path: Path) -> None:
    command = ["env=pendulum", "algo=td3", "total_timesteps=1500", "algo.learning_starts=2000"]  # the user's own
    result = forked_commands.run(["-m", "rlrun", *command], cwd=tmp_path, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "algo.learning_starts=2000 >= total_timesteps=1500: TD3 would only act randomly" in result.stderr
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize(
    ("overrides", "scaled"),
    [
        (["env=pendulum", "algo=td3", "total_timesteps=1500"], {"learning_starts": 750, "buffer_size": 1500}),
        (["env=halfcheetah", "algo=sac", "total_timesteps=400"], {"learning_starts": 200, "buffer_size": 400}),
    ],
    ids=["pendulum-td3", "halfcheetah-sac"],
)
def test_a_short_run_of_a_preset_trains_and_says_what_was_scaled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, overrides: list[str], scaled: dict[str, int]
) -> None:
    overrides = [*overrides, TINY_NETS, "eval.episodes=2", "eval.final_episodes=2", "eval.n_envs=2"]
    overrides += ["progress_bar=false"]
    with caplog.at_level(logging.INFO, logger="rlrun"):
        train(compose_config(*overrides), tmp_path, {"overrides": overrides, "preset": "x"})
    assert read_run_json(tmp_path)["status"] == "completed"
    recorded = OmegaConf.load(tmp_path / "config.yaml")
    assert {key: recorded.algo[key] for key in scaled} == scaled  # config.yaml records the scaled values
    for key, value in scaled.items():
        assert any(f"scaled algo.{key}: " in m and m.split(" (")[0].endswith(f"-> {value}") for m in caplog.messages)


@pytest.mark.slow
def test_halfcheetah_sac_at_3000_steps_trains_from_the_command_line(tmp_path: Path) -> None:
    result = forked_commands.run(
        ["-m", "rlrun", "env=halfcheetah", "algo=sac", "total_timesteps=3000", "hydra.run.dir=run"],
        cwd=tmp_path,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr
    assert "scaled algo.learning_starts: 10000 -> 1500" in result.stdout + result.stderr
    assert read_run_json(tmp_path / "run")["status"] == "completed"


def test_a_sweep_plans_the_hash_its_scaled_job_records_and_skips_it_when_run_again(tmp_path: Path) -> None:
    args = ["-m", "rlrun", "-m", "env=gridworld", "algo=dqn", "total_timesteps=200", TINY_NETS]
    args += ["eval.episodes=2", "eval.final_episodes=2", "sweep=short"]
    for _ in range(2):
        result = forked_commands.run(args, cwd=tmp_path, timeout=300, env={**os.environ, "HYDRA_FULL_ERROR": "0"})
        assert result.returncode == 0, result.stdout + result.stderr
    counts = json.loads((tmp_path / "outputs" / "sweeps" / "short" / "sweep.json").read_text())["counts"]
    assert counts["skipped"] == 1 and counts["refused"] == 0


def test_rlrun_check_checks_the_config_the_run_would_train(tmp_path: Path) -> None:
    result = forked_commands.run(
        ["-m", "rlrun.cli.check", "env=pendulum", "algo=td3", "total_timesteps=1500"], cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "scaled algo.learning_starts: 10000 -> 750" in result.stdout
    assert "PASS  hyperparameters" in result.stdout
