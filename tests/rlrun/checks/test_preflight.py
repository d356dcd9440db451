"""Every run checks its config, then its env and model, before heavy work (rlrun/checks/preflight.py): the rules of
rlrun/checks/rules.py and constructor.py applied in the order of the data's flow, the same rules rlrun-check applies."""

from __future__ import annotations

import logging

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from rlrun.checks import env_checks
from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.run import check_suite
from rlrun.run.dry_run import preflight
from tests.rlrun.helpers import compose_config


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


@pytest.mark.parametrize("n_envs", [1, 2])
def test_her_learning_starts_boundary_is_sb3s(n_envs: int) -> None:
    """The least learning_starts accepted trains (SB3 samples HER goals only after each copy's first 50-step
    episode), and one less is refused; plain SB3 with one less fails, so the rule is not stricter than SB3."""
    from stable_baselines3.common.env_util import make_vec_env

    least = 49 * n_envs
    overrides = ["env=pointgoal", "algo=her", f"env.n_envs={n_envs}", "algo.batch_size=8"]
    with pytest.raises(UserError, match=f"set algo.learning_starts={least} or more"):
        preflight(compose_config(*overrides, f"algo.learning_starts={least - 1}"))
    cfg = compose_config(*overrides, f"algo.learning_starts={least}", "+algo.policy_kwargs.net_arch=[8]")
    preflight(cfg)
    for learning_starts, fails in ((least, False), (least - n_envs, True)):
        model = models.make_model(OmegaConf.merge(cfg, {"algo": {"learning_starts": learning_starts}}),
                                 make_vec_env("rlrun/PointGoal-v0", n_envs=n_envs, seed=0))  # fmt: skip
        if fails:
            with pytest.raises(Exception):  # noqa: B017  (SB3's HER buffer fails with no finished episode)
                model.learn(least + 2 * n_envs)
        else:
            model.learn(least + 2 * n_envs)


def test_frame_stack_must_be_positive() -> None:
    with pytest.raises(UserError, match="env.frame_stack=0 must be positive"):
        preflight(compose_config("env=cartpole", "algo=ppo", "env.frame_stack=0"))
    preflight(compose_config("env=cartpole", "algo=ppo", "env.frame_stack=2"))


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


# One set of rules: training refuses what rlrun-check fails, and logs what rlrun-check notes as a warning.
SAME_RULES = {
    "learning-starts-past-budget": (["env=pendulum", "algo=sac", "total_timesteps=50"], "algo.learning_starts=100"),
    "batch-larger-than-rollout": (
        ["env=cartpole", "algo=ppo", "~tuned", "algo.n_steps=64", "algo.batch_size=512"],
        "algo.batch_size=512 is larger than the rollout",
    ),
    "rollout-too-small": (
        ["algo=ppo", "~tuned", "algo.n_steps=1", "env.n_envs=1"],
        "rollout n_steps * env.n_envs",
    ),
    "rejected-while-built": (["algo.batch_size=1"], "PPO rejected its arguments"),
    "unknown-argument": (["+algo.clip_rnge=0.1"], "algo.clip_rnge is not an argument of PPO"),
    "incompatible": (["env=gridworld", "algo=sac"], "SAC cannot train on rlrun/GridWorld-v0"),
    "truncated-minibatch-warns": (["env=cartpole", "algo=ppo", "algo.batch_size=100"], None),
    "rollout-past-budget-warns": (["env=gridworld", "algo=ppo", "total_timesteps=500"], None),
    "no-evaluation-warns": (["env=cartpole", "algo=a2c", "eval.every=200000", "~tuned"], None),  # 100k steps
}


@pytest.mark.parametrize(("overrides", "refused"), SAME_RULES.values(), ids=SAME_RULES.keys())
def test_training_and_rlrun_check_apply_the_same_rules(
    overrides: list[str], refused: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with initialize_config_module("rlrun.conf", version_base="1.3"):
        checked = compose("check", overrides=overrides)
    results = check_suite.algo_checks(checked, vec_envs.make_env(checked))
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
