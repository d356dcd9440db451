"""A replay buffer that cannot fit in memory is refused before the model allocates it (rlrun/checks/memory.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces
from stable_baselines3 import DQN

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


def test_a_buffer_whose_rows_fit_but_whose_reservation_does_not_gets_a_size_that_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "overcommit").write_text("0\n")  # Linux's default heuristic: one array at most memory plus swap
    (tmp_path / "meminfo").write_text("MemTotal: 16777216 kB\nMemAvailable: 12582912 kB\nSwapTotal: 0 kB\n")
    monkeypatch.setattr(memory, "OVERCOMMIT", tmp_path / "overcommit")
    monkeypatch.setattr(memory, "MEMINFO", tmp_path / "meminfo")
    frames = EnvFacts("Frames-v0", spaces.Box(0, 255, (84, 84, 4), np.uint8), spaces.Discrete(4), None, False)
    cfg = compose_config("env=gridworld", "algo=dqn", "algo.buffer_size=100000000", "total_timesteps=20000")
    # 20,000 rows used (1 GiB): they fit; SB3 reserves 2.6 TiB at construction: DQN rejected its arguments: MemoryError
    ((problem, fix),) = memory.buffer_problems(cfg, frames, DQN)
    assert "algo.buffer_size=100000000 reserves about 2,629 GiB for the replay buffer's observations" in problem
    assert "more than the 16.0 GiB this machine grants" in problem
    assert fix == "lower algo.buffer_size (e.g. algo.buffer_size=20000: the budget, every step kept)"
    cfg = compose_config("env=gridworld", "algo=dqn", "algo.buffer_size=500000", "total_timesteps=20000")
    assert memory.buffer_problems(cfg, frames, DQN) == []  # 13 GiB reserved: granted, its unused rows cost nothing
    (tmp_path / "overcommit").write_text("1\n")  # always granted
    assert memory.reservation_limit() is None
