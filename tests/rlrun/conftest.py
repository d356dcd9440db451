"""Fixtures for the rlrun tests: real configs shrunk to seconds of work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig

from rlrun.run.training import train
from tests.rlrun.helpers import compose_config, shrink


@pytest.fixture
def tiny_config() -> Callable[..., DictConfig]:
    """``tiny_config("env=gridworld", "algo=ppo")``: a real config shrunk to a few hundred steps."""

    def make(*overrides: str, steps: int = 256) -> DictConfig:
        return shrink(compose_config(*overrides), steps)

    return make


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed GridWorld PPO run of 1024 steps with snapshots every 256 (trained once per test module)."""
    run_dir = tmp_path_factory.mktemp("run")
    cfg = shrink(compose_config("env=gridworld", "algo=ppo"), 1024)
    cfg.snapshot.every = 256
    train(cfg, run_dir)
    return run_dir
