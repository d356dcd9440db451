"""An algorithm's arguments are checked against its SB3 constructor: names and types from its signature, and what it
raises while built, named by key (rlrun/checks/constructor.py), by training and rlrun-check alike."""

from __future__ import annotations

import pytest
from omegaconf import open_dict

from rlrun.build import envs as build
from rlrun.checks import constructor as constructor_checks
from rlrun.checks import env as env_checks
from rlrun.cli import check
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
    problems = constructor_checks.algo_problems(cfg, build.algo_class(cfg))
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
    assert constructor_checks.algo_problems(cfg, build.algo_class(cfg)) == []


def test_what_the_algorithm_rejects_while_built_names_the_key() -> None:
    [(problem, fix)] = constructor_checks.construction_problems(compose_config("algo.batch_size=1"))
    assert problem.startswith("PPO rejected its arguments (algo.batch_size=1): AssertionError: `batch_size` must be")
    assert fix.startswith("change algo.batch_size")


def test_a_bad_policy_argument_is_caught_while_building() -> None:
    cfg = compose_config("env=pointenv", "algo=sac", "algo.policy_kwargs={net_arch:[-3]}")
    [(problem, _)] = constructor_checks.construction_problems(cfg)
    assert problem.startswith("SAC rejected its arguments") and "negative dimension" in problem


def test_what_training_refuses_fails_the_arguments_check() -> None:
    cfg = compose_check("env=gridworld", "algo=ppo", "algo.batch_size=1")
    arguments = check.algo_checks(cfg, build.make_env(cfg))[0]
    assert (arguments.name, arguments.status) == ("PPO arguments", env_checks.FAIL)
    assert arguments.detail.startswith("PPO rejected its arguments (algo.batch_size=1)")
