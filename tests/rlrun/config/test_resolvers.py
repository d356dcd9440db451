"""Folder names of runs and sweeps (rlrun/config/resolvers.py), as ``conf/config.yaml`` resolves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.core.hydra_config import HydraConfig

from rlrun.config import resolvers


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["env=gridworld", "algo=ppo", "seed=3"], "gridworld-ppo/seed-3"),
        (["algo.n_steps=64", "progress_bar=false", "eval.every=5", "sweep=x"], "gridworld-ppo/algo.n_steps-64/seed-3"),
        (["wrappers=[flatten,scale_reward]"], "gridworld-ppo/wrappers-flatten+scale_reward/seed-3"),
        (["env.id=mypkg:my/Env-v0", "~tuned"], "gridworld-ppo/env.id-mypkg+my+Env-v0_no-tuned/seed-3"),
        (
            ["+algo.gamma=0.9", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
            "gridworld-ppo/algo.gamma-0.9/seed-3",
        ),
        (
            ["algo.policy_kwargs={net_arch:[16]}", "snapshot.keep=1"],
            "gridworld-ppo/algo.policy_kwargs-net_arch+16/seed-3",
        ),
    ],
    ids=["plain", "non-training-keys-left-out", "list", "module-id-and-deletion", "append-and-hydra", "dict"],
)
def test_sweep_subdir_names_the_training_overrides(overrides: list[str], expected: str) -> None:
    folder = resolvers.sweep_subdir("gridworld", "ppo", overrides, 3)
    assert folder == expected
    assert "=" not in folder and "," not in folder


def test_a_long_name_ends_in_a_hash_of_the_full_one() -> None:
    a = resolvers.safe_name("algo.policy_kwargs=" + "x" * 300 + "a")
    b = resolvers.safe_name("algo.policy_kwargs=" + "x" * 300 + "b")
    assert len(a) <= 120 and len(b) <= 120 and a != b


def test_sweep_dir_is_absolute_and_fixed_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    unnamed = resolvers.sweep_dir(None)
    assert Path(unnamed).is_absolute() and Path(unnamed).parent == tmp_path / "outputs" / "sweeps"
    assert resolvers.sweep_dir(None) == unnamed
    assert resolvers.sweep_dir("my sweep=1,2") == str(tmp_path / "outputs" / "sweeps" / "my+sweep-1+2")


def test_config_yaml_resolves_the_same_folders() -> None:
    overrides = ["algo=dqn", "seed=2", "algo.gamma=0.9", "progress_bar=false", "sweep=demo"]
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)  # what Hydra does for each job, so ${hydra:...} resolves
    assert cfg.hydra.sweep.subdir == "gridworld-dqn/algo.gamma-0.9/seed-2"
    assert cfg.hydra.sweep.dir == str(Path("outputs/sweeps/demo").absolute())
