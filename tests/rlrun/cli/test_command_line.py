"""Checks of the command line before Hydra runs (rlrun/cli/command_line.py): wrapper names and output folders.

In-process: the command-line runs of both (exit statuses, messages, nothing created) are in
tests/rlrun/config/test_errors.py and tests/rlrun/cli/test_check.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlrun.cli import command_line
from rlrun.config.errors import UserError

MY_WRAPPER = """\
# A wrapper config of the user's, found through --config-dir or hydra.searchpath
my_scale:
  _target_: rlrun.envs.wrappers.ScaleReward
  _partial_: true
  scale: 2.0
"""


@pytest.mark.parametrize(
    ("overrides", "names"),
    [
        (["env=gridworld", "algo=ppo"], []),
        (["wrappers=[relative_position,flatten]"], ["relative_position", "flatten"]),
        (["+wrappers=[flaten]"], ["flaten"]),
        (["wrappers=[]"], []),
        (["wrappers=[flatten],[flatten,scale_rewrd]"], ["flatten", "scale_rewrd"]),  # a multirun sweep of lists
        (["wrappers=[unclosed"], []),  # Hydra's own syntax error: left to Hydra
    ],
    ids=["none", "list", "append", "empty", "sweep", "syntax-error"],
)
def test_wrapper_names_are_read_as_hydra_parses_them(overrides: list[str], names: list[str]) -> None:
    assert command_line.wrapper_names(overrides) == names


def test_known_wrappers_pass() -> None:
    command_line.check_wrapper_names(["env=gridworld", "wrappers=[relative_position,flatten]"])


def test_a_misspelt_wrapper_gets_the_list_and_the_closest_name() -> None:
    with pytest.raises(command_line.UnknownOption) as caught:
        command_line.check_wrapper_names(["wrappers=[relative_position,flaten]"])
    error = caught.value
    assert error.status == 2  # a user mistake, answered by rlrun
    assert error.problem.startswith("unknown wrapper 'flaten' (did you mean 'flatten'?); available wrappers: ")
    assert (
        "atari, clip_action, flatten, frame_stack, minigrid_flat, minigrid_image, relative_position, rescale_action, "
        "scale_reward" in error.problem
    )
    assert error.fix == "wrappers=[relative_position,flatten]"


def test_a_name_close_to_nothing_gets_the_list() -> None:
    with pytest.raises(command_line.UnknownOption) as caught:
        command_line.check_wrapper_names(["wrappers=[zzz]"])
    assert caught.value.problem.startswith("unknown wrapper 'zzz'; available wrappers: atari, clip_action")
    assert "--config-dir" in str(caught.value.fix)


@pytest.mark.parametrize("how", ["--config-dir", "hydra.searchpath"])
def test_the_users_own_wrappers_count(tmp_path: Path, how: str) -> None:
    (tmp_path / "myconf" / "wrappers").mkdir(parents=True)
    (tmp_path / "myconf" / "wrappers" / "my_scale.yaml").write_text(MY_WRAPPER)
    where = ["--config-dir", str(tmp_path / "myconf")] if how == "--config-dir" else []
    where += [f"hydra.searchpath=[file://{tmp_path / 'myconf'}]"] if how == "hydra.searchpath" else []
    command_line.check_wrapper_names([*where, "wrappers=[flatten,my_scale]"])
    with pytest.raises(command_line.UnknownOption, match=r"'my_scal' \(did you mean 'my_scale'\?\)") as caught:
        command_line.check_wrapper_names([*where, "wrappers=[my_scal]"])
    assert "my_scale" in caught.value.problem.split("available wrappers: ")[1]


def test_rlrun_checks_own_config_is_used_for_rlrun_check() -> None:
    with pytest.raises(command_line.UnknownOption, match="did you mean 'scale_reward'"):
        command_line.check_wrapper_names(["wrappers=[scale_rewards]"], config_name="check")


@pytest.mark.parametrize("where", ["under-a-file", "the-file-itself"])
def test_an_output_folder_that_cannot_be_made(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("the user's")
    target = blocker / "run" if where == "under-a-file" else blocker
    for key in ("hydra.run.dir", "hydra.sweep.dir"):
        with pytest.raises(UserError) as caught:
            command_line.check_output_folders([f"{key}={target}"])
        assert caught.value.problem == f"{key}={target} cannot be written: {blocker} is a file, not a folder"
        assert caught.value.status == 2 and caught.value.fix
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_writable_output_folder_passes_and_nothing_is_created(tmp_path: Path) -> None:
    command_line.check_output_folders([f"hydra.run.dir={tmp_path / 'new' / 'run'}", "seed=1"])
    command_line.check_output_folders([f"hydra.run.dir={tmp_path}"])
    command_line.check_output_folders(["hydra.run.dir=outputs/${now:%Y}"])  # interpolations: left to Hydra
    assert list(tmp_path.iterdir()) == []


def test_a_benchmark_part_that_is_not_there_is_refused_before_hydra_builds_the_sweep(tmp_path: Path) -> None:
    command_line.check_benchmark_part(["+benchmark=zoo", "benchmark.part=2"])  # a part there: passes
    command_line.check_benchmark_part(["+benchmark=zoo", "benchmark.part=all"])
    with pytest.raises(UserError) as caught:
        command_line.check_benchmark_part(["+benchmark=zoo", "benchmark.part=7"])
    assert caught.value.problem == "benchmark.part=7 is not a part of benchmark=zoo"
    assert caught.value.fix == "use one of: 1, 2, 3, all (conf/benchmark/zoo.yaml)"
    with pytest.raises(UserError, match="benchmark=presets has no parts"):
        command_line.check_benchmark_part(["+benchmark=presets", "benchmark.part=1"])
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    cli = [sys.executable, "-m", "rlrun", "-m", "+benchmark=zoo", "benchmark.part=7"]
    result = subprocess.run(cli, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "benchmark.part=7 is not a part of benchmark=zoo" in result.stderr
    assert list(tmp_path.iterdir()) == []
