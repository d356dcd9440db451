"""Fixtures for the rlrun tests: real configs shrunk to seconds of work."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from omegaconf import DictConfig

from tests.rlrun.helpers import compose_config, shrink


@pytest.fixture
def tiny_config() -> Callable[..., DictConfig]:
    """``tiny_config("env=gridworld", "algo=ppo")``: a real config shrunk to a few hundred steps."""

    def make(*overrides: str, steps: int = 256) -> DictConfig:
        return shrink(compose_config(*overrides), steps)

    return make
