"""``rlrun-check``'s random-episode checks of envs from other packages (rlrun/checks/episode_checks.py)."""

from __future__ import annotations

from rlrun.checks import episode_checks
from rlrun.checks.env_checks import FAIL, PASS
from tests.rlrun.helpers import compose_check

MODULE = "tests.rlrun.third_party_envs"


def test_an_env_without_time_limit_whose_episodes_never_end_fails() -> None:
    cfg = compose_check("env=gym", f"env.id={MODULE}:Endless-v0")
    result = episode_checks.episode_ends(cfg, 200)
    assert result.status == FAIL
    assert "no time limit" in result.detail and "env.max_episode_steps=" in result.notes[0]


def test_a_time_limit_passes() -> None:
    cfg = compose_check("env=gym", f"env.id={MODULE}:Endless-v0", "env.max_episode_steps=50")
    assert episode_checks.episode_ends(cfg, 200).status == PASS


def test_observations_outside_their_bounds_warn_with_the_count_and_worst_key() -> None:
    cfg = compose_check("env=gym", f"env.id={MODULE}:Shaped-v0")
    result = episode_checks.observation_bounds(cfg, 80)
    assert result.status == episode_checks.WARN
    # of each episode's 9 observations (reset and 8 steps), 3 * t / 8 > 1 for t = 3..8
    assert result.detail.startswith("60 observations of 80 random steps") and "observation, 2 beyond" in result.detail


def test_observations_inside_their_bounds_pass() -> None:
    cfg = compose_check("env=gym", f"env.id={MODULE}:Shaped-v0", "+env.kwargs.shape=scalar")
    assert episode_checks.observation_bounds(cfg, 40).status == PASS


def test_the_goal_check_says_when_the_difference_looks_like_a_penalty_added_on_purpose() -> None:
    from rlrun.checks import env_checks
    from tests.rlrun.helpers import BROKEN

    penalty = env_checks.goal_rewards(compose_check("env=gym", BROKEN.format("GoalTimePenalty")), 200)
    assert penalty.status == FAIL and "looks like a penalty the env adds on purpose" in penalty.detail
    scaled = env_checks.goal_rewards(compose_check("env=pointgoal", "wrappers=[scale_reward]"), 100)
    assert scaled.status == FAIL and "penalty" not in scaled.detail  # step's reward is higher: a wrapper's scaling
