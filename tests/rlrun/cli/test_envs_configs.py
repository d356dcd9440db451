"""``rlrun-envs``: the env configs with the extra each needs, and the ids the installed env families register."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rlrun.checks import env_listing, env_text
from rlrun.cli import envs
from rlrun.make import families
from tests import forked_commands

HIDE = """\
import os, sys

HIDDEN = set(os.environ["RLRUN_TEST_HIDE"].split(","))


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""


def configs_of(args: list[str], tmp_path: Path, hidden: str = "") -> subprocess.CompletedProcess[str]:
    """``rlrun-envs`` in its own process; the packages named in ``hidden`` cannot be imported there."""
    (tmp_path / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "RLRUN_TEST_HIDE": hidden}
    return forked_commands.run(["-m", "rlrun.cli.envs", *args], cwd=tmp_path, env=env, timeout=120)  # fmt: skip


def test_configs_name_their_extra_and_id() -> None:
    infos = {info.config: info for info in env_listing.list_configs()}
    assert (infos["halfcheetah"].id, infos["halfcheetah"].extra) == ("HalfCheetah-v5", "mujoco")
    assert (infos["pong"].id, infos["pong"].extra) == ("ale_py:PongNoFrameskip-v4", "atari")
    assert (infos["atari"].id, infos["minigrid"].id, infos["gym"].id) == (None, None, None)
    assert (infos["cartpole"].extra, infos["cartpole"].installed) == (None, True)
    assert all(info.installed for info in infos.values())  # the test environment installs rlrun[envs]


def test_a_missing_extra_is_shown_with_its_install_command(tmp_path: Path) -> None:
    result = configs_of(["--configs"], tmp_path, hidden="mujoco")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()  # a header, a row per config, then the two install lines
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:-2]}
    assert [line.split(":")[0] for line in lines[-2:]] == ["  install an extra", "  install them all"]
    assert rows["halfcheetah"] == ["HalfCheetah-v5", "mujoco", "missing"]
    assert rows["fetchreach"][1:] == ["robotics", "missing"]  # Fetch needs mujoco too
    assert rows["pong"][1:] == ["atari", "installed"] and rows["acrobot"] == ["Acrobot-v1", "-"]
    assert families.install_command("<extra>") in result.stdout and families.install_command("envs") in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= env_text.WIDTH


def test_configs_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    envs.main(["--configs", "--json"])
    rows = {row["config"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["fetchreach"] == {
        "config": "fetchreach", "id": "gymnasium_robotics:FetchReach-v4", "extra": "robotics", "installed": True,
    }  # fmt: skip


def test_default_listing_starts_with_the_configs(capsys: pytest.CaptureFixture[str]) -> None:
    envs.main([])
    out = capsys.readouterr().out
    assert out.startswith("env=<config>") and "\n  minigrid_doorkey_5x5 " in out
    assert "\nrlrun/GridWorld-v0\n" in out


def test_all_lists_the_families_ids_without_making_them() -> None:
    infos = {info.id: info for info in env_listing.list_envs(all_envs=True)}
    for env_id, family in [
        ("ALE/SpaceInvaders-v5", "atari"),
        ("MiniGrid-DoorKey-8x8-v0", "minigrid"),
        ("FetchPushDense-v4", "robotics"),
    ]:
        info = infos[env_id]
        assert info.config == f"{family} env.id={env_id}"
        assert info.observation_space is None and info.unavailable is not None and "not made" in info.unavailable
    assert infos["PongNoFrameskip-v4"].config == "pong"
    assert infos["HalfCheetah-v5"].config == "halfcheetah" and infos["HalfCheetah-v5"].observation_space


def test_family_of_entry_points() -> None:
    assert families.family_of("ale_py.env:AtariEnv") == "atari"
    assert families.family_of("gymnasium.envs.mujoco.pusher_v5:PusherEnv") == "mujoco"
    assert families.family_of("gymnasium.envs.classic_control.acrobot:AcrobotEnv") is None
