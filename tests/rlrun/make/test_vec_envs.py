"""What rlrun/make/vec_envs.py builds from a config: env copies, wrappers, vectorised and normalised envs, the model."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from omegaconf import DictConfig, open_dict
from stable_baselines3.common.vec_env import VecNormalize

from rlrun.config.errors import UserError
from rlrun.make import models, vec_envs
from rlrun.make.nan import CheckNan
from tests.rlrun.helpers import PAIRS, compose_config, shrink


def normalised(*overrides: str) -> DictConfig:
    cfg = compose_config("env=pointenv", "algo=sac", *overrides)
    with open_dict(cfg):
        cfg.env.normalize.obs = cfg.env.normalize.reward = True
    return cfg


def test_eval_seed_is_its_own_stream() -> None:
    assert vec_envs.eval_seed(0) == vec_envs.eval_seed(0) != vec_envs.eval_seed(1)
    assert vec_envs.eval_seed(0) not in range(0, 1000)  # not any training copy's seed + i


@pytest.mark.parametrize(("env", "algo"), PAIRS, ids=[f"{e}-{a}" for e, a in PAIRS])
def test_default_policy_follows_observation_space(env: str, algo: str) -> None:
    cfg = compose_config(f"env={env}", f"algo={algo}")
    made = vec_envs.make_env(cfg)
    expected = "MultiInputPolicy" if isinstance(made.observation_space, gym.spaces.Dict) else "MlpPolicy"
    assert models.policy_for(cfg, made.observation_space) == expected


def test_image_observations_get_cnn_policy() -> None:
    image = gym.spaces.Box(0, 255, (64, 64, 3), dtype="uint8")
    assert models.default_policy(image) == "CnnPolicy"


def test_a_configured_policy_wins() -> None:
    cfg = compose_config("env=gridworld", "algo=ppo", "algo.policy=MlpPolicy")
    assert models.policy_for(cfg, gym.spaces.Dict({})) == "MlpPolicy"


def test_wrappers_apply_in_list_order_over_monitor() -> None:
    cfg = compose_config("env=gridworld", "wrappers=[relative_position,scale_reward]")
    assert list(cfg.wrappers) == ["relative_position", "scale_reward"]
    env = vec_envs.make_env(cfg)
    assert type(env).__name__ == "ScaleReward"
    assert type(env.env).__name__ == "RelativePosition"
    assert type(env.env.env).__name__ == "Monitor"  # Monitor under the user's wrappers: raw returns logged


def test_env_kwargs_and_episode_limit_reach_every_copy() -> None:
    cfg = compose_config("env=gridworld", "+env.kwargs.size=7", "env.max_episode_steps=9", "env.n_envs=2")
    single = vec_envs.make_env(cfg)
    assert single.unwrapped.size == 7 and single.spec is not None and single.spec.max_episode_steps == 9
    for venv in (
        vec_envs.make_vec(cfg, 2, seed=0),
        vec_envs.make_train_env(cfg),
        vec_envs.make_eval_env(cfg, n_envs=3),
    ):
        assert venv.get_attr("size") == [7] * venv.num_envs
        assert [spec.max_episode_steps for spec in venv.get_attr("spec")] == [9] * venv.num_envs
        venv.close()


def test_copy_i_is_seeded_seed_plus_i() -> None:
    cfg = compose_config("env=pointenv")
    venv = vec_envs.make_vec(cfg, 3, seed=10)
    observations = venv.reset()
    for i in range(3):
        alone = vec_envs.make_env(cfg)
        np.testing.assert_array_equal(observations[i], alone.reset(seed=10 + i)[0])
    venv.close()


def test_eval_copies_use_the_eval_stream() -> None:
    cfg = compose_config("env=pointenv")
    observations = vec_envs.make_eval_env(cfg, n_envs=2).reset()
    for i in range(2):
        np.testing.assert_array_equal(observations[i], vec_envs.make_env(cfg).reset(seed=vec_envs.eval_seed(0) + i)[0])


def test_train_env_checks_nan_then_normalises_with_the_algorithms_gamma() -> None:
    venv = vec_envs.make_train_env(normalised("check_nan=true", "algo.gamma=0.9"))
    assert isinstance(venv, VecNormalize) and isinstance(venv.venv, CheckNan)
    assert (venv.training, venv.norm_obs, venv.norm_reward, venv.gamma) == (True, True, True, 0.9)
    assert not isinstance(vec_envs.make_train_env(compose_config("env=pointenv")), VecNormalize)


def test_eval_env_normalises_observations_only_with_frozen_statistics() -> None:
    venv = vec_envs.make_eval_env(normalised(), n_envs=2)
    assert isinstance(venv, VecNormalize) and venv.num_envs == 2
    assert (venv.training, venv.norm_obs, venv.norm_reward) == (False, True, False)


def test_saved_statistics_are_loaded_for_training_and_frozen_for_evaluation(tmp_path: Path) -> None:
    cfg = normalised()
    trained = vec_envs.make_train_env(cfg)
    trained.reset()
    for _ in range(20):
        trained.step(np.array([trained.action_space.sample()]))
    trained.save(str(tmp_path / "vecnormalize.pkl"))
    resumed = vec_envs.make_train_env(cfg, tmp_path / "vecnormalize.pkl")
    evaluated = vec_envs.make_eval_env(cfg, normalizer=tmp_path / "vecnormalize.pkl")
    for venv in (resumed, evaluated):
        assert isinstance(venv, VecNormalize)
        np.testing.assert_array_equal(venv.obs_rms.mean, trained.obs_rms.mean)
    assert isinstance(resumed, VecNormalize) and resumed.training and resumed.norm_reward
    assert isinstance(evaluated, VecNormalize) and not evaluated.training and not evaluated.norm_reward


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["+env.kwargs.size=-3"],
            "env.id='rlrun/GridWorld-v0' rejected env.kwargs={'size': -3}: ValueError: size must",
        ),
        (["+env.kwargs.colour=red"], "rejected env.kwargs={'colour': 'red'}: TypeError:"),
        (["env=gym", "env.id=NoSuch-v0"], "cannot make env.id='NoSuch-v0'"),
        (["wrappers=[scale_reward]", "wrappers.scale_reward.scale=0"], "wrapper 'scale_reward' cannot apply to"),
        (["wrappers=[scale_reward]", "+wrappers.scale_reward.factor=2"], "wrapper 'scale_reward' cannot apply to"),
        (["env=pointenv", "wrappers=[relative_position]"], "wrapper 'relative_position' cannot apply to"),
    ],
    ids=["env-value", "env-unknown-argument", "unknown-id", "wrapper-value", "wrapper-unknown-argument", "no-fit"],
)
def test_what_an_env_or_wrapper_rejects_is_a_user_error(overrides: list[str], message: str) -> None:
    with pytest.raises(UserError) as caught:
        vec_envs.make_env(compose_config(*overrides))
    assert message in caught.value.problem and caught.value.fix


def test_an_env_that_fails_with_no_arguments_names_the_error() -> None:
    with pytest.raises(UserError, match=r"failed while being made: RuntimeError: the simulator is broken"):
        vec_envs.make_env(compose_config("env=gym", "env.id=tests.rlrun.make.test_vec_envs:rlrun-test/Broken-v0"))


class Broken(gym.Env):
    """An env whose constructor fails whatever its arguments."""

    def __init__(self) -> None:
        raise RuntimeError("the simulator is broken")


gym.register("rlrun-test/Broken-v0", entry_point=Broken)


@pytest.mark.parametrize(("algo", "her"), [("ppo", False), ("sac", False), ("her", True)])
def test_uses_her(algo: str, her: bool) -> None:
    assert models.uses_her(compose_config("env=pointgoal", f"algo={algo}")) is her


def test_model_gets_policy_seed_and_device_from_rlrun(tmp_path: Path) -> None:
    cfg = shrink(compose_config("env=gridworld", "algo=ppo", "seed=7"))
    venv = vec_envs.make_train_env(cfg)
    model = models.make_model(cfg, venv)
    assert (model.seed, str(model.device), type(model.policy).__name__) == (7, "cpu", "MultiInputActorCriticPolicy")
    assert model.n_steps == cfg.algo.n_steps and model.verbose == 0
    model.learn(64)
    model.save(tmp_path / "model.zip")
    loaded = models.load_model(cfg, tmp_path / "model.zip", venv)
    assert loaded.num_timesteps == model.num_timesteps
    venv.close()
