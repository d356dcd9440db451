"""A replay buffer that cannot fit in memory is refused before the model allocates it (rlrun/checks/memory.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlrun.checks import memory
from rlrun.checks.rules import EnvFacts
from rlrun.config.errors import UserError
from rlrun.make import vec_envs
from rlrun.run.training import train
from tests.rlrun.helpers import compose_config

IMAGES = ["env=gym", "env.id=tests.rlrun.third_party_envs:Shaped-v0", "+env.kwargs.shape=image", "algo=dqn", "~tuned"]


def test_a_huge_buffer_on_an_image_env_is_refused_before_allocation(tmp_path: Path) -> None:
    cfg = compose_config(*IMAGES, "algo.buffer_size=100000000", "total_timesteps=100000000", "progress_bar=false")
    with pytest.raises(UserError) as caught:  # without the check: SB3's MemoryError, or gigabytes being allocated
        train(cfg, tmp_path)
    assert "the replay buffer needs about" in caught.value.problem and "GiB" in caught.value.problem
    assert "algo.buffer_size=" in str(caught.value.fix) and "optimize_memory_usage" in str(caught.value.fix)
    assert not (tmp_path / "run.json").exists()


def test_the_estimate_counts_the_rows_used_and_next_observations() -> None:
    cfg = compose_config(*IMAGES, "algo.buffer_size=1000000", "total_timesteps=1000")
    facts = EnvFacts.of(vec_envs.make_env(cfg))
    per_row = 84 * 84 * 3 * 2 + 8 + memory.SCALARS  # observation and next observation, a Discrete action (int64)
    assert memory.buffer_bytes(cfg, facts, optimized=False) == 1000 * per_row  # min(buffer_size, total_timesteps)
