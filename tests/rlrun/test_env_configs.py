"""The standard env configs (conf/env) and the family configs: each composes, builds with what its family needs
(extra, wrappers, frame stack) and trains a few hundred steps; a missing extra is a user error naming the
``pip install``; the README's Environments table says what the files say."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from minigrid.wrappers import FlatObsWrapper
from omegaconf import DictConfig, OmegaConf
from rlrun.envs.wrappers import ScaleReward
from stable_baselines3.common.atari_wrappers import AtariWrapper
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecFrameStack

from rlrun.config.errors import UserError
from rlrun.make import families, models, native, vec_envs
from tests import forked_commands
from tests.rlrun.helpers import compose_check, compose_config, shrink

ROOT = Path(__file__).resolve().parents[2]
CONF_ENV = ROOT / "conf" / "env"

# Each standard env config with an algorithm that fits it (off-policy ones kept few: SAC runs ~40 steps/s here).
TRAINS_WITH = {
    "acrobot": "ppo",
    "mountaincar": "dqn",
    "mountaincar_continuous": "td3",
    "lunarlander": "ppo",
    "lunarlander_continuous": "sac",
    "bipedalwalker": "ppo",
    "halfcheetah": "sac",
    "hopper": "td3",
    "walker2d": "ppo",
    "ant": "ppo",
    "humanoid": "ppo",
    "swimmer": "ppo",
    "invertedpendulum": "sac",
    "inverteddoublependulum": "ppo",
    "reacher": "ppo",
    "fetchreach": "her",
    "fetchpush": "her",
    "fetchslide": "her",
    "fetchpickandplace": "her",
    "pong": "ppo",
    "breakout": "ppo",
    "minigrid_empty_5x5": "ppo",
    "minigrid_empty_random_5x5": "ppo",
    "minigrid_doorkey_5x5": "ppo",
    "minigrid_fourrooms": "ppo",
    "minigrid_multiroom_n4_s5": "ppo",
    "minigrid_fetch_5x5_n2": "ppo",
    "minigrid_gotodoor_5x5": "ppo",
    "minigrid_putnear_6x6_n2": "ppo",
    "minigrid_redbluedoors_6x6": "ppo",
    "minigrid_lockedroom": "ppo",
    "minigrid_keycorridor_s3r1": "ppo",
    "minigrid_unlock": "ppo",
    "minigrid_obstructedmaze_2dlh": "ppo",
}
# The family configs, each with another id of its family than the named configs use.
FAMILY_IDS = {
    "mujoco": ("Pusher-v5", "sac"),
    "robotics": ("FetchReach-v4", "her"),  # no module prefix: the family imports gymnasium_robotics
    "minigrid": ("MiniGrid-DoorKey-8x8-v0", "ppo"),
    "atari": ("ALE/SpaceInvaders-v5", "ppo"),
    "box2d": ("BipedalWalkerHardcore-v3", "ppo"),
}
RLRUN_OWN = {"gridworld", "pointenv", "pointgoal", "roomtoy", "cartpole", "pendulum", "gym"}
STEPS = 128  # on-policy: 4 rollouts of 32 steps; off-policy: 100 random steps, then 28 updates


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread, as every run sets (torch_threads=1): two threads on two busy cores run far slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def env_files() -> dict[str, DictConfig]:
    """Every ``conf/env`` file, by option name."""
    return {path.stem: OmegaConf.load(path) for path in sorted(CONF_ENV.glob("*.yaml"))}


def tiny(*overrides: str, steps: int = STEPS) -> DictConfig:
    """A composed config without presets, shrunk to ``steps`` steps and nets of 16 units; PPO makes one pass
    over each rollout."""
    cfg = shrink(compose_config(*overrides, "~tuned"), steps)
    if "n_epochs" in cfg.algo:
        cfg.algo.n_epochs = 1
    return cfg


def learn(cfg: DictConfig) -> None:
    """Build the training envs and the model exactly as a run does, and train for ``total_timesteps``."""
    venv = vec_envs.make_train_env(cfg)
    try:
        models.make_model(cfg, venv).learn(cfg.total_timesteps)
    finally:
        venv.close()


def test_every_env_config_is_tested_here() -> None:
    assert set(env_files()) == set(TRAINS_WITH) | set(FAMILY_IDS) | RLRUN_OWN


@pytest.mark.parametrize("env", sorted(TRAINS_WITH))
def test_standard_env_config_trains(env: str) -> None:
    cfg = tiny(f"env={env}", f"algo={TRAINS_WITH[env]}")
    assert cfg.env.extra is None or cfg.env.extra in families.FAMILIES
    learn(cfg)


@pytest.mark.parametrize("env", sorted(TRAINS_WITH))
def test_standard_env_config_passes_rlrun_check_headless(env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """rlrun-check's checks, in process, with no display: none fails (the raw env's own problems and what
    cannot render here are information), whatever the family."""
    from rlrun.checks.env_checks import FAIL
    from rlrun.run.check_suite import run_checks

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    results = run_checks(compose_check(f"env={env}", f"algo={TRAINS_WITH[env]}", "steps=20"), with_algo=True)
    assert [(r.name, r.detail) for r in results if r.status == FAIL] == []
    assert len(results) >= 5  # the checkers, render modes, determinism, pickling, algorithm, rollout ran


@pytest.mark.parametrize("family", sorted(FAMILY_IDS))
def test_family_config_takes_another_id(family: str) -> None:
    env_id, algo = FAMILY_IDS[family]
    cfg = tiny(f"env={family}", f"env.id={env_id}", f"algo={algo}")
    assert cfg.env.extra == family
    probe = vec_envs.make_env(cfg)
    assert probe.unwrapped.spec is not None and probe.unwrapped.spec.id == env_id
    probe.close()
    learn(cfg)


def test_family_config_requires_an_id() -> None:
    cfg = compose_config("env=mujoco")
    assert OmegaConf.is_missing(cfg.env, "id")


def test_minigrid_trains_on_flat_observations() -> None:
    env = vec_envs.make_env(tiny("env=minigrid_doorkey_5x5"))
    assert isinstance(env.observation_space, gym.spaces.Box) and env.observation_space.shape == (2835,)
    assert models.default_policy(env.observation_space) == "MlpPolicy"
    env.close()


def atari_layers(env: gym.Env) -> list[type]:
    """The wrapper classes of an env copy, outermost first."""
    layers = []
    while isinstance(env, gym.Wrapper):
        layers.append(type(env))
        env = env.env
    return layers


@pytest.mark.parametrize("overrides", [["env=pong"], ["env=atari", "env.id=ALE/Breakout-v5"]], ids=["pong", "v5"])
def test_atari_stacks_four_preprocessed_frames_over_monitor(overrides: list[str]) -> None:
    cfg = tiny(*overrides, "algo=ppo")
    env = vec_envs.make_env(cfg)
    layers = atari_layers(env)
    assert layers.index(AtariWrapper) < layers.index(Monitor)  # Monitor under the preprocessing: raw scores
    made_with = env.unwrapped.spec.kwargs  # the registration's arguments with env.kwargs over them
    assert made_with["frameskip"] == 1 and made_with["repeat_action_probability"] == 0  # AtariWrapper skips
    env.close()
    venv = vec_envs.make_eval_env(cfg)
    assert isinstance(venv, VecFrameStack) and venv.observation_space.shape == (84, 84, 4)
    assert venv.reset().shape == (1, 84, 84, 4)
    venv.close()


def test_family_wrappers_sit_between_monitor_and_the_users_wrappers() -> None:
    env = vec_envs.make_env(tiny("env=minigrid_empty_5x5", "wrappers=[scale_reward]"))
    layers = atari_layers(env)
    assert layers.index(ScaleReward) < layers.index(FlatObsWrapper) < layers.index(Monitor)
    env.close()


def test_native_vectorization_refuses_the_family_keys() -> None:
    cfg = tiny("env=pong", "env.vectorization=native")
    with pytest.raises(UserError, match="env.wrappers .* has no batched version"):
        vec_envs.make_train_env(cfg)
    assert any("env.frame_stack" in problem for problem, _ in native.problems(cfg))


def test_atari_evaluation_reports_the_unclipped_score() -> None:
    """In Space Invaders an alien is worth 5 to 30 points: the agent sees rewards clipped to 1, while the episode
    return that evaluation reads (Monitor's ``info["episode"]``, under AtariWrapper) is the game's score."""
    venv = vec_envs.make_eval_env(tiny("env=atari", "env.id=ALE/SpaceInvaders-v5"), seed=0)
    rng = np.random.default_rng(0)
    clipped = 0.0
    venv.reset()
    for _ in range(20_000):
        _, rewards, _, infos = venv.step(rng.integers(venv.action_space.n, size=1))
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        clipped += float(rewards[0])
        if "episode" in infos[0]:  # the game's end, not a lost life
            score = infos[0]["episode"]["r"]
            break
    venv.close()
    assert clipped > 0 and score >= 5 * clipped


def test_missing_extra_is_a_user_error_before_the_env_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = compose_config("env=halfcheetah")
    monkeypatch.setitem(families.FAMILIES, "mujoco", families.Family("mujoco", ("no_such_mujoco",), None, "test"))
    with pytest.raises(UserError, match=re.escape(families.install_command("mujoco"))) as error:
        vec_envs.make_env(cfg)
    assert "missing: no_such_mujoco" in str(error.value)


HIDE = """\
import os, sys

HIDDEN = set(os.environ["RLRUN_TEST_HIDE"].split(","))


class Hide:
    \"\"\"Imports of the hidden packages fail as if they were not installed.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""


@pytest.mark.parametrize(
    ("hidden", "overrides", "extra"),
    [
        ("mujoco", ["env=halfcheetah", "algo=sac", "algo.learning_starts=10"], "mujoco"),
        ("minigrid", ["env=minigrid_doorkey_5x5"], "minigrid"),
        ("ray", ["-m", "hydra/launcher=ray", "seed=0,1"], "ray"),
        ("submitit", ["-m", "hydra/launcher=slurm", "seed=0,1"], "slurm"),
    ],
    ids=["mujoco", "minigrid", "ray", "slurm"],
)
def test_missing_extra_exits_2_with_the_install_command(
    tmp_path: Path, hidden: str, overrides: list[str], extra: str
) -> None:
    """A real ``rlrun`` process in which the extra's package cannot be imported (a meta-path finder hides it)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(HIDE)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(shim), "RLRUN_TEST_HIDE": hidden}
    result = forked_commands.run(
        ["-m", "rlrun", *overrides, "total_timesteps=64", "progress_bar=false"], cwd=work, env=env, timeout=120
    )
    assert result.returncode == 2, result.stderr
    assert families.install_command(extra) in result.stderr and "Traceback" not in result.stderr
    assert list(work.iterdir()) == []  # nothing created: no run or sweep folder


def readme_rows() -> dict[str, list[str]]:
    """docs/envs.md's table of env configs, by config name: the cells of each row."""
    text = (ROOT / "docs" / "envs.md").read_text()
    section = text.split("## Env configs and their extras", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 6:
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_env_page_table_matches_the_env_configs() -> None:
    rows = readme_rows()
    files = env_files()
    assert set(rows) == set(files)
    for name, node in files.items():
        config, env_id, _family, extra, _adds, threshold = rows[name][:6]
        expected_id = "any (`env.id=...`)" if OmegaConf.is_missing(node, "id") else f"`{node.id}`"
        assert env_id == expected_id, name
        assert extra == ("–" if node.get("extra") is None else f"`{node.extra}`"), name
        if node.get("threshold") is not None:
            assert threshold.startswith(f"{node.threshold:g}"), name


def test_the_env_page_names_the_install_command_of_every_family() -> None:
    section = (
        (ROOT / "docs" / "envs.md").read_text().split("## Env configs and their extras", 1)[1].split("\n## ", 1)[0]
    )
    assert 'pip install -e ".[envs]"' in section and '"rlrun[envs]"' in section
    assert all(f'"rlrun[{extra}]"' in section for extra in families.FAMILIES)
