"""Ranges, algorithm arguments and env/algorithm fit are checked before any heavy work."""

from __future__ import annotations

import pytest
from omegaconf import open_dict

from rlrun import build, constructor_checks, validate
from rlrun.errors import UserError
from rlrun.train import preflight
from tests.rlrun.helpers import compose_config


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("total_timesteps=0", "total_timesteps=0 must be a positive integer"),
        ("total_timesteps=-5", "total_timesteps=-5 must be a positive integer"),
        ("eval.episodes=0", "eval.episodes=0 must be a positive integer"),
        ("env.n_envs=0", "env.n_envs=0 must be a positive integer"),
        ("torch_threads=0", "torch_threads=0 must be a positive integer"),
        ("seed=-1", "seed=-1 must be >= 0"),
        ("device=gpu", "device=gpu is not one of cpu, cuda, auto"),
        ("env.vec_env=threads", "env.vec_env=threads is not one of dummy, subproc"),
        ("snapshot.replay_buffer=some", "snapshot.replay_buffer=some is not one of latest, all, none"),
        ("progress_bar=maybe", "progress_bar=maybe is not one of auto, true, false"),
    ],
)
def test_out_of_range_values(override: str, message: str) -> None:
    problems = validate.range_problems(compose_config(override))
    assert [p for p, _ in problems] == [message]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(UserError) as caught:
        validate.raise_if(validate.range_problems(compose_config("total_timesteps=0", "eval.episodes=0")))
    assert "2 problems" in str(caught.value) and str(caught.value).count("fix:") == 2


def test_gym_blank_without_id() -> None:
    problems = validate.range_problems(compose_config("env=gym"))
    assert problems[0][0] == "env.id is not set" and "env.id=" in problems[0][1]


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


@pytest.mark.parametrize(
    ("env", "algo", "message"),
    [
        ("gridworld", "sac", "SAC cannot train on rlrun/GridWorld-v0: it needs Box actions"),
        ("roomtoy", "td3", "TD3 cannot train on rlrun/RoomToy-v0"),
        ("pendulum", "dqn", "DQN cannot train on Pendulum-v1: it needs Discrete actions"),
        ("pointenv", "her", "HER needs a goal env"),
        ("cartpole", "her", "SAC cannot train on CartPole-v1"),
    ],
)
def test_incompatible_pairs(env: str, algo: str, message: str) -> None:
    with pytest.raises(UserError, match="fix:") as caught:
        preflight(compose_config(f"env={env}", f"algo={algo}"))
    assert message in str(caught.value)


def test_her_learning_starts_within_first_episode() -> None:
    with pytest.raises(UserError, match="HER cannot sample goals before an episode has ended"):
        preflight(compose_config("env=pointgoal", "algo=her", "algo.learning_starts=10"))


def test_fix_names_algorithms_that_fit() -> None:
    with pytest.raises(UserError) as caught:
        preflight(compose_config("env=gridworld", "algo=sac"))
    assert "algo=ppo" in str(caught.value) and "algo=dqn" in str(caught.value)


def test_wrapper_that_cannot_apply() -> None:
    with pytest.raises(UserError, match="wrapper 'relative_position' cannot apply to rlrun/PointEnv-v0"):
        preflight(compose_config("env=pointenv", "algo=sac", "wrappers=[relative_position]"))


def test_ppo_batch_larger_than_rollout() -> None:
    with pytest.raises(UserError, match="algo.batch_size=512 is larger than the rollout"):
        preflight(compose_config("env=cartpole", "algo=ppo", "~tuned", "algo.n_steps=64", "algo.batch_size=512"))


def test_dict_observation_with_mlp_policy() -> None:
    with pytest.raises(UserError, match="cannot read the Dict observations"):
        preflight(compose_config("env=gridworld", "algo=ppo", "algo.policy=MlpPolicy"))


def test_flatten_makes_mlp_policy_fit() -> None:
    assert preflight(compose_config("env=gridworld", "algo=ppo", "wrappers=[flatten]")) == "MlpPolicy"


def test_unknown_gym_id_is_a_user_error() -> None:
    with pytest.raises(UserError, match="CartPole-v9"):
        preflight(compose_config("env=gym", "env.id=CartPole-v9"))
