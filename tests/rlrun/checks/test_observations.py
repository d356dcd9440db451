"""Observations SB3 cannot take, and images too small for its CNN (issue 21, point 4): named before training, with
the wrapper or policy that fits (rlrun/checks/rules.py, rlrun/checks/preflight.py, rlrun/make/vec_envs.py)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from rlrun.checks import rules
from rlrun.make import models
from rlrun.run.training import train
from tests import forked_commands
from tests.rlrun.helpers import compose_config, shrink

ROOT = Path(__file__).resolve().parents[3]
TINY = "tests.rlrun.checks.tiny_envs"
QUICK = ["total_timesteps=64", "eval.every=64", "eval.episodes=1", "eval.final_episodes=1", "progress_bar=false"]
PPO_32 = ["algo=ppo", "algo.n_steps=32", "algo.batch_size=32"]


def rlrun(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PYTHONPATH": str(ROOT)}  # ROOT: tests.rlrun.checks.tiny_envs
    return forked_commands.run(["-m", module, *args], cwd=cwd, env=env, timeout=300)


@pytest.mark.parametrize("module", ["rlrun", "rlrun.cli.check"])
def test_raw_minigrid_names_the_mission_and_the_wrappers(module: str, tmp_path: Path) -> None:
    # Before: training ended in DummyVecEnv with `TypeError: 'NoneType' object is not iterable`, exit 1.
    result = rlrun(module, ["env=gym", "env.id=MiniGrid-Empty-5x5-v0", *PPO_32, *QUICK], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "observation['mission'] is a MissionSpace space of text" in result.stderr
    assert "wrappers=[minigrid_image]" in result.stderr and "wrappers=[minigrid_flat]" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "outputs").exists()


def test_a_text_subspace_is_named_with_a_wrapper_that_drops_it(tmp_path: Path) -> None:
    result = rlrun("rlrun", ["env=gym", f"env.id={TINY}:obs/Note-v0", *PPO_32, *QUICK], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "SB3 cannot take the observations of" in result.stderr
    assert "observation['note'] is a Text space of text" in result.stderr
    assert "gymnasium.wrappers.FilterObservation" in result.stderr and "filter_keys: [position]" in result.stderr


def test_a_text_subspace_is_named_when_subprocess_copies_vectorise_it(tmp_path: Path) -> None:
    # SubprocVecEnv takes the Text space; the evaluation copies (in-process) are where vectorising fails.
    args = ["env=gym", f"env.id={TINY}:obs/Note-v0", "env.vec_env=subproc", "env.n_envs=1", *PPO_32, *QUICK]
    result = rlrun("rlrun", args, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "observation['note'] is a Text space" in result.stderr


@pytest.mark.parametrize(
    ("space", "named", "fix"),
    [
        (spaces.Sequence(spaces.Discrete(3)), "observation is a Sequence space", "observation wrapper of your own"),
        (
            spaces.Dict({"graph": spaces.Graph(spaces.Box(0, 1, (2,)), None), "x": spaces.Discrete(2)}),
            "observation['graph'] is a Graph space",
            "filter_keys: [x]",
        ),
        (
            spaces.Dict({"inner": spaces.Dict({"a": spaces.Discrete(2)}), "x": spaces.Discrete(2)}),
            "observation['inner'] is a Dict inside the Dict",
            "wrappers=[flatten]",
        ),
    ],
    ids=["sequence", "graph-key", "nested-dict"],
)
def test_observation_problems_name_the_key_path(space: spaces.Space, named: str, fix: str) -> None:
    [(problem, how)] = rules.observation_problems("my/Env-v0", space)
    assert named in problem and fix in how


def test_spaces_sb3_takes_are_no_problem() -> None:
    space = spaces.Dict({"image": spaces.Box(0, 255, (7, 7, 3), np.uint8), "direction": spaces.Discrete(4)})
    assert rules.observation_problems("my/Env-v0", space) == []


@pytest.mark.parametrize(
    ("shape", "policy"),
    [((7, 7, 3), "MlpPolicy"), ((3, 7, 7), "MlpPolicy"), ((35, 40, 3), "MlpPolicy"), ((36, 36, 1), "CnnPolicy")],
)
def test_the_automatic_policy_reads_small_images_with_an_mlp(shape: tuple[int, ...], policy: str) -> None:
    assert models.default_policy(spaces.Box(0, 255, shape, np.uint8)) == policy


def test_a_small_image_env_trains_with_mlppolicy_and_a_note(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Before: CnnPolicy was chosen and SB3's NatureCNN failed on the kernel size.
    cfg = shrink(compose_config("env=gym", f"env.id={TINY}:obs/TinyImage-v0", *PPO_32), steps=64)
    caplog.set_level(logging.INFO, logger="rlrun")
    train(cfg, tmp_path / "run")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["policy"] == "MlpPolicy"
    note = "note: the 7x7x3 image observations of tests.rlrun.checks.tiny_envs:obs/TinyImage-v0 are smaller than"
    assert [m for m in caplog.messages if m.startswith(note) and m.endswith("MlpPolicy chosen")]


def test_cnnpolicy_on_a_small_image_exits_2_naming_mlppolicy(tmp_path: Path) -> None:
    args = ["env=gym", f"env.id={TINY}:obs/TinyImage-v0", *PPO_32, "algo.policy=CnnPolicy", *QUICK]
    result = rlrun("rlrun", args, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "algo.policy=CnnPolicy cannot read the 7x7x3 images" in result.stderr
    assert "fix: use algo.policy=MlpPolicy" in result.stderr and "Traceback" not in result.stderr
