"""Conventions of envs from other packages, honoured or named: ``env.success_key``, ``env.name``, observation
spaces the policies cannot take (the envs: tests/rlrun/third_party_envs.py)."""

from __future__ import annotations

import csv
import json
import logging
import os
from pathlib import Path

import pytest
from omegaconf import open_dict

from rlrun.config.errors import UserError
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

ROOT = Path(__file__).resolve().parents[3]
SHAPED = ["env=gym", "env.id=tests.rlrun.third_party_envs:Shaped-v0", "algo=ppo", "~tuned"]


def test_success_under_env_success_key_wins_over_is_success(tmp_path: Path) -> None:
    cfg = shrink(compose_config(*SHAPED, "+env.kwargs.both=true", "env.success_key=success"), steps=64)
    assert train(cfg, tmp_path)["success_rate"] == 1.0  # info["is_success"] is always false
    rows = list(csv.DictReader((tmp_path / "eval.csv").read_text().splitlines()))
    assert rows and all(row["success_rate"] == "1.0" for row in rows)


def test_an_env_reporting_no_success_has_no_success_rate_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = shrink(compose_config(*SHAPED), steps=64)  # info["success"] only, and the default key is_success
    with caplog.at_level(logging.INFO, logger="rlrun"):
        assert train(cfg, tmp_path)["success_rate"] is None
    assert sum("reports no success" in record.message for record in caplog.records) == 1


@pytest.mark.parametrize("shape", ["scalar", "tuple"])
def test_observations_the_policies_cannot_take_are_refused_with_flatten(tmp_path: Path, shape: str) -> None:
    cfg = shrink(compose_config(*SHAPED, f"+env.kwargs.shape={shape}"), steps=64)
    with pytest.raises(UserError) as caught:
        train(cfg, tmp_path)
    assert "wrappers=[flatten]" in str(caught.value.fix)
    assert not (tmp_path / "run.json").exists()  # refused before training


def test_a_scalar_observation_trains_with_flatten(tmp_path: Path) -> None:
    cfg = shrink(compose_config(*SHAPED, "+env.kwargs.shape=scalar", "wrappers=[flatten]"), steps=64)
    with open_dict(cfg):
        cfg.snapshot.every = 10**6  # Gymnasium's FlattenObservation holds a lambda: its envs do not pickle
    assert train(cfg, tmp_path)["episodes"] == 2


ENV_FILE = """\
# one task of a suite, picked by env.kwargs
id: tests.rlrun.third_party_envs:Shaped-v0
kwargs: {{both: {both}}}
name: {name}  # names its run folders and table groups
"""


def test_env_name_separates_tasks_picked_in_env_files(tmp_path: Path) -> None:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, both in (("shaped-a", "false"), ("shaped-b", "true")):
        (tmp_path / name / "env").mkdir(parents=True)  # two users' folders, each with its env/task.yaml
        (tmp_path / name / "env" / "task.yaml").write_text(ENV_FILE.format(name=name, both=both))
        args = ["-m", "rlrun", "env=task", "algo=ppo", "~tuned", "total_timesteps=64"]
        args += ["algo.n_steps=32", "algo.batch_size=32", "eval.every=64", "eval.episodes=1"]
        args += ["eval.final_episodes=1", "progress_bar=false", f"hydra.searchpath=[file://{tmp_path / name}]"]
        done = forked_commands.run(args, cwd=tmp_path, env=environ, timeout=300)
        assert done.returncode == 0, done.stderr
    runs = tmp_path / "outputs" / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["shaped-a-ppo", "shaped-b-ppo"]
    envs = sorted(json.loads(p.read_text())["env"] for p in runs.rglob("run.json"))
    assert envs == ["shaped-a", "shaped-b"]
    table = forked_commands.run(["-m", "rlrun.cli.table", str(runs)], cwd=tmp_path, timeout=300)
    assert table.returncode == 0, table.stderr
    groups = sorted(row["group"] for row in csv.DictReader((runs / "table.csv").read_text().splitlines()))
    assert groups == ["shaped-a-ppo", "shaped-b-ppo"]


def test_a_failure_from_the_envs_data_names_the_env_not_the_algorithm(tmp_path: Path) -> None:
    from rlrun.make import gym_make

    cfg = shrink(compose_config(*SHAPED, "+env.kwargs.shape=misdeclared"), steps=64)
    with pytest.raises(ValueError) as caught:  # raised where SB3's vec env stores the observation
        train(cfg, tmp_path)
    _, fix = gym_make.failure_fix(caught.value, cfg.env.id)
    assert "algo." not in fix and f"the env ({cfg.env.id}) or one of its wrappers" in fix
