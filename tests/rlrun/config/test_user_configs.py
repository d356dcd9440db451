"""The user's ``--config-dir`` configs win over rlrun's bundled ones (rlrun.config.user_configs): a preset named
like a bundled one is the one applied, the run's first lines say which file it came from, and a malformed one
is refused naming its file and line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rlrun.cli import entry
from rlrun.config.errors import UserError
from tests import forked_commands

RUN = ["env=gridworld", "algo=ppo", "eval.episodes=1", "eval.final_episodes=1", "progress_bar=false"]
MINE = """\
# @package _global_
# my own preset for env=gridworld algo=ppo: a tiny budget
total_timesteps: 256
eval:
  every: 128
env:
  n_envs: 2
algo:
  n_steps: 16
  batch_size: 32
  policy_kwargs:
    net_arch: [16]
"""


def rlrun(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return forked_commands.run(["-m", "rlrun", *args, "hydra.run.dir=run"], cwd=cwd, timeout=300)


def test_a_user_preset_shadowing_a_bundled_one_is_applied_and_named(tmp_path: Path) -> None:
    (tmp_path / "myconf" / "tuned").mkdir(parents=True)
    mine = tmp_path / "myconf" / "tuned" / "gridworld_ppo.yaml"
    mine.write_text(MINE)

    result = rlrun(tmp_path, "--config-dir", "myconf", *RUN)

    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["total_timesteps"] == 256 and record["preset"] == "gridworld_ppo"  # the bundled one says 20000
    output = result.stdout + result.stderr
    banner = output.splitlines()[:2]  # the start banner: the preset, then the file it came from
    assert "preset gridworld_ppo:" in banner[0] and banner[1].endswith(f"from {mine}"), output


def test_a_malformed_user_config_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "myconf" / "tuned").mkdir(parents=True)
    broken = tmp_path / "myconf" / "tuned" / "gridworld_ppo.yaml"
    broken.write_text("# @package _global_\ntotal_timesteps: 600\nalgo:\n  n_steps: [16\n")

    result = rlrun(tmp_path, "--config-dir", "myconf", *RUN)

    assert result.returncode == 2, result.stderr
    # checked with the command line's other mistakes (rlrun.cli.composition), the file as --config-dir names it
    named = broken.relative_to(tmp_path).as_posix()
    assert f"{named}:5 is not valid YAML" in result.stderr and f"fix: fix the YAML at {named}:5" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run").exists()


def test_the_check_before_hydra_reads_the_users_files_first_as_the_run_does(tmp_path: Path) -> None:
    """The composition that checks the command line searched --config-dir after rlrun's configs (the old copy of
    Hydra's rules): a key of the user's env file that rlrun's file of that name lacks was refused."""
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "gridworld.yaml").write_text("# mine: a 7x7 grid\nid: rlrun/GridWorld-v0\nkwargs: {size: 7}\n")
    assert entry.checked(["--config-dir", str(tmp_path), "env.kwargs.size=9"], "config")[1].env.kwargs.size == 9
    with pytest.raises(UserError, match="env.kwargs.size is not a key of the env.kwargs config"):
        entry.checked(["env.kwargs.size=9"], "config")  # rlrun's own file has no size
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "gridworld_ppo.yaml").write_text(MINE)
    assert entry.checked(["--config-dir", str(tmp_path)], "config")[1].total_timesteps == 256


def test_checking_a_command_line_leaves_the_search_path_of_this_process_as_it_was(tmp_path: Path) -> None:
    """A check in process (a test's, a tool's) must not make later compositions read the user's folder."""
    from tests.rlrun.helpers import compose_config

    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "gridworld_ppo.yaml").write_text(MINE)
    assert entry.checked(["--config-dir", str(tmp_path)], "config")[1].total_timesteps == 256
    assert compose_config("env=gridworld", "algo=ppo").total_timesteps == 20000  # the bundled preset's
