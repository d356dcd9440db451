"""``rlrun-check`` with ``env.vectorization=native`` checks the batched training envs against the gym ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from rlrun.envs.batched import BatchedGridWorld

from rlrun.checks import native_agreement
from rlrun.checks.env_checks import FAIL, PASS
from rlrun.config.errors import UserError
from rlrun.run import check_suite
from tests.rlrun.helpers import compose_check


def native_result(*overrides: str) -> Any:
    return native_agreement.agreement(compose_check(*overrides, "env.vectorization=native"), 200)


def test_rlrun_check_reports_the_native_check_after_the_others() -> None:
    cfg = compose_check("env=gridworld", "env.vectorization=native", "steps=200")
    results = check_suite.run_checks(cfg, with_algo=False)
    assert results[-1].name == native_agreement.NAME and results[-1].status == PASS
    assert all(r.status != FAIL for r in results)
    gym_results = check_suite.run_checks(compose_check("env=gridworld", "steps=200"), with_algo=False)
    assert native_agreement.NAME not in [r.name for r in gym_results]


@pytest.mark.parametrize(
    "overrides",
    [["env=gridworld", "wrappers=[relative_position]"], ["env=pointgoal", "env.n_envs=3"], ["env=pointenv"]],
    ids=["gridworld-relative_position", "pointgoal", "pointenv"],
)
def test_batched_envs_that_replay_gym_pass(overrides: list[str]) -> None:
    result = native_result(*overrides)
    assert result.status == PASS and "as DummyVecEnv over gym.make" in result.detail


def test_roomtoy_compares_its_starts_only() -> None:
    result = native_result("env=roomtoy")
    assert result.status == PASS and "not compared" in result.detail


def test_a_batched_env_that_strays_from_the_gym_env_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    advance = BatchedGridWorld.advance

    def off_by_one(self: BatchedGridWorld, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards, terminated = advance(self, actions)
        return rewards + 1, terminated

    monkeypatch.setattr(BatchedGridWorld, "advance", off_by_one)
    result = native_result("env=gridworld")
    assert result.status == FAIL and "rewards differ" in result.detail


def test_an_env_without_a_native_version_stops_the_checks() -> None:
    with pytest.raises(UserError, match="env.vectorization=gym"):
        check_suite.run_checks(compose_check("env=cartpole", "env.vectorization=native", "steps=50"), with_algo=False)
