"""An algorithm's arguments are checked against its SB3 constructor: names and types from its signature, and what it
raises while built, named by key (rlrun/checks/constructor.py), by training and rlrun-check alike."""

from __future__ import annotations

import pytest
from omegaconf import open_dict

from rlrun.checks import constructor, env_checks
from rlrun.make import models, vec_envs
from rlrun.run import check_suite, dry_run
from tests.rlrun.helpers import compose_check, compose_config


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["+algo.learning_rat=0.1"],
            "algo.learning_rat is not an argument of PPO (did you mean learning_rate?)",
        ),
        (["+algo.seed=3"], "algo.seed is set by rlrun, not by the algo config"),
        (["algo.learning_rate=fast"], "algo.learning_rate='fast' has the wrong type for PPO"),
        (["algo.n_steps=1.5"], "algo.n_steps=1.5 has the wrong type for PPO"),
    ],
)
def test_algo_arguments_are_checked_against_the_constructor(overrides: list[str], message: str) -> None:
    cfg = compose_config(*overrides)
    problems = constructor.algo_problems(cfg, models.algo_class(cfg))
    assert len(problems) == 1 and problems[0][0].startswith(message)


def test_schedules_and_classes_are_accepted() -> None:
    cfg = compose_config("env=pointgoal", "algo=her")
    with open_dict(cfg):
        cfg.algo.learning_rate = {
            "_target_": "stable_baselines3.common.utils.LinearSchedule",
            "start": 1e-3,
            "end": 0.0,
            "end_fraction": 1.0,
        }
    assert constructor.algo_problems(cfg, models.algo_class(cfg)) == []


def test_what_the_algorithm_rejects_while_built_names_the_key() -> None:
    [(problem, fix)] = dry_run.model_problems(compose_config("algo.batch_size=1"))
    assert problem.startswith("PPO rejected its arguments (algo.batch_size=1): AssertionError: `batch_size` must be")
    assert fix.startswith("change algo.batch_size")


def test_a_bad_policy_argument_is_caught_while_building() -> None:
    cfg = compose_config("env=pointenv", "algo=sac", "algo.policy_kwargs={net_arch:[-3]}")
    [(problem, _)] = dry_run.model_problems(cfg)
    assert problem.startswith("SAC rejected its arguments") and "negative dimension" in problem


def test_what_training_refuses_fails_the_arguments_check() -> None:
    cfg = compose_check("env=gridworld", "algo=ppo", "algo.batch_size=1")
    arguments = check_suite.algo_checks(cfg, vec_envs.make_env(cfg))[0]
    assert (arguments.name, arguments.status) == ("PPO arguments", env_checks.FAIL)
    assert arguments.detail.startswith("PPO rejected its arguments (algo.batch_size=1)")


LINEAR = "{_target_:stable_baselines3.common.utils.LinearSchedule,start:0.001,end:0.0,end_fraction:1.0}"


@pytest.mark.parametrize(
    ("overrides", "messages"),
    [
        (
            ["algo.replay_buffer_kwargs.goal_selection_strategy=bogus"],
            ["algo.replay_buffer_kwargs.goal_selection_strategy=bogus is not one of future, final, episode"],
        ),
        (
            ["algo.replay_buffer_kwargs.goal_selection_strategy=3"],
            ["algo.replay_buffer_kwargs.goal_selection_strategy=3 is not one of future, final, episode"],
        ),
        (
            ["algo.replay_buffer_kwargs.n_sampled_goal=-1"],
            ["algo.replay_buffer_kwargs.n_sampled_goal=-1 must be >= 0"],
        ),
        (
            ["algo.replay_buffer_kwargs.n_sampled_goal=many"],
            ["algo.replay_buffer_kwargs.n_sampled_goal='many' has the wrong type for HerReplayBuffer"],
        ),
        (
            ["+algo.replay_buffer_kwargs.strategy=future"],
            ["algo.replay_buffer_kwargs.strategy is not an argument of HerReplayBuffer"],
        ),
        (
            [f"algo.learning_rate={LINEAR}", "algo.learning_rate.end_fraction=0"],
            ["algo.learning_rate.end_fraction=0 is out of range: it must be > 0"],
        ),
        (
            [f"algo.learning_rate={LINEAR}", "algo.learning_rate.start=fast"],
            ["algo.learning_rate.start='fast' has the wrong type for LinearSchedule"],
        ),
        (
            [f"algo.learning_rate={LINEAR}", "~algo.learning_rate.end"],
            ["algo.learning_rate has no end, which LinearSchedule needs"],
        ),
        (
            [f"algo.learning_rate={LINEAR}", "+algo.learning_rate.stop=0.1"],
            ["algo.learning_rate.stop is not an argument of LinearSchedule"],
        ),
        (
            [
                "algo.learning_rate={_target_:stable_baselines3.common.utils.FloatSchedule,value_schedule:"
                + LINEAR
                + "}"
            ],
            [],
        ),
    ],
    ids=[
        "her-strategy",
        "her-strategy-a-number",
        "her-sampled-goals-negative",
        "her-sampled-goals-text",
        "her-unknown-key",
        "schedule-end-fraction-0",
        "schedule-start-text",
        "schedule-missing-field",
        "schedule-unknown-field",
        "nested-schedule",
    ],
)
def test_nested_arguments_sb3_would_reject_name_the_key_and_what_it_takes(
    overrides: list[str], messages: list[str]
) -> None:
    cfg = compose_config("env=pointgoal", "algo=her", *overrides)
    problems = constructor.algo_problems(cfg, models.algo_class(cfg))
    assert len(problems) == len(messages), problems
    for (problem, fix), message in zip(problems, messages, strict=True):
        assert problem.startswith(message), problem
        assert "future, final, episode" in fix or "takes:" in fix or "set algo." in fix, fix


def test_training_reports_a_bogus_goal_selection_strategy_by_name() -> None:
    from rlrun.checks.preflight import algorithm_checks, config_checks
    from rlrun.config.errors import UserError

    cfg = compose_config("env=pointgoal", "algo=her", "algo.replay_buffer_kwargs.goal_selection_strategy=bogus")
    with pytest.raises(UserError) as refused:
        config_checks(cfg)
        algorithm_checks(cfg, models.model_class(cfg))
    assert "goal_selection_strategy=bogus is not one of future, final, episode" in str(refused.value)
    assert "KeyError" not in str(refused.value)
