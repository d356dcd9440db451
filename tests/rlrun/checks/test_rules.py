"""Ranges, env/algorithm fit and budgets are checked before any heavy work, by training and by rlrun-check alike
(rlrun/checks/rules.py, applied by rlrun/checks/preflight.py); the algorithm's arguments are in test_constructor.py."""

from __future__ import annotations

import logging

import pytest
import torch
from hydra import compose, initialize_config_module
from omegaconf import open_dict

from rlrun.build import envs as build
from rlrun.checks import env as env_checks
from rlrun.checks import rules as validate
from rlrun.checks.preflight import preflight
from rlrun.cli import check
from rlrun.config.errors import UserError
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


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["algo.gamma=1.5"], "algo.gamma=1.5 is out of range: it must be in (0, 1]"),
        (["algo.gamma=0"], "algo.gamma=0 is out of range: it must be in (0, 1]"),
        (["algo.learning_rate=-0.001"], "algo.learning_rate=-0.001 is out of range: it must be > 0"),
        (["algo.batch_size=0"], "algo.batch_size=0 is out of range: it must be >= 1"),
        (["algo.gae_lambda=1.5"], "algo.gae_lambda=1.5 is out of range: it must be in [0, 1]"),
        (["algo=sac", "algo.buffer_size=0"], "algo.buffer_size=0 is out of range: it must be >= 1"),
        (["algo=sac", "algo.tau=0"], "algo.tau=0 is out of range: it must be in (0, 1]"),
        (["algo=sac", "algo.gradient_steps=0"], "algo.gradient_steps=0 is out of range: it must be -1 or >= 1"),
        (
            ["algo=dqn", "algo.exploration_fraction=2"],
            "algo.exploration_fraction=2 is out of range: it must be in [0, 1]",
        ),
    ],
    ids=lambda value: value[-1] if isinstance(value, list) else "",
)
def test_algo_values_outside_their_documented_range(overrides: list[str], message: str) -> None:
    problems = validate.range_problems(compose_config(*overrides))
    assert [p for p, _ in problems] == [message]
    assert problems[0][1].startswith(f"set e.g. {message.split('=')[0]}=")


def test_schedules_auto_and_sb3_special_values_are_in_range() -> None:
    cfg = compose_config("env=pointenv", "algo=sac", "algo.gradient_steps=-1")  # ent_coef: auto
    with open_dict(cfg):
        cfg.algo.learning_rate = {"_target_": "stable_baselines3.common.utils.ConstantSchedule", "val": 1e-3}
    assert validate.range_problems(cfg) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_without_a_gpu(device: str) -> None:
    problems = validate.range_problems(compose_config(f"device={device}"))
    assert problems == [(f"device={device} but torch finds no CUDA GPU here", "use device=cpu (or device=auto)")]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_index_beyond_the_gpus() -> None:
    assert validate.range_problems(compose_config("device=cuda:0")) == []
    [(problem, fix)] = validate.range_problems(compose_config("device=cuda:99"))
    assert "device=cuda:99 but torch finds" in problem and fix.startswith("use device=cuda:0")


def test_auto_device_needs_no_gpu() -> None:
    assert validate.range_problems(compose_config("device=auto")) == []


@pytest.mark.parametrize(("env", "algo"), [("gridworld", "sac"), ("pointenv", "dqn"), ("pointgoal", "her")])
def test_algo_fits_is_the_space_rule_as_yes_or_no(env: str, algo: str) -> None:
    cfg = compose_config(f"env={env}", f"algo={algo}")
    made, algo_cls = build.make_env(cfg), build.algo_class(cfg)
    fits = validate.algo_fits(made, algo_cls, build.uses_her(cfg))
    assert fits == (validate.space_problems(made, algo_cls, build.uses_her(cfg)) == [])
    assert fits == (algo == "her")


# One set of rules: training refuses what rlrun-check fails, and logs what rlrun-check notes as a warning.
SAME_RULES = {
    "learning-starts-past-budget": (["env=pendulum", "algo=sac", "total_timesteps=50"], "algo.learning_starts=100"),
    "batch-larger-than-rollout": (
        ["env=cartpole", "algo=ppo", "~tuned", "algo.n_steps=64", "algo.batch_size=512"],
        "algo.batch_size=512 is larger than the rollout",
    ),
    "rollout-too-small": (["algo=ppo", "~tuned", "algo.n_steps=1", "env.n_envs=1"], "rollout n_steps * env.n_envs"),
    "rejected-while-built": (["algo.batch_size=1"], "PPO rejected its arguments"),
    "unknown-argument": (["+algo.clip_rnge=0.1"], "algo.clip_rnge is not an argument of PPO"),
    "incompatible": (["env=gridworld", "algo=sac"], "SAC cannot train on rlrun/GridWorld-v0"),
    "truncated-minibatch-warns": (["env=cartpole", "algo=ppo", "algo.batch_size=100"], None),
    "rollout-past-budget-warns": (["env=gridworld", "algo=ppo", "total_timesteps=500"], None),
    "no-evaluation-warns": (["env=cartpole", "algo=a2c", "eval.every=200000"], None),
}


@pytest.mark.parametrize(("overrides", "refused"), SAME_RULES.values(), ids=SAME_RULES.keys())
def test_training_and_rlrun_check_apply_the_same_rules(
    overrides: list[str], refused: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        checked = compose("check", overrides=overrides)
    results = check.algo_checks(checked, build.make_env(checked))
    failed = [line for r in results if r.status == env_checks.FAIL for line in [r.detail, *r.notes]]
    noted = [note for r in results if r.status == env_checks.PASS for note in r.notes if not note.startswith(" ")]
    caplog.set_level(logging.WARNING, logger="rlrun")
    if refused is None:
        preflight(compose_config(*overrides))
        assert failed == [] and noted, "a warning case must warn"
        assert [m.split("\n")[0].removeprefix("warning: ") for m in caplog.messages] == noted
    else:
        with pytest.raises(UserError) as caught:
            preflight(compose_config(*overrides))
        assert refused in str(caught.value) and any(refused in line for line in failed), failed
