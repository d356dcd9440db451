"""``check_nan=true`` stops a run at the first NaN, naming the step and the env copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from rlrun.make.nan import NonFiniteValue
from rlrun.run.training import resume, train
from tests.rlrun.helpers import compose_config, shrink
from tests.rlrun.resume_helpers import Crash, crash_at


class NaNAfter(gym.Env[np.ndarray, int]):
    """Observations turn NaN after ``after`` steps, in the copy seeded with ``bad_seed`` only."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, after: int = 305, bad_seed: int = 1) -> None:
        self.after, self.bad_seed, self.seed, self.steps = after, bad_seed, None, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.seed = seed
        return np.zeros(2, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.steps += 1
        value = np.nan if self.seed == self.bad_seed and self.steps >= self.after else 0.0
        return np.full(2, value, np.float32), 0.0, False, self.steps % 20 == 0, {}


gym.register("rlrun-test/NaNAfter-v0", entry_point=NaNAfter, max_episode_steps=1000)


def test_check_nan_names_step_and_env_copy_and_keeps_snapshots(tmp_path: Path) -> None:
    cfg = shrink(
        compose_config(
            "env=gym", "env.id=rlrun-test/NaNAfter-v0", "algo=ppo", "~tuned", "env.n_envs=2", "check_nan=true"
        ),
        2048,
    )
    cfg.snapshot.every = 64
    with pytest.raises(NonFiniteValue, match=r"found nan in observations returned by the env at step 610, env copy 1"):
        train(cfg, tmp_path)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "failed" and "env copy 1" in record["error"]
    assert list((tmp_path / "snapshots").glob("step-*"))


def test_without_check_nan_the_run_is_not_stopped_by_the_checker(tmp_path: Path) -> None:
    cfg = shrink(
        compose_config(
            "env=gym",
            "env.id=rlrun-test/NaNAfter-v0",
            "algo=ppo",
            "~tuned",
            "env.n_envs=2",
            "+env.kwargs.after=100000",
        ),
        256,
    )
    train(cfg, tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "completed"


def test_a_resumed_run_names_the_same_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = shrink(
        compose_config(
            "env=gym", "env.id=rlrun-test/NaNAfter-v0", "algo=ppo", "~tuned", "env.n_envs=2", "check_nan=true"
        ),
        2048,
    )
    cfg.snapshot.every = 64
    with monkeypatch.context() as patch:
        crash_at(patch, 400)  # after the snapshot at 384, before the NaN
        with pytest.raises(Crash):
            train(cfg, tmp_path)
    with pytest.raises(NonFiniteValue, match=r"returned by the env at step 610, env copy 1"):
        resume(tmp_path, progress_bar="false")  # the checker's step counter is part of the snapshot
