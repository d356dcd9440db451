"""Values no run can take are refused before anything is made, with rlrun's words and exit 2 (issue 48): a budget
beyond any run, more env copies than the budget's steps or than the machine can start as processes, numbers in
``algo.*`` that are not finite, and ``total_timesteps=0`` with one problem, not a second of rlrun's own scaling."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlrun.checks import rules
from rlrun.config.budget import fit_to_budget
from tests import forked_commands
from tests.rlrun.helpers import compose_config

GRIDWORLD = ["env=gridworld", "algo=ppo", "progress_bar=false"]


def test_a_budget_beyond_any_run_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    result = forked_commands.run(["-m", "rlrun", *GRIDWORLD, "total_timesteps=1e30"], cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "total_timesteps=1000000000000000019884624838656 is beyond any run" in result.stderr
    assert "fix: give the env steps you mean" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["total_timesteps=10000000000000"], "is beyond any run (at most 1e+12 env steps)"),
        (["env.n_envs=100000", "env.vec_env=subproc"], "starts a process per copy: more than this machine can hold"),
        (["env.n_envs=100000", "total_timesteps=64"], "one step of them all is more than total_timesteps=64"),
        (["algo.learning_rate=inf"], "algo.learning_rate=inf is not a finite number"),
        (["algo=dqn", "algo.exploration_final_eps=-inf"], "algo.exploration_final_eps=-inf is not a finite number"),
    ],
    ids=["budget-1e13", "processes", "copies-beyond-budget", "learning-rate-inf", "dqn-eps-minus-inf"],
)
def test_a_value_no_run_can_take_is_a_problem_with_its_fix(overrides: list[str], words: str) -> None:
    problems = rules.range_problems(compose_config(*GRIDWORLD, *overrides))
    assert [problem for problem, _ in problems if words in problem], problems
    assert all(fix for _, fix in problems)


def test_a_value_machines_hold_passes() -> None:
    cfg = compose_config(*GRIDWORLD, "env.n_envs=4", "env.vec_env=subproc", "total_timesteps=1000000000000")
    assert rules.range_problems(cfg) == []


def test_a_zero_budget_is_one_problem_not_a_second_of_rlruns_scaling() -> None:
    cfg = compose_config("env=gridworld", "algo=dqn", "total_timesteps=0")
    fitted, scaled = fit_to_budget(cfg, ["total_timesteps=0"])  # was: algo.buffer_size 1000000 -> 0, refused too
    assert scaled == [] and fitted.algo.buffer_size == cfg.algo.buffer_size
    assert [problem for problem, _ in rules.range_problems(fitted)] == ["total_timesteps=0 must be a positive integer"]


def test_non_finite_numbers_are_found_at_any_depth_of_algo() -> None:
    cfg = compose_config(*GRIDWORLD, "+algo.policy_kwargs.optimizer_kwargs.eps=nan")
    eps = "algo.policy_kwargs.optimizer_kwargs.eps"
    assert rules.non_finite_problems(cfg) == [(f"{eps}=nan is not a finite number", f"give {eps} a finite value")]
    assert rules.non_finite_problems(compose_config(*GRIDWORLD)) == []
