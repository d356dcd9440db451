"""The resume mode a run gets (rlrun.checks.resume_mode) for rlrun's own envs and wrappers, and the action bounds
rlrun checks itself rather than leaving them to SB3's ``assert``."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from rlrun.checks import env_checks, resume_mode, rules
from rlrun.checks.printing import report
from rlrun.make import native, vec_envs
from rlrun.run.check_suite import run_checks
from tests import forked_commands
from tests.rlrun.helpers import BROKEN, compose_check, compose_config

GYM_CLIP = "+wrappers.gym_clip={_target_:gymnasium.wrappers.ClipAction,_partial_:true}"


@pytest.mark.parametrize(
    "overrides",
    [
        ["env=gridworld"],
        ["env=gridworld", "wrappers=[flatten]"],
        ["env=pointgoal", "wrappers=[flatten]"],
        ["env=pendulum", "wrappers=[clip_action,rescale_action]"],
        ["env=pointenv", "wrappers=[rescale_action,clip_action]"],
    ],
    ids=["gridworld", "gridworld-flatten", "pointgoal-flatten", "pendulum-clip-rescale", "pointenv-rescale-clip"],
)
def test_rlruns_envs_and_wrappers_resume_exactly(overrides: list[str]) -> None:
    decided = resume_mode.decide(compose_config(*overrides))
    assert decided.mode == "exact", decided.reason
    assert "round-trips" in resume_mode.resume_mode_line(decided)


def test_a_wrapper_that_widens_the_action_bounds_is_refused_naming_it() -> None:
    cfg = compose_config("env=pendulum", "algo=sac", GYM_CLIP)
    with closing(vec_envs.make_train_env(cfg)) as venv:
        [(problem, fix)] = rules.action_bound_problems(cfg, venv.action_space)
    assert "env.id=Pendulum-v1 after wrappers [gym_clip] are unbounded" in problem and "algo" not in problem
    assert "clip_action keeps the env's bounds" in fix
    with closing(vec_envs.make_train_env(compose_config("env=pendulum", "wrappers=[clip_action]"))) as venv:
        assert rules.action_bound_problems(cfg, venv.action_space) == []


def test_native_envs_take_rlruns_flatten() -> None:
    assert native.problems(compose_config("env=gridworld", "env.vectorization=native", "wrappers=[flatten]")) == []


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (["env=gridworld", "wrappers=[flatten]"], "PASS resume mode: exact: the env stack round-trips"),
        (
            ["env=gym", BROKEN.format("Unpicklable")],  # holds a lock: the run is not refused, it restarts episodes
            "INFO resume mode: restart_episodes: the env stack does not pickle: TypeError: cannot pickle "
            "'_thread.lock' object",
        ),
    ],
    ids=["exact", "restart-episodes"],
)
def test_rlrun_check_reports_the_resume_mode_with_its_reason(overrides: list[str], line: str) -> None:
    results = run_checks(compose_check(*overrides, "steps=50"), with_algo=False)
    text = " ".join(report(results).split())
    assert line in text
    assert not [r for r in results if r.status == env_checks.FAIL], text


def test_unbounded_actions_exit_2_naming_the_wrapper_not_the_algorithm(tmp_path: Path) -> None:
    args = ["env=pendulum", "algo=sac", GYM_CLIP, "total_timesteps=256", "progress_bar=false"]
    result = forked_commands.run(["-m", "rlrun", *args], cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stderr
    error = next(line for line in result.stderr.splitlines() if line.startswith("rlrun: error:"))
    assert "after wrappers [gym_clip] are unbounded" in error and "algo" not in error
    assert "Traceback" not in result.stderr
