"""``rlrun-envs``: the listing of envs, their spaces and the algorithms that fit them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.envs.registration import register

from rlrun.checks import env_listing
from rlrun.cli import envs

# rlrun's algorithms (conf/algo, SB3's and sb3-contrib's) that fit each kind of env
DISCRETE_ALGOS = ["a2c", "ars", "dqn", "ppo", "qrdqn", "recurrent_ppo", "trpo"]
BOX_ALGOS = ["a2c", "ars", "crossq", "ppo", "recurrent_ppo", "sac", "td3", "tqc", "trpo"]
GOAL_ALGOS = ["a2c", "ars", "crossq", "her", "her_tqc", "ppo", "recurrent_ppo", "sac", "td3", "tqc", "trpo"]
RLRUN_IDS = {"rlrun/GridWorld-v0", "rlrun/PointEnv-v0", "rlrun/PointGoal-v0", "rlrun/RoomToy-v0"}
MISSING_DEPENDENCY_ID = "rlrun_test/NeedsBox2D-v0"


def needs_box2d() -> gym.Env:
    raise gym.error.DependencyNotInstalled(  # Gymnasium's own message
        "Box2D is not installed, you can install it by run `pip install swig` followed by "
        '`pip install "gymnasium[box2d]"`'
    )


@pytest.fixture
def env_missing_a_dependency() -> Iterator[str]:
    """A registered env whose constructor fails like Gymnasium's box2d envs do without Box2D."""
    register(id=MISSING_DEPENDENCY_ID, entry_point=needs_box2d)
    yield MISSING_DEPENDENCY_ID
    del gym.registry[MISSING_DEPENDENCY_ID]


def by_id(infos: list[env_listing.EnvInfo]) -> dict[str, env_listing.EnvInfo]:
    return {info.id: info for info in infos}


@pytest.fixture(scope="module")
def rlrun_envs() -> dict[str, env_listing.EnvInfo]:
    return by_id(env_listing.list_envs())


def test_lists_exactly_the_rlrun_envs(rlrun_envs: dict[str, env_listing.EnvInfo]) -> None:
    assert set(rlrun_envs) == RLRUN_IDS


@pytest.mark.parametrize(
    ("env_id", "config", "action", "algorithms", "goal"),
    [
        ("rlrun/GridWorld-v0", "gridworld", "Discrete(4)", DISCRETE_ALGOS, False),
        ("rlrun/RoomToy-v0", "roomtoy", "Discrete(4)", DISCRETE_ALGOS, False),
        (
            "rlrun/PointEnv-v0",
            "pointenv",
            "Box(-1.0, 1.0, (2,), float32)",
            BOX_ALGOS,
            False,
        ),
        (
            "rlrun/PointGoal-v0",
            "pointgoal",
            "Box(-1.0, 1.0, (2,), float32)",
            GOAL_ALGOS,
            True,
        ),
    ],
    ids=["gridworld", "roomtoy", "pointenv", "pointgoal"],
)
def test_each_rlrun_env_is_described(
    rlrun_envs: dict[str, env_listing.EnvInfo],
    env_id: str,
    config: str,
    action: str,
    algorithms: list[str],
    goal: bool,
) -> None:
    info = rlrun_envs[env_id]
    assert (info.config, info.action_space, info.algorithms, info.goal_env) == (
        config,
        action,
        algorithms,
        goal,
    )
    assert info.unavailable is None and info.entry_point.startswith("rlrun.envs.")
    assert info.max_episode_steps == gym.spec(env_id).max_episode_steps


def test_spaces_and_limits_come_from_the_registration(rlrun_envs: dict[str, env_listing.EnvInfo]) -> None:
    gridworld = rlrun_envs["rlrun/GridWorld-v0"]
    assert gridworld.observation_space.startswith("Dict(") and "'agent'" in gridworld.observation_space
    assert (gridworld.max_episode_steps, gridworld.reward_threshold) == (50, 0.9)
    assert "sac" not in gridworld.algorithms and "her" not in rlrun_envs["rlrun/PointEnv-v0"].algorithms


def test_all_adds_gymnasium_envs_with_their_config(env_missing_a_dependency: str) -> None:
    infos = by_id(env_listing.list_envs(all_envs=True))
    assert set(infos) > RLRUN_IDS and len(infos) == len(gym.registry)
    cartpole = infos["CartPole-v1"]
    assert cartpole.config == "cartpole" and cartpole.algorithms == DISCRETE_ALGOS
    assert infos["Acrobot-v1"].config == "acrobot" and infos["FrozenLake-v1"].config == "gym env.id=FrozenLake-v1"
    assert infos["Pusher-v5"].config == "mujoco env.id=Pusher-v5" and infos["Pusher-v5"].algorithms
    missing = infos[env_missing_a_dependency]
    assert missing.observation_space is None and missing.algorithms is None
    assert missing.unavailable == 'needs `pip install "gymnasium[box2d]"`'


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (gym.error.DependencyNotInstalled('MuJoCo is not installed, run `pip install "gymnasium[mujoco]"`'),
         'needs `pip install "gymnasium[mujoco]"`'),
        (ModuleNotFoundError("No module named 'jax'", name="jax"), "needs `pip install jax`"),
        (ImportError("The env moved elsewhere. See its page."), "cannot be made: The env moved elsewhere."),
    ],
    ids=["extra", "module", "other"],
)  # fmt: skip
def test_unavailable_reason_names_the_install(error: Exception, reason: str) -> None:
    assert env_listing.unavailable_reason(error) == reason


def test_human_listing_fits_100_columns(capsys: pytest.CaptureFixture[str], env_missing_a_dependency: str) -> None:
    envs.main(["--all"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "rlrun/PointGoal-v0\n  use          env=pointgoal\n" in out
    assert "algorithms   " + ", ".join(GOAL_ALGOS) in out
    assert 'spaces       unavailable: needs `pip install "gymnasium[box2d]"`' in out


def test_json_parses(capsys: pytest.CaptureFixture[str]) -> None:
    envs.main(["--json"])
    rows = json.loads(capsys.readouterr().out)
    assert {row["id"] for row in rows} == RLRUN_IDS
    assert set(rows[0]) >= {"id", "entry_point", "observation_space", "action_space", "max_episode_steps",
                            "reward_threshold", "goal_env", "algorithms", "config"}  # fmt: skip


def test_console_script(tmp_path: Path) -> None:
    script = shutil.which("rlrun-envs", path=str(Path(sys.executable).parent))
    assert script is not None, "the rlrun-envs console script is not installed"
    result = subprocess.run([script, "--all", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = by_id([env_listing.EnvInfo(**row) for row in json.loads(result.stdout)])
    assert rows["CartPole-v1"].config == "cartpole" and set(rows) >= RLRUN_IDS
    assert list(tmp_path.iterdir()) == []
