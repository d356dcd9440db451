"""Every option of every config group composes and instantiates (what vec_envs.py makes of them: test_build.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from rlrun.make import models, vec_envs
from tests.rlrun.helpers import compose_config

CONF = Path(vec_envs.__file__).resolve().parent / "conf"
if not CONF.is_dir():  # editable install: conf/ sits at the top of the repository
    CONF = Path(__file__).resolve().parents[3] / "conf"


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


# Each wrapper with an env it applies to.
WRAPPER_ENVS = {
    "relative_position": "gridworld",
    "flatten": "gridworld",
    "clip_action": "pointenv",
    "rescale_action": "pendulum",
    "frame_stack": "cartpole",
    "scale_reward": "roomtoy",
}
# The env families' wrappers, applied by their env configs (tests/rlrun/test_env_configs.py).
FAMILY_WRAPPERS = {"minigrid_image", "minigrid_flat", "atari"}
# Env configs that take any id of theirs (env.id=??? in the file).
ANY_ID = {"gym", "mujoco", "robotics", "minigrid", "atari", "box2d"}


def test_every_group_has_its_options() -> None:
    assert {"pointenv", "gridworld", "pointgoal", "roomtoy", "cartpole", "pendulum", "gym"} <= set(options("env"))
    assert {"ppo", "sac", "her", "dqn", "td3", "a2c"} <= set(options("algo"))
    assert {"tqc", "crossq", "trpo", "qrdqn", "ars", "recurrent_ppo", "her_tqc"} <= set(options("algo"))  # sb3-contrib
    assert set(WRAPPER_ENVS) | FAMILY_WRAPPERS == set(options("wrappers"))


@pytest.mark.parametrize("env", [e for e in options("env") if e not in ANY_ID])
def test_env_option_builds(env: str) -> None:
    cfg = compose_config(f"env={env}")
    made = vec_envs.make_env(cfg)
    made.reset(seed=0)
    assert made.spec is not None and made.spec.id.endswith(cfg.env.id.split(":")[-1])
    made.close()


def test_gym_blank_takes_any_id() -> None:
    cfg = compose_config("env=gym", "env.id=Acrobot-v1", "algo=ppo")
    assert vec_envs.make_env(cfg).unwrapped.spec.id == "Acrobot-v1"


@pytest.mark.parametrize("algo", options("algo"))
def test_algo_option_resolves_to_an_sb3_class(algo: str) -> None:
    cfg = compose_config("env=pointgoal", f"algo={algo}")
    assert models.algo_class(cfg).__module__.startswith(("stable_baselines3", "sb3_contrib"))
    assert cfg.algo.policy is None  # chosen from the observation space unless set


@pytest.mark.parametrize("wrapper", sorted(WRAPPER_ENVS))
def test_wrapper_option_applies(wrapper: str) -> None:
    cfg = compose_config(f"env={WRAPPER_ENVS[wrapper]}", f"wrappers=[{wrapper}]")
    env = vec_envs.make_env(cfg)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env.observation_space.contains(env.reset(seed=1)[0])


@pytest.mark.parametrize("preset", options("tuned"))
def test_every_preset_composes_with_its_pair(preset: str) -> None:
    # <env>_<algo>, where both names may hold underscores (mountaincar_continuous_her_tqc)
    pairs = [(e, preset[len(e) + 1 :]) for e in options("env") if preset.startswith(f"{e}_")]
    env, algo = next((e, a) for e, a in pairs if a in options("algo"))
    cfg = compose_config(f"env={env}", f"algo={algo}")
    plain = compose_config(f"env={env}", f"algo={algo}", "~tuned")
    assert OmegaConf.to_container(cfg) != OmegaConf.to_container(plain)


def test_preset_is_applied_and_command_line_wins() -> None:
    assert compose_config("env=gridworld", "algo=ppo").total_timesteps == 20000
    assert compose_config("env=gridworld", "algo=ppo", "total_timesteps=77").total_timesteps == 77
    assert compose_config("env=gridworld", "algo=ppo", "~tuned").algo.n_steps == 2048  # SB3's default


@pytest.mark.parametrize("override", ["env=nosuchenv", "algo=nosuchalgo", "wrappers=[nosuchwrapper]"])
def test_unknown_option_is_hydras_error(override: str) -> None:
    with pytest.raises(ConfigCompositionException):
        compose_config(override)


@pytest.mark.parametrize("override", ["seed=abc", "total_timesteps=1.5", "env.n_envs=two", "misspelt=1"])
def test_schema_rejects_wrong_types_and_unknown_keys(override: str) -> None:
    with pytest.raises(ConfigCompositionException):
        compose_config(override)


# RL Zoo's published hyperparameters (rl_zoo3 hyperparams/*.yml) that the Zoo benchmark gives rlrun.
ZOO = {
    "cartpole_ppo": {
        "total_timesteps": 100_000,
        "env.n_envs": 8,
        "algo.n_steps": 32,
        "algo.batch_size": 256,
        "algo.gamma": 0.98,
        "algo.gae_lambda": 0.8,
        "algo.n_epochs": 20,
        "algo.learning_rate.start": 0.001,
        "algo.clip_range.start": 0.2,
    },
    "pendulum_sac": {"total_timesteps": 20_000, "algo.learning_rate": 0.001, "algo.policy_kwargs": None},
}


@pytest.mark.parametrize("pair", sorted(ZOO))
def test_the_zoo_benchmark_trains_with_the_zoos_hyperparameters_not_the_preset(pair: str) -> None:
    from benchmarks.common import zoo_config

    assert options("benchmark/zoo") == sorted(ZOO)
    cfg = compose_config(*zoo_config(*pair.split("_")))
    assert {key: OmegaConf.select(cfg, key) for key in ZOO[pair]} == ZOO[pair]
