"""The env checks of rlrun-check (rlrun/checks/env_checks.py): bundled envs pass, broken envs fail the right checks."""

from __future__ import annotations

import os
import sys

import pytest

from rlrun.checks import env_checks
from rlrun.checks.printing import report
from rlrun.run import check_suite
from tests.rlrun.helpers import BROKEN, compose_check

BUNDLED = ["gridworld", "pointenv", "pointgoal", "roomtoy", "cartpole", "pendulum"]


def statuses(results: list[env_checks.Result]) -> dict[str, str]:
    return {result.name: result.status for result in results}


@pytest.mark.parametrize("env", BUNDLED)
def test_every_bundled_env_passes_the_env_checks(env: str) -> None:
    results = check_suite.run_checks(compose_check(f"env={env}", "steps=200"), with_algo=False)
    assert not [r for r in results if r.status == env_checks.FAIL], report(results)
    assert statuses(results)["algorithm"] == env_checks.SKIP
    assert statuses(results)["goal env compute_reward"] == (env_checks.PASS if env == "pointgoal" else env_checks.SKIP)


def test_without_pygame_the_render_check_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # `import pygame` raises ImportError
    monkeypatch.setenv("DISPLAY", ":0")  # human is rendered (into SDL's dummy driver) only where a display is
    results = check_suite.run_checks(compose_check("env=gridworld", "steps=50"), with_algo=False)
    assert results[0].status == env_checks.PASS and "render check skipped: pygame is not installed" in results[0].detail


@pytest.mark.parametrize(
    ("name", "failed", "reason"),
    [
        (
            "Unseeded",
            {"Gymnasium check_env", "seeded determinism"},
            "diverged at",  # at reset(seed=0): two unseeded starts never agree
        ),
        ("NaNReward", {"random rollout"}, "rewards contain NaN"),
        ("GoalTimePenalty", {"goal env compute_reward"}, "disagrees with step's reward"),
    ],
)
def test_a_broken_env_fails_the_right_checks(name: str, failed: set[str], reason: str) -> None:
    results = check_suite.run_checks(compose_check("env=gym", BROKEN.format(name), "steps=200"), with_algo=False)
    assert {r.name for r in results if r.status == env_checks.FAIL} == failed, report(results)
    assert any(reason in r.detail for r in results if r.status == env_checks.FAIL)


def test_a_reward_wrapper_breaks_the_goal_contract() -> None:
    cfg = compose_check("env=pointgoal", "wrappers=[scale_reward]", "steps=100")
    assert "step returned -0.1, compute_reward -1" in env_checks.goal_rewards(cfg, 100).detail


def test_environment_sets_and_restores_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "x11")
    monkeypatch.delenv("SDL_AUDIODRIVER", raising=False)
    with env_checks.environment(env_checks.HEADLESS):
        assert os.environ["SDL_VIDEODRIVER"] == "dummy" and os.environ["SDL_AUDIODRIVER"] == "dummy"
    assert os.environ["SDL_VIDEODRIVER"] == "x11" and "SDL_AUDIODRIVER" not in os.environ
